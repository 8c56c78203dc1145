//! Copies values between a sandbox and the shared value model with structured-clone semantics
//! (docs/contract.md "Values across the boundary"): QuickJS's side of the walk in
//! `crate::value::walk`.
//!
//! Both directions run on the engine thread. Reading goes through the realm's intrinsics (the
//! engine's own functions, taken from the built-in prototypes by [`Reflect`]), never through
//! globals or prototype methods that user code can replace (`Array.from`, `Map.prototype.entries`,
//! `Date.prototype.getTime`, …); building uses the engine's constructors. The only user code a
//! copy runs is what structured clone runs too: getters of the sandbox's own objects, inside the
//! sandbox, under its guards. Whatever they throw is reported in the copy and cleared.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Property as JsProperty;
use rquickjs::{
    Array, ArrayBuffer, BigInt, Ctx, Exception, JsLifetime, Object, Result, Type, Value as JsValue,
};

use super::inspect;
use crate::engine::quickjs::reflect::{
    class_id, js_string_units, lossy, primitive_to_string, typed_array_kind, with_chars,
    NativeError, OwnedAtom, PropDesc, PropValue, Reflect, CLASS_ARRAY, CLASS_ARRAY_BUFFER,
    CLASS_BIG_INT, CLASS_BOOLEAN, CLASS_DATE, CLASS_ERROR, CLASS_MAP, CLASS_NUMBER, CLASS_OBJECT,
    CLASS_REGEXP, CLASS_SET, CLASS_STRING, KEYS_ENUMERABLE, KEYS_STRINGS,
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

/// Copies a sandbox value out, whole or not at all: more than `max_bytes` (`maxValueBytes`, as
/// [`Reader::size_of`] counts them) or past a fixed limit of copies fails with a [`CloneError`]
/// naming the limit. `root` names the value in [`CloneError`] paths (`"args[0]"`).
pub fn to_value<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    mode: Uncopyable,
    root: &str,
    max_bytes: u64,
) -> std::result::Result<Value, CloneError> {
    let source = Sandbox {
        ctx,
        reflect: Reflect::new(ctx),
        seen: HashMap::new(),
    };
    let copied = match mode {
        Uncopyable::Describe => Reader::describing(source, max_bytes).read(value, root),
        Uncopyable::Refuse => Reader::refusing(source, max_bytes).read(value, root),
    };
    // Whatever a getter threw is already part of the copy; it must not surface in the run.
    if ctx.has_exception() {
        let _ = ctx.catch();
    }
    copied
}

/// Throws `error` (a copy out of the sandbox that passed a size limit) into the sandbox as a
/// `RangeError` carrying its message, and remembers it: if it ends the run uncaught,
/// [`copy_failure_of`] gives the limit back for the run's error.
pub(crate) fn throw_copy_failure(ctx: &Ctx<'_>, error: CloneError) -> rquickjs::Error {
    let maker = Maker {
        ctx,
        reflect: Reflect::new(ctx),
    };
    let thrown = match maker.error("RangeError", &error.to_string(), ErrorStack::Here) {
        Ok(thrown) => thrown,
        Err(failed) => return failed,
    };
    if error.limit.is_some() {
        if ctx.userdata::<CopyFailures>().is_none() {
            let _ = ctx.store_userdata(CopyFailures(RefCell::default()));
        }
        if let Some(failures) = ctx.userdata::<CopyFailures>() {
            let mut failures = failures.0.borrow_mut();
            if failures.len() == KEPT_COPY_FAILURES {
                failures.pop_front();
            }
            failures.push_back((thrown.clone(), error));
        }
    }
    ctx.throw(thrown)
}

/// The copy failure `thrown` reports, if it is one [`throw_copy_failure`] threw.
pub(crate) fn copy_failure_of<'js>(ctx: &Ctx<'js>, thrown: &JsValue<'js>) -> Option<CloneError> {
    let failures = ctx.userdata::<CopyFailures>()?;
    let failures = failures.0.borrow();
    failures
        .iter()
        .find(|(error, _)| error == thrown)
        .map(|(_, failure)| failure.clone())
}

/// The latest errors [`throw_copy_failure`] threw (at most [`KEPT_COPY_FAILURES`]: one that ends
/// a run is among the last thrown), kept as the runtime's user data.
struct CopyFailures<'js>(RefCell<VecDeque<(JsValue<'js>, CloneError)>>);

// SAFETY: the only lifetime held is the runtime's `'js`, which `Changed` replaces everywhere.
unsafe impl<'js> JsLifetime<'js> for CopyFailures<'js> {
    type Changed<'to> = CopyFailures<'to>;
}

/// How many thrown copy failures are remembered.
const KEPT_COPY_FAILURES: usize = 8;

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
        room: u64,
    ) -> std::result::Result<Option<Value>, Refusal<JsValue<'js>>> {
        let refuse = |what: &str| Err(Refusal::What(what.into()));
        Ok(Some(match value.type_of() {
            Type::Undefined | Type::Uninitialized => Value::Undefined,
            Type::Null => Value::Null,
            Type::Bool => Value::Bool(value.as_bool().unwrap_or_default()),
            Type::Int | Type::Float => Value::Number(value.as_number().unwrap_or(f64::NAN)),
            Type::String => return self.string_within(value, room).map(Some),
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
        room: u64,
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
            // Through the engine's own functions (see `reflect::Intrinsics`), so what sandbox
            // code did to the prototypes does not matter; they fail only when the heap does.
            CLASS_MAP | CLASS_SET => {
                match self.reflect.collection_entries(object, class, usize::MAX) {
                    Some(items) if class == CLASS_MAP => Shape::Map(items),
                    Some(items) => Shape::Set(items),
                    None if class == CLASS_MAP => {
                        return refuse("a Map whose entries cannot be read")
                    }
                    None => return refuse("a Set whose items cannot be read"),
                }
            }
            CLASS_DATE => match self
                .reflect
                .call_native(CLASS_DATE, "getTime", false, object)
                .and_then(|time| time.as_number())
            {
                Some(time) => Shape::Leaf(Value::Date(time)),
                None => return refuse("a Date whose time cannot be read"),
            },
            CLASS_REGEXP => match self.reflect.regexp_parts(object) {
                Some((source, flags)) => Shape::Leaf(Value::RegExp { source, flags }),
                None => return refuse("a RegExp whose source cannot be read"),
            },
            CLASS_ERROR => Shape::Leaf(self.error(object)),
            CLASS_ARRAY_BUFFER => Shape::Leaf(Value::ArrayBuffer(self.buffer_within(
                object,
                room,
                "a detached ArrayBuffer",
            )?)),
            // `new Number(1)` and its kin have no place in the value model: they travel as the
            // primitive they wrap.
            CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT => {
                match self.reflect.call_native(class, "valueOf", false, object) {
                    Some(primitive) => Shape::Boxed(primitive),
                    None => return refuse("a wrapped primitive whose value cannot be read"),
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
        room: u64,
    ) -> std::result::Result<Vec<u8>, Refusal<JsValue<'js>>> {
        self.buffer_within(buffer, room, "a typed array whose buffer is detached")
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

    /// A string value copied whole, read in place (see `reflect::with_chars`): one of more than
    /// `room` bytes is refused before it is copied. Its UTF-8 form is at least as many bytes as
    /// it has UTF-16 units, and at most three times as many.
    fn string_within(
        &self,
        value: &JsValue<'js>,
        room: u64,
    ) -> std::result::Result<Value, Refusal<JsValue<'js>>> {
        let copied = with_chars(self.ctx, value, |chars| {
            let units = chars.len() as u64;
            if units > room {
                return Err(units);
            }
            let text = chars.to_string_lossy();
            match text.len() as u64 {
                bytes if bytes > room => Err(bytes),
                _ => Ok(text),
            }
        });
        match copied {
            Some(Ok(text)) => Ok(Value::String(text)),
            Some(Err(bytes)) => Err(Refusal::TooLarge(bytes)),
            // Only a rope that the full heap could not make flat is unreadable.
            None => Err(Refusal::What("a string that cannot be read".into())),
        }
    }

    /// An ArrayBuffer's bytes, unless there are more than `room` of them (then unread).
    fn buffer_within(
        &self,
        buffer: &JsValue<'js>,
        room: u64,
        detached: &str,
    ) -> std::result::Result<Vec<u8>, Refusal<JsValue<'js>>> {
        let limit = usize::try_from(room.saturating_add(1)).unwrap_or(usize::MAX);
        match self.reflect.array_buffer_bytes(buffer, limit) {
            Some((size, _)) if size as u64 > room => Err(Refusal::TooLarge(size as u64)),
            Some((_, bytes)) => Ok(bytes),
            None => Err(Refusal::What(detached.into())),
        }
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
            } => self.error(name, message, ErrorStack::Copied(stack))?,
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

    /// `new <name>(args)` with the engine's own constructor (see `reflect::Intrinsics`).
    fn construct<A>(&self, class: u32, name: &str, args: A) -> Result<JsValue<'js>>
    where
        A: rquickjs::function::IntoArgs<'js>,
    {
        let Some(constructor) = self.reflect.intrinsic_constructor(name) else {
            return Err(Exception::throw_type(
                self.ctx,
                &format!("the sandbox's {name} constructor is gone"),
            ));
        };
        let object: JsValue = constructor.construct(args)?;
        if class_id(&object) != class {
            return Err(Exception::throw_type(
                self.ctx,
                &format!("the sandbox's {name} constructor made no {name}"),
            ));
        }
        Ok(object)
    }

    fn native_method(&self, class: u32, name: &str) -> Result<rquickjs::Function<'js>> {
        self.reflect.native_fn(class, name, false).ok_or_else(|| {
            Exception::throw_type(
                self.ctx,
                &format!("the sandbox has no built-in {name} method"),
            )
        })
    }

    /// An error of the built-in class called `name` when there is one, else an `Error` whose
    /// own `name` says what it was.
    fn error(&self, name: &str, message: &str, stack: ErrorStack<'_>) -> Result<JsValue<'js>> {
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
        if let ErrorStack::Copied(stack) = stack {
            object.prop(PredefinedAtom::Stack, hidden(stack.unwrap_or_default()))?;
        }
        Ok(error)
    }

    /// `new EvalError()` / `new URIError()`, which QuickJS has no C API for, with the engine's
    /// own constructor.
    fn other_native_error(&self, name: &str) -> Option<JsValue<'js>> {
        if !matches!(name, "EvalError" | "URIError") {
            return None;
        }
        let constructor = self.reflect.intrinsic_constructor(name)?;
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

/// What an error the engine makes has as its `stack`.
enum ErrorStack<'a> {
    /// A copy's: its original's, or no frames when it had none (a host error arrives without
    /// its stack, docs/semantics.md "Values across the boundary"). Not the frames QuickJS records when the
    /// copy is made: they would name whatever sandbox code ran then (for a tool's promised
    /// result, whichever await the run had reached).
    Copied(Option<&'a str>),
    /// Where sandbox code is now, as QuickJS records it: an error thrown at a call, which the
    /// run's error locates by it.
    Here,
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
