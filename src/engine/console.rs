//! The run's log buffer (§7.3): entries in call order, the levels the caller collects, and the
//! `maxLogBytes` budget with its `...[TRUNCATED]` marker.

use crate::options::LogLevel;

/// Appended once when the budget runs out (§7.3).
pub const TRUNCATION_MARKER: &str = "...[TRUNCATED]";

/// One run's logs. `logs` of §3.1 is the entries joined by `\n`; the buffer keeps that joined
/// text directly, so the budget is checked against exactly the bytes the caller receives.
#[derive(Debug)]
pub struct LogBuffer {
    levels: Vec<LogLevel>,
    max_bytes: usize,
    text: String,
    entries: usize,
    truncated: bool,
}

impl LogBuffer {
    /// An empty buffer collecting `levels` within `max_bytes` bytes of text.
    pub fn new(levels: Vec<LogLevel>, max_bytes: usize) -> Self {
        Self {
            levels,
            max_bytes,
            text: String::new(),
            entries: 0,
            truncated: false,
        }
    }

    /// Whether entries at `level` are kept; callers skip formatting the arguments when not.
    pub fn collects(&self, level: LogLevel) -> bool {
        !self.truncated && self.levels.contains(&level)
    }

    /// Appends one entry (one `console.*` call). Once the joined text would pass the budget, the
    /// part that fits is kept, the marker appended, and every later entry dropped.
    pub fn push(&mut self, level: LogLevel, message: &str) {
        if !self.collects(level) {
            return;
        }
        let separator = if self.entries == 0 { "" } else { "\n" };
        let needed = separator.len() + message.len();
        let room = self.max_bytes.saturating_sub(self.text.len());
        if needed <= room {
            self.text.push_str(separator);
            self.text.push_str(message);
            self.entries += 1;
            return;
        }
        let mut kept = format!("{separator}{message}");
        let mut cut = room;
        while !kept.is_char_boundary(cut) {
            cut -= 1;
        }
        kept.truncate(cut);
        self.text.push_str(&kept);
        self.text.push_str(TRUNCATION_MARKER);
        self.entries += 1;
        self.truncated = true;
    }

    /// The joined logs.
    #[cfg(test)]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes the joined logs, leaving the buffer empty for the next run.
    pub fn take(&mut self) -> String {
        self.entries = 0;
        self.truncated = false;
        std::mem::take(&mut self.text)
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
        assert_eq!(logs.take(), "1234...[TRUNCATED]");
        logs.push(LogLevel::Log, "x");
        assert_eq!(logs.text(), "x");
    }
}
