//! What a context makes on first use: the groups of built-ins of QuickJS patch 0700
//! (`reflect::new_context`) and the built-ins' accessors of patch 0730. Nothing of either exists
//! until code reaches it, and then it is exactly what upstream makes when the context is made,
//! whichever way it was reached.

use rquickjs::{Context, Ctx, Runtime, Value as JsValue};

use crate::engine::quickjs::reflect::{
    class_id, new_context, Reflect, CLASS_ARRAY_BUFFER, CLASS_DATE, CLASS_MAP,
};
use crate::engine::testing::{engine_with, run_on, sync, FakeHost};
use crate::options::Options;
use crate::value::{TypedArrayKind, Value};

/// Class ids of the bundled quickjs-ng that only these tests need (pinned below).
const CLASS_WEAK_REF: u32 = 62;
const CLASS_DOM_EXCEPTION: u32 = 64;

/// One class of each lazily made group, with the group's globals.
pub(super) const GROUPS: [(u32, &[&str]); 5] = [
    (CLASS_DATE, &["Date"]),
    (CLASS_MAP, &["Map", "Set", "WeakMap", "WeakSet"]),
    (
        CLASS_ARRAY_BUFFER,
        &[
            "ArrayBuffer",
            "SharedArrayBuffer",
            "Uint8ClampedArray",
            "Int8Array",
            "Uint8Array",
            "Int16Array",
            "Uint16Array",
            "Int32Array",
            "Uint32Array",
            "BigInt64Array",
            "BigUint64Array",
            "Float16Array",
            "Float32Array",
            "Float64Array",
            "DataView",
            "Atomics",
        ],
    ),
    (CLASS_WEAK_REF, &["WeakRef", "FinalizationRegistry"]),
    (CLASS_DOM_EXCEPTION, &["DOMException"]),
];

/// Every own property of the global object and of each lazily made global, its constructor's
/// prototype and the prototypes their instances get (kind, flags and type of value, in order),
/// one line per object: what a context that made the groups lazily must share with
/// `JS_NewContext`'s. Reading it makes every group.
const DESCRIBE: &str = r#"(() => {
  const flags = (d) => ('value' in d ? typeof d.value : 'accessor') + (d.writable ? ' w' : '') +
    (d.enumerable ? ' e' : '') + (d.configurable ? ' c' : '');
  const own = (o) => Reflect.ownKeys(o)
    .map((k) => `${String(k)}: ${flags(Object.getOwnPropertyDescriptor(o, k))}`).join(', ');
  const same = (a, b) => a === b ? 'same' : 'other';
  const lines = [own(globalThis)];
  for (const name of NAMES) {
    const c = globalThis[name];
    lines.push(`${name} { ${own(c)} }`);
    if (typeof c === 'function') {
      lines.push(`${name}.prototype { ${own(c.prototype)} } ` +
        same(Object.getPrototypeOf(c.prototype), Object.prototype));
    }
  }
  const TypedArray = Object.getPrototypeOf(Uint8Array);
  lines.push(`TypedArray { ${own(TypedArray)} } { ${own(TypedArray.prototype)} } ` +
    same(Object.getPrototypeOf(Float64Array.prototype), TypedArray.prototype));
  lines.push(`Map Iterator { ${own(Object.getPrototypeOf(new Map().entries()))} }`);
  lines.push(`Set Iterator { ${own(Object.getPrototypeOf(new Set().values()))} }`);
  lines.push(same(Object.getPrototypeOf(new DOMException()), DOMException.prototype));
  return lines.join('\n');
})()"#;

fn names() -> String {
    let names: Vec<String> = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter().map(|name| format!("'{name}'")))
        .collect();
    format!("[{}]", names.join(", "))
}

fn lazy() -> Context {
    new_context(&Runtime::new().expect("runtime"), |_| {}).expect("context")
}

fn eager() -> Context {
    Context::full(&Runtime::new().expect("runtime")).expect("context")
}

fn eval_string(ctx: &Ctx<'_>, code: &str) -> String {
    ctx.eval::<String, _>(code)
        .unwrap_or_else(|error| panic!("{code}: {error:?} {:?}", ctx.catch()))
}

/// Which groups of [`GROUPS`] the context has made, by their first global.
fn made(ctx: &Ctx<'_>) -> Vec<&'static str> {
    GROUPS
        .iter()
        .filter(|(class, _)| Reflect::new(ctx).class_proto(*class).is_some())
        .map(|(_, names)| names[0])
        .collect()
}

#[test]
fn the_class_ids_these_tests_use_are_the_bundled_quickjs_ones() {
    eager().with(|ctx| {
        for (code, class) in [
            ("new WeakRef({})", CLASS_WEAK_REF),
            ("new DOMException()", CLASS_DOM_EXCEPTION),
        ] {
            let value: JsValue = ctx.eval(code).unwrap();
            assert_eq!(class_id(&value), class, "{code}");
        }
    });
}

#[test]
fn a_new_context_has_the_globals_of_js_new_context_and_makes_no_group() {
    let listing = "Object.getOwnPropertyNames(globalThis).join()";
    let expected = eager().with(|ctx| eval_string(&ctx, listing));
    lazy().with(|ctx| {
        assert_eq!(made(&ctx), Vec::<&str>::new());
        assert_eq!(eval_string(&ctx, listing), expected);
        assert_eq!(
            made(&ctx),
            Vec::<&str>::new(),
            "listing names makes nothing"
        );
    });
}

#[test]
fn the_groups_made_are_what_js_new_context_makes() {
    let describe = DESCRIBE.replace("NAMES", &names());
    let expected = eager().with(|ctx| eval_string(&ctx, &describe));
    lazy().with(|ctx| {
        let described = eval_string(&ctx, &describe);
        for (line, (got, want)) in described.lines().zip(expected.lines()).enumerate() {
            assert_eq!(got, want, "line {line}");
        }
        assert_eq!(described, expected);
        assert_eq!(made(&ctx).len(), GROUPS.len());
    });
}

#[test]
fn each_group_is_made_by_any_of_its_globals_and_makes_no_other() {
    for (class, names) in GROUPS {
        for name in names {
            lazy().with(|ctx| {
                let kind = eval_string(&ctx, &format!("typeof {name}"));
                assert!(kind == "function" || kind == "object", "{name}: {kind}");
                assert_eq!(made(&ctx), vec![names[0]], "{name}");
                let first: JsValue = ctx.globals().get(*name).unwrap();
                let again: JsValue = ctx.eval(format!("globalThis.{name}")).unwrap();
                assert_eq!(first, again, "{name} is one object");
                assert!(Reflect::new(&ctx).class_proto(class).is_some());
            });
        }
    }
}

#[test]
fn objects_quickjs_creates_itself_make_their_group() {
    lazy().with(|ctx| {
        let reflect = Reflect::new(&ctx);
        let date = reflect.new_date(86_400_000.0).expect("a date");
        assert_eq!(class_id(&date), CLASS_DATE);
        let bytes = rquickjs::ArrayBuffer::new_copy(ctx.clone(), [1u8, 2]).unwrap();
        assert_eq!(class_id(bytes.as_value()), CLASS_ARRAY_BUFFER);
        assert!(reflect.intrinsic_constructor("Set").is_some());
        assert_eq!(made(&ctx), vec!["Date", "Map", "ArrayBuffer"]);
        ctx.globals().set("made", date).unwrap();
        assert_eq!(
            eval_string(&ctx, "`${made instanceof Date} ${made.getTime()}`"),
            "true 86400000"
        );
    });
    lazy().with(|ctx| {
        // atob throws a DOMException that QuickJS builds itself.
        let thrown = "try { atob('%'); 'no error' } catch (e) { \
                      `${e.name} ${e instanceof DOMException} ${e.code}` }";
        assert_eq!(eval_string(&ctx, thrown), "InvalidCharacterError true 5");
    });
}

#[test]
fn a_global_deleted_before_its_group_was_made_stays_deleted() {
    let engine = engine_with(
        FakeHost::default().with(
            "lookup",
            sync(|_| {
                Ok(Value::Array(vec![
                    Some(Value::Map(vec![(Value::Number(1.0), Value::Date(0.0))])),
                    Some(Value::TypedArray {
                        kind: TypedArrayKind::Uint8,
                        buffer: Box::new(Value::ArrayBuffer(vec![7, 8])),
                        byte_offset: 0,
                        length: 2,
                    }),
                ]))
            }),
        ),
        &Options::default(),
    );
    let run = |code: &str| match run_on(&engine, code, &Options::default()).result {
        Ok(completion) => completion.output,
        Err(error) => panic!("{code}: {error:?}"),
    };
    run("delete globalThis.Map; delete globalThis.Date; delete globalThis.Uint8Array");
    assert_eq!(
        run("const [m, bytes] = lookup(); \
             [typeof Map, typeof Date, typeof Uint8Array, m.get(1).getTime(), bytes[1], \
              Object.getPrototypeOf(bytes).constructor.name]"),
        Value::Array(
            ["undefined", "undefined", "undefined"]
                .map(|kind| Some(Value::String(kind.into())))
                .into_iter()
                .chain([
                    Some(Value::Number(0.0)),
                    Some(Value::Number(8.0)),
                    Some(Value::String("Uint8Array".into()))
                ])
                .collect()
        )
    );
}

#[test]
fn built_ins_replaced_after_their_group_was_made_are_not_what_the_engine_calls() {
    let engine = engine_with(FakeHost::default(), &Options::default());
    let report = run_on(
        &engine,
        "const m = new Map([[1, 'a']]); const d = new Date(5); \
         const v = new DataView(new ArrayBuffer(2)); \
         Map.prototype.entries = function* () { yield ['evil', 1]; }; \
         Object.getPrototypeOf(new Map().entries()).next = () => ({ done: true }); \
         Date.prototype.getTime = () => -1; \
         Object.defineProperty(DataView.prototype, 'byteLength', { get: () => 99 }); \
         console.log(m, v.byteLength); \
         [m, d]",
        &Options::default(),
    );
    assert_eq!(report.logs.text, "Map(1) { 1 => 'a' } 99");
    match report.result {
        Ok(completion) => assert_eq!(
            completion.output,
            Value::Array(vec![
                Some(Value::Map(vec![(
                    Value::Number(1.0),
                    Value::String("a".into())
                )])),
                Some(Value::Date(5.0)),
            ])
        ),
        Err(error) => panic!("{error:?}"),
    }
}

/// Every accessor of the built-ins reachable from the global object, its prototypes and their
/// constructors: where it is, the name a function made for its key has, its getter's and
/// setter's names and lengths, its flags.
const ACCESSORS: &str = r#"(() => {
  const seen = new Set();
  const lines = [];
  const visit = (object, path) => {
    if (object === null || (typeof object !== 'object' && typeof object !== 'function') ||
        seen.has(object)) return;
    seen.add(object);
    for (const key of Reflect.ownKeys(object)) {
      const d = Object.getOwnPropertyDescriptor(object, key);
      const name = `${path}.${String(key)}`;
      if ('get' in d) {
        const fn = (f) => f === undefined ? '-' : `${f.name}/${f.length}`;
        const named = typeof key === 'symbol' ? `[${key.description}]` : key;
        lines.push(`${name} | ${named} | ${fn(d.get)} | ${fn(d.set)} | ` +
          `${d.enumerable ? 'e' : ''}${d.configurable ? 'c' : ''}`);
      } else if (key === 'prototype' || path === 'globalThis') {
        visit(d.value, name);
      }
    }
    visit(Object.getPrototypeOf(object), `${path}.[[Prototype]]`);
  };
  visit(globalThis, 'globalThis');
  return lines.join('\n');
})()"#;

/// The C functions the runtime holds (read outside `Context::with`, which holds the runtime).
fn c_functions(runtime: &Runtime) -> i64 {
    runtime.memory_usage().c_func_count
}

#[test]
fn accessors_made_on_first_use_are_the_ones_upstream_made_at_once() {
    let runtime = Runtime::new().expect("runtime");
    let context = Context::full(&runtime).expect("context");
    // Listing names makes no accessor (the methods that list them are made first: methods too
    // are made on first use, upstream).
    let listing = "[Object.getOwnPropertyNames(Object.prototype), Object.keys(RegExp.prototype)]";
    let eval = |code: &str| context.with(|ctx| ctx.eval::<(), _>(code).unwrap());
    eval("Object.getOwnPropertyNames; Object.keys");
    let before = c_functions(&runtime);
    eval(listing);
    assert_eq!(c_functions(&runtime), before);
    // Reading one makes its getter and setter, and nothing else.
    context.with(|ctx| {
        assert!(ctx
            .eval::<bool, _>("({}).__proto__ === Object.prototype")
            .unwrap());
    });
    assert_eq!(c_functions(&runtime), before + 2);
    context.with(|ctx| {
        let listing = eval_string(&ctx, ACCESSORS);
        for (line, (got, want)) in listing.lines().zip(UPSTREAM_ACCESSORS.lines()).enumerate() {
            assert_eq!(got, want, "line {line}");
        }
        assert_eq!(listing, UPSTREAM_ACCESSORS);
    });
}

/// [`ACCESSORS`] of a context with every built-in made by QuickJS without patch 0730, whose
/// function lists made every accessor when the context was made (a C program on the patched
/// sources less 0730, 2026-11-27): the getters and setters made on first use must be these.
const UPSTREAM_ACCESSORS: &str = "\
globalThis.Object.prototype.__proto__ | __proto__ | get __proto__/0 | set __proto__/1 | c
globalThis.Object.[[Prototype]].caller | caller | /0 | /0 | c
globalThis.Object.[[Prototype]].arguments | arguments | /0 | /0 | c
globalThis.Object.[[Prototype]].fileName | fileName | get fileName/0 | - | c
globalThis.Object.[[Prototype]].lineNumber | lineNumber | get lineNumber/0 | - | c
globalThis.Object.[[Prototype]].columnNumber | columnNumber | get columnNumber/0 | - | c
globalThis.Error.prototype.stack | stack | get stack/0 | set stack/1 | c
globalThis.Error.stackTraceLimit | stackTraceLimit | get stackTraceLimit/0 | set stackTraceLimit/1 | c
globalThis.Error.prepareStackTrace | prepareStackTrace | get prepareStackTrace/0 | set prepareStackTrace/1 | c
globalThis.Iterator.prototype.constructor | constructor | /0 | /1 | c
globalThis.Iterator.prototype.Symbol(Symbol.toStringTag) | [Symbol.toStringTag] | get [Symbol.toStringTag]/0 | set [Symbol.toStringTag]/1 | c
globalThis.Array.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.Symbol.prototype.description | description | get description/0 | - | c
globalThis.DisposableStack.prototype.disposed | disposed | get disposed/0 | - | c
globalThis.RegExp.prototype.flags | flags | get flags/0 | - | c
globalThis.RegExp.prototype.source | source | get source/0 | - | c
globalThis.RegExp.prototype.global | global | get global/0 | - | c
globalThis.RegExp.prototype.ignoreCase | ignoreCase | get ignoreCase/0 | - | c
globalThis.RegExp.prototype.multiline | multiline | get multiline/0 | - | c
globalThis.RegExp.prototype.dotAll | dotAll | get dotAll/0 | - | c
globalThis.RegExp.prototype.unicode | unicode | get unicode/0 | - | c
globalThis.RegExp.prototype.unicodeSets | unicodeSets | get unicodeSets/0 | - | c
globalThis.RegExp.prototype.sticky | sticky | get sticky/0 | - | c
globalThis.RegExp.prototype.hasIndices | hasIndices | get hasIndices/0 | - | c
globalThis.RegExp.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.Map.prototype.size | size | get size/0 | - | c
globalThis.Map.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.Set.prototype.size | size | get size/0 | - | c
globalThis.Set.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.ArrayBuffer.prototype.byteLength | byteLength | get byteLength/0 | - | c
globalThis.ArrayBuffer.prototype.maxByteLength | maxByteLength | get maxByteLength/0 | - | c
globalThis.ArrayBuffer.prototype.resizable | resizable | get resizable/0 | - | c
globalThis.ArrayBuffer.prototype.detached | detached | get detached/0 | - | c
globalThis.ArrayBuffer.prototype.immutable | immutable | get immutable/0 | - | c
globalThis.ArrayBuffer.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.SharedArrayBuffer.prototype.byteLength | byteLength | get byteLength/0 | - | c
globalThis.SharedArrayBuffer.prototype.maxByteLength | maxByteLength | get maxByteLength/0 | - | c
globalThis.SharedArrayBuffer.prototype.growable | growable | get growable/0 | - | c
globalThis.SharedArrayBuffer.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.Uint8ClampedArray.prototype.[[Prototype]].length | length | get length/0 | - | c
globalThis.Uint8ClampedArray.prototype.[[Prototype]].buffer | buffer | get buffer/0 | - | c
globalThis.Uint8ClampedArray.prototype.[[Prototype]].byteLength | byteLength | get byteLength/0 | - | c
globalThis.Uint8ClampedArray.prototype.[[Prototype]].byteOffset | byteOffset | get byteOffset/0 | - | c
globalThis.Uint8ClampedArray.prototype.[[Prototype]].Symbol(Symbol.toStringTag) | [Symbol.toStringTag] | get [Symbol.toStringTag]/0 | - | c
globalThis.Uint8ClampedArray.[[Prototype]].Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.DataView.prototype.buffer | buffer | get buffer/0 | - | c
globalThis.DataView.prototype.byteLength | byteLength | get byteLength/0 | - | c
globalThis.DataView.prototype.byteOffset | byteOffset | get byteOffset/0 | - | c
globalThis.Promise.Symbol(Symbol.species) | [Symbol.species] | get [Symbol.species]/0 | - | c
globalThis.AsyncDisposableStack.prototype.disposed | disposed | get disposed/0 | - | c
globalThis.DOMException.prototype.name | name | get name/0 | - | ec
globalThis.DOMException.prototype.message | message | get message/0 | - | ec
globalThis.DOMException.prototype.code | code | get code/0 | - | ec";

#[test]
fn accessors_made_on_first_use_behave_as_upstream_ones() {
    lazy().with(|ctx| {
        let checks = r#"[
          (() => { const o = {}; o.__proto__ = Array.prototype; return !Array.isArray(o) && o instanceof Array; })(),
          Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get.call(/a/gi) === 'gi',
          /a/y.sticky && !/a/.global,
          Array[Symbol.species] === Array && Promise[Symbol.species] === Promise,
          Symbol('x').description === 'x',
          typeof new Error('m').stack === 'string' && Error.stackTraceLimit === 10,
          (() => { Error.stackTraceLimit = 3; return Error.stackTraceLimit === 3; })(),
          typeof (function f() {}).lineNumber === 'number',
          (() => {
            try { Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get.call(1); return false; }
            catch (e) { return e instanceof TypeError; }
          })(),
        ].join()"#;
        assert_eq!(eval_string(&ctx, checks), ["true"; 9].join(","));
    });
}

#[test]
fn the_regexp_fast_paths_take_flag_getters_not_made_yet_for_the_intrinsic_ones() {
    let runtime = Runtime::new().expect("runtime");
    let context = new_context(&runtime, |_| {}).expect("context");
    // The methods that run are made first (on first use, as upstream makes methods).
    context.with(|ctx| {
        let methods = "String.prototype.split; String.prototype.replace; Array.prototype.join; \
                       RegExp.prototype[Symbol.split]; RegExp.prototype[Symbol.replace]";
        ctx.eval::<(), _>(methods).unwrap();
    });
    let before = c_functions(&runtime);
    context.with(|ctx| {
        let result: String = ctx
            .eval("'a b  c'.split(/\\s+/).join('|') + 'x-y'.replace(/-/g, '+')")
            .unwrap();
        assert_eq!(result, "a|b|cx+y");
    });
    // The spec's steps would have read `flags` (and each flag getter), making them.
    assert_eq!(c_functions(&runtime), before, "no flag getter was made");
    context.with(|ctx| {
        assert_eq!(ctx.eval::<String, _>("/a/g.flags").unwrap(), "g");
    });
    assert!(c_functions(&runtime) > before);
}
