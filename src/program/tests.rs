//! Tests of the program layer: what the rewrite produces and what the rules report.
//!
//! Spec: §6 (validation and AST instrumentation).

use super::*;

fn transformed(code: &str) -> String {
    let prepared = prepare(code, &ProgramContext::default());
    assert!(
        !prepared.is_blocked(),
        "unexpected diagnostics: {:?}",
        prepared.diagnostics
    );
    prepared.transformed_code
}

fn rules_of(code: &str) -> Vec<&'static str> {
    prepare(code, &ProgramContext::default())
        .diagnostics
        .iter()
        .map(|d| d.rule)
        .collect()
}

/// Collapses whitespace so expectations do not depend on codegen's indentation.
fn squash(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_rewrites(code: &str, expected: &str) {
    assert_eq!(
        squash(&transformed(code)),
        squash(expected),
        "rewriting {code:?}"
    );
}

#[test]
fn loops_are_left_as_written_since_quickjs_compiles_the_guard_into_them() {
    // §6.3: the guard is QuickJS's own (patch 0600), so the rewrite adds nothing to loops:
    // no call for code to intercept, and labels, `continue` targets and `for (let …)`
    // per-iteration bindings stay exactly as written.
    for code in [
        "while (a) { b(); }",
        "do { b(); } while (a);",
        "for (;;) {}",
        "for (k in o) {}",
        "for (v of o) {}",
        "for await (v of o) {}",
        "while (a) b();",
        "outer: for (;;) { continue outer; }",
        "for (let i = 0; i < 3; i++) fs.push(() => i);",
    ] {
        assert_rewrites(code, code);
    }
}

#[test]
fn returns_inside_functions_stay_theirs() {
    assert_rewrites(
        "function f() { return 1; }\nconst g = () => { return 2; };\nclass C { m() { return 3; } }",
        "function f() { return 1; } const g = () => { return 2; }; class C { m() { return 3; } }",
    );
}

#[test]
fn the_last_expression_statement_is_returned_as_the_result() {
    assert_rewrites(
        "let a = 1;\na + 1;;",
        "let a = 1; return __smol_result(a + 1); ;",
    );
}

#[test]
fn only_the_last_statement_is_captured() {
    assert_rewrites("a; b", "a; return __smol_result(b);");
    assert_rewrites("a; let b = 1", "a; let b = 1;");
}

#[test]
fn top_level_return_hands_its_value_to_the_result() {
    assert_rewrites(
        "if (a) return 1;\ntry { return } finally {}",
        "if (a) return __smol_result(1); try { return; } finally {}",
    );
}

#[test]
fn returns_inside_functions_are_left_alone() {
    assert_rewrites(
        "const f = () => { return 1 }; function g() { return 2 }",
        "const f = () => { return 1; }; function g() { return 2; }",
    );
}

#[test]
fn top_level_declarations_stay_as_written() {
    assert_rewrites(
        "const a = 1; let b; let { c } = o; class D {} var e; function f() {}",
        "const a = 1; let b; let { c } = o; class D {} var e; function f() {}",
    );
}

#[test]
fn function_declarations_after_the_last_expression_do_not_hide_it() {
    assert_rewrites(
        "f();\nfunction f() {}",
        "return __smol_result(f()); function f() {}",
    );
}

#[test]
fn directives_stay_first() {
    assert_rewrites(
        "'use strict';\nx = 1",
        "\"use strict\"; return __smol_result(x = 1);",
    );
}

#[test]
fn code_of_directives_only_gives_the_last_string() {
    assert_rewrites(
        "'use strict'; 'ready'",
        "\"use strict\"; \"ready\"; return __smol_result(\"ready\");",
    );
    assert_rewrites(
        "'use strict'; function f() {}",
        "\"use strict\"; function f() {} return __smol_result(\"use strict\");",
    );
}

#[test]
fn typescript_annotations_are_stripped() {
    assert_rewrites(
        "const n: number = 1;\ninterface I { a: string }\nn as number",
        "const n = 1; return __smol_result(n);",
    );
}

#[test]
fn syntax_errors_are_reported_at_the_users_position_with_a_frame() {
    let prepared = prepare("const a = 1;\nconst b = ;", &ProgramContext::default());
    assert!(prepared.is_blocked());
    let diagnostic = &prepared.diagnostics[0];
    assert_eq!(diagnostic.rule, "syntax_valid");
    assert_eq!(
        diagnostic.location,
        Some(crate::diagnostic::Location {
            line: 2,
            column: 11
        })
    );
    assert_eq!(
        diagnostic.code_frame.as_deref(),
        Some("2 | const b = ;\n  |           ^")
    );
    assert!(prepared.transformed_code.is_empty());
}

#[test]
fn an_unmatched_closing_brace_is_a_syntax_error_not_an_escape() {
    let prepared = prepare("}\nwhile (true) {}\n{", &ProgramContext::default());
    assert_eq!(rules_of("}\nwhile (true) {}\n{"), ["syntax_valid"]);
    assert_eq!(
        prepared.diagnostics[0].location,
        Some(crate::diagnostic::Location { line: 1, column: 1 })
    );
}

#[test]
fn new_target_outside_functions_is_a_syntax_error_as_in_a_script() {
    assert_eq!(rules_of("new.target"), ["syntax_valid"]);
    assert_eq!(rules_of("const f = () => new.target"), ["syntax_valid"]);
    assert!(rules_of("function f() { return new.target } class K { x = new.target }").is_empty());
}

#[test]
fn using_at_the_top_level_is_a_syntax_error_as_in_a_script() {
    assert_eq!(rules_of("using r = null"), ["syntax_valid"]);
    assert_eq!(rules_of("await using r = null"), ["syntax_valid"]);
    assert!(rules_of("{ using r = null }").is_empty());
}

#[test]
fn early_errors_from_semantic_analysis_are_syntax_errors() {
    assert_eq!(rules_of("let a; let a;"), ["syntax_valid"]);
}

#[test]
fn empty_code_is_reported_by_code_non_empty() {
    assert_eq!(rules_of(" \n "), ["code_non_empty"]);
}

#[test]
fn internal_names_are_reserved() {
    assert_eq!(rules_of("__smol_guard = () => {}"), ["reserved_identifier"]);
    assert_eq!(rules_of("let __smol_x = 1"), ["reserved_identifier"]);
    assert_eq!(
        rules_of("__smol_main: for (;;) break __smol_main"),
        ["reserved_identifier", "reserved_identifier"]
    );
    // Property names are not bindings.
    assert!(rules_of("o.__smol_guard").is_empty());
}

#[test]
fn positions_map_back_to_the_users_code() {
    let prepared = prepare("const a = 1;\n\nfoo(a);", &ProgramContext::default());
    let generated_line = prepared
        .transformed_code
        .lines()
        .position(|line| line.contains("foo(a)"))
        .unwrap() as u32
        + 1;
    let column = prepared
        .transformed_code
        .lines()
        .nth(generated_line as usize - 1)
        .unwrap()
        .find("foo")
        .unwrap() as u32
        + 1;
    let location = prepared.positions.original(generated_line, column).unwrap();
    assert_eq!(location.line, 3);
}

#[test]
fn typescript_enums_with_string_members_become_objects() {
    assert_rewrites(
        "enum Color { Red, Green = 'g', Blue = Green }\nColor.Blue",
        "let Color = /* @__PURE__ */ function(Color) { Color[Color[\"Red\"] = 0] = \"Red\"; Color[\"Green\"] = \"g\"; Color[\"Blue\"] = \"g\"; return Color; }({}); return __smol_result(Color.Blue);",
    );
}

fn prepare_with(code: &str, authorized: &[&str], tools: &[&str]) -> PreparedProgram {
    let context = ProgramContext {
        authorized_imports: authorized.iter().map(|name| (*name).to_owned()).collect(),
        tool_names: tools.iter().map(|name| (*name).to_owned()).collect(),
        timers: false,
    };
    prepare(code, &context)
}

fn located(prepared: &PreparedProgram) -> Vec<(&'static str, u32, u32)> {
    prepared
        .diagnostics
        .iter()
        .map(|d| {
            let location = d.location.expect("every rule finding is located");
            (d.rule, location.line, location.column)
        })
        .collect()
}

#[test]
fn dynamic_imports_are_checked_against_authorized_imports() {
    assert!(
        prepare_with("const m = await import(\"x-ok\");\nm.f()", &["x-ok"], &[])
            .diagnostics
            .is_empty()
    );
    assert!(
        prepare_with("await import('fs'); await import(name)", &["*"], &[])
            .diagnostics
            .is_empty()
    );
    let prepared = prepare_with("await import('fs')", &["x-ok"], &[]);
    assert!(prepared.is_blocked());
    assert_eq!(
        prepared.diagnostics[0].message,
        "Import not allowed: 'fs'. Allowed: x-ok"
    );
    assert_eq!(
        prepare_with("await import('fs')", &[], &[]).diagnostics[0].message,
        "Import not allowed: 'fs'. Allowed: none"
    );
}

#[test]
fn a_template_literal_specifier_is_checked_like_a_string() {
    assert!(prepare_with("await import(`x`)", &["x"], &[])
        .diagnostics
        .is_empty());
    assert_eq!(
        located(&prepare_with("await import(`y`)", &["x"], &[])),
        [("import_allowed", 1, 7)]
    );
}

#[test]
fn imports_nested_in_functions_are_checked_too() {
    let prepared = prepare_with(
        "async function load() {\n  return (async () => await import('fs'))()\n}",
        &[],
        &[],
    );
    assert_eq!(located(&prepared), [("import_allowed", 2, 29)]);
}

#[test]
fn static_imports_and_exports_replace_the_syntax_errors() {
    let prepared = prepare_with(
        "import fs from 'node:fs';\nexport const a = 1;\nimport { b } from 'x-ok'",
        &["x-ok"],
        &[],
    );
    assert!(prepared.is_blocked());
    assert!(prepared.transformed_code.is_empty());
    assert_eq!(
        located(&prepared),
        [
            ("static_import_in_script_mode", 1, 1),
            ("static_import_in_script_mode", 2, 1),
            // Authorized, and still refused in its static form (CF-05).
            ("static_import_in_script_mode", 3, 1),
        ]
    );
    assert_eq!(
        prepared.diagnostics[0].message,
        "Static import is not allowed: 'node:fs'. Use await import('node:fs') if it is authorized"
    );
    assert_eq!(
        prepared.diagnostics[1].message,
        "export is not allowed in agent code"
    );
}

#[test]
fn a_static_import_beside_a_real_syntax_error_reports_the_syntax_error() {
    assert_eq!(
        rules_of("import fs from 'fs';\nconst x = ;"),
        ["syntax_valid"]
    );
}

#[test]
fn host_globals_warn_but_the_program_still_runs() {
    let prepared = prepare("const pid = process.pid;\npid", &ProgramContext::default());
    assert!(!prepared.is_blocked());
    assert!(!prepared.transformed_code.is_empty());
    assert_eq!(located(&prepared), [("forbidden_global_access", 1, 13)]);
    assert_eq!(
        prepared.diagnostics[0].severity,
        crate::diagnostic::DiagnosticSeverity::Warning
    );
}

#[test]
fn object_keys_and_local_bindings_named_like_host_globals_are_fine() {
    assert!(rules_of("const o = { process: 1, require: 2 };\no.process").is_empty());
    assert!(rules_of("const require = (m) => m;\nrequire('fs')").is_empty());
    assert!(rules_of("const f = (fetch) => fetch(1)").is_empty());
}

#[test]
fn typescript_types_are_not_references() {
    assert!(rules_of("let b: Buffer | undefined;\nconst d: typeof document = x").is_empty());
    assert_eq!(
        rules_of("const b: number = Buffer.length"),
        ["forbidden_global_access"]
    );
}

#[test]
fn tool_names_may_not_be_declared_or_assigned() {
    let tools = ["web_search"];
    assert_eq!(
        located(&prepare_with(
            "const { hits: web_search } = r;",
            &[],
            &tools
        )),
        [("tool_name_shadowing", 1, 15)]
    );
    let prepared = prepare_with("let a = 1;\nweb_search = a;", &[], &tools);
    assert_eq!(located(&prepared), [("tool_name_shadowing", 2, 1)]);
    assert_eq!(
        prepared.diagnostics[0].message,
        "'web_search' is a tool: declaring or assigning it would replace the tool"
    );
    assert!(prepare_with(
        "const run = (web_search) => web_search(1);\nrun(web_search)",
        &[],
        &tools
    )
    .diagnostics
    .is_empty());
    assert_eq!(rules_of("final_answer = 1"), ["tool_name_shadowing"]);
}

#[test]
fn every_rule_reports_and_warnings_ride_along_with_errors() {
    let prepared = prepare_with(
        "const web_search = 1;\nawait import('fs');\nsetTimeout(f, 1);\nlet __smol_x;",
        &[],
        &["web_search"],
    );
    assert!(prepared.is_blocked());
    assert!(prepared.transformed_code.is_empty());
    let mut rules: Vec<_> = prepared.diagnostics.iter().map(|d| d.rule).collect();
    rules.sort_unstable();
    assert_eq!(
        rules,
        [
            "forbidden_global_access",
            "import_allowed",
            "reserved_identifier",
            "tool_name_shadowing"
        ]
    );
}

#[test]
fn columns_count_utf16_units_after_non_ascii_text() {
    // "é" is one UTF-16 unit in two bytes, "😀" two units in four bytes.
    let code = "const s = 'é😀'; process.exit()";
    assert_eq!(
        located(&prepare(code, &ProgramContext::default())),
        [("forbidden_global_access", 1, 18)]
    );
    let code = "const s = 'é😀'; await import('fs')";
    assert_eq!(
        located(&prepare_with(code, &[], &[])),
        [("import_allowed", 1, 24)]
    );
    let code = "const s = 'é😀'; import fs from 'fs'";
    assert_eq!(
        located(&prepare_with(code, &[], &[])),
        [("static_import_in_script_mode", 1, 18)]
    );
}

#[test]
fn crlf_line_ends_count_once() {
    let code = "const a = 1;\r\n\r\nconst b = fetch(a);\r\nawait import('fs')";
    assert_eq!(
        located(&prepare_with(code, &[], &[])),
        [("import_allowed", 4, 7), ("forbidden_global_access", 3, 11)]
    );
    let code = "const a = 1;\r\nimport x from 'm';\r\nexport { a }";
    assert_eq!(
        located(&prepare_with(code, &[], &[])),
        [
            ("static_import_in_script_mode", 2, 1),
            ("static_import_in_script_mode", 3, 1)
        ]
    );
}

/// Regression (fuzz targets `prepare_grammar`, crash input `Program { strict: true, body:
/// [Enum(Await, [])] }`, and `prepare_bytes`, crash input ``\`<5<<1``; both kept under
/// `fuzz/regressions/`): oxc's TypeScript parser accepted code its JavaScript parser refuses
/// (`enum await {}` in the async wrapper, a type assertion it lowered to `< 5 << 1`), and the
/// lowered code failed at run time as a SyntaxError instead of validation.
#[test]
fn typescript_that_lowers_to_invalid_javascript_is_a_syntax_error() {
    for code in [
        "\"use strict\";\nenum await {}\n",
        "enum await { A }",
        "\\`<5<<1",
    ] {
        let prepared = prepare(code, &ProgramContext::default());
        assert!(
            prepared.is_blocked(),
            "{code}: {:?}",
            prepared.transformed_code
        );
        assert_eq!(rules_of(code), ["syntax_valid"], "{code}");
    }
    assert!(!prepare("enum Color { Red }\nColor.Red", &ProgramContext::default()).is_blocked());
}

#[test]
fn a_hashbang_line_at_the_start_is_a_comment_and_anywhere_else_a_syntax_error() {
    // test262 language/comments/hashbang: `#!` is allowed only as the script's first characters.
    assert!(rules_of("#!/usr/bin/env node\n1 + 1").is_empty());
    assert!(rules_of("#!\n1 + 1").is_empty());
    assert_eq!(rules_of("1;\n#!/usr/bin/env node"), ["syntax_valid"]);
    assert_eq!(rules_of(" #! not first"), ["syntax_valid"]);
}

#[test]
fn a_function_assigned_to_a_parenthesized_name_stays_anonymous() {
    // The parse drops the parentheses; the rewrite keeps what they meant (ECMA-262
    // IsIdentifierRef): no name for the function, the same value.
    for (code, rewritten) in [
        ("(f) = function () {}; 0", "f = (0, function() {});"),
        ("((f)) = () => {}; 0", "f = (0, () => {});"),
        ("(f) ??= class {}; 0", "f ??= (0, class {});"),
        ("(f) ||= async () => {}; 0", "f ||= (0, async () => {});"),
    ] {
        let transformed = transformed(code);
        assert!(
            transformed.contains(rewritten),
            "{code:?} became {transformed:?}"
        );
    }
    // Where a name is given, the value is no anonymous function, or QuickJS names it anyway
    // (a destructuring default), nothing changes.
    for code in [
        "f = function () {}; 0",
        "(f = function () {}); 0",
        "f = (function () {}); 0",
        "(f) = function g() {}; 0",
        "(f) = 1; 0",
        "(f) += function () {}; 0",
        "(o.f) = function () {}; 0",
        "[(f) = () => {}] = []; 0",
        "({ x: (f) = () => {} } = {}); 0",
    ] {
        let transformed = transformed(code);
        assert!(
            !transformed.contains("(0, "),
            "{code:?} became {transformed:?}"
        );
    }
}

#[test]
fn regexp_literals_quickjs_refuses_are_syntax_errors_at_their_line() {
    for code in [
        "const ok = 1;\nconst r = /(?<n>a)(?<n>b)/;",
        "const ok = 1;\nconst r = /a{2,1}/;",
        "const ok = 1;\nconst r = /[b-a]/;",
        "const ok = 1;\nconst r = /\\p{Nope}/u;",
        "const ok = 1;\nconst r = /a/gg;",
        "const ok = 1;\nconst r = /(/;",
    ] {
        let prepared = prepare(code, &ProgramContext::default());
        let found = located(&prepared);
        assert!(
            matches!(found.as_slice(), [("syntax_valid", 2, _)]),
            "{code:?}: {found:?} {:?}",
            prepared.diagnostics
        );
    }
    // Annex B syntax QuickJS accepts stays accepted.
    for code in ["/{/", "/]/", "/\\c/", "/a{,1}/", "/\\8/", "/[\\c1]/"] {
        assert!(rules_of(code).is_empty(), "{code}: {:?}", rules_of(code));
    }
}
