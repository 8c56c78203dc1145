//! Tests of the program layer: what the rewrite produces and what the rules report.

use super::*;

fn transformed(code: &str) -> String {
    let prepared = prepare(code);
    assert!(
        !prepared.is_blocked(),
        "unexpected diagnostics: {:?}",
        prepared.diagnostics
    );
    prepared.transformed_code
}

fn rules_of(code: &str) -> Vec<&'static str> {
    prepare(code).diagnostics.iter().map(|d| d.rule).collect()
}

#[test]
fn dump() {
    println!("{}", transformed("const x = 1;\nlet y;\nclass A {}\nfunction f() { return 1 }\nfor (let i = 0; i < 3; i++) x;\nif (x) return 5;\nx + 1"));
}
