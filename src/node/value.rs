//! Copies values between the host and the shared value model with structured-clone semantics
//! (DESIGN.md "Values across the boundary"), on Node's thread: Node's side of the walk in
//! `crate::value::walk`.
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
use napi::{
    sys, Env, JsDate, JsGlobal, JsValue, Property as JsProperty, PropertyAttributes, Result,
};

use crate::value::walk::{
    Builder, Element, Field, Leaf, Problem, Property, Reader, Refusal, Shape, Sink, Source,
    ViewBuffer,
};
use crate::value::{with_article, CloneError, TypedArrayKind, Value, ERROR_NAMES};

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
    Builder::new(HostMaker { env, global: None }).build(value)
}

/// The host as the walk builds in it.
struct HostMaker<'env> {
    env: &'env Env,
    /// `globalThis`, looked up when a value first needs one of its constructors: most outputs
    /// and tool results are primitives.
    global: Option<JsGlobal<'env>>,
}

impl<'env> Sink for HostMaker<'env> {
    type Handle = Unknown<'env>;
    type Array = Object<'env>;
    type Object = Object<'env>;
    type Map = Object<'env>;
    type Set = Object<'env>;
    type Error = napi::Error;

    fn leaf(&mut self, leaf: Leaf<'_>) -> Result<Unknown<'env>> {
        let env = self.env;
        match leaf {
            Leaf::Undefined => ().into_unknown(env),
            Leaf::Null => Null.into_unknown(env),
            Leaf::Bool(flag) => flag.into_unknown(env),
            Leaf::Number(number) => number.into_unknown(env),
            Leaf::String(text) => text.into_unknown(env),
            Leaf::BigInt(digits) => {
                let big_int: Function<&str, Unknown> =
                    self.global()?.get_named_property("BigInt")?;
                big_int.call(digits)
            }
            Leaf::Date(time) => Ok(env.create_date(time)?.to_unknown()),
            Leaf::RegExp { source, flags } => {
                let regexp: Function<FnArgs<(&str, &str)>, Unknown> =
                    self.global()?.get_named_property("RegExp")?;
                regexp.new_instance((source, flags).into())
            }
            Leaf::Error {
                name,
                message,
                stack,
            } => self.error(name, message, stack),
            Leaf::ArrayBuffer(bytes) => Ok(ArrayBuffer::copy_from(env, bytes)?.to_unknown()),
        }
    }

    fn array(&mut self, length: u32) -> Result<(Unknown<'env>, Object<'env>)> {
        // Made with its length, so that the indices never set stay holes.
        let array = self.env.create_array(length)?.coerce_to_object()?;
        Ok((array.to_unknown(), array))
    }

    fn object(&mut self) -> Result<(Unknown<'env>, Object<'env>)> {
        let object = Object::new(self.env)?;
        Ok((object.to_unknown(), object))
    }

    fn map(&mut self) -> Result<(Unknown<'env>, Object<'env>)> {
        self.construct("Map")
    }

    fn set(&mut self) -> Result<(Unknown<'env>, Object<'env>)> {
        self.construct("Set")
    }

    fn is_array_buffer(&mut self, value: &Unknown<'env>) -> Result<bool> {
        value.is_arraybuffer()
    }

    fn typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &Unknown<'env>,
        byte_offset: usize,
        length: usize,
    ) -> Result<Unknown<'env>> {
        // SAFETY: the walk checked `buffer` to be an ArrayBuffer, which is what the conversion
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
        typed_array(kind, &buffer, byte_offset, length)
    }

    fn set_element(
        &mut self,
        array: &Object<'env>,
        index: u32,
        value: Unknown<'env>,
    ) -> Result<()> {
        let mut array = *array;
        array.set_element(index, value)
    }

    fn define(&mut self, object: &Object<'env>, key: &str, value: Unknown<'env>) -> Result<()> {
        // Defined, not assigned: `__proto__` is a key like any other.
        let mut object = *object;
        object.define_properties(&[JsProperty::new()
            .with_name(self.env, key)?
            .with_value(&value)
            .with_property_attributes(
                PropertyAttributes::Writable
                    | PropertyAttributes::Enumerable
                    | PropertyAttributes::Configurable,
            )])
    }

    fn map_set(
        &mut self,
        map: &Object<'env>,
        key: Unknown<'env>,
        value: Unknown<'env>,
    ) -> Result<()> {
        let set: Function<FnArgs<(Unknown, Unknown)>, Unknown> = map.get_named_property("set")?;
        set.apply(*map, (key, value).into())?;
        Ok(())
    }

    fn set_add(&mut self, set: &Object<'env>, item: Unknown<'env>) -> Result<()> {
        let add: Function<Unknown, Unknown> = set.get_named_property("add")?;
        add.apply(*set, item)?;
        Ok(())
    }

    fn fail(&mut self, problem: Problem) -> napi::Error {
        napi::Error::from_reason(problem.message())
    }
}

impl<'env> HostMaker<'env> {
    fn global(&mut self) -> Result<&JsGlobal<'env>> {
        if self.global.is_none() {
            self.global = Some(self.env.get_global()?);
        }
        self.global
            .as_ref()
            .ok_or_else(|| napi::Error::from_reason("globalThis is missing"))
    }

    /// An empty `new Map()` / `new Set()`.
    fn construct(&mut self, name: &str) -> Result<(Unknown<'env>, Object<'env>)> {
        let constructor: Function<(), Unknown> = self.global()?.get_named_property(name)?;
        let object = constructor.new_instance(())?;
        Ok((object, object.coerce_to_object()?))
    }

    /// An error of the host's built-in class called `name` when there is one, else an `Error`
    /// whose own `name` says what it was; its `stack` starts with `Name: message` as V8's do,
    /// followed by the sandbox's frames.
    fn error(&mut self, name: &str, message: &str, stack: Option<&str>) -> Result<Unknown<'env>> {
        let built_in = ERROR_NAMES.contains(&name);
        let constructor: Function<Unknown, Unknown> = self
            .global()?
            .get_named_property(if built_in { name } else { "Error" })?;
        // `new Error(undefined)` has no own `message`, as the original had none.
        let message_arg = if message.is_empty() {
            ().into_unknown(self.env)?
        } else {
            message.into_unknown(self.env)?
        };
        let error = constructor.new_instance(message_arg)?;
        let hidden = |key: &str, text: &str| -> Result<JsProperty> {
            Ok(JsProperty::new()
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
    let read = Reader::refusing(HostValues {
        env,
        intrinsics: None,
    })
    .read(&value, root);
    // A getter that threw is reported as a refusal; its exception must not also be thrown.
    clear_pending_exception(env);
    read
}

/// The host as the walk reads it.
struct HostValues<'env> {
    env: &'env Env,
    /// Looked up at the first object: a primitive (most tool arguments and results) needs none
    /// of them, and they were most of a synchronous tool call's cost on Node's side.
    intrinsics: Option<Intrinsics<'env>>,
}

/// What reading objects uses of the host's realm.
struct Intrinsics<'env> {
    global: JsGlobal<'env>,
    /// A host `Map` from every object read so far to its number (see `crate::value`).
    seen: Object<'env>,
    seen_get: Function<'env, Unknown<'env>, Unknown<'env>>,
    seen_set: Function<'env, FnArgs<(Unknown<'env>, u32)>, Unknown<'env>>,
    object_to_string: Function<'env, (), String>,
    array_from: Function<'env, Unknown<'env>, Object<'env>>,
}

impl<'env> Intrinsics<'env> {
    fn new(env: &'env Env) -> Result<Self> {
        let global = env.get_global()?;
        let map: Function<(), Unknown> = global.get_named_property("Map")?;
        let seen = map.new_instance(())?.coerce_to_object()?;
        let object: Function = global.get_named_property("Object")?;
        let object_prototype: Object = object.get_named_property("prototype")?;
        let array: Function = global.get_named_property("Array")?;
        Ok(Self {
            seen_get: seen.get_named_property("get")?,
            seen_set: seen.get_named_property("set")?,
            seen,
            object_to_string: object_prototype.get_named_property("toString")?,
            array_from: array.get_named_property("from")?,
            global,
        })
    }

    /// The entries of a real Map (`[key, value]` arrays) or the items of a real Set; `None` for
    /// an object that only carries the tag (the built-in iterator checks).
    fn collection_entries(
        &self,
        env: &Env,
        value: Unknown<'env>,
        tag: &str,
    ) -> Option<Object<'env>> {
        let method = if tag == "Map" { "entries" } else { "values" };
        let iterate: Function<(), Unknown> = self.prototype_member(tag, method).ok()?;
        let iterator = attempt(env, iterate.apply(value, ()))?;
        attempt(env, self.array_from.call(iterator))
    }

    /// A real RegExp's source, read by the built-in getter (which checks); `None` otherwise.
    fn regexp_source(&self, env: &Env, value: Unknown<'env>) -> Option<String> {
        let object: Function = self.global.get_named_property("Object").ok()?;
        let describe: Function<FnArgs<(Object, &str)>, Object> =
            object.get_named_property("getOwnPropertyDescriptor").ok()?;
        let regexp: Function = self.global.get_named_property("RegExp").ok()?;
        let prototype: Object = regexp.get_named_property("prototype").ok()?;
        let descriptor = attempt(env, describe.call((prototype, "source").into()))?;
        let getter: Function<(), String> = descriptor.get_named_property("get").ok()?;
        attempt(env, getter.apply(value, ()))
    }

    /// The primitive inside `new Number(1)` and its kin, by the built-in `valueOf` (which
    /// checks); `None` for an object that only carries the tag.
    fn unbox(&self, env: &Env, value: Unknown<'env>, tag: &str) -> Option<Unknown<'env>> {
        let value_of: Function<(), Unknown> = self.prototype_member(tag, "valueOf").ok()?;
        attempt(env, value_of.apply(value, ()))
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
}

impl<'env> HostValues<'env> {
    fn intrinsics(&mut self) -> Result<&Intrinsics<'env>> {
        if self.intrinsics.is_none() {
            self.intrinsics = Some(Intrinsics::new(self.env)?);
        }
        self.intrinsics
            .as_ref()
            .ok_or_else(|| napi::Error::from_reason("the host's intrinsics are missing"))
    }

    /// The view's shape: its buffer, or for a Node Buffer only its own bytes.
    fn typed_array(
        &mut self,
        value: Unknown<'env>,
        object: Object<'env>,
    ) -> std::result::Result<Shape<Self>, Refusal<napi::Error>> {
        // SAFETY: `value` is a typed array.
        let view = unsafe { value.cast::<TypedArray>() }.map_err(Refusal::Thrown)?;
        let Some(kind) = typed_array_kind(view.typed_array_type) else {
            return Err(Refusal::What(
                "a typed array of a kind structured clone lacks".into(),
            ));
        };
        let buffer: Unknown = object
            .get_named_property("buffer")
            .map_err(Refusal::Thrown)?;
        if !buffer.is_arraybuffer().map_err(Refusal::Thrown)? {
            return Err(Refusal::What(
                "a typed array over a SharedArrayBuffer".into(),
            ));
        }
        // SAFETY: `buffer` is an ArrayBuffer.
        let whole = unsafe { buffer.cast::<ArrayBuffer>() }.map_err(Refusal::Thrown)?;
        if whole.is_detached().map_err(Refusal::Thrown)? {
            return Err(Refusal::What(
                "a typed array whose buffer is detached".into(),
            ));
        }
        // `arraybuffer` holds the view's own bytes (see napi's `TypedArray`).
        let length = view.arraybuffer.len() / kind.element_size();
        let is_node_buffer = self
            .intrinsics()
            .and_then(|intrinsics| intrinsics.is_node_buffer(value))
            .map_err(Refusal::Thrown)?;
        if is_node_buffer {
            // A Node Buffer may sit in Node's shared pool with other, unrelated data: only its
            // own bytes cross, in a buffer of their own.
            return Ok(Shape::TypedArray {
                kind,
                buffer: ViewBuffer::Own(view.arraybuffer.to_vec()),
                byte_offset: 0,
                length,
            });
        }
        Ok(Shape::TypedArray {
            kind,
            buffer: ViewBuffer::Shared(buffer),
            byte_offset: view.byte_offset,
            length,
        })
    }
}

impl<'env> Source for HostValues<'env> {
    type Handle = Unknown<'env>;
    type Thrown = napi::Error;
    /// The own enumerable keys, as napi lists them, and how many there are.
    type Keys = (Object<'env>, u32);
    /// `[key, value]` arrays or a Set's items, and how many there are.
    type Items = (Object<'env>, u32);

    fn primitive(
        &mut self,
        value: &Unknown<'env>,
    ) -> std::result::Result<Option<Value>, Refusal<napi::Error>> {
        let refuse = |what: &str| Err(Refusal::What(what.into()));
        let type_of = value.get_type().map_err(Refusal::Thrown)?;
        // SAFETY (all casts below): each one converts to the type `get_type` just reported.
        let copied = match type_of {
            ValueType::Undefined => Value::Undefined,
            ValueType::Null => Value::Null,
            ValueType::Boolean => {
                Value::Bool(unsafe { value.cast::<bool>() }.map_err(Refusal::Thrown)?)
            }
            ValueType::Number => {
                Value::Number(unsafe { value.cast::<f64>() }.map_err(Refusal::Thrown)?)
            }
            ValueType::String => {
                Value::String(unsafe { value.cast::<String>() }.map_err(Refusal::Thrown)?)
            }
            // ToString of a BigInt primitive is its decimal digits and runs no code.
            ValueType::BigInt => Value::BigInt(
                value
                    .coerce_to_string()
                    .and_then(|digits| digits.into_utf8()?.into_owned())
                    .map_err(Refusal::Thrown)?,
            ),
            ValueType::Symbol => return refuse("a symbol"),
            ValueType::Function => return refuse("a function"),
            ValueType::External => return refuse("an external (native) value"),
            ValueType::Object => return Ok(None),
            _ => return refuse("a value of an unknown kind"),
        };
        Ok(Some(copied))
    }

    fn shape(
        &mut self,
        value: &Unknown<'env>,
    ) -> std::result::Result<Shape<Self>, Refusal<napi::Error>> {
        let value = *value;
        let env = self.env;
        // SAFETY: the walk only asks the shape of objects.
        let object = unsafe { value.cast::<Object>() }.map_err(Refusal::Thrown)?;
        let is = |check: Result<bool>| check.map_err(Refusal::Thrown);
        if is(value.is_array())? {
            let length = object.get_array_length().map_err(Refusal::Thrown)?;
            return Ok(Shape::Array(u64::from(length)));
        }
        if is(value.is_date())? {
            // SAFETY: `value` is a Date, which is what the conversion expects.
            let time = unsafe { value.cast::<JsDate>() }
                .and_then(|date| date.value_of())
                .map_err(Refusal::Thrown)?;
            return Ok(Shape::Leaf(Value::Date(time)));
        }
        if is(value.is_error())? {
            let text = |key: &str| -> Result<Option<String>> {
                let property: Unknown = object.get_named_property(key)?;
                if property.get_type()? != ValueType::String {
                    return Ok(None);
                }
                // SAFETY: `property` is a string.
                unsafe { property.cast::<String>() }.map(Some)
            };
            let name = text("name").map_err(Refusal::Thrown)?;
            let message = text("message").map_err(Refusal::Thrown)?;
            return Ok(Shape::Leaf(Value::Error {
                name: name.unwrap_or_else(|| "Error".into()),
                message: message.unwrap_or_default(),
                stack: None,
            }));
        }
        if is(value.is_promise())? {
            return Err(Refusal::What("a Promise".into()));
        }
        if is(value.is_dataview())? {
            return Err(Refusal::What("a DataView".into()));
        }
        if is(value.is_typedarray())? {
            return self.typed_array(value, object);
        }
        if is(value.is_arraybuffer())? {
            // SAFETY: `value` is an ArrayBuffer.
            let buffer = unsafe { value.cast::<ArrayBuffer>() }.map_err(Refusal::Thrown)?;
            if is(buffer.is_detached())? {
                return Err(Refusal::What("a detached ArrayBuffer".into()));
            }
            return Ok(Shape::Leaf(Value::ArrayBuffer(buffer.to_vec())));
        }
        let intrinsics = self.intrinsics().map_err(Refusal::Thrown)?;
        let tag = intrinsics
            .object_to_string
            .apply(value, ())
            .map_err(Refusal::Thrown)?;
        let tag = tag.trim_start_matches("[object ").trim_end_matches(']');
        match tag {
            "Map" | "Set" => {
                if let Some(entries) = intrinsics.collection_entries(env, value, tag) {
                    let count = entries.get_array_length().map_err(Refusal::Thrown)?;
                    return Ok(if tag == "Map" {
                        Shape::Map((entries, count))
                    } else {
                        Shape::Set((entries, count))
                    });
                }
            }
            "RegExp" => {
                if let Some(source) = intrinsics.regexp_source(env, value) {
                    let flags: String = object
                        .get_named_property("flags")
                        .map_err(Refusal::Thrown)?;
                    return Ok(Shape::Leaf(Value::RegExp { source, flags }));
                }
            }
            "Number" | "String" | "Boolean" | "BigInt" => {
                if let Some(primitive) = intrinsics.unbox(env, value, tag) {
                    return Ok(Shape::Boxed(primitive));
                }
            }
            refused if REFUSED_TAGS.contains(&refused) => {
                return Err(Refusal::What(with_article(refused)));
            }
            _ => {}
        }
        // Class instances and objects that only borrow a built-in's tag: own enumerable
        // properties, as structured clone copies them.
        let keys = object
            .get_all_property_names(
                KeyCollectionMode::OwnOnly,
                KeyFilter::Enumerable,
                KeyConversion::NumbersToStrings,
            )
            .map_err(Refusal::Thrown)?;
        let count = keys.get_array_length().map_err(Refusal::Thrown)?;
        Ok(Shape::Plain((keys, count)))
    }

    fn number_of(&mut self, object: &Unknown<'env>) -> Result<Option<usize>> {
        let intrinsics = self.intrinsics()?;
        let number = intrinsics.seen_get.apply(intrinsics.seen, *object)?;
        if number.get_type()? != ValueType::Number {
            return Ok(None);
        }
        // SAFETY: `number` is a number.
        let number = unsafe { number.cast::<u32>() }?;
        Ok(Some(number as usize))
    }

    fn remember(&mut self, object: &Unknown<'env>, number: usize) -> Result<()> {
        let number = u32::try_from(number)
            .map_err(|_| napi::Error::from_reason("too many objects to copy"))?;
        let intrinsics = self.intrinsics()?;
        intrinsics
            .seen_set
            .apply(intrinsics.seen, (*object, number).into())?;
        Ok(())
    }

    fn forget(&mut self, object: &Unknown<'env>) {
        if let Some(intrinsics) = &self.intrinsics {
            let delete: Result<Function<Unknown, Unknown>> =
                intrinsics.seen.get_named_property("delete");
            if let Ok(delete) = delete {
                let _ = attempt(self.env, delete.apply(intrinsics.seen, *object));
            }
        }
    }

    fn element(
        &mut self,
        array: &Unknown<'env>,
        index: u32,
    ) -> Element<Unknown<'env>, napi::Error> {
        // SAFETY: the walk only reads elements of arrays.
        let array = match unsafe { array.cast::<Object>() } {
            Ok(array) => array,
            Err(error) => return Element::Thrown(error),
        };
        match array.has_element(index) {
            Ok(false) => Element::Hole,
            Ok(true) => match array.get_element(index) {
                Ok(item) => Element::Value(item),
                Err(error) => Element::Thrown(error),
            },
            Err(error) => Element::Thrown(error),
        }
    }

    fn key_count(&self, keys: &Self::Keys) -> usize {
        keys.1 as usize
    }

    fn property(
        &mut self,
        object: &Unknown<'env>,
        keys: &Self::Keys,
        index: usize,
    ) -> Property<Unknown<'env>, napi::Error> {
        let read = || -> Result<Option<(String, Result<Unknown<'env>>)>> {
            let name: Unknown = keys.0.get_element(index as u32)?;
            // Symbol keys are not copied, as with structured clone.
            if name.get_type()? != ValueType::String {
                return Ok(None);
            }
            // SAFETY: `name` is a string, and `object` an object (the walk opened it as one).
            let key = unsafe { name.cast::<String>() }?;
            let object = unsafe { object.cast::<Object>() }?;
            Ok(Some((key, object.get_property(name))))
        };
        match read() {
            Ok(None) => Property::Absent,
            Ok(Some((key, Ok(value)))) => Property::Value(key, value),
            Ok(Some((key, Err(error)))) => Property::Thrown(key, error),
            Err(error) => Property::Thrown(String::new(), error),
        }
    }

    fn item_count(&self, items: &Self::Items) -> usize {
        items.1 as usize
    }

    fn item(&mut self, items: &Self::Items, index: usize, field: Field) -> Result<Unknown<'env>> {
        let index = index as u32;
        match field {
            Field::SetItem => items.0.get_element(index),
            Field::MapKey | Field::MapValue => {
                let pair: Object = items.0.get_element(index)?;
                pair.get_element(u32::from(field == Field::MapValue))
            }
        }
    }

    fn map_key_label(&mut self, _items: &Self::Items, _index: usize, key: &Value) -> String {
        key_label(key)
    }

    fn buffer_bytes(
        &mut self,
        buffer: &Unknown<'env>,
    ) -> std::result::Result<Vec<u8>, Refusal<napi::Error>> {
        // SAFETY: `shape` gave this buffer after checking it is an ArrayBuffer.
        let buffer = unsafe { buffer.cast::<ArrayBuffer>() }.map_err(Refusal::Thrown)?;
        Ok(buffer.to_vec())
    }

    fn thrown(&mut self, error: napi::Error) -> String {
        take_exception(self.env).unwrap_or_else(|| error.reason.clone())
    }
}

/// The outcome of a call that may throw, the exception cleared when it did.
fn attempt<T>(env: &Env, outcome: Result<T>) -> Option<T> {
    match outcome {
        Ok(value) => Some(value),
        Err(_) => {
            clear_pending_exception(env);
            None
        }
    }
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
