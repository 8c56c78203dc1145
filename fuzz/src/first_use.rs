//! The first use of built-ins made on first use, and of the patched fast paths, in a realm sandbox
//! code tampered with first: the re-entrancy fuzzer (docs/security.md "Fuzzing").
//!
//! An input is a program: changes to the realm (accessors on `Array.prototype`,
//! `Object.prototype`, `Function.prototype`, `Symbol.prototype`, `RegExp.prototype`, ...; Proxies
//! as prototypes; lazy globals deleted, replaced, shadowed by lexical bindings; the global object
//! grown, sealed or frozen), whose traps act again on the realm (delete or define globals, make
//! other groups, re-enter a fast path, throw), then uses: the first use of each lazily made group
//! of patch 0700 (by its global and by QuickJS creating its objects), the accessors of patch
//! 0730, the RegExp fast paths of patches 0610-0612, the string building of patch 0500, the
//! iterator steps of patch 0114. Then an allocation to refuse (patch 0199) or an interrupt check
//! to fail (patch 0198).
//!
//! What must hold (besides no crash and no sanitizer report: the target runs under
//! AddressSanitizer):
//! - the program gives the same answer in a context that makes the groups on first use as in
//!   one that made them all at once (`JS_NewContext`): making a group runs none of the program's
//!   code and reads nothing it changed;
//! - each RegExp use gives what the spec path gives (the same RegExp, as a subclass instance,
//!   which never takes a fast path);
//! - after the uses failed at the chosen allocation or interrupt check, the same context runs
//!   them again and ends in the state of a context where they never failed: a failed first use
//!   leaves nothing half made.

use std::ffi::c_int;
use std::fmt::Write as _;

use arbitrary::Arbitrary;
use rquickjs::{Context, Runtime};

extern "C" {
    /// vendor/quickjs-patches/0700: what `JS_NewContext` adds after the base objects, the
    /// groups in `lazy_groups` made on first use.
    fn JS_AddStandardIntrinsics(ctx: *mut rquickjs::qjs::JSContext, lazy_groups: c_int) -> c_int;
    /// vendor/quickjs-patches/0199: refuse allocation `fail_at` (0: none), and every later one
    /// if `persistent`.
    fn JS_SesFaultInject(fail_at: i64, persistent: c_int);
    /// vendor/quickjs-patches/0198: fail interrupt check `interrupt_at` (0: none).
    fn JS_SesInterruptInject(interrupt_at: i64);
    /// vendor/quickjs-patches/0198: the interrupt checks counted since the last arming.
    fn JS_SesInterruptCheckCount() -> i64;
    /// vendor/quickjs-patches/0199: the allocations counted since the last arming.
    fn JS_SesAllocationCount() -> i64;
}

/// The globals of the groups made on first use.
const LAZY: [&str; 24] = [
    "Date",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
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
    "WeakRef",
    "FinalizationRegistry",
    "DOMException",
];

#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Lazy(pub u8);

impl Lazy {
    fn name(self) -> &'static str {
        LAZY[usize::from(self.0) % LAZY.len()]
    }
}

/// An object of the realm whose properties or prototype the program changes.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Target {
    ArrayPrototype,
    ObjectPrototype,
    FunctionPrototype,
    SymbolPrototype,
    IteratorPrototype,
    ErrorPrototype,
    RegExpPrototype,
    StringPrototype,
    PromisePrototype,
    ArrayConstructor,
    RegExpConstructor,
    PromiseConstructor,
    Global,
}

impl Target {
    fn js(self) -> &'static str {
        match self {
            Target::ArrayPrototype => "Array.prototype",
            Target::ObjectPrototype => "Object.prototype",
            Target::FunctionPrototype => "Function.prototype",
            Target::SymbolPrototype => "Symbol.prototype",
            Target::IteratorPrototype => "Iterator.prototype",
            Target::ErrorPrototype => "Error.prototype",
            Target::RegExpPrototype => "RegExp.prototype",
            Target::StringPrototype => "String.prototype",
            Target::PromisePrototype => "Promise.prototype",
            Target::ArrayConstructor => "Array",
            Target::RegExpConstructor => "RegExp",
            Target::PromiseConstructor => "Promise",
            Target::Global => "globalThis",
        }
    }
}

/// A property the program puts an accessor on.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Key {
    Named(u8),
    Lazy(Lazy),
    Symbol(u8),
}

/// Names QuickJS's own code reads, or could read, while it makes or uses built-ins.
const NAMES: [&str; 28] = [
    "toString",
    "valueOf",
    "constructor",
    "prototype",
    "values",
    "entries",
    "keys",
    "next",
    "length",
    "name",
    "message",
    "exec",
    "flags",
    "global",
    "unicode",
    "sticky",
    "lastIndex",
    "source",
    "toUTCString",
    "set",
    "add",
    "get",
    "has",
    "then",
    "call",
    "apply",
    "join",
    "size",
];

const SYMBOLS: [&str; 8] = [
    "iterator",
    "species",
    "toStringTag",
    "toPrimitive",
    "replace",
    "split",
    "match",
    "hasInstance",
];

impl Key {
    fn js(self) -> String {
        match self {
            Key::Named(index) => format!("'{}'", NAMES[usize::from(index) % NAMES.len()]),
            Key::Lazy(lazy) => format!("'{}'", lazy.name()),
            Key::Symbol(index) => format!("Symbol.{}", SYMBOLS[usize::from(index) % SYMBOLS.len()]),
        }
    }
}

/// What a trap does to the realm when it runs (each is idempotent: running a trap again, or
/// more of them, leaves the realm as running them once in the same order would).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Action {
    DeleteGlobal(Lazy),
    DefineGlobal(Lazy),
    MakeGroup(Lazy),
    Use(Use),
    FreezeGlobal,
    GrowGlobal(u8),
    Throw,
}

impl Action {
    fn js(self) -> String {
        match self {
            Action::DeleteGlobal(lazy) => format!("delete globalThis.{};", lazy.name()),
            Action::DefineGlobal(lazy) => format!(
                "Object.defineProperty(globalThis, '{}', {{ value: 'defined', writable: true, configurable: true }});",
                lazy.name()
            ),
            Action::MakeGroup(lazy) => format!("typeof globalThis.{};", lazy.name()),
            Action::Use(use_) => format!("{};", use_.js()),
            Action::FreezeGlobal => "Object.freeze(globalThis);".into(),
            Action::GrowGlobal(count) => {
                format!("for (let i = 0; i < {}; i++) globalThis['grown' + i] = i;", u16::from(count) * 8)
            }
            Action::Throw => "throw new Error('trap');".into(),
        }
    }
}

/// A change to the realm, before the uses.
#[derive(Arbitrary, Debug, Clone)]
pub enum Tamper {
    /// An accessor whose getter (and setter) act, then answer what the property held.
    Accessor {
        target: Target,
        key: Key,
        actions: Vec<Action>,
    },
    /// A Proxy, whose every trap acts, as the target's prototype.
    ProxyPrototype {
        target: Target,
        actions: Vec<Action>,
    },
    DeleteGlobal(Lazy),
    DefineGlobal(Lazy),
    /// A global lexical binding of the name (the program is one global script).
    ShadowGlobal(Lazy),
    Freeze(Target),
    PreventExtensions(Target),
    GrowGlobal(u8),
}

/// The first use of something QuickJS makes or runs differently since this project's patches.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Use {
    Typeof(Lazy),
    Construct(Lazy),
    DateToJson,
    TypedArraySpecies,
    /// QuickJS creates the DOMException itself (no global read).
    DomExceptionOfAtob,
    MapOfGroupBy,
    /// Patch 0730's accessors.
    RegExpFlags,
    SymbolDescription,
    Proto,
    ErrorStack,
    SizeOfSet,
    /// Patches 0610-0612 (each compared with the spec path).
    Split(u8),
    Replace(u8),
    Search(u8),
    /// Patch 0500: a string grown in place.
    Concatenate(u8),
    /// Patch 0114: iterator steps in C.
    IteratorDrop(u8),
    SetMethod(u8),
}

/// RegExp uses: a pattern, flags and a subject, each compared with the spec path.
const REGEXPS: [(&str, &str, &str); 6] = [
    (r"\s+", "g", "a b  c"),
    ("(?<l>\\w)(\\d)?", "gd", "a1b2c"),
    ("x*", "gy", "xxaxx"),
    ("[A-Z]", "gi", "John Smith"),
    ("^|$", "gm", "a\nb"),
    ("\\p{L}", "gu", "é𝒳b"),
];

impl Use {
    fn js(self) -> String {
        let regexp = |index: u8| REGEXPS[usize::from(index) % REGEXPS.len()];
        match self {
            Use::Typeof(lazy) => format!("typeof {}", lazy.name()),
            Use::Construct(lazy) => {
                let name = lazy.name();
                let args = match name {
                    "Atomics" => return "typeof Atomics.add".into(),
                    "FinalizationRegistry" => "() => {}",
                    "WeakRef" => "{}",
                    "DataView" => "new ArrayBuffer(2)",
                    "Date" => "5",
                    _ => "",
                };
                format!("String(new {name}({args}))")
            }
            Use::DateToJson => "JSON.stringify(new Date(0))".into(),
            Use::TypedArraySpecies => "new Uint8Array([1, 2]).map((x) => x * 2).join()".into(),
            Use::DomExceptionOfAtob => {
                "(() => { try { atob('%') } catch (e) { return e.name } })()".into()
            }
            Use::MapOfGroupBy => "Map.groupBy([1, 2], (x) => x % 2).size".into(),
            Use::RegExpFlags => "/a/gimsuyd.flags".into(),
            Use::SymbolDescription => "Symbol('d').description".into(),
            Use::Proto => "({}).__proto__ === Object.prototype".into(),
            Use::ErrorStack => "typeof new Error('e').stack".into(),
            Use::SizeOfSet => "new Set([1, 1, 2]).size".into(),
            Use::Split(index) => {
                let (pattern, flags, subject) = regexp(index);
                format!("spec({pattern:?}, {flags:?}, (re) => {subject:?}.split(re))")
            }
            Use::Replace(index) => {
                let (pattern, flags, subject) = regexp(index);
                format!(
                    "spec({pattern:?}, {flags:?}, (re) => {subject:?}.replace(re, '[$&$1$<l>]'))"
                )
            }
            Use::Search(index) => {
                let (pattern, flags, subject) = regexp(index);
                format!("spec({pattern:?}, {flags:?}, (re) => [re.test({subject:?}), re.lastIndex, {subject:?}.search(re)])")
            }
            Use::Concatenate(count) => format!(
                "(() => {{ let s = 'a'; for (let i = 0; i < {}; i++) s += i; return s.length }})()",
                count
            ),
            Use::IteratorDrop(count) => {
                format!("[1, 2, 3].values().drop({}).toArray().length", count % 5)
            }
            Use::SetMethod(which) => {
                let method = [
                    "union",
                    "intersection",
                    "difference",
                    "symmetricDifference",
                    "isSubsetOf",
                    "isSupersetOf",
                    "isDisjointFrom",
                ][usize::from(which) % 7];
                format!("String(new Set([1, 2, 3]).{method}({{ size: 2, has: (x) => x > 1, keys: () => [2, 4].values() }}))")
            }
        }
    }
}

/// Where the first attempt of the uses fails.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Fault {
    None,
    Allocation { at: u16, persistent: bool },
    InterruptCheck { at: u16 },
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Case {
    pub tampers: Vec<Tamper>,
    pub uses: Vec<Use>,
    pub fault: Fault,
}

/// What every program starts with: the trap helpers (they take what they need before the
/// program changes anything), and `spec`, which runs a RegExp use twice, on a RegExp and on an
/// instance of a subclass (never on a fast path), and reports whether both agree.
const PRELUDE: &str = r#"
const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf, setPrototypeOf } = Object;
const { apply } = Reflect;
const JsonStringify = JSON.stringify;
const ProxyCtor = Proxy;
const RegExpCtor = RegExp;
globalThis.armed = false;
const accessor = (object, key, act) => {
  const d = getOwnPropertyDescriptor(object, key);
  const get = d === undefined ? () => undefined : 'value' in d ? () => d.value : d.get;
  const set = d && d.set;
  try {
    defineProperty(object, key, {
      configurable: true,
      get() { if (armed) act(); return get && apply(get, this, []); },
      set(v) { if (armed) act(); if (set) apply(set, this, [v]); },
    });
  } catch {}
};
const proxyPrototype = (object, act) => {
  try {
    const target = getPrototypeOf(object) || {};
    const trap = (name) => (...args) => { if (armed) act(); return apply(Reflect[name], null, args); };
    const handler = {};
    for (const name of ['get', 'has', 'set', 'getOwnPropertyDescriptor', 'defineProperty', 'ownKeys', 'getPrototypeOf'])
      handler[name] = trap(name);
    setPrototypeOf(object, new ProxyCtor(target, handler));
  } catch {}
};
class SpecRegExp extends RegExpCtor {}
const spec = (pattern, flags, use) => {
  let fast, slow;
  try { fast = JsonStringify(use(new RegExpCtor(pattern, flags))); } catch (e) { fast = 'threw ' + e; }
  try { slow = JsonStringify(use(new SpecRegExp(pattern, flags))); } catch (e) { slow = 'threw ' + e; }
  return fast === slow ? fast : `FAST PATH DIFFERS: ${fast} / ${slow}`;
};
const attempt = (use) => { try { return String(use()); } catch (e) { return 'threw ' + String(e); } };
"#;

impl Case {
    /// The program that changes the realm (run without faults).
    pub fn setup(&self) -> String {
        let mut code = String::from(PRELUDE);
        for (index, tamper) in self.tampers.iter().take(16).enumerate() {
            let act = |actions: &[Action]| {
                let body: String = actions.iter().take(4).map(|action| action.js()).collect();
                format!("() => {{ {body} }}")
            };
            let line = match tamper {
                Tamper::Accessor {
                    target,
                    key,
                    actions,
                } => {
                    format!("accessor({}, {}, {});", target.js(), key.js(), act(actions))
                }
                Tamper::ProxyPrototype { target, actions } => {
                    format!("proxyPrototype({}, {});", target.js(), act(actions))
                }
                Tamper::DeleteGlobal(lazy) => format!("delete globalThis.{};", lazy.name()),
                Tamper::DefineGlobal(lazy) => format!("globalThis.{} = {index};", lazy.name()),
                Tamper::ShadowGlobal(lazy) => format!("let {} = 'lexical {index}';", lazy.name()),
                Tamper::Freeze(target) => {
                    format!("try {{ Object.freeze({}) }} catch {{}}", target.js())
                }
                Tamper::PreventExtensions(target) => {
                    format!(
                        "try {{ Object.preventExtensions({}) }} catch {{}}",
                        target.js()
                    )
                }
                Tamper::GrowGlobal(count) => {
                    format!(
                        "for (let i = 0; i < {}; i++) globalThis['g{index}_' + i] = i;",
                        u16::from(*count) * 16
                    )
                }
            };
            // A lexical binding must stay at the top level; the rest may throw.
            if matches!(tamper, Tamper::ShadowGlobal(_)) {
                code.push_str(&line);
            } else {
                write!(code, "try {{ {line} }} catch {{}}").unwrap();
            }
            code.push('\n');
        }
        code.push_str("armed = true; 'set up'");
        code
    }

    /// The uses, reported as one string.
    pub fn uses(&self) -> String {
        let uses: Vec<String> = self
            .uses
            .iter()
            .take(12)
            .map(|use_| format!("attempt(() => {})", use_.js()))
            .collect();
        format!("JsonStringify([{}])", uses.join(", "))
    }
}

/// Where a context's built-ins come from.
#[derive(Clone, Copy)]
pub enum Made {
    AtOnce,
    OnFirstUse,
}

/// A context of `runtime` whose lazily made groups are `made` at once or on first use.
pub fn context(runtime: &Runtime, made: Made) -> Context {
    match made {
        Made::AtOnce => Context::full(runtime).expect("context"),
        Made::OnFirstUse => {
            let context = Context::base(runtime).expect("context");
            context.with(|ctx| {
                // SAFETY: a new context of the runtime, locked by `with`.
                let added = unsafe { JS_AddStandardIntrinsics(ctx.as_raw().as_ptr(), 0b1_1111) };
                assert_eq!(added, 0, "the lazy groups' placeholders");
            });
            context
        }
    }
}

/// `code`'s answer, or the exception it threw, as text.
pub fn eval(context: &Context, code: &str) -> String {
    context.with(|ctx| match ctx.eval::<String, _>(code) {
        Ok(answer) => answer,
        Err(_) => format!("threw {:?}", ctx.catch()),
    })
}

/// A runtime for one program: a heap limit and a stack limit, so that programs that grow
/// without end stop with QuickJS's own errors.
pub fn runtime() -> Runtime {
    let runtime = Runtime::new().expect("runtime");
    runtime.set_memory_limit(64 * 1024 * 1024);
    runtime.set_max_stack_size(256 * 1024);
    runtime
}

/// Checks `case` (see the module's comment); panics on a violation.
pub fn check_case(case: &Case) {
    let setup = case.setup();
    let uses = case.uses();
    // The differential: made on first use or at once, the same answers.
    let answers = |made| {
        let runtime = runtime();
        let context = context(&runtime, made);
        let set_up = eval(&context, &setup);
        let first = eval(&context, &uses);
        let again = eval(&context, &uses);
        (set_up, first, again)
    };
    let at_once = answers(Made::AtOnce);
    let on_first_use = answers(Made::OnFirstUse);
    assert_eq!(
        on_first_use, at_once,
        "made on first use vs at once:\n{setup}\n{uses}"
    );
    assert!(
        !at_once.1.contains("FAST PATH DIFFERS"),
        "a RegExp fast path differs from the spec path: {}\n{setup}\n{uses}",
        at_once.1
    );
    // The uses failed once at the chosen allocation or interrupt check, then run again: the
    // realm must end as if they had only run (twice) without failing.
    if matches!(case.fault, Fault::None) {
        return;
    }
    let fault = land(case.fault, &setup, &uses);
    let runtime = runtime();
    let context = context(&runtime, Made::OnFirstUse);
    eval(&context, &setup);
    arm(fault);
    // Whatever the failed attempt answers (the program may catch the error).
    let _ = eval(&context, &uses);
    disarm();
    // The second attempt's answers may differ (a trap that fired in the failed attempt or not),
    // but the realm's state after it may not: every trap's actions are idempotent.
    eval(&context, &uses);
    let state = eval(&context, STATE);
    let reference_runtime = self::runtime();
    let reference = self::context(&reference_runtime, Made::OnFirstUse);
    eval(&reference, &setup);
    eval(&reference, &uses);
    eval(&reference, &uses);
    assert_eq!(
        state,
        eval(&reference, STATE),
        "after a first attempt failed at {fault:?}:\n{setup}\n{uses}"
    );
}

/// `fault` moved onto one of the allocations or interrupt checks the uses make (counted in a
/// context set up the same way), so that every input fails somewhere in them.
fn land(fault: Fault, setup: &str, uses: &str) -> Fault {
    let runtime = runtime();
    let context = context(&runtime, Made::OnFirstUse);
    eval(&context, setup);
    // SAFETY: the hooks store into and load atomic counters.
    let count = unsafe {
        match fault {
            Fault::None => return fault,
            Fault::Allocation { .. } => JS_SesFaultInject(0, 0),
            Fault::InterruptCheck { .. } => JS_SesInterruptInject(i64::MAX),
        }
        eval(&context, uses);
        let count = match fault {
            Fault::Allocation { .. } => JS_SesAllocationCount(),
            _ => JS_SesInterruptCheckCount(),
        };
        disarm();
        u16::try_from(count.max(1)).unwrap_or(u16::MAX)
    };
    match fault {
        Fault::Allocation { at, persistent } => Fault::Allocation {
            at: at % count,
            persistent,
        },
        Fault::InterruptCheck { at } => Fault::InterruptCheck { at: at % count },
        Fault::None => Fault::None,
    }
}

/// The realm's state the uses could leave half made: each lazy global (its kind, and what its
/// group's objects are), read without the program's traps armed.
const STATE: &str = r#"
armed = false;
JsonStringify([
  ...['Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'ArrayBuffer', 'SharedArrayBuffer', 'Uint8Array',
      'Float64Array', 'BigInt64Array', 'DataView', 'Atomics', 'WeakRef', 'FinalizationRegistry',
      'DOMException'].map((name) => {
    const d = getOwnPropertyDescriptor(globalThis, name);
    return d === undefined ? 'absent' : typeof d.value;
  }),
  attempt(() => new Date(3).getTime()),
  attempt(() => new Map([[1, 2]]).get(1)),
  attempt(() => new Float64Array([0.5])[0]),
  attempt(() => getPrototypeOf(Int8Array.prototype).toString === Array.prototype.toString),
  attempt(() => new DOMException('m', 'SyntaxError').code),
  attempt(() => /a/g.flags),
  attempt(() => 'a b'.split(/ /).length),
])
"#;

/// Arms the allocation or interrupt-check failure of `fault` (process-wide: one at a time).
pub fn arm(fault: Fault) {
    // SAFETY: the hooks store into atomic counters.
    unsafe {
        match fault {
            Fault::None => {}
            Fault::Allocation { at, persistent } => {
                JS_SesFaultInject(i64::from(at) + 1, c_int::from(persistent))
            }
            Fault::InterruptCheck { at } => JS_SesInterruptInject(i64::from(at) + 1),
        }
    }
}

/// Stops refusing allocations and failing interrupt checks.
pub fn disarm() {
    // SAFETY: as in `arm`.
    unsafe {
        JS_SesFaultInject(0, 0);
        JS_SesInterruptInject(0);
    }
}

/// Interrupt checks counted since the last arming (for the driver's statistics and tests).
pub fn interrupt_checks() -> i64 {
    // SAFETY: loads an atomic counter.
    unsafe { JS_SesInterruptCheckCount() }
}
