//! Positions in the user's original code: byte offsets to 1-based line/column (columns in UTF-16
//! units, as JS engines and editors count them) and the code frame shown under a diagnostic.
//!
//! Spec: §3.1 (`Diagnostic.location`) and §8.3.

use crate::diagnostic::Location;

/// The line starts of a source text, honouring every JS line terminator (`\n`, `\r\n`, `\r`,
/// U+2028, U+2029) so that CRLF files report the same lines as LF files.
#[derive(Debug, Clone)]
pub struct SourceText {
    text: String,
    /// Byte offset of the first character of each line.
    line_starts: Vec<usize>,
    /// Whether each line is ASCII, where a column is a byte count (no UTF-16 counting needed:
    /// locating many findings on one long line must not cost the square of its length).
    ascii_lines: Vec<bool>,
}

impl SourceText {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        let mut chars = text.char_indices().peekable();
        while let Some((offset, ch)) = chars.next() {
            match ch {
                '\r' => {
                    if matches!(chars.peek(), Some((_, '\n'))) {
                        chars.next();
                        line_starts.push(offset + 2);
                    } else {
                        line_starts.push(offset + 1);
                    }
                }
                '\n' => line_starts.push(offset + 1),
                '\u{2028}' | '\u{2029}' => line_starts.push(offset + ch.len_utf8()),
                _ => {}
            }
        }
        let ascii_lines = line_starts
            .iter()
            .enumerate()
            .map(|(index, &start)| {
                let end = line_starts.get(index + 1).copied().unwrap_or(text.len());
                text[start..end].is_ascii()
            })
            .collect();
        Self {
            text: text.to_owned(),
            line_starts,
            ascii_lines,
        }
    }

    /// The location of byte `offset` (clamped to the text, and to a character boundary).
    pub fn location(&self, offset: usize) -> Location {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_index = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let line_start = self.line_starts[line_index];
        let column = if self.ascii_lines.get(line_index).copied().unwrap_or(false) {
            offset - line_start
        } else {
            self.text[line_start..offset].encode_utf16().count()
        };
        Location {
            line: to_u32(line_index + 1),
            column: to_u32(column + 1),
        }
    }

    /// The text of 1-based `line` without its terminator, if the line exists.
    pub fn line(&self, line: u32) -> Option<&str> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.line_starts.get(index)?;
        let end = self
            .line_starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        Some(self.text[start..end].trim_end_matches(['\r', '\n', '\u{2028}', '\u{2029}']))
    }

    /// The offending line followed by a caret under `location`'s column:
    ///
    /// ```text
    /// 2 | const x = ;
    ///   |           ^
    /// ```
    pub fn code_frame(&self, location: Location) -> Option<String> {
        let line = self.line(location.line)?;
        let gutter = location.line.to_string();
        // Characters of the line with their UTF-16 columns; the caret is placed by column
        // (characters outside the BMP count twice there but print once: close enough).
        let columns: Vec<(usize, char)> = line
            .chars()
            .scan(1usize, |column, ch| {
                let at = *column;
                *column += ch.len_utf16();
                Some((at, ch))
            })
            .collect();
        // A long line (minified code, one-line data) shows a window around the column, so a
        // frame stays readable and small however long the line is.
        let target = columns
            .iter()
            .position(|&(column, _)| column >= location.column as usize)
            .unwrap_or(columns.len());
        let start = target.saturating_sub(FRAME_CONTEXT);
        let end = (target + FRAME_CONTEXT).min(columns.len());
        let shown: String = columns[start..end].iter().map(|&(_, ch)| ch).collect();
        let (open, close) = (
            if start > 0 { "…" } else { "" },
            if end < columns.len() { "…" } else { "" },
        );
        let before: String = std::iter::repeat_n(' ', open.chars().count())
            .chain(
                columns[start..target]
                    .iter()
                    .map(|&(_, ch)| if ch == '\t' { '\t' } else { ' ' }),
            )
            .collect();
        Some(format!(
            "{gutter} | {open}{shown}{close}\n{blank} | {before}^",
            blank = " ".repeat(gutter.len())
        ))
    }

    /// The whole text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Characters shown on each side of the column in a code frame.
const FRAME_CONTEXT: usize = 60;

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based() {
        let source = SourceText::new("ab\ncd");
        assert_eq!(source.location(0), Location { line: 1, column: 1 });
        assert_eq!(source.location(4), Location { line: 2, column: 2 });
    }

    #[test]
    fn crlf_counts_as_one_line_end() {
        let source = SourceText::new("a\r\nb\rc");
        assert_eq!(source.location(3), Location { line: 2, column: 1 });
        assert_eq!(source.location(5), Location { line: 3, column: 1 });
        assert_eq!(source.line(1), Some("a"));
    }

    #[test]
    fn columns_count_utf16_units_after_non_ascii_text() {
        // "é" is 2 bytes and 1 UTF-16 unit; "😀" is 4 bytes and 2 units.
        let source = SourceText::new("é😀x");
        assert_eq!(source.location(6), Location { line: 1, column: 4 });
    }

    #[test]
    fn offsets_inside_a_character_or_past_the_end_are_clamped() {
        let source = SourceText::new("é");
        assert_eq!(source.location(1), Location { line: 1, column: 1 });
        assert_eq!(source.location(99), Location { line: 1, column: 2 });
    }

    #[test]
    fn code_frame_of_a_long_line_is_a_window_around_the_column() {
        let line = format!("{}bad{}", "a".repeat(500), "b".repeat(500));
        let source = SourceText::new(&line);
        let frame = source
            .code_frame(Location {
                line: 1,
                column: 501,
            })
            .unwrap();
        let expected_line = format!("1 | …{}bad{}…", "a".repeat(60), "b".repeat(57));
        let expected_caret = format!("  | {}^", " ".repeat(61));
        assert_eq!(frame, format!("{expected_line}\n{expected_caret}"));
    }

    #[test]
    fn code_frame_points_at_the_column() {
        let source = SourceText::new("let a;\nconst x = ;");
        let frame = source
            .code_frame(Location {
                line: 2,
                column: 11,
            })
            .unwrap();
        assert_eq!(frame, "2 | const x = ;\n  |           ^");
    }
}
