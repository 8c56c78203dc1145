//! Node.js-compatible formatting of `console.log` arguments for QuickJS values.
//!
//! This is a port of Node 20's `util.formatWithOptions` and `util.inspect`
//! (`lib/internal/util/inspect.js`) with Node's default inspect options (depth 2, no colors,
//! compact 3, breakLength 80, maxArrayLength 100, maxStringLength 10000). Function and variable
//! names follow the Node source so the two can be compared side by side.
//!
//! Formatting must never run sandbox code where Node would not, so every read goes through own
//! property descriptors (getters are shown as `[Getter]`, never called) or through the engine's
//! native built-ins taken from the realm's intrinsic prototypes (Node uses its primordials for the
//! same purpose). The only places that run user code are the ones where Node does too: `%s` on an
//! object with its own `toString`, and `%j` (`JSON.stringify`, which calls `toJSON`).
//!
//! Failures never escape: a throwing Proxy trap or an engine error while reading is cleared from
//! the context and replaced by what Node prints or a neutral placeholder. Work is bounded by the
//! depth limit, `maxArrayLength`, `maxStringLength`, a cap on prototype-chain walks and an output
//! budget.
//!
//! Where QuickJS or the no-user-code rule forces a difference from Node:
//! - QuickJS keeps only the frame lines in `err.stack`, so the `Name: message` header is rebuilt
//!   from the `name` and `message` data properties and put in front of them.
//! - Custom `[util.inspect.custom]` hooks, getters (also `Symbol.toStringTag` and `name` getters)
//!   and `Symbol.hasInstance` are never called.
//! - Classes are recognised by their non-writable `prototype` property instead of their source.
//! - Map and Set iterators print `<items unknown>`: they cannot be previewed without advancing.
//! - `%d`, `%i` and `%f` print `NaN` for objects instead of converting them.
//! - `%o` shows QuickJS's own properties (no `arguments`/`caller` on functions) and no inherited
//!   accessors.

use std::ffi::c_void;
use std::ptr;

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::promise::PromiseState;
use rquickjs::{qjs, Coerced, Ctx, Function, Type, Value};

const BREAK_LENGTH: usize = 80;
const COMPACT: i64 = 3;
const MAX_ARRAY_LENGTH: usize = 100;
const MAX_STRING_LENGTH: usize = 10_000;
const DEFAULT_DEPTH: i64 = 2;
/// Node gives up on nested detail once one indentation level produced 2^27 characters; a lower
/// cap keeps a hostile object graph from building hundreds of megabytes of output.
const OUTPUT_BUDGET: usize = 1 << 24;
/// Prototype chains are walked for constructor names and inherited data properties; a chain this
/// long only exists to slow the formatter down.
const MAX_PROTO_HOPS: usize = 1_000;
/// Nested proxies are unwrapped to their final target; deeper nesting is treated as revoked.
const MAX_PROXY_HOPS: usize = 1_000;
/// QuickJS stores array indices up to 2^31 - 2 as tagged integer atoms.
const ATOM_TAG_INT: u32 = 1 << 31;

// Class ids of the built-in classes of the quickjs-ng bundled with rquickjs 0.14.0 (the
// `JS_CLASS_*` enum in quickjs.c, which the C header does not export). The test
// `class_ids_match_bundled_quickjs` pins them.
pub(super) const CLASS_OBJECT: u32 = 1;
pub(super) const CLASS_ARRAY: u32 = 2;
pub(super) const CLASS_ERROR: u32 = 3;
pub(super) const CLASS_NUMBER: u32 = 4;
pub(super) const CLASS_STRING: u32 = 5;
pub(super) const CLASS_BOOLEAN: u32 = 6;
const CLASS_SYMBOL: u32 = 7;
const CLASS_ARGUMENTS: u32 = 8;
const CLASS_MAPPED_ARGUMENTS: u32 = 9;
pub(super) const CLASS_DATE: u32 = 10;
const CLASS_MODULE_NS: u32 = 11;
pub(super) const CLASS_C_FUNCTION: u32 = 12;
const CLASS_BYTECODE_FUNCTION: u32 = 13;
const CLASS_GENERATOR_FUNCTION: u32 = 17;
pub(super) const CLASS_REGEXP: u32 = 19;
pub(super) const CLASS_ARRAY_BUFFER: u32 = 20;
pub(super) const CLASS_SHARED_ARRAY_BUFFER: u32 = 21;
const CLASS_UINT8C_ARRAY: u32 = 22;
const CLASS_INT8_ARRAY: u32 = 23;
const CLASS_UINT8_ARRAY: u32 = 24;
const CLASS_INT16_ARRAY: u32 = 25;
const CLASS_UINT16_ARRAY: u32 = 26;
const CLASS_INT32_ARRAY: u32 = 27;
const CLASS_UINT32_ARRAY: u32 = 28;
const CLASS_BIG_INT64_ARRAY: u32 = 29;
const CLASS_BIG_UINT64_ARRAY: u32 = 30;
const CLASS_FLOAT16_ARRAY: u32 = 31;
const CLASS_FLOAT32_ARRAY: u32 = 32;
const CLASS_FLOAT64_ARRAY: u32 = 33;
const CLASS_DATAVIEW: u32 = 34;
pub(super) const CLASS_BIG_INT: u32 = 35;
pub(super) const CLASS_MAP: u32 = 36;
pub(super) const CLASS_SET: u32 = 37;
const CLASS_WEAKMAP: u32 = 38;
const CLASS_WEAKSET: u32 = 39;
const CLASS_MAP_ITERATOR: u32 = 44;
const CLASS_SET_ITERATOR: u32 = 45;
const CLASS_PROMISE: u32 = 52;
const CLASS_ASYNC_FUNCTION: u32 = 55;
const CLASS_ASYNC_GENERATOR_FUNCTION: u32 = 59;

/// Global constructor names Node treats as built-in (`builtInObjects`: the capitalised own
/// properties of Node's `globalThis`).
const BUILT_IN_OBJECTS: &[&str] = &[
    "Object",
    "Function",
    "Array",
    "Number",
    "Infinity",
    "NaN",
    "Boolean",
    "String",
    "Symbol",
    "Date",
    "Promise",
    "RegExp",
    "Error",
    "AggregateError",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "JSON",
    "Math",
    "Intl",
    "ArrayBuffer",
    "Uint8Array",
    "Int8Array",
    "Uint16Array",
    "Int16Array",
    "Uint32Array",
    "Int32Array",
    "Float32Array",
    "Float64Array",
    "Uint8ClampedArray",
    "BigUint64Array",
    "BigInt64Array",
    "DataView",
    "Map",
    "BigInt",
    "Set",
    "WeakMap",
    "WeakSet",
    "Proxy",
    "Reflect",
    "FinalizationRegistry",
    "WeakRef",
    "SharedArrayBuffer",
    "Atomics",
    "WebAssembly",
    "URL",
    "URLSearchParams",
    "TextEncoder",
    "TextDecoder",
    "DOMException",
];

/// Formats console arguments the way Node's `util.format` does: a first string argument is a
/// format string (%s %d %i %f %j %o %O %c %%), remaining arguments are appended separated by a
/// space, strings raw, everything else through `inspect`.
pub fn format_log_args<'js>(ctx: &rquickjs::Ctx<'js>, args: &[rquickjs::Value<'js>]) -> String {
    let Some(first) = args.first() else {
        return String::new();
    };
    let mut a = 0usize;
    let mut out = String::new();
    let mut join = "";

    if first.is_string() {
        let first = lossy(&js_string_units(ctx, first).unwrap_or_default());
        if args.len() == 1 {
            return first;
        }
        let bytes = first.as_bytes();
        let mut last_pos = 0usize;
        let mut i = 0usize;
        // Every byte this loop stops at is ASCII, so slicing at those offsets stays on char
        // boundaries.
        while i + 1 < bytes.len() {
            if bytes[i] == b'%' {
                i += 1;
                let next = bytes[i];
                if a + 1 != args.len() {
                    let temp = match next {
                        b's' => {
                            a += 1;
                            format_percent_s(ctx, &args[a])
                        }
                        b'j' => {
                            a += 1;
                            json_stringify(ctx, &args[a])
                        }
                        b'd' => {
                            a += 1;
                            format_percent_number(ctx, &args[a], NumberParse::Number)
                        }
                        b'O' => {
                            a += 1;
                            inspect_with(ctx, &args[a], DEFAULT_DEPTH, false, false)
                        }
                        b'o' => {
                            a += 1;
                            inspect_with(ctx, &args[a], 4, true, true)
                        }
                        b'i' => {
                            a += 1;
                            format_percent_number(ctx, &args[a], NumberParse::Int)
                        }
                        b'f' => {
                            a += 1;
                            format_percent_number(ctx, &args[a], NumberParse::Float)
                        }
                        b'c' => {
                            a += 1;
                            String::new()
                        }
                        b'%' => {
                            out.push_str(&first[last_pos..i]);
                            last_pos = i + 1;
                            i += 1;
                            continue;
                        }
                        _ => {
                            i += 1;
                            continue;
                        }
                    };
                    if last_pos != i - 1 {
                        out.push_str(&first[last_pos..i - 1]);
                    }
                    out.push_str(&temp);
                    last_pos = i + 1;
                } else if next == b'%' {
                    out.push_str(&first[last_pos..i]);
                    last_pos = i + 1;
                }
            }
            i += 1;
        }
        if last_pos != 0 {
            a += 1;
            join = " ";
            if last_pos < first.len() {
                out.push_str(&first[last_pos..]);
            }
        }
    }

    while a < args.len() {
        let value = &args[a];
        out.push_str(join);
        if value.is_string() {
            out.push_str(&lossy(&js_string_units(ctx, value).unwrap_or_default()));
        } else {
            out.push_str(&inspect(ctx, value));
        }
        join = " ";
        a += 1;
    }
    out
}

/// `util.inspect(value)` with Node's defaults (strings quoted at top level).
pub fn inspect<'js>(ctx: &rquickjs::Ctx<'js>, value: &rquickjs::Value<'js>) -> String {
    inspect_with(ctx, value, DEFAULT_DEPTH, false, false)
}

fn inspect_with<'js>(
    ctx: &Ctx<'js>,
    value: &Value<'js>,
    depth: i64,
    show_hidden: bool,
    show_proxy: bool,
) -> String {
    let mut inspector = Inspector::new(ctx, depth, show_hidden, show_proxy);
    inspector.format_value(value, 0, false)
}

// ---------------------------------------------------------------------------------------------
// format specifiers

/// `%s`: primitives through `String()`, numbers and bigints like inspect, objects through a
/// depth-0 inspect unless they bring their own `toString`.
fn format_percent_s<'js>(ctx: &Ctx<'js>, arg: &Value<'js>) -> String {
    match arg.type_of() {
        Type::Int | Type::Float => format_number(arg.as_number().unwrap_or(f64::NAN)),
        Type::BigInt => format!("{}n", primitive_to_string(ctx, arg)),
        Type::String => lossy(&js_string_units(ctx, arg).unwrap_or_default()),
        Type::Symbol => lossy(&symbol_to_string_units(ctx, arg)),
        Type::Undefined | Type::Uninitialized => "undefined".into(),
        Type::Null => "null".into(),
        Type::Bool => primitive_to_string(ctx, arg),
        _ if !arg.is_object() => primitive_to_string(ctx, arg),
        _ => {
            let mut probe = Inspector::new(ctx, 0, false, false);
            if !arg.is_function() && probe.has_built_in_to_string(arg) {
                return inspect_with(ctx, arg, 0, false, false);
            }
            // Node calls `String(value)` here, which runs the object's own `toString`.
            match arg.get::<Coerced<rquickjs::String>>() {
                Ok(s) => lossy(&js_string_units(ctx, s.0.as_value()).unwrap_or_default()),
                Err(_) => {
                    let _ = ctx.catch();
                    inspect_with(ctx, arg, 0, false, false)
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum NumberParse {
    Number,
    Int,
    Float,
}

/// `%d`, `%i` and `%f`. Objects print `NaN`: converting them would run their `valueOf` /
/// `toString`, which formatting never does.
fn format_percent_number<'js>(ctx: &Ctx<'js>, arg: &Value<'js>, kind: NumberParse) -> String {
    match arg.type_of() {
        Type::BigInt if !matches!(kind, NumberParse::Float) => {
            format!("{}n", primitive_to_string(ctx, arg))
        }
        Type::Symbol => "NaN".into(),
        _ if arg.is_object() => "NaN".into(),
        _ => match kind {
            NumberParse::Number => {
                let n = match arg.get::<Coerced<f64>>() {
                    Ok(n) => n.0,
                    Err(_) => {
                        let _ = ctx.catch();
                        f64::NAN
                    }
                };
                format_number(n)
            }
            NumberParse::Int => format_number(parse_int(&primitive_to_string(ctx, arg))),
            NumberParse::Float => format_number(parse_float(&primitive_to_string(ctx, arg))),
        },
    }
}

/// `%j`: `JSON.stringify`, with `'[Circular]'` for cyclic input like Node. Other exceptions, which
/// Node would throw out of `console.log`, are printed as `[Name: message]`.
fn json_stringify<'js>(ctx: &Ctx<'js>, arg: &Value<'js>) -> String {
    match ctx.json_stringify(arg.clone()) {
        Ok(Some(s)) => lossy(&js_string_units(ctx, s.as_value()).unwrap_or_default()),
        Ok(None) => "undefined".into(),
        Err(_) => {
            let exc = ctx.catch();
            let mut inspector = Inspector::new(ctx, 0, false, false);
            let header = if exc.is_object() {
                inspector.error_header(&exc)
            } else {
                inspector.format_value(&exc, 0, false)
            };
            let name = if exc.is_object() {
                inspector.data_get_str(&exc, "name")
            } else {
                None
            };
            if name.as_deref() == Some("TypeError") && header.contains("circular") {
                "[Circular]".into()
            } else {
                format!("[{header}]")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the inspector

#[derive(Clone, Copy, PartialEq, Eq)]
enum PropType {
    Object,
    Array,
    ArrayExtras,
}

/// What an own property holds, read without running accessors.
pub(super) enum PropValue<'js> {
    Data(Value<'js>),
    Accessor {
        get: bool,
        set: bool,
    },
    /// Reading threw (an uninitialized module binding is the only ordinary cause).
    Unreadable,
}

pub(super) struct PropDesc<'js> {
    pub(super) value: PropValue<'js>,
    pub(super) enumerable: bool,
    pub(super) writable: bool,
}

/// How a property key is displayed.
enum KeyLabel {
    Str(Vec<u16>),
    /// `Symbol(description)`.
    Sym(Vec<u16>),
}

struct PropKey<'js> {
    /// `None` for keys Node adds itself (`byteLength`, ...) whose value is precomputed.
    atom: Option<OwnedAtom<'js>>,
    label: KeyLabel,
    value: Option<Value<'js>>,
}

impl PropKey<'_> {
    fn is_named(&self, name: &str) -> bool {
        matches!(&self.label, KeyLabel::Str(u) if units_eq(u, name))
    }
}

/// The entry formatter `formatRaw` picks before the keys are appended.
enum Formatter<'js> {
    None,
    Array,
    Set,
    Map,
    TypedArray(TypedArrayInfo<'js>),
    ArrayBuffer,
    Promise,
    ItemsUnknown,
}

/// What `groupArrayElements` needs to know about the elements behind the output entries.
enum Elements<'js> {
    Unknown,
    Array(Value<'js>),
    TypedArray(usize),
}

struct TypedArrayInfo<'js> {
    class: u32,
    length: usize,
    bytes_per_element: usize,
    byte_offset: usize,
    /// The first `min(length, maxArrayLength)` elements.
    bytes: Vec<u8>,
    buffer: Option<Value<'js>>,
}

/// Node's inspect `ctx`: options plus the state of one top-level `inspect` call.
pub(super) struct Inspector<'a, 'js> {
    ctx: &'a Ctx<'js>,
    /// Lowered to -1 once the output budget is spent, as Node does.
    depth: i64,
    show_hidden: bool,
    show_proxy: bool,
    indentation_lvl: usize,
    /// Depth of the object most recently entered; drives the `compact` line joining.
    current_depth: i64,
    /// Objects on the path from the root, for `[Circular *n]`.
    seen: Vec<Value<'js>>,
    /// Objects referenced circularly; position + 1 is the `*n` reference number.
    circular: Vec<Value<'js>>,
    /// Output length produced per indentation level.
    budget: Vec<usize>,
}

impl<'a, 'js> Inspector<'a, 'js> {
    pub(super) fn new(ctx: &'a Ctx<'js>, depth: i64, show_hidden: bool, show_proxy: bool) -> Self {
        Inspector {
            ctx,
            depth,
            show_hidden,
            show_proxy,
            indentation_lvl: 0,
            current_depth: 0,
            seen: Vec::new(),
            circular: Vec::new(),
            budget: Vec::new(),
        }
    }

    fn raw_ctx(&self) -> *mut qjs::JSContext {
        self.ctx.as_raw().as_ptr()
    }

    fn clear_exception(&self) {
        let _ = self.ctx.catch();
    }

    // -----------------------------------------------------------------------------------------
    // formatValue / formatRaw

    fn format_value(
        &mut self,
        value: &Value<'js>,
        recurse_times: i64,
        typed_array: bool,
    ) -> String {
        if !value.is_object() {
            return self.format_primitive(value);
        }
        let mut value = value.clone();
        if value.is_proxy() {
            if self.show_proxy {
                return self.format_proxy(&value, recurse_times);
            }
            // Node formats the target so that no trap runs.
            match self.proxy_target(&value) {
                Some(target) => value = target,
                None => return "<Revoked Proxy>".into(),
            }
        }
        if self.seen.contains(&value) {
            let index = match self.circular.iter().position(|v| v == &value) {
                Some(p) => p + 1,
                None => {
                    self.circular.push(value.clone());
                    self.circular.len()
                }
            };
            return format!("[Circular *{index}]");
        }
        self.format_raw(&value, recurse_times, typed_array)
    }

    /// The innermost non-proxy target, or `None` for a revoked proxy.
    fn proxy_target(&self, value: &Value<'js>) -> Option<Value<'js>> {
        let mut current = value.clone();
        for _ in 0..MAX_PROXY_HOPS {
            let Some(proxy) = current.as_proxy() else {
                return Some(current);
            };
            match proxy.target() {
                Ok(target) => current = target.into_value(),
                Err(_) => {
                    self.clear_exception();
                    return None;
                }
            }
        }
        None
    }

    fn format_proxy(&mut self, proxy: &Value<'js>, recurse_times: i64) -> String {
        let Some(p) = proxy.as_proxy() else {
            return "<Revoked Proxy>".into();
        };
        let parts = p.target().and_then(|t| p.handler().map(|h| (t, h)));
        let Ok((target, handler)) = parts else {
            self.clear_exception();
            return "<Revoked Proxy>".into();
        };
        if recurse_times > self.depth {
            return "Proxy [Array]".into();
        }
        let recurse_times = recurse_times + 1;
        self.indentation_lvl += 2;
        let res = vec![
            self.format_value(target.as_value(), recurse_times, false),
            self.format_value(handler.as_value(), recurse_times, false),
        ];
        self.indentation_lvl -= 2;
        let braces = ["Proxy [".to_string(), "]".to_string()];
        self.reduce_to_single_string(
            res,
            "",
            &braces,
            PropType::ArrayExtras,
            recurse_times,
            &Elements::Unknown,
        )
    }

    fn format_raw(&mut self, value: &Value<'js>, recurse_times: i64, typed_array: bool) -> String {
        let class = class_id(value);
        let constructor = self.get_constructor_name(value, recurse_times);
        let ctor = constructor.as_deref();
        let tag = self.to_string_tag(value, class);

        let mut base = String::new();
        let mut braces = ["{".to_string(), "}".to_string()];
        let mut extras_type = PropType::Object;
        let mut formatter = Formatter::None;
        let mut elements = Elements::Unknown;
        let keys: Vec<PropKey<'js>>;

        if class == CLASS_ARRAY {
            let length = self.array_length(value);
            let prefix = if ctor != Some("Array") || !tag.is_empty() {
                get_prefix(ctor, &tag, "Array", &format!("({length})"))
            } else {
                String::new()
            };
            keys = self.get_keys(value, true);
            braces = [format!("{prefix}["), "]".to_string()];
            if length == 0 && keys.is_empty() {
                return format!("{}]", braces[0]);
            }
            extras_type = PropType::ArrayExtras;
            formatter = Formatter::Array;
            elements = Elements::Array(value.clone());
        } else if class == CLASS_SET || class == CLASS_MAP {
            let (fallback, kind) = if class == CLASS_SET {
                ("Set", Formatter::Set)
            } else {
                ("Map", Formatter::Map)
            };
            keys = self.get_keys(value, false);
            match self.collection_size(value, class) {
                Some(size) => {
                    let prefix = get_prefix(ctor, &tag, fallback, &format!("({size})"));
                    if size == 0 && keys.is_empty() {
                        return format!("{prefix}{{}}");
                    }
                    formatter = kind;
                    braces = [format!("{prefix}{{"), "}".to_string()];
                }
                // The built-in `size` getter was replaced, so the entries cannot be read either.
                None => {
                    formatter = Formatter::ItemsUnknown;
                    braces = [
                        format!("{}{{", get_prefix(ctor, &tag, fallback, "")),
                        "}".to_string(),
                    ];
                }
            }
        } else if is_typed_array_class(class) {
            keys = self.get_keys(value, true);
            let fallback = if ctor.is_none() {
                typed_array_name(class)
            } else {
                ""
            };
            let info = self.typed_array_info(value, class);
            let size = info.length;
            let prefix = get_prefix(ctor, &tag, fallback, &format!("({size})"));
            braces = [format!("{prefix}["), "]".to_string()];
            if size == 0 && keys.is_empty() && !self.show_hidden {
                return format!("{}]", braces[0]);
            }
            formatter = Formatter::TypedArray(info);
            extras_type = PropType::ArrayExtras;
            elements = Elements::TypedArray(size);
        } else if class == CLASS_MAP_ITERATOR || class == CLASS_SET_ITERATOR {
            keys = self.get_keys(value, false);
            let kind = if class == CLASS_MAP_ITERATOR {
                "Map"
            } else {
                "Set"
            };
            braces = get_iterator_braces(kind, &tag);
            // Node previews the remaining entries without consuming them; QuickJS offers no way
            // to do that, and advancing the iterator would change the program's state.
            formatter = Formatter::ItemsUnknown;
        } else {
            let mut keys_vec = self.get_keys(value, false);
            if value.is_function() {
                base = self.get_function_base(value, class, ctor, &tag);
                if keys_vec.is_empty() {
                    return base;
                }
            } else if ctor == Some("Object") {
                if class == CLASS_ARGUMENTS || class == CLASS_MAPPED_ARGUMENTS {
                    braces[0] = "[Arguments] {".into();
                } else if !tag.is_empty() {
                    braces[0] = format!("{}{{", get_prefix(ctor, &tag, "Object", ""));
                }
                if keys_vec.is_empty() {
                    return format!("{}}}", braces[0]);
                }
            } else if class == CLASS_REGEXP {
                base = self.regexp_to_string(value);
                let prefix = get_prefix(ctor, &tag, "RegExp", "");
                if prefix != "RegExp " {
                    base = format!("{prefix}{base}");
                }
                if keys_vec.is_empty() || recurse_times > self.depth {
                    return base;
                }
            } else if class == CLASS_DATE {
                base = self.date_to_string(value);
                let prefix = get_prefix(ctor, &tag, "Date", "");
                if prefix != "Date " {
                    base = format!("{prefix}{base}");
                }
                if keys_vec.is_empty() {
                    return base;
                }
            } else if self.is_error(value) {
                base = self.format_error(value, ctor, &tag, &mut keys_vec);
                if keys_vec.is_empty() {
                    return base;
                }
            } else if class == CLASS_ARRAY_BUFFER || class == CLASS_SHARED_ARRAY_BUFFER {
                let array_type = if class == CLASS_ARRAY_BUFFER {
                    "ArrayBuffer"
                } else {
                    "SharedArrayBuffer"
                };
                let prefix = get_prefix(ctor, &tag, array_type, "");
                let byte_length = self.array_buffer_bytes(value, 0).map_or(0, |(len, _)| len);
                if !typed_array {
                    formatter = Formatter::ArrayBuffer;
                } else if keys_vec.is_empty() {
                    return format!("{prefix}{{ byteLength: {} }}", byte_length);
                }
                braces[0] = format!("{prefix}{{");
                keys_vec.insert(
                    0,
                    self.virtual_key("byteLength", number_value(self.ctx, byte_length as f64)),
                );
            } else if class == CLASS_DATAVIEW {
                braces[0] = format!("{}{{", get_prefix(ctor, &tag, "DataView", ""));
                let mut extra = Vec::new();
                for name in ["byteLength", "byteOffset", "buffer"] {
                    let v = self
                        .call_native(CLASS_DATAVIEW, name, true, value)
                        .unwrap_or_else(|| Value::new_undefined(self.ctx.clone()));
                    extra.push(self.virtual_key(name, v));
                }
                extra.append(&mut keys_vec);
                keys_vec = extra;
            } else if class == CLASS_PROMISE {
                braces[0] = format!("{}{{", get_prefix(ctor, &tag, "Promise", ""));
                formatter = Formatter::Promise;
            } else if class == CLASS_WEAKSET || class == CLASS_WEAKMAP {
                let name = if class == CLASS_WEAKSET {
                    "WeakSet"
                } else {
                    "WeakMap"
                };
                braces[0] = format!("{}{{", get_prefix(ctor, &tag, name, ""));
                formatter = Formatter::ItemsUnknown;
            } else if class == CLASS_MODULE_NS {
                braces[0] = format!("{}{{", get_prefix(ctor, &tag, "Module", ""));
            } else if is_boxed_class(class) {
                base = self.get_boxed_base(value, class, &mut keys_vec, ctor, &tag);
                if keys_vec.is_empty() {
                    return base;
                }
            } else {
                let style = self.get_ctx_style(value, ctor, &tag);
                if keys_vec.is_empty() {
                    return format!("{style}{{}}");
                }
                braces[0] = format!("{style}{{");
            }
            keys = keys_vec;
        }

        if recurse_times > self.depth {
            let style = self.get_ctx_style(value, ctor, &tag);
            let name = style.strip_suffix(' ').unwrap_or(&style);
            return if ctor.is_some() {
                format!("[{name}]")
            } else {
                name.to_string()
            };
        }
        let recurse_times = recurse_times + 1;
        self.seen.push(value.clone());
        self.current_depth = recurse_times;

        let mut output = match formatter {
            Formatter::None => Vec::new(),
            Formatter::Array => self.format_array(value, recurse_times),
            Formatter::Set => self.format_set(value, recurse_times),
            Formatter::Map => self.format_map(value, recurse_times),
            Formatter::TypedArray(info) => self.format_typed_array(&info, recurse_times),
            Formatter::ArrayBuffer => vec![self.format_array_buffer(value)],
            Formatter::Promise => self.format_promise(value, recurse_times),
            Formatter::ItemsUnknown => vec!["<items unknown>".to_string()],
        };
        for key in &keys {
            let entry = self.format_property(value, recurse_times, key, extras_type);
            output.push(entry);
        }

        if let Some(index) = self.circular.iter().position(|v| v == value) {
            let reference = format!("<ref *{}>", index + 1);
            base = if base.is_empty() {
                reference
            } else {
                format!("{reference} {base}")
            };
        }
        self.seen.pop();

        let res = self.reduce_to_single_string(
            output,
            &base,
            &braces,
            extras_type,
            recurse_times,
            &elements,
        );
        let lvl = self.indentation_lvl;
        if self.budget.len() <= lvl {
            self.budget.resize(lvl + 1, 0);
        }
        self.budget[lvl] += res.len();
        if self.budget[lvl] > OUTPUT_BUDGET {
            self.depth = -1;
        }
        res
    }

    fn format_primitive(&self, value: &Value<'js>) -> String {
        match value.type_of() {
            Type::String => {
                let units = js_string_units(self.ctx, value).unwrap_or_default();
                self.format_string(&units)
            }
            Type::Int | Type::Float => format_number(value.as_number().unwrap_or(f64::NAN)),
            Type::BigInt => format!("{}n", primitive_to_string(self.ctx, value)),
            Type::Bool => {
                if value.as_bool().unwrap_or(false) {
                    "true".into()
                } else {
                    "false".into()
                }
            }
            Type::Null => "null".into(),
            Type::Symbol => lossy(&symbol_to_string_units(self.ctx, value)),
            _ => "undefined".into(),
        }
    }

    fn format_string(&self, units: &[u16]) -> String {
        let mut value = units;
        let mut trailer = String::new();
        if value.len() > MAX_STRING_LENGTH {
            let remaining = value.len() - MAX_STRING_LENGTH;
            value = &value[..MAX_STRING_LENGTH];
            trailer = format!("... {remaining} more character{}", plural(remaining));
        }
        let limit = BREAK_LENGTH as i64 - self.indentation_lvl as i64 - 4;
        if value.len() > 16 && value.len() as i64 > limit {
            let separator = format!(" +\n{}", " ".repeat(self.indentation_lvl + 2));
            let lines: Vec<String> = split_after_newlines(value)
                .into_iter()
                .map(str_escape)
                .collect();
            return lines.join(&separator) + &trailer;
        }
        str_escape(value) + &trailer
    }

    // -----------------------------------------------------------------------------------------
    // entry formatters

    fn format_array(&mut self, array: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let value_len = self.array_length(array);
        let len = value_len.min(MAX_ARRAY_LENGTH as u64);
        let remaining = value_len - len;
        let mut output = Vec::new();
        for i in 0..len {
            let Some(atom) = OwnedAtom::from_index(self.ctx, i as u32) else {
                return output;
            };
            match self.own_desc(array, atom.raw) {
                Ok(Some(desc)) => {
                    let entry = self.format_property_desc(desc, None, recurse_times);
                    output.push(entry);
                }
                _ => {
                    return self.format_special_array(
                        array,
                        recurse_times,
                        len as usize,
                        output,
                        i,
                    );
                }
            }
        }
        if remaining > 0 {
            output.push(remaining_text(remaining));
        }
        output
    }

    /// The array is sparse and/or has extra keys.
    fn format_special_array(
        &mut self,
        array: &Value<'js>,
        recurse_times: i64,
        max_length: usize,
        mut output: Vec<String>,
        start: u64,
    ) -> Vec<String> {
        let keys = self.own_atoms(
            array,
            qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY,
            false,
        );
        let mut index = start;
        let mut i = start as usize;
        while i < keys.len() && output.len() < max_length {
            let Some(key_index) = self.atom_array_index(&keys[i]) else {
                break;
            };
            if key_index > 4_294_967_294 {
                break;
            }
            if key_index != index {
                let empty = key_index.saturating_sub(index);
                output.push(format!("<{empty} empty item{}>", plural(empty as usize)));
                index = key_index;
                if output.len() == max_length {
                    break;
                }
            }
            match self.own_desc(array, keys[i].raw) {
                Ok(Some(desc)) => {
                    let entry = self.format_property_desc(desc, None, recurse_times);
                    output.push(entry);
                }
                Ok(None) => output.push("undefined".into()),
                Err(()) => output.push("<uninitialized>".into()),
            }
            index += 1;
            i += 1;
        }
        let remaining = self.array_length(array).saturating_sub(index);
        if output.len() != max_length {
            if remaining > 0 {
                output.push(format!(
                    "<{remaining} empty item{}>",
                    plural(remaining as usize)
                ));
            }
        } else if remaining > 0 {
            output.push(remaining_text(remaining));
        }
        output
    }

    fn format_set(&mut self, set: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let size = self.collection_size(set, CLASS_SET).unwrap_or(0);
        let max_length = size.min(MAX_ARRAY_LENGTH);
        let mut output = Vec::new();
        self.indentation_lvl += 2;
        for v in self
            .collection_entries(set, CLASS_SET, max_length)
            .unwrap_or_default()
        {
            output.push(self.format_value(&v, recurse_times, false));
        }
        if size > max_length {
            output.push(remaining_text((size - max_length) as u64));
        }
        self.indentation_lvl -= 2;
        output
    }

    fn format_map(&mut self, map: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let size = self.collection_size(map, CLASS_MAP).unwrap_or(0);
        let max_length = size.min(MAX_ARRAY_LENGTH);
        let mut output = Vec::new();
        self.indentation_lvl += 2;
        for entry in self
            .collection_entries(map, CLASS_MAP, max_length)
            .unwrap_or_default()
        {
            let k = self.index_data(&entry, 0);
            let v = self.index_data(&entry, 1);
            let k = self.format_value(&k, recurse_times, false);
            let v = self.format_value(&v, recurse_times, false);
            output.push(format!("{k} => {v}"));
        }
        if size > max_length {
            output.push(remaining_text((size - max_length) as u64));
        }
        self.indentation_lvl -= 2;
        output
    }

    fn format_typed_array(
        &mut self,
        info: &TypedArrayInfo<'js>,
        recurse_times: i64,
    ) -> Vec<String> {
        let max_length = info.length.min(MAX_ARRAY_LENGTH);
        let mut output: Vec<String> = (0..max_length)
            .map(|i| typed_array_element(info, i))
            .collect();
        if info.length > max_length {
            output.push(remaining_text((info.length - max_length) as u64));
        }
        if self.show_hidden {
            self.indentation_lvl += 2;
            let byte_length = info.length * info.bytes_per_element;
            let numbers = [
                ("BYTES_PER_ELEMENT", info.bytes_per_element),
                ("length", info.length),
                ("byteLength", byte_length),
                ("byteOffset", info.byte_offset),
            ];
            for (name, n) in numbers {
                output.push(format!("[{name}]: {}", format_number(n as f64)));
            }
            let buffer = match &info.buffer {
                Some(b) => self.format_value(b, recurse_times, true),
                None => "undefined".into(),
            };
            output.push(format!("[buffer]: {buffer}"));
            self.indentation_lvl -= 2;
        }
        output
    }

    fn format_array_buffer(&self, buffer: &Value<'js>) -> String {
        let Some((len, bytes)) = self.array_buffer_bytes(buffer, MAX_ARRAY_LENGTH) else {
            return "(detached)".into();
        };
        let mut s = bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        if len > MAX_ARRAY_LENGTH {
            let remaining = len - MAX_ARRAY_LENGTH;
            s.push_str(&format!(" ... {remaining} more byte{}", plural(remaining)));
        }
        format!("[Uint8Contents]: <{s}>")
    }

    fn format_promise(&mut self, value: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let Some(promise) = value.as_promise() else {
            return vec!["<pending>".into()];
        };
        let state = promise.state();
        let result = match state {
            PromiseState::Pending => return vec!["<pending>".into()],
            PromiseState::Resolved => match promise.result::<Value<'js>>() {
                Some(Ok(v)) => v,
                _ => {
                    self.clear_exception();
                    Value::new_undefined(self.ctx.clone())
                }
            },
            // `result` rethrows the rejection reason into the context; take it back out.
            PromiseState::Rejected => {
                let _ = promise.result::<Value<'js>>();
                self.ctx.catch()
            }
        };
        self.indentation_lvl += 2;
        let s = self.format_value(&result, recurse_times, false);
        self.indentation_lvl -= 2;
        if state == PromiseState::Rejected {
            vec![format!("<rejected> {s}")]
        } else {
            vec![s]
        }
    }

    // -----------------------------------------------------------------------------------------
    // formatProperty

    fn format_property(
        &mut self,
        obj: &Value<'js>,
        recurse_times: i64,
        key: &PropKey<'js>,
        prop_type: PropType,
    ) -> String {
        let desc = match (&key.value, &key.atom) {
            (Some(v), _) => PropDesc {
                value: PropValue::Data(v.clone()),
                enumerable: true,
                writable: true,
            },
            (None, Some(atom)) => match self.own_desc(obj, atom.raw) {
                Ok(Some(desc)) => desc,
                // The key is inherited (`cause` in a prototype) or vanished: Node reads it with
                // `value[key]`.
                Ok(None) => PropDesc {
                    value: PropValue::Data(
                        self.data_get(obj, atom.raw)
                            .unwrap_or_else(|| Value::new_undefined(self.ctx.clone())),
                    ),
                    enumerable: true,
                    writable: true,
                },
                Err(()) => PropDesc {
                    value: PropValue::Unreadable,
                    enumerable: true,
                    writable: true,
                },
            },
            (None, None) => PropDesc {
                value: PropValue::Data(Value::new_undefined(self.ctx.clone())),
                enumerable: true,
                writable: true,
            },
        };
        let label = (prop_type != PropType::Array).then_some(&key.label);
        self.format_property_desc(desc, label, recurse_times)
    }

    fn format_property_desc(
        &mut self,
        desc: PropDesc<'js>,
        label: Option<&KeyLabel>,
        recurse_times: i64,
    ) -> String {
        let s = match &desc.value {
            PropValue::Data(v) if !v.is_undefined() => {
                self.indentation_lvl += 2;
                let s = self.format_value(v, recurse_times, false);
                self.indentation_lvl -= 2;
                s
            }
            PropValue::Data(_) => "undefined".into(),
            PropValue::Accessor { get: true, set } => {
                if *set {
                    "[Getter/Setter]".into()
                } else {
                    "[Getter]".into()
                }
            }
            PropValue::Accessor {
                get: false,
                set: true,
            } => "[Setter]".into(),
            PropValue::Accessor { .. } => "undefined".into(),
            PropValue::Unreadable => "<uninitialized>".into(),
        };
        let Some(label) = label else {
            return s;
        };
        let name = match label {
            KeyLabel::Sym(units) => format!("[{}]", escape_replace(units)),
            KeyLabel::Str(units) if units_eq(units, "__proto__") => "['__proto__']".into(),
            KeyLabel::Str(units) if !desc.enumerable => format!("[{}]", escape_replace(units)),
            KeyLabel::Str(units) if is_identifier(units) => lossy(units),
            KeyLabel::Str(units) => str_escape(units),
        };
        format!("{name}: {s}")
    }

    // -----------------------------------------------------------------------------------------
    // reduceToSingleString and friends

    fn reduce_to_single_string(
        &self,
        mut output: Vec<String>,
        base: &str,
        braces: &[String; 2],
        extras_type: PropType,
        recurse_times: i64,
        elements: &Elements<'js>,
    ) -> String {
        let entries = output.len();
        if extras_type == PropType::ArrayExtras && entries > 6 {
            output = self.group_array_elements(output, elements);
        }
        if self.current_depth - recurse_times < COMPACT && entries == output.len() {
            let start =
                output.len() + self.indentation_lvl + js_len(&braces[0]) + js_len(base) + 10;
            if is_below_break_length(&output, start, base) {
                let joined = output.join(", ");
                if !joined.contains('\n') {
                    let base = if base.is_empty() {
                        String::new()
                    } else {
                        format!("{base} ")
                    };
                    return format!("{base}{} {joined} {}", braces[0], braces[1]);
                }
            }
        }
        let indentation = format!("\n{}", " ".repeat(self.indentation_lvl));
        let base = if base.is_empty() {
            String::new()
        } else {
            format!("{base} ")
        };
        format!(
            "{base}{}{indentation}  {}{indentation}{}",
            braces[0],
            output.join(&format!(",{indentation}  ")),
            braces[1]
        )
    }

    fn group_array_elements(&self, output: Vec<String>, elements: &Elements<'js>) -> Vec<String> {
        let mut total_length = 0usize;
        let mut max_length = 0usize;
        let mut output_length = output.len();
        if MAX_ARRAY_LENGTH < output.len() {
            // The "... n more items" entry does not take part in the grouping.
            output_length -= 1;
        }
        let separator_space = 2;
        let data_len: Vec<usize> = output[..output_length]
            .iter()
            .map(|s| get_string_width(s))
            .collect();
        for &len in &data_len {
            total_length += len + separator_space;
            max_length = max_length.max(len);
        }
        let actual_max = max_length + separator_space;
        if actual_max * 3 + self.indentation_lvl < BREAK_LENGTH
            && (total_length as f64 / actual_max as f64 > 5.0 || max_length <= 6)
        {
            let approx_char_heights = 2.5;
            let average_bias =
                (actual_max as f64 - total_length as f64 / output.len() as f64).sqrt();
            let biased_max = (actual_max as f64 - 3.0 - average_bias).max(1.0);
            let columns = js_round(
                (approx_char_heights * biased_max * output_length as f64).sqrt() / biased_max,
            )
            .min(((BREAK_LENGTH - self.indentation_lvl) as f64 / actual_max as f64).floor())
            .min((COMPACT * 4) as f64)
            .min(15.0);
            if columns <= 1.0 || columns.is_nan() {
                return output;
            }
            let columns = columns as usize;
            let mut max_line_length = Vec::with_capacity(columns);
            for i in 0..columns {
                let mut line_max = 0;
                let mut j = i;
                while j < output_length {
                    line_max = line_max.max(data_len[j]);
                    j += columns;
                }
                max_line_length.push(line_max + separator_space);
            }
            let pad_start = self.all_number_like(elements, output.len());
            let mut tmp = Vec::new();
            let mut i = 0;
            while i < output_length {
                let max = (i + columns).min(output_length);
                let mut line = String::new();
                let mut j = i;
                while j + 1 < max {
                    let padding =
                        (max_line_length[j - i] + js_len(&output[j])).saturating_sub(data_len[j]);
                    let cell = format!("{}, ", output[j]);
                    line.push_str(&pad(&cell, padding, pad_start));
                    j += 1;
                }
                if pad_start {
                    let padding = (max_line_length[j - i] + js_len(&output[j]))
                        .saturating_sub(data_len[j] + separator_space);
                    line.push_str(&pad(&output[j], padding, true));
                } else {
                    line.push_str(&output[j]);
                }
                tmp.push(line);
                i += columns;
            }
            if MAX_ARRAY_LENGTH < output.len() {
                tmp.push(output[output_length].clone());
            }
            return tmp;
        }
        output
    }

    /// Node right-aligns grouped columns when every `value[i]` behind the output is a number or
    /// bigint.
    fn all_number_like(&self, elements: &Elements<'js>, count: usize) -> bool {
        match elements {
            Elements::Unknown => true,
            Elements::TypedArray(len) => count <= *len,
            Elements::Array(array) => (0..count).all(|i| {
                let Some(atom) = OwnedAtom::from_index(self.ctx, i as u32) else {
                    return false;
                };
                match self.own_desc(array, atom.raw) {
                    Ok(Some(PropDesc {
                        value: PropValue::Data(v),
                        ..
                    })) => matches!(v.type_of(), Type::Int | Type::Float | Type::BigInt),
                    _ => false,
                }
            }),
        }
    }

    // -----------------------------------------------------------------------------------------
    // constructor names, tags, prefixes

    /// Node's `getConstructorName`: the name of the first `constructor` data property on the
    /// prototype chain that is a named function the value is an instance of; `None` for a null
    /// prototype.
    fn get_constructor_name(&mut self, obj: &Value<'js>, recurse_times: i64) -> Option<String> {
        let object_proto = self.class_proto(CLASS_OBJECT);
        let function_proto = self.class_proto(CLASS_BYTECODE_FUNCTION);
        let constructor_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor);
        let mut current = Some(obj.clone());
        // `None` until the first step; then the first prototype (`Some(None)` when it is null).
        let mut first_proto: Option<Option<Value<'js>>> = None;
        let mut hops = 0;
        while let Some(o) = current {
            hops += 1;
            if hops > MAX_PROTO_HOPS {
                break;
            }
            for (proto, name) in [(&object_proto, "Object"), (&function_proto, "Function")] {
                if proto.as_ref() == Some(&o) && self.proto_chain_contains(obj, &o) {
                    return Some(name.into());
                }
            }
            if let Ok(Some(PropDesc {
                value: PropValue::Data(ctor),
                ..
            })) = self.own_desc(&o, constructor_atom.raw)
            {
                if ctor.is_function() {
                    let name = self.function_name(&ctor);
                    if !name.is_empty() && self.ordinary_has_instance(&ctor, obj) {
                        return Some(name);
                    }
                }
            }
            let proto = self.proto_of(&o);
            if first_proto.is_none() {
                first_proto = Some(proto.clone());
            }
            current = proto;
        }

        let first_proto = match first_proto {
            Some(Some(p)) => p,
            Some(None) => return None,
            None => return Some(self.internal_constructor_name(obj)),
        };
        let res = self.internal_constructor_name(obj);
        if recurse_times > self.depth {
            return Some(format!("{res} <Complex prototype>"));
        }
        match self.get_constructor_name(&first_proto, recurse_times + 1) {
            Some(proto_constr) => Some(format!("{res} <{proto_constr}>")),
            None => {
                let mut nested = Inspector::new(self.ctx, -1, self.show_hidden, self.show_proxy);
                Some(format!(
                    "{res} <{}>",
                    nested.format_value(&first_proto, 0, false)
                ))
            }
        }
    }

    /// V8's `GetConstructorName` stand-in: the QuickJS class name of the object.
    pub(super) fn internal_constructor_name(&self, obj: &Value<'js>) -> String {
        let class = class_id(obj);
        // SAFETY: the runtime pointer comes from a live context; `JS_GetClassName` only reads the
        // class table and returns an owned atom (or JS_ATOM_NULL for unknown ids).
        let raw = unsafe {
            let rt = qjs::JS_GetRuntime(self.raw_ctx());
            qjs::JS_GetClassName(rt, class)
        };
        if raw == 0 {
            return "Object".into();
        }
        let atom = OwnedAtom {
            ctx: self.ctx.clone(),
            raw,
        };
        atom.to_value()
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))
            .unwrap_or_else(|| "Object".into())
    }

    /// `OrdinaryHasInstance` without `Symbol.hasInstance` and without accessors: is
    /// `ctor.prototype` on the prototype chain of `obj`?
    fn ordinary_has_instance(&self, ctor: &Value<'js>, obj: &Value<'js>) -> bool {
        let prototype_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype);
        match self.own_desc(ctor, prototype_atom.raw) {
            Ok(Some(PropDesc {
                value: PropValue::Data(proto),
                ..
            })) if proto.is_object() => self.proto_chain_contains(obj, &proto),
            _ => false,
        }
    }

    /// Whether `target` is a strict ancestor of `obj`.
    fn proto_chain_contains(&self, obj: &Value<'js>, target: &Value<'js>) -> bool {
        let mut current = self.proto_of(obj);
        for _ in 0..MAX_PROTO_HOPS {
            match current {
                Some(p) if &p == target => return true,
                Some(p) => current = self.proto_of(&p),
                None => return false,
            }
        }
        false
    }

    /// `fn.name` read as a data property (own or inherited).
    fn function_name(&self, func: &Value<'js>) -> String {
        match self.data_get_pre(func, PredefinedAtom::Name) {
            Some(v) if v.is_string() => lossy(&js_string_units(self.ctx, &v).unwrap_or_default()),
            Some(v) if v.is_undefined() => String::new(),
            Some(v) if !v.is_object() => primitive_to_string(self.ctx, &v),
            _ => String::new(),
        }
    }

    /// The `Symbol.toStringTag` Node would show next to the constructor name, read without
    /// calling accessors (typed arrays, whose tag is an accessor, are special-cased).
    fn to_string_tag(&self, value: &Value<'js>, class: u32) -> String {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::SymbolToStringTag);
        let mut current = Some(value.clone());
        let mut found = None;
        let mut is_own = true;
        for _ in 0..MAX_PROTO_HOPS {
            let Some(o) = current else { break };
            match self.own_desc(&o, atom.raw) {
                Ok(Some(desc)) => {
                    found = Some((desc, o));
                    break;
                }
                Ok(None) => {}
                Err(()) => break,
            }
            current = self.proto_of(&o);
            is_own = false;
        }
        let Some((desc, owner)) = found else {
            return String::new();
        };
        let tag = match desc.value {
            PropValue::Data(v) if v.is_string() => {
                lossy(&js_string_units(self.ctx, &v).unwrap_or_default())
            }
            PropValue::Accessor { get: true, .. }
                if is_typed_array_class(class)
                    && Some(&owner) == self.typed_array_proto().as_ref() =>
            {
                typed_array_name(class).to_string()
            }
            _ => return String::new(),
        };
        if !tag.is_empty() && is_own && (self.show_hidden || desc.enumerable) {
            return String::new();
        }
        tag
    }

    fn get_ctx_style(&self, value: &Value<'js>, constructor: Option<&str>, tag: &str) -> String {
        let mut fallback = String::new();
        if constructor.is_none() {
            fallback = self.internal_constructor_name(value);
            if fallback == tag {
                fallback = "Object".into();
            }
        }
        get_prefix(constructor, tag, &fallback, "")
    }

    // -----------------------------------------------------------------------------------------
    // functions, boxed primitives, regexps, dates

    fn get_function_base(
        &self,
        value: &Value<'js>,
        class: u32,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        if self.is_class_constructor(value, class) {
            return self.get_class_base(value, constructor, tag);
        }
        let kind = match class {
            CLASS_GENERATOR_FUNCTION => "GeneratorFunction",
            CLASS_ASYNC_FUNCTION => "AsyncFunction",
            CLASS_ASYNC_GENERATOR_FUNCTION => "AsyncGeneratorFunction",
            _ => "Function",
        };
        let mut base = format!("[{kind}");
        if constructor.is_none() {
            base.push_str(" (null prototype)");
        }
        match self.data_get_pre(value, PredefinedAtom::Name) {
            Some(v) if v.is_string() => {
                let name = lossy(&js_string_units(self.ctx, &v).unwrap_or_default());
                if name.is_empty() {
                    base.push_str(" (anonymous)");
                } else {
                    base.push_str(&format!(": {name}"));
                }
            }
            Some(v) if v.is_symbol() => {
                base.push_str(&format!(
                    ": {}",
                    lossy(&symbol_to_string_units(self.ctx, &v))
                ));
            }
            Some(v) if !v.is_object() => {
                base.push_str(&format!(": {}", primitive_to_string(self.ctx, &v)));
            }
            _ => base.push_str(": undefined"),
        }
        base.push(']');
        if let Some(c) = constructor {
            if c != kind {
                base.push_str(&format!(" {c}"));
            }
        }
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        base
    }

    /// Node recognises classes by their source text. Function sources are not reachable without
    /// calling a (replaceable) `Function.prototype.toString`, so this uses the property the spec
    /// gives every class constructor and no ordinary function: a non-writable `prototype`.
    fn is_class_constructor(&self, value: &Value<'js>, class: u32) -> bool {
        if class != CLASS_BYTECODE_FUNCTION {
            return false;
        }
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype);
        matches!(
            self.own_desc(value, atom.raw),
            Ok(Some(PropDesc {
                value: PropValue::Data(_),
                writable: false,
                ..
            }))
        )
    }

    fn get_class_base(&self, value: &Value<'js>, constructor: Option<&str>, tag: &str) -> String {
        let name_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Name);
        let name = match self.own_desc(value, name_atom.raw) {
            Ok(Some(PropDesc {
                value: PropValue::Data(v),
                ..
            })) => {
                if v.is_string() {
                    lossy(&js_string_units(self.ctx, &v).unwrap_or_default())
                } else if v.is_object() || v.is_symbol() || v.is_undefined() || v.is_null() {
                    String::new()
                } else {
                    primitive_to_string(self.ctx, &v)
                }
            }
            _ => String::new(),
        };
        let name = if name.is_empty() || name == "false" || name == "0" {
            "(anonymous)".to_string()
        } else {
            name
        };
        let mut base = format!("class {name}");
        if let Some(c) = constructor {
            if c != "Function" {
                base.push_str(&format!(" [{c}]"));
            }
        }
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        if constructor.is_some() {
            if let Some(proto) = self.proto_of(value) {
                let super_name = self.function_name(&proto);
                if !super_name.is_empty() {
                    base.push_str(&format!(" extends {super_name}"));
                }
            }
        } else {
            base.push_str(" extends [null prototype]");
        }
        format!("[{base}]")
    }

    fn get_boxed_base(
        &self,
        value: &Value<'js>,
        class: u32,
        keys: &mut Vec<PropKey<'js>>,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        let type_name = match class {
            CLASS_NUMBER => "Number",
            CLASS_STRING => "String",
            CLASS_BOOLEAN => "Boolean",
            CLASS_BIG_INT => "BigInt",
            _ => "Symbol",
        };
        let primitive = self.call_native(class, "valueOf", false, value);
        if class == CLASS_STRING {
            // The index properties of a String object only repeat its value.
            let len = primitive
                .as_ref()
                .and_then(|p| js_string_units(self.ctx, p))
                .map_or(0, |u| u.len());
            let drop = len.min(keys.len());
            keys.drain(..drop);
        }
        let mut base = format!("[{type_name}");
        if constructor != Some(type_name) {
            match constructor {
                None => base.push_str(" (null prototype)"),
                Some(c) => base.push_str(&format!(" ({c})")),
            }
        }
        let shown = match primitive {
            Some(p) => self.format_primitive(&p),
            None => "undefined".into(),
        };
        base.push_str(&format!(": {shown}]"));
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        base
    }

    fn regexp_to_string(&self, value: &Value<'js>) -> String {
        let (source, flags) = self
            .regexp_parts(value)
            .unwrap_or_else(|| ("(?:)".into(), String::new()));
        format!("/{source}/{flags}")
    }

    /// A regexp's source and flags, or `None` once user code replaced one of the engine's own
    /// accessors.
    pub(super) fn regexp_parts(&self, value: &Value<'js>) -> Option<(String, String)> {
        let source = self
            .call_native(CLASS_REGEXP, "source", true, value)
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))?;
        // The individual flag getters read the regexp's own flags; the `flags` getter would go
        // through (possibly user-defined) properties.
        let mut flags = String::new();
        for (ch, getter) in [
            ('d', "hasIndices"),
            ('g', "global"),
            ('i', "ignoreCase"),
            ('m', "multiline"),
            ('s', "dotAll"),
            ('u', "unicode"),
            ('v', "unicodeSets"),
            ('y', "sticky"),
        ] {
            if self
                .call_native(CLASS_REGEXP, getter, true, value)?
                .as_bool()?
            {
                flags.push(ch);
            }
        }
        Some((source, flags))
    }

    fn date_to_string(&self, value: &Value<'js>) -> String {
        let time = self
            .call_native(CLASS_DATE, "getTime", false, value)
            .and_then(|v| v.as_number())
            .unwrap_or(f64::NAN);
        if time.is_finite() {
            iso_date(time)
        } else {
            "Invalid Date".into()
        }
    }

    // -----------------------------------------------------------------------------------------
    // errors

    fn is_error(&self, value: &Value<'js>) -> bool {
        value.is_error()
            || self
                .class_proto(CLASS_ERROR)
                .is_some_and(|proto| self.proto_chain_contains(value, &proto))
    }

    /// `Error.prototype.toString` over data properties: `name: message`.
    fn error_header(&mut self, err: &Value<'js>) -> String {
        let name = match self.data_get_pre(err, PredefinedAtom::Name) {
            None => "Error".to_string(),
            Some(v) if v.is_undefined() => "Error".to_string(),
            Some(v) => self.plain_string(&v).unwrap_or_else(|| "Error".into()),
        };
        let message = match self.data_get_pre(err, PredefinedAtom::Message) {
            None => String::new(),
            Some(v) if v.is_undefined() => String::new(),
            Some(v) => self.plain_string(&v).unwrap_or_default(),
        };
        if name.is_empty() {
            message
        } else if message.is_empty() {
            name
        } else {
            format!("{name}: {message}")
        }
    }

    /// The raw `stack` value: an own or inherited data property, else the engine's own stack
    /// accessor on `Error.prototype`.
    pub(super) fn raw_stack(&self, err: &Value<'js>) -> Option<Value<'js>> {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Stack);
        let mut current = Some(err.clone());
        for _ in 0..MAX_PROTO_HOPS {
            let o = current?;
            match self.own_desc(&o, atom.raw) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => return Some(v),
                Ok(Some(_)) => {
                    return if Some(&o) == self.class_proto(CLASS_ERROR).as_ref() {
                        self.call_native(CLASS_ERROR, "stack", true, err)
                    } else {
                        None
                    };
                }
                Ok(None) => {}
                Err(()) => return None,
            }
            current = self.proto_of(&o);
        }
        None
    }

    /// What V8 would have in `err.stack`. QuickJS keeps only the frame lines there, so the
    /// `Name: message` header is put in front of them.
    fn error_stack_string(&mut self, err: &Value<'js>) -> String {
        // `error.stack ? String(error.stack) : ErrorPrototypeToString(error)`; objects are not
        // stringified because that would run their `toString`.
        let raw = self.raw_stack(err).and_then(|v| {
            if v.is_string() {
                js_string_units(self.ctx, &v)
                    .filter(|u| !u.is_empty())
                    .map(|u| lossy(&u))
            } else if is_truthy_non_string_primitive(&v) {
                Some(primitive_to_string(self.ctx, &v))
            } else {
                None
            }
        });
        match raw {
            Some(s) => {
                if s.starts_with("    at ") {
                    format!("{}\n{}", self.error_header(err), s.trim_end_matches('\n'))
                } else {
                    s
                }
            }
            _ => self.error_header(err),
        }
    }

    fn format_error(
        &mut self,
        err: &Value<'js>,
        constructor: Option<&str>,
        tag: &str,
        keys: &mut Vec<PropKey<'js>>,
    ) -> String {
        let name = match self.data_get_pre(err, PredefinedAtom::Name) {
            Some(v) if !v.is_undefined() && !v.is_null() => {
                self.plain_string(&v).unwrap_or_else(|| "Error".into())
            }
            _ => "Error".to_string(),
        };
        let mut stack = self.error_stack_string(err);

        self.remove_duplicate_error_keys(keys, err, &stack);

        if !keys.iter().any(|k| k.is_named("cause")) && self.has_property(err, "cause") {
            if let Some(key) = self.named_key("cause") {
                keys.push(key);
            }
        }
        if !keys.iter().any(|k| k.is_named("errors")) {
            if let Some(errors) = self.data_get_str_value(err, "errors") {
                if errors.is_array() {
                    if let Some(key) = self.named_key("errors") {
                        keys.push(key);
                    }
                }
            }
        }

        stack = improve_stack(stack, constructor, &name, tag);

        let message = self
            .data_get_pre(err, PredefinedAtom::Message)
            .filter(|v| v.is_string())
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))
            .unwrap_or_default();
        // `(err.message && stack.indexOf(err.message)) || -1`, quirks included.
        let pos = if message.is_empty() {
            None
        } else {
            match stack.find(&message) {
                Some(p) if p > 0 => Some(p + message.len()),
                _ => None,
            }
        };
        let from = pos.unwrap_or(0).min(stack.len());
        let stack_start = stack[from..].find("\n    at").map(|p| p + from);
        match stack_start {
            None => stack = format!("[{stack}]"),
            Some(start) => {
                let frames = self.get_stack_frames(err, &stack[start + 1..]);
                stack = format!("{}\n{}", &stack[..start], frames.join("\n"));
            }
        }
        if self.indentation_lvl != 0 {
            let indentation = " ".repeat(self.indentation_lvl);
            stack = stack.replace('\n', &format!("\n{indentation}"));
        }
        stack
    }

    fn remove_duplicate_error_keys(
        &self,
        keys: &mut Vec<PropKey<'js>>,
        err: &Value<'js>,
        stack: &str,
    ) {
        if self.show_hidden || keys.is_empty() {
            return;
        }
        for name in ["name", "message", "stack"] {
            let Some(index) = keys.iter().position(|k| k.is_named(name)) else {
                continue;
            };
            let shown = self
                .data_get_str_value(err, name)
                .and_then(|v| self.plain_string(&v));
            if let Some(s) = shown {
                let s = if name == "stack" {
                    s.trim_end_matches('\n').to_string()
                } else {
                    s
                };
                if stack.contains(&s) {
                    keys.remove(index);
                }
            }
        }
    }

    fn get_stack_frames(&mut self, err: &Value<'js>, stack: &str) -> Vec<String> {
        let mut frames: Vec<String> = stack.split('\n').map(str::to_string).collect();
        let cause = self.data_get_str_value(err, "cause");
        if let Some(cause) = cause.filter(|c| c.is_object() && self.is_error(c)) {
            let cause_stack = self.error_stack_string(&cause);
            if let Some(start) = cause_stack.find("\n    at") {
                let cause_frames: Vec<&str> = cause_stack[start + 1..].split('\n').collect();
                let (len, offset) = identical_sequence_range(&frames, &cause_frames);
                if len > 0 {
                    let skipped = len - 2;
                    let msg = format!("    ... {skipped} lines matching cause stack trace ...");
                    frames.splice(offset + 1..offset + 1 + skipped, [msg]);
                }
            }
        }
        frames
    }

    // -----------------------------------------------------------------------------------------
    // `%s` support

    /// Node's `hasBuiltInToString`, with `toString` and `Symbol.toPrimitive` looked up as data
    /// properties.
    fn has_built_in_to_string(&mut self, value: &Value<'js>) -> bool {
        let value = if value.is_proxy() {
            match self.proxy_target(value) {
                Some(t) => t,
                None => return true,
            }
        } else {
            value.clone()
        };
        let Some(to_string) = OwnedAtom::from_str(self.ctx, "toString") else {
            return true;
        };
        let to_primitive = rquickjs::Symbol::to_primitive(self.ctx.clone());
        let Some(to_primitive) = OwnedAtom::from_value(self.ctx, to_primitive.as_value()) else {
            return true;
        };
        let is_fn = |v: Option<Value<'js>>| v.is_some_and(|v| v.is_function());
        let has_own = |this: &Self, o: &Value<'js>, atom: &OwnedAtom<'js>| {
            matches!(this.own_desc(o, atom.raw), Ok(Some(_)))
        };
        let mut check_to_string = true;
        let mut check_to_primitive = true;
        if !is_fn(self.data_get(&value, to_string.raw)) {
            if !is_fn(self.data_get(&value, to_primitive.raw)) {
                return true;
            } else if has_own(self, &value, &to_primitive) {
                return false;
            }
            check_to_string = false;
        } else if has_own(self, &value, &to_string) {
            return false;
        } else if !is_fn(self.data_get(&value, to_primitive.raw)) {
            check_to_primitive = false;
        } else if has_own(self, &value, &to_primitive) {
            return false;
        }
        let mut pointer = value;
        for _ in 0..MAX_PROTO_HOPS {
            let Some(next) = self.proto_of(&pointer) else {
                return true;
            };
            pointer = next;
            if (check_to_string && has_own(self, &pointer, &to_string))
                || (check_to_primitive && has_own(self, &pointer, &to_primitive))
            {
                let ctor_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor);
                return match self.own_desc(&pointer, ctor_atom.raw) {
                    Ok(Some(PropDesc {
                        value: PropValue::Data(ctor),
                        ..
                    })) if ctor.is_function() => {
                        BUILT_IN_OBJECTS.contains(&self.function_name(&ctor).as_str())
                    }
                    _ => false,
                };
            }
        }
        true
    }

    // -----------------------------------------------------------------------------------------
    // property access without side effects

    pub(super) fn own_desc(
        &self,
        obj: &Value<'js>,
        atom: qjs::JSAtom,
    ) -> Result<Option<PropDesc<'js>>, ()> {
        if !obj.is_object() {
            return Ok(None);
        }
        let mut desc = qjs::JSPropertyDescriptor {
            flags: 0,
            value: qjs::JS_UNDEFINED,
            getter: qjs::JS_UNDEFINED,
            setter: qjs::JS_UNDEFINED,
        };
        // SAFETY: `obj` is a live object and `atom` a live atom for the duration of the call.
        // The descriptor starts out holding `undefined` (nothing to free); when QuickJS reports
        // the property (1) every field holds an owned reference, which is handed to `Value`s
        // below exactly once.
        let r = unsafe { qjs::JS_GetOwnProperty(self.raw_ctx(), &mut desc, obj.as_raw(), atom) };
        if r < 0 {
            self.clear_exception();
            return Err(());
        }
        if r == 0 {
            return Ok(None);
        }
        // SAFETY: see above; each owned field is wrapped once and freed on drop.
        let (value, getter, setter) = unsafe {
            (
                Value::from_raw(self.ctx.clone(), desc.value),
                Value::from_raw(self.ctx.clone(), desc.getter),
                Value::from_raw(self.ctx.clone(), desc.setter),
            )
        };
        let flags = desc.flags as u32;
        let value = if flags & qjs::JS_PROP_GETSET != 0 {
            PropValue::Accessor {
                get: !getter.is_undefined(),
                set: !setter.is_undefined(),
            }
        } else {
            PropValue::Data(value)
        };
        Ok(Some(PropDesc {
            value,
            enumerable: flags & qjs::JS_PROP_ENUMERABLE != 0,
            writable: flags & qjs::JS_PROP_WRITABLE != 0,
        }))
    }

    /// `obj[key]` for data properties only: the first own property found on the prototype
    /// chain, or `None` when it is missing or an accessor (which Node would call).
    fn data_get(&self, obj: &Value<'js>, atom: qjs::JSAtom) -> Option<Value<'js>> {
        let mut current = obj.clone();
        for _ in 0..MAX_PROTO_HOPS {
            match self.own_desc(&current, atom) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => return Some(v),
                Ok(Some(_)) | Err(()) => return None,
                Ok(None) => {}
            }
            current = self.proto_of(&current)?;
        }
        None
    }

    pub(super) fn data_get_pre(
        &self,
        obj: &Value<'js>,
        atom: PredefinedAtom,
    ) -> Option<Value<'js>> {
        let atom = OwnedAtom::predefined(self.ctx, atom);
        self.data_get(obj, atom.raw)
    }

    fn data_get_str_value(&self, obj: &Value<'js>, name: &str) -> Option<Value<'js>> {
        let atom = OwnedAtom::from_str(self.ctx, name)?;
        self.data_get(obj, atom.raw)
    }

    fn data_get_str(&self, obj: &Value<'js>, name: &str) -> Option<String> {
        self.data_get_str_value(obj, name)
            .and_then(|v| self.plain_string(&v))
    }

    fn has_property(&self, obj: &Value<'js>, name: &str) -> bool {
        let Some(atom) = OwnedAtom::from_str(self.ctx, name) else {
            return false;
        };
        // SAFETY: live object and atom; a negative result leaves an exception that is cleared.
        let r = unsafe { qjs::JS_HasProperty(self.raw_ctx(), obj.as_raw(), atom.raw) };
        if r < 0 {
            self.clear_exception();
        }
        r > 0
    }

    /// Element `i` of an engine-made array (Map entries), as a data property.
    pub(super) fn index_data(&self, array: &Value<'js>, i: u32) -> Value<'js> {
        OwnedAtom::from_index(self.ctx, i)
            .and_then(|atom| match self.own_desc(array, atom.raw) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => Some(v),
                _ => None,
            })
            .unwrap_or_else(|| Value::new_undefined(self.ctx.clone()))
    }

    /// `Object.getPrototypeOf`. rquickjs' `Object::get_prototype` would wrap the exception
    /// marker of a throwing `getPrototypeOf` trap as if it were an object.
    pub(super) fn proto_of(&self, obj: &Value<'js>) -> Option<Value<'js>> {
        if !obj.is_object() {
            return None;
        }
        // SAFETY: `obj` is a live object; JS_GetPrototype returns an owned reference (or the
        // exception marker, which owns nothing).
        let proto = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetPrototype(self.raw_ctx(), obj.as_raw()),
            )
        };
        if proto.is_exception() {
            self.clear_exception();
            return None;
        }
        proto.is_object().then_some(proto)
    }

    pub(super) fn class_proto(&self, class: u32) -> Option<Value<'js>> {
        // SAFETY: only called with ids of classes every full context registers; the result is an
        // owned reference (undefined when the realm lacks the class).
        let proto = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetClassProto(self.raw_ctx(), class),
            )
        };
        proto.is_object().then_some(proto)
    }

    fn typed_array_proto(&self) -> Option<Value<'js>> {
        self.class_proto(CLASS_UINT8_ARRAY)
            .and_then(|p| self.proto_of(&p))
    }

    /// A built-in method or getter taken from the realm's intrinsic prototype for `class`, as
    /// long as it is still an engine function (user code cannot create those).
    pub(super) fn native_fn(&self, class: u32, name: &str, getter: bool) -> Option<Function<'js>> {
        self.native_fn_at(class, &OwnedAtom::from_str(self.ctx, name)?, getter)
    }

    /// [`Self::native_fn`] for any key (`Symbol.iterator`).
    fn native_fn_at(
        &self,
        class: u32,
        atom: &OwnedAtom<'js>,
        getter: bool,
    ) -> Option<Function<'js>> {
        let proto = self.class_proto(class)?;
        let mut desc = qjs::JSPropertyDescriptor {
            flags: 0,
            value: qjs::JS_UNDEFINED,
            getter: qjs::JS_UNDEFINED,
            setter: qjs::JS_UNDEFINED,
        };
        // SAFETY: as in `own_desc`.
        let r =
            unsafe { qjs::JS_GetOwnProperty(self.raw_ctx(), &mut desc, proto.as_raw(), atom.raw) };
        if r < 0 {
            self.clear_exception();
            return None;
        }
        if r == 0 {
            return None;
        }
        // SAFETY: see `own_desc`.
        let (value, get, _set) = unsafe {
            (
                Value::from_raw(self.ctx.clone(), desc.value),
                Value::from_raw(self.ctx.clone(), desc.getter),
                Value::from_raw(self.ctx.clone(), desc.setter),
            )
        };
        let f = if getter { get } else { value };
        if class_id(&f) != CLASS_C_FUNCTION {
            return None;
        }
        f.into_function()
    }

    pub(super) fn call_native(
        &self,
        class: u32,
        name: &str,
        getter: bool,
        this: &Value<'js>,
    ) -> Option<Value<'js>> {
        let f = self.native_fn(class, name, getter)?;
        self.call_this(&f, this)
    }

    fn call_this(&self, f: &Function<'js>, this: &Value<'js>) -> Option<Value<'js>> {
        match f.call::<_, Value<'js>>((This(this.clone()),)) {
            Ok(v) => Some(v),
            Err(_) => {
                self.clear_exception();
                None
            }
        }
    }

    fn collection_size(&self, value: &Value<'js>, class: u32) -> Option<usize> {
        self.call_native(class, "size", true, value)
            .and_then(|v| v.as_number())
            .map(|n| {
                if n.is_finite() && n > 0.0 {
                    n as usize
                } else {
                    0
                }
            })
    }

    /// Up to `limit` entries of a Map (`[key, value]` arrays) or values of a Set, read through
    /// the engine's own iterator so that no user-replaceable method runs (`entries` / `values`,
    /// else their `Symbol.iterator` alias). `None` when user code replaced both or a step failed.
    pub(super) fn collection_entries(
        &self,
        value: &Value<'js>,
        class: u32,
        limit: usize,
    ) -> Option<Vec<Value<'js>>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Some(out);
        }
        let (method, iter_class) = if class == CLASS_MAP {
            ("entries", CLASS_MAP_ITERATOR)
        } else {
            ("values", CLASS_SET_ITERATOR)
        };
        let iter = self.call_native(class, method, false, value).or_else(|| {
            let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::SymbolIterator);
            self.call_this(&self.native_fn_at(class, &atom, false)?, value)
        })?;
        let next = self.native_fn(iter_class, "next", false)?;
        let done_atom = OwnedAtom::from_str(self.ctx, "done")?;
        let value_atom = OwnedAtom::from_str(self.ctx, "value")?;
        while out.len() < limit {
            let step = self.call_this(&next, &iter)?;
            let field = |atom: &OwnedAtom<'js>| match self.own_desc(&step, atom.raw) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => Some(v),
                _ => None,
            };
            if field(&done_atom).and_then(|d| d.as_bool()).unwrap_or(true) {
                break;
            }
            out.push(field(&value_atom).unwrap_or_else(|| Value::new_undefined(self.ctx.clone())));
        }
        Some(out)
    }

    pub(super) fn array_length(&self, array: &Value<'js>) -> u64 {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Length);
        match self.own_desc(array, atom.raw) {
            Ok(Some(PropDesc {
                value: PropValue::Data(v),
                ..
            })) => v.as_number().map_or(0, |n| {
                if n.is_finite() && n > 0.0 {
                    n as u64
                } else {
                    0
                }
            }),
            _ => 0,
        }
    }

    fn typed_array_info(&self, value: &Value<'js>, class: u32) -> TypedArrayInfo<'js> {
        let mut info = TypedArrayInfo {
            class,
            length: 0,
            bytes_per_element: typed_array_element_size(class),
            byte_offset: 0,
            bytes: Vec::new(),
            buffer: None,
        };
        let (mut offset, mut byte_length, mut bpe): (qjs::size_t, qjs::size_t, qjs::size_t) =
            (0, 0, 0);
        // SAFETY: `value` is a live typed array; the out-pointers are valid locals and the result
        // is an owned reference to the backing buffer (or the exception marker).
        let buffer = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetTypedArrayBuffer(
                    self.raw_ctx(),
                    value.as_raw(),
                    &mut offset,
                    &mut byte_length,
                    &mut bpe,
                ),
            )
        };
        let (offset, byte_length, bpe) = (offset as usize, byte_length as usize, bpe as usize);
        if buffer.is_exception() || bpe == 0 {
            // Out of bounds after a resize: V8 reports length 0 as well.
            self.clear_exception();
            return info;
        }
        info.bytes_per_element = bpe;
        info.byte_offset = offset;
        let length = byte_length / bpe;
        let wanted = length.min(MAX_ARRAY_LENGTH) * bpe;
        if let Some((size, bytes)) = self.array_buffer_window(&buffer, offset, wanted) {
            if offset + byte_length <= size {
                info.length = length;
                info.bytes = bytes;
            }
        }
        info.buffer = Some(buffer);
        info
    }

    /// `(byteLength, first `limit` bytes)` of an (Shared)ArrayBuffer; `None` when detached.
    pub(super) fn array_buffer_bytes(
        &self,
        buffer: &Value<'js>,
        limit: usize,
    ) -> Option<(usize, Vec<u8>)> {
        self.array_buffer_window(buffer, 0, limit)
    }

    fn array_buffer_window(
        &self,
        buffer: &Value<'js>,
        offset: usize,
        len: usize,
    ) -> Option<(usize, Vec<u8>)> {
        let mut size: qjs::size_t = 0;
        // SAFETY: `buffer` is a live value; QuickJS checks its class. The returned pointer is
        // valid for `size` bytes until the next JS call, and the bytes are copied before any.
        let data = unsafe { qjs::JS_GetArrayBuffer(self.raw_ctx(), &mut size, buffer.as_raw()) };
        if data.is_null() {
            self.clear_exception();
            return None;
        }
        let size = size as usize;
        let start = offset.min(size);
        let end = offset.saturating_add(len).min(size);
        // SAFETY: `start..end` lies within the `size` bytes QuickJS reported.
        let bytes = unsafe { std::slice::from_raw_parts(data.add(start), end - start) }.to_vec();
        Some((size, bytes))
    }

    // -----------------------------------------------------------------------------------------
    // keys

    /// Own property keys as atoms; `skip_indices` drops the integer-tagged array indices right
    /// away, which keeps a million-element array from costing a million wrappers.
    pub(super) fn own_atoms(
        &self,
        obj: &Value<'js>,
        flags: u32,
        skip_indices: bool,
    ) -> Vec<OwnedAtom<'js>> {
        let mut tab: *mut qjs::JSPropertyEnum = ptr::null_mut();
        let mut len: u32 = 0;
        // SAFETY: `obj` is a live object; on success QuickJS hands over `len` entries whose
        // atoms we take ownership of, and the table itself is released with `js_free`.
        let r = unsafe {
            qjs::JS_GetOwnPropertyNames(
                self.raw_ctx(),
                &mut tab,
                &mut len,
                obj.as_raw(),
                flags as i32,
            )
        };
        if r < 0 {
            self.clear_exception();
            return Vec::new();
        }
        let mut out = Vec::new();
        if !tab.is_null() {
            for i in 0..len as usize {
                // SAFETY: `i < len` entries were initialised by QuickJS.
                let entry = unsafe { *tab.add(i) };
                let atom = OwnedAtom {
                    ctx: self.ctx.clone(),
                    raw: entry.atom,
                };
                if !(skip_indices && atom.raw & ATOM_TAG_INT != 0) {
                    out.push(atom);
                }
            }
            // SAFETY: the table came from QuickJS' allocator and its atoms now belong to `out`.
            unsafe { qjs::js_free(self.raw_ctx(), tab as *mut c_void) };
        }
        out
    }

    /// Node's `getKeys` (or `getOwnNonIndexProperties` when `non_index`): own enumerable string
    /// keys then enumerable symbols, or every own key with `showHidden`.
    fn get_keys(&self, obj: &Value<'js>, non_index: bool) -> Vec<PropKey<'js>> {
        let mut flags = qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SYMBOL_MASK;
        if !self.show_hidden {
            flags |= qjs::JS_GPN_ENUM_ONLY;
        }
        let mut keys = Vec::new();
        for atom in self.own_atoms(obj, flags, non_index) {
            let Some(value) = atom.to_value() else {
                continue;
            };
            let label = if value.is_symbol() {
                KeyLabel::Sym(symbol_to_string_units(self.ctx, &value))
            } else {
                let units = js_string_units(self.ctx, &value).unwrap_or_default();
                if non_index && canonical_index(&units).is_some_and(|n| n <= 4_294_967_294) {
                    continue;
                }
                KeyLabel::Str(units)
            };
            keys.push(PropKey {
                atom: Some(atom),
                label,
                value: None,
            });
        }
        keys
    }

    fn named_key(&self, name: &str) -> Option<PropKey<'js>> {
        Some(PropKey {
            atom: Some(OwnedAtom::from_str(self.ctx, name)?),
            label: KeyLabel::Str(name.encode_utf16().collect()),
            value: None,
        })
    }

    fn virtual_key(&self, name: &str, value: Value<'js>) -> PropKey<'js> {
        PropKey {
            atom: None,
            label: KeyLabel::Str(name.encode_utf16().collect()),
            value: Some(value),
        }
    }

    fn atom_array_index(&self, atom: &OwnedAtom<'js>) -> Option<u64> {
        if atom.raw & ATOM_TAG_INT != 0 {
            return Some(u64::from(atom.raw & !ATOM_TAG_INT));
        }
        let value = atom.to_value()?;
        canonical_index(&js_string_units(self.ctx, &value)?)
    }

    /// `String(v)` for primitives; `None` for objects (converting those runs user code).
    pub(super) fn plain_string(&self, v: &Value<'js>) -> Option<String> {
        if v.is_string() {
            js_string_units(self.ctx, v).map(|u| lossy(&u))
        } else if v.is_symbol() {
            Some(lossy(&symbol_to_string_units(self.ctx, v)))
        } else if v.is_object() {
            None
        } else {
            Some(primitive_to_string(self.ctx, v))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// atoms

/// An atom reference owned by this module (rquickjs' `Atom` does not expose the raw atom that
/// the descriptor APIs need).
pub(super) struct OwnedAtom<'js> {
    ctx: Ctx<'js>,
    pub(super) raw: qjs::JSAtom,
}

impl<'js> OwnedAtom<'js> {
    pub(super) fn predefined(ctx: &Ctx<'js>, atom: PredefinedAtom) -> Self {
        // SAFETY: predefined atoms always exist; the duplicate is released on drop.
        let raw = unsafe { qjs::JS_DupAtom(ctx.as_raw().as_ptr(), atom as qjs::JSAtom) };
        OwnedAtom {
            ctx: ctx.clone(),
            raw,
        }
    }

    pub(super) fn from_str(ctx: &Ctx<'js>, s: &str) -> Option<Self> {
        // SAFETY: the pointer/length pair describes valid UTF-8 for the duration of the call.
        let raw =
            unsafe { qjs::JS_NewAtomLen(ctx.as_raw().as_ptr(), s.as_ptr().cast(), s.len() as _) };
        Self::checked(ctx, raw)
    }

    pub(super) fn from_index(ctx: &Ctx<'js>, i: u32) -> Option<Self> {
        // SAFETY: plain constructor call on a live context.
        let raw = unsafe { qjs::JS_NewAtomUInt32(ctx.as_raw().as_ptr(), i) };
        Self::checked(ctx, raw)
    }

    /// For string and symbol values only, which convert without running code.
    fn from_value(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Self> {
        if !(v.is_string() || v.is_symbol()) {
            return None;
        }
        // SAFETY: `v` is a live string or symbol.
        let raw = unsafe { qjs::JS_ValueToAtom(ctx.as_raw().as_ptr(), v.as_raw()) };
        Self::checked(ctx, raw)
    }

    fn checked(ctx: &Ctx<'js>, raw: qjs::JSAtom) -> Option<Self> {
        if raw == 0 {
            let _ = ctx.catch();
            return None;
        }
        Some(OwnedAtom {
            ctx: ctx.clone(),
            raw,
        })
    }

    pub(super) fn to_value(&self) -> Option<Value<'js>> {
        // SAFETY: `raw` is a live atom; the result is an owned string/symbol (or exception).
        let v = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_AtomToValue(self.ctx.as_raw().as_ptr(), self.raw),
            )
        };
        if v.is_exception() {
            let _ = self.ctx.catch();
            return None;
        }
        Some(v)
    }
}

impl Drop for OwnedAtom<'_> {
    fn drop(&mut self) {
        // SAFETY: each `OwnedAtom` holds exactly one reference to `raw`.
        unsafe { qjs::JS_FreeAtom(self.ctx.as_raw().as_ptr(), self.raw) };
    }
}

// ---------------------------------------------------------------------------------------------
// value helpers

pub(super) fn class_id(v: &Value<'_>) -> u32 {
    // SAFETY: JS_GetClassID only inspects the tag and, for objects, the header of a live object.
    unsafe { qjs::JS_GetClassID(v.as_raw()) }
}

fn number_value<'js>(ctx: &Ctx<'js>, n: f64) -> Value<'js> {
    Value::new_number(ctx.clone(), n)
}

/// The UTF-16 code units of a string value (lone surrogates included).
pub(super) fn js_string_units<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u16>> {
    if !v.is_string() {
        return None;
    }
    let mut len: qjs::size_t = 0;
    // SAFETY: `v` is a live string, so no conversion (and no user code) happens. The returned
    // buffer holds `len` units and is freed right after copying.
    let ptr = unsafe { qjs::JS_ToCStringLenUTF16(ctx.as_raw().as_ptr(), &mut len, v.as_raw()) };
    if ptr.is_null() {
        let _ = ctx.catch();
        return None;
    }
    // SAFETY: see above.
    let units = unsafe { std::slice::from_raw_parts(ptr, len as usize) }.to_vec();
    // SAFETY: `ptr` came from JS_ToCStringLenUTF16 on this context.
    unsafe { qjs::JS_FreeCStringUTF16(ctx.as_raw().as_ptr(), ptr) };
    Some(units)
}

/// `Symbol.prototype.toString`: `Symbol(description)`.
fn symbol_to_string_units<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Vec<u16> {
    let description = v
        .as_symbol()
        .and_then(|s| s.description().ok())
        .and_then(|d| js_string_units(ctx, &d))
        .unwrap_or_default();
    let mut out: Vec<u16> = "Symbol(".encode_utf16().collect();
    out.extend(description);
    out.push(u16::from(b')'));
    out
}

/// `String(v)` for a primitive, which never runs user code.
pub(super) fn primitive_to_string<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    match v.type_of() {
        Type::Int | Type::Float => number_to_js_string(v.as_number().unwrap_or(f64::NAN)),
        Type::Bool => if v.as_bool().unwrap_or(false) {
            "true"
        } else {
            "false"
        }
        .into(),
        Type::Null => "null".into(),
        Type::Undefined | Type::Uninitialized => "undefined".into(),
        Type::String => lossy(&js_string_units(ctx, v).unwrap_or_default()),
        Type::Symbol => lossy(&symbol_to_string_units(ctx, v)),
        Type::BigInt => match v.get::<Coerced<rquickjs::String>>() {
            Ok(s) => lossy(&js_string_units(ctx, s.0.as_value()).unwrap_or_default()),
            Err(_) => {
                let _ = ctx.catch();
                "0".into()
            }
        },
        _ => String::new(),
    }
}

/// JS truthiness for non-string primitives; objects count as falsy here because they are never
/// converted.
fn is_truthy_non_string_primitive(v: &Value<'_>) -> bool {
    match v.type_of() {
        Type::Bool => v.as_bool().unwrap_or(false),
        Type::Int | Type::Float => v.as_number().is_some_and(|n| n != 0.0 && !n.is_nan()),
        Type::Symbol => true,
        Type::BigInt => v
            .as_big_int()
            .is_some_and(|b| b.clone().to_i64().map_or(true, |n| n != 0)),
        _ => false,
    }
}

pub(super) fn lossy(units: &[u16]) -> String {
    String::from_utf16_lossy(units)
}

fn units_eq(units: &[u16], s: &str) -> bool {
    units.iter().copied().eq(s.encode_utf16())
}

/// Length in UTF-16 code units, the unit of JS `.length` that Node's layout decisions use.
fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

fn plural(n: usize) -> &'static str {
    if n > 1 {
        "s"
    } else {
        ""
    }
}

fn remaining_text(remaining: u64) -> String {
    format!("... {remaining} more item{}", plural(remaining as usize))
}

fn is_typed_array_class(class: u32) -> bool {
    (CLASS_UINT8C_ARRAY..=CLASS_FLOAT64_ARRAY).contains(&class)
}

fn is_boxed_class(class: u32) -> bool {
    matches!(
        class,
        CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT | CLASS_SYMBOL
    )
}

fn typed_array_name(class: u32) -> &'static str {
    match class {
        CLASS_UINT8C_ARRAY => "Uint8ClampedArray",
        CLASS_INT8_ARRAY => "Int8Array",
        CLASS_UINT8_ARRAY => "Uint8Array",
        CLASS_INT16_ARRAY => "Int16Array",
        CLASS_UINT16_ARRAY => "Uint16Array",
        CLASS_INT32_ARRAY => "Int32Array",
        CLASS_UINT32_ARRAY => "Uint32Array",
        CLASS_BIG_INT64_ARRAY => "BigInt64Array",
        CLASS_BIG_UINT64_ARRAY => "BigUint64Array",
        CLASS_FLOAT16_ARRAY => "Float16Array",
        CLASS_FLOAT32_ARRAY => "Float32Array",
        _ => "Float64Array",
    }
}

fn typed_array_element_size(class: u32) -> usize {
    match class {
        CLASS_UINT8C_ARRAY | CLASS_INT8_ARRAY | CLASS_UINT8_ARRAY => 1,
        CLASS_INT16_ARRAY | CLASS_UINT16_ARRAY | CLASS_FLOAT16_ARRAY => 2,
        CLASS_INT32_ARRAY | CLASS_UINT32_ARRAY | CLASS_FLOAT32_ARRAY => 4,
        _ => 8,
    }
}

fn typed_array_element(info: &TypedArrayInfo<'_>, i: usize) -> String {
    let size = info.bytes_per_element;
    let Some(b) = info.bytes.get(i * size..(i + 1) * size) else {
        return "undefined".into();
    };
    let mut raw = [0u8; 8];
    raw[..size].copy_from_slice(b);
    match info.class {
        CLASS_INT8_ARRAY => format_number(f64::from(b[0] as i8)),
        CLASS_UINT8_ARRAY | CLASS_UINT8C_ARRAY => format_number(f64::from(b[0])),
        CLASS_INT16_ARRAY => format_number(f64::from(i16::from_ne_bytes([b[0], b[1]]))),
        CLASS_UINT16_ARRAY => format_number(f64::from(u16::from_ne_bytes([b[0], b[1]]))),
        CLASS_INT32_ARRAY => format_number(f64::from(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
        CLASS_UINT32_ARRAY => {
            format_number(f64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])))
        }
        CLASS_FLOAT16_ARRAY => format_number(f16_to_f64(u16::from_ne_bytes([b[0], b[1]]))),
        CLASS_FLOAT32_ARRAY => {
            format_number(f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])))
        }
        CLASS_BIG_INT64_ARRAY => format!("{}n", i64::from_ne_bytes(raw)),
        CLASS_BIG_UINT64_ARRAY => format!("{}n", u64::from_ne_bytes(raw)),
        _ => format_number(f64::from_ne_bytes(raw)),
    }
}

fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f64::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

fn get_prefix(constructor: Option<&str>, tag: &str, fallback: &str, size: &str) -> String {
    match constructor {
        None => {
            if !tag.is_empty() && fallback != tag {
                format!("[{fallback}{size}: null prototype] [{tag}] ")
            } else {
                format!("[{fallback}{size}: null prototype] ")
            }
        }
        Some(c) => {
            if !tag.is_empty() && c != tag {
                format!("{c}{size} [{tag}] ")
            } else {
                format!("{c}{size} ")
            }
        }
    }
}

fn get_iterator_braces(kind: &str, tag: &str) -> [String; 2] {
    let iterator = format!("{kind} Iterator");
    let mut tag = tag.to_string();
    if tag != iterator {
        if !tag.is_empty() {
            tag.push_str("] [");
        }
        tag.push_str(&iterator);
    }
    [format!("[{tag}] {{"), "}".to_string()]
}

fn is_below_break_length(output: &[String], start: usize, base: &str) -> bool {
    let mut total_length = output.len() + start;
    if total_length + output.len() > BREAK_LENGTH {
        return false;
    }
    for entry in output {
        total_length += js_len(entry);
        if total_length > BREAK_LENGTH {
            return false;
        }
    }
    base.is_empty() || !base.contains('\n')
}

/// `padStart` / `padEnd` with spaces to a UTF-16 length.
fn pad(s: &str, target: usize, start: bool) -> String {
    let len = js_len(s);
    if len >= target {
        return s.to_string();
    }
    let fill = " ".repeat(target - len);
    if start {
        fill + s
    } else {
        s.to_string() + &fill
    }
}

/// `Math.round` for the non-negative values `groupArrayElements` feeds it.
fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// Node's `getStringWidth` without colors: ASCII is counted directly, the rest with Node's
/// East-Asian-width tables (an approximation of the ICU lookup Node uses for non-ASCII).
fn get_string_width(s: &str) -> usize {
    let mut width = 0;
    let mut chars = s.chars();
    for c in chars.by_ref() {
        let code = c as u32;
        if code >= 127 {
            width += char_width(code);
            break;
        }
        if code >= 32 {
            width += 1;
        }
    }
    for c in chars {
        width += char_width(c as u32);
    }
    width
}

fn char_width(code: u32) -> usize {
    if is_zero_width_code_point(code) {
        0
    } else if is_full_width_code_point(code) {
        2
    } else {
        1
    }
}

fn is_zero_width_code_point(code: u32) -> bool {
    code <= 0x1F
        || (0x7F..=0x9F).contains(&code)
        || (0x300..=0x36F).contains(&code)
        || (0x200B..=0x200F).contains(&code)
        || (0x20D0..=0x20FF).contains(&code)
        || (0xFE00..=0xFE0F).contains(&code)
        || (0xFE20..=0xFE2F).contains(&code)
        || (0xE0100..=0xE01EF).contains(&code)
}

fn is_full_width_code_point(code: u32) -> bool {
    code >= 0x1100
        && (code <= 0x115f
            || code == 0x2329
            || code == 0x232a
            || ((0x2e80..=0x3247).contains(&code) && code != 0x303f)
            || (0x3250..=0x4dbf).contains(&code)
            || (0x4e00..=0xa4c6).contains(&code)
            || (0xa960..=0xa97c).contains(&code)
            || (0xac00..=0xd7a3).contains(&code)
            || (0xf900..=0xfaff).contains(&code)
            || (0xfe10..=0xfe19).contains(&code)
            || (0xfe30..=0xfe6b).contains(&code)
            || (0xff01..=0xff60).contains(&code)
            || (0xffe0..=0xffe6).contains(&code)
            || (0x1b000..=0x1b001).contains(&code)
            || (0x1f200..=0x1f251).contains(&code)
            || (0x1f300..=0x1f64f).contains(&code)
            || (0x20000..=0x3fffd).contains(&code))
}

/// Node's `keyStrRegExp`: `^[a-zA-Z_][a-zA-Z_0-9]*$`.
fn is_identifier(units: &[u16]) -> bool {
    let ident = |u: u16, first: bool| {
        u == u16::from(b'_')
            || (u16::from(b'a')..=u16::from(b'z')).contains(&u)
            || (u16::from(b'A')..=u16::from(b'Z')).contains(&u)
            || (!first && (u16::from(b'0')..=u16::from(b'9')).contains(&u))
    };
    match units.split_first() {
        Some((&first, rest)) => ident(first, true) && rest.iter().all(|&u| ident(u, false)),
        None => false,
    }
}

/// The value of a canonical array index string (`numberRegExp`: `^(0|[1-9][0-9]*)$`).
fn canonical_index(units: &[u16]) -> Option<u64> {
    if units.is_empty() || units.len() > 10 || (units.len() > 1 && units[0] == u16::from(b'0')) {
        return None;
    }
    let mut n = 0u64;
    for &u in units {
        if !(u16::from(b'0')..=u16::from(b'9')).contains(&u) {
            return None;
        }
        n = n * 10 + u64::from(u - u16::from(b'0'));
    }
    Some(n)
}

/// `str.split(/(?<=\n)/)`: pieces ending right after each newline.
fn split_after_newlines(units: &[u16]) -> Vec<&[u16]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, &u) in units.iter().enumerate() {
        if u == u16::from(b'\n') && i + 1 < units.len() {
            pieces.push(&units[start..=i]);
            start = i + 1;
        }
    }
    pieces.push(&units[start..]);
    pieces
}

// ---------------------------------------------------------------------------------------------
// string escaping

/// Node's `meta` table: the escape for code units below 0xA0 that need one.
fn meta(u: u16) -> Option<String> {
    Some(match u {
        0x08 => "\\b".into(),
        0x09 => "\\t".into(),
        0x0A => "\\n".into(),
        0x0C => "\\f".into(),
        0x0D => "\\r".into(),
        0x27 => "\\'".into(),
        0x5C => "\\\\".into(),
        0x00..=0x1F | 0x7F..=0x9F => format!("\\x{u:02X}"),
        _ => return None,
    })
}

/// Node's `strEscape`: quote with `'` (or `"` / `` ` `` to avoid escaping quotes) and escape
/// control characters, backslashes and lone surrogates.
fn str_escape(units: &[u16]) -> String {
    let has = |c: u8| units.contains(&u16::from(c));
    let mut quote = b'\'';
    if has(b'\'') {
        if !has(b'"') {
            quote = b'"';
        } else if !has(b'`')
            && !units
                .windows(2)
                .any(|w| w == [u16::from(b'$'), u16::from(b'{')])
        {
            quote = b'`';
        }
    }
    let mut out = String::with_capacity(units.len() + 2);
    out.push(char::from(quote));
    escape_into(&mut out, units, quote == b'\'');
    out.push(char::from(quote));
    out
}

/// `strEscapeSequencesReplacer` + `escapeFn`, used for symbol and non-enumerable key names.
fn escape_replace(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    escape_into(&mut out, units, true);
    out
}

fn escape_into(out: &mut String, units: &[u16], escape_single_quote: bool) {
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if u < 0xA0 && (u != 0x27 || escape_single_quote) {
            if let Some(escaped) = meta(u) {
                out.push_str(&escaped);
                i += 1;
                continue;
            }
        }
        if (0xD800..=0xDFFF).contains(&u) {
            if u <= 0xDBFF && i + 1 < units.len() && (0xDC00..=0xDFFF).contains(&units[i + 1]) {
                let c =
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(units[i + 1]) - 0xDC00);
                out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                i += 2;
                continue;
            }
            out.push_str(&format!("\\u{u:x}"));
            i += 1;
            continue;
        }
        out.push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
        i += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// errors

/// Node's `improveStack`: make the first line mention the constructor name.
fn improve_stack(stack: String, constructor: Option<&str>, name: &str, tag: &str) -> String {
    let mut len = name.len();
    let starts_with_name = stack.starts_with(name)
        && matches!(stack.as_bytes().get(len), None | Some(b':') | Some(b'\n'));
    if !(constructor.is_none() || (name.ends_with("Error") && starts_with_name)) {
        return stack;
    }
    let mut fallback = "Error".to_string();
    if constructor.is_none() {
        let start = error_name_prefix(&stack);
        len = start.len();
        fallback = if start.is_empty() {
            "Error".into()
        } else {
            start
        };
    }
    let prefix = get_prefix(constructor, tag, &fallback, "");
    let prefix = prefix.strip_suffix(' ').unwrap_or(&prefix);
    if name == prefix {
        return stack;
    }
    let rest = stack.get(len..).unwrap_or("");
    if prefix.contains(name) {
        if len == 0 {
            format!("{prefix}: {stack}")
        } else {
            format!("{prefix}{rest}")
        }
    } else {
        format!("{prefix} [{name}]{rest}")
    }
}

/// `/^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n {4}at)/` or `/^([a-z_A-Z0-9-]*Error)$/`, group 1.
fn error_name_prefix(stack: &str) -> String {
    let bytes = stack.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_uppercase) {
        let in_class = |b: u8| b.is_ascii_alphanumeric() || b"_ []()-".contains(&b);
        let end = 1 + bytes[1..].iter().take_while(|&&b| in_class(b)).count();
        if end > 1 && (stack[end..].starts_with(':') || stack[end..].starts_with("\n    at")) {
            return stack[..end].to_string();
        }
    }
    if stack.ends_with("Error")
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return stack.to_string();
    }
    String::new()
}

fn identical_sequence_range(a: &[String], b: &[&str]) -> (usize, usize) {
    if a.len() < 4 {
        return (0, 0);
    }
    for i in 0..a.len() - 3 {
        let Some(pos) = b.iter().position(|x| *x == a[i]) else {
            continue;
        };
        let rest = b.len() - pos;
        if rest > 3 {
            let mut len = 1;
            let max_len = (a.len() - i).min(rest);
            while max_len > len && a[i + len] == b[pos + len] {
                len += 1;
            }
            if len > 3 {
                return (len, i);
            }
        }
    }
    (0, 0)
}

// ---------------------------------------------------------------------------------------------
// numbers and dates

/// Node's `formatNumber` without numeric separators: like `String(n)` but keeps `-0`.
fn format_number(n: f64) -> String {
    if n == 0.0 && n.is_sign_negative() {
        return "-0".into();
    }
    number_to_js_string(n)
}

/// ECMAScript `Number::toString(10)`.
fn number_to_js_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Rust's `{:e}` yields the shortest round-tripping digits, as the spec requires.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let e: i64 = exponent.parse().unwrap_or(0);
    let n_exp = e + 1;
    let body = if k <= n_exp && n_exp <= 21 {
        format!("{digits}{}", "0".repeat((n_exp - k) as usize))
    } else if 0 < n_exp && n_exp <= 21 {
        format!(
            "{}.{}",
            &digits[..n_exp as usize],
            &digits[n_exp as usize..]
        )
    } else if -6 < n_exp && n_exp <= 0 {
        format!("0.{}{digits}", "0".repeat((-n_exp) as usize))
    } else {
        let exp_sign = if n_exp >= 1 { "+" } else { "-" };
        let exp = (n_exp - 1).abs();
        if k == 1 {
            format!("{digits}e{exp_sign}{exp}")
        } else {
            format!("{}.{}e{exp_sign}{exp}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `parseInt(s)` with no radix.
fn parse_int(s: &str) -> f64 {
    let s = s.trim_start_matches(is_js_whitespace);
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, s) = if s.starts_with("0x") || s.starts_with("0X") {
        (16, &s[2..])
    } else {
        (10, s)
    };
    let digits: &str = &s[..s
        .bytes()
        .take_while(|b| (*b as char).is_digit(radix))
        .count()];
    if digits.is_empty() {
        return f64::NAN;
    }
    let value = if radix == 10 {
        digits.parse::<f64>().unwrap_or(f64::NAN)
    } else {
        digits.chars().fold(0.0, |acc, c| {
            acc * 16.0 + f64::from(c.to_digit(16).unwrap_or(0))
        })
    };
    if negative {
        -value
    } else {
        value
    }
}

/// `parseFloat(s)`.
fn parse_float(s: &str) -> f64 {
    let s = s.trim_start_matches(is_js_whitespace);
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut literal = String::new();
    if let Some(&sign @ (b'+' | b'-')) = bytes.first() {
        literal.push(char::from(sign));
        i = 1;
    }
    if s[i..].starts_with("Infinity") {
        return if literal == "-" {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let int_len = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    literal.push_str(&s[i..i + int_len]);
    i += int_len;
    let mut frac_len = 0;
    if bytes.get(i) == Some(&b'.') {
        frac_len = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac_len > 0 {
            literal.push('.');
            literal.push_str(&s[i + 1..i + 1 + frac_len]);
        }
        i += 1 + frac_len;
    }
    if int_len == 0 && frac_len == 0 {
        return f64::NAN;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if let Some(&sign @ (b'+' | b'-')) = bytes.get(j) {
            exp.push(char::from(sign));
            j += 1;
        }
        let exp_len = bytes[j.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if exp_len > 0 {
            exp.push_str(&s[j..j + exp_len]);
            literal.push_str(&exp);
        }
    }
    if int_len == 0 {
        literal = literal.replacen('.', "0.", 1);
    }
    literal.parse::<f64>().unwrap_or(f64::NAN)
}

/// `Date.prototype.toISOString` for a finite time value.
fn iso_date(ms: f64) -> String {
    let ms = ms as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else if year < 0 {
        format!("-{:06}", -year)
    } else {
        format!("+{year:06}")
    };
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn number_to_string_matches_ecmascript() {
        let cases = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.5e-9, "-1.5e-9"),
            (0.1, "0.1"),
            (123456.789, "123456.789"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (4.35, "4.35"),
            (-0.0, "0"),
        ];
        for (n, expected) in cases {
            assert_eq!(number_to_js_string(n), expected, "{n:e}");
        }
    }

    // The expected strings below were produced by Node 20's `util.inspect(value)` and
    // `util.format(...args)` for the same source.

    #[test]
    fn string_uses_single_quotes() {
        assert_eq!(inspect_js("'hello'"), "'hello'");
    }

    #[test]
    fn string_with_single_quote_uses_double_quotes() {
        assert_eq!(inspect_js("\"it's\""), "\"it's\"");
    }

    #[test]
    fn string_with_single_and_double_quotes_uses_backticks() {
        assert_eq!(inspect_js("'it\\'s \"x\"'"), "`it's \"x\"`");
    }

    #[test]
    fn string_with_all_quote_kinds_escapes_single_quotes() {
        assert_eq!(inspect_js("'a\"b\\'c`d'"), "'a\"b\\'c`d'");
    }

    #[test]
    fn string_with_dollar_brace_avoids_backticks() {
        assert_eq!(inspect_js("'a\"\\'${x}'"), "'a\"\\'${x}'");
    }

    #[test]
    fn string_control_chars_are_escaped() {
        assert_eq!(
            inspect_js("'a\\nb\\tc\\x1B\\x00\\x7f\\x9f\\\\ \\u00a0'"),
            "'a\\nb\\tc\\x1B\\x00\\x7F\\x9F\\\\  '"
        );
    }

    #[test]
    fn string_lone_surrogate_is_escaped() {
        assert_eq!(inspect_js("'\\ud800x\\udc00'"), "'\\ud800x\\udc00'");
    }

    #[test]
    fn string_astral_char_is_kept() {
        assert_eq!(inspect_js("'\\ud83d\\ude00 ü'"), "'😀 ü'");
    }

    #[test]
    fn string_empty() {
        assert_eq!(inspect_js("''"), "''");
    }

    #[test]
    fn string_long_multiline_is_split_on_newlines() {
        assert_eq!(
            inspect_js("'line one is here\\nline two is also here and it is long enough to exceed the limit\\nend'"),
            "'line one is here\\n' +\n  'line two is also here and it is long enough to exceed the limit\\n' +\n  'end'"
        );
    }

    #[test]
    fn string_long_multiline_nested_is_indented() {
        assert_eq!(
            inspect_js("({ key: 'first line of a long value\\nsecond line of a long value that is long enough\\n' })"),
            "{\n  key: 'first line of a long value\\n' +\n    'second line of a long value that is long enough\\n'\n}"
        );
    }

    #[test]
    fn string_long_single_line_is_not_split() {
        assert_eq!(
            inspect_js("'x'.repeat(90)"),
            "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
        );
    }

    #[test]
    fn number_negative_zero() {
        assert_eq!(inspect_js("-0"), "-0");
    }

    #[test]
    fn number_integers_and_decimals() {
        assert_eq!(
            inspect_js("[0, 1, -1, 1.5, 123.456, 0.1 + 0.2, 2 ** 53, -(2 ** 31)]"),
            "[\n  0,\n  1,\n  -1,\n  1.5,\n  123.456,\n  0.30000000000000004,\n  9007199254740992,\n  -2147483648\n]"
        );
    }

    #[test]
    fn number_exponent_forms() {
        assert_eq!(
            inspect_js("[1e21, 1e-7, 1.5e-10, 5e-324, 1.7976931348623157e308, 123e20, 0.000001]"),
            "[\n  1e+21,\n  1e-7,\n  1.5e-10,\n  5e-324,\n  1.7976931348623157e+308,\n  1.23e+22,\n  0.000001\n]"
        );
    }

    #[test]
    fn number_nan_and_infinities() {
        assert_eq!(
            inspect_js("[NaN, Infinity, -Infinity]"),
            "[ NaN, Infinity, -Infinity ]"
        );
    }

    #[test]
    fn bigint_small() {
        assert_eq!(inspect_js("1n"), "1n");
    }

    #[test]
    fn bigint_large_negative() {
        assert_eq!(
            inspect_js("-123456789012345678901234567890n"),
            "-123456789012345678901234567890n"
        );
    }

    #[test]
    fn booleans_null_undefined() {
        assert_eq!(
            inspect_js("[true, false, null, undefined]"),
            "[ true, false, null, undefined ]"
        );
    }

    #[test]
    fn symbol_with_description() {
        assert_eq!(inspect_js("Symbol('desc')"), "Symbol(desc)");
    }

    #[test]
    fn symbol_without_description() {
        assert_eq!(inspect_js("Symbol()"), "Symbol()");
    }

    #[test]
    fn symbol_well_known() {
        assert_eq!(inspect_js("Symbol.iterator"), "Symbol(Symbol.iterator)");
    }

    #[test]
    fn symbol_description_is_not_escaped_at_top_level() {
        assert_eq!(inspect_js("Symbol('a\\nb')"), "Symbol(a\nb)");
    }

    #[test]
    fn function_named() {
        assert_eq!(inspect_js("function foo() {}"), "[Function: foo]");
    }

    #[test]
    fn function_anonymous() {
        assert_eq!(inspect_js("(0, function () {})"), "[Function (anonymous)]");
    }

    #[test]
    fn function_arrow_named_by_binding() {
        assert_eq!(
            inspect_js("(() => { const f = () => 1; return f; })()"),
            "[Function: f]"
        );
    }

    #[test]
    fn function_async() {
        assert_eq!(inspect_js("async function f() {}"), "[AsyncFunction: f]");
    }

    #[test]
    fn function_async_arrow_anonymous() {
        assert_eq!(
            inspect_js("(0, async () => {})"),
            "[AsyncFunction (anonymous)]"
        );
    }

    #[test]
    fn function_generator() {
        assert_eq!(inspect_js("function* g() {}"), "[GeneratorFunction: g]");
    }

    #[test]
    fn function_async_generator() {
        assert_eq!(
            inspect_js("async function* g() {}"),
            "[AsyncGeneratorFunction: g]"
        );
    }

    #[test]
    fn function_class() {
        assert_eq!(inspect_js("class A {}"), "[class A]");
    }

    #[test]
    fn function_class_anonymous() {
        assert_eq!(inspect_js("(0, class {})"), "[class (anonymous)]");
    }

    #[test]
    fn function_class_extends() {
        assert_eq!(
            inspect_js("(() => { class A {} return class B extends A {}; })()"),
            "[class B extends A]"
        );
    }

    #[test]
    fn function_class_with_static_field() {
        assert_eq!(inspect_js("class A { static x = 1 }"), "[class A] { x: 1 }");
    }

    #[test]
    fn function_with_own_props() {
        assert_eq!(
            inspect_js("Object.assign(function f() {}, { a: 1 })"),
            "[Function: f] { a: 1 }"
        );
    }

    #[test]
    fn function_bound() {
        assert_eq!(
            inspect_js("(function f() {}).bind(null)"),
            "[Function: bound f]"
        );
    }

    #[test]
    fn function_builtin() {
        assert_eq!(
            inspect_js("[Math.max, Map, parseInt]"),
            "[ [Function: max], [Function: Map], [Function: parseInt] ]"
        );
    }

    #[test]
    fn function_null_prototype() {
        assert_eq!(
            inspect_js(
                "(() => { const f = function () {}; Object.setPrototypeOf(f, null); return f; })()"
            ),
            "[Function (null prototype): f]"
        );
    }

    #[test]
    fn function_method_shorthand() {
        assert_eq!(inspect_js("({ m() {} }).m"), "[Function: m]");
    }

    #[test]
    fn array_simple() {
        assert_eq!(inspect_js("[1, 2, 3]"), "[ 1, 2, 3 ]");
    }

    #[test]
    fn array_empty() {
        assert_eq!(inspect_js("[]"), "[]");
    }

    #[test]
    fn array_leading_hole() {
        assert_eq!(inspect_js("[, 1]"), "[ <1 empty item>, 1 ]");
    }

    #[test]
    fn array_multiple_holes() {
        assert_eq!(
            inspect_js("[1, , , 2, , ]"),
            "[ 1, <2 empty items>, 2, <1 empty item> ]"
        );
    }

    #[test]
    fn array_only_holes() {
        assert_eq!(inspect_js("new Array(5)"), "[ <5 empty items> ]");
    }

    #[test]
    fn array_sparse_huge_length() {
        assert_eq!(
            inspect_js("(() => { const a = []; a[5] = 'x'; a.length = 1e9; return a; })()"),
            "[ <5 empty items>, 'x', <999999994 empty items> ]"
        );
    }

    #[test]
    fn array_more_than_100_items() {
        assert_eq!(
            inspect_js("Array.from({ length: 101 }, (_, i) => i)"),
            "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 1 more item\n]"
        );
    }

    #[test]
    fn array_more_than_100_items_plural() {
        assert_eq!(
            inspect_js("Array.from({ length: 150 }, (_, i) => i * 3)"),
            "[\n    0,   3,   6,   9,  12,  15,  18,  21,  24,  27,  30,  33,\n   36,  39,  42,  45,  48,  51,  54,  57,  60,  63,  66,  69,\n   72,  75,  78,  81,  84,  87,  90,  93,  96,  99, 102, 105,\n  108, 111, 114, 117, 120, 123, 126, 129, 132, 135, 138, 141,\n  144, 147, 150, 153, 156, 159, 162, 165, 168, 171, 174, 177,\n  180, 183, 186, 189, 192, 195, 198, 201, 204, 207, 210, 213,\n  216, 219, 222, 225, 228, 231, 234, 237, 240, 243, 246, 249,\n  252, 255, 258, 261, 264, 267, 270, 273, 276, 279, 282, 285,\n  288, 291, 294, 297,\n  ... 50 more items\n]"
        );
    }

    #[test]
    fn array_extra_keys() {
        assert_eq!(inspect_js("Object.assign([1], { a: 2 })"), "[ 1, a: 2 ]");
    }

    #[test]
    fn array_extra_symbol_and_string_keys() {
        assert_eq!(
            inspect_js("(() => { const a = [1, 2]; a[Symbol('q')] = 3; a.x = 4; return a; })()"),
            "[ 1, 2, x: 4, [Symbol(q)]: 3 ]"
        );
    }

    #[test]
    fn array_grouping_of_30_numbers() {
        assert_eq!(
            inspect_js("Array.from({ length: 30 }, (_, i) => i)"),
            "[\n   0,  1,  2,  3,  4,  5,  6,  7,  8,\n   9, 10, 11, 12, 13, 14, 15, 16, 17,\n  18, 19, 20, 21, 22, 23, 24, 25, 26,\n  27, 28, 29\n]"
        );
    }

    #[test]
    fn array_grouping_of_short_strings() {
        assert_eq!(
            inspect_js("Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i).repeat(i % 4 + 1))"),
            "[\n  'a', 'bb', 'ccc', 'dddd',\n  'e', 'ff', 'ggg', 'hhhh',\n  'i', 'jj', 'kkk', 'llll',\n  'm', 'nn', 'ooo', 'pppp',\n  'q', 'rr', 'sss', 'tttt',\n  'u', 'vv', 'www', 'xxxx',\n  'y', 'zz'\n]"
        );
    }

    #[test]
    fn array_grouping_of_mixed_values() {
        assert_eq!(
            inspect_js("[1, 'two', 3, 'four', 5, 'six', 7, null, undefined, true]"),
            "[\n  1,         'two',\n  3,         'four',\n  5,         'six',\n  7,         null,\n  undefined, true\n]"
        );
    }

    #[test]
    fn array_grouping_numbers_right_aligned() {
        assert_eq!(
            inspect_js("[1, 22, 333, 4444, 55555, 666666, 7, 88, 999]"),
            "[\n     1,    22,    333,\n  4444, 55555, 666666,\n     7,    88,    999\n]"
        );
    }

    #[test]
    fn array_seven_long_strings_not_grouped() {
        assert_eq!(
            inspect_js("['aaaaaaaaaaaaaaaaaaaaaaaaa', 'b', 'c', 'd', 'e', 'f', 'g']"),
            "[ 'aaaaaaaaaaaaaaaaaaaaaaaaa', 'b', 'c', 'd', 'e', 'f', 'g' ]"
        );
    }

    #[test]
    fn array_nested_beyond_depth() {
        assert_eq!(
            inspect_js("[[[[1]]], [[{ a: 1 }]]]"),
            "[ [ [ [Array] ] ], [ [ [Object] ] ] ]"
        );
    }

    #[test]
    fn array_of_objects_breaks_lines() {
        assert_eq!(
            inspect_js("[{ name: 'alpha', value: 1 }, { name: 'beta', value: 2 }, { name: 'gamma', value: 3 }]"),
            "[\n  { name: 'alpha', value: 1 },\n  { name: 'beta', value: 2 },\n  { name: 'gamma', value: 3 }\n]"
        );
    }

    #[test]
    fn array_subclass() {
        assert_eq!(
            inspect_js("(() => { class Foo extends Array {} return Foo.from([1, 2]); })()"),
            "Foo(2) [ 1, 2 ]"
        );
    }

    #[test]
    fn array_null_prototype() {
        assert_eq!(
            inspect_js("Object.setPrototypeOf([1], null)"),
            "[Array(1): null prototype] [ 1 ]"
        );
    }

    #[test]
    fn array_sparse_then_more_than_100() {
        assert_eq!(
            inspect_js("(() => { const a = Array.from({ length: 120 }, (_, i) => i); delete a[2]; return a; })()"),
            "[\n  0,  1,  <1 empty item>, 3,  4,\n  5,  6,  7,              8,  9,\n  10, 11, 12,             13, 14,\n  15, 16, 17,             18, 19,\n  20, 21, 22,             23, 24,\n  25, 26, 27,             28, 29,\n  30, 31, 32,             33, 34,\n  35, 36, 37,             38, 39,\n  40, 41, 42,             43, 44,\n  45, 46, 47,             48, 49,\n  50, 51, 52,             53, 54,\n  55, 56, 57,             58, 59,\n  60, 61, 62,             63, 64,\n  65, 66, 67,             68, 69,\n  70, 71, 72,             73, 74,\n  75, 76, 77,             78, 79,\n  80, 81, 82,             83, 84,\n  85, 86, 87,             88, 89,\n  90, 91, 92,             93, 94,\n  95, 96, 97,             98, 99,\n  ... 20 more items\n]"
        );
    }

    #[test]
    fn array_accessor_element() {
        assert_eq!(
            inspect_js("Object.defineProperty([1, 2], 0, { get() { throw new Error('x'); } })"),
            "[ [Getter], 2 ]"
        );
    }

    #[test]
    fn arguments_object() {
        assert_eq!(
            inspect_js("(function () { return arguments; })(1, 2)"),
            "[Arguments] { '0': 1, '1': 2 }"
        );
    }

    #[test]
    fn object_simple() {
        assert_eq!(inspect_js("({ a: 1, 'b-c': 2 })"), "{ a: 1, 'b-c': 2 }");
    }

    #[test]
    fn object_empty() {
        assert_eq!(inspect_js("({})"), "{}");
    }

    #[test]
    fn object_key_quoting() {
        assert_eq!(
            inspect_js("({ \"it's\": 1, 'a\"b': 2, '\\n': 3, '': 4, '1a': 5, a1: 6, $x: 7, 'ü': 8, _ok: 9 })"),
            "{\n  \"it's\": 1,\n  'a\"b': 2,\n  '\\n': 3,\n  '': 4,\n  '1a': 5,\n  a1: 6,\n  '$x': 7,\n  'ü': 8,\n  _ok: 9\n}"
        );
    }

    #[test]
    fn object_numeric_keys_first() {
        assert_eq!(
            inspect_js("({ b: 1, 2: 'two', 1: 'one' })"),
            "{ '1': 'one', '2': 'two', b: 1 }"
        );
    }

    #[test]
    fn object_symbol_keys() {
        assert_eq!(
            inspect_js("({ a: 1, [Symbol('x')]: 2, [Symbol()]: 3, [Symbol.iterator]: 4 })"),
            "{ a: 1, [Symbol(x)]: 2, [Symbol()]: 3, [Symbol(Symbol.iterator)]: 4 }"
        );
    }

    #[test]
    fn object_symbol_key_is_escaped() {
        assert_eq!(
            inspect_js("({ [Symbol(\"it's\\n\")]: 1 })"),
            "{ [Symbol(it\\'s\\n)]: 1 }"
        );
    }

    #[test]
    fn object_proto_key_is_bracketed() {
        assert_eq!(inspect_js("({ ['__proto__']: 1 })"), "{ ['__proto__']: 1 }");
    }

    #[test]
    fn object_non_enumerable_props_hidden() {
        assert_eq!(
            inspect_js("(() => { const o = { v: 2 }; Object.defineProperty(o, 'hidden', { value: 1 }); return o; })()"),
            "{ v: 2 }"
        );
    }

    #[test]
    fn object_inherited_props_hidden() {
        assert_eq!(inspect_js("({ __proto__: { a: 1 }, b: 2 })"), "{ b: 2 }");
    }

    #[test]
    fn object_class_instance() {
        assert_eq!(
            inspect_js("new (class Foo { constructor() { this.x = 1; } })()"),
            "Foo { x: 1 }"
        );
    }

    #[test]
    fn object_class_instance_empty() {
        assert_eq!(inspect_js("new (class Foo {})()"), "Foo {}");
    }

    #[test]
    fn object_anonymous_class_instance() {
        assert_eq!(inspect_js("new (class {})()"), "{}");
    }

    #[test]
    fn object_null_prototype_empty() {
        assert_eq!(
            inspect_js("Object.create(null)"),
            "[Object: null prototype] {}"
        );
    }

    #[test]
    fn object_null_prototype_with_keys() {
        assert_eq!(
            inspect_js("Object.assign(Object.create(null), { a: 1 })"),
            "[Object: null prototype] { a: 1 }"
        );
    }

    #[test]
    fn object_prototype_without_constructor() {
        assert_eq!(
            inspect_js(
                "(() => { const o = Object.create(Object.create(null)); o.a = 1; return o; })()"
            ),
            "Object <[Object: null prototype] {}> { a: 1 }"
        );
    }

    #[test]
    fn object_getter_is_not_called() {
        assert_eq!(
            inspect_js("({ get a() { throw new Error('called'); }, b: 1 })"),
            "{ a: [Getter], b: 1 }"
        );
    }

    #[test]
    fn object_setter_only() {
        assert_eq!(inspect_js("({ set a(v) {} })"), "{ a: [Setter] }");
    }

    #[test]
    fn object_getter_setter() {
        assert_eq!(
            inspect_js("({ get a() { return 1; }, set a(v) {} })"),
            "{ a: [Getter/Setter] }"
        );
    }

    #[test]
    fn object_class_prototype_getter_is_not_shown() {
        assert_eq!(
            inspect_js("new (class Foo { get x() { throw 1; } })()"),
            "Foo {}"
        );
    }

    #[test]
    fn object_to_string_tag_from_prototype() {
        assert_eq!(
            inspect_js("(() => { class Foo {} Foo.prototype[Symbol.toStringTag] = 'T'; return new Foo(); })()"),
            "Foo [T] {}"
        );
    }

    #[test]
    fn object_own_enumerable_to_string_tag_is_a_key() {
        assert_eq!(
            inspect_js("({ [Symbol.toStringTag]: 'T' })"),
            "{ [Symbol(Symbol.toStringTag)]: 'T' }"
        );
    }

    #[test]
    fn object_depth_limit() {
        assert_eq!(
            inspect_js("({ a: { b: { c: { d: 1 } } } })"),
            "{ a: { b: { c: [Object] } } }"
        );
    }

    #[test]
    fn object_depth_limit_array_and_class() {
        assert_eq!(
            inspect_js("(() => { class Foo {} return { a: { b: { arr: [1], foo: new Foo(), nul: Object.create(null), map: new Map() } } }; })()"),
            "{\n  a: {\n    b: {\n      arr: [Array],\n      foo: Foo {},\n      nul: [Object: null prototype] {},\n      map: Map(0) {}\n    }\n  }\n}"
        );
    }

    #[test]
    fn object_depth_limit_empty_objects_still_shown() {
        assert_eq!(
            inspect_js("({ a: { b: { c: {}, d: [] } } })"),
            "{ a: { b: { c: {}, d: [] } } }"
        );
    }

    #[test]
    fn object_circular_self() {
        assert_eq!(
            inspect_js("(() => { const o = {}; o.self = o; return o; })()"),
            "<ref *1> { self: [Circular *1] }"
        );
    }

    #[test]
    fn object_circular_two_refs() {
        assert_eq!(
            inspect_js("(() => { const a = { name: 'a' }; const b = { name: 'b', a }; a.b = b; return { a, b }; })()"),
            "{\n  a: <ref *1> { name: 'a', b: { name: 'b', a: [Circular *1] } },\n  b: <ref *2> { name: 'b', a: <ref *1> { name: 'a', b: [Circular *2] } }\n}"
        );
    }

    #[test]
    fn object_circular_in_array() {
        assert_eq!(
            inspect_js("(() => { const a = [1]; a.push(a); return a; })()"),
            "<ref *1> [ 1, [Circular *1] ]"
        );
    }

    #[test]
    fn object_long_values_break_lines() {
        assert_eq!(
            inspect_js("({ alpha: 'x'.repeat(30), beta: 'y'.repeat(30), gamma: 1 })"),
            "{\n  alpha: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  beta: 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy',\n  gamma: 1\n}"
        );
    }

    #[test]
    fn object_compact_three_levels() {
        assert_eq!(
            inspect_js("({ first: [1, 2, 3], second: { inner: [1, 2, 3] } })"),
            "{ first: [ 1, 2, 3 ], second: { inner: [ 1, 2, 3 ] } }"
        );
    }

    #[test]
    fn object_four_levels_with_compact_breaks() {
        assert_eq!(
            inspect_js("({ a: { b: { c: {} } }, d: { e: { f: 1 } } })"),
            "{ a: { b: { c: {} } }, d: { e: { f: 1 } } }"
        );
    }

    #[test]
    fn object_nested_multiline_indentation() {
        assert_eq!(
            inspect_js("({ outer: { one: 'x'.repeat(40), two: 'y'.repeat(40) }, after: true })"),
            "{\n  outer: {\n    one: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n    two: 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'\n  },\n  after: true\n}"
        );
    }

    #[test]
    fn object_many_keys() {
        assert_eq!(
            inspect_js("Object.fromEntries(Array.from({ length: 30 }, (_, i) => ['key' + i, i]))"),
            "{\n  key0: 0,\n  key1: 1,\n  key2: 2,\n  key3: 3,\n  key4: 4,\n  key5: 5,\n  key6: 6,\n  key7: 7,\n  key8: 8,\n  key9: 9,\n  key10: 10,\n  key11: 11,\n  key12: 12,\n  key13: 13,\n  key14: 14,\n  key15: 15,\n  key16: 16,\n  key17: 17,\n  key18: 18,\n  key19: 19,\n  key20: 20,\n  key21: 21,\n  key22: 22,\n  key23: 23,\n  key24: 24,\n  key25: 25,\n  key26: 26,\n  key27: 27,\n  key28: 28,\n  key29: 29\n}"
        );
    }

    #[test]
    fn object_with_functions() {
        assert_eq!(
            inspect_js("({ f() {}, g: () => 1, h: class {} })"),
            "{ f: [Function: f], g: [Function: g], h: [class h] }"
        );
    }

    #[test]
    fn object_to_string_method_is_not_called() {
        assert_eq!(
            inspect_js("({ toString() { throw new Error('called'); } })"),
            "{ toString: [Function: toString] }"
        );
    }

    #[test]
    fn object_generator_instance() {
        assert_eq!(inspect_js("(function* () {})()"), "Object [Generator] {}");
    }

    #[test]
    fn object_array_iterator() {
        assert_eq!(
            inspect_js("[1, 2][Symbol.iterator]()"),
            "Object [Array Iterator] {}"
        );
    }

    #[test]
    fn object_math_tag() {
        assert_eq!(
            inspect_js("({ m: Math, j: JSON })"),
            "{ m: Object [Math] {}, j: Object [JSON] {} }"
        );
    }

    #[test]
    fn array_grouping_uses_display_width_for_cjk() {
        assert_eq!(
            inspect_js("['日本語', '中文字', 'ok', 'a', 'b', 'c', 'd', 'e']"),
            "[\n  '日本語', '中文字',\n  'ok',     'a',\n  'b',      'c',\n  'd',      'e'\n]"
        );
    }

    #[test]
    fn object_prototype_is_null_prototype() {
        assert_eq!(
            inspect_js("Object.prototype"),
            "[Object: null prototype] {}"
        );
    }

    #[test]
    fn object_builtin_prototypes() {
        assert_eq!(
            inspect_js("[Array.prototype, Map.prototype, Promise.prototype, Symbol.prototype]"),
            "[\n  Object(0) [],\n  Object [Map] {},\n  Object [Promise] {},\n  Object [Symbol] {}\n]"
        );
    }

    #[test]
    fn error_non_native_instance_of_error() {
        assert_eq!(inspect_js("Object.create(Error.prototype)"), "[Error]");
    }

    #[test]
    fn error_circular_self_reference() {
        assert_eq!(
            inspect_js(
                "(() => { const e = new Error('x'); e.stack = ''; e.self = e; return e; })()"
            ),
            "<ref *1> [Error: x] { self: [Circular *1] }"
        );
    }

    #[test]
    fn error_nested_props_break_lines() {
        assert_eq!(
            inspect_js("(() => { const e = new RangeError('r'); e.stack = ''; e.extra = { deep: { deeper: { deepest: 1 } } }; return e; })()"),
            "[RangeError: r] { extra: { deep: { deeper: [Object] } } }"
        );
    }

    #[test]
    fn map_nested_values() {
        assert_eq!(
            inspect_js("new Map([['key', new Set([1, 2])], ['other', new Map([[1, new Map()]])]])"),
            "Map(2) {\n  'key' => Set(2) { 1, 2 },\n  'other' => Map(1) { 1 => Map(0) {} }\n}"
        );
    }

    #[test]
    fn nested_mixed_structure_breaks_like_node() {
        assert_eq!(
            inspect_js("({ users: [{ id: 1, name: 'Ada Lovelace', tags: ['math', 'poetry'] }, { id: 2, name: 'Alan Turing', tags: ['logic'] }], total: 2, meta: { page: 1, of: new Map([['x', [1, 2, 3]]]) } })"),
            "{\n  users: [\n    { id: 1, name: 'Ada Lovelace', tags: [Array] },\n    { id: 2, name: 'Alan Turing', tags: [Array] }\n  ],\n  total: 2,\n  meta: { page: 1, of: Map(1) { 'x' => [Array] } }\n}"
        );
    }

    #[test]
    fn map_with_entries() {
        assert_eq!(
            inspect_js("new Map([['a', 1], ['b', 2]])"),
            "Map(2) { 'a' => 1, 'b' => 2 }"
        );
    }

    #[test]
    fn map_empty() {
        assert_eq!(inspect_js("new Map()"), "Map(0) {}");
    }

    #[test]
    fn map_object_keys() {
        assert_eq!(
            inspect_js("new Map([[{ k: 1 }, [1, 2]]])"),
            "Map(1) { { k: 1 } => [ 1, 2 ] }"
        );
    }

    #[test]
    fn map_more_than_100_entries() {
        assert_eq!(
            inspect_js("new Map(Array.from({ length: 102 }, (_, i) => [i, i]))"),
            "Map(102) {\n  0 => 0,\n  1 => 1,\n  2 => 2,\n  3 => 3,\n  4 => 4,\n  5 => 5,\n  6 => 6,\n  7 => 7,\n  8 => 8,\n  9 => 9,\n  10 => 10,\n  11 => 11,\n  12 => 12,\n  13 => 13,\n  14 => 14,\n  15 => 15,\n  16 => 16,\n  17 => 17,\n  18 => 18,\n  19 => 19,\n  20 => 20,\n  21 => 21,\n  22 => 22,\n  23 => 23,\n  24 => 24,\n  25 => 25,\n  26 => 26,\n  27 => 27,\n  28 => 28,\n  29 => 29,\n  30 => 30,\n  31 => 31,\n  32 => 32,\n  33 => 33,\n  34 => 34,\n  35 => 35,\n  36 => 36,\n  37 => 37,\n  38 => 38,\n  39 => 39,\n  40 => 40,\n  41 => 41,\n  42 => 42,\n  43 => 43,\n  44 => 44,\n  45 => 45,\n  46 => 46,\n  47 => 47,\n  48 => 48,\n  49 => 49,\n  50 => 50,\n  51 => 51,\n  52 => 52,\n  53 => 53,\n  54 => 54,\n  55 => 55,\n  56 => 56,\n  57 => 57,\n  58 => 58,\n  59 => 59,\n  60 => 60,\n  61 => 61,\n  62 => 62,\n  63 => 63,\n  64 => 64,\n  65 => 65,\n  66 => 66,\n  67 => 67,\n  68 => 68,\n  69 => 69,\n  70 => 70,\n  71 => 71,\n  72 => 72,\n  73 => 73,\n  74 => 74,\n  75 => 75,\n  76 => 76,\n  77 => 77,\n  78 => 78,\n  79 => 79,\n  80 => 80,\n  81 => 81,\n  82 => 82,\n  83 => 83,\n  84 => 84,\n  85 => 85,\n  86 => 86,\n  87 => 87,\n  88 => 88,\n  89 => 89,\n  90 => 90,\n  91 => 91,\n  92 => 92,\n  93 => 93,\n  94 => 94,\n  95 => 95,\n  96 => 96,\n  97 => 97,\n  98 => 98,\n  99 => 99,\n  ... 2 more items\n}"
        );
    }

    #[test]
    fn map_subclass() {
        assert_eq!(
            inspect_js("(() => { class Foo extends Map {} return new Foo([[1, 2]]); })()"),
            "Foo(1) [Map] { 1 => 2 }"
        );
    }

    #[test]
    fn map_null_prototype() {
        assert_eq!(
            inspect_js("Object.setPrototypeOf(new Map([[1, 2]]), null)"),
            "[Map(1): null prototype] { 1 => 2 }"
        );
    }

    #[test]
    fn map_with_extra_key() {
        assert_eq!(
            inspect_js("Object.assign(new Map([[1, 2]]), { extra: true })"),
            "Map(1) { 1 => 2, extra: true }"
        );
    }

    #[test]
    fn set_with_one_item() {
        assert_eq!(inspect_js("new Set([1])"), "Set(1) { 1 }");
    }

    #[test]
    fn set_empty() {
        assert_eq!(inspect_js("new Set()"), "Set(0) {}");
    }

    #[test]
    fn set_of_strings() {
        assert_eq!(inspect_js("new Set(['a', 'b'])"), "Set(2) { 'a', 'b' }");
    }

    #[test]
    fn set_more_than_100_items() {
        assert_eq!(
            inspect_js("new Set(Array.from({ length: 101 }, (_, i) => i))"),
            "Set(101) {\n  0,\n  1,\n  2,\n  3,\n  4,\n  5,\n  6,\n  7,\n  8,\n  9,\n  10,\n  11,\n  12,\n  13,\n  14,\n  15,\n  16,\n  17,\n  18,\n  19,\n  20,\n  21,\n  22,\n  23,\n  24,\n  25,\n  26,\n  27,\n  28,\n  29,\n  30,\n  31,\n  32,\n  33,\n  34,\n  35,\n  36,\n  37,\n  38,\n  39,\n  40,\n  41,\n  42,\n  43,\n  44,\n  45,\n  46,\n  47,\n  48,\n  49,\n  50,\n  51,\n  52,\n  53,\n  54,\n  55,\n  56,\n  57,\n  58,\n  59,\n  60,\n  61,\n  62,\n  63,\n  64,\n  65,\n  66,\n  67,\n  68,\n  69,\n  70,\n  71,\n  72,\n  73,\n  74,\n  75,\n  76,\n  77,\n  78,\n  79,\n  80,\n  81,\n  82,\n  83,\n  84,\n  85,\n  86,\n  87,\n  88,\n  89,\n  90,\n  91,\n  92,\n  93,\n  94,\n  95,\n  96,\n  97,\n  98,\n  99,\n  ... 1 more item\n}"
        );
    }

    #[test]
    fn set_nested_beyond_depth() {
        assert_eq!(
            inspect_js("({ a: { b: { s: new Set([1]), e: new Set() } } })"),
            "{ a: { b: { s: [Set], e: Set(0) {} } } }"
        );
    }

    #[test]
    fn weak_map_and_weak_set() {
        assert_eq!(
            inspect_js("[new WeakMap(), new WeakSet()]"),
            "[ WeakMap { <items unknown> }, WeakSet { <items unknown> } ]"
        );
    }

    #[test]
    fn date_iso_string() {
        assert_eq!(inspect_js("new Date(0)"), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn date_with_milliseconds() {
        assert_eq!(
            inspect_js("new Date(Date.UTC(2024, 1, 29, 13, 5, 9, 45))"),
            "2024-02-29T13:05:09.045Z"
        );
    }

    #[test]
    fn date_negative_year() {
        assert_eq!(
            inspect_js("new Date(-62198755200000 - 86400000 * 400)"),
            "-000003-11-27T00:00:00.000Z"
        );
    }

    #[test]
    fn date_far_future() {
        assert_eq!(
            inspect_js("new Date(8.64e15)"),
            "+275760-09-13T00:00:00.000Z"
        );
    }

    #[test]
    fn date_invalid() {
        assert_eq!(inspect_js("new Date(NaN)"), "Invalid Date");
    }

    #[test]
    fn date_with_props() {
        assert_eq!(
            inspect_js("Object.assign(new Date(0), { a: 1 })"),
            "1970-01-01T00:00:00.000Z { a: 1 }"
        );
    }

    #[test]
    fn date_subclass() {
        assert_eq!(
            inspect_js("(() => { class D extends Date {} return new D(0); })()"),
            "D 1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn regexp_with_flags() {
        assert_eq!(inspect_js("/a+/gi"), "/a+/gi");
    }

    #[test]
    fn regexp_all_flags() {
        assert_eq!(inspect_js("/x/dgimsy"), "/x/dgimsy");
    }

    #[test]
    fn regexp_escaped_slash() {
        assert_eq!(inspect_js("new RegExp('a/b')"), "/a\\/b/");
    }

    #[test]
    fn regexp_empty() {
        assert_eq!(inspect_js("new RegExp('')"), "/(?:)/");
    }

    #[test]
    fn regexp_with_props() {
        assert_eq!(inspect_js("Object.assign(/a/, { x: 1 })"), "/a/ { x: 1 }");
    }

    #[test]
    fn boxed_number() {
        assert_eq!(inspect_js("new Number(3)"), "[Number: 3]");
    }

    #[test]
    fn boxed_negative_zero() {
        assert_eq!(inspect_js("new Number(-0)"), "[Number: -0]");
    }

    #[test]
    fn boxed_string() {
        assert_eq!(inspect_js("new String('x')"), "[String: 'x']");
    }

    #[test]
    fn boxed_string_with_prop() {
        assert_eq!(
            inspect_js("Object.assign(new String('ab'), { x: 1 })"),
            "[String: 'ab'] { x: 1 }"
        );
    }

    #[test]
    fn boxed_boolean() {
        assert_eq!(inspect_js("new Boolean(false)"), "[Boolean: false]");
    }

    #[test]
    fn boxed_bigint() {
        assert_eq!(inspect_js("Object(1n)"), "[BigInt: 1n]");
    }

    #[test]
    fn boxed_symbol() {
        assert_eq!(inspect_js("Object(Symbol('x'))"), "[Symbol: Symbol(x)]");
    }

    #[test]
    fn promise_resolved() {
        assert_eq!(inspect_js("Promise.resolve(1)"), "Promise { 1 }");
    }

    #[test]
    fn promise_pending() {
        assert_eq!(inspect_js("new Promise(() => {})"), "Promise { <pending> }");
    }

    #[test]
    fn promise_rejected() {
        assert_eq!(
            inspect_js("Promise.reject(42)"),
            "Promise { <rejected> 42 }"
        );
    }

    #[test]
    fn promise_resolved_with_object() {
        assert_eq!(
            inspect_js("Promise.resolve({ a: [1, 2] })"),
            "Promise { { a: [ 1, 2 ] } }"
        );
    }

    #[test]
    fn promise_with_extra_key() {
        assert_eq!(
            inspect_js("Object.assign(Promise.resolve(1), { x: 2 })"),
            "Promise { 1, x: 2 }"
        );
    }

    #[test]
    fn typed_array_uint8() {
        assert_eq!(
            inspect_js("new Uint8Array([1, 2, 3])"),
            "Uint8Array(3) [ 1, 2, 3 ]"
        );
    }

    #[test]
    fn typed_array_empty() {
        assert_eq!(inspect_js("new Uint8Array(0)"), "Uint8Array(0) []");
    }

    #[test]
    fn typed_array_float64_specials() {
        assert_eq!(
            inspect_js("new Float64Array([1.5, -0, NaN, Infinity])"),
            "Float64Array(4) [ 1.5, -0, NaN, Infinity ]"
        );
    }

    #[test]
    fn typed_array_float32() {
        assert_eq!(
            inspect_js("new Float32Array([0.1, 2.5])"),
            "Float32Array(2) [ 0.10000000149011612, 2.5 ]"
        );
    }

    #[test]
    fn typed_array_signed_ints() {
        assert_eq!(
            inspect_js("[new Int8Array([-1, 127]), new Int16Array([-300]), new Int32Array([-70000]), new Uint32Array([4294967295])]"),
            "[\n  Int8Array(2) [ -1, 127 ],\n  Int16Array(1) [ -300 ],\n  Int32Array(1) [ -70000 ],\n  Uint32Array(1) [ 4294967295 ]\n]"
        );
    }

    #[test]
    fn typed_array_bigint() {
        assert_eq!(
            inspect_js(
                "[new BigInt64Array([1n, -2n]), new BigUint64Array([18446744073709551615n])]"
            ),
            "[\n  BigInt64Array(2) [ 1n, -2n ],\n  BigUint64Array(1) [ 18446744073709551615n ]\n]"
        );
    }

    #[test]
    fn typed_array_uint8_clamped() {
        assert_eq!(
            inspect_js("new Uint8ClampedArray([300, -5])"),
            "Uint8ClampedArray(2) [ 255, 0 ]"
        );
    }

    #[test]
    fn typed_array_more_than_100_items_grouped() {
        assert_eq!(
            inspect_js("new Uint8Array(200).map((_, i) => i)"),
            "Uint8Array(200) [\n   0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11,\n  12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n  36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,\n  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,\n  60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n  72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,\n  84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,\n  96, 97, 98, 99,\n  ... 100 more items\n]"
        );
    }

    #[test]
    fn typed_array_view_offset() {
        assert_eq!(
            inspect_js("new Uint16Array(new Uint8Array([1, 0, 2, 0, 3, 0]).buffer, 2, 2)"),
            "Uint16Array(2) [ 2, 3 ]"
        );
    }

    #[test]
    fn typed_array_extra_key() {
        assert_eq!(
            inspect_js("Object.assign(new Uint8Array(2), { x: 1 })"),
            "Uint8Array(2) [ 0, 0, x: 1 ]"
        );
    }

    #[test]
    fn typed_array_subclass() {
        assert_eq!(
            inspect_js("(() => { class Bytes extends Uint8Array {} return new Bytes(2); })()"),
            "Bytes(2) [Uint8Array] [ 0, 0 ]"
        );
    }

    #[test]
    fn array_buffer() {
        assert_eq!(
            inspect_js("new Uint8Array([1, 2]).buffer"),
            "ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }"
        );
    }

    #[test]
    fn array_buffer_empty() {
        assert_eq!(
            inspect_js("new ArrayBuffer(0)"),
            "ArrayBuffer { [Uint8Contents]: <>, byteLength: 0 }"
        );
    }

    #[test]
    fn array_buffer_more_than_100_bytes() {
        assert_eq!(
            inspect_js("new Uint8Array(120).fill(255).buffer"),
            "ArrayBuffer {\n  [Uint8Contents]: <ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ... 20 more bytes>,\n  byteLength: 120\n}"
        );
    }

    #[test]
    fn data_view() {
        assert_eq!(
            inspect_js("new DataView(new ArrayBuffer(2))"),
            "DataView {\n  byteLength: 2,\n  byteOffset: 0,\n  buffer: ArrayBuffer { [Uint8Contents]: <00 00>, byteLength: 2 }\n}"
        );
    }

    #[test]
    fn error_without_stack_is_bracketed() {
        assert_eq!(
            inspect_js("(() => { const e = new Error('x'); e.stack = ''; return e; })()"),
            "[Error: x]"
        );
    }

    #[test]
    fn error_nested_without_stack_is_bracketed() {
        assert_eq!(
            inspect_js("(() => { const e = new Error('x'); e.stack = ''; return { e }; })()"),
            "{ e: [Error: x] }"
        );
    }

    #[test]
    fn error_without_message() {
        assert_eq!(
            inspect_js("(() => { const e = new Error(); e.stack = ''; return e; })()"),
            "[Error]"
        );
    }

    #[test]
    fn error_type_error() {
        assert_eq!(
            inspect_js("(() => { const e = new TypeError('t'); e.stack = ''; return e; })()"),
            "[TypeError: t]"
        );
    }

    #[test]
    fn error_own_props_appended() {
        assert_eq!(
            inspect_js(
                "(() => { const e = new Error('x'); e.stack = ''; e.code = 'E'; return { e }; })()"
            ),
            "{ e: [Error: x] { code: 'E' } }"
        );
    }

    #[test]
    fn error_subclass_shows_constructor() {
        assert_eq!(
            inspect_js("(() => { class MyErr extends Error {} const e = new MyErr('m'); e.stack = ''; return e; })()"),
            "[MyErr [Error]: m]"
        );
    }

    #[test]
    fn error_name_set_in_constructor() {
        assert_eq!(
            inspect_js("(() => { class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError'; } } const e = new ValidationError('bad'); e.stack = ''; return e; })()"),
            "[ValidationError: bad]"
        );
    }

    #[test]
    fn error_with_cause() {
        assert_eq!(
            inspect_js(
                "(() => { const e = new Error('x', { cause: 'c' }); e.stack = ''; return e; })()"
            ),
            "[Error: x] { [cause]: 'c' }"
        );
    }

    #[test]
    fn error_aggregate() {
        assert_eq!(
            inspect_js(
                "(() => { const e = new AggregateError([1], 'm'); e.stack = ''; return e; })()"
            ),
            "[AggregateError: m] { [errors]: [ 1 ] }"
        );
    }

    #[test]
    fn error_custom_stack_string() {
        assert_eq!(
            inspect_js("(() => { const e = new Error('x'); e.stack = 'custom'; return e; })()"),
            "[custom]"
        );
    }

    #[test]
    fn error_v8_style_stack_is_indented() {
        assert_eq!(
            inspect_js("(() => { const e = new Error('x'); e.stack = 'Error: x\\n    at foo (a.js:1:1)'; return { a: e }; })()"),
            "{\n  a: Error: x\n      at foo (a.js:1:1)\n}"
        );
    }

    #[test]
    fn error_name_property_shown_when_not_in_stack() {
        assert_eq!(
            inspect_js("(() => { const e = new Error('x'); e.stack = 'Error: x'; e.name = 'Foo'; return e; })()"),
            "[Error: x] { name: 'Foo' }"
        );
    }

    #[test]
    fn proxy_shows_target() {
        assert_eq!(inspect_js("new Proxy([1, 2], {})"), "[ 1, 2 ]");
    }

    #[test]
    fn proxy_revoked() {
        assert_eq!(
            inspect_js(
                "(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })()"
            ),
            "<Revoked Proxy>"
        );
    }

    #[test]
    fn proxy_traps_are_not_run() {
        assert_eq!(
            inspect_js("({ a: new Proxy({ b: 1 }, { get() { throw 1; }, ownKeys() { throw 1; }, getOwnPropertyDescriptor() { throw 1; }, getPrototypeOf() { throw 1; } }) })"),
            "{ a: { b: 1 } }"
        );
    }

    #[test]
    fn proxy_of_function() {
        assert_eq!(
            inspect_js("new Proxy(function f() {}, {})"),
            "[Function: f]"
        );
    }

    #[test]
    fn hostile_huge_dense_array_is_cut_at_100() {
        assert_eq!(
            inspect_js("new Array(1e6).fill(0)"),
            "[\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0,\n  ... 999900 more items\n]"
        );
    }

    #[test]
    fn hostile_huge_typed_array_is_cut_at_100() {
        assert_eq!(
            inspect_js("new Float64Array(1e7)"),
            "Float64Array(10000000) [\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n  0, 0, 0, 0,\n  ... 9999900 more items\n]"
        );
    }

    #[test]
    fn hostile_huge_array_buffer_is_cut_at_100_bytes() {
        assert_eq!(
            inspect_js("new ArrayBuffer(1e7)"),
            "ArrayBuffer {\n  [Uint8Contents]: <00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 ... 9999900 more bytes>,\n  byteLength: 10000000\n}"
        );
    }

    #[test]
    fn hostile_deep_nesting_stops_at_depth() {
        assert_eq!(
            inspect_js("(() => { let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return o; })()"),
            "{ a: { a: { a: [Object] } } }"
        );
    }

    #[test]
    fn hostile_long_prototype_chain() {
        assert_eq!(
            inspect_js("(() => { let o = {}; for (let i = 0; i < 500; i++) o = Object.create(o); o.x = 1; return o; })()"),
            "{ x: 1 }"
        );
    }

    #[test]
    fn hostile_huge_set_is_cut_at_100() {
        assert_eq!(
            inspect_js("new Set(Array.from({ length: 100000 }, (_, i) => i))"),
            "Set(100000) {\n  0,\n  1,\n  2,\n  3,\n  4,\n  5,\n  6,\n  7,\n  8,\n  9,\n  10,\n  11,\n  12,\n  13,\n  14,\n  15,\n  16,\n  17,\n  18,\n  19,\n  20,\n  21,\n  22,\n  23,\n  24,\n  25,\n  26,\n  27,\n  28,\n  29,\n  30,\n  31,\n  32,\n  33,\n  34,\n  35,\n  36,\n  37,\n  38,\n  39,\n  40,\n  41,\n  42,\n  43,\n  44,\n  45,\n  46,\n  47,\n  48,\n  49,\n  50,\n  51,\n  52,\n  53,\n  54,\n  55,\n  56,\n  57,\n  58,\n  59,\n  60,\n  61,\n  62,\n  63,\n  64,\n  65,\n  66,\n  67,\n  68,\n  69,\n  70,\n  71,\n  72,\n  73,\n  74,\n  75,\n  76,\n  77,\n  78,\n  79,\n  80,\n  81,\n  82,\n  83,\n  84,\n  85,\n  86,\n  87,\n  88,\n  89,\n  90,\n  91,\n  92,\n  93,\n  94,\n  95,\n  96,\n  97,\n  98,\n  99,\n  ... 99900 more items\n}"
        );
    }

    #[test]
    fn format_single_string_is_raw() {
        assert_eq!(format_js("['hello\\nworld']"), "hello\nworld");
    }

    #[test]
    fn format_strings_are_joined_raw() {
        assert_eq!(
            format_js("['a', 'b', 1, { x: 1 }, 'c d']"),
            "a b 1 { x: 1 } c d"
        );
    }

    #[test]
    fn format_non_string_first_argument() {
        assert_eq!(format_js("[1, 'a', [2]]"), "1 a [ 2 ]");
    }

    #[test]
    fn format_no_arguments() {
        assert_eq!(format_js("[]"), "");
    }

    #[test]
    fn format_percent_s_string() {
        assert_eq!(format_js("['%s!', 'str']"), "str!");
    }

    #[test]
    fn format_percent_s_numbers() {
        assert_eq!(
            format_js("['%s %s %s %s', 42, -0, 1.5e21, 1n]"),
            "42 -0 1.5e+21 1n"
        );
    }

    #[test]
    fn format_percent_s_primitives() {
        assert_eq!(
            format_js("['%s %s %s %s', null, undefined, true, Symbol('s')]"),
            "null undefined true Symbol(s)"
        );
    }

    #[test]
    fn format_percent_s_object_uses_depth_zero() {
        assert_eq!(
            format_js("['%s', { a: { b: 1 }, c: [1] }]"),
            "{ a: [Object], c: [Array] }"
        );
    }

    #[test]
    fn format_percent_s_array() {
        assert_eq!(format_js("['%s', [1, [2, [3]]]]"), "[ 1, [Array] ]");
    }

    #[test]
    fn format_percent_s_class_instance() {
        assert_eq!(
            format_js("['%s', new (class Foo { constructor() { this.a = 1; } })()]"),
            "Foo { a: 1 }"
        );
    }

    #[test]
    fn format_percent_s_own_to_string_is_used() {
        assert_eq!(
            format_js("['%s', new (class Foo { toString() { return 'custom'; } })()]"),
            "custom"
        );
    }

    #[test]
    fn format_percent_s_date() {
        assert_eq!(format_js("['%s', new Date(0)]"), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn format_percent_s_function_prints_source() {
        assert_eq!(
            format_js("['%s', function f() { return 1; }]"),
            "function f() { return 1; }"
        );
    }

    #[test]
    fn format_percent_d() {
        assert_eq!(
            format_js("['%d %d %d %d %d', '42', 1.5, -0, 5n, '0x10']"),
            "42 1.5 -0 5n 16"
        );
    }

    #[test]
    fn format_percent_d_non_numbers() {
        assert_eq!(
            format_js("['%d %d %d %d', {}, 'abc', null, Symbol('s')]"),
            "NaN NaN 0 NaN"
        );
    }

    #[test]
    fn format_percent_i() {
        assert_eq!(
            format_js("['%i %i %i %i %i', '42.9px', 1e21, -0, '0x1F', 7n]"),
            "42 1 0 31 7n"
        );
    }

    #[test]
    fn format_percent_i_non_numbers() {
        assert_eq!(format_js("['%i %i %i', 'abc', null, {}]"), "NaN NaN NaN");
    }

    #[test]
    fn format_percent_f() {
        assert_eq!(
            format_js("['%f %f %f %f %f', '3.25abc', '-0', '.5', '1e3x', 'Infinityx']"),
            "3.25 -0 0.5 1000 Infinity"
        );
    }

    #[test]
    fn format_percent_f_non_numbers() {
        assert_eq!(format_js("['%f %f', 'abc', Symbol('s')]"), "NaN NaN");
    }

    #[test]
    fn format_percent_j() {
        assert_eq!(
            format_js("['%j', { a: [1, 'x'], b: undefined }]"),
            "{\"a\":[1,\"x\"]}"
        );
    }

    #[test]
    fn format_percent_j_circular() {
        assert_eq!(
            format_js("(() => { const o = {}; o.o = o; return ['%j', o]; })()"),
            "[Circular]"
        );
    }

    #[test]
    fn format_percent_j_undefined() {
        assert_eq!(format_js("['%j', undefined]"), "undefined");
    }

    #[test]
    fn format_percent_j_calls_to_json() {
        assert_eq!(format_js("['%j', { toJSON() { return 'J'; } }]"), "\"J\"");
    }

    #[test]
    fn format_percent_upper_o() {
        assert_eq!(
            format_js("['%O', { a: { b: { c: { d: 1 } } } }]"),
            "{ a: { b: { c: [Object] } } }"
        );
    }

    #[test]
    fn format_percent_lower_o_shows_hidden() {
        assert_eq!(format_js("['%o', [1, 2]]"), "[ 1, 2, [length]: 2 ]");
    }

    #[test]
    fn format_percent_lower_o_depth_four() {
        assert_eq!(
            format_js("['%o', { a: { b: { c: { d: { e: { f: 1 } } } } } }]"),
            "{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}"
        );
    }

    #[test]
    fn format_percent_lower_o_shows_proxy() {
        assert_eq!(
            format_js("['%o', new Proxy({ a: 1 }, {})]"),
            "Proxy [ { a: 1 }, {} ]"
        );
    }

    #[test]
    fn format_percent_c_is_consumed() {
        assert_eq!(format_js("['%cstyled', 'color: red']"), "styled");
    }

    #[test]
    fn format_percent_percent() {
        assert_eq!(format_js("['100%% sure', 1]"), "100% sure 1");
    }

    #[test]
    fn format_percent_percent_without_args() {
        assert_eq!(format_js("['100%% sure']"), "100%% sure");
    }

    #[test]
    fn format_missing_args_leave_specifier() {
        assert_eq!(format_js("['%s and %s', 'a']"), "a and %s");
    }

    #[test]
    fn format_unknown_specifier_is_kept() {
        assert_eq!(format_js("['%x %s', 1]"), "%x 1");
    }

    #[test]
    fn format_extra_args_appended() {
        assert_eq!(
            format_js("['%s:%s', 'a', 'b', 'c', { d: 1 }]"),
            "a:b c { d: 1 }"
        );
    }

    #[test]
    fn format_trailing_percent() {
        assert_eq!(format_js("['50%', 1]"), "50% 1");
    }

    #[test]
    fn format_specifier_at_end() {
        assert_eq!(format_js("['a%s', 'b']"), "ab");
    }

    #[test]
    fn format_object_then_string() {
        assert_eq!(format_js("[{ a: 1 }, 'str']"), "{ a: 1 } str");
    }
}
