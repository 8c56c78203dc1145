//! Which regular expression literals are early errors: validation (oxc's regular expression
//! parser, `program::parse::parse_options`) against QuickJS's own regexp compiler, which
//! refuses a literal as the script compiles. Every literal of the corpus must get the same
//! verdict from both — refused by validation exactly when QuickJS refuses it — but for the
//! classes of [`known_difference`], each with its reason. A literal validation let through
//! and QuickJS refused would reach the sandbox as a `SyntaxError` with no line of the user's;
//! one validation refused and QuickJS accepts would refuse working code.
//!
//! The corpus: every literal of [`ATOMS`] (the pattern syntax, its escapes, classes, groups,
//! quantifiers and their misuses) under every flag set of [`FLAGS`], and every pair of atoms
//! under the flag sets that change the grammar (none, `u`, `v`).

use std::collections::BTreeMap;

use super::reference::Reference;
use crate::program::{prepare, ProgramContext};

/// Pattern pieces, valid and invalid in some mode or other.
const ATOMS: &[&str] = &[
    "a",
    "-",
    ".",
    "^",
    "$",
    "\\d",
    "\\D",
    "\\w",
    "\\s",
    "\\b",
    "\\B",
    "\\/",
    "\\-",
    "\\_",
    "\\a",
    "\\1",
    "\\2",
    "\\01",
    "\\0",
    "\\00",
    "\\8",
    "\\9",
    "\\k",
    "\\k<n>",
    "\\k<m>",
    "\\c",
    "\\cA",
    "\\c1",
    "\\c_",
    "\\x4",
    "\\x41",
    "\\u004",
    "\\u0041",
    "\\u{41}",
    "\\u{110000}",
    "\\uD83D",
    "\\uD83D\\uDE00",
    "\\p{L}",
    "\\p{Lu}",
    "\\P{L}",
    "\\p{Script=Latin}",
    "\\p{sc=Grek}",
    "\\p{Foo}",
    "\\p{L",
    "\\p{RGI_Emoji}",
    "\\p{Basic_Emoji}",
    "\\q{abc}",
    "[a]",
    "[^a]",
    "[]",
    "[^]",
    "[a-z]",
    "[z-a]",
    "[a-a]",
    "[\\d-a]",
    "[a-\\d]",
    "[\\w-\\d]",
    "[-a]",
    "[a-]",
    "[\\b]",
    "[\\B]",
    "[\\c]",
    "[\\c1]",
    "[\\k]",
    "[[a]]",
    "[a--b]",
    "[a&&b]",
    "[a&&&b]",
    "[\\q{x|yz}]",
    "[\\p{L}--[a-z]]",
    "[(]",
    "[{]",
    "[\\-]",
    "[\\1]",
    "(a)",
    "(?:a)",
    "(?<n>a)",
    "(?<n>a)|(?<n>b)",
    "(?<n>a)(?<n>b)",
    "(?<1>a)",
    "(?<$>a)",
    "(?<\\u0061>a)",
    "(?<a",
    "(?=a)",
    "(?!a)",
    "(?<=a)",
    "(?<!a)",
    "(?i:a)",
    "(?-i:a)",
    "(?i-s:a)",
    "(?i-i:a)",
    "(?ii:a)",
    "(?x:a)",
    "(?-:a)",
    "(?",
    "(",
    ")",
    "()",
    "(?:)",
    "[",
    "]",
    "{",
    "}",
    "{1}",
    "a{1}",
    "a{1,}",
    "a{1,2}",
    "a{2,1}",
    "a{,1}",
    "a{1",
    "a{99999999999}",
    "*",
    "+",
    "?",
    "a*",
    "a+?",
    "a**",
    "a{1}?",
    "a{1}{1}",
    "^*",
    "$+",
    "\\b*",
    "(?=a)*",
    "(?!a)+",
    "(?<=a)*",
    "(?<!a)?",
    "|",
    "a|",
    "|a",
    "\\",
    "\\u{",
    "\\x",
    "\\u",
    "\u{2028}",
    "\u{1F600}",
    "\\p{Lowercase}",
    "\\p{General_Category=Lu}",
];

/// Flag sets: every flag alone, common combinations, repeats and unknown flags.
const FLAGS: &[&str] = &[
    "", "d", "g", "i", "m", "s", "u", "v", "y", "gimsuy", "dgimsvy", "uv", "gg", "x", "ug", "iv",
];

/// The flag sets a pattern's grammar depends on.
const GRAMMARS: &[&str] = &["", "u", "v"];

/// Why a literal's verdicts differ, for the classes of literals where QuickJS departs from the
/// standard, which validation follows (V8 agrees with validation on each). A difference outside
/// them fails the test.
fn known_difference(pattern: &str, flags: &str) -> Option<&'static str> {
    let named_groups = pattern
        .match_indices("(?<")
        .any(|(at, _)| !matches!(pattern.as_bytes().get(at + 3), Some(b'=' | b'!')));
    if named_groups && pattern.contains("[\\k]") && !flags.contains(['u', 'v']) {
        // Annex B's IdentityEscape[+NamedCaptureGroups] excludes `k`.
        return Some("QuickJS accepts `\\k` in a class of a pattern with named groups");
    }
    if flags.contains('v') && hyphen_outside_class(pattern) {
        return Some("QuickJS refuses `-` outside a class with the v flag (invalid character in class); validation lets it through and the run fails with QuickJS's SyntaxError");
    }
    None
}

/// Whether `pattern` has an unescaped `-` outside character classes.
fn hyphen_outside_class(pattern: &str) -> bool {
    let (mut escaped, mut class) = (false, 0_u32);
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => class += 1,
            ']' => class = class.saturating_sub(1),
            '-' if class == 0 => return true,
            _ => {}
        }
    }
    false
}

/// `/pattern/flags` as a statement of its own; `None` for a pattern that would not make a
/// regular expression literal at all (empty or starting with `*`: a comment; a line
/// terminator: no literal may hold one), which is not the regexp syntax under test.
fn literal(pattern: &str, flags: &str) -> Option<String> {
    let tokenizes =
        !pattern.is_empty() && !pattern.starts_with('*') && !pattern.contains(['\n', '\u{2028}']);
    tokenizes.then(|| format!("/{pattern}/{flags};"))
}

/// Whether validation refuses `code` as a syntax error.
fn refused_by_validation(code: &str) -> Option<String> {
    let prepared = prepare(code, &ProgramContext::default());
    prepared
        .diagnostics
        .iter()
        .find(|diagnostic| diagnostic.is_error())
        .map(|diagnostic| format!("{}: {}", diagnostic.rule, diagnostic.message))
}

#[test]
fn validation_refuses_exactly_the_regexp_literals_quickjs_refuses() {
    let reference = Reference::new();
    let mut corpus = Vec::new();
    for atom in ATOMS {
        for flags in FLAGS {
            corpus.extend(literal(atom, flags).map(|code| (code, atom.to_string(), *flags)));
        }
    }
    for first in ATOMS {
        for second in ATOMS {
            let pattern = format!("{first}{second}");
            for flags in GRAMMARS {
                corpus.extend(literal(&pattern, flags).map(|code| (code, pattern.clone(), *flags)));
            }
        }
    }
    let mut differences = Vec::new();
    let mut known: BTreeMap<&str, usize> = BTreeMap::new();
    let mut refused = 0;
    for (code, pattern, flags) in &corpus {
        let quickjs_refuses = !reference.compiles(code);
        let validation = refused_by_validation(code);
        refused += usize::from(quickjs_refuses);
        if quickjs_refuses == validation.is_some() {
            continue;
        }
        if let Some(why) = known_difference(pattern, flags) {
            *known.entry(why).or_default() += 1;
        } else {
            differences.push(format!(
                "{code}  QuickJS {}, validation {}",
                if quickjs_refuses {
                    "refuses"
                } else {
                    "accepts"
                },
                validation.as_deref().unwrap_or("accepts"),
            ));
        }
    }
    eprintln!(
        "regexp literals: {} compared, {refused} refused by QuickJS, {} other differences; known: {known:?}",
        corpus.len(),
        differences.len()
    );
    assert!(
        differences.is_empty(),
        "{} of {} literals differ:\n{}",
        differences.len(),
        corpus.len(),
        differences.join("\n")
    );
}
