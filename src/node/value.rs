//! Copies values between the host and the shared value model with structured-clone semantics
//! (DESIGN.md "Values across the boundary"), on Node's thread.
//!
//! Host code is trusted: reading may run the host's getters and uses the host's own intrinsics
//! (`Map.prototype.entries`, `Array.from`, …) from `globalThis`. What the host receives is always
//! a fresh copy; what it sends is refused, with the path of the offending part, when it holds
//! something structured clone cannot copy (a function, a symbol, a `WeakMap`, …).

use napi::bindgen_prelude::{
    ArrayBuffer, BigInt64ArraySlice, BigUint64ArraySlice, Float32ArraySlice, Float64ArraySlice,
    FnArgs, FromNapiValue, Function, Int16ArraySlice, Int32ArraySlice, Int8ArraySlice,
    JsObjectValue, KeyCollectionMode, KeyConversion, KeyFilter, Null, Object, ToNapiValue,
    TypeName, TypedArray, TypedArrayType, Uint16ArraySlice, Uint32ArraySlice, Uint8ArraySlice,
    Uint8ClampedSlice, Unknown, ValidateNapiValue, ValueType,
};
use napi::{sys, Env, JsDate, JsGlobal, JsValue, Property, PropertyAttributes, Result};

use crate::value::{
    with_article, CloneError, PathStep, TypedArrayKind, Value, MAX_ARRAY_LENGTH, MAX_DEPTH,
    MAX_HOLES,
};

/// A [`Value`] on its way to JS (a run's output), built when napi asks for it.
pub struct Copied(pub Value);

impl TypeName for Copied {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for Copied {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        Ok(to_js(&env, &val.0)?.raw())
    }
}

/// Builds a host value from a copy: every object is fresh, made by the host's constructors.
pub fn to_js<'env>(env: &'env Env, value: &Value) -> Result<Unknown<'env>> {
    let mut builder = Builder {
        env,
        global: env.get_global()?,
        created: Vec::new(),
    };
    builder.build(value)
}

struct Builder<'env> {
    env: &'env Env,
    global: JsGlobal<'env>,
    /// The objects built so far, by number (see `crate::value`), for `Ref`.
    created: Vec<Unknown<'env>>,
}

/// A container being filled. The walk keeps these on a heap stack instead of recursing: V8
/// checks every call napi makes against its own stack limit, which nesting must not use up. A
/// container is linked into its parent before its own parts are built.
enum BuildFrame<'v, 'env> {
    Array {
        array: Object<'env>,
        items: std::iter::Enumerate<std::slice::Iter<'v, Option<Value>>>,
    },
    Object {
        object: Object<'env>,
        entries: std::slice::Iter<'v, (String, Value)>,
    },
    Map {
        map: Object<'env>,
        entries: std::slice::Iter<'v, (Value, Value)>,
        /// The key of the entry being built, once it exists, and the value it maps to.
        key: Option<(Unknown<'env>, &'v Value)>,
    },
    Set {
        set: Object<'env>,
        items: std::slice::Iter<'v, Value>,
    },
}

/// Where a built part goes.
enum Slot<'v, 'env> {
    Index(Object<'env>, u32),
    Key(Object<'env>, &'v str),
    /// A Map key; the value comes next.
    MapKey(&'v Value),
    MapValue(Object<'env>, Unknown<'env>),
    SetItem(Object<'env>),
}

impl<'v, 'env> BuildFrame<'v, 'env> {
    /// The next part to build and where it goes; `None` once the container is full.
    fn next_part(&mut self) -> Option<(&'v Value, Slot<'v, 'env>)> {
        match self {
            BuildFrame::Array { array, items } => items.find_map(|(index, item)| {
                // Holes are the indices left alone. The array's length was checked to fit.
                Some((item.as_ref()?, Slot::Index(*array, index as u32)))
            }),
            BuildFrame::Object { object, entries } => entries
                .next()
                .map(|(key, item)| (item, Slot::Key(*object, key.as_str()))),
            BuildFrame::Map { map, entries, key } => match key.take() {
                Some((key, item)) => Some((item, Slot::MapValue(*map, key))),
                None => entries.next().map(|(key, item)| (key, Slot::MapKey(item))),
            },
            BuildFrame::Set { set, items } => items.next().map(|item| (item, Slot::SetItem(*set))),
        }
    }
}

impl<'v, 'env> Builder<'env> {
    /// The walk: containers wait on `stack` while their parts are built, the innermost on top.
    fn build(&mut self, root: &'v Value) -> Result<Unknown<'env>> {
        let (built, frame) = self.make(root, 0)?;
        let mut stack: Vec<BuildFrame<'v, 'env>> = frame.into_iter().collect();
        while let Some(frame) = stack.last_mut() {
            let Some((part, slot)) = frame.next_part() else {
                stack.pop();
                continue;
            };
            let (value, opened) = self.make(part, stack.len())?;
            match slot {
                Slot::Index(mut array, index) => array.set_element(index, value)?,
                // Defined, not assigned: `__proto__` is a key like any other.
                Slot::Key(mut object, key) => object.define_properties(&[Property::new()
                    .with_name(self.env, key)?
                    .with_value(&value)
                    .with_property_attributes(
                        PropertyAttributes::Writable
                            | PropertyAttributes::Enumerable
                            | PropertyAttributes::Configurable,
                    )])?,
                Slot::MapKey(item) => {
                    if let Some(BuildFrame::Map { key, .. }) = stack.last_mut() {
                        *key = Some((value, item));
                    }
                }
                Slot::MapValue(map, key) => {
                    let set: Function<FnArgs<(Unknown, Unknown)>, Unknown> =
                        map.get_named_property("set")?;
                    set.apply(map, (key, value).into())?;
                }
                Slot::SetItem(set) => {
                    let add: Function<Unknown, Unknown> = set.get_named_property("add")?;
                    add.apply(set, value)?;
                }
            }
            stack.extend(opened);
        }
        Ok(built)
    }

    /// `value` itself, and for a container the frame that fills it.
    fn make(
        &mut self,
        value: &'v Value,
        depth: usize,
    ) -> Result<(Unknown<'env>, Option<BuildFrame<'v, 'env>>)> {
        if depth > MAX_DEPTH {
            return Err(napi::Error::from_reason("the value is nested too deeply"));
        }
        let env = self.env;
        let built = match value {
            Value::Undefined => ().into_unknown(env)?,
            Value::Null => Null.into_unknown(env)?,
            Value::Bool(flag) => (*flag).into_unknown(env)?,
            Value::Number(number) => (*number).into_unknown(env)?,
            Value::String(text) | Value::Uncloneable(text) => text.as_str().into_unknown(env)?,
            Value::BigInt(digits) => {
                let big_int: Function<&str, Unknown> = self.global.get_named_property("BigInt")?;
                big_int.call(digits)?
            }
            Value::Array(items) => {
                let length = u32::try_from(items.len())
                    .map_err(|_| napi::Error::from_reason("the array is too long"))?;
                // Made with its length, so that the indices never set stay holes.
                let array = env.create_array(length)?.coerce_to_object()?;
                self.created.push(array.to_unknown());
                let frame = BuildFrame::Array {
                    array,
                    items: items.iter().enumerate(),
                };
                return Ok((array.to_unknown(), Some(frame)));
            }
            Value::Object(entries) => {
                let object = Object::new(env)?;
                self.created.push(object.to_unknown());
                let frame = BuildFrame::Object {
                    object,
                    entries: entries.iter(),
                };
                return Ok((object.to_unknown(), Some(frame)));
            }
            Value::Map(entries) => {
                let map = self.construct("Map")?;
                let frame = BuildFrame::Map {
                    map,
                    entries: entries.iter(),
                    key: None,
                };
                return Ok((map.to_unknown(), Some(frame)));
            }
            Value::Set(items) => {
                let set = self.construct("Set")?;
                let frame = BuildFrame::Set {
                    set,
                    items: items.iter(),
                };
                return Ok((set.to_unknown(), Some(frame)));
            }
            Value::Date(time) => {
                let date = env.create_date(*time)?.to_unknown();
                self.created(date)
            }
            Value::RegExp { source, flags } => {
                let regexp: Function<FnArgs<(&str, &str)>, Unknown> =
                    self.global.get_named_property("RegExp")?;
                let regexp = regexp.new_instance((source.as_str(), flags.as_str()).into())?;
                self.created(regexp)
            }
            Value::Error {
                name,
                message,
                stack,
            } => {
                let error = self.error(name, message, stack.as_deref())?;
                self.created(error)
            }
            Value::ArrayBuffer(bytes) => {
                let buffer = ArrayBuffer::copy_from(env, bytes)?.to_unknown();
                self.created(buffer)
            }
            Value::TypedArray {
                kind,
                buffer,
                byte_offset,
                length,
            } => self.make_typed_array(*kind, buffer, *byte_offset, *length, depth)?,
            Value::Ref(number) => self.created.get(*number).copied().ok_or_else(|| {
                napi::Error::from_reason("a reference to an object that was not copied")
            })?,
        };
        Ok((built, None))
    }

    fn created(&mut self, object: Unknown<'env>) -> Unknown<'env> {
        self.created.push(object);
        object
    }

    /// An empty `new Map()` / `new Set()`, numbered before its entries are built.
    fn construct(&mut self, name: &str) -> Result<Object<'env>> {
        let constructor: Function<(), Unknown> = self.global.get_named_property(name)?;
        let object = constructor.new_instance(())?;
        self.created.push(object);
        object.coerce_to_object()
    }

    /// An error of the host's built-in class called `name` when there is one, else an `Error`
    /// whose own `name` says what it was; its `stack` starts with `Name: message` as V8's do,
    /// followed by the sandbox's frames.
    fn error(&self, name: &str, message: &str, stack: Option<&str>) -> Result<Unknown<'env>> {
        const BUILT_IN: [&str; 7] = [
            "Error",
            "TypeError",
            "RangeError",
            "ReferenceError",
            "SyntaxError",
            "EvalError",
            "URIError",
        ];
        let built_in = BUILT_IN.contains(&name);
        let constructor: Function<Unknown, Unknown> = self
            .global
            .get_named_property(if built_in { name } else { "Error" })?;
        // `new Error(undefined)` has no own `message`, as the original had none.
        let message_arg = if message.is_empty() {
            ().into_unknown(self.env)?
        } else {
            message.into_unknown(self.env)?
        };
        let error = constructor.new_instance(message_arg)?;
        let hidden = |key: &str, text: &str| -> Result<Property> {
            Ok(Property::new()
                .with_name(self.env, key)?
                .with_napi_value(self.env, text)?
                .with_property_attributes(
                    PropertyAttributes::Writable | PropertyAttributes::Configurable,
                ))
        };
        let mut properties = vec![hidden("stack", &host_stack(name, message, stack))?];
        if !built_in {
            properties.push(hidden("name", name)?);
        }
        error.coerce_to_object()?.define_properties(&properties)?;
        Ok(error)
    }

    fn make_typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &'v Value,
        byte_offset: usize,
        length: usize,
        depth: usize,
    ) -> Result<Unknown<'env>> {
        // The view's number comes before its buffer's, but the view needs the buffer: hold the
        // number until both exist.
        let slot = self.created.len();
        self.created.push(().into_unknown(self.env)?);
        let (buffer, _) = self.make(buffer, depth + 1)?;
        if !buffer.is_arraybuffer()? {
            return Err(napi::Error::from_reason(
                "a typed array's buffer must be an ArrayBuffer",
            ));
        }
        // SAFETY: `buffer` was just checked to be an ArrayBuffer, which is what the conversion
        // reads (and it checks again: napi_get_arraybuffer_info fails on anything else).
        let buffer: ArrayBuffer = unsafe { buffer.cast()? };
        let fits = length
            .checked_mul(kind.element_size())
            .and_then(|bytes| bytes.checked_add(byte_offset))
            .is_some_and(|end| end <= buffer.len());
        if !fits || !byte_offset.is_multiple_of(kind.element_size()) {
            return Err(napi::Error::from_reason(
                "a typed array's view lies outside its buffer",
            ));
        }
        let view = typed_array(kind, &buffer, byte_offset, length)?;
        self.created[slot] = view;
        Ok(view)
    }
}

fn typed_array<'env>(
    kind: TypedArrayKind,
    buffer: &ArrayBuffer<'env>,
    offset: usize,
    length: usize,
) -> Result<Unknown<'env>> {
    Ok(match kind {
        TypedArrayKind::Int8 => {
            Int8ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Uint8 => {
            Uint8ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Uint8Clamped => {
            Uint8ClampedSlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Int16 => {
            Int16ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Uint16 => {
            Uint16ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Int32 => {
            Int32ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Uint32 => {
            Uint32ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Float32 => {
            Float32ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::Float64 => {
            Float64ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::BigInt64 => {
            BigInt64ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
        TypedArrayKind::BigUint64 => {
            BigUint64ArraySlice::from_arraybuffer(buffer, offset, length)?.to_unknown()
        }
    })
}

/// V8's `stack` starts with `Name: message`; QuickJS keeps only the frame lines.
fn host_stack(name: &str, message: &str, stack: Option<&str>) -> String {
    let header = if message.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {message}")
    };
    match stack.map(str::trim_end) {
        None | Some("") => header,
        Some(frames) if frames.trim_start().starts_with("at ") => format!("{header}\n{frames}"),
        // Set by user code to something else: kept as it is.
        Some(custom) => custom.to_string(),
    }
}

/// Copies a host value in. Host functions, symbols and other uncloneable values are refused with
/// a [`CloneError`] naming the path from `root` (e.g. `"variables.cfg.onDone"`). An `Error`
/// arrives without its stack: host frames would disclose host file paths.
pub fn from_js(env: &Env, value: Unknown, root: &str) -> std::result::Result<Value, CloneError> {
    // A primitive (most tool arguments and results) needs no walk, and so none of the walk's
    // setup: a host `Map` of the objects seen and six property lookups, which were most of a
    // synchronous tool call's cost on Node's side.
    let read = match primitive(env, &value) {
        Ok(Some(copied)) => Ok(copied),
        Ok(None) => match Reader::new(env) {
            Ok(mut reader) => reader.read(value),
            Err(error) => Err((Vec::new(), thrown(env, &error))),
        },
        Err(what) => Err((Vec::new(), what)),
    };
    // A getter that threw is reported as a refusal; its exception must not also be thrown.
    clear_pending_exception(env);
    read.map_err(|(steps, what)| CloneError::at(root, &steps, what))
}

/// Why a part is not copied, as [`CloneError::what`] says it.
type What = String;

/// The copy of a value that is not an object; `None` for an object.
fn primitive(env: &Env, value: &Unknown) -> std::result::Result<Option<Value>, What> {
    let fail = |error: napi::Error| thrown(env, &error);
    // SAFETY (all casts below): each one converts to the type `get_type` just reported.
    let copied = match value.get_type().map_err(fail)? {
        ValueType::Undefined => Value::Undefined,
        ValueType::Null => Value::Null,
        ValueType::Boolean => Value::Bool(unsafe { value.cast::<bool>() }.map_err(fail)?),
        ValueType::Number => Value::Number(unsafe { value.cast::<f64>() }.map_err(fail)?),
        ValueType::String => Value::String(unsafe { value.cast::<String>() }.map_err(fail)?),
        // ToString of a BigInt primitive is its decimal digits and runs no code.
        ValueType::BigInt => Value::BigInt(
            value
                .coerce_to_string()
                .and_then(|digits| digits.into_utf8()?.into_owned())
                .map_err(fail)?,
        ),
        ValueType::Symbol => return Err("a symbol".into()),
        ValueType::Function => return Err("a function".into()),
        ValueType::External => return Err("an external (native) value".into()),
        ValueType::Object => return Ok(None),
        _ => return Err("a value of an unknown kind".into()),
    };
    Ok(Some(copied))
}

/// Built-in classes that structured clone refuses, by their `Object.prototype.toString` tag.
const REFUSED_TAGS: [&str; 15] = [
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "SharedArrayBuffer",
    "Symbol",
    "Generator",
    "AsyncGenerator",
    "Arguments",
    "Module",
    "Array Iterator",
    "Map Iterator",
    "Set Iterator",
    "String Iterator",
    "RegExp String Iterator",
];

struct Reader<'env> {
    env: &'env Env,
    global: JsGlobal<'env>,
    /// A host `Map` from every object read so far to its number (see `crate::value`).
    seen: Object<'env>,
    seen_get: Function<'env, Unknown<'env>, Unknown<'env>>,
    seen_set: Function<'env, FnArgs<(Unknown<'env>, u32)>, Unknown<'env>>,
    /// Numbers handed out so far; more than `seen` holds when a part was copied afresh.
    next: u32,
    object_to_string: Function<'env, (), String>,
    array_from: Function<'env, Unknown<'env>, Object<'env>>,
}

/// What visiting a value gives: a finished copy, or a container whose parts come next.
enum Visit<'env> {
    Done(Value),
    Open(ReadFrame<'env>),
}

/// A container being copied: the walk keeps these on a heap stack instead of recursing (see
/// [`BuildFrame`]). `next` counts the parts taken; each part's own position is its step in a
/// refusal's path.
enum ReadFrame<'env> {
    Array {
        array: Object<'env>,
        length: u32,
        next: u32,
        holes: usize,
        items: Vec<Option<Value>>,
    },
    Object {
        object: Object<'env>,
        /// The own enumerable keys, as napi lists them.
        keys: Object<'env>,
        count: u32,
        next: u32,
        key: String,
        entries: Vec<(String, Value)>,
    },
    Map {
        /// `[key, value]` arrays.
        entries: Object<'env>,
        count: u32,
        next: u32,
        key: Option<Value>,
        pairs: Vec<(Value, Value)>,
    },
    Set {
        items: Object<'env>,
        count: u32,
        next: u32,
        copied: Vec<Value>,
    },
}

/// The next part of a container.
enum Part<'env> {
    Value(Unknown<'env>),
    /// Every part is copied: the container's copy.
    End(Value),
    /// The container itself cannot be copied after all.
    Refuse(&'static str),
}

impl<'env> ReadFrame<'env> {
    /// The next part; `Err` when reading it failed (a getter threw).
    fn next_part(&mut self, env: &Env) -> std::result::Result<Part<'env>, What> {
        let fail = |error: napi::Error| thrown(env, &error);
        match self {
            ReadFrame::Array {
                array,
                length,
                next,
                holes,
                items,
            } => {
                while *next < *length {
                    if array.has_element(*next).map_err(fail)? {
                        return array.get_element(*next).map(Part::Value).map_err(fail);
                    }
                    *next += 1;
                    *holes += 1;
                    if *holes > MAX_HOLES {
                        return Ok(Part::Refuse("an array with too many holes to copy"));
                    }
                    items.push(None);
                }
                Ok(Part::End(Value::Array(std::mem::take(items))))
            }
            ReadFrame::Object {
                object,
                keys,
                count,
                next,
                key,
                entries,
            } => {
                while *next < *count {
                    let name: Unknown = keys.get_element(*next).map_err(fail)?;
                    *next += 1;
                    // Symbol keys are not copied, as with structured clone.
                    if name.get_type().map_err(fail)? != ValueType::String {
                        continue;
                    }
                    // SAFETY: `name` is a string.
                    *key = unsafe { name.cast::<String>() }.map_err(fail)?;
                    return object.get_property(name).map(Part::Value).map_err(fail);
                }
                Ok(Part::End(Value::Object(std::mem::take(entries))))
            }
            ReadFrame::Map {
                entries,
                count,
                next,
                key,
                pairs,
            } => {
                if *next == *count {
                    return Ok(Part::End(Value::Map(std::mem::take(pairs))));
                }
                let pair: Object = entries.get_element(*next).map_err(fail)?;
                pair.get_element(u32::from(key.is_some()))
                    .map(Part::Value)
                    .map_err(fail)
            }
            ReadFrame::Set {
                items,
                count,
                next,
                copied,
            } => {
                if *next == *count {
                    return Ok(Part::End(Value::Set(std::mem::take(copied))));
                }
                items.get_element(*next).map(Part::Value).map_err(fail)
            }
        }
    }

    /// Takes the copy of the part [`Self::next_part`] gave last.
    fn accept(&mut self, part: Value) {
        match self {
            ReadFrame::Array { next, items, .. } => {
                *next += 1;
                items.push(Some(part));
            }
            ReadFrame::Object { key, entries, .. } => entries.push((std::mem::take(key), part)),
            ReadFrame::Map {
                next, key, pairs, ..
            } => match key.take() {
                None => *key = Some(part),
                Some(copied_key) => {
                    *next += 1;
                    pairs.push((copied_key, part));
                }
            },
            ReadFrame::Set { next, copied, .. } => {
                *next += 1;
                copied.push(part);
            }
        }
    }

    /// The step to the part being read, for a refusal's path.
    fn step(&self) -> PathStep {
        match self {
            ReadFrame::Array { next, .. } => PathStep::Index(*next as usize),
            ReadFrame::Object { key, .. } => PathStep::Key(key.clone()),
            ReadFrame::Map { next, key, .. } => match key {
                Some(key) => PathStep::MapValue(key_label(key)),
                None => PathStep::MapKey(*next as usize),
            },
            ReadFrame::Set { next, .. } => PathStep::SetItem(*next as usize),
        }
    }
}

impl<'env> Reader<'env> {
    fn new(env: &'env Env) -> Result<Self> {
        let global = env.get_global()?;
        let map: Function<(), Unknown> = global.get_named_property("Map")?;
        let seen = map.new_instance(())?.coerce_to_object()?;
        let object: Function = global.get_named_property("Object")?;
        let object_prototype: Object = object.get_named_property("prototype")?;
        let array: Function = global.get_named_property("Array")?;
        Ok(Reader {
            env,
            seen_get: seen.get_named_property("get")?,
            seen_set: seen.get_named_property("set")?,
            seen,
            next: 0,
            object_to_string: object_prototype.get_named_property("toString")?,
            array_from: array.get_named_property("from")?,
            global,
        })
    }

    /// The walk: containers wait on `stack` while their parts are read, the innermost on top.
    fn read(&mut self, root: Unknown<'env>) -> std::result::Result<Value, (Vec<PathStep>, What)> {
        let mut stack: Vec<ReadFrame<'env>> = Vec::new();
        let mut part = Part::Value(root);
        loop {
            let visited = match part {
                Part::Value(value) => self.visit(value, stack.len()),
                Part::End(copied) => {
                    stack.pop();
                    Ok(Visit::Done(copied))
                }
                Part::Refuse(what) => {
                    stack.pop();
                    Err(what.to_string())
                }
            };
            let next = match visited {
                Ok(Visit::Open(mut frame)) => {
                    let first = frame.next_part(self.env);
                    stack.push(frame);
                    first
                }
                Ok(Visit::Done(copied)) => match stack.last_mut() {
                    Some(parent) => {
                        parent.accept(copied);
                        parent.next_part(self.env)
                    }
                    None => return Ok(copied),
                },
                Err(what) => Err(what),
            };
            part = match next {
                Ok(part) => part,
                Err(what) => return Err((stack.iter().map(ReadFrame::step).collect(), what)),
            };
        }
    }

    fn visit(
        &mut self,
        value: Unknown<'env>,
        depth: usize,
    ) -> std::result::Result<Visit<'env>, What> {
        match primitive(self.env, &value)? {
            Some(copied) => Ok(Visit::Done(copied)),
            None => self
                .visit_object(value, depth)
                .map_err(|refusal| match refusal {
                    Refusal::What(what) => what,
                    Refusal::Napi(error) => thrown(self.env, &error),
                }),
        }
    }

    fn visit_object(
        &mut self,
        value: Unknown<'env>,
        depth: usize,
    ) -> std::result::Result<Visit<'env>, Refusal> {
        if let Some(number) = self.number_of(value)? {
            return Ok(Visit::Done(Value::Ref(number)));
        }
        if depth >= MAX_DEPTH {
            return Err(Refusal::from("too deeply nested"));
        }
        // SAFETY: `visit` only calls this for objects.
        let object = unsafe { value.cast::<Object>() }?;
        if value.is_array()? {
            let length = object.get_array_length()?;
            if u64::from(length) > MAX_ARRAY_LENGTH {
                return Err(Refusal::What(format!(
                    "an array too long to copy ({length} items)"
                )));
            }
            self.register(value)?;
            return Ok(Visit::Open(ReadFrame::Array {
                array: object,
                length,
                next: 0,
                holes: 0,
                items: Vec::new(),
            }));
        }
        if value.is_date()? {
            // SAFETY: `value` is a Date, which is what the conversion expects.
            let time = unsafe { value.cast::<JsDate>() }?.value_of()?;
            self.register(value)?;
            return Ok(Visit::Done(Value::Date(time)));
        }
        if value.is_error()? {
            let text = |key: &str| -> Result<Option<String>> {
                let property: Unknown = object.get_named_property(key)?;
                if property.get_type()? != ValueType::String {
                    return Ok(None);
                }
                // SAFETY: `property` is a string.
                unsafe { property.cast::<String>() }.map(Some)
            };
            let name = text("name")?.unwrap_or_else(|| "Error".into());
            let message = text("message")?.unwrap_or_default();
            self.register(value)?;
            return Ok(Visit::Done(Value::Error {
                name,
                message,
                stack: None,
            }));
        }
        if value.is_promise()? {
            return Err(Refusal::from("a Promise"));
        }
        if value.is_dataview()? {
            return Err(Refusal::from("a DataView"));
        }
        if value.is_typedarray()? {
            return self.read_typed_array(value, object).map(Visit::Done);
        }
        if value.is_arraybuffer()? {
            // SAFETY: `value` is an ArrayBuffer.
            let buffer = unsafe { value.cast::<ArrayBuffer>() }?;
            if buffer.is_detached()? {
                return Err(Refusal::from("a detached ArrayBuffer"));
            }
            let bytes = buffer.to_vec();
            self.register(value)?;
            return Ok(Visit::Done(Value::ArrayBuffer(bytes)));
        }
        let tag = self.object_to_string.apply(value, ())?;
        let tag = tag.trim_start_matches("[object ").trim_end_matches(']');
        match tag {
            "Map" | "Set" => {
                if let Some(entries) = self.collection_entries(value, tag) {
                    let count = entries.get_array_length()?;
                    self.register(value)?;
                    return Ok(Visit::Open(if tag == "Map" {
                        ReadFrame::Map {
                            entries,
                            count,
                            next: 0,
                            key: None,
                            pairs: Vec::new(),
                        }
                    } else {
                        ReadFrame::Set {
                            items: entries,
                            count,
                            next: 0,
                            copied: Vec::new(),
                        }
                    }));
                }
            }
            "RegExp" => {
                if let Some(source) = self.regexp_source(value) {
                    let flags: String = object.get_named_property("flags")?;
                    self.register(value)?;
                    return Ok(Visit::Done(Value::RegExp { source, flags }));
                }
            }
            "Number" | "String" | "Boolean" | "BigInt" => {
                if let Some(primitive) = self.unbox(value, tag) {
                    return self.visit(primitive, depth).map_err(Refusal::What);
                }
            }
            refused if REFUSED_TAGS.contains(&refused) => {
                return Err(Refusal::What(with_article(refused)));
            }
            _ => {}
        }
        // Class instances and objects that only borrow a built-in's tag: own enumerable
        // properties, as structured clone copies them.
        let keys = object.get_all_property_names(
            KeyCollectionMode::OwnOnly,
            KeyFilter::Enumerable,
            KeyConversion::NumbersToStrings,
        )?;
        let count = keys.get_array_length()?;
        self.register(value)?;
        Ok(Visit::Open(ReadFrame::Object {
            object,
            keys,
            count,
            next: 0,
            key: String::new(),
            entries: Vec::new(),
        }))
    }

    /// The view is numbered before its buffer (pre-order), and a buffer met before becomes a
    /// `Ref`, so that views sharing a buffer still share it after the copy.
    fn read_typed_array(
        &mut self,
        value: Unknown<'env>,
        object: Object<'env>,
    ) -> std::result::Result<Value, Refusal> {
        // SAFETY: `value` is a typed array.
        let view = unsafe { value.cast::<TypedArray>() }?;
        let Some(kind) = typed_array_kind(view.typed_array_type) else {
            return Err(Refusal::from(
                "a typed array of a kind structured clone lacks",
            ));
        };
        let buffer: Unknown = object.get_named_property("buffer")?;
        if !buffer.is_arraybuffer()? {
            return Err(Refusal::from("a typed array over a SharedArrayBuffer"));
        }
        // SAFETY: `buffer` is an ArrayBuffer.
        let whole = unsafe { buffer.cast::<ArrayBuffer>() }?;
        if whole.is_detached()? {
            return Err(Refusal::from("a typed array whose buffer is detached"));
        }
        // `arraybuffer` holds the view's own bytes (see napi's `TypedArray`).
        let length = view.arraybuffer.len() / kind.element_size();
        if self.is_node_buffer(value)? {
            // A Node Buffer may sit in Node's shared pool with other, unrelated data: only its
            // own bytes cross, in a buffer of their own (numbered, but tied to no host object).
            self.register(value)?;
            self.next += 1;
            return Ok(Value::TypedArray {
                kind,
                buffer: Box::new(Value::ArrayBuffer(view.arraybuffer.to_vec())),
                byte_offset: 0,
                length,
            });
        }
        let buffer = match self.number_of(buffer)? {
            Some(number) => {
                self.register(value)?;
                Value::Ref(number)
            }
            None => {
                let bytes = whole.to_vec();
                self.register(value)?;
                self.register(buffer)?;
                Value::ArrayBuffer(bytes)
            }
        };
        Ok(Value::TypedArray {
            kind,
            buffer: Box::new(buffer),
            byte_offset: view.byte_offset,
            length,
        })
    }

    /// The entries of a real Map (`[key, value]` arrays) or the items of a real Set; `None` for
    /// an object that only carries the tag (the built-in iterator checks).
    fn collection_entries(&self, value: Unknown<'env>, tag: &str) -> Option<Object<'env>> {
        let method = if tag == "Map" { "entries" } else { "values" };
        let iterate: Function<(), Unknown> = self.prototype_member(tag, method).ok()?;
        let iterator = self.attempt(iterate.apply(value, ()))?;
        self.attempt(self.array_from.call(iterator))
    }

    /// A real RegExp's source, read by the built-in getter (which checks); `None` otherwise.
    fn regexp_source(&self, value: Unknown<'env>) -> Option<String> {
        let object: Function = self.global.get_named_property("Object").ok()?;
        let describe: Function<FnArgs<(Object, &str)>, Object> =
            object.get_named_property("getOwnPropertyDescriptor").ok()?;
        let regexp: Function = self.global.get_named_property("RegExp").ok()?;
        let prototype: Object = regexp.get_named_property("prototype").ok()?;
        let descriptor = self.attempt(describe.call((prototype, "source").into()))?;
        let getter: Function<(), String> = descriptor.get_named_property("get").ok()?;
        self.attempt(getter.apply(value, ()))
    }

    /// The primitive inside `new Number(1)` and its kin, by the built-in `valueOf` (which
    /// checks); `None` for an object that only carries the tag.
    fn unbox(&self, value: Unknown<'env>, tag: &str) -> Option<Unknown<'env>> {
        let value_of: Function<(), Unknown> = self.prototype_member(tag, "valueOf").ok()?;
        self.attempt(value_of.apply(value, ()))
    }

    fn prototype_member<T: FromNapiValue + ValidateNapiValue>(
        &self,
        constructor: &str,
        name: &str,
    ) -> Result<T> {
        let constructor: Function = self.global.get_named_property(constructor)?;
        let prototype: Object = constructor.get_named_property("prototype")?;
        prototype.get_named_property(name)
    }

    fn is_node_buffer(&self, value: Unknown<'env>) -> Result<bool> {
        let buffer: Unknown = self.global.get_named_property("Buffer")?;
        if buffer.get_type()? != ValueType::Function {
            return Ok(false);
        }
        value.instanceof(buffer)
    }

    /// The outcome of a call that may throw, the exception cleared when it did.
    fn attempt<T>(&self, outcome: Result<T>) -> Option<T> {
        match outcome {
            Ok(value) => Some(value),
            Err(_) => {
                clear_pending_exception(self.env);
                None
            }
        }
    }

    fn number_of(&self, object: Unknown<'env>) -> Result<Option<usize>> {
        let number = self.seen_get.apply(self.seen, object)?;
        if number.get_type()? != ValueType::Number {
            return Ok(None);
        }
        // SAFETY: `number` is a number.
        let number = unsafe { number.cast::<u32>() }?;
        Ok(Some(number as usize))
    }

    fn register(&mut self, object: Unknown<'env>) -> Result<()> {
        self.seen_set.apply(self.seen, (object, self.next).into())?;
        self.next += 1;
        Ok(())
    }
}

/// Why an object is not copied: a refusal, or a napi failure (a getter threw) to describe.
enum Refusal {
    What(What),
    Napi(napi::Error),
}

impl From<&str> for Refusal {
    fn from(what: &str) -> Self {
        Refusal::What(what.into())
    }
}

impl From<napi::Error> for Refusal {
    fn from(error: napi::Error) -> Self {
        Refusal::Napi(error)
    }
}

/// A failed read: a getter (or a proxy trap) threw, or napi failed.
fn thrown(env: &Env, error: &napi::Error) -> What {
    let what = take_exception(env).unwrap_or_else(|| error.reason.clone());
    format!("unreadable (reading it threw {what})")
}

/// Clears the pending exception, if any, and says what it was (`Error: nope`).
fn take_exception(env: &Env) -> Option<String> {
    let mut pending = false;
    let mut exception = std::ptr::null_mut();
    // SAFETY: `env` is the live env of the current call; the calls only inspect and clear its
    // exception slot, and the exception they hand back is a handle in the current scope.
    let exception = unsafe {
        if sys::napi_is_exception_pending(env.raw(), &mut pending) != sys::Status::napi_ok
            || !pending
            || sys::napi_get_and_clear_last_exception(env.raw(), &mut exception)
                != sys::Status::napi_ok
        {
            return None;
        }
        Unknown::from_raw_unchecked(env.raw(), exception)
    };
    let described = describe_exception(exception);
    // Describing may run the host's getters, which may throw in turn.
    clear_pending_exception(env);
    described
}

fn describe_exception(exception: Unknown) -> Option<String> {
    if exception.get_type().ok()? != ValueType::Object {
        return exception
            .coerce_to_string()
            .ok()?
            .into_utf8()
            .ok()?
            .into_owned()
            .ok();
    }
    let object = exception.coerce_to_object().ok()?;
    let text = |key: &str| {
        let value: Unknown = object.get_named_property(key).ok()?;
        if value.get_type().ok()? != ValueType::String {
            return None;
        }
        // SAFETY: `value` is a string.
        unsafe { value.cast::<String>() }.ok()
    };
    let name = text("name").unwrap_or_else(|| "Error".into());
    Some(
        match text("message").filter(|message| !message.is_empty()) {
            Some(message) => format!("{name}: {message}"),
            None => name,
        },
    )
}

fn typed_array_kind(kind: TypedArrayType) -> Option<TypedArrayKind> {
    Some(match kind {
        TypedArrayType::Int8 => TypedArrayKind::Int8,
        TypedArrayType::Uint8 => TypedArrayKind::Uint8,
        TypedArrayType::Uint8Clamped => TypedArrayKind::Uint8Clamped,
        TypedArrayType::Int16 => TypedArrayKind::Int16,
        TypedArrayType::Uint16 => TypedArrayKind::Uint16,
        TypedArrayType::Int32 => TypedArrayKind::Int32,
        TypedArrayType::Uint32 => TypedArrayKind::Uint32,
        TypedArrayType::Float32 => TypedArrayKind::Float32,
        TypedArrayType::Float64 => TypedArrayKind::Float64,
        TypedArrayType::BigInt64 => TypedArrayKind::BigInt64,
        TypedArrayType::BigUint64 => TypedArrayKind::BigUint64,
        _ => return None,
    })
}

/// How a Map key reads in a path: primitives as in source code, objects by their kind.
fn key_label(key: &Value) -> String {
    match key {
        Value::String(text) => format!("'{}'", text.escape_default()),
        Value::Number(number) => number.to_string(),
        Value::BigInt(digits) => format!("{digits}n"),
        Value::Bool(flag) => flag.to_string(),
        Value::Null => "null".into(),
        Value::Undefined => "undefined".into(),
        Value::Array(_) => "[…]".into(),
        Value::Ref(_) | Value::Uncloneable(_) => "…".into(),
        _ => "{…}".into(),
    }
}

fn clear_pending_exception(env: &Env) {
    let mut pending = false;
    // SAFETY: `env` is the live env of the current call; both calls only inspect and clear its
    // exception slot, and the cleared exception is a handle in the current scope.
    unsafe {
        if sys::napi_is_exception_pending(env.raw(), &mut pending) == sys::Status::napi_ok
            && pending
        {
            let mut exception = std::ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env.raw(), &mut exception);
        }
    }
}
