//! A run's input (`run(code, { input })`): a copy of the host's value, bound as the global
//! `input` for that run only.
//!
//! Each run is a REPL-mode global script (`run/script.rs`), so a binding "for one run" cannot be
//! a declaration of the script: a top-level `const` would persist into every later run. It is a
//! global property instead (writable, configurable, not enumerable), defined before the script
//! starts and deleted once the run has ended (its promise settled and its late jobs drained).
//! Code reads it like any global; a later run without an input finds no `input`, and a
//! function saved by one run reads whichever input the run calling it has.
//!
//! A name the sandbox already holds is never overwritten: if an earlier run declared `input`
//! with `let`, `const` or `class` (the lexical binding would hide the property), or the global
//! object has an `input` of its own (a variable sent with `sendVariables`, an earlier run's
//! `var`), the run is refused before any code runs, as `sendVariables` refuses a name a lexical
//! binding holds (patch 0203).

use rquickjs::object::Property;
use rquickjs::Ctx;

use crate::engine::quickjs::reflect::{has_global_lexical, OwnedAtom, Reflect};
use crate::engine::values::convert::from_value;
use crate::value::Value;

/// The name the input is bound to.
pub const NAME: &str = "input";

/// Binds a copy of `value` as the global `input`; the message says why it could not be.
pub(crate) fn bind(ctx: &Ctx<'_>, value: &Value) -> Result<(), String> {
    if has_global_lexical(ctx, NAME) {
        return Err(format!(
            "the run's input cannot be bound: the sandbox's code declared '{NAME}' with let, const or class in an earlier run, which would hide it; use another name for that binding"
        ));
    }
    let globals = ctx.globals();
    // An own-property lookup: `in` would walk the global object's prototype chain, which code
    // of an earlier run may have made a Proxy whose trap runs here, before the run's deadline.
    let held = OwnedAtom::from_str(ctx, NAME).map_or(Err(()), |atom| {
        Reflect::new(ctx).own_desc(&globals.clone().into_value(), &atom)
    });
    if !matches!(held, Ok(None)) {
        return Err(format!(
            "the run's input cannot be bound: the sandbox already has a global named '{NAME}' (a variable sent with sendVariables, or a var or function of an earlier run)"
        ));
    }
    let copy = from_value(ctx, value).map_err(|error| {
        ctx.catch();
        format!("the run's input cannot be copied into the sandbox: {error}")
    })?;
    globals
        .prop(NAME, Property::from(copy).writable().configurable())
        .map_err(|_| {
            ctx.catch();
            format!("the run's input cannot be bound as the global '{NAME}'")
        })
}

/// Removes the run's `input` once the run is over. Code that made the property
/// non-configurable keeps it as an ordinary global (and later runs with an input are refused
/// with the reason).
pub(crate) fn unbind(ctx: &Ctx<'_>) {
    if ctx.globals().remove(NAME).is_err() {
        ctx.catch();
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::testing::{engine_with, run_on, run_with_input, FakeHost};
    use crate::engine::{EngineError, RunReport};
    use crate::options::Options;
    use crate::value::Value;

    fn output(report: RunReport) -> Value {
        report.result.expect("the run succeeds").output
    }

    fn refusal(report: RunReport) -> String {
        match report.result {
            Err(EngineError::Endowment(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn text(s: &str) -> Value {
        Value::String(s.into())
    }

    #[test]
    fn the_input_is_a_copy_bound_for_its_run_only() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        let input = Value::Object(vec![(
            "rows".into(),
            Value::Array(vec![Some(Value::Number(1.0)), Some(Value::Number(2.0))]),
        )]);
        assert_eq!(
            output(run_with_input(
                &engine,
                "input.rows.push(3); globalThis.kept = () => typeof input; input.rows.length",
                &options,
                Some(input),
            )),
            Value::Number(3.0)
        );
        // Gone in the next run, and for functions the earlier run left behind.
        assert_eq!(
            output(run_on(&engine, "[typeof input, kept()]", &options)),
            Value::Array(vec![Some(text("undefined")), Some(text("undefined"))])
        );
        // A later input is a fresh copy; the sandbox's changes to the earlier one did not leak.
        assert_eq!(
            output(run_with_input(
                &engine,
                "[input, kept(), Object.keys(globalThis).includes('input')]",
                &options,
                Some(text("second")),
            )),
            Value::Array(vec![
                Some(text("second")),
                Some(text("string")),
                Some(Value::Bool(false))
            ])
        );
    }

    #[test]
    fn an_input_stays_bound_through_awaits_and_late_jobs_of_its_run() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        assert_eq!(
            output(run_with_input(
                &engine,
                "await null; Promise.resolve().then(() => { globalThis.late = input }); input * 2",
                &options,
                Some(Value::Number(21.0)),
            )),
            Value::Number(42.0)
        );
        assert_eq!(
            output(run_on(&engine, "late", &options)),
            Value::Number(21.0)
        );
    }

    #[test]
    fn an_undefined_input_is_still_a_binding() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        assert_eq!(
            output(run_with_input(
                &engine,
                "[typeof input, 'input' in globalThis]",
                &options,
                Some(Value::Undefined),
            )),
            Value::Array(vec![Some(text("undefined")), Some(Value::Bool(true))])
        );
    }

    #[test]
    fn an_input_that_an_existing_name_would_hide_or_lose_is_refused_before_code_runs() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        run_on(&engine, "let input = 'mine'", &options)
            .result
            .unwrap();
        let lexical = refusal(run_with_input(
            &engine,
            "globalThis.ran = true",
            &options,
            Some(Value::Null),
        ));
        assert!(lexical.contains("declared 'input' with let"), "{lexical}");
        assert_eq!(
            output(run_on(&engine, "[input, typeof ran]", &options)),
            Value::Array(vec![Some(text("mine")), Some(text("undefined"))])
        );

        let engine = engine_with(FakeHost::default(), &options);
        engine
            .set_variables(vec![("input".into(), Value::Number(1.0))])
            .blocking_recv()
            .unwrap()
            .unwrap();
        let variable = refusal(run_with_input(&engine, "1", &options, Some(Value::Null)));
        assert!(variable.contains("already has a global"), "{variable}");
        // The variable is untouched.
        assert_eq!(
            output(run_on(&engine, "input", &options)),
            Value::Number(1.0)
        );
    }

    #[test]
    fn a_proxy_on_the_global_prototype_chain_runs_no_code_when_an_input_is_bound() {
        // Binding happens before the run's deadline is set: a trap that ran there could hold the
        // engine thread forever.
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        run_on(
            &engine,
            "const traps = []
             const record = (_, key) => { if (key === 'input') traps.push(key) }
             Object.setPrototypeOf(globalThis, new Proxy({}, { has: record, get: record, getOwnPropertyDescriptor: record }))",
            &options,
        )
        .result
        .unwrap();
        assert_eq!(
            output(run_with_input(
                &engine,
                "[input + 1, traps.length]",
                &options,
                Some(Value::Number(1.0))
            )),
            Value::Array(vec![Some(Value::Number(2.0)), Some(Value::Number(0.0))])
        );
    }

    #[test]
    fn a_run_may_declare_var_input_which_is_the_input_and_ends_with_the_run() {
        let options = Options::default();
        let engine = engine_with(FakeHost::default(), &options);
        assert_eq!(
            output(run_with_input(
                &engine,
                "var input; input = input + 1; input",
                &options,
                Some(Value::Number(1.0)),
            )),
            Value::Number(2.0)
        );
        assert_eq!(
            output(run_on(&engine, "typeof input", &options)),
            text("undefined")
        );
    }
}
