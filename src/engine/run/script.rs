//! How a run's program is evaluated (docs/contract.md "Script semantics first"): as a global script
//! of the executor's one context, so that its top-level `let`, `const` and `class` are real global
//! lexical bindings, with what agent code needs beyond a plain script, each from a QuickJS flag:
//!
//! - top-level `await` (`JS_EVAL_FLAG_ASYNC`, which QuickJS's own REPL uses): the script runs
//!   as the body of an async function and its evaluation is a promise;
//! - top-level `return` (`JS_EVAL_FLAG_TOP_LEVEL_RETURN`, QuickJS patch 0201): it ends the
//!   script through its `finally` blocks, and the promise settles with the returned value,
//!   awaited as an async function awaits it;
//! - REPL redeclaration (`JS_EVAL_FLAG_REPL`, QuickJS patch 0202): a run may declare again a
//!   top-level `let`/`class` or `const` of an earlier run, by V8's REPL-mode rules (README
//!   "Semantics").

use rquickjs::{Ctx, FromJs, Promise};

use crate::engine::quickjs::reflect::{eval_script, ScriptFlags};
use crate::program::SCRIPT_NAME;

/// The flags every run is evaluated with.
const RUN: ScriptFlags = ScriptFlags {
    asynchronous: true,
    top_level_return: true,
    repl: true,
    compile_only: false,
};

/// Compiles and starts `code` (a prepared program, whose NUL characters are escaped) as the
/// context's next REPL input. Its promise settles when the script ends, and rejects before any
/// statement runs when a declaration clashes with an earlier run's; an `Err` means it did not
/// compile (the exception is in `ctx`).
pub(crate) fn evaluate<'js>(ctx: &Ctx<'js>, code: &str) -> rquickjs::Result<Promise<'js>> {
    eval_with_flags(ctx, code, RUN)
}

fn eval_with_flags<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    flags: ScriptFlags,
) -> rquickjs::Result<Promise<'js>> {
    let value = eval_script(ctx, code, SCRIPT_NAME, flags)?;
    Promise::from_js(ctx, value)
}

#[cfg(test)]
mod tests {
    //! One test per behaviour the QuickJS patches change, on a bare context (no executor).

    use rquickjs::promise::PromiseState;
    use rquickjs::{Context, Runtime, Value as JsValue};

    use super::*;

    /// Runs `inputs` as consecutive REPL inputs of one context; each one's outcome: the
    /// returned value (as JSON; `ok` for an input that returns nothing) or the error's
    /// `Name: message`.
    fn inputs(inputs: &[&str]) -> Vec<String> {
        inputs_with(RUN, inputs)
    }

    fn inputs_with(flags: ScriptFlags, inputs: &[&str]) -> Vec<String> {
        let runtime = Runtime::new().unwrap();
        let context = Context::full(&runtime).unwrap();
        context.with(|ctx| {
            inputs
                .iter()
                .map(|code| {
                    let thrown = |ctx: &Ctx<'_>| {
                        let error = ctx.catch();
                        let error = error.as_exception().unwrap();
                        format!(
                            "{}: {}",
                            error.get::<_, String>("name").unwrap(),
                            error.message().unwrap_or_default()
                        )
                    };
                    let promise = match eval_with_flags(&ctx, code, flags) {
                        Ok(promise) => promise,
                        Err(_) => return thrown(&ctx),
                    };
                    while ctx.execute_pending_job() {}
                    match promise.state() {
                        PromiseState::Resolved if !code.contains("return") => "ok".into(),
                        PromiseState::Resolved => {
                            let value: JsValue = promise.result().unwrap().unwrap();
                            ctx.json_stringify(value)
                                .unwrap()
                                .map_or("undefined".into(), |json| json.to_string().unwrap())
                        }
                        PromiseState::Rejected => {
                            let _ = promise.result::<JsValue>();
                            thrown(&ctx)
                        }
                        PromiseState::Pending => "pending".into(),
                    }
                })
                .collect()
        })
    }

    const REDECLARED: &str = "SyntaxError: redeclaration of 'x'";

    #[test]
    fn patch_0201_top_level_return_ends_the_script_through_finally() {
        assert_eq!(
            inputs(&[
                "globalThis.log = []; try { return 1; log.push('after') } finally { log.push('finally') }",
                "return log",
            ]),
            ["1", "[\"finally\"]"]
        );
    }

    #[test]
    fn patch_0201_a_returned_promise_is_awaited() {
        assert_eq!(
            inputs(&[
                "return Promise.resolve(5)",
                "return new Promise((_, reject) => reject(new TypeError('no')))",
                "return { then(resolve) { resolve('thenable') } }",
            ]),
            ["5", "TypeError: no", "\"thenable\""]
        );
    }

    #[test]
    fn patch_0201_return_stays_a_syntax_error_without_the_flag() {
        let flags = ScriptFlags {
            top_level_return: false,
            ..RUN
        };
        assert_eq!(
            inputs_with(flags, &["return 1", "function f() { return 2 } f()"]),
            // The second ends normally: the async script settles with its completion value.
            ["SyntaxError: return not in a function", "{\"value\":2}"]
        );
    }

    #[test]
    fn patch_0201_return_in_a_static_block_is_still_refused() {
        assert_eq!(
            inputs(&["class K { static { return 1 } }"]),
            ["SyntaxError: return in a static initializer block"]
        );
    }

    #[test]
    fn patch_0202_let_and_const_may_be_declared_again_in_a_later_input() {
        assert_eq!(
            inputs(&[
                "let x = 1; const y = 1; class K {}",
                "let x = 2; const y = 2; class K { static v = 3 }",
                "return [x, y, K.v]",
            ]),
            ["ok", "ok", "[2,2,3]"]
        );
    }

    #[test]
    fn patch_0202_let_and_class_are_one_kind_const_another() {
        assert_eq!(
            inputs(&[
                "let x = 1",
                "class x {}",
                "let x = 3",
                "const x = 4",
                "const c = 1",
                "let c = 2",
                "class c {}",
                "return [x, c]",
            ]),
            [
                "ok",
                "ok",
                "ok",
                REDECLARED,
                "ok",
                "SyntaxError: redeclaration of 'c'",
                "SyntaxError: redeclaration of 'c'",
                "[3,1]"
            ]
        );
    }

    #[test]
    fn patch_0202_a_redeclared_const_stays_constant() {
        assert_eq!(
            inputs(&["const x = 1", "const x = 2", "x = 3", "x++", "return x"]),
            [
                "ok",
                "ok",
                "TypeError: 'x' is read-only",
                "TypeError: 'x' is read-only",
                "2"
            ]
        );
    }

    #[test]
    fn patch_0202_one_input_may_still_not_declare_a_name_twice() {
        assert_eq!(
            inputs(&["let x = 1; let x = 2", "const x = 1; let x = 2"]),
            [
                "SyntaxError: invalid redefinition of lexical identifier",
                "SyntaxError: invalid redefinition of lexical identifier"
            ]
        );
    }

    #[test]
    fn patch_0202_var_and_function_still_clash_with_lexical_bindings() {
        assert_eq!(
            inputs(&[
                "let x = 1",
                "var x = 2",
                "function x() {}",
                "var v = 1; function f() {}",
                "let v = 2",
                "const f = 3",
                "return [x, v, typeof f]",
            ]),
            [
                "ok",
                REDECLARED,
                REDECLARED,
                "ok",
                "SyntaxError: redeclaration of 'v'",
                "SyntaxError: redeclaration of 'f'",
                "[1,1,\"function\"]"
            ]
        );
    }

    #[test]
    fn patch_0202_closures_of_earlier_inputs_see_the_redeclared_binding() {
        assert_eq!(
            inputs(&[
                "let x = 1; const c = 'a'; globalThis.read = () => [x, c]",
                "let x = 2; const c = 'b'",
                "return read()",
            ]),
            ["ok", "ok", "[2,\"b\"]"]
        );
    }

    #[test]
    fn patch_0202_the_binding_keeps_its_value_until_the_redeclaration_runs() {
        assert_eq!(
            inputs(&[
                "let x = 1",
                "globalThis.before = x; let x = 2; globalThis.after = x",
                "let x;",
                "return [before, after, x === undefined]",
            ]),
            ["ok", "ok", "ok", "[1,2,true]"]
        );
    }

    #[test]
    fn patch_0202_a_binding_left_in_its_tdz_by_a_failed_input_can_be_declared_again() {
        assert_eq!(
            inputs(&["x; let x = 1", "x", "x = 5", "let x = 2", "return x",]),
            [
                "ReferenceError: x is not initialized",
                "ReferenceError: x is not initialized",
                "ReferenceError: x is not initialized",
                "ok",
                "2"
            ]
        );
    }

    #[test]
    fn patch_0202_lexical_declarations_over_global_properties_follow_the_language() {
        assert_eq!(
            inputs(&[
                "Object.defineProperty(globalThis, 'fixed', { value: 1 }); globalThis.loose = 1",
                "let fixed = 2",
                "let loose = 2",
                "return [fixed, loose, globalThis.loose]",
            ]),
            [
                "ok",
                "SyntaxError: redeclaration of 'fixed'",
                "ok",
                "[1,2,1]"
            ]
        );
    }

    #[test]
    fn patch_0202_without_the_flag_a_later_script_may_not_redeclare() {
        let flags = ScriptFlags { repl: false, ..RUN };
        assert_eq!(
            inputs_with(flags, &["let x = 1", "let x = 2"]),
            ["ok", REDECLARED]
        );
    }
}
