//! Copies values between a sandbox and the shared value model with structured-clone semantics
//! (DESIGN.md "Values across the boundary"): QuickJS's side of the walk in `crate::value::walk`.
//!
//! Both directions run on the engine thread. Reading goes through the realm's intrinsics (the
//! engine's own functions, taken from the built-in prototypes by [`Inspector`]), never through
//! globals or prototype methods that user code can replace (`Array.from`, `Map.prototype.entries`,
//! `Date.prototype.getTime`, …); building uses the engine's constructors. The only user code a
//! copy runs is what structured clone runs too: getters of the sandbox's own objects, inside the
//! sandbox, under its guards. Whatever they throw is reported in the copy and cleared.

use std::collections::HashMap;

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::object::Property as JsProperty;
use rquickjs::{
    qjs, Array, ArrayBuffer, BigInt, Constructor, Ctx, Exception, Object, Result, Type,
    Value as JsValue,
};

use super::inspect::{
    self, Inspector, OwnedAtom, PropDesc, PropValue, CLASS_ARRAY, CLASS_ARRAY_BUFFER,
    CLASS_BIG_INT, CLASS_BOOLEAN, CLASS_C_FUNCTION, CLASS_DATE, CLASS_ERROR, CLASS_MAP,
    CLASS_NUMBER, CLASS_OBJECT, CLASS_REGEXP, CLASS_SET, CLASS_STRING,
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
        inspector: Inspector::new(ctx, 0, false, false),
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
    inspector: Inspector<'a, 'js>,
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
            Type::BigInt => Value::BigInt(inspect::primitive_to_string(self.ctx, value)),
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
        let class = inspect::class_id(object);
        Ok(match class {
            // Own enumerable string-keyed properties in order; the prototype is not kept, so
            // class instances arrive as plain objects, as with structured clone.
            CLASS_OBJECT => Shape::Plain(self.inspector.own_atoms(
                object,
                qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY,
                false,
            )),
            // Elements by index, holes kept; other own keys of the array are dropped.
            CLASS_ARRAY => Shape::Array(self.inspector.array_length(object)),
            CLASS_MAP | CLASS_SET => {
                match self.inspector.collection_entries(object, class, usize::MAX) {
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
                    self.inspector
                        .call_native(CLASS_DATE, method, false, object)?
                        .as_number()
                });
                match time {
                    Some(time) => Shape::Leaf(Value::Date(time)),
                    None => return refuse("a Date whose built-in methods were replaced"),
                }
            }
            CLASS_REGEXP => match self.inspector.regexp_parts(object) {
                Some((source, flags)) => Shape::Leaf(Value::RegExp { source, flags }),
                None => return refuse("a RegExp whose built-in accessors were replaced"),
            },
            CLASS_ERROR => Shape::Leaf(self.error(object)),
            CLASS_ARRAY_BUFFER => match self.inspector.array_buffer_bytes(object, usize::MAX) {
                Some((_, bytes)) => Shape::Leaf(Value::ArrayBuffer(bytes)),
                None => return refuse("a detached ArrayBuffer"),
            },
            // `new Number(1)` and its kin have no place in the value model: they travel as the
            // primitive they wrap.
            CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT => {
                match self.inspector.call_native(class, "valueOf", false, object) {
                    Some(primitive) => Shape::Boxed(primitive),
                    None => return refuse("a wrapped primitive whose valueOf was replaced"),
                }
            }
            _ => match typed_array_kind(object) {
                Some(kind) => return self.typed_array(object, kind),
                None => {
                    let name = self.inspector.internal_constructor_name(object);
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
            Field::MapKey => self.inspector.index_data(item, 0),
            Field::MapValue => self.inspector.index_data(item, 1),
            Field::SetItem => item.clone(),
        })
    }

    fn map_key_label(&mut self, items: &Self::Items, index: usize, _key: &Value) -> String {
        let key = items
            .get(index)
            .map(|entry| self.inspector.index_data(entry, 0))
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
        match self.inspector.array_buffer_bytes(buffer, usize::MAX) {
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
            self.inspector
                .data_get_pre(error, atom)
                .filter(|value| !value.is_undefined())
                .and_then(|value| self.inspector.plain_string(&value))
        };
        let name = text(PredefinedAtom::Name).unwrap_or_else(|| "Error".into());
        let message = text(PredefinedAtom::Message).unwrap_or_default();
        let stack = self
            .inspector
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
        let (mut byte_offset, mut byte_length): (qjs::size_t, qjs::size_t) = (0, 0);
        // SAFETY: `view` is a live typed array of this context and the out-pointers are valid
        // locals; the result is an owned reference to its buffer, or the exception marker (which
        // owns nothing) when the view is out of bounds.
        let buffer = unsafe {
            JsValue::from_raw(
                self.ctx.clone(),
                qjs::JS_GetTypedArrayBuffer(
                    self.ctx.as_raw().as_ptr(),
                    view.as_raw(),
                    &mut byte_offset,
                    &mut byte_length,
                    std::ptr::null_mut(),
                ),
            )
        };
        if buffer.is_exception() {
            let _ = self.ctx.catch();
            return Err(Refusal::What(
                "a typed array whose buffer is detached".into(),
            ));
        }
        if inspect::class_id(&buffer) != CLASS_ARRAY_BUFFER {
            return Err(Refusal::What(
                "a typed array over a SharedArrayBuffer".into(),
            ));
        }
        Ok(Shape::TypedArray {
            kind,
            buffer: ViewBuffer::Shared(buffer),
            byte_offset: byte_offset as usize,
            length: byte_length as usize / kind.element_size(),
        })
    }

    /// An own property's value, from its getter if it has one (structured clone calls getters):
    /// `None` when the property is gone, `Err` with what the getter threw.
    fn read(
        &self,
        object: &JsValue<'js>,
        atom: &OwnedAtom<'js>,
    ) -> Option<std::result::Result<JsValue<'js>, JsValue<'js>>> {
        match self.inspector.own_desc(object, atom.raw) {
            Ok(Some(PropDesc {
                value: PropValue::Data(value),
                ..
            })) => Some(Ok(value)),
            Ok(Some(_)) => {
                // SAFETY: `object` is a live object and `atom` a live atom of this context; the
                // result is an owned value or the exception marker.
                let value = unsafe {
                    JsValue::from_raw(
                        self.ctx.clone(),
                        qjs::JS_GetProperty(self.ctx.as_raw().as_ptr(), object.as_raw(), atom.raw),
                    )
                };
                if value.is_exception() {
                    Some(Err(self.ctx.catch()))
                } else {
                    Some(Ok(value))
                }
            }
            Ok(None) | Err(()) => None,
        }
    }

    fn string(&self, value: &JsValue<'js>) -> String {
        // Lone surrogates have no UTF-8 form; they become U+FFFD.
        inspect::lossy(&inspect::js_string_units(self.ctx, value).unwrap_or_default())
    }
}

/// The kind of a typed array; `None` for anything else, and for `Float16Array`, which
/// structured clone does not know.
fn typed_array_kind(value: &JsValue<'_>) -> Option<TypedArrayKind> {
    // SAFETY: only reads the class id of a live value.
    let raw = unsafe { qjs::JS_GetTypedArrayType(value.as_raw()) };
    TypedArrayKind::ALL
        .into_iter()
        .find(|&kind| i64::from(quickjs_kind(kind)) == i64::from(raw))
}

fn quickjs_kind(kind: TypedArrayKind) -> qjs::JSTypedArrayEnum {
    match kind {
        TypedArrayKind::Int8 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT8,
        TypedArrayKind::Uint8 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8,
        TypedArrayKind::Uint8Clamped => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8C,
        TypedArrayKind::Int16 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT16,
        TypedArrayKind::Uint16 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT16,
        TypedArrayKind::Int32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT32,
        TypedArrayKind::Uint32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT32,
        TypedArrayKind::Float32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT32,
        TypedArrayKind::Float64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT64,
        TypedArrayKind::BigInt64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_INT64,
        TypedArrayKind::BigUint64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_UINT64,
    }
}

/// Builds a sandbox value from a copy (for `sendVariables` and tool results). Every object is
/// fresh and made by the engine's own constructors, whatever the sandbox put in `globalThis`.
/// A copy it cannot build (a `Ref` to nothing, a typed array without a buffer, a `Map` after
/// the sandbox replaced `Map.prototype.set`) throws a `TypeError` or `RangeError` in `ctx`.
pub fn from_value<'js>(ctx: &Ctx<'js>, value: &Value) -> Result<JsValue<'js>> {
    Builder::new(Maker {
        ctx,
        inspector: Inspector::new(ctx, 0, false, false),
    })
    .build(value)
}

/// The sandbox as the walk builds in it.
struct Maker<'a, 'js> {
    ctx: &'a Ctx<'js>,
    inspector: Inspector<'a, 'js>,
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
            Leaf::Date(time) => {
                // SAFETY: plain constructor call on a live context; the result is an owned Date
                // or the exception marker.
                unsafe { JsValue::from_raw(ctx, qjs::JS_NewDate(self.ctx.as_raw().as_ptr(), time)) }
            }
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
        Ok(inspect::class_id(value) == CLASS_ARRAY_BUFFER)
    }

    fn typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &JsValue<'js>,
        byte_offset: usize,
        length: usize,
    ) -> Result<JsValue<'js>> {
        // Offsets and lengths beyond 2^53 are no valid view; the engine rejects them as such.
        let byte_offset = JsValue::new_number(self.ctx.clone(), byte_offset as f64);
        let length = JsValue::new_number(self.ctx.clone(), length as f64);
        let mut args = [buffer.as_raw(), byte_offset.as_raw(), length.as_raw()];
        // SAFETY: the three arguments are live values borrowed for the call (QuickJS duplicates
        // what it keeps); the result is an owned view or the exception marker, e.g. a RangeError
        // for a view outside its buffer.
        let view = unsafe {
            JsValue::from_raw(
                self.ctx.clone(),
                qjs::JS_NewTypedArray(
                    self.ctx.as_raw().as_ptr(),
                    args.len() as i32,
                    args.as_mut_ptr(),
                    quickjs_kind(kind),
                ),
            )
        };
        if view.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        Ok(view)
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
        let proto = self.inspector.class_proto(class);
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
        if inspect::class_id(&object) != class {
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
            .inspector
            .own_desc(object, atom.raw)
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
            from_prototype(class.and_then(|class| self.inspector.class_proto(class))),
            data(&self.ctx.globals().into_value(), &name_atom),
        ];
        candidates.into_iter().flatten().find_map(|(candidate, _)| {
            if inspect::class_id(&candidate) != CLASS_C_FUNCTION || !candidate.is_constructor() {
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
        self.inspector.native_fn(class, name, false).ok_or_else(|| {
            Exception::throw_type(
                self.ctx,
                &format!("the sandbox replaced the built-in {name} method"),
            )
        })
    }

    /// An error of the built-in class called `name` when there is one, else an `Error` whose
    /// own `name` says what it was.
    fn error(&self, name: &str, message: &str, stack: Option<&str>) -> Result<JsValue<'js>> {
        type NewError =
            unsafe extern "C" fn(*mut qjs::JSContext, *const std::ffi::c_char, ...) -> qjs::JSValue;
        let new_error = |new_error: NewError| {
            // SAFETY: a live context and an empty, NUL-terminated format string that takes no
            // arguments; the result is an owned error or the exception marker.
            unsafe {
                JsValue::from_raw(
                    self.ctx.clone(),
                    new_error(self.ctx.as_raw().as_ptr(), c"".as_ptr()),
                )
            }
        };
        let native: Option<NewError> = match name {
            "Error" => Some(qjs::JS_NewPlainError),
            "TypeError" => Some(qjs::JS_NewTypeError),
            "RangeError" => Some(qjs::JS_NewRangeError),
            "ReferenceError" => Some(qjs::JS_NewReferenceError),
            "SyntaxError" => Some(qjs::JS_NewSyntaxError),
            "InternalError" => Some(qjs::JS_NewInternalError),
            _ => None,
        };
        let (error, named) = match native {
            Some(native) => (new_error(native), true),
            None => match self.other_native_error(name) {
                Some(error) => (error, true),
                None => (new_error(qjs::JS_NewPlainError), false),
            },
        };
        if error.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
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
        let error_proto = self.inspector.class_proto(CLASS_ERROR)?;
        let constructor = self.intrinsic_constructor(name, None, |prototype| {
            self.inspector.proto_of(prototype).as_ref() == Some(&error_proto)
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
mod tests {
    use rquickjs::{Context, Runtime};

    use super::*;
    use crate::options::Options;
    use crate::value::MAX_DEPTH;

    /// Runs `f` in a fresh runtime (with the engine's stack limit) and context, and checks that
    /// it left no exception pending.
    fn with_sandbox<R>(f: impl for<'js> FnOnce(&Ctx<'js>) -> R) -> R {
        let runtime = Runtime::new().expect("runtime");
        runtime.set_max_stack_size(Options::default().max_stack_bytes);
        let context = Context::full(&runtime).expect("context");
        context.with(|ctx| {
            let out = f(&ctx);
            assert!(!ctx.has_exception(), "an exception was left pending");
            out
        })
    }

    fn eval<'js>(ctx: &Ctx<'js>, src: &str) -> JsValue<'js> {
        ctx.eval(src)
            .unwrap_or_else(|e| panic!("eval of {src} failed: {e:?} {:?}", ctx.catch()))
    }

    /// Copies what `src` evaluates to out of a sandbox, under the root name `x`.
    fn copy(src: &str, mode: Uncopyable) -> std::result::Result<Value, CloneError> {
        with_sandbox(|ctx| to_value(ctx, &eval(ctx, src), mode, "x"))
    }

    fn describe(src: &str) -> Value {
        copy(src, Uncopyable::Describe).expect("Describe mode never fails")
    }

    fn refuse(src: &str) -> CloneError {
        match copy(src, Uncopyable::Refuse) {
            Ok(value) => panic!("{src} was copied: {value:?}"),
            Err(error) => error,
        }
    }

    /// Rebuilds `value` as the global `x` of `ctx` and checks that `check` is true there.
    fn check_in<'js>(ctx: &Ctx<'js>, value: &Value, check: &str) {
        let rebuilt = from_value(ctx, value)
            .unwrap_or_else(|e| panic!("rebuilding {value:?} failed: {e:?} {:?}", ctx.catch()));
        ctx.globals().set("x", rebuilt).expect("global x");
        let passed: bool = ctx
            .eval(check)
            .unwrap_or_else(|e| panic!("{check} threw: {e:?} {:?}", ctx.catch()));
        assert!(passed, "{check} is false for {value:?}");
    }

    /// Rebuilds `value` in a fresh sandbox and checks it there.
    fn check(value: &Value, check: &str) {
        with_sandbox(|ctx| check_in(ctx, value, check));
    }

    /// Sandbox → Value → fresh sandbox, where `check` must hold of the copy `x`.
    fn round_trip(src: &str, check_src: &str) -> Value {
        let value = describe(src);
        check(&value, check_src);
        value
    }

    /// Number `n` of a Value graph: the n-th object variant in pre-order.
    fn number(value: f64) -> Value {
        Value::Number(value)
    }

    #[test]
    fn undefined_and_null() {
        assert_eq!(round_trip("undefined", "x === undefined"), Value::Undefined);
        assert_eq!(round_trip("null", "x === null"), Value::Null);
        assert_eq!(
            round_trip(
                "[undefined, null]",
                "x.length === 2 && 0 in x && x[0] === undefined"
            ),
            Value::Array(vec![Some(Value::Undefined), Some(Value::Null)])
        );
    }

    #[test]
    fn numbers_nan_and_negative_zero() {
        let copied = round_trip("NaN", "Number.isNaN(x)");
        assert!(matches!(copied, Value::Number(n) if n.is_nan()));
        let copied = round_trip("-0", "Object.is(x, -0)");
        assert!(matches!(copied, Value::Number(n) if n == 0.0 && n.is_sign_negative()));
        round_trip("0", "Object.is(x, 0)");
        round_trip(
            "[Infinity, -Infinity, 1.5, 2 ** 53 + 2]",
            "x[0] === Infinity && x[1] === -Infinity && x[2] === 1.5 && x[3] === 2 ** 53 + 2",
        );
        assert_eq!(round_trip("42", "x === 42"), number(42.0));
    }

    #[test]
    fn booleans_and_strings() {
        assert_eq!(round_trip("true", "x === true"), Value::Bool(true));
        assert_eq!(
            round_trip("'héllo 😀\\n'", "x === 'héllo 😀\\n'"),
            Value::String("héllo 😀\n".into())
        );
        assert_eq!(round_trip("''", "x === ''"), Value::String(String::new()));
    }

    #[test]
    fn bigints_of_any_size() {
        assert_eq!(round_trip("12n", "x === 12n"), Value::BigInt("12".into()));
        assert_eq!(
            round_trip("-12n", "x === -12n"),
            Value::BigInt("-12".into())
        );
        assert_eq!(round_trip("0n", "x === 0n"), Value::BigInt("0".into()));
        assert_eq!(
            round_trip("2n ** 64n + 1n", "x === 18446744073709551617n"),
            Value::BigInt("18446744073709551617".into())
        );
        round_trip("2n ** 64n - 1n", "x === 2n ** 64n - 1n");
        round_trip("-(2n ** 63n)", "x === -(2n ** 63n)");
        round_trip("-(3n ** 200n)", "x === -(3n ** 200n)");
        round_trip("[7n ** 100n]", "x[0] === 7n ** 100n");
    }

    #[test]
    fn bigint_digits_are_checked() {
        with_sandbox(|ctx| {
            for bad in ["", "-", "1e5", "12a", "1; globalThis.hacked = 1", "٣"] {
                assert!(
                    from_value(ctx, &Value::BigInt(bad.into())).is_err(),
                    "{bad:?}"
                );
                let _ = ctx.catch();
            }
            let hacked: bool = ctx.eval("'hacked' in globalThis").unwrap();
            assert!(!hacked);
        });
        check(&Value::BigInt("-000123".into()), "x === -123n");
        check(
            &Value::BigInt(format!("000{}", "9".repeat(40))),
            &format!("x === {}n", "9".repeat(40)),
        );
    }

    #[test]
    fn array_holes_stay_holes() {
        let copied = round_trip(
            "[1, , 3, , ]",
            "x.length === 4 && !(1 in x) && x[2] === 3 && !(3 in x) && Array.isArray(x)",
        );
        assert_eq!(
            copied,
            Value::Array(vec![Some(number(1.0)), None, Some(number(3.0)), None])
        );
        round_trip(
            "new Array(5)",
            "x.length === 5 && Object.keys(x).length === 0",
        );
        round_trip(
            "(() => { const a = []; a[3] = 'd'; return a; })()",
            "x.length === 4 && x[3] === 'd' && !(0 in x)",
        );
    }

    #[test]
    fn array_extra_keys_are_dropped() {
        let copied = round_trip(
            "Object.assign([1], { extra: 2 })",
            "x.length === 1 && !('extra' in x)",
        );
        assert_eq!(copied, Value::Array(vec![Some(number(1.0))]));
    }

    #[test]
    fn plain_objects_keep_key_order_and_drop_the_rest() {
        let copied = round_trip(
            "(() => {
                const o = { b: 1, a: 2, 2: 'two', 1: 'one', get g() { return 'got'; } };
                Object.defineProperty(o, 'hidden', { value: 1, enumerable: false });
                o[Symbol('s')] = 1;
                return o;
            })()",
            "Object.keys(x).join() === '1,2,b,a,g' && x.g === 'got' \
             && Object.getOwnPropertyDescriptor(x, 'g').value === 'got' \
             && Object.getOwnPropertySymbols(x).length === 0 && !('hidden' in x)",
        );
        assert_eq!(
            copied,
            Value::Object(vec![
                ("1".into(), Value::String("one".into())),
                ("2".into(), Value::String("two".into())),
                ("b".into(), number(1.0)),
                ("a".into(), number(2.0)),
                ("g".into(), Value::String("got".into())),
            ])
        );
    }

    #[test]
    fn class_instances_become_plain_objects() {
        let copied = round_trip(
            "new (class Point { constructor() { this.x = 1; this.y = 2; } get sum() { return 3; } })()",
            "Object.getPrototypeOf(x) === Object.prototype && x.x === 1 && x.y === 2 && !('sum' in x)",
        );
        assert_eq!(
            copied,
            Value::Object(vec![("x".into(), number(1.0)), ("y".into(), number(2.0))])
        );
        round_trip(
            "Object.assign(Object.create(null), { a: 1 })",
            "Object.getPrototypeOf(x) === Object.prototype && x.a === 1",
        );
    }

    #[test]
    fn proto_key_is_an_own_property() {
        round_trip(
            "JSON.parse('{\"__proto__\": {\"polluted\": 1}}')",
            "Object.getPrototypeOf(x) === Object.prototype && x.__proto__.polluted === 1 \
             && ({}).polluted === undefined && Object.keys(x).join() === '__proto__'",
        );
    }

    #[test]
    fn dates_valid_and_invalid() {
        assert_eq!(
            round_trip(
                "new Date(1700000000123)",
                "x instanceof Date && x.getTime() === 1700000000123"
            ),
            Value::Date(1_700_000_000_123.0)
        );
        let copied = round_trip(
            "new Date(NaN)",
            "x instanceof Date && Number.isNaN(x.getTime())",
        );
        assert!(matches!(copied, Value::Date(t) if t.is_nan()));
        round_trip(
            "new (class D extends Date {})(5)",
            "Object.getPrototypeOf(x) === Date.prototype && x.getTime() === 5",
        );
    }

    #[test]
    fn regexps_keep_source_and_flags() {
        let copied = round_trip(
            "/a\\/b[c]+/dgimsuy",
            "x instanceof RegExp && x.source === 'a\\\\/b[c]+' && x.flags === 'dgimsuy' \
             && x.lastIndex === 0 && x.test('a/bcc')",
        );
        assert_eq!(
            copied,
            Value::RegExp {
                source: "a\\/b[c]+".into(),
                flags: "dgimsuy".into()
            }
        );
        round_trip("new RegExp('')", "x.source === '(?:)' && x.flags === ''");
        round_trip(
            "/[\\p{L}--[a-z]]/v",
            "x.unicodeSets && x.test('É') && !x.test('a')",
        );
    }

    #[test]
    fn maps_keep_entries_in_order() {
        let copied = round_trip(
            "new Map([[1, 'a'], ['k', { z: 1 }], [{ o: 1 }, [2]]])",
            "x instanceof Map && x.size === 3 && x.get(1) === 'a' && x.get('k').z === 1 \
             && [...x.keys()][2].o === 1 && [...x.values()][2][0] === 2 \
             && [...x.keys()].slice(0, 2).join() === '1,k'",
        );
        assert_eq!(
            copied,
            Value::Map(vec![
                (number(1.0), Value::String("a".into())),
                (
                    Value::String("k".into()),
                    Value::Object(vec![("z".into(), number(1.0))])
                ),
                (
                    Value::Object(vec![("o".into(), number(1.0))]),
                    Value::Array(vec![Some(number(2.0))])
                ),
            ])
        );
        round_trip("new Map()", "x instanceof Map && x.size === 0");
    }

    #[test]
    fn sets_keep_items_in_order() {
        let copied = round_trip(
            "new Set([1, 'a', { b: 2 }, NaN])",
            "x instanceof Set && x.size === 4 && x.has(1) && x.has('a') && x.has(NaN) \
             && [...x][2].b === 2",
        );
        assert!(matches!(&copied, Value::Set(items) if items.len() == 4));
    }

    #[test]
    fn typed_arrays_of_every_kind() {
        for kind in TypedArrayKind::ALL {
            let name = kind.constructor_name();
            let items = if name.starts_with("Big") {
                "[1n, 2n, 3n]"
            } else {
                "[1, 2, 3]"
            };
            let copied = round_trip(
                &format!("new {name}({items})"),
                &format!(
                    "x instanceof {name} && x.length === 3 && x[1] == 2 && x.byteOffset === 0 \
                     && x.buffer.byteLength === 3 * {name}.BYTES_PER_ELEMENT"
                ),
            );
            let Value::TypedArray {
                kind: copied_kind,
                buffer,
                byte_offset: 0,
                length: 3,
            } = copied
            else {
                panic!("{name}: {copied:?}");
            };
            assert_eq!(copied_kind, kind);
            assert!(
                matches!(&*buffer, Value::ArrayBuffer(bytes) if bytes.len() == 3 * kind.element_size()),
                "{name}: {buffer:?}"
            );
        }
    }

    #[test]
    fn typed_array_values_are_exact() {
        round_trip(
            "new Float64Array([NaN, -0, 1e308, 5e-324])",
            "Number.isNaN(x[0]) && Object.is(x[1], -0) && x[2] === 1e308 && x[3] === 5e-324",
        );
        round_trip(
            "new BigUint64Array([2n ** 64n - 1n])",
            "x[0] === 2n ** 64n - 1n",
        );
        round_trip(
            "new Uint8ClampedArray([300, -5])",
            "x instanceof Uint8ClampedArray && x[0] === 255 && x[1] === 0",
        );
    }

    #[test]
    fn views_sharing_a_buffer_still_share_it() {
        let copied = round_trip(
            "(() => {
                const b = new ArrayBuffer(16);
                const u8 = new Uint8Array(b, 4, 8);
                const u32 = new Uint32Array(b, 8, 2);
                u8[4] = 7;
                return { u8, u32, b };
            })()",
            "x.u8.buffer === x.u32.buffer && x.b === x.u8.buffer && x.b.byteLength === 16 \
             && x.u8.byteOffset === 4 && x.u8.length === 8 \
             && x.u32.byteOffset === 8 && x.u32.length === 2 && x.u32[0] === 7 \
             && (x.u32[0] = 0x0909, x.u8[4] === 9 && x.u8[5] === 9)",
        );
        let mut bytes = vec![0; 16];
        bytes[8] = 7;
        assert_eq!(
            copied,
            Value::Object(vec![
                (
                    "u8".into(),
                    Value::TypedArray {
                        kind: TypedArrayKind::Uint8,
                        buffer: Box::new(Value::ArrayBuffer(bytes)),
                        byte_offset: 4,
                        length: 8,
                    }
                ),
                (
                    "u32".into(),
                    Value::TypedArray {
                        kind: TypedArrayKind::Uint32,
                        buffer: Box::new(Value::Ref(2)),
                        byte_offset: 8,
                        length: 2,
                    }
                ),
                ("b".into(), Value::Ref(2)),
            ])
        );
    }

    #[test]
    fn buffer_met_first_is_shared_with_a_later_view() {
        let copied = round_trip(
            "(() => { const b = new Uint16Array([1, 2]).buffer; return [b, new Uint16Array(b, 2)]; })()",
            "x[1].buffer === x[0] && x[1].length === 1 && x[1][0] === 2",
        );
        let Value::Array(items) = copied else {
            panic!("{copied:?}")
        };
        assert!(
            matches!(&items[1], Some(Value::TypedArray { buffer, .. }) if **buffer == Value::Ref(1))
        );
    }

    #[test]
    fn array_buffers() {
        assert_eq!(
            round_trip(
                "new Uint8Array([1, 2, 3]).buffer",
                "x instanceof ArrayBuffer && x.byteLength === 3 && new Uint8Array(x)[2] === 3",
            ),
            Value::ArrayBuffer(vec![1, 2, 3])
        );
        round_trip(
            "new ArrayBuffer(0)",
            "x instanceof ArrayBuffer && x.byteLength === 0",
        );
    }

    #[test]
    fn errors_of_every_built_in_class() {
        for name in [
            "Error",
            "TypeError",
            "RangeError",
            "ReferenceError",
            "SyntaxError",
            "EvalError",
            "URIError",
            "InternalError",
        ] {
            let copied = round_trip(
                &format!("new {name}('boom')"),
                &format!(
                    "x instanceof {name} && Object.getPrototypeOf(x) === {name}.prototype \
                     && x.name === '{name}' && x.message === 'boom' && typeof x.stack === 'string' \
                     && !Object.keys(x).length && !Object.hasOwn(x, 'name')"
                ),
            );
            assert!(
                matches!(&copied, Value::Error { name: n, message, stack: Some(_) } if n == name && message == "boom"),
                "{copied:?}"
            );
        }
    }

    #[test]
    fn error_subclasses_keep_their_name() {
        let copied = round_trip(
            "(() => {
                class ValidationError extends Error {
                    constructor(m) { super(m); this.name = 'ValidationError'; }
                }
                return new ValidationError('bad');
            })()",
            "x instanceof Error && x.name === 'ValidationError' && x.message === 'bad' \
             && Object.getPrototypeOf(x) === Error.prototype",
        );
        assert!(matches!(copied, Value::Error { ref name, .. } if name == "ValidationError"));
        // A subclass that does not rename itself reads as its base class, as structured clone.
        round_trip(
            "new (class Custom extends TypeError {})('t')",
            "x instanceof TypeError && x.name === 'TypeError' && x.message === 't'",
        );
        round_trip(
            "new AggregateError([], 'agg')",
            "x instanceof Error && x.name === 'AggregateError' && x.message === 'agg'",
        );
    }

    #[test]
    fn error_message_and_stack_are_exact() {
        let copied = round_trip(
            "(() => { function thrower() { return new Error('x'); } return thrower(); })()",
            "x.stack.includes('thrower')",
        );
        let Value::Error {
            stack: Some(stack), ..
        } = &copied
        else {
            panic!("{copied:?}")
        };
        check(
            &copied,
            &format!("x.stack === {}", serde_json::to_string(stack).unwrap()),
        );
        round_trip(
            "new Error()",
            "x.message === '' && !Object.hasOwn(x, 'message')",
        );
        check(
            &Value::Error {
                name: "Error".into(),
                message: "nul \0 inside".into(),
                stack: None,
            },
            "x.message === 'nul \\0 inside' && typeof x.stack === 'string'",
        );
    }

    #[test]
    fn cycles_survive() {
        let copied = round_trip(
            "(() => { const o = { a: [] }; o.self = o; o.a.push(o, o.a); return o; })()",
            "x.self === x && x.a[0] === x && x.a[1] === x.a",
        );
        assert_eq!(
            copied,
            Value::Object(vec![
                (
                    "a".into(),
                    Value::Array(vec![Some(Value::Ref(0)), Some(Value::Ref(1))])
                ),
                ("self".into(), Value::Ref(0)),
            ])
        );
        round_trip(
            "(() => { const m = new Map(); m.set(m, m); return m; })()",
            "x.get(x) === x",
        );
        round_trip(
            "(() => { const s = new Set(); s.add(s); return s; })()",
            "x.has(x)",
        );
    }

    #[test]
    fn shared_references_stay_shared() {
        round_trip(
            "(() => {
                const s = { n: 1 }, d = new Date(0), e = new Error('e'), r = /r/, a = [1];
                return { s1: s, s2: s, m: new Map([[s, s]]), set: new Set([s]), d1: d, d2: d,
                         e1: e, e2: e, r1: r, r2: r, a1: a, a2: a };
            })()",
            "x.s1 === x.s2 && x.m.get(x.s1) === x.s1 && x.set.has(x.s1) && x.d1 === x.d2 \
             && x.e1 === x.e2 && x.r1 === x.r2 && x.a1 === x.a2 && x.s1.n === 1",
        );
    }

    #[test]
    fn wrapped_primitives_travel_as_primitives() {
        assert_eq!(
            describe("[new Number(3), new String('s'), Object(2n), new Boolean(false)]"),
            Value::Array(vec![
                Some(number(3.0)),
                Some(Value::String("s".into())),
                Some(Value::BigInt("2".into())),
                Some(Value::Bool(false)),
            ])
        );
    }

    #[test]
    fn describe_mode_replaces_uncloneable_parts_by_their_inspect_string() {
        assert_eq!(
            describe(
                "({ f: function named() {}, s: Symbol('q'), p: new Proxy({ a: 1 }, {}), \
                   w: new WeakMap(), pr: Promise.resolve(1), ok: 1 })"
            ),
            Value::Object(vec![
                ("f".into(), Value::Uncloneable("[Function: named]".into())),
                ("s".into(), Value::Uncloneable("Symbol(q)".into())),
                ("p".into(), Value::Uncloneable("{ a: 1 }".into())),
                (
                    "w".into(),
                    Value::Uncloneable("WeakMap { <items unknown> }".into())
                ),
                ("pr".into(), Value::Uncloneable("Promise { 1 }".into())),
                ("ok".into(), number(1.0)),
            ])
        );
        assert_eq!(
            describe("() => 1"),
            Value::Uncloneable("[Function (anonymous)]".into())
        );
    }

    #[test]
    fn uncloneable_becomes_a_string_in_the_sandbox() {
        check(
            &Value::Uncloneable("[Function: f]".into()),
            "x === '[Function: f]'",
        );
    }

    #[test]
    fn refuse_mode_names_the_path() {
        let cases = [
            ("({ cfg: { onDone() {} } })", "x.cfg.onDone", "a function"),
            ("[1, [2, () => 1]]", "x[1][1]", "a function"),
            ("({ 'a-b': Symbol('s') })", "x[\"a-b\"]", "a symbol"),
            ("new Map([['k', () => 1]])", "x.get('k')", "a function"),
            ("new Map([[() => 1, 'v']])", "x.keys()[0]", "a function"),
            ("new Set([1, Symbol()])", "x.values()[1]", "a symbol"),
            ("({ p: new Proxy({}, {}) })", "x.p", "a Proxy"),
            ("({ w: new WeakMap() })", "x.w", "a WeakMap"),
            ("({ w: new WeakSet() })", "x.w", "a WeakSet"),
            ("[Promise.resolve()]", "x[0]", "a Promise"),
            (
                "({ v: new DataView(new ArrayBuffer(1)) })",
                "x.v",
                "a DataView",
            ),
            ("({ h: new Float16Array(1) })", "x.h", "a Float16Array"),
            (
                "(function () { return { args: arguments }; })()",
                "x.args",
                "an Arguments",
            ),
            ("Symbol.iterator", "x", "a symbol"),
        ];
        for (src, path, what) in cases {
            let error = refuse(src);
            assert_eq!(
                (error.path.as_str(), error.what.as_str()),
                (path, what),
                "{src}"
            );
        }
        let error = refuse("({ a: { '': [{ 'key with space': class {} }] } })");
        assert_eq!(error.path, "x.a[\"\"][0][\"key with space\"]");
        assert_eq!(
            error.to_string(),
            "x.a[\"\"][0][\"key with space\"] is a function, which cannot be copied \
             (values cross as structured clones)"
        );
    }

    #[test]
    fn refuse_mode_copies_what_it_can() {
        assert_eq!(
            copy("({ a: [1, { b: 'c' }] })", Uncopyable::Refuse),
            Ok(Value::Object(vec![(
                "a".into(),
                Value::Array(vec![
                    Some(number(1.0)),
                    Some(Value::Object(vec![("b".into(), Value::String("c".into()))]))
                ])
            )]))
        );
    }

    #[test]
    fn throwing_getters_are_reported_not_raised() {
        let src = "({ get bad() { throw new Error('nope'); }, ok: 1 })";
        assert_eq!(
            describe(src),
            Value::Object(vec![
                (
                    "bad".into(),
                    Value::Uncloneable("[Thrown: Error: nope]".into())
                ),
                ("ok".into(), number(1.0)),
            ])
        );
        let error = refuse(src);
        assert_eq!(error.path, "x.bad");
        assert_eq!(error.what, "unreadable (reading it threw Error: nope)");
        // A getter that deletes a later property: the property is skipped, as structured clone.
        assert_eq!(
            describe("({ get a() { delete this.b; return 1; }, b: 2 })"),
            Value::Object(vec![("a".into(), number(1.0))])
        );
    }

    #[test]
    fn tampered_builtins_are_not_used() {
        with_sandbox(|ctx| {
            let value = eval(
                ctx,
                "(() => {
                    globalThis.Originals = { Map, Set, Date, RegExp, Error, TypeError, EvalError };
                    const shared = { n: 1 };
                    const out = {
                        d: new Date(5), m: new Map([[1, shared]]), s: new Set([shared]),
                        a: [1, [2]], r: /x/g, e: new TypeError('t'), ev: new EvalError('ev'),
                        b: 2n ** 70n, u8: new Uint8Array([1, 2]),
                    };
                    const boom = (what) => function () { throw new Error(what); };
                    const names = ['Map', 'Set', 'Date', 'RegExp', 'Error', 'TypeError',
                                        'EvalError', 'BigInt', 'Array', 'Object', 'Uint8Array',
                                        'ArrayBuffer'];
                    Array.from = boom('Array.from');
                    Object.keys = boom('Object.keys');
                    Object.entries = boom('Object.entries');
                    Map.prototype.entries = boom('Map.prototype.entries');
                    Map.prototype.forEach = boom('Map.prototype.forEach');
                    Set.prototype.values = boom('Set.prototype.values');
                    Date.prototype.getTime = boom('Date.prototype.getTime');
                    Array.prototype[Symbol.iterator] = boom('Array iterator');
                    Array.prototype.push = boom('push');
                    Object.defineProperty(Object.prototype, 'n', { set: boom('setter n') });
                    Object.defineProperty(Array.prototype, '0', { set: boom('setter 0') });
                    for (let i = 0; i < names.length; i++) globalThis[names[i]] = boom(names[i]);
                    return out;
                })()",
            );
            let copied =
                to_value(ctx, &value, Uncopyable::Refuse, "x").expect("copied despite tampering");
            assert!(!ctx.has_exception());
            let Value::Object(entries) = &copied else {
                panic!("{copied:?}")
            };
            assert_eq!(entries[0], ("d".into(), Value::Date(5.0)));
            // EvalError has no C API and no intrinsic prototype to find it by: with its global
            // gone, it arrives as an Error that keeps the name.
            check_in(
                ctx,
                &copied,
                "const O = Originals; \
                 x.d instanceof O.Date && O.Date.prototype.valueOf.call(x.d) === 5 \
                 && x.m instanceof O.Map && x.m.get(1).n === 1 && x.s.has(x.m.get(1)) \
                 && x.s instanceof O.Set && x.a[1][0] === 2 && x.a.length === 2 \
                 && x.r instanceof O.RegExp && x.r.flags === 'g' \
                 && x.e instanceof O.TypeError && x.e.message === 't' \
                 && x.ev instanceof O.Error && x.ev.name === 'EvalError' && x.ev.message === 'ev' \
                 && x.b === 2n ** 70n && x.u8[1] === 2",
            );
        });
    }

    #[test]
    fn replaced_constructors_are_refused_not_trusted() {
        with_sandbox(|ctx| {
            eval(
                ctx,
                "globalThis.Originals = { add: Set.prototype.add }; \
                 Object.defineProperty(Map.prototype, 'constructor', { value: Math.max }); \
                 Map = Math.max;",
            );
            let rebuilt = from_value(ctx, &Value::Map(vec![]));
            assert!(rebuilt.is_err());
            let _ = ctx.catch();
            // Adding entries needs the engine's own `add`; a replaced one is never called.
            eval(
                ctx,
                "Set.prototype.add = () => { globalThis.called = true; };",
            );
            assert!(from_value(ctx, &Value::Set(vec![number(1.0)])).is_err());
            let _ = ctx.catch();
            let called: bool = ctx.eval("'called' in globalThis").unwrap();
            assert!(!called);
            eval(
                ctx,
                "delete Set.prototype.add; Set.prototype.add = Originals.add;",
            );
            // Other kinds are unaffected.
            check_in(ctx, &Value::Set(vec![number(1.0)]), "x.has(1)");
        });
    }

    #[test]
    fn nesting_up_to_the_limit_is_copied() {
        let src = format!(
            "(() => {{ let o = {{}}; for (let i = 1; i < {MAX_DEPTH}; i++) o = {{ a: o }}; return o; }})()"
        );
        let mut copied = &describe(&src);
        let mut levels = 1;
        while let Value::Object(entries) = copied {
            match entries.first() {
                Some((_, inner)) => {
                    copied = inner;
                    levels += 1;
                }
                None => break,
            }
        }
        assert_eq!(levels, MAX_DEPTH);
        assert_eq!(copied, &Value::Object(vec![]));
    }

    #[test]
    fn nesting_beyond_the_limit_is_cut() {
        let src =
            "(() => { let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return o; })()";
        let value = describe(src);
        let mut copied = &value;
        let mut levels = 0;
        while let Value::Object(entries) = copied {
            copied = &entries[0].1;
            levels += 1;
        }
        assert_eq!(levels, MAX_DEPTH);
        assert_eq!(
            copied,
            &Value::Uncloneable("{ a: { a: { a: [Object] } } }".into())
        );
        check(&value, "typeof x.a.a.a === 'object'");

        let error = refuse(src);
        assert_eq!(error.what, "too deeply nested");
        assert_eq!(error.path, format!("x{}", ".a".repeat(MAX_DEPTH)));

        let arrays =
            "(() => { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a; })()";
        assert_eq!(refuse(arrays).path, format!("x{}", "[0]".repeat(MAX_DEPTH)));
    }

    #[test]
    fn too_deep_values_are_not_rebuilt() {
        let mut value = Value::Null;
        for _ in 0..=MAX_DEPTH + 1 {
            value = Value::Array(vec![Some(value)]);
        }
        with_sandbox(|ctx| {
            assert!(from_value(ctx, &value).is_err());
            let _ = ctx.catch();
        });
    }

    #[test]
    fn huge_sparse_arrays_are_not_copied() {
        assert_eq!(
            describe("new Array(2 ** 32 - 1)"),
            Value::Uncloneable("[ <4294967295 empty items> ]".into())
        );
        assert_eq!(
            refuse("({ big: new Array(2 ** 32 - 1) })").what,
            "an array too long to copy (4294967295 items)"
        );
        let error = refuse("[(() => { const a = [1]; a[4_000_000] = 2; return a; })()]");
        assert_eq!(
            (error.path.as_str(), error.what.as_str()),
            ("x[0]", "an array with too many holes to copy")
        );
    }

    #[test]
    fn objects_numbered_inside_a_dropped_array_are_copied_again() {
        let copied = describe(
            "(() => { const s = { k: 1 }; const a = [s]; a[4_000_000] = 2; return [a, s, s]; })()",
        );
        let Value::Array(items) = &copied else {
            panic!("{copied:?}")
        };
        assert!(matches!(&items[0], Some(Value::Uncloneable(_))));
        assert_eq!(
            items[1],
            Some(Value::Object(vec![("k".into(), number(1.0))]))
        );
        assert_eq!(items[2], Some(Value::Ref(1)));
        check(&copied, "x[1] === x[2] && x[1].k === 1");
    }

    #[test]
    fn large_dense_arrays_and_buffers_are_copied() {
        let copied = describe("new Array(1_000_000).fill(7)");
        assert!(matches!(&copied, Value::Array(items) if items.len() == 1_000_000));
        check(&copied, "x.length === 1e6 && x[999_999] === 7");
        let copied = describe("new Uint8Array(10_000_000).fill(3)");
        check(&copied, "x.length === 1e7 && x[9_999_999] === 3");
    }

    #[test]
    fn malformed_copies_throw_instead_of_panicking() {
        let cases = [
            Value::Ref(0),
            Value::Array(vec![Some(Value::Ref(5))]),
            Value::TypedArray {
                kind: TypedArrayKind::Uint8,
                buffer: Box::new(number(1.0)),
                byte_offset: 0,
                length: 0,
            },
            Value::TypedArray {
                kind: TypedArrayKind::Uint8,
                buffer: Box::new(Value::Ref(0)),
                byte_offset: 0,
                length: 0,
            },
            Value::TypedArray {
                kind: TypedArrayKind::Uint32,
                buffer: Box::new(Value::ArrayBuffer(vec![0; 8])),
                byte_offset: 1,
                length: 1,
            },
            Value::TypedArray {
                kind: TypedArrayKind::Float64,
                buffer: Box::new(Value::ArrayBuffer(vec![0; 8])),
                byte_offset: 0,
                length: usize::MAX,
            },
            Value::RegExp {
                source: "(".into(),
                flags: String::new(),
            },
            Value::RegExp {
                source: "a".into(),
                flags: "gg".into(),
            },
        ];
        with_sandbox(|ctx| {
            for case in &cases {
                assert!(from_value(ctx, case).is_err(), "{case:?}");
                let _ = ctx.catch();
            }
        });
    }

    #[test]
    fn refs_into_typed_arrays_and_maps_rebuild() {
        // Value graphs the host builds number the same way.
        check(
            &Value::Array(vec![
                Some(Value::TypedArray {
                    kind: TypedArrayKind::Int16,
                    buffer: Box::new(Value::ArrayBuffer(vec![1, 0, 2, 0])),
                    byte_offset: 2,
                    length: 1,
                }),
                Some(Value::Ref(1)),
                Some(Value::Ref(2)),
            ]),
            "x[0] === x[1] && x[2] === x[0].buffer && x[0][0] === 2",
        );
    }

    #[test]
    fn built_ins_at_the_depth_limit_are_copied_both_ways() {
        // Copying calls the engine's own functions at every depth, which QuickJS checks against
        // its stack limit: the walk must not spend that stack on nesting.
        let src = format!(
            "(() => {{
                let o = {{ d: new Date(7), m: new Map([[1, /r/g]]), s: new Set([2n ** 70n]) }};
                for (let i = 3; i < {MAX_DEPTH}; i++) o = [o];
                return o;
            }})()"
        );
        let copied = with_sandbox(|ctx| to_value(ctx, &eval(ctx, &src), Uncopyable::Refuse, "x"))
            .expect("copied");
        let mut innermost = &copied;
        while let Value::Array(items) = innermost {
            innermost = items[0].as_ref().expect("no holes");
        }
        assert!(
            matches!(innermost, Value::Object(entries) if entries[0].1 == Value::Date(7.0)),
            "{innermost:?}"
        );
        with_sandbox(|ctx| {
            let path = "x".to_string() + &"[0]".repeat(MAX_DEPTH - 3);
            check_in(
                ctx,
                &copied,
                &format!(
                    "const o = {path}; o.d.getTime() === 7 && o.m.get(1).flags === 'g' \
                     && o.s.has(2n ** 70n)"
                ),
            );
        });
    }
}
