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
//! The port is split as Node's file reads: this module holds the entry points, the format
//! specifiers and `formatValue`/`formatRaw`; `entries` the entry formatters and `formatProperty`,
//! `layout` how entries are joined, `names` constructor names and bases, `errors` errors, and
//! `text` quoting, escaping, numbers and dates. Every read goes through `super::reflect`.
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
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs".

mod entries;
mod errors;
mod layout;
mod names;
mod text;

use rquickjs::atom::PredefinedAtom;
use rquickjs::promise::PromiseState;
use rquickjs::{Coerced, Ctx, Type, Value};
use unicode_width::UnicodeWidthChar;

use self::text::*;
use crate::engine::quickjs::reflect::{
    class_id, js_string_units, lossy, number_to_js_string, primitive_to_string,
    symbol_to_string_units, OwnedAtom, PropDesc, PropValue, Reflect, KEYS_ENUMERABLE, KEYS_STRINGS,
    KEYS_SYMBOLS, MAX_PROTO_HOPS,
};
use crate::engine::quickjs::reflect::{
    CLASS_ARGUMENTS, CLASS_ARRAY, CLASS_ARRAY_BUFFER, CLASS_ASYNC_FUNCTION,
    CLASS_ASYNC_GENERATOR_FUNCTION, CLASS_BIG_INT, CLASS_BIG_INT64_ARRAY, CLASS_BIG_UINT64_ARRAY,
    CLASS_BOOLEAN, CLASS_BYTECODE_FUNCTION, CLASS_DATAVIEW, CLASS_DATE, CLASS_ERROR,
    CLASS_FLOAT16_ARRAY, CLASS_FLOAT32_ARRAY, CLASS_FLOAT64_ARRAY, CLASS_GENERATOR_FUNCTION,
    CLASS_INT16_ARRAY, CLASS_INT32_ARRAY, CLASS_INT8_ARRAY, CLASS_MAP, CLASS_MAPPED_ARGUMENTS,
    CLASS_MAP_ITERATOR, CLASS_MODULE_NS, CLASS_NUMBER, CLASS_OBJECT, CLASS_PROMISE, CLASS_REGEXP,
    CLASS_SET, CLASS_SET_ITERATOR, CLASS_SHARED_ARRAY_BUFFER, CLASS_STRING, CLASS_SYMBOL,
    CLASS_UINT16_ARRAY, CLASS_UINT32_ARRAY, CLASS_UINT8C_ARRAY, CLASS_UINT8_ARRAY, CLASS_WEAKMAP,
    CLASS_WEAKSET,
};

const BREAK_LENGTH: usize = 80;
const COMPACT: i64 = 3;
const MAX_ARRAY_LENGTH: usize = 100;
const MAX_STRING_LENGTH: usize = 10_000;
const DEFAULT_DEPTH: i64 = 2;
/// Node gives up on nested detail once one indentation level produced 2^27 characters; a lower
/// cap keeps a hostile object graph from building hundreds of megabytes of output.
const OUTPUT_BUDGET: usize = 1 << 24;
/// Nested proxies are unwrapped to their final target; deeper nesting is treated as revoked.
const MAX_PROXY_HOPS: usize = 1_000;

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
                inspector.reflect.data_get_str(&exc, "name")
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
struct Inspector<'a, 'js> {
    ctx: &'a Ctx<'js>,
    reflect: Reflect<'a, 'js>,
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
    fn new(ctx: &'a Ctx<'js>, depth: i64, show_hidden: bool, show_proxy: bool) -> Self {
        Inspector {
            ctx,
            reflect: Reflect::new(ctx),
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
            let length = self.reflect.array_length(value);
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
                let byte_length = self
                    .reflect
                    .array_buffer_bytes(value, 0)
                    .map_or(0, |(len, _)| len);
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
                        .reflect
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
}

impl<'a, 'js> Inspector<'a, 'js> {
    // -----------------------------------------------------------------------------------------
    // typed arrays, collections and keys

    fn typed_array_proto(&self) -> Option<Value<'js>> {
        self.reflect
            .class_proto(CLASS_UINT8_ARRAY)
            .and_then(|p| self.reflect.proto_of(&p))
    }

    fn collection_size(&self, value: &Value<'js>, class: u32) -> Option<usize> {
        self.reflect
            .call_native(class, "size", true, value)
            .and_then(|v| v.as_number())
            .map(|n| {
                if n.is_finite() && n > 0.0 {
                    n as usize
                } else {
                    0
                }
            })
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
        let Some((buffer, offset, byte_length, bpe)) = self.reflect.typed_array_buffer(value)
        else {
            // Out of bounds after a resize: V8 reports length 0 as well.
            return info;
        };
        info.bytes_per_element = bpe;
        info.byte_offset = offset;
        let length = byte_length / bpe;
        let wanted = length.min(MAX_ARRAY_LENGTH) * bpe;
        if let Some((size, bytes)) = self.reflect.array_buffer_window(&buffer, offset, wanted) {
            if offset + byte_length <= size {
                info.length = length;
                info.bytes = bytes;
            }
        }
        info.buffer = Some(buffer);
        info
    }

    // -----------------------------------------------------------------------------------------
    // keys

    /// Node's `getKeys` (or `getOwnNonIndexProperties` when `non_index`): own enumerable string
    /// keys then enumerable symbols, or every own key with `showHidden`.
    fn get_keys(&self, obj: &Value<'js>, non_index: bool) -> Vec<PropKey<'js>> {
        let mut flags = KEYS_STRINGS | KEYS_SYMBOLS;
        if !self.show_hidden {
            flags |= KEYS_ENUMERABLE;
        }
        let mut keys = Vec::new();
        for atom in self.reflect.own_atoms(obj, flags, non_index) {
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
        if let Some(index) = atom.tagged_index() {
            return Some(index);
        }
        let value = atom.to_value()?;
        canonical_index(&js_string_units(self.ctx, &value)?)
    }
}

#[cfg(test)]
mod tests;
