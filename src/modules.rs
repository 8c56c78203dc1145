//! Host-registered modules (`ExecutorOptions.modules`, spec §5.3): what `await import(name)`
//! can load, for names in `authorizedImports`.

use crate::value::Value;

/// A module the host registered.
#[derive(Debug, Clone, PartialEq)]
pub enum ModuleSpec {
    /// ES module source text, evaluated inside the sandbox under the same loop guards as agent
    /// code.
    Source(String),
    /// An object: each function becomes an export that calls the host like a tool, each other
    /// value an export holding a copy.
    Object(Vec<(String, ModuleExport)>),
}

/// One property of an object module.
#[derive(Debug, Clone, PartialEq)]
pub enum ModuleExport {
    /// A copy of a data value.
    Data(Value),
    /// A host function, reached through the tool bridge as [`bridged_name`].
    Function,
}

/// The name under which the host serves function `export` of module `module`: not an
/// identifier, so it never collides with a tool the sandbox can name.
pub fn bridged_name(module: &str, export: &str) -> String {
    format!("{module}#{export}")
}

/// Whether `name` may be imported under `authorized` (§5.3: exact match, or `"*"` for any
/// registered module).
pub fn is_authorized(authorized: &[String], name: &str) -> bool {
    authorized
        .iter()
        .any(|allowed| allowed == "*" || allowed == name)
}

/// `Import not allowed: 'fs'. Allowed: x-ok, y` — the message the model acts on.
pub fn not_allowed_message(authorized: &[String], name: &str) -> String {
    let allowed = if authorized.is_empty() {
        "none".to_owned()
    } else {
        authorized.join(", ")
    };
    format!("Import not allowed: '{name}'. Allowed: {allowed}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_is_an_exact_match_or_the_wildcard() {
        let authorized = vec!["x-ok".to_owned()];
        assert!(is_authorized(&authorized, "x-ok"));
        assert!(!is_authorized(&authorized, "x-ok2"));
        assert!(!is_authorized(&[], "x-ok"));
        assert!(is_authorized(&["*".to_owned()], "anything"));
    }

    #[test]
    fn the_refusal_lists_what_is_allowed() {
        assert_eq!(
            not_allowed_message(&["x-ok".into(), "y".into()], "fs"),
            "Import not allowed: 'fs'. Allowed: x-ok, y"
        );
        assert_eq!(
            not_allowed_message(&[], "fs"),
            "Import not allowed: 'fs'. Allowed: none"
        );
    }
}
