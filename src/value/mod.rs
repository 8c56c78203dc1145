//! The value model shared by the engine and the napi layer: what a value becomes while it crosses
//! between the host and a sandbox (docs/contract.md "Values across the boundary"). It follows
//! structured-clone semantics (what `postMessage` copies) and holds only owned data, so it can move
//! between threads and nothing in it refers to either heap.
//!
//! Cycles and shared references survive the copy. Every *object* variant (`Array`, `Object`,
//! `Date`, `RegExp`, `Map`, `Set`, `Error`, `ArrayBuffer`, `TypedArray`) is numbered 0, 1, 2, …
//! in the order a depth-first, pre-order walk meets it (a node gets its number before its
//! children are visited), and a later occurrence of the same object is `Ref(number)`. Both
//! sides number the same way, so `Ref` needs no explicit ids on the object variants.

pub mod walk;

/// A copied JS value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Undefined,
    Null,
    Bool(bool),
    /// Any JS number, `NaN` and `-0` included.
    Number(f64),
    /// A BigInt in decimal notation (`-12`), from which both engines rebuild it exactly.
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
    /// An `Error` (or subclass: `name` says which); the stack is the sandbox's own, never the
    /// host's.
    Error {
        name: String,
        message: String,
        stack: Option<String>,
    },
    ArrayBuffer(Vec<u8>),
    /// A typed array view; `buffer` is an `ArrayBuffer` or a `Ref` to one, so views that share a
    /// buffer still share it after the copy.
    TypedArray {
        kind: TypedArrayKind,
        buffer: Box<Value>,
        byte_offset: usize,
        length: usize,
    },
    /// The object numbered so (see the module documentation) met again: a cycle or a shared
    /// reference.
    Ref(usize),
    /// A value that cannot be copied (a function, a symbol, a Proxy), replaced by how
    /// `util.inspect` prints it, so that an output never fails a run.
    Uncloneable(String),
}

/// The typed array classes structured clone copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypedArrayKind {
    Int8,
    Uint8,
    Uint8Clamped,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Float32,
    Float64,
    BigInt64,
    BigUint64,
}

impl TypedArrayKind {
    /// Every kind, in the order above.
    pub const ALL: [TypedArrayKind; 11] = [
        Self::Int8,
        Self::Uint8,
        Self::Uint8Clamped,
        Self::Int16,
        Self::Uint16,
        Self::Int32,
        Self::Uint32,
        Self::Float32,
        Self::Float64,
        Self::BigInt64,
        Self::BigUint64,
    ];

    /// The constructor's name (`"Uint8Array"`, …).
    pub fn constructor_name(self) -> &'static str {
        match self {
            Self::Int8 => "Int8Array",
            Self::Uint8 => "Uint8Array",
            Self::Uint8Clamped => "Uint8ClampedArray",
            Self::Int16 => "Int16Array",
            Self::Uint16 => "Uint16Array",
            Self::Int32 => "Int32Array",
            Self::Uint32 => "Uint32Array",
            Self::Float32 => "Float32Array",
            Self::Float64 => "Float64Array",
            Self::BigInt64 => "BigInt64Array",
            Self::BigUint64 => "BigUint64Array",
        }
    }

    /// Bytes per element.
    pub fn element_size(self) -> usize {
        match self {
            Self::Int8 | Self::Uint8 | Self::Uint8Clamped => 1,
            Self::Int16 | Self::Uint16 => 2,
            Self::Int32 | Self::Uint32 | Self::Float32 => 4,
            Self::Float64 | Self::BigInt64 | Self::BigUint64 => 8,
        }
    }
}

/// Why a value was not copied: a part that cannot be copied where copies are required
/// (variables, tool arguments and results), or any copy past a size limit ([`SizeLimit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloneError {
    /// Where the part sits, from the root's name: `variables.cfg.onDone`, `args[1].list[0]`.
    pub path: String,
    /// `"a function"`, `"a symbol"`, …; for a limit, the limit's own account of what passed it.
    pub what: String,
    /// The limit the copy stopped at, if that is why.
    pub limit: Option<SizeLimit>,
}

impl std::fmt::Display for CloneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.limit {
            Some(_) => write!(f, "{} is {}", self.path, self.what),
            None => write!(
                f,
                "{} is {}, which cannot be copied (values cross as structured clones)",
                self.path, self.what
            ),
        }
    }
}

impl std::error::Error for CloneError {}

/// A size limit a copy stopped at. Every copy is delivered whole or fails with one of these:
/// nothing is cut short or dropped without saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimit {
    /// The limit: `maxValueBytes` (the option), or a fixed limit of every copy
    /// (`maxCopyDepth`, `maxArrayLength`, `maxArrayHoles`).
    pub name: &'static str,
    /// Its value.
    pub max: u64,
    /// What the copy met: the bytes counted when it stopped (the value is at least that large),
    /// the nesting depth, the array's length or its holes.
    pub size: u64,
}

impl SizeLimit {
    /// The fixed limit on nesting (see [`MAX_DEPTH`]).
    pub fn depth(size: u64) -> Self {
        Self {
            name: "maxCopyDepth",
            max: MAX_DEPTH as u64,
            size,
        }
    }

    /// The fixed limit on an array's length (see [`MAX_ARRAY_LENGTH`]).
    pub fn array_length(size: u64) -> Self {
        Self {
            name: "maxArrayLength",
            max: MAX_ARRAY_LENGTH,
            size,
        }
    }

    /// The fixed limit on an array's holes (see [`MAX_HOLES`]).
    pub fn array_holes(size: u64) -> Self {
        Self {
            name: "maxArrayHoles",
            max: MAX_HOLES as u64,
            size,
        }
    }

    /// The `maxValueBytes` option, passed at `size` bytes.
    pub fn value_bytes(max: u64, size: u64) -> Self {
        Self {
            name: "maxValueBytes",
            max,
            size,
        }
    }
}

impl std::fmt::Display for SizeLimit {
    /// What passed the limit, as it reads after "… is".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (size, max) = (self.size, self.max);
        match self.name {
            "maxValueBytes" => write!(
                f,
                "at least {size} bytes, more than maxValueBytes ({max}) allows for one value"
            ),
            "maxCopyDepth" => write!(
                f,
                "nested more than {max} levels deep, more than a copy takes (maxCopyDepth)"
            ),
            "maxArrayLength" => write!(
                f,
                "an array of {size} elements, more than the {max} a copy takes (maxArrayLength)"
            ),
            _ => write!(
                f,
                "an array with more than {max} holes, more than a copy takes (maxArrayHoles)"
            ),
        }
    }
}

/// The error classes a copy recreates by name, as structured clone does; an error of any other
/// `name` arrives as an `Error` that keeps the name.
pub const ERROR_NAMES: [&str; 7] = [
    "Error",
    "TypeError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "EvalError",
    "URIError",
];

/// Objects nested deeper than this are not copied, on either side: whatever receives a copy
/// (`util.inspect`, `JSON.stringify`, a `Value`'s own drop) recurses over it, and hostile nesting
/// must not exhaust a thread's stack there.
pub const MAX_DEPTH: usize = 1000;
/// Arrays longer than this are not copied, however sparse: copying visits every index.
pub const MAX_ARRAY_LENGTH: u64 = 1 << 24;
/// Arrays with more holes than this are not copied: a hole costs its heap nothing but takes a
/// slot of the copy, so `[, , …]` with a huge length would turn bytes into gigabytes.
pub const MAX_HOLES: usize = 1 << 20;

/// One step from a value down to a part of it, as [`CloneError::path`] spells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// An object property: `.name`, or `["a-b"]` when the key is not an identifier.
    Key(String),
    /// An array element: `[3]`.
    Index(usize),
    /// The key of a Map's entry number `n` (in insertion order): `.keys()[n]`.
    MapKey(usize),
    /// The value stored under a key, shown as its inspect string: `.get('onDone')`.
    MapValue(String),
    /// A Set's item number `n` (in insertion order): `.values()[n]`.
    SetItem(usize),
}

impl CloneError {
    /// A refusal of `what`, found by following `steps` (outermost first) from `root`.
    pub fn at<'s>(root: &str, steps: impl IntoIterator<Item = &'s PathStep>, what: String) -> Self {
        Self::stopped(root, steps, what, None)
    }

    /// [`CloneError::at`], stopped at `limit` when one is given.
    pub fn stopped<'s>(
        root: &str,
        steps: impl IntoIterator<Item = &'s PathStep>,
        what: String,
        limit: Option<SizeLimit>,
    ) -> Self {
        let mut path = root.to_string();
        for step in steps {
            match step {
                PathStep::Key(key) if is_identifier(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                PathStep::Key(key) => {
                    let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"));
                    path.push_str(&format!("[{quoted}]"));
                }
                PathStep::Index(index) => path.push_str(&format!("[{index}]")),
                PathStep::MapKey(index) => path.push_str(&format!(".keys()[{index}]")),
                PathStep::MapValue(key) => path.push_str(&format!(".get({key})")),
                PathStep::SetItem(index) => path.push_str(&format!(".values()[{index}]")),
            }
        }
        CloneError { path, what, limit }
    }
}

/// A class name as [`CloneError::what`] says it: `"a WeakMap"`, `"an Arguments"`.
pub fn with_article(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// Whether `key` can follow a dot in JS source (`$`, `_`, letters, then digits too).
fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first == '$' || first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '$' || c == '_' || c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clone_error_paths_read_like_js() {
        let steps = [
            PathStep::Key("cfg".into()),
            PathStep::Key("a-b".into()),
            PathStep::Index(3),
            PathStep::MapValue("'onDone'".into()),
            PathStep::MapKey(0),
            PathStep::SetItem(2),
            PathStep::Key("$ok_1".into()),
            PathStep::Key("1x".into()),
        ];
        let error = CloneError::at("variables", &steps, "a function".into());
        assert_eq!(
            error.path,
            r#"variables.cfg["a-b"][3].get('onDone').keys()[0].values()[2].$ok_1["1x"]"#
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{} is a function, which cannot be copied (values cross as structured clones)",
                error.path
            )
        );
    }
}
