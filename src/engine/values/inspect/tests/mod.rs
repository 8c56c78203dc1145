//! The `util.inspect` port against Node's own output: shared helpers, the class ids of the
//! bundled QuickJS, and the rules formatting never breaks (no user code run, no exception left).
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs".

use super::*;
use crate::engine::quickjs::reflect::{ATOM_TAG_INT, CLASS_C_FUNCTION};
use rquickjs::{Context, Object, Runtime};

/// Evaluates `src` in a fresh runtime and hands the value to `f`; also checks that
/// formatting left no exception pending in the context.
fn with_value<R>(src: &str, f: impl for<'js> FnOnce(&Ctx<'js>, Value<'js>) -> R) -> R {
    let rt = Runtime::new().expect("runtime");
    let context = Context::full(&rt).expect("context");
    context.with(|ctx| {
        let value: Value = ctx
            .eval(format!("({src})"))
            .unwrap_or_else(|e| panic!("eval of {src} failed: {e:?} {:?}", ctx.catch()));
        let out = f(&ctx, value);
        assert!(!ctx.has_exception(), "formatting left an exception pending");
        out
    })
}

fn inspect_js(src: &str) -> String {
    with_value(src, |ctx, v| inspect(ctx, &v))
}

/// `src` evaluates to the array of console arguments.
fn format_js(src: &str) -> String {
    with_value(src, |ctx, v| {
        let args: Vec<Value> = v
            .as_array()
            .expect("array of arguments")
            .iter()
            .collect::<rquickjs::Result<_>>()
            .expect("arguments");
        format_log_args(ctx, &args)
    })
}

/// The frame lines QuickJS stored for an error (test code may call the getter).
fn quickjs_frames<'js>(v: &Value<'js>) -> String {
    let stack: String = v
        .as_object()
        .expect("error object")
        .get("stack")
        .expect("stack");
    assert!(
        stack.starts_with("    at "),
        "unexpected QuickJS stack {stack:?}"
    );
    stack.trim_end().to_string()
}

mod objects;
mod primitives;

#[test]
fn class_ids_match_bundled_quickjs() {
    let cases: &[(&str, u32)] = &[
        ("({})", CLASS_OBJECT),
        ("[]", CLASS_ARRAY),
        ("new Error()", CLASS_ERROR),
        ("new Number(1)", CLASS_NUMBER),
        ("new String('')", CLASS_STRING),
        ("new Boolean(true)", CLASS_BOOLEAN),
        ("Object(Symbol())", CLASS_SYMBOL),
        // Mapped arguments (id 9) sit between these two; rquickjs evaluates strict code.
        ("(function () { return arguments; })()", CLASS_ARGUMENTS),
        ("new Date()", CLASS_DATE),
        ("Math.max", CLASS_C_FUNCTION),
        ("function () {}", CLASS_BYTECODE_FUNCTION),
        ("function* () {}", CLASS_GENERATOR_FUNCTION),
        ("/a/", CLASS_REGEXP),
        ("new ArrayBuffer(1)", CLASS_ARRAY_BUFFER),
        ("new SharedArrayBuffer(1)", CLASS_SHARED_ARRAY_BUFFER),
        ("new Uint8ClampedArray(1)", CLASS_UINT8C_ARRAY),
        ("new Int8Array(1)", CLASS_INT8_ARRAY),
        ("new Uint8Array(1)", CLASS_UINT8_ARRAY),
        ("new Int16Array(1)", CLASS_INT16_ARRAY),
        ("new Uint16Array(1)", CLASS_UINT16_ARRAY),
        ("new Int32Array(1)", CLASS_INT32_ARRAY),
        ("new Uint32Array(1)", CLASS_UINT32_ARRAY),
        ("new BigInt64Array(1)", CLASS_BIG_INT64_ARRAY),
        ("new BigUint64Array(1)", CLASS_BIG_UINT64_ARRAY),
        ("new Float16Array(1)", CLASS_FLOAT16_ARRAY),
        ("new Float32Array(1)", CLASS_FLOAT32_ARRAY),
        ("new Float64Array(1)", CLASS_FLOAT64_ARRAY),
        ("new DataView(new ArrayBuffer(1))", CLASS_DATAVIEW),
        ("Object(1n)", CLASS_BIG_INT),
        ("new Map()", CLASS_MAP),
        ("new Set()", CLASS_SET),
        ("new WeakMap()", CLASS_WEAKMAP),
        ("new WeakSet()", CLASS_WEAKSET),
        ("new Map().keys()", CLASS_MAP_ITERATOR),
        ("new Set().keys()", CLASS_SET_ITERATOR),
        ("Promise.resolve()", CLASS_PROMISE),
        ("async function () {}", CLASS_ASYNC_FUNCTION),
        ("async function* () {}", CLASS_ASYNC_GENERATOR_FUNCTION),
    ];
    for (src, expected) in cases {
        with_value(src, |_, v| assert_eq!(class_id(&v), *expected, "{src}"));
    }
    with_value("0", |ctx, _| {
        let atom = OwnedAtom::from_index(ctx, 7).expect("atom");
        assert_eq!(atom.raw, ATOM_TAG_INT | 7);
    });
}

#[test]
fn error_prints_name_message_then_quickjs_frames() {
    with_value(
        "(function boom() { return new Error('boom'); })()",
        |ctx, v| {
            assert_eq!(
                inspect(ctx, &v),
                format!("Error: boom\n{}", quickjs_frames(&v))
            );
        },
    );
}

#[test]
fn error_subclass_with_frames_names_constructor() {
    with_value(
        "(() => { class MyErr extends Error {} return new MyErr('m'); })()",
        |ctx, v| {
            assert_eq!(
                inspect(ctx, &v),
                format!("MyErr [Error]: m\n{}", quickjs_frames(&v))
            );
        },
    );
}

#[test]
fn error_with_frames_and_own_props_appends_braces() {
    with_value("Object.assign(new Error('x'), { code: 'E' })", |ctx, v| {
        let expected = format!("Error: x\n{} {{\n  code: 'E'\n}}", quickjs_frames(&v));
        assert_eq!(inspect(ctx, &v), expected);
    });
}

#[test]
fn error_with_frames_nested_in_object_is_indented() {
    with_value("{ e: new TypeError('t') }", |ctx, v| {
        let e: Value = v.as_object().expect("object").get("e").expect("e");
        let frames = quickjs_frames(&e).replace('\n', "\n  ");
        assert_eq!(
            inspect(ctx, &v),
            format!("{{\n  e: TypeError: t\n  {frames}\n}}")
        );
    });
}

#[test]
fn error_thrown_by_engine_is_formatted() {
    with_value(
        "(() => { try { null.x; } catch (e) { return e; } })()",
        |ctx, v| {
            let out = inspect(ctx, &v);
            assert!(out.starts_with("TypeError: "), "{out}");
            assert!(out.ends_with(&quickjs_frames(&v)), "{out}");
        },
    );
}

#[test]
fn string_longer_than_10000_chars_is_truncated() {
    assert_eq!(
        inspect_js("'x'.repeat(10005)"),
        format!("'{}'... 5 more characters", "x".repeat(10000))
    );
}

#[test]
fn inspect_custom_hook_is_not_called() {
    // Node would call the hook and print 'hooked'.
    assert_eq!(
        inspect_js("({ [Symbol.for('nodejs.util.inspect.custom')]() { return 'hooked'; } })"),
        "{\n  [Symbol(nodejs.util.inspect.custom)]: [Function: [nodejs.util.inspect.custom]]\n}"
    );
}

#[test]
fn to_string_tag_getter_is_not_called() {
    // Node calls the getter and prints `Foo [T] {}`.
    assert_eq!(
        inspect_js(
            "new (class Foo { get [Symbol.toStringTag]() { throw new Error('called'); } })()"
        ),
        "Foo {}"
    );
}

#[test]
fn constructor_getter_is_not_called() {
    assert_eq!(
        inspect_js(
            "Object.create(Object.defineProperty({}, 'constructor', { get() { throw new Error('called'); } }), { a: { value: 1, enumerable: true } })"
        ),
        "{ a: 1 }"
    );
}

#[test]
fn throwing_proxy_in_prototype_chain_does_not_escape() {
    // Node lets the trap's exception escape from console.log.
    let out = inspect_js(
        "Object.setPrototypeOf({ a: 1 }, new Proxy({}, { getPrototypeOf() { throw new Error('trap'); }, getOwnPropertyDescriptor() { throw new Error('trap'); } }))",
    );
    assert_eq!(out, "Object <{}> { a: 1 }");
}

#[test]
fn tampered_builtin_methods_are_not_called() {
    let src = "(() => {
        Date.prototype.getTime = () => { throw new Error('getTime'); };
        Map.prototype.entries = () => { throw new Error('entries'); };
        Object.defineProperty(Map.prototype, 'size', { get() { throw new Error('size'); } });
        Number.prototype.valueOf = () => { throw new Error('valueOf'); };
        RegExp.prototype[Symbol.toStringTag] = 'X';
        return [new Date(0), new Map([[1, 2]]), new Number(3)];
    })()";
    // The replacements never run; the values they guard become unreadable.
    assert_eq!(
        inspect_js(src),
        "[ Invalid Date, Map { <items unknown> }, [Number: undefined] ]"
    );
}

#[test]
fn format_percent_s_throwing_to_string_falls_back_to_inspect() {
    // Node would let the exception escape.
    assert_eq!(
        format_js("['%s', { toString() { throw new Error('t'); } }]"),
        "{ toString: [Function: toString] }"
    );
}

#[test]
fn format_percent_d_does_not_run_to_primitive() {
    // Node runs `Symbol.toPrimitive` here (and would throw).
    assert_eq!(
        format_js("['%d %i %f', { [Symbol.toPrimitive]() { throw 1; } }, [5], new Number(2)]"),
        "NaN NaN NaN"
    );
}

#[test]
fn format_percent_j_bigint_error_is_printed() {
    // Node throws "Do not know how to serialize a BigInt".
    let out = format_js("['%j', 1n]");
    assert!(
        out.starts_with("[TypeError: ") && out.ends_with(']'),
        "{out}"
    );
}

#[test]
fn format_percent_lower_o_function_shows_quickjs_own_props() {
    // V8 functions also carry `arguments` and `caller`.
    assert_eq!(
        format_js("['%o', function f() {}]"),
        "<ref *1> [Function: f] {\n  [length]: 0,\n  [name]: 'f',\n  [prototype]: { [constructor]: [Circular *1] }\n}"
    );
}

#[test]
fn map_iterator_entries_are_not_consumed() {
    // Node previews the remaining entries: `[Map Entries] { [ 1, 2 ] }`.
    with_value("new Map([[1, 2]]).entries()", |ctx, v| {
        assert_eq!(
            inspect(ctx, &v),
            "[Map Entries] { <items unknown> }".replace("Entries", "Iterator")
        );
        let it = v.as_object().expect("iterator");
        let next: rquickjs::Function = it.get("next").expect("next");
        let step: Object = next
            .call((rquickjs::function::This(v.clone()),))
            .expect("step");
        assert!(!step.get::<_, bool>("done").expect("done"));
    });
}

#[test]
fn every_builtin_formats_without_panic_or_pending_exception() {
    let src = "Object.getOwnPropertyNames(globalThis).flatMap((k) => {
        const v = globalThis[k];
        return [v, v && v.prototype, v && Object.getPrototypeOf(v)];
    })";
    with_value(src, |ctx, v| {
        let values: Vec<Value> = v
            .as_array()
            .expect("array")
            .iter()
            .collect::<rquickjs::Result<_>>()
            .expect("values");
        assert!(values.len() > 100);
        let s = Value::from_string(
            rquickjs::String::from_str(ctx.clone(), "%s %o %j").expect("format"),
        );
        for value in values {
            assert!(!inspect(ctx, &value).is_empty());
            let _ = format_log_args(ctx, &[s.clone(), value.clone(), value.clone(), value]);
            assert!(!ctx.has_exception());
        }
    });
}

#[test]
fn format_log_args_of_nothing_is_empty() {
    with_value("0", |ctx, _| assert_eq!(format_log_args(ctx, &[]), ""));
}
