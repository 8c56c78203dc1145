//! The one walk of a structured-clone copy (docs/contract.md "Values across the boundary"), shared
//! by the four directions: [`Reader`] copies a JS value into a [`Value`] through a [`Source`]
//! (`engine::values::convert` reads QuickJS values, `node::value` reads Node's), and [`Builder`]
//! makes a JS value from a [`Value`] through a [`Sink`].
//!
//! What all four must agree on lives here, once: the frames of the iterative walk (nesting costs
//! neither the thread's stack nor the engine's own stack budget, which both QuickJS and V8 check
//! the built-ins a copy calls against), the paths in refusals, the limits ([`MAX_DEPTH`],
//! [`MAX_ARRAY_LENGTH`], [`MAX_HOLES`]), the numbering that `Value::Ref` relies on (every object
//! numbered in pre-order, see `crate::value`), and the messages. A side only answers questions
//! about single values: what is this, what are its keys, read this property, make this object.

use super::{
    CloneError, PathStep, SizeLimit, TypedArrayKind, Value, MAX_ARRAY_LENGTH, MAX_DEPTH, MAX_HOLES,
};

/// Why a part is not copied, as [`CloneError::what`] says it (`"a function"`).
pub type What = String;

/// Why a source cannot copy a part.
pub enum Refusal<T> {
    /// It is something structured clone does not copy.
    What(What),
    /// Reading it threw.
    Thrown(T),
    /// It alone takes at least this many bytes, more than the room the walk gave: it was not
    /// read (a string or buffer is measured before it is copied).
    TooLarge(u64),
}

/// What a source says an object is.
pub enum Shape<S: Source + ?Sized> {
    /// An array of this `length` (holes included).
    Array(u64),
    /// An object copied as its own enumerable string-keyed properties (plain objects, class
    /// instances).
    Plain(S::Keys),
    /// A Map; its entries, as the source lists them.
    Map(S::Items),
    /// A Set; its items, as the source lists them.
    Set(S::Items),
    /// An object read whole (a Date, RegExp, Error or ArrayBuffer); it is numbered as it is.
    Leaf(Value),
    /// A typed array; the view is numbered before its buffer.
    TypedArray {
        kind: TypedArrayKind,
        buffer: ViewBuffer<S::Handle>,
        byte_offset: usize,
        length: usize,
    },
    /// A wrapped primitive (`new Number(1)`), which travels as the primitive it wraps.
    Boxed(S::Handle),
}

/// The buffer under a typed array.
pub enum ViewBuffer<H> {
    /// A buffer other views may share: copied once, then referred to.
    Shared(H),
    /// Only the view's own bytes, in a buffer of their own (numbered, but tied to no object).
    Own(Vec<u8>),
}

/// An array element as a source reads it.
pub enum Element<H, T> {
    /// An index the array does not own, which is not `undefined`.
    Hole,
    Value(H),
    Thrown(T),
}

/// An object's property as a source reads it, with its key.
pub enum Property<H, T> {
    /// Not there any more (a getter deleted it), or not copied (a symbol key): skipped.
    Absent,
    Value(String, H),
    Thrown(String, T),
}

/// Which part of a Map entry or Set item to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    MapKey,
    MapValue,
    SetItem,
}

/// The side a [`Reader`] copies from: QuickJS or Node.
pub trait Source {
    /// A value of that side.
    type Handle: Clone;
    /// What a failed read gives (a QuickJS exception, a napi error with one pending).
    type Thrown;
    /// An object's own keys, as listed when it was opened.
    type Keys;
    /// A Map's entries or a Set's items, as listed when it was opened.
    type Items;

    /// The copy of a value that is not an object; `Ok(None)` for an object the walk may open,
    /// a refusal for a value never copied (a function, a symbol, a Proxy). A string of more
    /// than `room` bytes is refused as [`Refusal::TooLarge`] before it is copied.
    fn primitive(
        &mut self,
        value: &Self::Handle,
        room: u64,
    ) -> Result<Option<Value>, Refusal<Self::Thrown>>;
    /// What the object is (called once it is known to be no object met before); an
    /// ArrayBuffer of more than `room` bytes is refused as [`Refusal::TooLarge`] unread.
    fn shape(
        &mut self,
        object: &Self::Handle,
        room: u64,
    ) -> Result<Shape<Self>, Refusal<Self::Thrown>>;

    /// The number `object` was given, if it was met before.
    fn number_of(&mut self, object: &Self::Handle) -> Result<Option<usize>, Self::Thrown>;
    /// Records `object`'s number.
    fn remember(&mut self, object: &Self::Handle, number: usize) -> Result<(), Self::Thrown>;

    /// Element `index` of an array.
    fn element(&mut self, array: &Self::Handle, index: u32) -> Element<Self::Handle, Self::Thrown>;
    /// How many keys `keys` lists.
    fn key_count(&self, keys: &Self::Keys) -> usize;
    /// The property under key number `index` (structured clone calls getters).
    fn property(
        &mut self,
        object: &Self::Handle,
        keys: &Self::Keys,
        index: usize,
    ) -> Property<Self::Handle, Self::Thrown>;
    /// How many entries or items `items` lists.
    fn item_count(&self, items: &Self::Items) -> usize;
    /// Part `field` of entry or item number `index`.
    fn item(
        &mut self,
        items: &Self::Items,
        index: usize,
        field: Field,
    ) -> Result<Self::Handle, Self::Thrown>;
    /// How the key of entry `index` reads in a path (`.get('onDone')`); `key` is its copy.
    fn map_key_label(&mut self, items: &Self::Items, index: usize, key: &Value) -> String;
    /// The bytes of a shared buffer met for the first time, or why they cannot be read (more
    /// than `room` of them: [`Refusal::TooLarge`], unread).
    fn buffer_bytes(
        &mut self,
        buffer: &Self::Handle,
        room: u64,
    ) -> Result<Vec<u8>, Refusal<Self::Thrown>>;
    /// What a failed read threw, in one line (`Error: nope`); clears it.
    fn thrown(&mut self, thrown: Self::Thrown) -> String;
}

/// A source that can say how `util.inspect` shows a value, so that uncopyable parts can be
/// described instead of refused.
pub trait Describe: Source {
    /// How `util.inspect` prints `value`.
    fn describe(&mut self, value: &Self::Handle) -> String;
}

/// Copies values out of a [`Source`], whole or not at all: a copy past a size limit (the
/// `maxValueBytes` budget, or one of the fixed limits on nesting and arrays) fails, naming the
/// limit and the size, whether uncopyable parts are described or refused.
pub struct Reader<S: Source> {
    source: S,
    /// Set when uncopyable parts become [`Value::Uncloneable`] (outputs: an output never fails a
    /// run for holding a function); unset when they fail the copy (variables, tool arguments and
    /// results).
    describe: Option<fn(&mut S, &S::Handle) -> String>,
    /// How many objects were numbered so far.
    numbered: usize,
    /// The most bytes the copy may count (see [`Reader::size_of`]), and those counted so far.
    max_bytes: u64,
    bytes: u64,
}

/// Why the walk stopped.
enum Halt {
    /// A part that cannot be copied (when parts are refused, not described).
    Uncopyable(What),
    /// A size limit.
    Limit(SizeLimit),
}

impl From<What> for Halt {
    fn from(what: What) -> Self {
        Halt::Uncopyable(what)
    }
}

/// What a value or hole counts besides its text or bytes (see [`Reader::size_of`]).
const SLOT_BYTES: u64 = 8;

/// What visiting a value gives: a finished copy, or a container whose parts come next.
enum Visit<S: Source> {
    Done(Value),
    Open(ReadFrame<S>),
}

/// A container being copied.
enum ReadFrame<S: Source> {
    Array {
        array: S::Handle,
        length: u32,
        next: u32,
        holes: usize,
        items: Vec<Option<Value>>,
    },
    Object {
        object: S::Handle,
        keys: S::Keys,
        count: usize,
        next: usize,
        /// The key of the part being copied.
        key: String,
        entries: Vec<(String, Value)>,
    },
    Map {
        items: S::Items,
        count: usize,
        next: usize,
        /// The copied key of the entry whose value is being copied.
        key: Option<Value>,
        pairs: Vec<(Value, Value)>,
    },
    Set {
        items: S::Items,
        count: usize,
        next: usize,
        copied: Vec<Value>,
    },
}

/// The next part of a container.
enum Part<S: Source> {
    Value(S::Handle),
    /// Reading the part threw this.
    Thrown(S::Thrown),
    /// Every part is copied: the container's copy, and what it counts besides its parts (the
    /// holes of an array).
    End(Value, u64),
    /// The array has more holes than a copy takes.
    TooManyHoles,
}

impl<S: Source> Reader<S> {
    /// A reader for which every uncopyable part fails the copy, and so does a copy of more
    /// than `max_bytes` (see [`Reader::size_of`]).
    pub fn refusing(source: S, max_bytes: u64) -> Self {
        Self {
            source,
            describe: None,
            numbered: 0,
            max_bytes,
            bytes: 0,
        }
    }

    /// What a copy counts against its byte budget (`maxValueBytes`): 8 bytes for every value
    /// and hole, plus the UTF-8 bytes of its text (strings, BigInt digits, keys, an error's
    /// name, message and stack, a RegExp's source and flags, the description of an uncopyable
    /// part) and the bytes of its buffer. Containers count their parts as they are copied.
    pub fn size_of(value: &Value) -> u64 {
        let text = match value {
            Value::String(text) | Value::BigInt(text) | Value::Uncloneable(text) => text.len(),
            Value::RegExp { source, flags } => source.len() + flags.len(),
            Value::Error {
                name,
                message,
                stack,
            } => name.len() + message.len() + stack.as_ref().map_or(0, String::len),
            Value::ArrayBuffer(bytes) => bytes.len(),
            Value::TypedArray { buffer, .. } => match buffer.as_ref() {
                Value::ArrayBuffer(bytes) => bytes.len(),
                _ => 0,
            },
            _ => 0,
        };
        SLOT_BYTES + text as u64
    }

    /// Copies `root`, or says which part (on the path from `root_name`) is not copied, or which
    /// limit the copy passed there.
    pub fn read(mut self, root: &S::Handle, root_name: &str) -> Result<Value, CloneError> {
        self.walk(root).map_err(|(steps, halt)| match halt {
            Halt::Uncopyable(what) => CloneError::at(root_name, &steps, what),
            Halt::Limit(limit) => {
                CloneError::stopped(root_name, &steps, limit.to_string(), Some(limit))
            }
        })
    }

    /// The walk: containers wait on `stack` while their parts are copied, the innermost on top.
    fn walk(&mut self, root: &S::Handle) -> Result<Value, (Vec<PathStep>, Halt)> {
        let mut stack: Vec<ReadFrame<S>> = Vec::new();
        let mut part = Part::Value(root.clone());
        loop {
            let visited = match part {
                Part::Value(value) => self.visit(&value, stack.len()),
                Part::Thrown(thrown) => {
                    let described = self.thrown(thrown);
                    self.done(described)
                }
                Part::End(copied, extra) => {
                    stack.pop();
                    self.count(extra).map(|()| Visit::Done(copied))
                }
                Part::TooManyHoles => {
                    // The array itself is what passed the limit.
                    stack.pop();
                    Err(Halt::Limit(SizeLimit::array_holes(MAX_HOLES as u64 + 1)))
                }
            };
            part = match visited {
                Ok(Visit::Open(mut frame)) => {
                    let first = next_part(&mut self.source, &mut frame);
                    stack.push(frame);
                    first
                }
                Ok(Visit::Done(copied)) => match stack.last_mut() {
                    Some(parent) => match self.count(parent.key_bytes()) {
                        Ok(()) => {
                            parent.accept(copied);
                            next_part(&mut self.source, parent)
                        }
                        Err(halt) => {
                            let steps = stack
                                .iter()
                                .map(|frame| step(&mut self.source, frame))
                                .collect();
                            return Err((steps, halt));
                        }
                    },
                    None => return Ok(copied),
                },
                Err(halt) => {
                    let steps = stack
                        .iter()
                        .map(|frame| step(&mut self.source, frame))
                        .collect();
                    return Err((steps, halt));
                }
            };
        }
    }

    /// Counts `bytes` more against the budget.
    fn count(&mut self, bytes: u64) -> Result<(), Halt> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(Halt::Limit(SizeLimit::value_bytes(
                self.max_bytes,
                self.bytes,
            )));
        }
        Ok(())
    }

    /// A finished part, or why there is none.
    fn done(&mut self, copied: Result<Value, Halt>) -> Result<Visit<S>, Halt> {
        copied.and_then(|copied| self.counted(copied))
    }

    /// Counts a finished part (see [`Reader::size_of`]).
    fn counted(&mut self, copied: Value) -> Result<Visit<S>, Halt> {
        self.count(Self::size_of(&copied))?;
        Ok(Visit::Done(copied))
    }

    /// The room left for a part's text or bytes, besides its own slot.
    fn room(&self) -> u64 {
        self.max_bytes
            .saturating_sub(self.bytes)
            .saturating_sub(SLOT_BYTES)
    }

    fn visit(&mut self, value: &S::Handle, depth: usize) -> Result<Visit<S>, Halt> {
        let room = self.room();
        match self.source.primitive(value, room) {
            Ok(Some(copied)) => self.counted(copied),
            Ok(None) => self.visit_object(value, depth),
            Err(refusal) => self.refused(value, refusal),
        }
    }

    fn visit_object(&mut self, object: &S::Handle, depth: usize) -> Result<Visit<S>, Halt> {
        match self.source.number_of(object) {
            Ok(Some(number)) => return self.counted(Value::Ref(number)),
            Ok(None) => {}
            Err(thrown) => {
                let described = self.thrown(thrown);
                return self.done(described);
            }
        }
        if depth >= MAX_DEPTH {
            return Err(Halt::Limit(SizeLimit::depth(depth as u64 + 1)));
        }
        let room = self.room();
        let shape = match self.source.shape(object, room) {
            Ok(shape) => shape,
            Err(refusal) => return self.refused(object, refusal),
        };
        let visit = match shape {
            Shape::Array(length) => {
                let Some(length) = u32::try_from(length)
                    .ok()
                    .filter(|&length| u64::from(length) <= MAX_ARRAY_LENGTH)
                else {
                    return Err(Halt::Limit(SizeLimit::array_length(length)));
                };
                Visit::Open(ReadFrame::Array {
                    array: object.clone(),
                    length,
                    next: 0,
                    holes: 0,
                    items: Vec::new(),
                })
            }
            Shape::Plain(keys) => {
                let count = self.source.key_count(&keys);
                Visit::Open(ReadFrame::Object {
                    object: object.clone(),
                    keys,
                    count,
                    next: 0,
                    key: String::new(),
                    entries: Vec::with_capacity(count),
                })
            }
            Shape::Map(items) => {
                let count = self.source.item_count(&items);
                Visit::Open(ReadFrame::Map {
                    items,
                    count,
                    next: 0,
                    key: None,
                    pairs: Vec::with_capacity(count),
                })
            }
            Shape::Set(items) => {
                let count = self.source.item_count(&items);
                Visit::Open(ReadFrame::Set {
                    items,
                    count,
                    next: 0,
                    copied: Vec::with_capacity(count),
                })
            }
            Shape::Leaf(copied) => Visit::Done(copied),
            Shape::TypedArray {
                kind,
                buffer,
                byte_offset,
                length,
            } => {
                let buffer = self.typed_array(object, buffer)?;
                return self.counted(Value::TypedArray {
                    kind,
                    buffer: Box::new(buffer),
                    byte_offset,
                    length,
                });
            }
            Shape::Boxed(primitive) => {
                let room = self.room();
                return match self.source.primitive(&primitive, room) {
                    Ok(Some(copied)) => self.counted(copied),
                    Err(Refusal::TooLarge(size)) => Err(self.too_large(size)),
                    _ => {
                        let described = self
                            .uncopyable(
                                object,
                                "a wrapped primitive whose valueOf was replaced".into(),
                            )
                            .map_err(Halt::from);
                        self.done(described)
                    }
                };
            }
        };
        if let Err(thrown) = self.number(object) {
            let described = self.thrown(thrown);
            return self.done(described);
        }
        match visit {
            Visit::Done(copied) => self.counted(copied),
            Visit::Open(frame) => {
                self.count(SLOT_BYTES)?;
                Ok(Visit::Open(frame))
            }
        }
    }

    /// The copy of a view's buffer. The view is numbered before its buffer (pre-order), and a
    /// buffer met before becomes a `Ref`, so that views sharing a buffer still share it after
    /// the copy.
    fn typed_array(
        &mut self,
        view: &S::Handle,
        buffer: ViewBuffer<S::Handle>,
    ) -> Result<Value, Halt> {
        match buffer {
            ViewBuffer::Own(bytes) => {
                self.number(view)
                    .map_err(|thrown| Halt::Uncopyable(self.unreadable(thrown)))?;
                self.numbered += 1;
                Ok(Value::ArrayBuffer(bytes))
            }
            ViewBuffer::Shared(buffer) => {
                let copied = match self.source.number_of(&buffer) {
                    Ok(Some(number)) => self.number(view).map(|_| Value::Ref(number)),
                    Ok(None) => match self.source.buffer_bytes(&buffer, self.room()) {
                        Ok(bytes) => self
                            .number(view)
                            .and_then(|_| self.number(&buffer))
                            .map(|_| Value::ArrayBuffer(bytes)),
                        Err(Refusal::What(what)) => {
                            return self.uncopyable(view, what).map_err(Halt::from)
                        }
                        Err(Refusal::TooLarge(size)) => return Err(self.too_large(size)),
                        Err(Refusal::Thrown(thrown)) => Err(thrown),
                    },
                    Err(thrown) => Err(thrown),
                };
                copied.map_err(|thrown| Halt::Uncopyable(self.unreadable(thrown)))
            }
        }
    }

    /// Gives `object` the next number.
    fn number(&mut self, object: &S::Handle) -> Result<usize, S::Thrown> {
        let number = self.numbered;
        self.source.remember(object, number)?;
        self.numbered += 1;
        Ok(number)
    }

    fn refused(
        &mut self,
        value: &S::Handle,
        refusal: Refusal<S::Thrown>,
    ) -> Result<Visit<S>, Halt> {
        match refusal {
            Refusal::What(what) => match self.uncopyable(value, what) {
                Ok(described) => self.counted(described),
                Err(what) => Err(Halt::Uncopyable(what)),
            },
            Refusal::Thrown(thrown) => {
                let described = self.thrown(thrown);
                self.done(described)
            }
            Refusal::TooLarge(size) => Err(self.too_large(size)),
        }
    }

    /// The budget passed by a part of at least `size` bytes that was not read.
    fn too_large(&self, size: u64) -> Halt {
        Halt::Limit(SizeLimit::value_bytes(
            self.max_bytes,
            self.bytes.saturating_add(SLOT_BYTES).saturating_add(size),
        ))
    }

    /// A part that cannot be copied: described, or refused.
    fn uncopyable(&mut self, value: &S::Handle, what: What) -> Result<Value, What> {
        match self.describe {
            Some(describe) => Ok(Value::Uncloneable(describe(&mut self.source, value))),
            None => Err(what),
        }
    }

    /// A part whose read threw: the copy names the exception instead of failing the whole
    /// value (outputs), or says the part is unreadable.
    fn thrown(&mut self, thrown: S::Thrown) -> Result<Value, Halt> {
        match self.describe {
            Some(_) => Ok(Value::Uncloneable(format!(
                "[Thrown: {}]",
                self.source.thrown(thrown)
            ))),
            None => Err(Halt::Uncopyable(self.unreadable(thrown))),
        }
    }

    fn unreadable(&mut self, thrown: S::Thrown) -> What {
        format!(
            "unreadable (reading it threw {})",
            self.source.thrown(thrown)
        )
    }
}

impl<S: Describe> Reader<S> {
    /// A reader for which uncopyable parts become their inspect string, so that the copy
    /// fails only past a size limit (`max_bytes`, or a fixed one).
    pub fn describing(source: S, max_bytes: u64) -> Self {
        Self {
            source,
            describe: Some(S::describe),
            numbered: 0,
            max_bytes,
            bytes: 0,
        }
    }
}

/// The next part of `frame`'s container.
fn next_part<S: Source>(source: &mut S, frame: &mut ReadFrame<S>) -> Part<S> {
    match frame {
        ReadFrame::Array {
            array,
            length,
            next,
            holes,
            items,
        } => {
            while *next < *length {
                match source.element(array, *next) {
                    Element::Hole => {
                        *next += 1;
                        *holes += 1;
                        if *holes > MAX_HOLES {
                            return Part::TooManyHoles;
                        }
                        items.push(None);
                    }
                    Element::Value(item) => return Part::Value(item),
                    Element::Thrown(thrown) => return Part::Thrown(thrown),
                }
            }
            Part::End(
                Value::Array(std::mem::take(items)),
                *holes as u64 * SLOT_BYTES,
            )
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
                let index = *next;
                *next += 1;
                match source.property(object, keys, index) {
                    Property::Absent => {}
                    Property::Value(name, value) => {
                        *key = name;
                        return Part::Value(value);
                    }
                    Property::Thrown(name, thrown) => {
                        *key = name;
                        return Part::Thrown(thrown);
                    }
                }
            }
            Part::End(Value::Object(std::mem::take(entries)), 0)
        }
        ReadFrame::Map {
            items,
            count,
            next,
            key,
            pairs,
        } => {
            if *next == *count {
                return Part::End(Value::Map(std::mem::take(pairs)), 0);
            }
            let field = if key.is_some() {
                Field::MapValue
            } else {
                Field::MapKey
            };
            match source.item(items, *next, field) {
                Ok(part) => Part::Value(part),
                Err(thrown) => Part::Thrown(thrown),
            }
        }
        ReadFrame::Set {
            items,
            count,
            next,
            copied,
        } => {
            if *next == *count {
                return Part::End(Value::Set(std::mem::take(copied)), 0);
            }
            match source.item(items, *next, Field::SetItem) {
                Ok(part) => Part::Value(part),
                Err(thrown) => Part::Thrown(thrown),
            }
        }
    }
}

/// The step to the part of `frame` being copied, for a refusal's path.
fn step<S: Source>(source: &mut S, frame: &ReadFrame<S>) -> PathStep {
    match frame {
        ReadFrame::Array { next, .. } => PathStep::Index(*next as usize),
        ReadFrame::Object { key, .. } => PathStep::Key(key.clone()),
        ReadFrame::Map {
            items, next, key, ..
        } => match key {
            Some(key) => PathStep::MapValue(source.map_key_label(items, *next, key)),
            None => PathStep::MapKey(*next),
        },
        ReadFrame::Set { next, .. } => PathStep::SetItem(*next),
    }
}

impl<S: Source> ReadFrame<S> {
    /// The bytes of the key the part [`next_part`] gave last is kept under (object properties),
    /// which the copy counts too.
    fn key_bytes(&self) -> u64 {
        match self {
            ReadFrame::Object { key, .. } => key.len() as u64,
            _ => 0,
        }
    }

    /// Takes the copy of the part [`next_part`] gave last.
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
}

/// A value that holds no other value, as a [`Sink`] makes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf<'v> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// Decimal digits, possibly signed.
    BigInt(&'v str),
    String(&'v str),
    Date(f64),
    RegExp {
        source: &'v str,
        flags: &'v str,
    },
    Error {
        name: &'v str,
        message: &'v str,
        stack: Option<&'v str>,
    },
    ArrayBuffer(&'v [u8]),
}

impl Leaf<'_> {
    /// Whether the leaf is an object (and so takes a number).
    fn is_object(&self) -> bool {
        matches!(
            self,
            Leaf::Date(_) | Leaf::RegExp { .. } | Leaf::Error { .. } | Leaf::ArrayBuffer(_)
        )
    }
}

/// Why a copy cannot be built (a malformed [`Value`], or one past the limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    TooDeep,
    ArrayTooLong,
    DanglingRef,
    NotABuffer,
}

impl Problem {
    /// The message of the error the sink raises.
    pub fn message(self) -> &'static str {
        match self {
            Problem::TooDeep => "the value is nested too deeply",
            Problem::ArrayTooLong => "the array is too long",
            Problem::DanglingRef => "a reference to an object that was not copied",
            Problem::NotABuffer => "a typed array's buffer must be an ArrayBuffer",
        }
    }

    /// Whether JS would call it a `RangeError` (else a `TypeError`).
    pub fn is_range_error(self) -> bool {
        matches!(self, Problem::TooDeep | Problem::ArrayTooLong)
    }
}

/// The side a [`Builder`] makes values on: QuickJS or Node.
pub trait Sink {
    /// A value of that side.
    type Handle: Clone;
    /// An array being filled.
    type Array;
    /// An object being filled.
    type Object;
    /// A Map being filled.
    type Map;
    /// A Set being filled.
    type Set;
    /// Why making or filling failed.
    type Error;

    /// A value that holds no other value.
    fn leaf(&mut self, leaf: Leaf<'_>) -> Result<Self::Handle, Self::Error>;
    /// An array of `length`, all holes.
    fn array(&mut self, length: u32) -> Result<(Self::Handle, Self::Array), Self::Error>;
    /// An empty plain object.
    fn object(&mut self) -> Result<(Self::Handle, Self::Object), Self::Error>;
    /// An empty Map.
    fn map(&mut self) -> Result<(Self::Handle, Self::Map), Self::Error>;
    /// An empty Set.
    fn set(&mut self) -> Result<(Self::Handle, Self::Set), Self::Error>;
    /// Whether `value` is an ArrayBuffer (a typed array's buffer must be one).
    fn is_array_buffer(&mut self, value: &Self::Handle) -> Result<bool, Self::Error>;
    /// A view of `length` elements at `byte_offset` of `buffer`.
    fn typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &Self::Handle,
        byte_offset: usize,
        length: usize,
    ) -> Result<Self::Handle, Self::Error>;
    /// Sets element `index`.
    fn set_element(
        &mut self,
        array: &Self::Array,
        index: u32,
        value: Self::Handle,
    ) -> Result<(), Self::Error>;
    /// Defines (not assigns: no setter runs, `__proto__` is a key like any other) `key`.
    fn define(
        &mut self,
        object: &Self::Object,
        key: &str,
        value: Self::Handle,
    ) -> Result<(), Self::Error>;
    /// Adds an entry.
    fn map_set(
        &mut self,
        map: &Self::Map,
        key: Self::Handle,
        value: Self::Handle,
    ) -> Result<(), Self::Error>;
    /// Adds an item.
    fn set_add(&mut self, set: &Self::Set, item: Self::Handle) -> Result<(), Self::Error>;
    /// The error that reports `problem`.
    fn fail(&mut self, problem: Problem) -> Self::Error;
}

/// Makes values on a [`Sink`]. Every object is fresh; a container is linked into its parent
/// before its own parts are built.
pub struct Builder<K: Sink> {
    sink: K,
    /// The objects built so far, by number, for `Ref`; `None` for a view still waiting for its
    /// buffer.
    created: Vec<Option<K::Handle>>,
}

/// A container being filled.
enum BuildFrame<'v, K: Sink> {
    Array {
        array: K::Array,
        items: std::iter::Enumerate<std::slice::Iter<'v, Option<Value>>>,
    },
    Object {
        object: K::Object,
        entries: std::slice::Iter<'v, (String, Value)>,
    },
    Map {
        map: K::Map,
        entries: std::slice::Iter<'v, (Value, Value)>,
        /// The key of the entry being built, once it exists, and the value it maps to.
        key: Option<(K::Handle, &'v Value)>,
    },
    Set {
        set: K::Set,
        items: std::slice::Iter<'v, Value>,
    },
}

/// A value made, and for a container the frame that fills it.
type Made<'v, K> = (<K as Sink>::Handle, Option<BuildFrame<'v, K>>);

/// Where a built part goes in the container on top of the stack.
enum Slot<'v, H> {
    Index(u32),
    Key(&'v str),
    /// A Map key; the value, this one, comes next.
    MapKey(&'v Value),
    MapValue(H),
    SetItem,
}

impl<'v, K: Sink> BuildFrame<'v, K> {
    /// The next part to build and where it goes; `None` once the container is full.
    fn next_part(&mut self) -> Option<(&'v Value, Slot<'v, K::Handle>)> {
        match self {
            BuildFrame::Array { items, .. } => items.find_map(|(index, item)| {
                // Holes are the indices left alone. The array's length was checked to fit.
                Some((item.as_ref()?, Slot::Index(index as u32)))
            }),
            BuildFrame::Object { entries, .. } => entries
                .next()
                .map(|(key, item)| (item, Slot::Key(key.as_str()))),
            BuildFrame::Map { entries, key, .. } => match key.take() {
                Some((key, item)) => Some((item, Slot::MapValue(key))),
                None => entries.next().map(|(key, item)| (key, Slot::MapKey(item))),
            },
            BuildFrame::Set { items, .. } => items.next().map(|item| (item, Slot::SetItem)),
        }
    }

    /// Puts `value` where `slot` says.
    fn fill(
        &mut self,
        sink: &mut K,
        slot: Slot<'v, K::Handle>,
        value: K::Handle,
    ) -> Result<(), K::Error> {
        match (self, slot) {
            (BuildFrame::Array { array, .. }, Slot::Index(index)) => {
                sink.set_element(array, index, value)
            }
            (BuildFrame::Object { object, .. }, Slot::Key(key)) => sink.define(object, key, value),
            (BuildFrame::Map { key, .. }, Slot::MapKey(item)) => {
                *key = Some((value, item));
                Ok(())
            }
            (BuildFrame::Map { map, .. }, Slot::MapValue(key)) => sink.map_set(map, key, value),
            (BuildFrame::Set { set, .. }, Slot::SetItem) => sink.set_add(set, value),
            // `next_part` only gives a frame its own kind of slot.
            _ => Ok(()),
        }
    }
}

impl<K: Sink> Builder<K> {
    /// A builder making values on `sink`.
    pub fn new(sink: K) -> Self {
        Self {
            sink,
            created: Vec::new(),
        }
    }

    /// Makes `root`. The walk: containers wait on a stack while their parts are built, the
    /// innermost on top.
    pub fn build<'v>(&mut self, root: &'v Value) -> Result<K::Handle, K::Error> {
        let (built, frame) = self.make(root, 0)?;
        let mut stack: Vec<BuildFrame<'v, K>> = frame.into_iter().collect();
        while let Some(frame) = stack.last_mut() {
            let Some((part, slot)) = frame.next_part() else {
                stack.pop();
                continue;
            };
            let depth = stack.len();
            let (value, opened) = self.make(part, depth)?;
            if let Some(frame) = stack.last_mut() {
                frame.fill(&mut self.sink, slot, value)?;
            }
            stack.extend(opened);
        }
        Ok(built)
    }

    /// `value` itself, and for a container the frame that fills it.
    fn make<'v>(&mut self, value: &'v Value, depth: usize) -> Result<Made<'v, K>, K::Error> {
        if depth > MAX_DEPTH {
            return Err(self.sink.fail(Problem::TooDeep));
        }
        let leaf = match value {
            Value::Undefined => Leaf::Undefined,
            Value::Null => Leaf::Null,
            Value::Bool(flag) => Leaf::Bool(*flag),
            Value::Number(number) => Leaf::Number(*number),
            Value::BigInt(digits) => Leaf::BigInt(digits),
            Value::String(text) | Value::Uncloneable(text) => Leaf::String(text),
            Value::Date(time) => Leaf::Date(*time),
            Value::RegExp { source, flags } => Leaf::RegExp { source, flags },
            Value::Error {
                name,
                message,
                stack,
            } => Leaf::Error {
                name,
                message,
                stack: stack.as_deref(),
            },
            Value::ArrayBuffer(bytes) => Leaf::ArrayBuffer(bytes),
            Value::Array(items) => {
                let Ok(length) = u32::try_from(items.len()) else {
                    return Err(self.sink.fail(Problem::ArrayTooLong));
                };
                let (handle, array) = self.sink.array(length)?;
                let frame = BuildFrame::Array {
                    array,
                    items: items.iter().enumerate(),
                };
                return Ok((self.created(handle), Some(frame)));
            }
            Value::Object(entries) => {
                let (handle, object) = self.sink.object()?;
                let frame = BuildFrame::Object {
                    object,
                    entries: entries.iter(),
                };
                return Ok((self.created(handle), Some(frame)));
            }
            Value::Map(entries) => {
                let (handle, map) = self.sink.map()?;
                let frame = BuildFrame::Map {
                    map,
                    entries: entries.iter(),
                    key: None,
                };
                return Ok((self.created(handle), Some(frame)));
            }
            Value::Set(items) => {
                let (handle, set) = self.sink.set()?;
                let frame = BuildFrame::Set {
                    set,
                    items: items.iter(),
                };
                return Ok((self.created(handle), Some(frame)));
            }
            Value::TypedArray {
                kind,
                buffer,
                byte_offset,
                length,
            } => {
                let view = self.typed_array(*kind, buffer, *byte_offset, *length, depth)?;
                return Ok((view, None));
            }
            Value::Ref(number) => {
                return match self.created.get(*number) {
                    Some(Some(object)) => Ok((object.clone(), None)),
                    _ => Err(self.sink.fail(Problem::DanglingRef)),
                };
            }
        };
        let built = self.sink.leaf(leaf)?;
        if leaf.is_object() {
            self.created.push(Some(built.clone()));
        }
        Ok((built, None))
    }

    fn typed_array(
        &mut self,
        kind: TypedArrayKind,
        buffer: &Value,
        byte_offset: usize,
        length: usize,
        depth: usize,
    ) -> Result<K::Handle, K::Error> {
        // The view's number comes before its buffer's, but the view needs the buffer: hold the
        // number until both exist.
        let slot = self.created.len();
        self.created.push(None);
        let (buffer, _) = self.make(buffer, depth + 1)?;
        if !self.sink.is_array_buffer(&buffer)? {
            return Err(self.sink.fail(Problem::NotABuffer));
        }
        let view = self.sink.typed_array(kind, &buffer, byte_offset, length)?;
        self.created[slot] = Some(view.clone());
        Ok(view)
    }

    /// Numbers a freshly made object.
    fn created(&mut self, object: K::Handle) -> K::Handle {
        self.created.push(Some(object.clone()));
        object
    }
}

#[cfg(test)]
mod tests;
