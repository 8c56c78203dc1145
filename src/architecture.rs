//! The shape of the code that docs/contract.md ("Shape of the code") asks for, checked over
//! `src/` on every `cargo test`:
//!
//! - no import circles between files, and no file over [`MAX_LINES`] lines (tests included);
//! - each engine crate imported only by the layer that owns it ([`CRATE_HOMES`]: `rquickjs`
//!   under `engine/`, its raw C API `qjs` under `engine/quickjs/`, `napi` under `node/` and
//!   `lib.rs`, `oxc_*` under `program/`);
//! - each layer imports only the layers below it ([`ALLOWED_IMPORTS`]). In particular the Node
//!   layer reaches the engine only through the executor (`executor/`, which re-exports the few
//!   engine types the napi layer needs) and the host port (`engine/host.rs`, the trait the napi
//!   layer implements for tool calls and logs); the scheduler knows nothing of what it
//!   schedules; the engine knows nothing of the executor or napi; the program layer knows
//!   nothing of QuickJS;
//! - one test layout ([`misplaced_tests`]): a file's own unit tests sit at its end in
//!   `#[cfg(test)] mod tests { … }`; tests kept apart from the code sit inside the folder of the
//!   module they test, in `tests.rs` beside its `mod.rs` (or, when one file is not enough, in
//!   `tests/mod.rs` and files beside it). No `*_tests.rs` siblings.
//!
//! `cargo test --lib architecture -- --nocapture` prints the import graph it checked;
//! `ARCHITECTURE_SRC=<dir>` checks another tree (e.g. an older checkout) the same way.
//!
//! The scan is lexical: comments, strings and character literals are blanked out, then every
//! `use` declaration and every `crate::…` / `super::…` path is resolved to the file of the
//! module it names. A module's own submodules are its parts, not its imports: an edge from a
//! file to a file below it (`engine/mod.rs` calling `run::worker::serve`) is not counted, so a
//! child using its parent's types is no circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be, its tests included.
const MAX_LINES: usize = 1_500;

/// Which directories may import an engine crate (by path prefix under `src/`).
const CRATE_HOMES: [(&str, &[&str]); 5] = [
    ("rquickjs", &["engine/"]),
    ("qjs", &["engine/quickjs/"]),
    ("napi", &["node/", "lib.rs"]),
    ("napi_derive", &["node/", "lib.rs"]),
    ("oxc_", &["program/"]),
];

/// Modules every layer may import: plain data and rules shared by all of them, which import
/// nothing but each other.
const SHARED: [&str; 11] = [
    "canvas/",
    "diagnostic.rs",
    "error.rs",
    "memory.rs",
    "modules.rs",
    "options/",
    "session/",
    "tool_args.rs",
    "tools.rs",
    "trace.rs",
    "value/",
];

/// What each layer may import besides itself and [`SHARED`] (by path prefix under `src/`).
/// `lib.rs` and this file are the only others.
const ALLOWED_IMPORTS: [(&str, &[&str]); 6] = [
    // The napi layer: the executor, the host port, the pool's size and waits, validation
    // (`validate()` runs no engine) and the prompt.
    (
        "node/",
        &[
            "executor/",
            "engine/host.rs",
            "scheduler/",
            "program/",
            "prompt/",
        ],
    ),
    ("executor/", &["engine/", "program/"]),
    ("engine/", &["scheduler/", "program/"]),
    ("prompt/", &["program/"]),
    ("program/", &[]),
    ("scheduler/", &[]),
];

/// One source file: its module path (`["engine", "host"]`) and its text with comments and
/// literals blanked.
struct SourceFile {
    relative: String,
    module: Vec<String>,
    code: String,
    lines: usize,
}

fn source_root() -> PathBuf {
    std::env::var_os("ARCHITECTURE_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

fn load(root: &Path) -> Vec<SourceFile> {
    let mut paths = Vec::new();
    rust_files(root, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("readable source");
            let mut module: Vec<String> = relative
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            SourceFile {
                relative,
                module,
                lines: text.lines().count(),
                code: blank_comments_and_literals(&text),
            }
        })
        .collect()
}

/// `text` with every comment, string and character literal replaced by spaces (newlines kept),
/// so that braces, `use` and paths inside them are not mistaken for code.
fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && matches!(next, Some('#' | '"'))
            && !chars[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.extend(chars[i..j.min(chars.len())].iter().map(|&c| blank(c)));
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'); anything else is a lifetime.
            let end = if next == Some('\\') {
                (i + 2..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end - i + 1));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The word starting at `at` is `word` standing alone.
fn word_at(code: &[char], at: usize, word: &str) -> bool {
    let len = word.chars().count();
    !(at > 0 && is_ident(code[at - 1]))
        && code.len() >= at + len
        && code[at..at + len].iter().copied().eq(word.chars())
        && !code.get(at + len).is_some_and(|&c| is_ident(c))
}

/// Expands a `use` tree (`a::{b, c::{d, e as f}, self}`) into its paths.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn expand(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let mut base = prefix.to_vec();
            base.extend(head);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&inner[start..i], &base, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&inner[start..], &base, out);
            return;
        }
        let tree = tree.split(" as ").next().unwrap_or(tree).trim();
        let mut path = prefix.to_vec();
        for segment in tree.split("::").map(str::trim) {
            if segment == "self" && !path.is_empty() {
                continue;
            }
            path.push(segment.to_string());
        }
        out.push(path);
    }
    let mut out = Vec::new();
    expand(tree, &[], &mut out);
    out
}

/// Every module path the file names (resolved against its position), with the byte offsets
/// of `use` declarations removed from further scanning.
fn referenced_paths(file: &SourceFile) -> Vec<(Vec<String>, Vec<String>)> {
    let code: Vec<char> = file.code.chars().collect();
    let mut found = Vec::new();
    // The inline modules (`mod tests { … }`) enclosing the current position, with the brace
    // depth at which each opened.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let base = |inline: &[(String, usize)]| {
        let mut base = file.module.clone();
        base.extend(inline.iter().map(|(name, _)| name.clone()));
        base
    };
    while i < code.len() {
        let c = code[i];
        if c == '{' {
            depth += 1;
        } else if c == '}' {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|&(_, at)| at == depth) {
                inline.pop();
            }
        } else if word_at(&code, i, "mod") {
            let rest: String = code[i + 3..].iter().take(200).collect();
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if !name.is_empty() && after.starts_with('{') {
                inline.push((name, depth));
            }
        } else if word_at(&code, i, "use") {
            let end = (i..code.len())
                .find(|&j| code[j] == ';')
                .unwrap_or(code.len());
            let tree: String = code[i + 3..end].iter().collect();
            for path in expand_use(&tree) {
                found.push((base(&inline), path));
            }
            i = end;
            continue;
        } else if word_at(&code, i, "crate") || word_at(&code, i, "super") {
            let end = (i..code.len())
                .find(|&j| !(is_ident(code[j]) || code[j] == ':'))
                .unwrap_or(code.len());
            let path: String = code[i..end].iter().collect();
            if path.contains("::") {
                let segments = path
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                found.push((base(&inline), segments));
            }
            i = end;
            continue;
        }
        i += 1;
    }
    found
}

/// The file whose module `path` (seen from module `base`) names, if it is one of ours.
fn resolve(
    base: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, usize>,
) -> Option<usize> {
    let mut at: Vec<String>;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            at = Vec::new();
            rest = &path[1..];
        }
        Some("super") | Some("self") => {
            at = base.to_vec();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        at.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A path relative to the current module (`use console::LogEntry` in
            // `engine/mod.rs`); anything else is another crate.
            let mut child = base.to_vec();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            at = base.to_vec();
        }
        None => return None,
    }
    // The innermost module the path reaches; an inline module belongs to its file.
    let mut file = None;
    for length in (0..=at.len()).rev() {
        if let Some(&index) = modules.get(&at[..length]) {
            file = Some(index);
            break;
        }
    }
    for segment in rest {
        at.push(segment.clone());
        match modules.get(&at) {
            Some(&index) => file = Some(index),
            None => break,
        }
    }
    file
}

/// The import graph: for each file, the files it uses (excluding itself and files below it).
fn import_graph(files: &[SourceFile]) -> Vec<BTreeSet<usize>> {
    let modules: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(index, file)| (file.module.clone(), index))
        .collect();
    files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            referenced_paths(file)
                .into_iter()
                .filter_map(|(base, path)| resolve(&base, &path, &modules))
                .filter(|&target| {
                    target != index && !files[target].module.starts_with(&file.module)
                })
                .collect()
        })
        .collect()
}

/// Strongly connected components with more than one file: the import circles.
fn circles(graph: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Tarjan<'g> {
        graph: &'g [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, node: usize) {
            self.index[node] = Some(self.next);
            self.low[node] = self.next;
            self.next += 1;
            self.stack.push(node);
            self.on_stack[node] = true;
            for &target in &self.graph[node] {
                match self.index[target] {
                    None => {
                        self.visit(target);
                        self.low[node] = self.low[node].min(self.low[target]);
                    }
                    Some(index) if self.on_stack[target] => {
                        self.low[node] = self.low[node].min(index);
                    }
                    Some(_) => {}
                }
            }
            if Some(self.low[node]) == self.index[node] {
                let mut component = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: vec![None; graph.len()],
        low: vec![0; graph.len()],
        on_stack: vec![false; graph.len()],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for node in 0..graph.len() {
        if tarjan.index[node].is_none() {
            tarjan.visit(node);
        }
    }
    tarjan.found
}

/// Files naming `krate` (`rquickjs::…`, `use napi::…`, `#[napi…]`) outside its homes.
fn misplaced_imports(files: &[SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let code: Vec<char> = file.code.chars().collect();
        for (krate, homes) in CRATE_HOMES {
            if homes.iter().any(|home| file.relative.starts_with(home)) {
                continue;
            }
            let names = (0..code.len()).any(|i| {
                let prefix_ok = !(i > 0 && is_ident(code[i - 1]));
                let rest = &code[i..];
                prefix_ok
                    && rest.iter().copied().take(krate.len()).eq(krate.chars())
                    && if krate.ends_with('_') {
                        rest.get(krate.len()).is_some_and(|&c| is_ident(c))
                    } else {
                        let after = rest.get(krate.len()..krate.len() + 2);
                        after.is_some_and(|after| after == [':', ':'])
                            || (krate == "napi" && i > 1 && code[i - 2..i] == ['#', '['])
                    }
            });
            if names {
                found.push(format!("{} imports {krate}", file.relative));
            }
        }
    }
    found
}

/// Imports that cross a layer boundary the wrong way: `from -> to` for every edge of `graph`
/// that [`ALLOWED_IMPORTS`] and [`SHARED`] do not allow.
fn forbidden_imports(files: &[SourceFile], graph: &[BTreeSet<usize>]) -> Vec<String> {
    let under = |path: &str, prefix: &str| path.starts_with(prefix);
    let shared = |path: &str| SHARED.iter().any(|prefix| under(path, prefix));
    let mut found = Vec::new();
    for (file, targets) in files.iter().zip(graph) {
        let from = file.relative.as_str();
        let allowed: &[&str] = if shared(from) {
            &[]
        } else if let Some((_, allowed)) =
            ALLOWED_IMPORTS.iter().find(|(layer, _)| under(from, layer))
        {
            allowed
        } else {
            // `lib.rs` and `architecture.rs` declare the layers.
            continue;
        };
        let own = SHARED
            .iter()
            .chain(ALLOWED_IMPORTS.iter().map(|(layer, _)| layer))
            .find(|prefix| under(from, prefix))
            .copied()
            .unwrap_or(from);
        for &target in targets {
            let to = files[target].relative.as_str();
            let fine =
                under(to, own) || shared(to) || allowed.iter().any(|prefix| under(to, prefix));
            if !fine {
                found.push(format!("{from} -> {to}"));
            }
        }
    }
    found
}

/// Test files outside the one layout (see the module documentation): a `*_tests.rs` file, or
/// a `tests.rs` / `tests/` whose folder is not a module folder (has no `mod.rs`).
fn misplaced_tests(root: &Path, files: &[SourceFile]) -> Vec<String> {
    files
        .iter()
        .filter(|file| {
            let path = Path::new(&file.relative);
            let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or("");
            let module_folder = |dir: &Path| root.join(dir).join("mod.rs").is_file();
            if name.ends_with("_tests") {
                return true;
            }
            let mut dirs = path.ancestors().skip(1);
            if name == "tests" {
                let dir = dirs.next().unwrap_or(Path::new(""));
                return dir.file_name().is_some_and(|d| d == "tests")
                    || !(module_folder(dir) || dir.as_os_str().is_empty());
            }
            // A file under a `tests/` folder: that folder has its `mod.rs`, and sits in a
            // module folder.
            dirs.find(|dir| dir.file_name().is_some_and(|d| d == "tests"))
                .is_some_and(|tests| {
                    !module_folder(tests) || !module_folder(tests.parent().unwrap_or(Path::new("")))
                })
        })
        .map(|file| file.relative.clone())
        .collect()
}

#[test]
fn no_import_circles_between_files() {
    let files = load(&source_root());
    let graph = import_graph(&files);
    for (file, targets) in files.iter().zip(&graph) {
        let targets: Vec<&str> = targets
            .iter()
            .map(|&t| files[t].relative.as_str())
            .collect();
        println!("{} -> {}", file.relative, targets.join(", "));
    }
    let circles: Vec<Vec<&str>> = circles(&graph)
        .into_iter()
        .map(|circle| {
            circle
                .into_iter()
                .map(|f| files[f].relative.as_str())
                .collect()
        })
        .collect();
    println!("import circles: {circles:?}");
    assert!(circles.is_empty(), "import circles: {circles:?}");
}

#[test]
fn no_file_is_longer_than_the_limit() {
    let files = load(&source_root());
    let long: Vec<String> = files
        .iter()
        .filter(|file| file.lines > MAX_LINES)
        .map(|file| format!("{} ({} lines)", file.relative, file.lines))
        .collect();
    let longest = files.iter().max_by_key(|file| file.lines).expect("files");
    println!("longest: {} ({} lines)", longest.relative, longest.lines);
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn engine_crates_are_imported_only_by_their_layer() {
    let files = load(&source_root());
    let misplaced = misplaced_imports(&files);
    println!("misplaced imports: {misplaced:?}");
    assert!(misplaced.is_empty(), "{misplaced:?}");
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let files = load(&source_root());
    let graph = import_graph(&files);
    let forbidden = forbidden_imports(&files, &graph);
    println!("imports across a boundary: {forbidden:?}");
    assert!(forbidden.is_empty(), "{forbidden:?}");
}

#[test]
fn every_test_file_sits_in_the_module_it_tests() {
    let root = source_root();
    let misplaced = misplaced_tests(&root, &load(&root));
    assert!(
        misplaced.is_empty(),
        "test files outside the layout: {misplaced:?}"
    );
}

/// A throwaway source tree of `(path, text)` files.
fn scratch_tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("architecture-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("scratch folder");
        std::fs::write(path, text).expect("scratch file");
    }
    root
}

#[test]
fn the_layer_rules_flag_the_node_layer_reaching_into_the_engine() {
    let root = scratch_tree(
        "layers",
        &[
            (
                "lib.rs",
                "mod engine; mod executor; mod node; mod scheduler; mod value;",
            ),
            ("value/mod.rs", "pub struct Value;"),
            (
                "engine/mod.rs",
                "pub mod host; pub struct Engine; pub fn stats() {}",
            ),
            (
                "engine/host.rs",
                "use crate::value::Value; pub trait Host {}",
            ),
            ("executor/mod.rs", "use crate::engine::Engine;"),
            ("scheduler/mod.rs", "use crate::engine::Engine;"),
            ("node/mod.rs", "mod host; mod pool;"),
            (
                "node/host.rs",
                "use crate::engine::host::Host; use crate::executor::Executor;",
            ),
            ("node/pool.rs", "fn f() { crate::engine::stats() }"),
        ],
    );
    let files = load(&root);
    let forbidden = forbidden_imports(&files, &import_graph(&files));
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(
        forbidden,
        [
            "node/pool.rs -> engine/mod.rs",
            "scheduler/mod.rs -> engine/mod.rs"
        ]
    );
}

#[test]
fn the_test_layout_rule_flags_test_files_beside_what_they_test() {
    let root = scratch_tree(
        "tests",
        &[
            ("lib.rs", ""),
            ("engine/mod.rs", ""),
            ("engine/tests/mod.rs", ""),
            ("engine/tests/deadline.rs", ""),
            ("engine/oom_tests.rs", ""),
            ("engine/run/worker.rs", ""),
            ("engine/run/tests.rs", ""),
            ("value/mod.rs", ""),
            ("value/tests.rs", ""),
        ],
    );
    let misplaced = misplaced_tests(&root, &load(&root));
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(misplaced, ["engine/oom_tests.rs", "engine/run/tests.rs"]);
}

#[test]
fn the_scanner_resolves_uses_and_ignores_literals() {
    assert_eq!(
        expand_use(" super::{a, b::{c, d as e}, self}"),
        [
            vec!["super", "a"],
            vec!["super", "b", "c"],
            vec!["super", "b", "d"],
            vec!["super"],
        ]
    );
    let blanked = blank_comments_and_literals(
        "let a = \"use crate::x;\"; // use crate::y;\nlet b = '{'; let c: &'static str = r#\"}\"#;",
    );
    assert!(!blanked.contains("crate"));
    assert!(!blanked.contains('{') && !blanked.contains('}'));
    assert!(blanked.contains("&'static str"));
}
