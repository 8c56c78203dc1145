//! Maps positions in the transformed code back to the user's code, so that runtime errors name
//! the user's own line and column (docs/contract.md "Errors").

use oxc_sourcemap::SourceMap;

use crate::diagnostic::Location;

/// A lookup table built once from the codegen source map; owned, so it travels with the program
/// to the engine thread.
#[derive(Debug, Clone, Default)]
pub struct PositionMap {
    /// `(generated line, generated column, user line, user column)`, sorted by generated
    /// position; generated positions are 0-based, user positions 1-based.
    tokens: Vec<(u32, u32, u32, u32)>,
}

impl PositionMap {
    /// Builds the table from codegen's source map of the wrapped program, whose line 0 is the
    /// wrapper's opening line: wrapped line `n` is the user's line `n`.
    pub fn from_source_map(map: &SourceMap) -> Self {
        let mut tokens: Vec<_> = map
            .get_tokens()
            .filter(|token| token.get_src_line() > 0)
            .map(|token| {
                (
                    token.get_dst_line(),
                    token.get_dst_col(),
                    token.get_src_line(),
                    token.get_src_col() + 1,
                )
            })
            .collect();
        tokens.sort_unstable();
        Self { tokens }
    }

    /// The user's location for the 1-based `line` and `column` of the transformed code: the
    /// nearest mapped position at or before it on the same line.
    pub fn original(&self, line: u32, column: u32) -> Option<Location> {
        let line = line.checked_sub(1)?;
        let column = column.saturating_sub(1);
        let after = self
            .tokens
            .partition_point(|&(l, c, _, _)| (l, c) <= (line, column));
        let &(token_line, _, user_line, user_column) = self.tokens.get(after.checked_sub(1)?)?;
        (token_line == line).then_some(Location {
            line: user_line,
            column: user_column,
        })
    }
}
