//! `validateCode` and `prepareProgram` (§6.1): the program layer without an executor (no QuickJS
//! involved).

use napi::bindgen_prelude::{Unknown, ValueType};
use napi::{Env, JsValue, Result};

use super::options::{read, read_tool_names};
use serde_json::Value as Json;

use crate::diagnostic::{Diagnostic, DiagnosticSeverity};
use crate::options::Options;
use crate::program::rules::code_non_empty;
use crate::program::{prepare_safely, ProgramContext};

/// A 1-based position in the original code.
#[napi(object, object_from_js = false)]
#[allow(
    dead_code,
    reason = "declares the TypeScript interface; diagnostics are `Diagnostic::to_json`"
)]
pub struct DiagnosticLocation {
    pub line: u32,
    pub column: u32,
}

/// One finding of a validation rule (§3.1).
#[napi(object, object_from_js = false, js_name = "Diagnostic")]
#[allow(
    dead_code,
    reason = "declares the TypeScript interface; diagnostics are `Diagnostic::to_json`"
)]
pub struct JsDiagnostic {
    /// The rule id (Appendix B), e.g. `syntax_valid`.
    pub rule: String,
    #[napi(ts_type = "\"ERROR\" | \"WARNING\" | \"INFO\"")]
    pub severity: String,
    pub message: String,
    pub location: Option<DiagnosticLocation>,
    /// A hint the model can act on.
    pub fix: Option<String>,
    /// The offending line with a caret under the column (syntax errors).
    pub code_frame: Option<String>,
}

/// The result of `prepareProgram` (§3.1).
#[napi(object, object_from_js = false)]
pub struct PreparedProgram {
    pub original_code: String,
    /// The script the executor would evaluate; empty when an `ERROR` diagnostic blocks it.
    pub transformed_code: String,
    #[napi(ts_type = "Array<Diagnostic>")]
    pub diagnostics: Vec<Json>,
}

/// The message of the `code_non_empty` diagnostic for code that is not a string at all.
pub(super) const CODE_NOT_A_STRING: &str = "code must be a string";

/// The code argument of `run()`, `validateCode()` and `prepareProgram()`: `None` when it is not
/// a string, which each of them reports as a `code_non_empty` diagnostic rather than napi's own
/// conversion error (every failure is an `ExecutorError` or a diagnostic).
pub(super) fn read_code(code: Unknown) -> Result<Option<String>> {
    match code.get_type()? {
        ValueType::String => Ok(Some(code.coerce_to_string()?.into_utf8()?.into_owned()?)),
        _ => Ok(None),
    }
}

/// Checks `options` and `code` by every rule; `ERROR` entries would block `run()` (§6.1).
#[napi(
    ts_args_type = "code: string, options?: ValidationOptions",
    ts_return_type = "Array<Diagnostic>"
)]
pub fn validate_code(env: Env, code: Unknown, options: Option<Unknown>) -> Result<Vec<Json>> {
    Ok(prepare_program(env, code, options)?.diagnostics)
}

/// Validates and rewrites `code` as `run()` would, without running it (§6.1).
#[napi(ts_args_type = "code: string, options?: ValidationOptions")]
pub fn prepare_program(
    env: Env,
    code: Unknown,
    options: Option<Unknown>,
) -> Result<PreparedProgram> {
    let mut context = ProgramContext::default();
    let mut diagnostics = match read(&env, options) {
        Ok(raw) => {
            context.authorized_imports = raw.authorized_imports.clone().unwrap_or_default();
            context.timers = raw.timers.unwrap_or(false);
            match Options::resolve(&raw) {
                Ok((_, notices)) => notices,
                Err(problems) => problems,
            }
        }
        Err(problem) => vec![problem],
    };
    match read_tool_names(&env, options) {
        Ok(names) => context.tool_names = names,
        Err(problem) => diagnostics.push(problem),
    }
    let Some(code) = read_code(code)? else {
        diagnostics.push(Diagnostic::error(code_non_empty::RULE, CODE_NOT_A_STRING));
        return Ok(PreparedProgram {
            original_code: String::new(),
            transformed_code: String::new(),
            diagnostics: diagnostics.iter().map(Diagnostic::to_json).collect(),
        });
    };
    // Node's thread gets no assumption about its stack: any code is prepared on a deep one.
    let prepared = prepare_safely(&code, &context, 0);
    diagnostics.extend(prepared.diagnostics.iter().cloned());
    let blocked = diagnostics
        .iter()
        .any(|diagnostic| diagnostic.severity == DiagnosticSeverity::Error);
    Ok(PreparedProgram {
        original_code: prepared.original_code,
        transformed_code: if blocked {
            String::new()
        } else {
            prepared.transformed_code
        },
        diagnostics: diagnostics.iter().map(Diagnostic::to_json).collect(),
    })
}
