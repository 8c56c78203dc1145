//! The copies between a sandbox and the value model: every type both ways, refusals and
//! their paths, tampered built-ins, limits.
//!
//! Spec: docs/contract.md "Values across the boundary"; §7.4 (tool arguments and results).

use rquickjs::{Context, Runtime};

use super::*;
use crate::options::Options;
use crate::value::MAX_DEPTH;

/// Runs `f` in a fresh runtime (with the engine's stack limit) and context, and checks that
/// it left no exception pending.
fn with_sandbox<R>(f: impl for<'js> FnOnce(&Ctx<'js>) -> R) -> R {
    let runtime = Runtime::new().expect("runtime");
    runtime.set_max_stack_size(Options::default().max_stack_bytes);
    let context = Context::full(&runtime).expect("context");
    context.with(|ctx| {
        Reflect::new(&ctx).capture_intrinsics().expect("intrinsics");
        let out = f(&ctx);
        assert!(!ctx.has_exception(), "an exception was left pending");
        out
    })
}

fn eval<'js>(ctx: &Ctx<'js>, src: &str) -> JsValue<'js> {
    ctx.eval(src)
        .unwrap_or_else(|e| panic!("eval of {src} failed: {e:?} {:?}", ctx.catch()))
}

/// Copies what `src` evaluates to out of a sandbox, under the root name `x`.
fn copy(src: &str, mode: Uncopyable) -> std::result::Result<Value, CloneError> {
    with_sandbox(|ctx| to_value(ctx, &eval(ctx, src), mode, "x", u64::MAX))
}

fn describe(src: &str) -> Value {
    copy(src, Uncopyable::Describe).expect("Describe mode never fails")
}

fn refuse(src: &str) -> CloneError {
    match copy(src, Uncopyable::Refuse) {
        Ok(value) => panic!("{src} was copied: {value:?}"),
        Err(error) => error,
    }
}

/// Rebuilds `value` as the global `x` of `ctx` and checks that `check` is true there.
fn check_in<'js>(ctx: &Ctx<'js>, value: &Value, check: &str) {
    let rebuilt = from_value(ctx, value)
        .unwrap_or_else(|e| panic!("rebuilding {value:?} failed: {e:?} {:?}", ctx.catch()));
    ctx.globals().set("x", rebuilt).expect("global x");
    let passed: bool = ctx
        .eval(check)
        .unwrap_or_else(|e| panic!("{check} threw: {e:?} {:?}", ctx.catch()));
    assert!(passed, "{check} is false for {value:?}");
}

/// Rebuilds `value` in a fresh sandbox and checks it there.
fn check(value: &Value, check: &str) {
    with_sandbox(|ctx| check_in(ctx, value, check));
}

/// Sandbox → Value → fresh sandbox, where `check` must hold of the copy `x`.
fn round_trip(src: &str, check_src: &str) -> Value {
    let value = describe(src);
    check(&value, check_src);
    value
}

/// Number `n` of a Value graph: the n-th object variant in pre-order.
fn number(value: f64) -> Value {
    Value::Number(value)
}

#[test]
fn undefined_and_null() {
    assert_eq!(round_trip("undefined", "x === undefined"), Value::Undefined);
    assert_eq!(round_trip("null", "x === null"), Value::Null);
    assert_eq!(
        round_trip(
            "[undefined, null]",
            "x.length === 2 && 0 in x && x[0] === undefined"
        ),
        Value::Array(vec![Some(Value::Undefined), Some(Value::Null)])
    );
}

#[test]
fn numbers_nan_and_negative_zero() {
    let copied = round_trip("NaN", "Number.isNaN(x)");
    assert!(matches!(copied, Value::Number(n) if n.is_nan()));
    let copied = round_trip("-0", "Object.is(x, -0)");
    assert!(matches!(copied, Value::Number(n) if n == 0.0 && n.is_sign_negative()));
    round_trip("0", "Object.is(x, 0)");
    round_trip(
        "[Infinity, -Infinity, 1.5, 2 ** 53 + 2]",
        "x[0] === Infinity && x[1] === -Infinity && x[2] === 1.5 && x[3] === 2 ** 53 + 2",
    );
    assert_eq!(round_trip("42", "x === 42"), number(42.0));
}

#[test]
fn booleans_and_strings() {
    assert_eq!(round_trip("true", "x === true"), Value::Bool(true));
    assert_eq!(
        round_trip("'héllo 😀\\n'", "x === 'héllo 😀\\n'"),
        Value::String("héllo 😀\n".into())
    );
    assert_eq!(round_trip("''", "x === ''"), Value::String(String::new()));
}

#[test]
fn bigints_of_any_size() {
    assert_eq!(round_trip("12n", "x === 12n"), Value::BigInt("12".into()));
    assert_eq!(
        round_trip("-12n", "x === -12n"),
        Value::BigInt("-12".into())
    );
    assert_eq!(round_trip("0n", "x === 0n"), Value::BigInt("0".into()));
    assert_eq!(
        round_trip("2n ** 64n + 1n", "x === 18446744073709551617n"),
        Value::BigInt("18446744073709551617".into())
    );
    round_trip("2n ** 64n - 1n", "x === 2n ** 64n - 1n");
    round_trip("-(2n ** 63n)", "x === -(2n ** 63n)");
    round_trip("-(3n ** 200n)", "x === -(3n ** 200n)");
    round_trip("[7n ** 100n]", "x[0] === 7n ** 100n");
}

#[test]
fn bigint_digits_are_checked() {
    with_sandbox(|ctx| {
        for bad in ["", "-", "1e5", "12a", "1; globalThis.hacked = 1", "٣"] {
            assert!(
                from_value(ctx, &Value::BigInt(bad.into())).is_err(),
                "{bad:?}"
            );
            let _ = ctx.catch();
        }
        let hacked: bool = ctx.eval("'hacked' in globalThis").unwrap();
        assert!(!hacked);
    });
    check(&Value::BigInt("-000123".into()), "x === -123n");
    check(
        &Value::BigInt(format!("000{}", "9".repeat(40))),
        &format!("x === {}n", "9".repeat(40)),
    );
}

#[test]
fn array_holes_stay_holes() {
    let copied = round_trip(
        "[1, , 3, , ]",
        "x.length === 4 && !(1 in x) && x[2] === 3 && !(3 in x) && Array.isArray(x)",
    );
    assert_eq!(
        copied,
        Value::Array(vec![Some(number(1.0)), None, Some(number(3.0)), None])
    );
    round_trip(
        "new Array(5)",
        "x.length === 5 && Object.keys(x).length === 0",
    );
    round_trip(
        "(() => { const a = []; a[3] = 'd'; return a; })()",
        "x.length === 4 && x[3] === 'd' && !(0 in x)",
    );
}

#[test]
fn array_extra_keys_are_dropped() {
    let copied = round_trip(
        "Object.assign([1], { extra: 2 })",
        "x.length === 1 && !('extra' in x)",
    );
    assert_eq!(copied, Value::Array(vec![Some(number(1.0))]));
}

#[test]
fn plain_objects_keep_key_order_and_drop_the_rest() {
    let copied = round_trip(
        "(() => {
            const o = { b: 1, a: 2, 2: 'two', 1: 'one', get g() { return 'got'; } };
            Object.defineProperty(o, 'hidden', { value: 1, enumerable: false });
            o[Symbol('s')] = 1;
            return o;
        })()",
        "Object.keys(x).join() === '1,2,b,a,g' && x.g === 'got' \
         && Object.getOwnPropertyDescriptor(x, 'g').value === 'got' \
         && Object.getOwnPropertySymbols(x).length === 0 && !('hidden' in x)",
    );
    assert_eq!(
        copied,
        Value::Object(vec![
            ("1".into(), Value::String("one".into())),
            ("2".into(), Value::String("two".into())),
            ("b".into(), number(1.0)),
            ("a".into(), number(2.0)),
            ("g".into(), Value::String("got".into())),
        ])
    );
}

#[test]
fn class_instances_become_plain_objects() {
    let copied = round_trip(
        "new (class Point { constructor() { this.x = 1; this.y = 2; } get sum() { return 3; } })()",
        "Object.getPrototypeOf(x) === Object.prototype && x.x === 1 && x.y === 2 && !('sum' in x)",
    );
    assert_eq!(
        copied,
        Value::Object(vec![("x".into(), number(1.0)), ("y".into(), number(2.0))])
    );
    round_trip(
        "Object.assign(Object.create(null), { a: 1 })",
        "Object.getPrototypeOf(x) === Object.prototype && x.a === 1",
    );
}

#[test]
fn proto_key_is_an_own_property() {
    round_trip(
        "JSON.parse('{\"__proto__\": {\"polluted\": 1}}')",
        "Object.getPrototypeOf(x) === Object.prototype && x.__proto__.polluted === 1 \
         && ({}).polluted === undefined && Object.keys(x).join() === '__proto__'",
    );
}

#[test]
fn dates_valid_and_invalid() {
    assert_eq!(
        round_trip(
            "new Date(1700000000123)",
            "x instanceof Date && x.getTime() === 1700000000123"
        ),
        Value::Date(1_700_000_000_123.0)
    );
    let copied = round_trip(
        "new Date(NaN)",
        "x instanceof Date && Number.isNaN(x.getTime())",
    );
    assert!(matches!(copied, Value::Date(t) if t.is_nan()));
    round_trip(
        "new (class D extends Date {})(5)",
        "Object.getPrototypeOf(x) === Date.prototype && x.getTime() === 5",
    );
}

#[test]
fn regexps_keep_source_and_flags() {
    let copied = round_trip(
        "/a\\/b[c]+/dgimsuy",
        "x instanceof RegExp && x.source === 'a\\\\/b[c]+' && x.flags === 'dgimsuy' \
         && x.lastIndex === 0 && x.test('a/bcc')",
    );
    assert_eq!(
        copied,
        Value::RegExp {
            source: "a\\/b[c]+".into(),
            flags: "dgimsuy".into()
        }
    );
    round_trip("new RegExp('')", "x.source === '(?:)' && x.flags === ''");
    round_trip(
        "/[\\p{L}--[a-z]]/v",
        "x.unicodeSets && x.test('É') && !x.test('a')",
    );
}

#[test]
fn maps_keep_entries_in_order() {
    let copied = round_trip(
        "new Map([[1, 'a'], ['k', { z: 1 }], [{ o: 1 }, [2]]])",
        "x instanceof Map && x.size === 3 && x.get(1) === 'a' && x.get('k').z === 1 \
         && [...x.keys()][2].o === 1 && [...x.values()][2][0] === 2 \
         && [...x.keys()].slice(0, 2).join() === '1,k'",
    );
    assert_eq!(
        copied,
        Value::Map(vec![
            (number(1.0), Value::String("a".into())),
            (
                Value::String("k".into()),
                Value::Object(vec![("z".into(), number(1.0))])
            ),
            (
                Value::Object(vec![("o".into(), number(1.0))]),
                Value::Array(vec![Some(number(2.0))])
            ),
        ])
    );
    round_trip("new Map()", "x instanceof Map && x.size === 0");
}

#[test]
fn sets_keep_items_in_order() {
    let copied = round_trip(
        "new Set([1, 'a', { b: 2 }, NaN])",
        "x instanceof Set && x.size === 4 && x.has(1) && x.has('a') && x.has(NaN) \
         && [...x][2].b === 2",
    );
    assert!(matches!(&copied, Value::Set(items) if items.len() == 4));
}

#[test]
fn typed_arrays_of_every_kind() {
    for kind in TypedArrayKind::ALL {
        let name = kind.constructor_name();
        let items = if name.starts_with("Big") {
            "[1n, 2n, 3n]"
        } else {
            "[1, 2, 3]"
        };
        let copied = round_trip(
            &format!("new {name}({items})"),
            &format!(
                "x instanceof {name} && x.length === 3 && x[1] == 2 && x.byteOffset === 0 \
                 && x.buffer.byteLength === 3 * {name}.BYTES_PER_ELEMENT"
            ),
        );
        let Value::TypedArray {
            kind: copied_kind,
            buffer,
            byte_offset: 0,
            length: 3,
        } = copied
        else {
            panic!("{name}: {copied:?}");
        };
        assert_eq!(copied_kind, kind);
        assert!(
            matches!(&*buffer, Value::ArrayBuffer(bytes) if bytes.len() == 3 * kind.element_size()),
            "{name}: {buffer:?}"
        );
    }
}

#[test]
fn typed_array_values_are_exact() {
    round_trip(
        "new Float64Array([NaN, -0, 1e308, 5e-324])",
        "Number.isNaN(x[0]) && Object.is(x[1], -0) && x[2] === 1e308 && x[3] === 5e-324",
    );
    round_trip(
        "new BigUint64Array([2n ** 64n - 1n])",
        "x[0] === 2n ** 64n - 1n",
    );
    round_trip(
        "new Uint8ClampedArray([300, -5])",
        "x instanceof Uint8ClampedArray && x[0] === 255 && x[1] === 0",
    );
}

#[test]
fn views_sharing_a_buffer_still_share_it() {
    let copied = round_trip(
        "(() => {
            const b = new ArrayBuffer(16);
            const u8 = new Uint8Array(b, 4, 8);
            const u32 = new Uint32Array(b, 8, 2);
            u8[4] = 7;
            return { u8, u32, b };
        })()",
        "x.u8.buffer === x.u32.buffer && x.b === x.u8.buffer && x.b.byteLength === 16 \
         && x.u8.byteOffset === 4 && x.u8.length === 8 \
         && x.u32.byteOffset === 8 && x.u32.length === 2 && x.u32[0] === 7 \
         && (x.u32[0] = 0x0909, x.u8[4] === 9 && x.u8[5] === 9)",
    );
    let mut bytes = vec![0; 16];
    bytes[8] = 7;
    assert_eq!(
        copied,
        Value::Object(vec![
            (
                "u8".into(),
                Value::TypedArray {
                    kind: TypedArrayKind::Uint8,
                    buffer: Box::new(Value::ArrayBuffer(bytes)),
                    byte_offset: 4,
                    length: 8,
                }
            ),
            (
                "u32".into(),
                Value::TypedArray {
                    kind: TypedArrayKind::Uint32,
                    buffer: Box::new(Value::Ref(2)),
                    byte_offset: 8,
                    length: 2,
                }
            ),
            ("b".into(), Value::Ref(2)),
        ])
    );
}

#[test]
fn buffer_met_first_is_shared_with_a_later_view() {
    let copied = round_trip(
        "(() => { const b = new Uint16Array([1, 2]).buffer; return [b, new Uint16Array(b, 2)]; })()",
        "x[1].buffer === x[0] && x[1].length === 1 && x[1][0] === 2",
    );
    let Value::Array(items) = copied else {
        panic!("{copied:?}")
    };
    assert!(
        matches!(&items[1], Some(Value::TypedArray { buffer, .. }) if **buffer == Value::Ref(1))
    );
}

#[test]
fn array_buffers() {
    assert_eq!(
        round_trip(
            "new Uint8Array([1, 2, 3]).buffer",
            "x instanceof ArrayBuffer && x.byteLength === 3 && new Uint8Array(x)[2] === 3",
        ),
        Value::ArrayBuffer(vec![1, 2, 3])
    );
    round_trip(
        "new ArrayBuffer(0)",
        "x instanceof ArrayBuffer && x.byteLength === 0",
    );
}

#[test]
fn errors_of_every_built_in_class() {
    for name in [
        "Error",
        "TypeError",
        "RangeError",
        "ReferenceError",
        "SyntaxError",
        "EvalError",
        "URIError",
        "InternalError",
    ] {
        let copied = round_trip(
            &format!("new {name}('boom')"),
            &format!(
                "x instanceof {name} && Object.getPrototypeOf(x) === {name}.prototype \
                 && x.name === '{name}' && x.message === 'boom' && typeof x.stack === 'string' \
                 && !Object.keys(x).length && !Object.hasOwn(x, 'name')"
            ),
        );
        assert!(
            matches!(&copied, Value::Error { name: n, message, stack: Some(_) } if n == name && message == "boom"),
            "{copied:?}"
        );
    }
}

#[test]
fn error_subclasses_keep_their_name() {
    let copied = round_trip(
        "(() => {
            class ValidationError extends Error {
                constructor(m) { super(m); this.name = 'ValidationError'; }
            }
            return new ValidationError('bad');
        })()",
        "x instanceof Error && x.name === 'ValidationError' && x.message === 'bad' \
         && Object.getPrototypeOf(x) === Error.prototype",
    );
    assert!(matches!(copied, Value::Error { ref name, .. } if name == "ValidationError"));
    // A subclass that does not rename itself reads as its base class, as structured clone.
    round_trip(
        "new (class Custom extends TypeError {})('t')",
        "x instanceof TypeError && x.name === 'TypeError' && x.message === 't'",
    );
    round_trip(
        "new AggregateError([], 'agg')",
        "x instanceof Error && x.name === 'AggregateError' && x.message === 'agg'",
    );
}

#[test]
fn error_message_and_stack_are_exact() {
    let copied = round_trip(
        "(() => { function thrower() { return new Error('x'); } return thrower(); })()",
        "x.stack.includes('thrower')",
    );
    let Value::Error {
        stack: Some(stack), ..
    } = &copied
    else {
        panic!("{copied:?}")
    };
    check(
        &copied,
        &format!("x.stack === {}", serde_json::to_string(stack).unwrap()),
    );
    round_trip(
        "new Error()",
        "x.message === '' && !Object.hasOwn(x, 'message')",
    );
    check(
        &Value::Error {
            name: "Error".into(),
            message: "nul \0 inside".into(),
            stack: None,
        },
        // No stack of its own: no frames either, not those of wherever the copy was made.
        "x.message === 'nul \\0 inside' && x.stack === ''",
    );
}

#[test]
fn cycles_survive() {
    let copied = round_trip(
        "(() => { const o = { a: [] }; o.self = o; o.a.push(o, o.a); return o; })()",
        "x.self === x && x.a[0] === x && x.a[1] === x.a",
    );
    assert_eq!(
        copied,
        Value::Object(vec![
            (
                "a".into(),
                Value::Array(vec![Some(Value::Ref(0)), Some(Value::Ref(1))])
            ),
            ("self".into(), Value::Ref(0)),
        ])
    );
    round_trip(
        "(() => { const m = new Map(); m.set(m, m); return m; })()",
        "x.get(x) === x",
    );
    round_trip(
        "(() => { const s = new Set(); s.add(s); return s; })()",
        "x.has(x)",
    );
}

#[test]
fn shared_references_stay_shared() {
    round_trip(
        "(() => {
            const s = { n: 1 }, d = new Date(0), e = new Error('e'), r = /r/, a = [1];
            return { s1: s, s2: s, m: new Map([[s, s]]), set: new Set([s]), d1: d, d2: d,
                     e1: e, e2: e, r1: r, r2: r, a1: a, a2: a };
        })()",
        "x.s1 === x.s2 && x.m.get(x.s1) === x.s1 && x.set.has(x.s1) && x.d1 === x.d2 \
         && x.e1 === x.e2 && x.r1 === x.r2 && x.a1 === x.a2 && x.s1.n === 1",
    );
}

#[test]
fn wrapped_primitives_travel_as_primitives() {
    assert_eq!(
        describe("[new Number(3), new String('s'), Object(2n), new Boolean(false)]"),
        Value::Array(vec![
            Some(number(3.0)),
            Some(Value::String("s".into())),
            Some(Value::BigInt("2".into())),
            Some(Value::Bool(false)),
        ])
    );
}

#[test]
fn describe_mode_replaces_uncloneable_parts_by_their_inspect_string() {
    assert_eq!(
        describe(
            "({ f: function named() {}, s: Symbol('q'), p: new Proxy({ a: 1 }, {}), \
               w: new WeakMap(), pr: Promise.resolve(1), ok: 1 })"
        ),
        Value::Object(vec![
            ("f".into(), Value::Uncloneable("[Function: named]".into())),
            ("s".into(), Value::Uncloneable("Symbol(q)".into())),
            ("p".into(), Value::Uncloneable("{ a: 1 }".into())),
            (
                "w".into(),
                Value::Uncloneable("WeakMap { <items unknown> }".into())
            ),
            ("pr".into(), Value::Uncloneable("Promise { 1 }".into())),
            ("ok".into(), number(1.0)),
        ])
    );
    assert_eq!(
        describe("() => 1"),
        Value::Uncloneable("[Function (anonymous)]".into())
    );
}

#[test]
fn uncloneable_becomes_a_string_in_the_sandbox() {
    check(
        &Value::Uncloneable("[Function: f]".into()),
        "x === '[Function: f]'",
    );
}

#[test]
fn refuse_mode_names_the_path() {
    let cases = [
        ("({ cfg: { onDone() {} } })", "x.cfg.onDone", "a function"),
        ("[1, [2, () => 1]]", "x[1][1]", "a function"),
        ("({ 'a-b': Symbol('s') })", "x[\"a-b\"]", "a symbol"),
        ("new Map([['k', () => 1]])", "x.get('k')", "a function"),
        ("new Map([[() => 1, 'v']])", "x.keys()[0]", "a function"),
        ("new Set([1, Symbol()])", "x.values()[1]", "a symbol"),
        ("({ p: new Proxy({}, {}) })", "x.p", "a Proxy"),
        ("({ w: new WeakMap() })", "x.w", "a WeakMap"),
        ("({ w: new WeakSet() })", "x.w", "a WeakSet"),
        ("[Promise.resolve()]", "x[0]", "a Promise"),
        (
            "({ v: new DataView(new ArrayBuffer(1)) })",
            "x.v",
            "a DataView",
        ),
        ("({ h: new Float16Array(1) })", "x.h", "a Float16Array"),
        (
            "(function () { return { args: arguments }; })()",
            "x.args",
            "an Arguments",
        ),
        ("Symbol.iterator", "x", "a symbol"),
    ];
    for (src, path, what) in cases {
        let error = refuse(src);
        assert_eq!(
            (error.path.as_str(), error.what.as_str()),
            (path, what),
            "{src}"
        );
    }
    let error = refuse("({ a: { '': [{ 'key with space': class {} }] } })");
    assert_eq!(error.path, "x.a[\"\"][0][\"key with space\"]");
    assert_eq!(
        error.to_string(),
        "x.a[\"\"][0][\"key with space\"] is a function, which cannot be copied \
         (values cross as structured clones)"
    );
}

#[test]
fn refuse_mode_copies_what_it_can() {
    assert_eq!(
        copy("({ a: [1, { b: 'c' }] })", Uncopyable::Refuse),
        Ok(Value::Object(vec![(
            "a".into(),
            Value::Array(vec![
                Some(number(1.0)),
                Some(Value::Object(vec![("b".into(), Value::String("c".into()))]))
            ])
        )]))
    );
}

#[test]
fn throwing_getters_are_reported_not_raised() {
    let src = "({ get bad() { throw new Error('nope'); }, ok: 1 })";
    assert_eq!(
        describe(src),
        Value::Object(vec![
            (
                "bad".into(),
                Value::Uncloneable("[Thrown: Error: nope]".into())
            ),
            ("ok".into(), number(1.0)),
        ])
    );
    let error = refuse(src);
    assert_eq!(error.path, "x.bad");
    assert_eq!(error.what, "unreadable (reading it threw Error: nope)");
    // A getter that deletes a later property: the property is skipped, as structured clone.
    assert_eq!(
        describe("({ get a() { delete this.b; return 1; }, b: 2 })"),
        Value::Object(vec![("a".into(), number(1.0))])
    );
}

#[test]
fn tampered_builtins_are_not_used() {
    with_sandbox(|ctx| {
        let value = eval(
            ctx,
            "(() => {
                globalThis.Originals = { Map, Set, Date, RegExp, Error, TypeError, EvalError };
                const shared = { n: 1 };
                const out = {
                    d: new Date(5), m: new Map([[1, shared]]), s: new Set([shared]),
                    a: [1, [2]], r: /x/g, e: new TypeError('t'), ev: new EvalError('ev'),
                    b: 2n ** 70n, u8: new Uint8Array([1, 2]),
                };
                const boom = (what) => function () { throw new Error(what); };
                const names = ['Map', 'Set', 'Date', 'RegExp', 'Error', 'TypeError',
                                    'EvalError', 'BigInt', 'Array', 'Object', 'Uint8Array',
                                    'ArrayBuffer'];
                Array.from = boom('Array.from');
                Object.keys = boom('Object.keys');
                Object.entries = boom('Object.entries');
                Map.prototype.entries = boom('Map.prototype.entries');
                Map.prototype.forEach = boom('Map.prototype.forEach');
                Set.prototype.values = boom('Set.prototype.values');
                Date.prototype.getTime = boom('Date.prototype.getTime');
                Array.prototype[Symbol.iterator] = boom('Array iterator');
                Array.prototype.push = boom('push');
                Object.defineProperty(Object.prototype, 'n', { set: boom('setter n') });
                Object.defineProperty(Array.prototype, '0', { set: boom('setter 0') });
                for (let i = 0; i < names.length; i++) globalThis[names[i]] = boom(names[i]);
                return out;
            })()",
        );
        let copied = to_value(ctx, &value, Uncopyable::Refuse, "x", u64::MAX)
            .expect("copied despite tampering");
        assert!(!ctx.has_exception());
        let Value::Object(entries) = &copied else {
            panic!("{copied:?}")
        };
        assert_eq!(entries[0], ("d".into(), Value::Date(5.0)));
        // EvalError has no C API and no intrinsic prototype to find it by: with its global
        // gone, it arrives as an Error that keeps the name.
        check_in(
            ctx,
            &copied,
            "const O = Originals; \
             x.d instanceof O.Date && O.Date.prototype.valueOf.call(x.d) === 5 \
             && x.m instanceof O.Map && x.m.get(1).n === 1 && x.s.has(x.m.get(1)) \
             && x.s instanceof O.Set && x.a[1][0] === 2 && x.a.length === 2 \
             && x.r instanceof O.RegExp && x.r.flags === 'g' \
             && x.e instanceof O.TypeError && x.e.message === 't' \
             && x.ev instanceof O.Error && x.ev.name === 'EvalError' && x.ev.message === 'ev' \
             && x.b === 2n ** 70n && x.u8[1] === 2",
        );
    });
}

#[test]
fn replaced_constructors_and_methods_are_never_called() {
    with_sandbox(|ctx| {
        eval(
            ctx,
            "globalThis.called = []; \
             const spy = (name) => function () { called.push(name); return {}; }; \
             Set.prototype.add = spy('add'); Map.prototype.set = spy('set'); \
             Object.defineProperty(Map.prototype, 'constructor', { value: spy('Map ctor') }); \
             Map = spy('Map'); Set = spy('Set'); RegExp = spy('RegExp'); \
             EvalError = spy('EvalError');",
        );
        let value = Value::Array(vec![
            Some(Value::Map(vec![(number(1.0), number(2.0))])),
            Some(Value::Set(vec![number(1.0)])),
            Some(Value::RegExp {
                source: "a+".into(),
                flags: "gi".into(),
            }),
            Some(Value::Error {
                name: "EvalError".into(),
                message: "e".into(),
                stack: None,
            }),
        ]);
        check_in(
            ctx,
            &value,
            "called.length === 0 && x[0].size === 1 && x[1].size === 1 \
             && Object.prototype.toString.call(x[2]) === '[object RegExp]' \
             && x[2].test('AA') && x[3].name === 'EvalError' && x[3].message === 'e'",
        );
    });
}

/// Nothing is lost silently: outputs of a sandbox that redefined the built-ins' prototypes still
/// arrive as what they are, not as inspect strings.
#[test]
fn values_are_read_through_the_intrinsics_captured_at_creation() {
    with_sandbox(|ctx| {
        let value = eval(
            ctx,
            "(() => {
                const out = { m: new Map([[1, 'a']]), s: new Set([2]), r: /ab+c/gi,
                              d: new Date(7), n: new Number(3) };
                const lie = (value) => ({ get() { return value; }, configurable: true });
                Object.defineProperty(RegExp.prototype, 'source', lie('evil'));
                Object.defineProperty(RegExp.prototype, 'global', lie(false));
                Object.defineProperty(RegExp.prototype, 'flags', lie(''));
                Map.prototype.entries = function* () { yield ['evil', 1]; };
                Map.prototype[Symbol.iterator] = Map.prototype.entries;
                Set.prototype.values = function* () { yield 'evil'; };
                Set.prototype[Symbol.iterator] = Set.prototype.values;
                Object.getPrototypeOf(new Map().entries()).next = () => ({ done: true });
                Object.getPrototypeOf(new Set().values()).next = () => ({ done: true });
                Date.prototype.getTime = Date.prototype.valueOf = () => 5;
                Number.prototype.valueOf = () => 4;
                return out;
            })()",
        );
        for mode in [Uncopyable::Describe, Uncopyable::Refuse] {
            assert_eq!(
                to_value(ctx, &value, mode, "x", u64::MAX).expect("copied"),
                Value::Object(vec![
                    (
                        "m".into(),
                        Value::Map(vec![(number(1.0), Value::String("a".into()))])
                    ),
                    ("s".into(), Value::Set(vec![number(2.0)])),
                    (
                        "r".into(),
                        Value::RegExp {
                            source: "ab+c".into(),
                            flags: "gi".into()
                        }
                    ),
                    ("d".into(), Value::Date(7.0)),
                    ("n".into(), number(3.0)),
                ])
            );
        }
    });
}

#[test]
fn nesting_up_to_the_limit_is_copied() {
    let src = format!(
        "(() => {{ let o = {{}}; for (let i = 1; i < {MAX_DEPTH}; i++) o = {{ a: o }}; return o; }})()"
    );
    let mut copied = &describe(&src);
    let mut levels = 1;
    while let Value::Object(entries) = copied {
        match entries.first() {
            Some((_, inner)) => {
                copied = inner;
                levels += 1;
            }
            None => break,
        }
    }
    assert_eq!(levels, MAX_DEPTH);
    assert_eq!(copied, &Value::Object(vec![]));
}

#[test]
fn nesting_beyond_the_limit_fails_the_copy_in_both_modes() {
    let src = "(() => { let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return o; })()";
    for error in [
        copy(src, Uncopyable::Describe).expect_err("too deep"),
        refuse(src),
    ] {
        assert_eq!(error.limit.map(|limit| limit.name), Some("maxCopyDepth"));
        assert_eq!(error.path, format!("x{}", ".a".repeat(MAX_DEPTH)));
    }
    let arrays = "(() => { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a; })()";
    assert_eq!(refuse(arrays).path, format!("x{}", "[0]".repeat(MAX_DEPTH)));
}

#[test]
fn too_deep_values_are_not_rebuilt() {
    let mut value = Value::Null;
    for _ in 0..=MAX_DEPTH + 1 {
        value = Value::Array(vec![Some(value)]);
    }
    with_sandbox(|ctx| {
        assert!(from_value(ctx, &value).is_err());
        let _ = ctx.catch();
    });
}

#[test]
fn huge_sparse_arrays_fail_the_copy_naming_the_limit() {
    for mode in [Uncopyable::Describe, Uncopyable::Refuse] {
        let error = copy("({ big: new Array(2 ** 32 - 1) })", mode).expect_err("too long");
        assert_eq!(
            error.to_string(),
            "x.big is an array of 4294967295 elements, more than the 16777216 a copy takes (maxArrayLength)"
        );
        let error = copy(
            "[(() => { const a = [1]; a[4_000_000] = 2; return a; })()]",
            mode,
        )
        .expect_err("too many holes");
        assert_eq!(
            (error.path.as_str(), error.limit.map(|limit| limit.name)),
            ("x[0]", Some("maxArrayHoles"))
        );
    }
}

#[test]
fn large_dense_arrays_and_buffers_are_copied() {
    let copied = describe("new Array(1_000_000).fill(7)");
    assert!(matches!(&copied, Value::Array(items) if items.len() == 1_000_000));
    check(&copied, "x.length === 1e6 && x[999_999] === 7");
    let copied = describe("new Uint8Array(10_000_000).fill(3)");
    check(&copied, "x.length === 1e7 && x[9_999_999] === 3");
}

#[test]
fn malformed_copies_throw_instead_of_panicking() {
    let cases = [
        Value::Ref(0),
        Value::Array(vec![Some(Value::Ref(5))]),
        Value::TypedArray {
            kind: TypedArrayKind::Uint8,
            buffer: Box::new(number(1.0)),
            byte_offset: 0,
            length: 0,
        },
        Value::TypedArray {
            kind: TypedArrayKind::Uint8,
            buffer: Box::new(Value::Ref(0)),
            byte_offset: 0,
            length: 0,
        },
        Value::TypedArray {
            kind: TypedArrayKind::Uint32,
            buffer: Box::new(Value::ArrayBuffer(vec![0; 8])),
            byte_offset: 1,
            length: 1,
        },
        Value::TypedArray {
            kind: TypedArrayKind::Float64,
            buffer: Box::new(Value::ArrayBuffer(vec![0; 8])),
            byte_offset: 0,
            length: usize::MAX,
        },
        Value::RegExp {
            source: "(".into(),
            flags: String::new(),
        },
        Value::RegExp {
            source: "a".into(),
            flags: "gg".into(),
        },
    ];
    with_sandbox(|ctx| {
        for case in &cases {
            assert!(from_value(ctx, case).is_err(), "{case:?}");
            let _ = ctx.catch();
        }
    });
}

#[test]
fn refs_into_typed_arrays_and_maps_rebuild() {
    // Value graphs the host builds number the same way.
    check(
        &Value::Array(vec![
            Some(Value::TypedArray {
                kind: TypedArrayKind::Int16,
                buffer: Box::new(Value::ArrayBuffer(vec![1, 0, 2, 0])),
                byte_offset: 2,
                length: 1,
            }),
            Some(Value::Ref(1)),
            Some(Value::Ref(2)),
        ]),
        "x[0] === x[1] && x[2] === x[0].buffer && x[0][0] === 2",
    );
}

#[test]
fn built_ins_at_the_depth_limit_are_copied_both_ways() {
    // Copying calls the engine's own functions at every depth, which QuickJS checks against
    // its stack limit: the walk must not spend that stack on nesting.
    let src = format!(
        "(() => {{
            let o = {{ d: new Date(7), m: new Map([[1, /r/g]]), s: new Set([2n ** 70n]) }};
            for (let i = 3; i < {MAX_DEPTH}; i++) o = [o];
            return o;
        }})()"
    );
    let copied =
        with_sandbox(|ctx| to_value(ctx, &eval(ctx, &src), Uncopyable::Refuse, "x", u64::MAX))
            .expect("copied");
    let mut innermost = &copied;
    while let Value::Array(items) = innermost {
        innermost = items[0].as_ref().expect("no holes");
    }
    assert!(
        matches!(innermost, Value::Object(entries) if entries[0].1 == Value::Date(7.0)),
        "{innermost:?}"
    );
    with_sandbox(|ctx| {
        let path = "x".to_string() + &"[0]".repeat(MAX_DEPTH - 3);
        check_in(
            ctx,
            &copied,
            &format!(
                "const o = {path}; o.d.getTime() === 7 && o.m.get(1).flags === 'g' \
                 && o.s.has(2n ** 70n)"
            ),
        );
    });
}

/// vendor/quickjs-patches/0500, so that nothing is lost silently: a string is read where QuickJS
/// keeps it, so one that fills most of the heap still crosses whole (it used to arrive as `""`:
/// reading it copied it into the heap, as UTF-16, under the memory limit).
#[test]
fn strings_are_read_in_place_whatever_the_heap_limit() {
    let runtime = Runtime::new().expect("runtime");
    runtime.set_memory_limit(64 * 1024 * 1024);
    runtime.set_max_stack_size(Options::default().max_stack_bytes);
    let context = Context::full(&runtime).expect("context");
    context.with(|ctx| {
        let ctx = &ctx;
        for (src, length, first) in [
            // Latin-1: 40 MiB here, 80 MiB as UTF-16.
            ("'x'.repeat(40 * 1024 * 1024)", 40 * 1024 * 1024, 'x'),
            // 16-bit units: 2 × 12 MiB here, 36 MiB as UTF-8.
            ("'\\u0100'.repeat(12 * 1024 * 1024)", 12 * 1024 * 1024, '\u{100}'),
            // A rope, made flat first.
            ("(() => { let s = 'a'.repeat(1e6); for (let i = 0; i < 5; i++) s = s + 'b' + s; return s; })()", 32_000_031, 'a'),
        ] {
            let value = eval(ctx, src);
            let copied = to_value(ctx, &value, Uncopyable::Refuse, "x", u64::MAX)
                .expect("copied whole");
            let Value::String(text) = copied else {
                panic!("{src}: {copied:?}")
            };
            assert_eq!(text.chars().count(), length, "{src}");
            assert_eq!(text.chars().next(), Some(first), "{src}");
        }
        // Lone surrogates have no UTF-8 form.
        let value = eval(ctx, "'a\\uD800b'");
        assert_eq!(
            to_value(ctx, &value, Uncopyable::Refuse, "x", u64::MAX),
            Ok(Value::String("a\u{FFFD}b".into()))
        );
        assert!(!ctx.has_exception());
    });
}

/// Nothing is lost silently: a value is copied whole or refused with the limit and the size; a long
/// string is refused before it is copied.
#[test]
fn a_copy_past_max_value_bytes_fails_naming_the_limit_and_the_size() {
    with_sandbox(|ctx| {
        let value = eval(ctx, "({ a: 'x'.repeat(1000), b: [1, 2] })");
        for mode in [Uncopyable::Describe, Uncopyable::Refuse] {
            let error = to_value(ctx, &value, mode, "output", 500).expect_err("too large");
            assert_eq!(error.path, "output.a");
            // The object's slot, then the string's slot and its 1000 bytes, unread.
            assert_eq!(
                error.limit,
                Some(crate::value::SizeLimit::value_bytes(500, 8 + 8 + 1000))
            );
            assert_eq!(
                error.to_string(),
                "output.a is at least 1016 bytes, more than maxValueBytes (500) allows for one value"
            );
        }
        // Shared strings count each time they are met: the copy holds each one.
        let value = eval(ctx, "Array(100).fill('y'.repeat(100))");
        assert!(to_value(ctx, &value, Uncopyable::Refuse, "x", 100 * 108 + 8).is_ok());
        assert!(to_value(ctx, &value, Uncopyable::Refuse, "x", 100 * 108 + 7).is_err());
    });
}
