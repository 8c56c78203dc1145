//! The run's log buffer (§7.3): entries in call order, the levels the caller collects, and the
//! `maxLogBytes` budget with its `...[TRUNCATED]` marker. Each entry also keeps its level and
//! time, for the structured `logEntries` of §10.2.

use std::ops::Range;
use std::time::SystemTime;

use crate::memory::{vec_bytes, Charge, MemoryAccount};
use crate::options::LogLevel;
use std::rc::Rc;

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
    /// What `text` and `entries` hold, charged to the executor's memory account before they
    /// grow; an entry it has no room for ends the logs as the budget running out does.
    held: Option<Charge>,
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
            held: None,
        }
    }

    /// The same buffer, its memory charged to `account`.
    pub fn charged_to(self, account: &Rc<MemoryAccount>) -> Self {
        Self {
            held: Some(account.empty_charge()),
            ..self
        }
    }

    /// Makes room for `text` more bytes of text and one more entry, charged first; `false`
    /// when the account refused it. Capacities double as `Vec`'s do, or grow by exactly what
    /// is needed when the account has no room for doubling.
    fn make_room(&mut self, text: usize) -> bool {
        let Some(held) = &mut self.held else {
            return true;
        };
        let entry_capacity = grown(self.entries.capacity(), self.entries.len() + 1);
        let entry_bytes = vec_bytes::<(LogLevel, SystemTime, Range<usize>)>(entry_capacity);
        let exact = (self.text.len() + text).max(self.text.capacity());
        let doubled = grown(self.text.capacity(), self.text.len() + text);
        let Some(text_capacity) = [doubled, exact].into_iter().find(|capacity| {
            held.resize((capacity + entry_bytes).max(held.bytes()))
                .is_ok()
        }) else {
            return false;
        };
        self.text.reserve_exact(text_capacity - self.text.len());
        self.entries
            .reserve_exact(entry_capacity - self.entries.len());
        true
    }

    /// The most bytes of text (besides the marker) the account still has room for after what
    /// the buffer holds, with one more entry.
    fn affordable_text(&self) -> usize {
        let Some(held) = &self.held else {
            return usize::MAX;
        };
        let entry_capacity = grown(self.entries.capacity(), self.entries.len() + 1);
        let entry_bytes = vec_bytes::<(LogLevel, SystemTime, Range<usize>)>(entry_capacity);
        (held.bytes() + held.account().chargeable())
            .saturating_sub(entry_bytes + self.text.len() + TRUNCATION_MARKER.len())
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
        let mut room = self.max_bytes.saturating_sub(self.text.len());
        if !self.make_room(needed.min(room) + TRUNCATION_MARKER.len()) {
            // The account has no room for all of it: the part it has room for is kept and
            // marked, as at the budget; with no room even for the marker, the logs end here,
            // marked if what is held has room for it.
            room = room.min(self.affordable_text());
            if room <= separator.len() || !self.make_room(room + TRUNCATION_MARKER.len()) {
                self.truncated = true;
                if self.text.capacity() - self.text.len() >= TRUNCATION_MARKER.len() {
                    self.text.push_str(TRUNCATION_MARKER);
                }
                return false;
            }
            room = room.min(needed.saturating_sub(1));
        }
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
        self.held = None;
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

/// The capacity a vector of `capacity` grows to for `needed` elements: doubling, as `Vec` does.
fn grown(capacity: usize, needed: usize) -> usize {
    if needed <= capacity {
        capacity
    } else {
        needed.max(capacity * 2)
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

    /// A line the memory account has no room for is cut where the account's room ends and
    /// marked, as at the budget: never dropped without a trace, never held past the limit.
    #[test]
    fn a_line_past_the_memory_limit_is_cut_and_marked() {
        let account = MemoryAccount::new(1 << 20);
        let mut logs = all(64 << 20).charged_to(&account);
        assert!(logs.push(LogLevel::Log, "first"));
        let long = "x".repeat(2 << 20);
        assert!(logs.push(LogLevel::Log, &long));
        assert!(!logs.push(LogLevel::Log, "never"));
        let text = logs.text().to_owned();
        assert!(text.starts_with("first\nxxxx"), "{}", &text[..16]);
        assert!(text.ends_with(TRUNCATION_MARKER));
        assert!(text.len() > 512 << 10, "{} bytes kept", text.len());
        assert!(account.held() <= account.limit());
        let taken = logs.take();
        assert_eq!(taken.entries.len(), 2);
        assert_eq!(account.held(), 0);
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
