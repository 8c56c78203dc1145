//! Checkpoints: a session's state at rest as an [`Image`] (`crate::session::image`), and a fresh
//! context brought to it.
//!
//! [`capture`] first proves that every built-in is as a fresh context has it ([`Builtins::
//! compare`]), then walks what the session made — the global object's own properties past the
//! built-in ones and the global lexical bindings — object by object, reading each without running
//! anything (own properties as descriptors, a Map's entries through the engine's own iterator). It
//! gives up, and the journal stays the session's record, on anything an image cannot hold
//! exactly: a function or class the session made (closures, bound functions), a Proxy, a promise,
//! a generator or iterator, a weak collection or reference, a canvas, a resizable, shared or
//! detached buffer, a class's private fields, a string with a lone surrogate. [`apply`] makes the
//! objects, then fills them (prototype, properties in order, entries, extensibility last), so
//! cycles and shared references come back as they were.

use std::collections::{HashMap, VecDeque};

use rquickjs::function::This;
use rquickjs::{Ctx, Function, Value};

use super::builtins::{address, exact_string, name_of, Builtins, Matched};
use crate::engine::quickjs::reflect::{
    self, class_id, typed_array_kind, NativeError, Reflect, CLASS_ARRAY, CLASS_ARRAY_BUFFER,
    CLASS_BIG_INT, CLASS_BOOLEAN, CLASS_DATAVIEW, CLASS_DATE, CLASS_ERROR, CLASS_MAP, CLASS_NUMBER,
    CLASS_OBJECT, CLASS_REGEXP, CLASS_SET, CLASS_STRING, CLASS_SYMBOL,
};
use crate::engine::quickjs::session::{self as raw, Atom, ACCESSOR, WRITABLE};
use crate::engine::values::convert::from_value;
use crate::session::image::{
    self, attributes, Image, Key, Kind, Lexical, Node, Property, PropertyValue, Slot,
};
use crate::tools::ToolSpec;
use crate::value::Value as Copy;

/// What a checkpoint keeps beside the heap: the values code can observe that live outside it.
#[derive(Debug, Clone, Copy)]
pub(in crate::engine) struct Outside {
    pub random_state: u64,
    pub time_origin: f64,
    pub performance_now: f64,
    pub timer_sequence: u64,
    pub timer_last_id: u32,
}

/// The state of the session in `ctx` as an image, or why it cannot be one.
pub(in crate::engine) fn capture<'js>(
    ctx: &Ctx<'js>,
    builtins: &Builtins,
    tools: Vec<ToolSpec>,
    outside: Outside,
) -> Result<Image, String> {
    let matched = builtins.compare(ctx)?;
    let globals = ctx.globals().into_value();
    let mut tool_functions = HashMap::new();
    for tool in &tools {
        let atom = Atom::of(
            ctx,
            &rquickjs::String::from_str(ctx.clone(), &tool.name)
                .map_err(|_| "no memory")?
                .into_value(),
        )
        .ok_or("no memory")?;
        if let Some(own) = raw::own(ctx, &globals, &atom) {
            if own.value.is_object() {
                tool_functions.insert(address(&own.value), tool.name.clone());
            }
        }
    }
    let mut walk = Capture::new(ctx, &matched, tool_functions)?;
    let mut globals_kept = Vec::new();
    for slot in &matched.extra_globals {
        let own = raw::own(ctx, &globals, &slot.atom).ok_or("a global cannot be read")?;
        // A tool's global is made again from the image's tools.
        if own.flags & ACCESSOR == 0 {
            if let Some(tool) = walk
                .tools
                .get(&address(&own.value))
                .filter(|_| own.value.is_object())
            {
                if name_of(ctx, &slot.atom) == Some(super::builtins::Name::String(tool.clone())) {
                    continue;
                }
            }
        }
        globals_kept.push(walk.property(&slot.atom, own)?);
    }
    let lexical_object = raw::global_lexicals(ctx);
    let mut lexicals = Vec::new();
    for slot in raw::shape(ctx, &lexical_object) {
        let name = match name_of(ctx, &slot.atom) {
            Some(super::builtins::Name::String(name)) => name,
            _ => return Err("a global binding has no plain name".into()),
        };
        let own =
            raw::own(ctx, &lexical_object, &slot.atom).ok_or("a global binding cannot be read")?;
        let value = if raw::is_uninitialized(&own.value) {
            None
        } else {
            Some(walk.slot(own.value)?)
        };
        lexicals.push(Lexical {
            name,
            constant: own.flags & WRITABLE == 0,
            value,
        });
    }
    let nodes = walk.finish()?;
    Ok(Image {
        random_state: outside.random_state,
        time_origin: outside.time_origin,
        performance_now: outside.performance_now,
        timer_sequence: outside.timer_sequence,
        timer_last_id: outside.timer_last_id,
        tools,
        symbols: walk.symbols,
        nodes,
        globals: globals_kept,
        lexicals,
    })
}

/// The walk of what a session made.
struct Capture<'a, 'js> {
    ctx: &'a Ctx<'js>,
    reflect: Reflect<'a, 'js>,
    matched: &'a Matched<'js>,
    tools: HashMap<usize, String>,
    /// The well-known symbols, by the atom of each.
    well_known: HashMap<u32, String>,
    key_for: Function<'js>,
    symbols: Vec<image::Symbol>,
    symbol_numbers: HashMap<u32, u32>,
    /// Keeps the atoms of the symbols met alive (and so their numbers unique).
    symbol_atoms: Vec<Atom<'js>>,
    objects: Vec<Value<'js>>,
    numbers: HashMap<usize, u32>,
    queue: VecDeque<u32>,
}

impl<'a, 'js> Capture<'a, 'js> {
    fn new(
        ctx: &'a Ctx<'js>,
        matched: &'a Matched<'js>,
        tools: HashMap<usize, String>,
    ) -> Result<Self, String> {
        // The built-ins are a fresh context's (compared above): `Symbol` and its functions are
        // the engine's own.
        let symbol = global(ctx, "Symbol")?;
        let mut well_known = HashMap::new();
        let mut key_for = None;
        for slot in raw::shape(ctx, &symbol) {
            let Some(own) = raw::own(ctx, &symbol, &slot.atom) else {
                continue;
            };
            match name_of(ctx, &slot.atom) {
                Some(super::builtins::Name::String(name)) if own.value.is_symbol() => {
                    let atom = Atom::of(ctx, &own.value).ok_or("no memory")?;
                    well_known.insert(atom.raw_id(), name);
                }
                Some(super::builtins::Name::String(name)) if name == "keyFor" => {
                    key_for = own.value.into_function();
                }
                _ => {}
            }
        }
        Ok(Self {
            ctx,
            reflect: Reflect::new(ctx),
            matched,
            tools,
            well_known,
            key_for: key_for.ok_or("Symbol.keyFor is missing")?,
            symbols: Vec::new(),
            symbol_numbers: HashMap::new(),
            symbol_atoms: Vec::new(),
            objects: Vec::new(),
            numbers: HashMap::new(),
            queue: VecDeque::new(),
        })
    }

    /// A value as the image holds it; an object the session made is numbered and queued.
    fn slot(&mut self, value: Value<'js>) -> Result<Slot, String> {
        if value.is_undefined() {
            return Ok(Slot::Undefined);
        }
        if value.is_null() {
            return Ok(Slot::Null);
        }
        if let Some(bool) = value.as_bool() {
            return Ok(Slot::Bool(bool));
        }
        if let Some(number) = value.as_number() {
            return Ok(Slot::Number(number));
        }
        if value.is_string() {
            return exact_string(self.ctx, &value)
                .map(Slot::String)
                .ok_or_else(|| "a string with a lone surrogate".into());
        }
        if value.is_big_int() {
            return match crate::engine::values::convert::to_value(
                self.ctx,
                &value,
                crate::engine::values::convert::Uncopyable::Refuse,
                "a BigInt",
                u64::MAX,
            ) {
                Ok(Copy::BigInt(digits)) => Ok(Slot::BigInt(digits)),
                _ => Err("a BigInt that cannot be read".into()),
            };
        }
        if value.is_symbol() {
            return self.symbol(&value).map(Slot::Symbol);
        }
        if !value.is_object() {
            return Err(format!("a value of type {}", value.type_name()));
        }
        if let Some(node) = self.matched.node_of(&value) {
            return Ok(Slot::Intrinsic(node));
        }
        if let Some(tool) = self.tools.get(&address(&value)) {
            return Ok(Slot::Tool(tool.clone()));
        }
        if let Some(&number) = self.numbers.get(&address(&value)) {
            return Ok(Slot::Object(number));
        }
        let number = u32::try_from(self.objects.len()).map_err(|_| "too many objects")?;
        self.numbers.insert(address(&value), number);
        self.objects.push(value);
        self.queue.push_back(number);
        Ok(Slot::Object(number))
    }

    fn symbol(&mut self, symbol: &Value<'js>) -> Result<u32, String> {
        let atom = Atom::of(self.ctx, symbol).ok_or("no memory")?;
        if let Some(&number) = self.symbol_numbers.get(&atom.raw_id()) {
            return Ok(number);
        }
        let kind = if let Some(name) = self.well_known.get(&atom.raw_id()) {
            image::Symbol::WellKnown(name.clone())
        } else {
            let key: Value<'js> = self
                .key_for
                .call((This(Value::new_undefined(self.ctx.clone())), symbol.clone()))
                .map_err(|_| {
                    let _ = self.ctx.catch();
                    "a symbol cannot be read"
                })?;
            if key.is_string() {
                image::Symbol::Registered(
                    exact_string(self.ctx, &key).ok_or("a symbol's key has a lone surrogate")?,
                )
            } else {
                let units = reflect::symbol_to_string_units(self.ctx, symbol);
                let shown = String::from_utf16(&units)
                    .map_err(|_| "a symbol's description has a lone surrogate")?;
                // `Symbol(x)` reads back as `Symbol(x)`; a symbol without a description has none.
                let description = symbol
                    .as_symbol()
                    .and_then(|symbol| symbol.description().ok())
                    .filter(|description| !description.is_undefined())
                    .map(|_| shown["Symbol(".len()..shown.len() - 1].to_owned());
                image::Symbol::Local(description)
            }
        };
        let number = u32::try_from(self.symbols.len()).map_err(|_| "too many symbols")?;
        self.symbols.push(kind);
        self.symbol_numbers.insert(atom.raw_id(), number);
        self.symbol_atoms.push(atom);
        Ok(number)
    }

    fn key(&mut self, atom: &Atom<'js>) -> Result<Key, String> {
        if let Some(index) = atom.index() {
            return Ok(Key::Index(index));
        }
        let key = atom.key().ok_or("no memory")?;
        if key.is_symbol() {
            Ok(Key::Symbol(self.symbol(&key)?))
        } else {
            exact_string(self.ctx, &key)
                .map(Key::String)
                .ok_or_else(|| "a property name with a lone surrogate".into())
        }
    }

    fn property(&mut self, atom: &Atom<'js>, own: raw::Own<'js>) -> Result<Property, String> {
        let key = self.key(atom)?;
        let value = if own.flags & ACCESSOR != 0 {
            PropertyValue::Accessor(self.slot(own.getter)?, self.slot(own.setter)?)
        } else {
            PropertyValue::Data(self.slot(own.value)?)
        };
        Ok(Property {
            key,
            attributes: own.flags & attributes::ALL,
            value,
        })
    }

    /// Describes every object met, in the order they were numbered.
    fn finish(&mut self) -> Result<Vec<Node>, String> {
        let mut nodes = Vec::new();
        while let Some(number) = self.queue.pop_front() {
            let object = self.objects[number as usize].clone();
            nodes.push(self.node(&object)?);
        }
        Ok(nodes)
    }

    fn node(&mut self, object: &Value<'js>) -> Result<Node, String> {
        let class = class_id(object);
        let reflect = self.reflect;
        let kind = match class {
            CLASS_OBJECT => Kind::Object,
            CLASS_ARRAY => Kind::Array,
            CLASS_ERROR => Kind::Error,
            CLASS_DATE => Kind::Date(
                reflect
                    .call_native(CLASS_DATE, "getTime", false, object)
                    .and_then(|time| time.as_number())
                    .ok_or("a Date cannot be read")?,
            ),
            CLASS_REGEXP => {
                let (source, flags) = reflect
                    .regexp_parts(object)
                    .ok_or("a RegExp cannot be read")?;
                Kind::RegExp { source, flags }
            }
            CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT | CLASS_SYMBOL => {
                let inner = reflect
                    .call_native(class, "valueOf", false, object)
                    .ok_or("a wrapped primitive cannot be read")?;
                Kind::Boxed(self.slot(inner)?)
            }
            CLASS_MAP | CLASS_SET => {
                let entries = reflect
                    .collection_entries(object, class, usize::MAX)
                    .ok_or("a Map or Set cannot be read")?;
                if class == CLASS_MAP {
                    let mut pairs = Vec::with_capacity(entries.len());
                    for entry in entries {
                        let key = reflect.index_data(&entry, 0);
                        let value = reflect.index_data(&entry, 1);
                        pairs.push((self.slot(key)?, self.slot(value)?));
                    }
                    Kind::Map(pairs)
                } else {
                    let mut items = Vec::with_capacity(entries.len());
                    for item in entries {
                        items.push(self.slot(item)?);
                    }
                    Kind::Set(items)
                }
            }
            CLASS_ARRAY_BUFFER => {
                if getter(self.ctx, CLASS_ARRAY_BUFFER, "resizable", object)?.as_bool()
                    != Some(false)
                {
                    return Err("a resizable ArrayBuffer".into());
                }
                let (_, bytes) = reflect
                    .array_buffer_bytes(object, usize::MAX)
                    .ok_or("a detached ArrayBuffer")?;
                Kind::ArrayBuffer {
                    bytes,
                    max_length: None,
                    detached: false,
                }
            }
            CLASS_DATAVIEW => {
                let read = |name| {
                    reflect
                        .call_native(CLASS_DATAVIEW, name, true, object)
                        .ok_or_else(|| "a DataView cannot be read".to_owned())
                };
                let buffer = read("buffer")?;
                let offset = read("byteOffset")?.as_number().unwrap_or(0.0);
                let length = read("byteLength")?.as_number().unwrap_or(0.0);
                let Slot::Object(buffer) = self.slot(buffer)? else {
                    return Err("a DataView over a buffer that is no session object".into());
                };
                Kind::DataView {
                    buffer,
                    byte_offset: offset as u64,
                    byte_length: Some(length as u64),
                }
            }
            _ => match typed_array_kind(object) {
                Some(kind) => {
                    let (buffer, offset, byte_length, per_element) = reflect
                        .typed_array_buffer(object)
                        .ok_or("a typed array out of its buffer's bounds")?;
                    let Slot::Object(buffer) = self.slot(buffer)? else {
                        return Err("a typed array over a buffer that is no session object".into());
                    };
                    Kind::TypedArray {
                        kind,
                        buffer,
                        byte_offset: offset as u64,
                        length: Some((byte_length / per_element.max(1)) as u64),
                    }
                }
                None => {
                    return Err(format!(
                        "a {} (a kind a checkpoint does not hold)",
                        reflect.internal_constructor_name(object)
                    ))
                }
            },
        };
        if !raw::own_keys(self.ctx, object, true)
            .ok_or("an object's keys cannot be read")?
            .is_empty()
        {
            return Err("an object with private fields".into());
        }
        let prototype = match reflect.proto_of(object) {
            Some(proto) => self.slot(proto)?,
            None => Slot::Null,
        };
        let extensible = raw::is_extensible(self.ctx, object)
            .ok_or("an object's extensibility cannot be read")?;
        // A typed array's elements are its buffer's bytes, which the buffer keeps exactly (a
        // NaN written back through an element could change its bits).
        let elements = matches!(kind, Kind::TypedArray { .. });
        let mut properties = Vec::new();
        for atom in
            raw::own_keys(self.ctx, object, false).ok_or("an object's keys cannot be read")?
        {
            if elements && atom.is_index() {
                continue;
            }
            let own = raw::own(self.ctx, object, &atom).ok_or("a property cannot be read")?;
            properties.push(self.property(&atom, own)?);
        }
        Ok(Node {
            kind,
            prototype,
            extensible,
            properties,
        })
    }
}

/// The engine's getter `name` of `class`'s prototype, called on `this` (the built-ins were
/// compared: it is the engine's own).
fn getter<'js>(
    ctx: &Ctx<'js>,
    class: u32,
    name: &str,
    this: &Value<'js>,
) -> Result<Value<'js>, String> {
    let proto = Reflect::new(ctx)
        .class_proto(class)
        .ok_or("a built-in is missing")?;
    let atom = Atom::of(
        ctx,
        &rquickjs::String::from_str(ctx.clone(), name)
            .map_err(|_| "no memory")?
            .into_value(),
    )
    .ok_or("no memory")?;
    let own = raw::own(ctx, &proto, &atom).ok_or("a built-in is missing")?;
    let function = own.getter.into_function().ok_or("a built-in is missing")?;
    function.call((This(this.clone()),)).map_err(|_| {
        let _ = ctx.catch();
        format!("{name} cannot be read")
    })
}

/// The global `name` of a context whose built-ins are a fresh context's.
fn global<'js>(ctx: &Ctx<'js>, name: &str) -> Result<Value<'js>, String> {
    let atom = Atom::of(
        ctx,
        &rquickjs::String::from_str(ctx.clone(), name)
            .map_err(|_| "no memory")?
            .into_value(),
    )
    .ok_or("no memory")?;
    raw::own(ctx, &ctx.globals().into_value(), &atom)
        .map(|own| own.value)
        .filter(Value::is_object)
        .ok_or_else(|| format!("the global {name} is missing"))
}

/// Brings `ctx` (a fresh context, with the image's tools installed) to the state of `image`.
/// `Err` says what in the image could not be made (a tampered image, or no memory).
pub(in crate::engine) fn apply<'js>(
    ctx: &Ctx<'js>,
    builtins: &Builtins,
    image: &Image,
) -> Result<(), String> {
    let reflect = Reflect::new(ctx);
    let mut found = HashMap::new();
    let mut symbols = Vec::with_capacity(image.symbols.len());
    let symbol = global(ctx, "Symbol")?;
    let symbol_function = symbol
        .clone()
        .into_function()
        .ok_or("Symbol is no function")?;
    for kind in &image.symbols {
        let made: Value<'js> = match kind {
            image::Symbol::Local(Some(description)) => {
                symbol_function.call((description.as_str(),))
            }
            image::Symbol::Local(None) => symbol_function.call(()),
            image::Symbol::Registered(key) => {
                let register = member(ctx, &symbol, "for")?
                    .into_function()
                    .ok_or("Symbol.for is missing")?;
                register.call((This(symbol.clone()), key.as_str()))
            }
            image::Symbol::WellKnown(name) => Ok(member(ctx, &symbol, name)?),
        }
        .map_err(|_| {
            let _ = ctx.catch();
            "a symbol cannot be made".to_owned()
        })?;
        if !made.is_symbol() {
            return Err(format!("{kind:?} is no symbol"));
        }
        symbols.push(made);
    }
    let mut objects: Vec<Option<Value<'js>>> = vec![None; image.nodes.len()];
    let construct = |name: &str, args: Vec<Value<'js>>| -> Result<Value<'js>, String> {
        let constructor = global(ctx, name)?
            .into_constructor()
            .ok_or_else(|| format!("{name} is no constructor"))?;
        constructor
            .construct::<_, Value<'js>>((rquickjs::function::Rest(args),))
            .map_err(|_| {
                let _ = ctx.catch();
                format!("a {name} cannot be made from the image")
            })
    };
    // Buffers and everything else first, views once their buffers exist.
    for views in [false, true] {
        for (number, node) in image.nodes.iter().enumerate() {
            let is_view = matches!(node.kind, Kind::TypedArray { .. } | Kind::DataView { .. });
            if is_view != views {
                continue;
            }
            let buffer = |index: u32| -> Result<Value<'js>, String> {
                objects
                    .get(index as usize)
                    .cloned()
                    .flatten()
                    .filter(|buffer| class_id(buffer) == CLASS_ARRAY_BUFFER)
                    .ok_or_else(|| "a view over something that is no buffer".into())
            };
            let made = match &node.kind {
                Kind::Object => rquickjs::Object::new(ctx.clone())
                    .map(|object| object.into_value())
                    .map_err(|_| "no memory".to_owned())?,
                Kind::Array => rquickjs::Array::new(ctx.clone())
                    .map(|array| array.into_value())
                    .map_err(|_| "no memory".to_owned())?,
                Kind::Error => {
                    let error = reflect.new_error(NativeError::Error).ok_or("no memory")?;
                    for atom in raw::own_keys(ctx, &error, false).ok_or("no memory")? {
                        delete(ctx, &error, &atom)?;
                    }
                    error
                }
                Kind::Date(time) => reflect.new_date(*time).ok_or("no memory")?,
                Kind::RegExp { source, flags } => {
                    let text = |text: &str| {
                        rquickjs::String::from_str(ctx.clone(), text)
                            .map(|s| s.into_value())
                            .map_err(|_| "no memory".to_owned())
                    };
                    construct("RegExp", vec![text(source)?, text(flags)?])?
                }
                Kind::Boxed(inner) => {
                    let inner = value_of(ctx, builtins, &mut found, &symbols, &objects, inner)?;
                    // `Object(o)` is `o` itself: a forged image would get a built-in (or one of
                    // its own objects) to change under another node's number.
                    if inner.is_object() {
                        return Err("a wrapper around an object".into());
                    }
                    let object = global(ctx, "Object")?
                        .into_function()
                        .ok_or("Object is no function")?;
                    object.call((inner,)).map_err(|_| {
                        let _ = ctx.catch();
                        "a wrapped primitive cannot be made".to_owned()
                    })?
                }
                Kind::Map(_) => construct("Map", Vec::new())?,
                Kind::Set(_) => construct("Set", Vec::new())?,
                Kind::ArrayBuffer {
                    bytes,
                    max_length,
                    detached,
                } => {
                    if max_length.is_some() || *detached {
                        return Err("a resizable or detached buffer in the image".into());
                    }
                    rquickjs::ArrayBuffer::new_copy(ctx.clone(), bytes)
                        .map(|buffer| buffer.into_value())
                        .map_err(|_| "no memory".to_owned())?
                }
                Kind::TypedArray {
                    kind,
                    buffer: index,
                    byte_offset,
                    length,
                } => {
                    let length = length.ok_or("a view tracking its buffer's length")?;
                    let (offset, length) = (
                        usize::try_from(*byte_offset).map_err(|_| "a view past its buffer")?,
                        usize::try_from(length).map_err(|_| "a view past its buffer")?,
                    );
                    reflect
                        .new_typed_array(*kind, &buffer(*index)?, offset, length)
                        .ok_or_else(|| {
                            let _ = ctx.catch();
                            "a typed array the image places outside its buffer".to_owned()
                        })?
                }
                Kind::DataView {
                    buffer: index,
                    byte_offset,
                    byte_length,
                } => {
                    let length = byte_length.ok_or("a view tracking its buffer's length")?;
                    construct(
                        "DataView",
                        vec![
                            buffer(*index)?,
                            Value::new_number(ctx.clone(), *byte_offset as f64),
                            Value::new_number(ctx.clone(), length as f64),
                        ],
                    )?
                }
            };
            objects[number] = Some(made);
        }
    }
    for (number, node) in image.nodes.iter().enumerate() {
        let object = objects[number]
            .clone()
            .ok_or("an object the image does not make")?;
        let prototype = value_of(
            ctx,
            builtins,
            &mut found,
            &symbols,
            &objects,
            &node.prototype,
        )?;
        if !(prototype.is_null() || prototype.is_object())
            || !raw::set_prototype(ctx, &object, &prototype)
        {
            return Err("an object's prototype cannot be set".into());
        }
        define_all(
            ctx,
            builtins,
            &mut found,
            &symbols,
            &objects,
            &object,
            &node.properties,
        )?;
        match &node.kind {
            Kind::Map(entries) => {
                let set = reflect
                    .native_fn(CLASS_MAP, "set", false)
                    .ok_or("Map.prototype.set is missing")?;
                for (key, value) in entries {
                    let key = value_of(ctx, builtins, &mut found, &symbols, &objects, key)?;
                    let value = value_of(ctx, builtins, &mut found, &symbols, &objects, value)?;
                    call(ctx, &set, &object, vec![key, value])?;
                }
            }
            Kind::Set(items) => {
                let add = reflect
                    .native_fn(CLASS_SET, "add", false)
                    .ok_or("Set.prototype.add is missing")?;
                for item in items {
                    let item = value_of(ctx, builtins, &mut found, &symbols, &objects, item)?;
                    call(ctx, &add, &object, vec![item])?;
                }
            }
            _ => {}
        }
    }
    // Last, so that nothing above is refused by an object made non-extensible too early.
    for (number, node) in image.nodes.iter().enumerate() {
        if !node.extensible {
            let object = objects[number]
                .clone()
                .ok_or("an object the image does not make")?;
            if !raw::prevent_extensions(ctx, &object) {
                return Err("an object cannot be made non-extensible".into());
            }
        }
    }
    let globals = ctx.globals().into_value();
    define_all(
        ctx,
        builtins,
        &mut found,
        &symbols,
        &objects,
        &globals,
        &image.globals,
    )?;
    let lexical_object = raw::global_lexicals(ctx);
    for lexical in &image.lexicals {
        let name = rquickjs::String::from_str(ctx.clone(), &lexical.name)
            .map_err(|_| "no memory")?
            .into_value();
        let atom = Atom::of(ctx, &name).ok_or("no memory")?;
        let value = match &lexical.value {
            Some(slot) => value_of(ctx, builtins, &mut found, &symbols, &objects, slot)?,
            None => raw::uninitialized(ctx),
        };
        let flags = attributes::CONFIGURABLE
            | attributes::ENUMERABLE
            | if lexical.constant {
                0
            } else {
                attributes::WRITABLE
            };
        let undefined = Value::new_undefined(ctx.clone());
        if !raw::define(
            ctx,
            &lexical_object,
            &atom,
            flags,
            &value,
            &undefined,
            &undefined,
        ) {
            return Err(format!(
                "the global binding {} cannot be made",
                lexical.name
            ));
        }
    }
    Ok(())
}

fn member<'js>(ctx: &Ctx<'js>, object: &Value<'js>, name: &str) -> Result<Value<'js>, String> {
    let atom = Atom::of(
        ctx,
        &rquickjs::String::from_str(ctx.clone(), name)
            .map_err(|_| "no memory")?
            .into_value(),
    )
    .ok_or("no memory")?;
    raw::own(ctx, object, &atom)
        .map(|own| own.value)
        .ok_or_else(|| format!("{name} is missing"))
}

fn call<'js>(
    ctx: &Ctx<'js>,
    function: &Function<'js>,
    this: &Value<'js>,
    args: Vec<Value<'js>>,
) -> Result<(), String> {
    function
        .call::<_, Value<'js>>((This(this.clone()), rquickjs::function::Rest(args)))
        .map(|_| ())
        .map_err(|_| {
            let _ = ctx.catch();
            "an entry cannot be added".into()
        })
}

fn delete<'js>(ctx: &Ctx<'js>, object: &Value<'js>, atom: &Atom<'js>) -> Result<(), String> {
    let key = atom.key().ok_or("no memory")?;
    let object = object.as_object().ok_or("no object")?;
    object.remove(key).map_err(|_| {
        let _ = ctx.catch();
        "a property cannot be removed".into()
    })
}

/// Defines `properties` on `object`, in order.
fn define_all<'js>(
    ctx: &Ctx<'js>,
    builtins: &Builtins,
    found: &mut HashMap<u32, Value<'js>>,
    symbols: &[Value<'js>],
    objects: &[Option<Value<'js>>],
    object: &Value<'js>,
    properties: &[Property],
) -> Result<(), String> {
    let undefined = Value::new_undefined(ctx.clone());
    for property in properties {
        let atom = match &property.key {
            Key::String(name) => Atom::of(
                ctx,
                &rquickjs::String::from_str(ctx.clone(), name)
                    .map_err(|_| "no memory")?
                    .into_value(),
            ),
            Key::Symbol(number) => Atom::of(
                ctx,
                symbols
                    .get(*number as usize)
                    .ok_or("a key names no symbol of the image")?,
            ),
            Key::Index(index) => Atom::of_index(ctx, *index),
        }
        .ok_or("no memory")?;
        let defined = match &property.value {
            PropertyValue::Data(slot) => {
                let value = value_of(ctx, builtins, found, symbols, objects, slot)?;
                raw::define(
                    ctx,
                    object,
                    &atom,
                    property.attributes & attributes::ALL,
                    &value,
                    &undefined,
                    &undefined,
                )
            }
            PropertyValue::Accessor(get, set) => {
                let get = value_of(ctx, builtins, found, symbols, objects, get)?;
                let set = value_of(ctx, builtins, found, symbols, objects, set)?;
                let callable = |value: &Value<'js>| value.is_undefined() || value.is_function();
                if !callable(&get) || !callable(&set) {
                    return Err("an accessor of something that is no function".into());
                }
                raw::define(
                    ctx,
                    object,
                    &atom,
                    (property.attributes & attributes::ALL & !attributes::WRITABLE) | ACCESSOR,
                    &undefined,
                    &get,
                    &set,
                )
            }
        };
        if !defined {
            return Err("a property the image holds cannot be defined".into());
        }
    }
    Ok(())
}

/// An image's slot as a value of `ctx`.
fn value_of<'js>(
    ctx: &Ctx<'js>,
    builtins: &Builtins,
    found: &mut HashMap<u32, Value<'js>>,
    symbols: &[Value<'js>],
    objects: &[Option<Value<'js>>],
    slot: &Slot,
) -> Result<Value<'js>, String> {
    let copied = |value: Copy| {
        from_value(ctx, &value).map_err(|_| {
            let _ = ctx.catch();
            "a value of the image cannot be made".to_owned()
        })
    };
    match slot {
        Slot::Undefined => Ok(Value::new_undefined(ctx.clone())),
        Slot::Null => Ok(Value::new_null(ctx.clone())),
        Slot::Bool(bool) => Ok(Value::new_bool(ctx.clone(), *bool)),
        // A float always: a whole number would become an int, and -0 lose its sign.
        Slot::Number(number) => Ok(Value::new_float(ctx.clone(), *number)),
        Slot::BigInt(digits) => copied(Copy::BigInt(digits.clone())),
        Slot::String(text) => rquickjs::String::from_str(ctx.clone(), text)
            .map(|string| string.into_value())
            .map_err(|_| {
                let _ = ctx.catch();
                "no memory".to_owned()
            }),
        Slot::Symbol(number) => symbols
            .get(*number as usize)
            .cloned()
            .ok_or_else(|| "a symbol the image does not make".into()),
        Slot::Object(number) => objects
            .get(*number as usize)
            .cloned()
            .flatten()
            .ok_or_else(|| "an object the image does not make".into()),
        Slot::Intrinsic(node) => builtins
            .find(ctx, *node, found)
            .ok_or_else(|| "a built-in this engine does not have".into()),
        Slot::Tool(name) => {
            let tool = global(ctx, name)?;
            if tool.is_function() {
                Ok(tool)
            } else {
                Err(format!("the tool {name} is missing"))
            }
        }
    }
}
