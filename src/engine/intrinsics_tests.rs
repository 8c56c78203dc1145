//! The groups of built-ins a context makes on first use (QuickJS patch 0700,
//! `reflect::new_context`): nothing of a group exists until code reaches it, and then it is
//! exactly what `JS_NewContext` makes, whichever way it was reached.

use rquickjs::{Context, Ctx, Runtime, Value as JsValue};

use super::reflect::{class_id, new_context, Reflect, CLASS_ARRAY_BUFFER, CLASS_DATE, CLASS_MAP};
use super::testing::{engine_with, run_on, sync, FakeHost};
use crate::options::Options;
use crate::value::{TypedArrayKind, Value};

/// Class ids of the bundled quickjs-ng that only these tests need (pinned below).
const CLASS_WEAK_REF: u32 = 62;
const CLASS_DOM_EXCEPTION: u32 = 64;

/// One class of each lazily made group, with the group's globals.
const GROUPS: [(u32, &[&str]); 5] = [
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
    new_context(&Runtime::new().expect("runtime")).expect("context")
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
