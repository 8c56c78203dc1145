//! A checkpoint: a value image of a session's state at rest (between runs), from which a fresh
//! context is brought to that state without replaying the runs that made it.
//!
//! The image holds the objects the session made, as a table of [`Node`]s that refer to each
//! other by number (so cycles and shared references stay what they were), the global object's
//! own properties that a fresh context does not have, the global lexical bindings (`let`,
//! `const`, `class`; a binding still in its temporal dead zone included), and the few values
//! outside the heap that code can observe (the state of `Math.random`, the clock origin, the
//! timer counters). A built-in the state refers to (`Array.prototype`, `Math.max`) is named by
//! its number in the walk of a fresh context's built-ins ([`Slot::Intrinsic`]); the engine takes
//! a checkpoint only when every built-in is as a fresh context has it, and every object is of a
//! kind listed here: anything else (functions the session made, canvases, promises, …) is left
//! to the journal, which replays the runs since the last checkpoint.

use crate::tools::ToolSpec;
use crate::value::TypedArrayKind;

/// The state of a session at rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// `Math.random`'s generator state.
    pub random_state: u64,
    /// `performance.timeOrigin`.
    pub time_origin: f64,
    /// The last value `performance.now()` gave (a restored session's clock continues from it).
    pub performance_now: f64,
    /// The timers' creation counter and the last timer id handed out (ids are observable).
    pub timer_sequence: u64,
    pub timer_last_id: u32,
    /// The tools installed, in order.
    pub tools: Vec<ToolSpec>,
    /// The symbols the state refers to, numbered from 0.
    pub symbols: Vec<Symbol>,
    /// The objects, numbered from 0.
    pub nodes: Vec<Node>,
    /// Own properties of the global object that a fresh context does not have, in order.
    pub globals: Vec<Property>,
    /// Global lexical bindings, in the order they were made.
    pub lexicals: Vec<Lexical>,
}

/// A symbol made by the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Symbol {
    /// `Symbol(description)`.
    Local(Option<String>),
    /// `Symbol.for(key)`.
    Registered(String),
    /// A well-known symbol, by its name (`iterator` for `Symbol.iterator`).
    WellKnown(String),
}

/// A value as the image holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    Undefined,
    Null,
    Bool(bool),
    /// Any number, `-0` and `NaN` included.
    Number(f64),
    /// A BigInt in decimal.
    BigInt(String),
    String(String),
    Symbol(u32),
    /// An object of the image.
    Object(u32),
    /// A built-in, by its number in the walk of a fresh context's built-ins.
    Intrinsic(u32),
    /// A tool's global function, by its name.
    Tool(String),
}

/// A property key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    String(String),
    Symbol(u32),
    /// An array index up to [`MAX_INDEX_KEY`], which QuickJS keeps as a number, not a string:
    /// kept as one here too, so that an array's elements are neither printed nor parsed.
    Index(u32),
}

/// The largest index a [`Key::Index`] holds (QuickJS's largest integer atom); larger indices
/// are [`Key::String`]s.
pub const MAX_INDEX_KEY: u32 = (1 << 31) - 1;

/// Property attributes (the bits of QuickJS's `JS_PROP_*` flags this image keeps).
pub mod attributes {
    pub const CONFIGURABLE: u8 = 1;
    pub const WRITABLE: u8 = 2;
    pub const ENUMERABLE: u8 = 4;
    /// All the bits an image may hold.
    pub const ALL: u8 = CONFIGURABLE | WRITABLE | ENUMERABLE;
}

/// An own property.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub key: Key,
    /// [`attributes`] bits (`WRITABLE` means nothing for an accessor).
    pub attributes: u8,
    pub value: PropertyValue,
}

/// What a property holds.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    Data(Slot),
    /// A getter and setter (each a function slot, or `Undefined`).
    Accessor(Slot, Slot),
}

/// A global lexical binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Lexical {
    pub name: String,
    /// `const` (else `let` or `class`).
    pub constant: bool,
    /// Its value; `None` while it is in its temporal dead zone.
    pub value: Option<Slot>,
}

/// An object.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// `[[Prototype]]`: `Null`, an object of the image, or a built-in.
    pub prototype: Slot,
    pub extensible: bool,
    /// Own properties, in the order the object keeps them (an array's elements are among them).
    pub properties: Vec<Property>,
}

/// What kind of object a node is, with what it holds besides its properties.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An ordinary object.
    Object,
    /// An array (its `length` is one of its properties).
    Array,
    /// An error object (`message`, `stack`, `cause` are properties).
    Error,
    /// A `Date` with its time value.
    Date(f64),
    /// A regular expression; `lastIndex` is a property.
    RegExp { source: String, flags: String },
    /// `new Number(…)`, `new String(…)`, `new Boolean(…)`, `Object(1n)`, `Object(Symbol())`.
    Boxed(Slot),
    /// A `Map`'s entries in order.
    Map(Vec<(Slot, Slot)>),
    /// A `Set`'s values in order.
    Set(Vec<Slot>),
    /// An `ArrayBuffer`'s bytes; `max_length` when it is resizable; `detached` once transferred.
    ArrayBuffer {
        bytes: Vec<u8>,
        max_length: Option<u64>,
        detached: bool,
    },
    /// A typed array over the buffer `buffer` (a node); `length` is `None` for a view that
    /// tracks a resizable buffer's length.
    TypedArray {
        kind: TypedArrayKind,
        buffer: u32,
        byte_offset: u64,
        length: Option<u64>,
    },
    /// A `DataView` over the buffer `buffer`; `byte_length` as for a typed array.
    DataView {
        buffer: u32,
        byte_offset: u64,
        byte_length: Option<u64>,
    },
}
