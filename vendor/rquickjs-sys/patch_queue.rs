// ses-executor: reads and applies the patch queue of ../quickjs-patches. One file, included
// with `#[path]` by this crate's build.rs, by the loop inventory's test
// (src/engine/tests/loop_inventory.rs) and by the queue's checker
// (scripts/quickjs-patches-check), so that all three accept exactly the same patches.
//
// A patch is a header (prose, ignored by the build) and then one unified diff per file, with
// paths relative to the QuickJS source folder, as `git diff` writes them there:
//
//     QuickJS patch NNNN: one line saying what it changes.
//
//     What: ...
//     Why: ...
//     Upstream: ...
//     Tests: ...
//
//     --- a/quickjs.c
//     +++ b/quickjs.c
//     @@ -1,3 +1,4 @@ ...
//
// `scripts/quickjs-patches.mjs refresh` writes them so; anything else (another path
// convention, `diff --git` or `index` lines, a missing field) is refused here, so that the
// convention cannot drift.

use std::path::{Path, PathBuf};

/// The fields every header has, each at the start of a line, in this order.
pub const HEADER_FIELDS: [&str; 4] = ["What:", "Why:", "Upstream:", "Tests:"];

/// The `*.patch` files of `dir`, in the order the build applies them (by name).
pub fn queue(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    let mut patches: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "patch"))
        .collect();
    patches.sort();
    Ok(patches)
}

/// A patch's `(file name, unified diff)` parts, once its header is checked; `name` is the
/// patch's file name, for the messages.
fn split(name: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let first = lines
        .iter()
        .position(|line| line.starts_with("--- "))
        .ok_or_else(|| format!("{name}: no `--- a/<file>` line"))?;
    let header_len: usize = lines[..first].iter().map(|line| line.len()).sum();
    let header = &text[..header_len];
    check_header(name, header)?;
    let mut files: Vec<(String, String)> = Vec::new();
    let mut index = first;
    while index < lines.len() {
        let line = lines[index];
        let next = lines.get(index + 1).copied().unwrap_or_default();
        if line.starts_with("--- ") && next.starts_with("+++ ") {
            let old = line[4..].trim_end_matches(['\n', '\r']);
            let new = next[4..].trim_end_matches(['\n', '\r']);
            let file = old.strip_prefix("a/").unwrap_or_default();
            let plain = !file.is_empty() && !file.contains(['/', '\t', ' ', '\\']);
            if !plain || new.strip_prefix("b/") != Some(file) {
                return Err(format!(
                    "{name}: `{}` / `{}`: file lines must be `--- a/<file>` and `+++ b/<file>`, \
                     <file> a name in the QuickJS folder (write patches with \
                     scripts/quickjs-patches.mjs refresh)",
                    old, new
                ));
            }
            if files.iter().any(|(seen, _)| seen == file) {
                return Err(format!("{name}: {file} has two diffs"));
            }
            files.push((file.to_string(), format!("{line}{next}")));
            index += 2;
            continue;
        }
        let hunk_line = ["@@", " ", "+", "-", "\\", "\n"]
            .iter()
            .any(|prefix| line.starts_with(prefix));
        if !hunk_line {
            return Err(format!(
                "{name}: `{}` is not part of a unified diff (write patches with \
                 scripts/quickjs-patches.mjs refresh)",
                line.trim_end()
            ));
        }
        if let Some((_, diff)) = files.last_mut() {
            diff.push_str(line);
        }
        index += 1;
    }
    Ok(files)
}

/// Refuses a header without its title line (`QuickJS patch NNNN: `, NNNN the number that starts
/// the file name) or without one of [`HEADER_FIELDS`] in order.
fn check_header(name: &str, header: &str) -> Result<(), String> {
    let number = name.split('-').next().unwrap_or_default();
    let title = format!("QuickJS patch {number}: ");
    if !header.starts_with(&title) {
        return Err(format!(
            "{name}: the header's first line must start with `{title}`"
        ));
    }
    let mut rest = header;
    for field in HEADER_FIELDS {
        let at = rest
            .match_indices(field)
            .find(|(at, _)| *at == 0 || rest.as_bytes()[at - 1] == b'\n')
            .map(|(at, _)| at)
            .ok_or_else(|| {
                format!(
                    "{name}: the header has no line starting with `{field}` (fields, in order: {})",
                    HEADER_FIELDS.join(" ")
                )
            })?;
        rest = &rest[at + field.len()..];
    }
    Ok(())
}

/// Applies one patch with diffy, as the build does: `read` gives a file's current text, and the
/// result is every file the patch changes with its new text. An error names the patch and the
/// file.
pub fn apply(
    name: &str,
    text: &str,
    mut read: impl FnMut(&str) -> Result<String, String>,
) -> Result<Vec<(String, String)>, String> {
    let files = split(name, text)?;
    let mut patched = Vec::with_capacity(files.len());
    for (file, diff) in files {
        let original = read(&file).map_err(|error| format!("{name}: {file}: {error}"))?;
        let parsed =
            diffy::Patch::from_str(&diff).map_err(|error| format!("{name}: {file}: {error}"))?;
        let text = diffy::apply(&original, &parsed)
            .map_err(|error| format!("{name} does not apply to {file}: {error}"))?;
        patched.push((file, text));
    }
    Ok(patched)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "QuickJS patch 0100: a title.\n\nWhat: w.\nWhy: y.\nUpstream: u.\nTests: t.\n\n";
    const HUNK: &str = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n";

    fn apply_to_ab(text: &str) -> Result<Vec<(String, String)>, String> {
        apply("0100-x.patch", text, |_| Ok("a\nb\n".to_string()))
    }

    #[test]
    fn a_patch_as_refresh_writes_it_applies() {
        let text = format!("{HEADER}--- a/quickjs.c\n+++ b/quickjs.c\n{HUNK}");
        let patched = apply_to_ab(&text).unwrap();
        assert_eq!(patched, [("quickjs.c".to_string(), "a\nc\n".to_string())]);
    }

    #[test]
    fn other_path_conventions_are_refused() {
        for (old, new) in [
            ("a/quickjs/quickjs.c", "b/quickjs/quickjs.c"),
            ("quickjs/quickjs.c", "quickjs/quickjs.c"),
            ("quickjs.c", "quickjs.c"),
            ("a/quickjs.c\t2026-01-01", "b/quickjs.c"),
            ("a/quickjs.c", "b/quickjs.h"),
        ] {
            let text = format!("{HEADER}--- {old}\n+++ {new}\n{HUNK}");
            let error = apply_to_ab(&text).unwrap_err();
            assert!(error.contains("--- a/<file>"), "{old} {new}: {error}");
        }
    }

    #[test]
    fn git_lines_between_the_diffs_are_refused() {
        let text = format!("{HEADER}--- a/quickjs.c\n+++ b/quickjs.c\n{HUNK}diff --git a/x b/x\n");
        let error = apply_to_ab(&text).unwrap_err();
        assert!(error.contains("diff --git"), "{error}");
    }

    #[test]
    fn a_header_without_its_title_or_a_field_is_refused() {
        let diff = format!("--- a/quickjs.c\n+++ b/quickjs.c\n{HUNK}");
        let untitled = HEADER.replace("QuickJS patch 0100", "ses-executor patch 0100");
        assert!(apply_to_ab(&format!("{untitled}{diff}"))
            .unwrap_err()
            .contains("first line"));
        for field in HEADER_FIELDS {
            let header = HEADER.replace(field, "Note:");
            let error = apply_to_ab(&format!("{header}{diff}")).unwrap_err();
            assert!(error.contains(field), "{field}: {error}");
        }
        let swapped = HEADER.replace("What: w.\nWhy: y.", "Why: y.\nWhat: w.");
        assert!(apply_to_ab(&format!("{swapped}{diff}")).is_err());
    }
}
