//! Raw NUL characters out of generated code.
//!
//! The engine hands code to QuickJS as a C string (rquickjs's `eval` and module declaration build
//! a `CString`), so a raw U+0000 anywhere in it made every such run fail with rquickjs's "internal
//! null bytes" error instead of running. oxc's code generator escapes NUL in ordinary string
//! literals but prints directives (`'a<NUL>b'` alone is one), template strings and regular
//! expressions as written. NUL cannot stand outside a literal or a comment (the parser refuses
//! it), and inside one the escape `\x00` means the same character; a NUL that is itself escaped
//! (`\<NUL>`, an odd run of backslashes before it) becomes `x00`, completing that backslash to the
//! same escape. The one visible difference is the raw text of a tagged template
//! (`String.raw`), which shows the escape rather than the character.
//!
//! Spec: §6.4 (transformation invariants).

/// `code` with every raw NUL replaced by an escape that means the same in any literal.
pub fn escape(code: String) -> String {
    if !code.contains('\0') {
        return code;
    }
    let mut escaped = String::with_capacity(code.len() + 16);
    let mut backslashes = 0usize;
    for c in code.chars() {
        match c {
            '\0' if backslashes % 2 == 1 => escaped.push_str("x00"),
            '\0' => escaped.push_str("\\x00"),
            other => escaped.push(other),
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn code_without_nul_is_returned_as_is() {
        assert_eq!(escape("'a' + `b`".into()), "'a' + `b`");
    }

    #[test]
    fn raw_nul_becomes_an_escape_and_an_escaped_nul_completes_its_backslash() {
        assert_eq!(escape("'a\0b'".into()), r"'a\x00b'");
        assert_eq!(escape("/\\\0/".into()), r"/\x00/");
        assert_eq!(escape("'\\\\\0'".into()), r"'\\\x00'");
        assert_eq!(escape("`\0${x}\0`".into()), r"`\x00${x}\x00`");
    }
}
