//! Copies values between a sandbox and the shared value model with structured-clone semantics
//! (DESIGN.md "Values across the boundary"): QuickJS's side of the walk in `crate::value::walk`.
//!
//! Both directions run on the engine thread. Reading goes through the realm's intrinsics (the
//! engine's own functions, taken from the built-in prototypes by [`Reflect`]), never through
//! globals or prototype methods that user code can replace (`Array.from`, `Map.prototype.entries`,
//! `Date.prototype.getTime`, …); building uses the engine's constructors. The only user code a
//! copy runs is what structured clone runs too: getters of the sandbox's own objects, inside the
//! sandbox, under its guards. Whatever they throw is reported in the copy and cleared.

use std::collections::HashMap;

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Property as JsProperty;
use rquickjs::{
    Array, ArrayBuffer, BigInt, Constructor, Ctx, Exception, Object, Result, Type, Value as JsValue,
};

use super::inspect;
use super::reflect::{
    class_id, js_string_units, lossy, primitive_to_string, typed_array_kind, NativeError,
    OwnedAtom, PropDesc, PropValue, Reflect, CLASS_ARRAY, CLASS_ARRAY_BUFFER, CLASS_BIG_INT,
    CLASS_BOOLEAN, CLASS_C_FUNCTION, CLASS_DATE, CLASS_ERROR, CLASS_MAP, CLASS_NUMBER,
    CLASS_OBJECT, CLASS_REGEXP, CLASS_SET, CLASS_STRING, KEYS_ENUMERABLE, KEYS_STRINGS,
};
use crate::value::walk::{
    Builder, Describe, Element, Field, Leaf, Problem, Property, Reader, Refusal, Shape, Sink,
    Source, ViewBuffer,
};
use crate::value::{with_article, CloneError, TypedArrayKind, Value};

/// How to treat a part that cannot be copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncopyable {
    /// Outputs and final answers: the part becomes [`Value::Uncloneable`] with its inspect
    /// string, so that an output never fails a run.
    Describe,
    /// Tool arguments: the copy fails with a [`CloneError`] naming the part.
    Refuse,
}

/// Map keys longer than this are cut in paths (`x.get({ a: 1, … })`), which must stay readable.
const MAX_KEY_LABEL: usize = 60;

/// Copies a sandbox value out. `root` names the value in [`CloneError`] paths (`"args[0]"`).
pub fn to_value<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    mode: Uncopyable,
    root: &str,
) -> std::result::Result<Value, CloneError> {
    let source = Sandbox {
        ctx,
        reflect: Reflect::new(ctx),
        seen: HashMap::new(),
    };
    let copied = match mode {
        Uncopyable::Describe => Reader::describing(source).read(value, root),
        Uncopyable::Refuse => Reader::refusing(source).read(value, root),
    };
    // Whatever a getter threw is already part of the copy; it must not surface in the run.
    if ctx.has_exception() {
        let _ = ctx.catch();
    }
    copied
}

/// The sandbox as the walk reads it.
struct Sandbox<'a, 'js> {
    ctx: &'a Ctx<'js>,
    reflect: Reflect<'a, 'js>,
    /// Every object copied so far with its number (see `crate::value`).
    seen: HashMap<JsValue<'js>, usize>,
}

impl<'js> Source for Sandbox<'_, 'js> {
    type Handle = JsValue<'js>;
    type Thrown = JsValue<'js>;
    type Keys = Vec<OwnedAtom<'js>>;
    /// The `[key, value]` arrays the engine's iterator made, or a Set's items.
    type Items = Vec<JsValue<'js>>;

    fn primitive(
        &mut self,
        value: &JsValue<'js>,
    ) -> std::result::Result<Option<Value>, Refusal<JsValue<'js>>> {
        let refuse = |what: &str| Err(Refusal::What(what.into()));
        Ok(Some(match value.type_of() {
            Type::Undefined | Type::Uninitialized => Value::Undefined,
            Type::Null => Value::Null,
            Type::Bool => Value::Bool(value.as_bool().unwrap_or_default()),
            Type::Int | Type::Float => Value::Number(value.as_number().unwrap_or(f64::NAN)),
            Type::String => Value::String(self.string(value)),
            // A BigInt's decimal digits, which both engines rebuild it from exactly.
            Type::BigInt => Value::BigInt(primitive_to_string(self.ctx, value)),
            Type::Symbol => return refuse("a symbol"),
            // Proxies first: asking anything else of one would run its traps.
            _ if value.is_proxy() => return refuse("a Proxy"),
            _ if value.is_function() => return refuse("a function"),
            _ if value.is_object() => return Ok(None),
            _ => return refuse("not a JS value"),
        }))
    }

    fn shape(
        &mut self,
        object: &JsValue<'js>,
    ) -> std::result::Result<Shape<Self>, Refusal<JsValue<'js>>> {
        let refuse = |what: &str| Err(Refusal::What(what.into()));
        let class = class_id(object);
        Ok(match class {
            // Own enumerable string-keyed properties in order; the prototype is not kept, so
            // class instances arrive as plain objects, as with structured clone.
            CLASS_OBJECT => Shape::Plain(self.reflect.own_atoms(
                object,
                KEYS_STRINGS | KEYS_ENUMERABLE,
                false,
            )),
            // Elements by index, holes kept; other own keys of the array are dropped.
            CLASS_ARRAY => Shape::Array(self.reflect.array_length(object)),
            CLASS_MAP | CLASS_SET => {
                match self.reflect.collection_entries(object, class, usize::MAX) {
                    Some(items) if class == CLASS_MAP => Shape::Map(items),
                    Some(items) => Shape::Set(items),
                    None if class == CLASS_MAP => {
                        return refuse("a Map whose built-in iterators were replaced")
                    }
                    None => return refuse("a Set whose built-in iterators were replaced"),
                }
            }
            CLASS_DATE => {
                // `valueOf` is the same engine function as `getTime`: user code must replace
                // both.
                let time = ["getTime", "valueOf"].into_iter().find_map(|method| {
                    self.reflect
                        .call_native(CLASS_DATE, method, false, object)?
                        .as_number()
                });
                match time {
                    Some(time) => Shape::Leaf(Value::Date(time)),
                    None => return refuse("a Date whose built-in methods were replaced"),
                }
            }
            CLASS_REGEXP => match self.reflect.regexp_parts(object) {
                Some((source, flags)) => Shape::Leaf(Value::RegExp { source, flags }),
                None => return refuse("a RegExp whose built-in accessors were replaced"),
            },
            CLASS_ERROR => Shape::Leaf(self.error(object)),
            CLASS_ARRAY_BUFFER => match self.reflect.array_buffer_bytes(object, usize::MAX) {
                Some((_, bytes)) => Shape::Leaf(Value::ArrayBuffer(bytes)),
                None => return refuse("a detached ArrayBuffer"),
            },
            // `new Number(1)` and its kin have no place in the value model: they travel as the
            // primitive they wrap.
            CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT => {
                match self.reflect.call_native(class, "valueOf", false, object) {
                    Some(primitive) => Shape::Boxed(primitive),
                    None => return refuse("a wrapped primitive whose valueOf was replaced"),
                }
            }
            _ => match typed_array_kind(object) {
                Some(kind) => return self.typed_array(object, kind),
                None => {
                    let name = self.reflect.internal_constructor_name(object);
                    return Err(Refusal::What(with_article(&name)));
                }
            },
        })
    }

    fn number_of(
        &mut self,
        object: &JsValue<'js>,
    ) -> std::result::Result<Option<usize>, JsValue<'js>> {
        Ok(self.seen.get(object).copied())
    }

    fn remember(
        &mut self,
        object: &JsValue<'js>,
        number: usize,
    ) -> std::result::Result<(), JsValue<'js>> {
        self.seen.insert(object.clone(), number);
        Ok(())
    }

    fn forget(&mut self, object: &JsValue<'js>) {
        self.seen.remove(object);
    }

    fn element(&mut self, array: &JsValue<'js>, index: u32) -> Element<JsValue<'js>, JsValue<'js>> {
        let read = OwnedAtom::from_index(self.ctx, index).and_then(|atom| self.read(array, &atom));
        match read {
            None => Element::Hole,
            Some(Ok(item)) => Element::Value(item),
            Some(Err(thrown)) => Element::Thrown(thrown),
        }
    }

    fn key_count(&self, keys: &Self::Keys) -> usize {
        keys.len()
    }

    fn property(
        &mut self,
        object: &JsValue<'js>,
        keys: &Self::Keys,
        index: usize,
    ) -> Property<JsValue<'js>, JsValue<'js>> {
        let Some(atom) = keys.get(index) else {
            return Property::Absent;
        };
        // A getter may have deleted a later property: structured clone skips it too.
        let Some(read) = self.read(object, atom) else {
            return Property::Absent;
        };
        let key = atom
            .to_value()
            .map(|name| self.string(&name))
            .unwrap_or_default();
        match read {
            Ok(value) => Property::Value(key, value),
            Err(thrown) => Property::Thrown(key, thrown),
        }
    }

    fn item_count(&self, items: &Self::Items) -> usize {
        items.len()
    }

    fn item(
        &mut self,
        items: &Self::Items,
        index: usize,
        field: Field,
    ) -> std::result::Result<JsValue<'js>, JsValue<'js>> {
        let Some(item) = items.get(index) else {
            return Ok(JsValue::new_undefined(self.ctx.clone()));
        };
        // The iterator made the entry arrays itself: plain data, no user code.
        Ok(match field {
            Field::MapKey => self.reflect.index_data(item, 0),
            Field::MapValue => self.reflect.index_data(item, 1),
            Field::SetItem => item.clone(),
        })
    }

    fn map_key_label(&mut self, items: &Self::Items, index: usize, _key: &Value) -> String {
        let key = items
            .get(index)
            .map(|entry| self.reflect.index_data(entry, 0))
            .unwrap_or_else(|| JsValue::new_undefined(self.ctx.clone()));
        let shown = inspect::inspect(self.ctx, &key);
        let shown = shown.lines().next().unwrap_or_default();
        match shown.char_indices().nth(MAX_KEY_LABEL) {
            Some((cut, _)) => format!("{}…", &shown[..cut]),
            None => shown.to_string(),
        }
    }

    fn buffer_bytes(
        &mut self,
        buffer: &JsValue<'js>,
    ) -> std::result::Result<Vec<u8>, Refusal<JsValue<'js>>> {
        match self.reflect.array_buffer_bytes(buffer, usize::MAX) {
            Some((_, bytes)) => Ok(bytes),
            None => Err(Refusal::What(
                "a typed array whose buffer is detached".into(),
            )),
        }
    }

    fn thrown(&mut self, thrown: JsValue<'js>) -> String {
        let shown = inspect::inspect(self.ctx, &thrown);
        shown.lines().next().unwrap_or_default().to_string()
    }
}

impl<'js> Describe for Sandbox<'_, 'js> {
    fn describe(&mut self, value: &JsValue<'js>) -> String {
        inspect::inspect(self.ctx, value)
    }
}

impl<'js> Sandbox<'_, 'js> {
    /// `name` and `message` as data properties (own or inherited, as structured clone reads
    /// them), `stack` as QuickJS keeps it (frame lines only).
    fn error(&self, error: &JsValue<'js>) -> Value {
        let text = |atom| {
            self.reflect
                .data_get_pre(error, atom)
                .filter(|value| !value.is_undefined())
                .and_then(|value| self.reflect.plain_string(&value))
        };
        let name = text(PredefinedAtom::Name).unwrap_or_else(|| "Error".into());
        let message = text(PredefinedAtom::Message).unwrap_or_default();
        let stack = self
            .reflect
            .raw_stack(error)
            .filter(|stack| stack.is_string())
            .map(|stack| self.string(&stack));
        Value::Error {
            name,
            message,
            stack,
        }
    }

    fn typed_array(
        &self,
        view: &JsValue<'js>,
        kind: TypedArrayKind,
    ) -> std::result::Result<Shape<Self>, Refusal<JsValue<'js>>> {
        let Some((buffer, byte_offset, byte_length, _)) = self.reflect.typed_array_buffer(view)
        else {
            return Err(Refusal::What(
                "a typed array whose buffer is detached".into(),
            ));
        };
        if class_id(&buffer) != CLASS_ARRAY_BUFFER {
            return Err(Refusal::What(
                "a typed array over a SharedArrayBuffer".into(),
            ));
        }
        Ok(Shape::TypedArray {
            kind,
            buffer: ViewBuffer::Shared(buffer),
            byte_offset,
            length: byte_length / kind.element_size(),
        })
    }

    /// An own property's value, from its getter if it has one (structured clone calls getters):
    /// `None` when the property is gone, `Err` with what the getter threw.
    fn read(
        &self,
        object: &JsValue<'js>,
        atom: &OwnedAtom<'js>,
    ) -> Option<std::result::Result<JsValue<'js>, JsValue<'js>>> {
        match self.reflect.own_desc(object, atom) {
            Ok(Some(PropDesc {
                value: PropValue::Data(value),
                ..
            })) => Some(Ok(value)),
            Ok(Some(_)) => Some(self.reflect.get(object, atom)),
            Ok(None) | Err(()) => None,
        }
    }

    fn string(&self, value: &JsValue<'js>) -> String {
        // Lone surrogates have no UTF-8 form; they become U+FFFD.
        lossy(&js_string_units(self.ctx, value).unwrap_or_default())
    }
}

/// Builds a sandbox value from a copy (for `sendVariables` and tool results). Every object is
/// fresh and made by the engine's own constructors, whatever the sandbox put in `globalThis`.
/// A copy it cannot build (a `Ref` to nothing, a typed array without a buffer, a `Map` after
/// the sandbox replaced `Map.prototype.set`) throws a `TypeError` or `RangeError` in `ctx`.
pub fn from_value<'js>(ctx: &Ctx<'js>, value: &Value) -> Result<JsValue<'js>> {
    Builder::new(Maker {
        ctx,
        reflect: Reflect::new(ctx),
    })
    .build(value)
}

/// The sandbox as the walk builds in it.
struct Maker<'a, 'js> {
    ctx: &'a Ctx<'js>,
    reflect: Reflect<'a, 'js>,
}

impl<'js> Sink for Maker<'_, 'js> {
    type Handle = JsValue<'js>;
    type Array = Object<'js>;
    type Object = Object<'js>;
    /// The map and the engine's own `Map.prototype.set`.
    type Map = (JsValue<'js>, rquickjs::Function<'js>);
    /// The set and the engine's own `Set.prototype.add`.
    type Set = (JsValue<'js>, rquickjs::Function<'js>);
    type Error = rquickjs::Error;

    fn leaf(&mut self, leaf: Leaf<'_>) -> Result<JsValue<'js>> {
        let ctx = self.ctx.clone();
        let made = match leaf {
            Leaf::Undefined => JsValue::new_undefined(ctx),
            Leaf::Null => JsValue::new_null(ctx),
            Leaf::Bool(flag) => JsValue::new_bool(ctx, flag),
            // `new_number` would store -0 as the integer 0.
            Leaf::Number(number) if number == 0.0 && number.is_sign_negative() => {
                JsValue::new_float(ctx, number)
            }
            Leaf::Number(number) => JsValue::new_number(ctx, number),
            Leaf::BigInt(digits) => self.big_int(digits)?,
            Leaf::String(text) => rquickjs::String::from_str(ctx, text)?.into_value(),
            Leaf::Date(time) => self
                .reflect
                .new_date(time)
                .ok_or(rquickjs::Error::Exception)?,
            Leaf::RegExp { source, flags } => {
                self.construct(CLASS_REGEXP, "RegExp", (source, flags))?
            }
            Leaf::Error {
                name,
                message,
                stack,
            } => self.error(name, message, stack)?,
            Leaf::ArrayBuffer(bytes) => ArrayBuffer::new_copy(ctx, bytes)?.into_value(),
        };
        if made.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        Ok(made)
    }

    fn array(&mut self, length: u32) -> Result<(JsValue<'js>, Object<'js>)> {
        let array = Array::new(self.ctx.clone())?.into_object();
        // The length first: trailing holes are holes too.
        array.set(PredefinedAtom::Length, length)?;
        Ok((array.clone().into_value(), array))
    }

    fn object(&mut self) -> Result<(JsValue<'js>, Object<'js>)> {
        let object = Object::new(self.ctx.clone())?;
        Ok((object.clone().into_value(), object))
    }

    fn map(&mut self) -> Result<(JsValue<'js>, Self::Map)> {
        let map = self.construct(CLASS_MAP, "Map", ())?;
        let set = self.native_method(CLASS_MAP, "set")?;
        Ok((map.clone(), (map, set)))
    }

    fn set(&mut self) -> Result<(JsValue<'js>, Self::Set)> {
        let set = self.construct(CLASS_SET, "Set", ())?;
        let add = self.native_method(CLASS_SET, "add")?;
        Ok((set.clone(), (set, add)))
    }

    fn is_array_buffer(&mut self, value: &JsValue<'js>) -> Result<bool> {
        Ok(class_id(value) == CLASS_ARRAY_BUFFER)
    }

    fn typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &JsValue<'js>,
        byte_offset: usize,
        length: usize,
    ) -> Result<JsValue<'js>> {
        self.reflect
            .new_typed_array(kind, buffer, byte_offset, length)
            .ok_or(rquickjs::Error::Exception)
    }

    // Defined, not assigned: setters on the prototypes must not run, and `__proto__` is a key
    // like any other.
    fn set_element(&mut self, array: &Object<'js>, index: u32, value: JsValue<'js>) -> Result<()> {
        array.prop(index, data(value))
    }

    fn define(&mut self, object: &Object<'js>, key: &str, value: JsValue<'js>) -> Result<()> {
        object.prop(key, data(value))
    }

    fn map_set(&mut self, map: &Self::Map, key: JsValue<'js>, value: JsValue<'js>) -> Result<()> {
        let (map, set) = map;
        set.call::<_, JsValue>((This(map.clone()), key, value))?;
        Ok(())
    }

    fn set_add(&mut self, set: &Self::Set, item: JsValue<'js>) -> Result<()> {
        let (set, add) = set;
        add.call::<_, JsValue>((This(set.clone()), item))?;
        Ok(())
    }

    fn fail(&mut self, problem: Problem) -> rquickjs::Error {
        if problem.is_range_error() {
            Exception::throw_range(self.ctx, problem.message())
        } else {
            Exception::throw_type(self.ctx, problem.message())
        }
    }
}

impl<'js> Maker<'_, 'js> {
    fn big_int(&self, digits: &str) -> Result<JsValue<'js>> {
        if let Ok(small) = digits.parse::<i64>() {
            return Ok(BigInt::from_i64(self.ctx.clone(), small)?.into_value());
        }
        if let Ok(small) = digits.parse::<u64>() {
            return Ok(BigInt::from_u64(self.ctx.clone(), small)?.into_value());
        }
        let (sign, magnitude) = match digits.strip_prefix('-') {
            Some(magnitude) => ("-", magnitude),
            None => ("", digits),
        };
        if magnitude.is_empty() || !magnitude.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Exception::throw_type(
                self.ctx,
                "a BigInt must be decimal digits",
            ));
        }
        let magnitude = magnitude.trim_start_matches('0');
        // QuickJS has no C API for big BigInts; a literal of checked digits is parsed exactly
        // and leaves no room for user code.
        self.ctx.eval(format!("{sign}{magnitude}n"))
    }

    /// `new <name>(args)` with the engine's own constructor for `class`.
    fn construct<A>(&self, class: u32, name: &str, args: A) -> Result<JsValue<'js>>
    where
        A: rquickjs::function::IntoArgs<'js>,
    {
        let proto = self.reflect.class_proto(class);
        let constructor = proto.as_ref().and_then(|proto| {
            self.intrinsic_constructor(name, Some(class), |prototype| prototype == proto)
        });
        let Some(constructor) = constructor else {
            return Err(Exception::throw_type(
                self.ctx,
                &format!("the sandbox's {name} constructor is gone"),
            ));
        };
        let object: JsValue = constructor.construct(args)?;
        if class_id(&object) != class {
            return Err(Exception::throw_type(
                self.ctx,
                &format!("the sandbox's {name} constructor was replaced"),
            ));
        }
        Ok(object)
    }

    /// The engine's constructor called `name`, found as the `constructor` of `class`'s
    /// prototype or as the global of that name, and accepted only while it is an engine function
    /// whose non-writable `prototype` passes `is_prototype`: user code can re-point the
    /// `constructor` and the global, but cannot make such a function.
    fn intrinsic_constructor(
        &self,
        name: &str,
        class: Option<u32>,
        is_prototype: impl Fn(&JsValue<'js>) -> bool,
    ) -> Option<Constructor<'js>> {
        let data = |object: &JsValue<'js>, atom: &OwnedAtom<'js>| match self
            .reflect
            .own_desc(object, atom)
        {
            Ok(Some(PropDesc {
                value: PropValue::Data(value),
                writable,
                ..
            })) => Some((value, writable)),
            _ => None,
        };
        let constructor_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor);
        let prototype_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype);
        let name_atom = OwnedAtom::from_str(self.ctx, name)?;
        let from_prototype = |prototype: Option<JsValue<'js>>| {
            prototype.and_then(|prototype| data(&prototype, &constructor_atom))
        };
        let candidates = [
            from_prototype(class.and_then(|class| self.reflect.class_proto(class))),
            data(&self.ctx.globals().into_value(), &name_atom),
        ];
        candidates.into_iter().flatten().find_map(|(candidate, _)| {
            if class_id(&candidate) != CLASS_C_FUNCTION || !candidate.is_constructor() {
                return None;
            }
            match data(&candidate, &prototype_atom) {
                Some((prototype, false)) if is_prototype(&prototype) => {
                    candidate.into_constructor()
                }
                _ => None,
            }
        })
    }

    fn native_method(&self, class: u32, name: &str) -> Result<rquickjs::Function<'js>> {
        self.reflect.native_fn(class, name, false).ok_or_else(|| {
            Exception::throw_type(
                self.ctx,
                &format!("the sandbox replaced the built-in {name} method"),
            )
        })
    }

    /// An error of the built-in class called `name` when there is one, else an `Error` whose
    /// own `name` says what it was.
    fn error(&self, name: &str, message: &str, stack: Option<&str>) -> Result<JsValue<'js>> {
        let native = match name {
            "Error" => Some(NativeError::Error),
            "TypeError" => Some(NativeError::TypeError),
            "RangeError" => Some(NativeError::RangeError),
            "ReferenceError" => Some(NativeError::ReferenceError),
            "SyntaxError" => Some(NativeError::SyntaxError),
            "InternalError" => Some(NativeError::InternalError),
            _ => None,
        };
        let (error, named) = match native {
            Some(native) => (self.reflect.new_error(native), true),
            None => match self.other_native_error(name) {
                Some(error) => (Some(error), true),
                None => (self.reflect.new_error(NativeError::Error), false),
            },
        };
        let Some(error) = error else {
            return Err(rquickjs::Error::Exception);
        };
        let Some(object) = error.as_object() else {
            return Err(Exception::throw_type(self.ctx, "cannot create an error"));
        };
        if message.is_empty() {
            // As `new Error()`: no own message, the prototype's empty one shows through.
            object.remove(PredefinedAtom::Message)?;
        } else {
            object.prop(PredefinedAtom::Message, hidden(message))?;
        }
        if !named {
            object.prop(PredefinedAtom::Name, hidden(name))?;
        }
        if let Some(stack) = stack {
            object.prop(PredefinedAtom::Stack, hidden(stack))?;
        }
        Ok(error)
    }

    /// `new EvalError()` / `new URIError()`, which QuickJS has no C API for, with the engine's
    /// own constructor.
    fn other_native_error(&self, name: &str) -> Option<JsValue<'js>> {
        if !matches!(name, "EvalError" | "URIError") {
            return None;
        }
        let error_proto = self.reflect.class_proto(CLASS_ERROR)?;
        let constructor = self.intrinsic_constructor(name, None, |prototype| {
            self.reflect.proto_of(prototype).as_ref() == Some(&error_proto)
        })?;
        let error: JsValue = match constructor.construct(()) {
            Ok(error) => error,
            Err(_) => {
                let _ = self.ctx.catch();
                return None;
            }
        };
        error.is_error().then_some(error)
    }
}

/// A plain data property, as an object literal makes it.
fn data<T>(value: T) -> JsProperty<T> {
    JsProperty::from(value)
        .writable()
        .enumerable()
        .configurable()
}

/// A data property as the engine makes `message` and `stack`: not enumerable.
fn hidden(text: &str) -> JsProperty<&str> {
    JsProperty::from(text).writable().configurable()
}

#[cfg(test)]
mod tests;
