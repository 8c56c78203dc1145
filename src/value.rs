//! The value model shared by the engine and the napi layer: what a sandbox value becomes when it
//! crosses to the host (DESIGN.md "Values across the boundary"). A tree of owned data: nothing in
//! it refers to either heap, so it can move between threads.

/// A copied JS value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Undefined,
    Null,
    Bool(bool),
    /// Any JS number, `NaN` and `-0` included.
    Number(f64),
    /// A BigInt in decimal notation (`-12`), which is how both engines can rebuild it exactly.
    BigInt(String),
    String(String),
    /// An array; `None` marks a hole, which stays a hole on the other side.
    Array(Vec<Option<Value>>),
    /// A plain object's own enumerable string-keyed properties, in order.
    Object(Vec<(String, Value)>),
    /// A `Date`, as milliseconds since the epoch (`NaN` for an invalid date).
    Date(f64),
    RegExp {
        source: String,
        flags: String,
    },
    Map(Vec<(Value, Value)>),
    Set(Vec<Value>),
    Error {
        name: String,
        message: String,
        stack: Option<String>,
    },
    /// A value that cannot be copied (a function, a symbol, a cycle back to an enclosing
    /// object), replaced by how `util.inspect` prints it, so that an output never fails a run.
    Uncloneable(String),
}
