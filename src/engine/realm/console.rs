//! The run's log buffer (§7.3): entries in call order, the levels the caller collects, and the
//! `maxLogBytes` budget with its `...[TRUNCATED]` marker. Each entry also keeps its level and
//! time, for the structured `logEntries` of §10.2.

use std::ops::Range;
use std::time::SystemTime;

use crate::options::LogLevel;

/// Appended once when the budget runs out (§7.3).
pub const TRUNCATION_MARKER: &str = "...[TRUNCATED]";

/// One console call as it was kept (§3.1 `LogEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub level: LogLevel,
    /// The formatted message; for the entry that ran out of budget, the part kept and the marker.
    pub message: String,
    pub at: SystemTime,
}

/// One run's logs. `logs` of §3.1 is the entries joined by `\n`; the buffer keeps that joined
/// text directly, so the budget is checked against exactly the bytes the caller receives. An
/// entry is a range of that text, so structured entries cost no second copy of the messages.
#[derive(Debug)]
pub struct LogBuffer {
    levels: Vec<LogLevel>,
    max_bytes: usize,
    text: String,
    entries: Vec<(LogLevel, SystemTime, Range<usize>)>,
    truncated: bool,
}

/// What a run logged: the joined text and its entries.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Logs {
    pub text: String,
    pub entries: Vec<LogEntry>,
}

impl LogBuffer {
    /// An empty buffer collecting `levels` within `max_bytes` bytes of text.
    pub fn new(levels: Vec<LogLevel>, max_bytes: usize) -> Self {
        Self {
            levels,
            max_bytes,
            text: String::new(),
            entries: Vec::new(),
            truncated: false,
        }
    }

    /// Whether entries at `level` are kept; callers skip formatting the arguments when not.
    pub fn collects(&self, level: LogLevel) -> bool {
        !self.truncated && self.levels.contains(&level)
    }

    /// Appends one entry (one `console.*` call). Once the joined text would pass the budget, the
    /// part that fits is kept, the marker appended, and every later entry dropped. Returns
    /// whether the entry was kept.
    pub fn push(&mut self, level: LogLevel, message: &str) -> bool {
        if !self.collects(level) {
            return false;
        }
        let separator = if self.entries.is_empty() { "" } else { "\n" };
        let needed = separator.len() + message.len();
        let room = self.max_bytes.saturating_sub(self.text.len());
        let fits = needed <= room;
        // The separator counts against the budget like the message does.
        let separator = if fits || room >= separator.len() {
            separator
        } else {
            ""
        };
        self.text.push_str(separator);
        let start = self.text.len();
        if fits {
            self.text.push_str(message);
        } else {
            let mut cut = (room - separator.len()).min(message.len());
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&message[..cut]);
            self.text.push_str(TRUNCATION_MARKER);
            self.truncated = true;
        }
        self.entries
            .push((level, SystemTime::now(), start..self.text.len()));
        true
    }

    /// How many entries were kept.
    pub fn kept(&self) -> usize {
        self.entries.len()
    }

    /// The entry pushed last.
    pub fn last_entry(&self) -> Option<LogEntry> {
        self.entries.last().map(|(level, at, range)| LogEntry {
            level: *level,
            message: self.text[range.clone()].to_owned(),
            at: *at,
        })
    }

    /// The joined logs.
    #[cfg(test)]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the logs, leaving the buffer empty for the next run.
    pub fn take(&mut self) -> Logs {
        self.truncated = false;
        let text = std::mem::take(&mut self.text);
        let entries = self
            .entries
            .drain(..)
            .map(|(level, at, range)| LogEntry {
                level,
                message: text[range].to_owned(),
                at,
            })
            .collect();
        Logs { text, entries }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(max: usize) -> LogBuffer {
        LogBuffer::new(LogLevel::ALL.to_vec(), max)
    }

    #[test]
    fn entries_are_joined_by_newlines_in_call_order() {
        let mut logs = all(100);
        logs.push(LogLevel::Log, "a");
        logs.push(LogLevel::Error, "b");
        assert_eq!(logs.text(), "a\nb");
    }

    #[test]
    fn levels_not_collected_are_dropped() {
        let mut logs = LogBuffer::new(vec![LogLevel::Warn], 100);
        logs.push(LogLevel::Log, "hidden");
        logs.push(LogLevel::Warn, "shown");
        assert_eq!(logs.text(), "shown");
    }

    #[test]
    fn the_budget_keeps_what_fits_then_marks_and_drops_the_rest() {
        let mut logs = all(6);
        logs.push(LogLevel::Log, "abc");
        logs.push(LogLevel::Log, "defgh");
        logs.push(LogLevel::Log, "never");
        assert_eq!(logs.text(), "abc\nde...[TRUNCATED]");
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let mut logs = all(2);
        logs.push(LogLevel::Log, "éé");
        assert_eq!(logs.text(), "é...[TRUNCATED]");
    }

    #[test]
    fn take_empties_the_buffer_for_the_next_run() {
        let mut logs = all(4);
        logs.push(LogLevel::Log, "12345");
        assert_eq!(logs.take().text, "1234...[TRUNCATED]");
        logs.push(LogLevel::Log, "x");
        assert_eq!(logs.text(), "x");
    }

    #[test]
    fn a_full_budget_appends_the_marker_without_a_separator() {
        let mut logs = all(3);
        logs.push(LogLevel::Log, "abc");
        logs.push(LogLevel::Log, "x");
        assert_eq!(logs.text(), "abc...[TRUNCATED]");
    }

    #[test]
    fn entries_carry_level_message_and_time_in_call_order() {
        let before = SystemTime::now();
        let mut logs = all(100);
        logs.push(LogLevel::Warn, "first");
        logs.push(LogLevel::Info, "second");
        let taken = logs.take();
        let summary: Vec<(LogLevel, &str)> = taken
            .entries
            .iter()
            .map(|entry| (entry.level, entry.message.as_str()))
            .collect();
        assert_eq!(
            summary,
            [(LogLevel::Warn, "first"), (LogLevel::Info, "second")]
        );
        assert!(taken.entries[0].at >= before && taken.entries[1].at >= taken.entries[0].at);
    }

    #[test]
    fn the_entry_that_runs_out_of_budget_is_kept_cut_and_marked() {
        let mut logs = all(6);
        assert!(logs.push(LogLevel::Log, "abc"));
        assert_eq!(logs.last_entry().unwrap().message, "abc");
        assert!(logs.push(LogLevel::Error, "defgh"));
        assert_eq!(logs.last_entry().unwrap().message, "de...[TRUNCATED]");
        assert!(!logs.push(LogLevel::Log, "never"));
        let taken = logs.take();
        let messages: Vec<&str> = taken.entries.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages, ["abc", "de...[TRUNCATED]"]);
        assert_eq!(taken.text, "abc\nde...[TRUNCATED]");
    }
}
