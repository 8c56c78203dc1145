//! The declaration drives everything: an option declared once (here a test-only one) is read,
//! checked, defaulted and documented with nothing else written for it.

use std::collections::HashMap;

use super::*;

/// A table of one option, declared the way `crate::options` declares the real ones.
mod widgets {
    use crate::options::declare::{Bounds, JsDefault};

    declare_options! {
        values {
            /// How many widgets the test wants.
            widget_count: u32 = "widgetCount",
                default JsDefault::Number(3.0),
                bounds Bounds::at_least(1.0).at_most(9);
        }
        host {}
        extra {}
    }
}

/// Answers numbers from a map, and remembers every name it was asked for.
#[derive(Default)]
struct FakeReader {
    numbers: HashMap<&'static str, f64>,
    asked: Vec<String>,
}

impl ReadOptions for FakeReader {
    fn number(&mut self, name: &str) -> Result<Option<f64>, Diagnostic> {
        self.asked.push(name.into());
        Ok(self.numbers.get(name).copied())
    }

    fn boolean(&mut self, name: &str) -> Result<Option<bool>, Diagnostic> {
        self.asked.push(name.into());
        Ok(None)
    }

    fn string(&mut self, name: &str) -> Result<Option<String>, Diagnostic> {
        self.asked.push(name.into());
        Ok(None)
    }

    fn strings(&mut self, name: &str) -> Result<Option<Vec<String>>, Diagnostic> {
        self.asked.push(name.into());
        Ok(None)
    }
}

fn checked(value: f64) -> Result<u32, Vec<String>> {
    let raw = widgets::RawOptions {
        widget_count: Some(value),
    };
    let mut diagnostics = Vec::new();
    let options = widgets::Options::check_each(&raw, &mut diagnostics);
    if diagnostics.is_empty() {
        Ok(options.widget_count)
    } else {
        Err(diagnostics.into_iter().map(|d| d.message).collect())
    }
}

#[test]
fn a_new_option_is_read_once_by_its_js_name_from_its_declaration_alone() {
    let mut reader = FakeReader::default();
    reader.numbers.insert("widgetCount", 5.0);
    let raw = widgets::RawOptions::read(&mut reader).expect("readable");
    assert_eq!(raw.widget_count, Some(5.0));
    assert_eq!(reader.asked, ["widgetCount"]);
}

#[test]
fn a_new_option_is_checked_against_its_declared_bounds_with_the_shared_messages() {
    assert_eq!(checked(5.0), Ok(5));
    assert_eq!(checked(9.0), Ok(9));
    assert_eq!(
        checked(0.0),
        Err(vec![
            "widgetCount must be an integer >= 1, got 0".to_string()
        ])
    );
    assert_eq!(
        checked(1.5),
        Err(vec![
            "widgetCount must be an integer >= 1, got 1.5".to_string()
        ])
    );
    assert_eq!(
        checked(10.0),
        Err(vec!["widgetCount must be at most 9, got 10".to_string()])
    );
}

#[test]
fn a_new_option_takes_its_declared_default() {
    assert_eq!(widgets::Options::default().widget_count, 3);
    let mut diagnostics = Vec::new();
    let options = widgets::Options::check_each(&widgets::RawOptions::default(), &mut diagnostics);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(options.widget_count, 3);
}

#[test]
fn a_new_option_appears_in_the_typings_and_the_docs_table() {
    let typescript = typescript_interface("WidgetOptions", widgets::TABLE);
    assert_eq!(
        typescript,
        "export interface WidgetOptions {\n  /**\n   * How many widgets the test wants.\n   *\n   \
         * Default: `3`. Accepts: integer 1–9.\n   */\n  widgetCount?: number\n}\n"
    );
    let markdown = markdown_table(widgets::TABLE);
    assert!(
        markdown.contains(
            "| `widgetCount` | `number` | `3` | integer 1–9 | How many widgets the test wants. |"
        ),
        "{markdown}"
    );
}

#[test]
fn byte_counts_in_the_docs_name_whole_units() {
    assert_eq!(number_text(262_144.0, true), "262144 (256 KiB)");
    assert_eq!(number_text(268_435_456.0, true), "268435456 (256 MiB)");
    assert_eq!(number_text(1536.0, true), "1536");
    assert_eq!(number_text(8192.0, false), "8192");
    assert_eq!(number_text(0.0, true), "0");
}

#[test]
fn choices_are_listed_as_the_messages_and_typings_say_them() {
    assert_eq!(
        alternatives(&["reject", "queue"]),
        "\"reject\" or \"queue\""
    );
    assert_eq!(alternatives(&["a", "b", "c"]), "\"a\", \"b\" or \"c\"");
    assert_eq!(union(&["reject", "queue"]), "\"reject\" | \"queue\"");
}
