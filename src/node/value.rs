//! Copies values between the host and the shared value model with structured-clone semantics
//! (docs/contract.md "Values across the boundary"), on Node's thread: Node's side of the walk in
//! `crate::value::walk`.
//!
//! Host code is trusted: reading may run the host's getters and uses the host's own intrinsics
//! (`Map.prototype.entries`, `Array.from`, …) from `globalThis`. What the host receives is always
//! a fresh copy; what it sends is refused, with the path of the offending part, when it holds
//! something structured clone cannot copy (a function, a symbol, a `WeakMap`, …).

use napi::bindgen_prelude::{
    ArrayBuffer, BigInt64ArraySlice, BigUint64ArraySlice, Float32ArraySlice, Float64ArraySlice,
    FnArgs, Function, Int16ArraySlice, Int32ArraySlice, Int8ArraySlice, JsObjectValue, Null,
    Object, ToNapiValue, TypeName, TypedArray, TypedArrayType, Uint16ArraySlice, Uint32ArraySlice,
    Uint8ArraySlice, Uint8ClampedSlice, Unknown, ValueType,
};
use napi::{
    sys, Env, JsDate, JsGlobal, JsValue, Property as JsProperty, PropertyAttributes, Result,
};

use super::guarded::{self, Guarded, Thrown};

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

/// Copies a host value in, whole or not at all: host functions, symbols and other uncloneable
/// values are refused with a [`CloneError`] naming the path from `root` (e.g.
/// `"variables.cfg.onDone"`), and so is a value of more than `max_bytes` (`maxValueBytes`). An
/// `Error` arrives without its stack: host frames would disclose host file paths. Every read
/// that can run host code (a getter, a Proxy trap) goes through `guarded`: what it throws is a
/// refusal, never an exception left on Node's thread.
pub fn from_js(
    env: &Env,
    value: Unknown,
    root: &str,
    max_bytes: u64,
) -> std::result::Result<Value, CloneError> {
    let read = Reader::refusing(
        HostValues {
            env,
            intrinsics: None,
        },
        max_bytes,
    )
    .read(&value, root);
    guarded::clear(env);
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
    global: Unknown<'env>,
    /// A host `Map` from every object read so far to its number (see `crate::value`), and its
    /// `get` and `set`.
    seen: Unknown<'env>,
    seen_get: Unknown<'env>,
    seen_set: Unknown<'env>,
    object_to_string: Unknown<'env>,
    array_from: Unknown<'env>,
}

impl<'env> Intrinsics<'env> {
    fn new(env: &'env Env) -> Guarded<'env, Self> {
        let global = env
            .get_global()
            .map(|global| global.to_unknown())
            .map_err(|error| lost(env, &error))?;
        let member = |object: &Unknown<'env>, path: &[&str]| {
            path.iter()
                .try_fold(*object, |object, key| guarded::get(env, &object, key))
        };
        let map = member(&global, &["Map"])?;
        let seen = new_instance(env, &map)?;
        Ok(Self {
            seen_get: member(&seen, &["get"])?,
            seen_set: member(&seen, &["set"])?,
            seen,
            object_to_string: member(&global, &["Object", "prototype", "toString"])?,
            array_from: member(&global, &["Array", "from"])?,
            global,
        })
    }

    /// `globalThis[constructor].prototype[name]`.
    fn prototype_member(
        &self,
        env: &'env Env,
        constructor: &str,
        name: &str,
    ) -> Guarded<'env, Unknown<'env>> {
        let constructor = guarded::get(env, &self.global, constructor)?;
        let prototype = guarded::get(env, &constructor, "prototype")?;
        guarded::get(env, &prototype, name)
    }

    /// The entries of a real Map (`[key, value]` arrays) or the items of a real Set; `None` for
    /// an object that only carries the tag (the built-in iterator checks).
    fn collection_entries(
        &self,
        env: &'env Env,
        value: &Unknown<'env>,
        tag: &str,
    ) -> Option<Unknown<'env>> {
        let method = if tag == "Map" { "entries" } else { "values" };
        let iterate = self.prototype_member(env, tag, method).ok()?;
        let iterator = guarded::call(env, &iterate, value, &[]).ok()?;
        guarded::call(
            env,
            &self.array_from,
            &guarded::undefined(env),
            &[iterator.raw()],
        )
        .ok()
    }

    /// A real RegExp's source, read by the built-in getter (which checks); `None` otherwise.
    fn regexp_source(&self, env: &'env Env, value: &Unknown<'env>) -> Option<String> {
        let object = guarded::get(env, &self.global, "Object").ok()?;
        let describe = guarded::get(env, &object, "getOwnPropertyDescriptor").ok()?;
        let regexp = guarded::get(env, &self.global, "RegExp").ok()?;
        let prototype = guarded::get(env, &regexp, "prototype").ok()?;
        let key = env.create_string("source").ok()?.to_unknown();
        let descriptor =
            guarded::call(env, &describe, &object, &[prototype.raw(), key.raw()]).ok()?;
        let getter = guarded::get(env, &descriptor, "get").ok()?;
        guarded::string_value(&guarded::call(env, &getter, value, &[]).ok()?)
    }

    /// The primitive inside `new Number(1)` and its kin, by the built-in `valueOf` (which
    /// checks); `None` for an object that only carries the tag.
    fn unbox(&self, env: &'env Env, value: &Unknown<'env>, tag: &str) -> Option<Unknown<'env>> {
        let value_of = self.prototype_member(env, tag, "valueOf").ok()?;
        guarded::call(env, &value_of, value, &[]).ok()
    }

    fn is_node_buffer(&self, env: &'env Env, value: &Unknown<'env>) -> Guarded<'env, bool> {
        let buffer = guarded::get(env, &self.global, "Buffer")?;
        if guarded::type_of(&buffer) != ValueType::Function {
            return Ok(false);
        }
        let mut result = false;
        // SAFETY: live values of this environment's current scope.
        let status =
            unsafe { sys::napi_instanceof(env.raw(), value.raw(), buffer.raw(), &mut result) };
        if status != sys::Status::napi_ok {
            return Err(guarded::take_exception(env).map_or_else(
                || Thrown::Failed(format!("napi status {status}")),
                Thrown::Value,
            ));
        }
        Ok(result)
    }
}

/// `new constructor()`.
fn new_instance<'env>(env: &'env Env, constructor: &Unknown) -> Guarded<'env, Unknown<'env>> {
    let mut instance = std::ptr::null_mut();
    // SAFETY: live values of this environment's current scope; no arguments.
    let status = unsafe {
        sys::napi_new_instance(
            env.raw(),
            constructor.raw(),
            0,
            std::ptr::null(),
            &mut instance,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(guarded::take_exception(env).map_or_else(
            || Thrown::Failed(format!("napi status {status}")),
            Thrown::Value,
        ));
    }
    // SAFETY: made by napi for this environment just now.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), instance) })
}

/// What a failed napi-rs call of ours (one that runs no host code) means for the walk: the
/// exception it left, if any, or its reason.
fn lost<'env>(env: &'env Env, error: &napi::Error) -> Thrown<'env> {
    guarded::take_exception(env).map_or_else(|| Thrown::Failed(error.reason.clone()), Thrown::Value)
}

impl<'env> HostValues<'env> {
    fn intrinsics(&mut self) -> Guarded<'env, &Intrinsics<'env>> {
        if self.intrinsics.is_none() {
            self.intrinsics = Some(Intrinsics::new(self.env)?);
        }
        self.intrinsics
            .as_ref()
            .ok_or_else(|| Thrown::Failed("the host's intrinsics are missing".into()))
    }

    /// The view's shape: its buffer, or for a Node Buffer only its own bytes.
    fn typed_array(
        &mut self,
        value: Unknown<'env>,
        room: u64,
    ) -> std::result::Result<Shape<Self>, Refusal<Thrown<'env>>> {
        let env = self.env;
        // SAFETY: `value` is a typed array.
        let view = unsafe { value.cast::<TypedArray>() }
            .map_err(|error| lost(env, &error))
            .map_err(Refusal::Thrown)?;
        let Some(kind) = typed_array_kind(view.typed_array_type) else {
            return Err(Refusal::What(
                "a typed array of a kind structured clone lacks".into(),
            ));
        };
        let buffer = guarded::get(env, &value, "buffer").map_err(Refusal::Thrown)?;
        if !buffer.is_arraybuffer().unwrap_or(false) {
            return Err(Refusal::What(
                "a typed array over a SharedArrayBuffer".into(),
            ));
        }
        // SAFETY: `buffer` is an ArrayBuffer.
        let whole = unsafe { buffer.cast::<ArrayBuffer>() }
            .map_err(|error| Refusal::Thrown(lost(env, &error)))?;
        if whole.is_detached().unwrap_or(true) {
            return Err(Refusal::What(
                "a typed array whose buffer is detached".into(),
            ));
        }
        // `arraybuffer` holds the view's own bytes (see napi's `TypedArray`).
        let length = view.arraybuffer.len() / kind.element_size();
        let is_node_buffer = self
            .intrinsics()
            .and_then(|intrinsics| intrinsics.is_node_buffer(env, &value))
            .map_err(Refusal::Thrown)?;
        if is_node_buffer {
            // A Node Buffer may sit in Node's shared pool with other, unrelated data: only its
            // own bytes cross, in a buffer of their own.
            if view.arraybuffer.len() as u64 > room {
                return Err(Refusal::TooLarge(view.arraybuffer.len() as u64));
            }
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

    /// An ArrayBuffer's bytes, unless there are more than `room` of them (then unread).
    fn buffer_within(
        &self,
        buffer: &Unknown<'env>,
        room: u64,
    ) -> std::result::Result<Vec<u8>, Refusal<Thrown<'env>>> {
        // SAFETY: the caller checked `buffer` to be an ArrayBuffer.
        let buffer = unsafe { buffer.cast::<ArrayBuffer>() }
            .map_err(|error| Refusal::Thrown(lost(self.env, &error)))?;
        if buffer.is_detached().unwrap_or(true) {
            return Err(Refusal::What("a detached ArrayBuffer".into()));
        }
        if buffer.len() as u64 > room {
            return Err(Refusal::TooLarge(buffer.len() as u64));
        }
        Ok(buffer.to_vec())
    }

    /// A string's text, unless its UTF-8 form is more than `room` bytes (then unread).
    fn string_within(
        &self,
        value: &Unknown<'env>,
        room: u64,
    ) -> std::result::Result<Value, Refusal<Thrown<'env>>> {
        let mut bytes = 0;
        // SAFETY: `value` is a string; with no buffer napi only measures it (no code runs).
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env.raw(),
                value.raw(),
                std::ptr::null_mut(),
                0,
                &mut bytes,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(Refusal::Thrown(Thrown::Failed(format!(
                "napi status {status}"
            ))));
        }
        if bytes as u64 > room {
            return Err(Refusal::TooLarge(bytes as u64));
        }
        guarded::string_value(value)
            .map(Value::String)
            .ok_or_else(|| Refusal::Thrown(Thrown::Failed("a string that cannot be read".into())))
    }
}

impl<'env> Source for HostValues<'env> {
    type Handle = Unknown<'env>;
    type Thrown = Thrown<'env>;
    /// The own enumerable keys, as napi lists them, and how many there are.
    type Keys = (Unknown<'env>, u32);
    /// `[key, value]` arrays or a Set's items, and how many there are.
    type Items = (Unknown<'env>, u32);

    fn primitive(
        &mut self,
        value: &Unknown<'env>,
        room: u64,
    ) -> std::result::Result<Option<Value>, Refusal<Thrown<'env>>> {
        let refuse = |what: &str| Err(Refusal::What(what.into()));
        let failed = |error: napi::Error| Refusal::Thrown(lost(self.env, &error));
        // Each cast below converts to the type `type_of` just reported, which runs no code.
        let copied = match guarded::type_of(value) {
            ValueType::Undefined => Value::Undefined,
            ValueType::Null => Value::Null,
            // SAFETY: a boolean, as `type_of` reported.
            ValueType::Boolean => Value::Bool(unsafe { value.cast::<bool>() }.map_err(failed)?),
            // SAFETY: a number, as `type_of` reported.
            ValueType::Number => Value::Number(unsafe { value.cast::<f64>() }.map_err(failed)?),
            ValueType::String => return self.string_within(value, room).map(Some),
            // ToString of a BigInt primitive is its decimal digits and runs no code.
            ValueType::BigInt => Value::BigInt(
                value
                    .coerce_to_string()
                    .and_then(|digits| digits.into_utf8()?.into_owned())
                    .map_err(failed)?,
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
        room: u64,
    ) -> std::result::Result<Shape<Self>, Refusal<Thrown<'env>>> {
        let value = *value;
        let env = self.env;
        let failed = |error: napi::Error| Refusal::Thrown(lost(env, &error));
        // These checks ask V8 what the object is: none of them runs code.
        let is = |check: Result<bool>| check.unwrap_or(false);
        if guarded::is_array(&value) {
            // SAFETY: `value` is an array, whose length napi reads without running code.
            let length = unsafe { value.cast::<Object>() }
                .and_then(|array| array.get_array_length())
                .map_err(failed)?;
            return Ok(Shape::Array(u64::from(length)));
        }
        if is(value.is_date()) {
            // SAFETY: `value` is a Date, which is what the conversion expects.
            let time = unsafe { value.cast::<JsDate>() }
                .and_then(|date| date.value_of())
                .map_err(failed)?;
            return Ok(Shape::Leaf(Value::Date(time)));
        }
        if guarded::is_error(&value) {
            let text = |key: &str| -> std::result::Result<Option<String>, Thrown<'env>> {
                guarded::get(env, &value, key).map(|property| guarded::string_value(&property))
            };
            let name = text("name").map_err(Refusal::Thrown)?;
            let message = text("message").map_err(Refusal::Thrown)?;
            return Ok(Shape::Leaf(Value::Error {
                name: name.unwrap_or_else(|| "Error".into()),
                message: message.unwrap_or_default(),
                stack: None,
            }));
        }
        if guarded::is_promise(&value) {
            return Err(Refusal::What("a Promise".into()));
        }
        if is(value.is_dataview()) {
            return Err(Refusal::What("a DataView".into()));
        }
        if is(value.is_typedarray()) {
            return self.typed_array(value, room);
        }
        if is(value.is_arraybuffer()) {
            return Ok(Shape::Leaf(Value::ArrayBuffer(
                self.buffer_within(&value, room)?,
            )));
        }
        let intrinsics = self.intrinsics().map_err(Refusal::Thrown)?;
        let tag = guarded::call(env, &intrinsics.object_to_string, &value, &[])
            .map_err(Refusal::Thrown)?;
        let tag = guarded::string_value(&tag).unwrap_or_default();
        let tag = tag.trim_start_matches("[object ").trim_end_matches(']');
        match tag {
            "Map" | "Set" => {
                if let Some(entries) = intrinsics.collection_entries(env, &value, tag) {
                    // SAFETY: `Array.from` made `entries`, an array.
                    let count = unsafe { entries.cast::<Object>() }
                        .and_then(|entries| entries.get_array_length())
                        .map_err(failed)?;
                    return Ok(if tag == "Map" {
                        Shape::Map((entries, count))
                    } else {
                        Shape::Set((entries, count))
                    });
                }
            }
            "RegExp" => {
                if let Some(source) = intrinsics.regexp_source(env, &value) {
                    let flags = guarded::get(env, &value, "flags").map_err(Refusal::Thrown)?;
                    let flags = guarded::string_value(&flags).unwrap_or_default();
                    return Ok(Shape::Leaf(Value::RegExp { source, flags }));
                }
            }
            "Number" | "String" | "Boolean" | "BigInt" => {
                if let Some(primitive) = intrinsics.unbox(env, &value, tag) {
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
        let keys = guarded::own_keys(env, &value).map_err(Refusal::Thrown)?;
        Ok(Shape::Plain(keys))
    }

    fn number_of(&mut self, object: &Unknown<'env>) -> Guarded<'env, Option<usize>> {
        let env = self.env;
        let intrinsics = self.intrinsics()?;
        let number = guarded::call(env, &intrinsics.seen_get, &intrinsics.seen, &[object.raw()])?;
        if guarded::type_of(&number) != ValueType::Number {
            return Ok(None);
        }
        // SAFETY: `number` is a number.
        let number = unsafe { number.cast::<u32>() }.map_err(|error| lost(env, &error))?;
        Ok(Some(number as usize))
    }

    fn remember(&mut self, object: &Unknown<'env>, number: usize) -> Guarded<'env, ()> {
        let env = self.env;
        let number =
            u32::try_from(number).map_err(|_| Thrown::Failed("too many objects to copy".into()))?;
        let number = env
            .create_uint32(number)
            .map_err(|error| lost(env, &error))?;
        let intrinsics = self.intrinsics()?;
        guarded::call(
            env,
            &intrinsics.seen_set,
            &intrinsics.seen,
            &[object.raw(), number.raw()],
        )?;
        Ok(())
    }

    fn element(
        &mut self,
        array: &Unknown<'env>,
        index: u32,
    ) -> Element<Unknown<'env>, Thrown<'env>> {
        match guarded::has_element(self.env, array, index) {
            Ok(false) => Element::Hole,
            Ok(true) => match guarded::get_element(self.env, array, index) {
                Ok(item) => Element::Value(item),
                Err(thrown) => Element::Thrown(thrown),
            },
            Err(thrown) => Element::Thrown(thrown),
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
    ) -> Property<Unknown<'env>, Thrown<'env>> {
        let env = self.env;
        let Ok(name) = guarded::get_element(env, &keys.0, index as u32) else {
            return Property::Absent;
        };
        // Symbol keys are not listed, as structured clone skips them.
        let Some(key) = guarded::string_value(&name) else {
            return Property::Absent;
        };
        match guarded::get_key(env, object, &name) {
            Ok(value) => Property::Value(key, value),
            Err(thrown) => Property::Thrown(key, thrown),
        }
    }

    fn item_count(&self, items: &Self::Items) -> usize {
        items.1 as usize
    }

    fn item(
        &mut self,
        items: &Self::Items,
        index: usize,
        field: Field,
    ) -> Guarded<'env, Unknown<'env>> {
        let index = index as u32;
        let entry = guarded::get_element(self.env, &items.0, index)?;
        match field {
            Field::SetItem => Ok(entry),
            Field::MapKey | Field::MapValue => {
                guarded::get_element(self.env, &entry, u32::from(field == Field::MapValue))
            }
        }
    }

    fn map_key_label(&mut self, _items: &Self::Items, _index: usize, key: &Value) -> String {
        key_label(key)
    }

    fn buffer_bytes(
        &mut self,
        buffer: &Unknown<'env>,
        room: u64,
    ) -> std::result::Result<Vec<u8>, Refusal<Thrown<'env>>> {
        self.buffer_within(buffer, room)
    }

    fn thrown(&mut self, thrown: Thrown<'env>) -> String {
        thrown.describe(self.env)
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

/// The kind of a typed array, for the ones structured clone copies.
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
