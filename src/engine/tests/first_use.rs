//! The built-ins a context makes on first use (the groups of QuickJS patch 0700, the accessors of
//! patch 0730), attacked as sandbox code would attack them: getters and Proxies on every
//! built-in prototype and on the global object's chain, globals deleted, shadowed, added by the
//! thousand, a global object frozen or sealed, before the first use of each group. Making a
//! group runs no sandbox code and reads nothing sandbox code can change, so every such program
//! must answer exactly what it answers in a context that made everything at once
//! (`JS_NewContext`), traps called as often; and a group that failed to be made (a refused
//! allocation: tests/allocation_failures.rs) is made whole by the next use.

use rquickjs::{Context, Runtime};

use super::intrinsics::GROUPS;
use crate::engine::quickjs::reflect::new_context;
use crate::engine::testing::{engine_with, run_on, FakeHost};
use crate::engine::*;

/// Every global of a lazily made group, in the groups' order (`intrinsics::GROUPS`).
fn lazy_globals() -> impl Iterator<Item = &'static str> {
    GROUPS.iter().flat_map(|(_, names)| names.iter().copied())
}

/// The lazy globals as a JavaScript array literal.
fn lazy_globals_literal() -> String {
    let names: Vec<String> = lazy_globals().map(|name| format!("'{name}'")).collect();
    format!("[{}]", names.join(", "))
}

/// What sandbox code does from inside a trap, to a context that runs traps while it makes a
/// group: counts the call, deletes and redefines every lazy global, asks for other groups,
/// grows the global object, and freezes `Object.prototype`'s neighbours it can reach.
const HARM: &str = r#"
globalThis.calls = 0;
globalThis.armed = false;
const harm = () => {
  if (!armed) return;
  calls++;
  if (calls > 50) return;
  for (const name of NAMES) {
    try { delete globalThis[name]; } catch {}
    try { globalThis[name] = 'replaced'; } catch {}
  }
  try { new Map(); new Date(0); new Uint8Array(1); new WeakRef({}); new DOMException(); } catch {}
  for (let i = 0; i < 200; i++) globalThis[`grown${calls}_${i}`] = i;
};
const trap = (object, key) => {
  const d = Object.getOwnPropertyDescriptor(object, key);
  const get = d === undefined ? () => undefined : 'value' in d ? () => d.value : d.get;
  const set = d && d.set;
  try {
    Object.defineProperty(object, key, {
      configurable: true,
      get() { harm(); return get && Reflect.apply(get, this, []); },
      set(v) { harm(); if (set) Reflect.apply(set, this, [v]); },
    });
  } catch {}
};
const keysToTrap = ['toString', 'valueOf', 'constructor', 'prototype', 'values', 'entries', 'keys',
  'toUTCString', 'name', 'length', 'message', 'set', 'add', 'get', 'next', 'then', 'call', 'apply',
  Symbol.iterator, Symbol.species, Symbol.toStringTag, Symbol.toPrimitive, Symbol.hasInstance,
  ...NAMES];
const trapAll = (object) => {
  for (const key of [...Reflect.ownKeys(object), ...keysToTrap]) trap(object, key);
};
const proxy = (target) => new Proxy(target, {
  get(t, k, r) { harm(); return Reflect.get(t, k, r); },
  has(t, k) { harm(); return Reflect.has(t, k); },
  getOwnPropertyDescriptor(t, k) { harm(); return Reflect.getOwnPropertyDescriptor(t, k); },
  defineProperty(t, k, d) { harm(); return Reflect.defineProperty(t, k, d); },
  set(t, k, v, r) { harm(); return Reflect.set(t, k, v, r); },
  ownKeys(t) { harm(); return Reflect.ownKeys(t); },
  getPrototypeOf(t) { harm(); return Reflect.getPrototypeOf(t); },
});
"#;

/// The ways a program changes the realm before a group's first use (each after [`HARM`]).
const TAMPERS: [(&str, &str); 14] = [
    ("getters on Array.prototype", "trapAll(Array.prototype)"),
    ("getters on Object.prototype", "trapAll(Object.prototype)"),
    ("getters on Function.prototype", "trapAll(Function.prototype)"),
    ("getters on Symbol.prototype", "trapAll(Symbol.prototype)"),
    (
        "getters on Iterator.prototype and Error.prototype",
        "trapAll(Iterator.prototype); trapAll(Error.prototype); trapAll(Error)",
    ),
    (
        "getters on the constructors' species",
        "trapAll(Array); trapAll(Promise); trapAll(RegExp); trapAll(Symbol); trapAll(Object)",
    ),
    (
        "Proxies as prototypes",
        "Object.setPrototypeOf(Function.prototype, proxy(Object.prototype)); \
         Object.setPrototypeOf(Array.prototype, proxy(Object.prototype)); \
         Object.setPrototypeOf(Error.prototype, proxy(Object.prototype)); \
         Object.setPrototypeOf(Iterator.prototype, proxy(Object.prototype)); \
         Object.setPrototypeOf(globalThis, proxy(Object.prototype))",
    ),
    (
        "sibling globals deleted",
        "for (const name of NAMES) if (name !== TARGET) delete globalThis[name]",
    ),
    (
        "sibling globals replaced by data",
        "for (const name of NAMES) if (name !== TARGET) globalThis[name] = 1",
    ),
    (
        "the global object grown",
        "for (let i = 0; i < 5000; i++) globalThis['g' + i] = i",
    ),
    ("the global object sealed", "Object.seal(globalThis)"),
    (
        "the global object not extensible",
        "Object.preventExtensions(globalThis)",
    ),
    (
        "every lazy global shadowed by a lexical binding",
        "SHADOW; globalThis.shadowed = NAMES.filter((n) => n !== TARGET).map((n) => typeof eval(n))",
    ),
    (
        "everything at once",
        "trapAll(Array.prototype); trapAll(Object.prototype); trapAll(Function.prototype); \
         trapAll(Symbol.prototype); trapAll(Iterator.prototype); trapAll(Error.prototype); \
         trapAll(Array); Object.setPrototypeOf(globalThis, proxy(Object.prototype))",
    ),
];

/// After the tampering: the first use of `TARGET`, then what it made, read without touching
/// any trapped property the way a context that made everything at once would not either.
const FIRST_USE: &str = r#"
const kind = typeof TARGET;
const d = Object.getOwnPropertyDescriptor(globalThis, 'TARGET');
const report = [calls, kind, d && typeof d.value, d && d.writable, d && d.configurable];
const made = [];
try { made.push(new Map([[1, 2]]).size); } catch (e) { made.push(String(e)); }
try { made.push(new Date(5).getTime()); } catch (e) { made.push(String(e)); }
try { made.push(new Float64Array(3).length, new Uint8Array(2).byteLength); } catch (e) { made.push(String(e)); }
try { made.push(typeof new WeakRef({}).deref); } catch (e) { made.push(String(e)); }
try { made.push(new DOMException('m', 'SyntaxError').code); } catch (e) { made.push(String(e)); }
try { made.push(Object.getPrototypeOf(Int8Array.prototype).toString === Array.prototype.toString); } catch (e) { made.push(String(e)); }
report.push(calls, ...made, calls);
JSON.stringify(report)
"#;

/// The program of `tamper` for `target`: what sets the realm up, then the first use.
fn program(tamper: &str, target: &str) -> (String, String) {
    let names = lazy_globals_literal();
    // Global lexical bindings (the program is global script), which shadow the global
    // object's properties; `eval` reads them.
    let shadow = lazy_globals()
        .filter(|name| *name != target)
        .map(|name| format!("let {name} = 'lexical';"))
        .collect::<String>();
    let fill = |code: &str| code.replace("NAMES", &names).replace("TARGET", target);
    let setup = format!(
        "{HARM}\n{};\narmed = true;",
        tamper.replace("SHADOW", &shadow)
    );
    (fill(&setup), fill(FIRST_USE))
}

fn evaluate(context: &Context, code: &str) -> String {
    context.with(|ctx| match ctx.eval::<String, _>(code) {
        Ok(result) => result,
        Err(_) => format!("threw {:?}", ctx.catch()),
    })
}

#[test]
fn making_a_lazy_group_runs_no_sandbox_code_however_the_realm_was_changed() {
    let mut failures = Vec::new();
    for (tamper, code) in TAMPERS {
        for target in lazy_globals() {
            let (setup, first_use) = program(code, target);
            let code = format!("{setup}\n{first_use}");
            let eager = evaluate(&Context::full(&Runtime::new().unwrap()).unwrap(), &code);
            let lazy = evaluate(
                &new_context(&Runtime::new().unwrap(), |_| {}).unwrap(),
                &code,
            );
            if lazy != eager {
                failures.push(format!(
                    "{tamper}, {target}:\n  lazy  {lazy}\n  eager {eager}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn making_a_lazy_group_runs_no_sandbox_code_when_garbage_is_collected_half_way() {
    // A collection at each point of the group's making in turn (the heap's threshold set a
    // little further each time), with FinalizationRegistry callbacks of the program's pending
    // and traps on the prototypes: nothing of the program may run.
    let tamper = "for (let i = 0; i < 50; i++) { const r = new FinalizationRegistry(harm); \
                  r.register({}, i); } \
                  trapAll(Array.prototype); trapAll(Object.prototype); trapAll(Function.prototype)";
    for target in ["Date", "Map", "Uint8Array", "WeakRef", "DOMException"] {
        let (setup, first_use) = program(tamper, target);
        let eager = Context::full(&Runtime::new().unwrap()).unwrap();
        evaluate(&eager, &setup);
        let expected = evaluate(&eager, &first_use);
        for delta in (0..16 * 1024).step_by(1024) {
            let runtime = Runtime::new().unwrap();
            let lazy = new_context(&runtime, |_| {}).unwrap();
            evaluate(&lazy, &setup);
            runtime.set_gc_threshold(runtime.memory_usage().malloc_size as usize + delta);
            assert_eq!(evaluate(&lazy, &first_use), expected, "{target}, {delta}");
        }
    }
}

#[test]
fn the_getter_that_deleted_a_global_while_its_group_was_made_is_never_called() {
    // The three lines that killed Node with SIGSEGV: making the typed arrays read
    // Array.prototype.toString, so the getter ran and deleted the placeholder being read.
    let engine = engine_with(FakeHost::default(), &Options::default());
    let report = run_on(
        &engine,
        "const o = Array.prototype.toString\n\
         Object.defineProperty(Array.prototype, 'toString', { configurable: true, get() { delete globalThis.Uint8Array; return o } })\n\
         typeof Uint8Array",
        &Options::default(),
    );
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::String("function".into()))
    );
    let report = run_on(
        &engine,
        "[typeof Uint8Array, new Uint8Array([1, 2])[1], Object.getPrototypeOf(Uint8Array.prototype).toString === o]",
        &Options::default(),
    );
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::Array(vec![
            Some(Value::String("function".into())),
            Some(Value::Number(2.0)),
            Some(Value::Bool(true)),
        ]))
    );
}

#[test]
fn a_trap_that_would_spin_forever_never_stops_a_group_half_made() {
    // Upstream's typed arrays read Array.prototype.toString: a getter there that loops was
    // stopped by maxOperations in the middle of the group, which stayed half made.
    let options = Options {
        max_operations: 100_000,
        ..Options::default()
    };
    let engine = engine_with(FakeHost::default(), &options);
    let install = "for (const key of ['toString', Symbol.species, 'values']) \
                   Object.defineProperty(Array.prototype, key, { configurable: true, \
                   get() { for (;;) {} } }); 'installed'";
    let report = run_on(&engine, install, &options);
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::String("installed".into()))
    );
    for _ in 0..2 {
        let report = run_on(
            &engine,
            "[typeof Float64Array, new Float64Array(2).length, typeof Atomics]",
            &options,
        );
        assert_eq!(
            report.result.map(|completion| completion.output),
            Ok(Value::Array(vec![
                Some(Value::String("function".into())),
                Some(Value::Number(2.0)),
                Some(Value::String("object".into())),
            ]))
        );
    }
}

#[test]
fn variables_copied_in_make_their_groups_without_reading_the_sandbox_changes() {
    let engine = engine_with(FakeHost::default(), &Options::default());
    let tamper = format!(
        "{}; trapAll(Array.prototype); trapAll(Object.prototype); trapAll(Function.prototype); \
         for (const name of NAMES) delete globalThis[name]; armed = true; 'tampered'",
        HARM
    )
    .replace("NAMES", &lazy_globals_literal());
    let report = run_on(&engine, &tamper, &Options::default());
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::String("tampered".into()))
    );
    engine
        .set_variables(vec![(
            "v".into(),
            Value::Array(vec![
                Some(Value::Date(5.0)),
                Some(Value::Map(vec![(Value::Number(1.0), Value::Number(2.0))])),
                Some(Value::Set(vec![Value::Number(3.0)])),
                Some(Value::ArrayBuffer(vec![4])),
            ]),
        )])
        .blocking_recv()
        .unwrap()
        .expect("sendVariables");
    let report = run_on(
        &engine,
        "[calls, v[0].getTime(), v[1].size, v[2].size, v[3].byteLength, typeof Map].join()",
        &Options::default(),
    );
    assert_eq!(
        report.result.map(|completion| completion.output),
        Ok(Value::String("0,5,1,1,1,undefined".into()))
    );
}
