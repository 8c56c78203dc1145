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

/// The entry of `authorizedImports` that allows every module the host registered.
pub const ANY_MODULE: &str = "*";

/// Whether `name` may be imported under `authorized` (§5.3: exact match, or `"*"` for any
/// registered module). Validation and the module loader both decide with this.
pub fn is_authorized(authorized: &[String], name: &str) -> bool {
    authorized
        .iter()
        .any(|allowed| allowed == ANY_MODULE || allowed == name)
}

/// Whether `authorized` allows any module, computed names included.
pub fn allows_any(authorized: &[String]) -> bool {
    authorized.iter().any(|allowed| allowed == ANY_MODULE)
}

/// `authorizedImports` as messages list it: `a, b`, or `none`.
pub fn allowed_list(authorized: &[String]) -> String {
    if authorized.is_empty() {
        "none".into()
    } else {
        authorized.join(", ")
    }
}

/// `Import not allowed: 'fs'. Allowed: x-ok, y` — the message the model acts on, from the
/// validator and the module loader alike.
pub fn not_allowed_message(authorized: &[String], name: &str) -> String {
    format!(
        "Import not allowed: '{name}'. Allowed: {}",
        allowed_list(authorized)
    )
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
