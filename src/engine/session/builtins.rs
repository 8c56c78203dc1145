//! The built-ins of a fresh context, described once per process, against which a checkpoint
//! proves that a session left every built-in as it found it, and by which it names the built-ins
//! its state refers to.
//!
//! The description is a graph of the built-in objects reached from a fresh context's global
//! object and its classes' prototypes, in breadth-first order (the order numbers them, the same
//! in every process of one build): each object's class, extensibility, prototype and own
//! properties (name, attributes, value). [`Builtins::
//! compare`] walks a session's context along it, object for object, without running anything
//! and without making what is still to be made (a group of built-ins the session never touched
//! is as a fresh context has it by definition): any difference — a property added, deleted,
//! reconfigured or holding another value, a prototype changed, an object frozen — and the state
//! is not checkpointed.

use std::collections::{HashMap, VecDeque};

use rquickjs::{Ctx, Value};

use crate::engine::quickjs::reflect::{self, class_id, Chars, Reflect};
pub(in crate::engine) use crate::engine::quickjs::session::address;
use crate::engine::quickjs::session::{self as raw, Atom, ACCESSOR};

/// How a built-in is first reached from the roots.
#[derive(Debug, Clone, Copy)]
enum Edge {
    Global,
    ClassProto(u32),
    /// The value of property number `1` of node `0`.
    Value(u32, u32),
    Getter(u32, u32),
    Setter(u32, u32),
    Proto(u32),
}

/// A value a built-in's property (or prototype) holds.
#[derive(Debug, Clone, PartialEq)]
enum Known {
    Undefined,
    Null,
    Bool(bool),
    /// The bits of a number (NaN made one NaN).
    Number(u64),
    String(String),
    /// A symbol, by its description (built-ins hold only the well-known symbols).
    Symbol(String),
    Node(u32),
    /// Anything else: no session value equals it.
    Unknown,
}

/// A property key as it compares across contexts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(in crate::engine) enum Name {
    String(String),
    Symbol(String),
}

#[derive(Debug)]
struct Prop {
    name: Name,
    /// `raw::CONFIGURABLE | WRITABLE | ENUMERABLE | ACCESSOR`.
    flags: u8,
    /// The value, or the getter of an accessor.
    value: Known,
    setter: Known,
}

#[derive(Debug)]
struct Node {
    reached: Edge,
    class: u32,
    extensible: bool,
    proto: Known,
    props: Vec<Prop>,
}

/// The built-ins of a fresh context made with one set of options.
#[derive(Debug)]
pub(in crate::engine) struct Builtins {
    nodes: Vec<Node>,
    /// The classes' prototypes, by class id and node: a group made on first use may have made
    /// a prototype that no property of the session has led to yet (its global still to be
    /// made), and the prototype leads to the rest of the group.
    class_protos: Vec<(u32, u32)>,
}

/// The session's objects that are built-ins, by node number (see [`Builtins::compare`]).
pub(in crate::engine) struct Matched<'js> {
    objects: Vec<Option<Value<'js>>>,
    by_address: HashMap<usize, u32>,
    /// The global object's own properties past the built-in ones: the session's globals.
    pub extra_globals: Vec<raw::Slot<'js>>,
    /// Nodes mapped and not compared yet.
    fresh: Vec<u32>,
}

impl<'js> Matched<'js> {
    /// The node number of `object` when it is a built-in.
    pub(in crate::engine) fn node_of(&self, object: &Value<'js>) -> Option<u32> {
        self.by_address.get(&address(object)).copied()
    }
}

/// A key's name, or `None` for a string with a lone surrogate (which a name cannot hold).
pub(in crate::engine) fn name_of<'js>(ctx: &Ctx<'js>, atom: &Atom<'js>) -> Option<Name> {
    let key = atom.key()?;
    if key.is_symbol() {
        Some(Name::Symbol(
            String::from_utf16(&reflect::symbol_to_string_units(ctx, &key)).ok()?,
        ))
    } else {
        exact_string(ctx, &key).map(Name::String)
    }
}

/// Whether the key `atom` is `name`: [`name_of`] without making the name (a checkpoint compares
/// every property of every built-in).
fn name_is<'js>(ctx: &Ctx<'js>, atom: &Atom<'js>, name: &Name) -> bool {
    let Some(key) = atom.key() else {
        return false;
    };
    match name {
        Name::String(expected) if !key.is_symbol() => {
            reflect::with_chars(ctx, &key, |chars| match chars {
                Chars::Latin1(bytes) if bytes.is_ascii() => bytes == expected.as_bytes(),
                Chars::Latin1(bytes) => bytes.iter().map(|&b| char::from(b)).eq(expected.chars()),
                // A lone surrogate equals no unit of a Rust string's UTF-16.
                Chars::Utf16(units) => units.iter().copied().eq(expected.encode_utf16()),
            })
            .unwrap_or(false)
        }
        Name::Symbol(_) if key.is_symbol() => name_of(ctx, atom).as_ref() == Some(name),
        _ => false,
    }
}

/// A string value exactly (`None` for a lone surrogate, which UTF-8 cannot hold).
pub(in crate::engine) fn exact_string<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> Option<String> {
    reflect::with_chars(ctx, value, |chars| chars.to_string_exact()).flatten()
}

fn number_bits(number: f64) -> u64 {
    if number.is_nan() {
        f64::NAN.to_bits()
    } else {
        number.to_bits()
    }
}

impl Builtins {
    /// Describes the built-ins of `ctx`, a context made as the engine makes one and touched by
    /// nothing since. Every lazily made group is made on the way.
    pub(in crate::engine) fn describe(ctx: &Ctx<'_>) -> Self {
        let reflect = Reflect::new(ctx);
        let mut walk = Describer {
            ctx,
            nodes: Vec::new(),
            objects: Vec::new(),
            seen: HashMap::new(),
            queue: VecDeque::new(),
        };
        walk.reach(ctx.globals().into_value(), Edge::Global);
        let mut roots_added = false;
        loop {
            let Some(index) = walk.queue.pop_front() else {
                if roots_added {
                    break;
                }
                // The classes' prototypes last: by now every lazily made group has been made.
                roots_added = true;
                for class in 1..raw::class_count(ctx) {
                    if let Some(proto) = reflect.class_proto(class) {
                        walk.reach(proto, Edge::ClassProto(class));
                    }
                }
                continue;
            };
            let object = walk.objects[index as usize].clone();
            let proto = match reflect.proto_of(&object) {
                Some(proto) => Known::Node(walk.reach(proto, Edge::Proto(index))),
                None => Known::Null,
            };
            let mut props = Vec::new();
            for (number, slot) in raw::shape(ctx, &object).into_iter().enumerate() {
                let number = u32::try_from(number).unwrap_or(u32::MAX);
                let Some(name) = name_of(ctx, &slot.atom) else {
                    continue;
                };
                // Reading makes a lazily made property: its value is then described too.
                let Some(own) = raw::own(ctx, &object, &slot.atom) else {
                    continue;
                };
                let (value, setter) = if own.flags & ACCESSOR != 0 {
                    (
                        walk.known(own.getter, Edge::Getter(index, number)),
                        walk.known(own.setter, Edge::Setter(index, number)),
                    )
                } else {
                    (
                        walk.known(own.value, Edge::Value(index, number)),
                        Known::Undefined,
                    )
                };
                props.push(Prop {
                    name,
                    flags: own.flags,
                    value,
                    setter,
                });
            }
            let extensible = raw::is_extensible(ctx, &object).unwrap_or(false);
            let node = &mut walk.nodes[index as usize];
            node.proto = proto;
            node.props = props;
            node.extensible = extensible;
        }
        let class_protos = (1..raw::class_count(ctx))
            .filter_map(|class| {
                let proto = reflect.class_proto(class)?;
                Some((class, *walk.seen.get(&address(&proto))?))
            })
            .collect();
        Self {
            nodes: walk.nodes,
            class_protos,
        }
    }

    /// Walks `ctx` (a session's context) along the description: `Err` says what differs from a
    /// fresh context; `Ok` maps the session's built-in objects to their numbers, and lists the
    /// global object's properties past the built-in ones.
    pub(in crate::engine) fn compare<'js>(&self, ctx: &Ctx<'js>) -> Result<Matched<'js>, String> {
        let reflect = Reflect::new(ctx);
        let mut matched = Matched {
            objects: vec![None; self.nodes.len()],
            by_address: HashMap::new(),
            extra_globals: Vec::new(),
            fresh: Vec::new(),
        };
        let expect =
            |matched: &mut Matched<'js>, node: u32, value: Value<'js>| -> Result<(), String> {
                if !value.is_object() {
                    return Err(format!(
                        "a built-in holds {} where a fresh context has an object",
                        value.type_name()
                    ));
                }
                let at = address(&value);
                match (&matched.objects[node as usize], matched.by_address.get(&at)) {
                    (Some(existing), _) if address(existing) != at => {
                        Err("a built-in refers to another object than a fresh context's".into())
                    }
                    (_, Some(&other)) if other != node => {
                        Err("one built-in object stands where a fresh context has two".into())
                    }
                    (Some(_), _) => Ok(()),
                    (None, _) => {
                        matched.by_address.insert(at, node);
                        matched.objects[node as usize] = Some(value);
                        matched.fresh.push(node);
                        Ok(())
                    }
                }
            };
        expect(&mut matched, 0, ctx.globals().into_value())?;
        for &(class, node) in &self.class_protos {
            if let Some(proto) = reflect.class_proto(class) {
                expect(&mut matched, node, proto)?;
            }
        }
        // Every built-in the session has reached is compared once: those mapped so far, and
        // those their properties lead to (`expect` queues each object it maps first).
        let mut compared = vec![false; self.nodes.len()];
        while let Some(index) = matched.fresh.pop() {
            if std::mem::replace(&mut compared[index as usize], true) {
                continue;
            }
            let node = &self.nodes[index as usize];
            let Some(object) = matched.objects[index as usize].clone() else {
                continue;
            };
            let differs = |what: &str| {
                Err(format!(
                    "{what} of {} differs from a fresh context's",
                    self.path(index)
                ))
            };
            if class_id(&object) != node.class {
                return differs("the class");
            }
            if raw::is_extensible(ctx, &object) != Some(node.extensible) {
                return differs("the extensibility");
            }
            match (&node.proto, reflect.proto_of(&object)) {
                (Known::Node(proto), Some(value)) => expect(&mut matched, *proto, value)?,
                (Known::Null, None) => {}
                _ => return differs("the prototype"),
            }
            let mut slots = raw::shape(ctx, &object).into_iter();
            for prop in &node.props {
                let differs = |what: &str| {
                    Err(format!(
                        "{what} of {}.{} differs from a fresh context's",
                        self.path(index),
                        shown(&prop.name)
                    ))
                };
                let Some(slot) = slots.next() else {
                    return differs("the presence");
                };
                if !name_is(ctx, &slot.atom, &prop.name) {
                    return differs("the name");
                }
                // Still to be made: nothing has touched it, and made it will be a fresh
                // context's (which made it for the description).
                if slot.lazy {
                    continue;
                }
                let Some(own) = raw::own(ctx, &object, &slot.atom) else {
                    return differs("the presence");
                };
                if own.flags != prop.flags {
                    return differs("the attributes");
                }
                let (value, setter) = if own.flags & ACCESSOR != 0 {
                    (own.getter, own.setter)
                } else {
                    (own.value, Value::new_undefined(ctx.clone()))
                };
                // The clock origin is each context's own (a restore gives it back).
                let clock = matches!(&prop.name, Name::String(name) if name == "timeOrigin");
                for (known, value) in [(&prop.value, value), (&prop.setter, setter)] {
                    match known {
                        Known::Node(node) => expect(&mut matched, *node, value)?,
                        _ if clock && value.is_number() => {}
                        known => {
                            if !same(ctx, known, &value) {
                                return differs("the value");
                            }
                        }
                    }
                }
            }
            let rest: Vec<_> = slots.collect();
            if !rest.is_empty() {
                if !matches!(node.reached, Edge::Global) {
                    return Err(format!(
                        "{} has a property a fresh context's does not",
                        self.path(index)
                    ));
                }
                matched.extra_globals = rest;
            }
        }
        Ok(matched)
    }

    /// The built-in numbered `node` in `ctx`, a context made as the engine makes one (a restore's),
    /// found along the edge it was first reached by; the groups on the way are made. `None`
    /// when there is no such built-in.
    pub(in crate::engine) fn find<'js>(
        &self,
        ctx: &Ctx<'js>,
        node: u32,
        found: &mut HashMap<u32, Value<'js>>,
    ) -> Option<Value<'js>> {
        if let Some(value) = found.get(&node) {
            return Some(value.clone());
        }
        let reflect = Reflect::new(ctx);
        let own_of = |parent: u32, prop: u32, found: &mut HashMap<u32, Value<'js>>| {
            let parent_object = self.find(ctx, parent, found)?;
            let name = &self
                .nodes
                .get(parent as usize)?
                .props
                .get(prop as usize)?
                .name;
            let slot = raw::shape(ctx, &parent_object)
                .into_iter()
                .find(|slot| name_of(ctx, &slot.atom).as_ref() == Some(name))?;
            raw::own(ctx, &parent_object, &slot.atom)
        };
        let value = match self.nodes.get(node as usize)?.reached {
            Edge::Global => Some(ctx.globals().into_value()),
            Edge::ClassProto(class) => {
                reflect.make_class(class);
                reflect.class_proto(class)
            }
            Edge::Proto(parent) => reflect.proto_of(&self.find(ctx, parent, found)?),
            Edge::Value(parent, prop) => own_of(parent, prop, found).map(|own| own.value),
            Edge::Getter(parent, prop) => own_of(parent, prop, found).map(|own| own.getter),
            Edge::Setter(parent, prop) => own_of(parent, prop, found).map(|own| own.setter),
        }
        .filter(Value::is_object)?;
        found.insert(node, value.clone());
        Some(value)
    }

    /// How code reaches built-in `node` (`Array.prototype.map`), for messages.
    fn path(&self, node: u32) -> String {
        let prop = |parent: u32, prop: u32| {
            self.nodes
                .get(parent as usize)
                .and_then(|parent| parent.props.get(prop as usize))
                .map_or_else(|| "?".to_owned(), |prop| shown(&prop.name))
        };
        match self.nodes.get(node as usize).map(|node| node.reached) {
            Some(Edge::Global) => "globalThis".into(),
            Some(Edge::ClassProto(class)) => format!("the prototype of class {class}"),
            Some(Edge::Value(parent, number)) if parent == 0 => prop(parent, number),
            Some(Edge::Value(parent, number)) => {
                format!("{}.{}", self.path(parent), prop(parent, number))
            }
            Some(Edge::Getter(parent, number)) => format!(
                "the getter of {}.{}",
                self.path(parent),
                prop(parent, number)
            ),
            Some(Edge::Setter(parent, number)) => format!(
                "the setter of {}.{}",
                self.path(parent),
                prop(parent, number)
            ),
            Some(Edge::Proto(parent)) => format!("Object.getPrototypeOf({})", self.path(parent)),
            None => "?".into(),
        }
    }
}

/// The walk of a fresh context's built-ins.
struct Describer<'a, 'js> {
    ctx: &'a Ctx<'js>,
    nodes: Vec<Node>,
    objects: Vec<Value<'js>>,
    seen: HashMap<usize, u32>,
    queue: VecDeque<u32>,
}

impl<'js> Describer<'_, 'js> {
    /// The node number of `object`, first reached by `edge` if it is new.
    fn reach(&mut self, object: Value<'js>, edge: Edge) -> u32 {
        if let Some(&known) = self.seen.get(&address(&object)) {
            return known;
        }
        let number = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.seen.insert(address(&object), number);
        self.nodes.push(Node {
            reached: edge,
            class: class_id(&object),
            extensible: false,
            proto: Known::Unknown,
            props: Vec::new(),
        });
        self.objects.push(object);
        self.queue.push_back(number);
        number
    }

    /// A built-in's value as the description holds it.
    fn known(&mut self, value: Value<'js>, edge: Edge) -> Known {
        let ctx = self.ctx.clone();
        known_value(&ctx, value, |object| self.reach(object, edge))
    }
}

/// A name as a path shows it.
fn shown(name: &Name) -> String {
    match name {
        Name::String(name) => name.clone(),
        Name::Symbol(description) => format!("[{description}]"),
    }
}

/// A built-in's value as the description holds it; objects become nodes through `node`.
fn known_value<'js>(
    ctx: &Ctx<'js>,
    value: Value<'js>,
    node: impl FnOnce(Value<'js>) -> u32,
) -> Known {
    if value.is_undefined() {
        Known::Undefined
    } else if value.is_null() {
        Known::Null
    } else if let Some(bool) = value.as_bool() {
        Known::Bool(bool)
    } else if let Some(number) = value.as_number() {
        Known::Number(number_bits(number))
    } else if value.is_string() {
        exact_string(ctx, &value).map_or(Known::Unknown, Known::String)
    } else if value.is_symbol() {
        String::from_utf16(&reflect::symbol_to_string_units(ctx, &value))
            .map_or(Known::Unknown, Known::Symbol)
    } else if value.is_object() {
        Known::Node(node(value))
    } else {
        Known::Unknown
    }
}

/// Whether a session's `value` is what a fresh context holds (`known`, not an object).
fn same<'js>(ctx: &Ctx<'js>, known: &Known, value: &Value<'js>) -> bool {
    match known {
        Known::Undefined => value.is_undefined(),
        Known::Null => value.is_null(),
        Known::Bool(bool) => value.as_bool() == Some(*bool),
        Known::Number(bits) => value.as_number().map(number_bits) == Some(*bits),
        Known::String(text) => value.is_string() && exact_string(ctx, value).as_ref() == Some(text),
        Known::Symbol(description) => {
            value.is_symbol()
                && String::from_utf16(&reflect::symbol_to_string_units(ctx, value))
                    .ok()
                    .as_ref()
                    == Some(description)
        }
        Known::Node(_) | Known::Unknown => false,
    }
}
