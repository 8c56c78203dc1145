//! The module loader of the sandbox (spec §5.3): `import(name)` resolves only names in
//! `authorizedImports` that the host registered (`ExecutorOptions.modules`), checked again here
//! at run time whatever validation saw (a computed `import(name)` under `"*"` included).
//!
//! A source module is evaluated inside the sandbox with loop guards (`program::prepare_module_safely`).
//! An object module is a small generated module over `__smol_module(name)`, a hidden native
//! that builds the exports: copies of the data, and functions that call the host like tools.

use std::collections::HashMap;
use std::rc::Rc;

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Function, Module, Object, Result};

use super::globals::{define_hardened, named_error};
use crate::engine::run::bridge::Bridge;
use crate::engine::run::state::RunState;
use crate::engine::values::convert::from_value;
use crate::modules::{bridged_name, is_authorized, not_allowed_message, ModuleExport, ModuleSpec};
use crate::program::prepare_module_safely;
use crate::scheduler::slice;
use crate::scheduler::stack::PROGRAM_STACK_BYTES;

/// The name of the error a refused import throws; the engine reports it as
/// `ERR_IMPORT_NOT_ALLOWED` when user code does not catch it.
pub const IMPORT_NOT_ALLOWED: &str = "ImportNotAllowedError";

/// The hidden native that builds an object module's exports.
const MODULE_HOOK: &str = "__smol_module";

/// What the sandbox may import.
pub(crate) struct Registry {
    authorized: Vec<String>,
    modules: HashMap<String, ModuleSpec>,
}

impl Registry {
    pub(crate) fn new(authorized: Vec<String>, modules: Vec<(String, ModuleSpec)>) -> Rc<Self> {
        Rc::new(Self {
            authorized,
            modules: modules.into_iter().collect(),
        })
    }

    /// The module `name`, if importing it is allowed; otherwise throws the refusal into `ctx`.
    fn allowed<'a>(&'a self, ctx: &Ctx<'_>, name: &str) -> Result<&'a ModuleSpec> {
        if !is_authorized(&self.authorized, name) {
            return Err(throw(
                ctx,
                IMPORT_NOT_ALLOWED,
                &not_allowed_message(&self.authorized, name),
            ));
        }
        self.modules
            .get(name)
            .ok_or_else(|| throw(ctx, "Error", &format!("Cannot find module '{name}'")))
    }
}

/// Resolves names for QuickJS: a name is its own identity, if allowed.
pub(crate) struct SandboxResolver(pub(crate) Rc<Registry>);

impl Resolver for SandboxResolver {
    fn resolve<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        _base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<String> {
        self.0.allowed(ctx, name).map(|_| name.to_owned())
    }
}

/// Declares the module a resolved name stands for.
pub(crate) struct SandboxLoader(pub(crate) Rc<Registry>);

impl Loader for SandboxLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> Result<Module<'js, Declared>> {
        let source = match self.0.allowed(ctx, name)? {
            ModuleSpec::Source(code) => {
                // On the pool thread's own stack: a run's coroutine stack is sized for QuickJS.
                slice::on_thread_stack(|| prepare_module_safely(code, PROGRAM_STACK_BYTES))
                    .map_err(|diagnostics| {
                        let listing: Vec<String> =
                            diagnostics.iter().map(|d| d.summary()).collect();
                        throw(
                            ctx,
                            "SyntaxError",
                            &format!("module '{name}' cannot be loaded: {}", listing.join("; ")),
                        )
                    })?
            }
            ModuleSpec::Object(exports) => object_module_source(name, exports),
        };
        Module::declare(ctx.clone(), name, source)
    }
}

/// `const m = __smol_module("name"); export default m; export const a = m.a; …` for every
/// export whose name can be a binding.
fn object_module_source(name: &str, exports: &[(String, ModuleExport)]) -> String {
    let quoted = serde_json::Value::String(name.to_owned()).to_string();
    let mut source = format!("const exports = {MODULE_HOOK}({quoted});\nexport default exports;\n");
    for (export, _) in exports {
        if is_binding_name(export) {
            source.push_str(&format!("export const {export} = exports.{export};\n"));
        }
    }
    source
}

/// Whether `name` can be declared with `export const` (an ASCII identifier that is no keyword).
fn is_binding_name(name: &str) -> bool {
    const KEYWORDS: [&str; 46] = [
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "let",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ];
    let mut chars = name.chars();
    let starts = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$');
    starts
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && name != "exports"
        && !KEYWORDS.contains(&name)
}

/// Installs `__smol_module`, which builds an object module's exports when its generated source
/// runs. It checks the policy again: sandbox code can call it by a computed name.
pub(crate) fn install_hook<'js>(
    ctx: &Ctx<'js>,
    registry: &Rc<Registry>,
    bridge: &Rc<Bridge>,
    state: &Rc<RunState>,
) -> Result<()> {
    let (registry, bridge, state) = (Rc::clone(registry), Rc::clone(bridge), Rc::clone(state));
    let hook = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: String| -> Result<Object<'js>> {
            let ModuleSpec::Object(exports) = registry.allowed(&ctx, &name)? else {
                return Err(throw(
                    &ctx,
                    "Error",
                    &format!("'{name}' is not an object module"),
                ));
            };
            let object = Object::new(ctx.clone())?;
            for (export, value) in exports {
                match value {
                    ModuleExport::Data(value) => {
                        object.set(export.as_str(), from_value(&ctx, value)?)?
                    }
                    ModuleExport::Function => {
                        let tool = bridged_name(&name, export);
                        let function = Bridge::tool_function(&ctx, &bridge, &state, tool, export)?;
                        object.set(export.as_str(), function)?;
                    }
                }
            }
            Ok(object)
        },
    )?
    .with_name(MODULE_HOOK)?;
    define_hardened(ctx, MODULE_HOOK, hook.into_value(), false)
}

/// Throws an error named `name` into `ctx`.
fn throw(ctx: &Ctx<'_>, name: &str, message: &str) -> rquickjs::Error {
    match named_error(ctx, name, message) {
        Ok(error) => ctx.throw(error.into_value()),
        Err(error) => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_modules_export_their_identifier_names_and_a_default() {
        let exports = vec![
            ("read".to_owned(), ModuleExport::Function),
            ("not-an-identifier".to_owned(), ModuleExport::Function),
            ("default".to_owned(), ModuleExport::Function),
        ];
        assert_eq!(
            object_module_source("x\"ok", &exports),
            "const exports = __smol_module(\"x\\\"ok\");\nexport default exports;\nexport const read = exports.read;\n"
        );
    }
}
