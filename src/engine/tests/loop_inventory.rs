//! The inventory of QuickJS's loops (vendor/quickjs-loops.md) is true of the QuickJS this crate
//! builds. Every C function with a loop (`for`, `while`, `do`, or a backward `goto`) in the
//! sources that rquickjs-sys compiles, with this project's patches applied, must have a row
//! that says why sandbox code cannot keep it running past its deadline: it asks the interrupt
//! handler at every trip (and a test here proves it stops), or each trip allocates (the memory
//! limit bounds it), or its trips are bounded by something sandbox code cannot inflate. A row
//! holds a hash of the function's body: when QuickJS is updated or a patch changes a function,
//! its row no longer matches and must be read again; a new function with a loop has no row.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The C sources rquickjs-sys compiles (its build.rs), and the header whose inline functions
/// they use.
const SOURCES: [&str; 5] = [
    "quickjs.c",
    "libregexp.c",
    "libunicode.c",
    "dtoa.c",
    "cutils.h",
];

/// What a row may say of a function's loops.
const STATUSES: [&str; 7] = [
    // Each trip asks the interrupt handler (itself, or through a helper that does); the row
    // names a test under src/engine that proves the run stops at its deadline.
    "polls",
    // Each trip allocates from the runtime's heap or grows a buffer under the memory limit.
    "allocates",
    // At most one trip per element of one thing already in the heap (a string's characters, an
    // object's properties, a Map's entries), constant work each: a linear scan.
    "heap",
    // A constant or a limit sandbox code cannot raise (2^30 characters, 65,535 arguments,
    // 2^20 BigInt bits, 255 captures, the stack's depth).
    "bounded",
    // The runtime's own data: creating and freeing runtimes and contexts, the garbage
    // collector, atoms, shapes and classes.
    "engine",
    // The compiler: the program's source text, which the host gives (eval and the Function
    // constructors are locked down) and oxc has parsed first.
    "source",
    // Not reachable from sandbox code in this embedding (named in the row).
    "unreachable",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The queue's format and applier, as vendor/rquickjs-sys/build.rs uses them.
#[path = "../../../vendor/rquickjs-sys/patch_queue.rs"]
mod patch_queue;

/// The sources as the build compiles them: vendor/rquickjs-sys/quickjs with every patch of
/// vendor/quickjs-patches applied in name order (what vendor/rquickjs-sys/build.rs does).
fn patched_sources() -> BTreeMap<String, String> {
    let quickjs = root().join("vendor/rquickjs-sys/quickjs");
    let mut sources: BTreeMap<String, String> = fs::read_dir(&quickjs)
        .expect("vendor/rquickjs-sys/quickjs")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            let text = fs::read_to_string(&path).ok()?;
            Some((name, text))
        })
        .collect();
    let patches = patch_queue::queue(&root().join("vendor/quickjs-patches")).unwrap();
    for patch in patches {
        let name = patch.file_name().unwrap().to_string_lossy();
        let text = fs::read_to_string(&patch).unwrap();
        let patched = patch_queue::apply(&name, &text, |file| {
            sources
                .get(file)
                .cloned()
                .ok_or_else(|| "no such file in vendor/rquickjs-sys/quickjs".to_string())
        })
        .unwrap_or_else(|error| panic!("{error}"));
        sources.extend(patched);
    }
    sources
}

/// `source` with comments, string and character literals blanked (their line breaks kept), so
/// that no brace or keyword in them counts as code.
fn strip_literals(source: &str) -> Vec<u8> {
    let bytes = source.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let end = (i + 2..bytes.len().saturating_sub(1))
                    .find(|&j| bytes[j] == b'*' && bytes[j + 1] == b'/')
                    .map_or(bytes.len(), |j| j + 2);
                out.extend(bytes[i..end].iter().filter(|&&b| b == b'\n'));
                i = end;
            }
            (quote @ (b'"' | b'\''), _) => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != quote {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                out.extend([quote, quote]);
                i = j + 1;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// Preprocessor directives blanked, and of each conditional only one branch kept (the first;
/// the `#else` of `#if 0`; none of `#ifdef __cplusplus`), so that braces balance as in one
/// build.
fn strip_directives(code: &[u8]) -> String {
    let text = String::from_utf8_lossy(code);
    let mut out = String::with_capacity(text.len());
    // Per open conditional: whether the branch being read is kept, and whether one was.
    let mut conditionals: Vec<(bool, bool)> = Vec::new();
    let mut continued = false;
    for line in text.split('\n') {
        let directive = continued || line.trim_start().starts_with('#');
        continued = directive && line.trim_end().ends_with('\\');
        if directive {
            let words: Vec<&str> = line
                .trim_start()
                .trim_start_matches('#')
                .split(|c: char| c.is_whitespace() || c == '(')
                .filter(|word| !word.is_empty())
                .collect();
            match words.first().copied() {
                Some("if" | "ifdef" | "ifndef") => {
                    let kept = !(words.get(1) == Some(&"0") || words.contains(&"__cplusplus"));
                    conditionals.push((kept, kept || words.contains(&"__cplusplus")));
                }
                Some("elif" | "else") => {
                    if let Some((kept, taken)) = conditionals.last_mut() {
                        *kept = !*taken;
                        *taken = true;
                    }
                }
                Some("endif") => {
                    conditionals.pop();
                }
                _ => {}
            }
        } else if conditionals.iter().all(|(kept, _)| *kept) {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn is_identifier(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The name of the function whose header is `header` (the code between the previous top-level
/// `;` or `}` and a top-level `{`): the identifier before its last parenthesised group, if the
/// header ends with one.
fn function_name(header: &str) -> Option<String> {
    let bytes = header.trim_end().as_bytes();
    if bytes.last() != Some(&b')') {
        return None;
    }
    let mut depth = 0;
    let mut open = None;
    for (index, &byte) in bytes.iter().enumerate().rev() {
        match byte {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(index);
                    break;
                }
            }
            _ => {}
        }
    }
    let before = header[..open?].trim_end();
    let start = before
        .bytes()
        .rposition(|byte| !is_identifier(byte))
        .map_or(0, |index| index + 1);
    let name = &before[start..];
    let keyword = ["if", "while", "for", "switch", "return", "sizeof"].contains(&name);
    (!name.is_empty() && !keyword && !name.as_bytes()[0].is_ascii_digit()).then(|| name.to_string())
}

/// The functions defined in `source`: name and body (literals and directives stripped).
fn functions(source: &str) -> Vec<(String, String)> {
    let code = strip_directives(&strip_literals(source));
    let bytes = code.as_bytes();
    let mut found: Vec<(String, String)> = Vec::new();
    let (mut depth, mut header_start) = (0usize, 0usize);
    let mut body_start: Option<(String, usize)> = None;
    for (index, &byte) in bytes.iter().enumerate() {
        match byte {
            b'{' => {
                if depth == 0 {
                    body_start =
                        function_name(&code[header_start..index]).map(|name| (name, index));
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.checked_sub(1).expect("braces balance");
                if depth == 0 {
                    if let Some((name, start)) = body_start.take() {
                        found.push((name, code[start..=index].to_string()));
                    }
                    header_start = index + 1;
                }
            }
            b';' if depth == 0 => header_start = index + 1,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "braces balance");
    found
}

/// Where `keyword` starts as a word in `body`, followed (after spaces) by `next`.
fn keyword_followed_by(body: &str, keyword: &str, next: u8) -> bool {
    let bytes = body.as_bytes();
    body.match_indices(keyword).any(|(index, _)| {
        let before = index.checked_sub(1).map(|i| bytes[i]);
        let after = bytes[index + keyword.len()..]
            .iter()
            .find(|byte| !byte.is_ascii_whitespace());
        before.is_none_or(|byte| !is_identifier(byte)) && after == Some(&next)
    })
}

/// A `goto` to a label that comes before it.
fn has_backward_goto(body: &str) -> bool {
    let bytes = body.as_bytes();
    body.match_indices("goto").any(|(index, _)| {
        if index > 0 && is_identifier(bytes[index - 1]) {
            return false;
        }
        let rest = body[index + 4..].trim_start();
        let label: String = rest
            .bytes()
            .take_while(|&b| is_identifier(b))
            .map(char::from)
            .collect();
        !label.is_empty()
            && body[..index].lines().any(|line| {
                line.trim_start()
                    .strip_prefix(label.as_str())
                    .is_some_and(|after| {
                        let after = after.trim_start();
                        after.starts_with(':') && !after.starts_with("::")
                    })
            })
    })
}

fn has_loop(body: &str) -> bool {
    keyword_followed_by(body, "for", b'(')
        || keyword_followed_by(body, "while", b'(')
        || keyword_followed_by(body, "do", b'{')
        || has_backward_goto(body)
}

/// FNV-1a (64 bits) of the body with runs of whitespace made one space, as 8 hex digits: stable
/// across Rust versions (the standard library's hasher is not), and blind to layout-only edits.
fn body_hash(body: &str) -> String {
    let normalized = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in normalized.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", hash >> 32)
}

/// Every function with a loop: `(file, function) -> body hash`. A name defined twice in a file
/// (in branches of a conditional both kept) is numbered.
fn loop_functions() -> BTreeMap<(String, String), String> {
    let sources = patched_sources();
    let mut found = BTreeMap::new();
    for file in SOURCES {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (name, body) in functions(&sources[file]) {
            let count = seen.entry(name.clone()).or_default();
            *count += 1;
            let key = if *count == 1 {
                name
            } else {
                format!("{name}#{count}")
            };
            if has_loop(&body) {
                found.insert((file.to_string(), key), body_hash(&body));
            }
        }
    }
    found
}

/// A row of the inventory.
struct Row {
    hash: String,
    status: String,
    why: String,
}

fn inventory() -> BTreeMap<(String, String), Row> {
    let text = fs::read_to_string(root().join("vendor/quickjs-loops.md")).expect("the inventory");
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|line| line.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells.len() != 5 || cells[0] == "file" {
            continue;
        }
        let key = (cells[0].to_string(), cells[1].trim_matches('`').to_string());
        let row = Row {
            hash: cells[2].to_string(),
            status: cells[3].to_string(),
            why: cells[4].to_string(),
        };
        assert!(
            rows.insert(key.clone(), row).is_none(),
            "{key:?} listed twice"
        );
    }
    rows
}

/// The names of the test functions under src/engine.
fn engine_tests() -> Vec<String> {
    fn visit(dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                visit(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                for chunk in text.split("#[test]").skip(1) {
                    if let Some(name) = chunk
                        .split("fn ")
                        .nth(1)
                        .and_then(|rest| rest.split('(').next())
                    {
                        out.push(name.trim().to_string());
                    }
                }
            }
        }
    }
    let mut names = Vec::new();
    visit(&root().join("src/engine"), &mut names);
    names
}

#[test]
fn every_quickjs_loop_is_in_the_inventory_as_it_is_built() {
    let found = loop_functions();
    let rows = inventory();
    let tests = engine_tests();
    let mut problems = String::new();
    for ((file, function), hash) in &found {
        match rows.get(&(file.clone(), function.clone())) {
            None => writeln!(
                problems,
                "not listed: | {file} | `{function}` | {hash} | ? | ? |"
            ),
            Some(row) if &row.hash != hash => writeln!(
                problems,
                "changed since it was read (now {hash}): {file} `{function}`: {} {}",
                row.status, row.why
            ),
            Some(_) => Ok(()),
        }
        .unwrap();
    }
    for ((file, function), row) in &rows {
        if !found.contains_key(&(file.clone(), function.clone())) {
            writeln!(
                problems,
                "listed but has no loop any more: {file} `{function}`"
            )
            .unwrap();
        }
        if !STATUSES.contains(&row.status.as_str()) {
            writeln!(
                problems,
                "unknown status {:?}: {file} `{function}`",
                row.status
            )
            .unwrap();
        }
        if row.why.is_empty() {
            writeln!(problems, "no reason given: {file} `{function}`").unwrap();
        }
        if row.status == "polls" {
            let named: Vec<&str> = row.why.split('`').skip(1).step_by(2).collect();
            if !named
                .iter()
                .any(|name| tests.iter().any(|test| test == name))
            {
                writeln!(
                    problems,
                    "polls, but names no test of src/engine that proves it: {file} `{function}`"
                )
                .unwrap();
            }
        }
    }
    assert!(
        problems.is_empty(),
        "vendor/quickjs-loops.md is not true of the QuickJS this crate builds \
         (read each function, then fix its row):\n{problems}"
    );
}

#[test]
fn the_inventory_scanner_finds_functions_and_their_loops() {
    let source = r#"
#include <x.h>
#define LOOP(x) do { x; } while (0)
#ifdef __cplusplus
extern "C" {
#endif
/* for ( in a comment { */
static int JS_PRINTF_FORMAT_ATTR(2, 3) counts(const char *s, int n)
{
    int i, c = 0;
    for (i = 0; i < n; i++)
        c += s[i] == '{';
    return c;
}
#if 0
static void dead(void) { while (1) {} }
#else
static int straight(int a) { return a + "while (x) {"[0]; }
#endif
static int again(int n)
{
 retry:
    if (n-- > 0)
        goto retry;
    return n;
}
static int forward(int n)
{
    if (n)
        goto done;
    n++;
 done:
    return n;
}
#ifdef __cplusplus
}
#endif
"#;
    let found: Vec<(String, bool)> = functions(source)
        .into_iter()
        .map(|(name, body)| {
            let looped = has_loop(&body);
            (name, looped)
        })
        .collect();
    assert_eq!(
        found,
        [
            ("counts".to_string(), true),
            ("straight".to_string(), false),
            ("again".to_string(), true),
            ("forward".to_string(), false),
        ]
    );
    assert_eq!(body_hash("{ a;\n  b; }"), body_hash("{ a; b; }"));
    assert_ne!(body_hash("{ a; b; }"), body_hash("{ a; c; }"));
}
