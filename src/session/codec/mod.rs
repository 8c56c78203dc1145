//! The binary form of a [`Session`]: what `snapshot()` writes inside its seal (`seal.rs`) and
//! `restore()` reads back, from bytes nobody vouches for.
//!
//! Written by hand rather than derived with serde: the reader must hold its own limits on input
//! anyone can write. Every length is checked against the bytes that are left before anything is
//! allocated for it (a count of a billion elements in a ten-byte input fails at once, it does not
//! reserve memory), nesting is counted (a value nested deeper than [`MAX_DEPTH`], the bound every
//! copy of a value keeps, is refused: the reader, and the value's own drop, recurse over it), and
//! every failure is a [`CodecError`] that says where and what, never a panic. Numbers are LEB128
//! varints, floats little-endian IEEE 754 bits, text UTF-8 with its byte length first.

use std::sync::Arc;

use super::image::{self, Image, Kind, Lexical, Node, Property, PropertyValue, Slot};
use super::{Event, Journal, Origin, Outcome, PausedCall, RunEnd, RunRecord, Session, Step, Terms};
use crate::modules::{ModuleExport, ModuleSpec};
use crate::options::LogLevel;
use crate::tools::{ToolFailure, ToolResult, ToolSpec};
use crate::value::{TypedArrayKind, Value, MAX_DEPTH};

/// Why bytes are not a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The bytes end before the session does.
    #[error("truncated: the bytes end at offset {at}, inside {what}")]
    Truncated { at: usize, what: &'static str },
    /// A field holds something it cannot hold.
    #[error("malformed at offset {at}: {what}")]
    Malformed { at: usize, what: String },
    /// Bytes are left after the session.
    #[error("{0} bytes follow the end of the session")]
    Trailing(usize),
}

/// Writes the session made under `terms` whose journal is `journal`.
pub fn encode(terms: &Terms, journal: &Journal) -> Vec<u8> {
    let mut out = Writer(Vec::with_capacity(1024));
    out.terms(terms);
    out.journal(journal);
    out.0
}

/// The SHA-256 of a registered module's canonical encoding (its source text, or its exports:
/// names, data values, and which are functions), which a session's terms name it by.
pub fn module_digest(spec: &ModuleSpec) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut out = Writer(Vec::new());
    match spec {
        ModuleSpec::Source(source) => {
            out.u8(0);
            out.str(source);
        }
        ModuleSpec::Object(exports) => {
            out.u8(1);
            out.len(exports.len());
            for (name, export) in exports {
                out.str(name);
                match export {
                    ModuleExport::Data(value) => {
                        out.u8(0);
                        out.value(value);
                    }
                    ModuleExport::Function => out.u8(1),
                }
            }
        }
    }
    Sha256::digest(&out.0).into()
}

/// Reads a session from all of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Session, CodecError> {
    let mut reader = Reader { bytes, at: 0 };
    let terms = reader.terms()?;
    let journal = reader.journal()?;
    match bytes.len() - reader.at {
        0 => Ok(Session { terms, journal }),
        left => Err(CodecError::Trailing(left)),
    }
}

mod tag {
    // Values.
    pub const UNDEFINED: u8 = 0;
    pub const NULL: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const TRUE: u8 = 3;
    pub const NUMBER: u8 = 4;
    pub const BIGINT: u8 = 5;
    pub const STRING: u8 = 6;
    pub const ARRAY: u8 = 7;
    pub const OBJECT: u8 = 8;
    pub const DATE: u8 = 9;
    pub const REGEXP: u8 = 10;
    pub const MAP: u8 = 11;
    pub const SET: u8 = 12;
    pub const ERROR: u8 = 13;
    pub const ARRAY_BUFFER: u8 = 14;
    pub const TYPED_ARRAY: u8 = 15;
    pub const REF: u8 = 16;
    pub const UNCLONEABLE: u8 = 17;
    /// An array element that is a hole.
    pub const HOLE: u8 = 18;
    // Image slots beyond the primitives above.
    pub const SYMBOL: u8 = 19;
    pub const NODE: u8 = 20;
    pub const INTRINSIC: u8 = 21;
    pub const TOOL: u8 = 22;
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, byte: u8) {
        self.0.push(byte);
    }

    fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    fn varint(&mut self, mut value: u64) {
        loop {
            let low = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                self.u8(low);
                return;
            }
            self.u8(low | 0x80);
        }
    }

    fn len(&mut self, len: usize) {
        self.varint(len as u64);
    }

    fn f64(&mut self, value: f64) {
        self.0.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.0.extend_from_slice(bytes);
    }

    fn str(&mut self, text: &str) {
        self.bytes(text.as_bytes());
    }

    fn option_str(&mut self, text: Option<&str>) {
        match text {
            Some(text) => {
                self.u8(1);
                self.str(text);
            }
            None => self.u8(0),
        }
    }

    fn terms(&mut self, terms: &Terms) {
        self.bool(terms.timers);
        self.len(terms.authorized_imports.len());
        for name in &terms.authorized_imports {
            self.str(name);
        }
        self.len(terms.modules.len());
        for (name, digest) in &terms.modules {
            self.str(name);
            self.0.extend_from_slice(digest);
        }
        self.varint(u64::from(terms.max_canvas_size));
        self.varint(terms.max_value_bytes);
        self.varint(terms.max_stack_bytes as u64);
        self.len(terms.log_levels.len());
        for level in &terms.log_levels {
            self.u8(level_code(*level));
        }
    }

    fn journal(&mut self, journal: &Journal) {
        match &journal.origin {
            Origin::Fresh {
                random_seed,
                time_origin,
            } => {
                self.u8(0);
                self.varint(*random_seed);
                self.f64(*time_origin);
            }
            Origin::Checkpoint(image) => {
                self.u8(1);
                self.image(image);
            }
        }
        self.len(journal.steps.len());
        for step in &journal.steps {
            self.step(step);
        }
    }

    fn tools(&mut self, tools: &[ToolSpec]) {
        self.len(tools.len());
        for tool in tools {
            self.str(&tool.name);
            match &tool.inputs {
                Some(inputs) => {
                    self.u8(1);
                    self.len(inputs.len());
                    for input in inputs {
                        self.str(input);
                    }
                }
                None => self.u8(0),
            }
        }
    }

    fn step(&mut self, step: &Step) {
        match step {
            Step::Tools(tools) => {
                self.u8(0);
                self.tools(tools);
            }
            Step::Variables(variables) => {
                self.u8(1);
                self.len(variables.len());
                for (name, value) in variables {
                    self.str(name);
                    self.value(value);
                }
            }
            Step::Run(run) => {
                self.u8(2);
                self.run(run);
            }
        }
    }

    fn run(&mut self, run: &RunRecord) {
        self.str(&run.code);
        match &run.input {
            Some(input) => {
                self.u8(1);
                self.value(input);
            }
            None => self.u8(0),
        }
        self.varint(run.max_operations);
        self.len(run.events.len());
        for event in &run.events {
            self.event(event);
        }
        match &run.end {
            Some(end) => {
                self.u8(1);
                self.u8(match end.outcome {
                    Outcome::Completed => 0,
                    Outcome::FinalAnswer => 1,
                    Outcome::Failed => 2,
                });
                self.varint(end.operations);
                self.varint(u64::from(end.calls));
            }
            None => self.u8(0),
        }
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::Clock(value) => {
                self.u8(0);
                self.f64(*value);
            }
            Event::Returned(result) => {
                self.u8(1);
                self.tool_result(result);
            }
            Event::Pending => self.u8(2),
            Event::Settled(call, result) => {
                self.u8(3);
                self.varint(u64::from(*call));
                self.tool_result(result);
            }
            Event::Timer(sequence) => {
                self.u8(4);
                self.varint(*sequence);
            }
            Event::Paused(paused) => {
                self.u8(6);
                self.varint(u64::from(paused.call));
                self.str(&paused.tool);
                self.len(paused.args.len());
                for arg in &paused.args {
                    self.value(arg);
                }
                self.option_varint(paused.line.map(u64::from));
                self.value(&paused.reason);
            }
        }
    }

    fn tool_result(&mut self, result: &ToolResult) {
        match result {
            Ok(value) => {
                self.u8(0);
                self.value(value);
            }
            Err(failure) => {
                self.u8(1);
                self.str(&failure.name);
                self.str(&failure.message);
                self.bool(failure.retryable);
            }
        }
    }

    /// Written without recursion (a stack of what is left to write), like every walk of a
    /// value: the thread writing may have a small stack.
    fn value(&mut self, value: &Value) {
        enum Work<'v> {
            Value(&'v Value),
            Hole,
            Key(&'v str),
            ViewTail(usize, usize),
        }
        let mut work = vec![Work::Value(value)];
        while let Some(next) = work.pop() {
            let value = match next {
                Work::Value(value) => value,
                Work::Hole => {
                    self.u8(tag::HOLE);
                    continue;
                }
                Work::Key(key) => {
                    self.str(key);
                    continue;
                }
                Work::ViewTail(byte_offset, length) => {
                    self.len(byte_offset);
                    self.len(length);
                    continue;
                }
            };
            match value {
                Value::Undefined => self.u8(tag::UNDEFINED),
                Value::Null => self.u8(tag::NULL),
                Value::Bool(false) => self.u8(tag::FALSE),
                Value::Bool(true) => self.u8(tag::TRUE),
                Value::Number(number) => {
                    self.u8(tag::NUMBER);
                    self.f64(*number);
                }
                Value::BigInt(digits) => {
                    self.u8(tag::BIGINT);
                    self.str(digits);
                }
                Value::String(text) => {
                    self.u8(tag::STRING);
                    self.str(text);
                }
                Value::Array(items) => {
                    self.u8(tag::ARRAY);
                    self.len(items.len());
                    work.extend(items.iter().rev().map(|item| match item {
                        Some(item) => Work::Value(item),
                        None => Work::Hole,
                    }));
                }
                Value::Object(entries) => {
                    self.u8(tag::OBJECT);
                    self.len(entries.len());
                    for (key, value) in entries.iter().rev() {
                        work.push(Work::Value(value));
                        work.push(Work::Key(key));
                    }
                }
                Value::Date(time) => {
                    self.u8(tag::DATE);
                    self.f64(*time);
                }
                Value::RegExp { source, flags } => {
                    self.u8(tag::REGEXP);
                    self.str(source);
                    self.str(flags);
                }
                Value::Map(entries) => {
                    self.u8(tag::MAP);
                    self.len(entries.len());
                    for (key, value) in entries.iter().rev() {
                        work.push(Work::Value(value));
                        work.push(Work::Value(key));
                    }
                }
                Value::Set(items) => {
                    self.u8(tag::SET);
                    self.len(items.len());
                    work.extend(items.iter().rev().map(Work::Value));
                }
                Value::Error {
                    name,
                    message,
                    stack,
                } => {
                    self.u8(tag::ERROR);
                    self.str(name);
                    self.str(message);
                    self.option_str(stack.as_deref());
                }
                Value::ArrayBuffer(bytes) => {
                    self.u8(tag::ARRAY_BUFFER);
                    self.bytes(bytes);
                }
                Value::TypedArray {
                    kind,
                    buffer,
                    byte_offset,
                    length,
                } => {
                    self.u8(tag::TYPED_ARRAY);
                    self.u8(typed_array_code(*kind));
                    work.push(Work::ViewTail(*byte_offset, *length));
                    work.push(Work::Value(buffer));
                }
                Value::Ref(index) => {
                    self.u8(tag::REF);
                    self.len(*index);
                }
                Value::Uncloneable(text) => {
                    self.u8(tag::UNCLONEABLE);
                    self.str(text);
                }
            }
        }
    }

    fn image(&mut self, image: &Image) {
        self.varint(image.random_state);
        self.f64(image.time_origin);
        self.f64(image.performance_now);
        self.varint(image.timer_sequence);
        self.varint(u64::from(image.timer_last_id));
        self.tools(&image.tools);
        self.len(image.symbols.len());
        for symbol in &image.symbols {
            match symbol {
                image::Symbol::Local(description) => {
                    self.u8(0);
                    self.option_str(description.as_deref());
                }
                image::Symbol::Registered(key) => {
                    self.u8(1);
                    self.str(key);
                }
                image::Symbol::WellKnown(name) => {
                    self.u8(2);
                    self.str(name);
                }
            }
        }
        self.len(image.nodes.len());
        for node in &image.nodes {
            self.node(node);
        }
        self.properties(&image.globals);
        self.len(image.lexicals.len());
        for lexical in &image.lexicals {
            self.str(&lexical.name);
            self.bool(lexical.constant);
            match &lexical.value {
                Some(value) => {
                    self.u8(1);
                    self.slot(value);
                }
                None => self.u8(0),
            }
        }
    }

    fn node(&mut self, node: &Node) {
        match &node.kind {
            Kind::Object => self.u8(0),
            Kind::Array => self.u8(1),
            Kind::Error => self.u8(2),
            Kind::Date(time) => {
                self.u8(3);
                self.f64(*time);
            }
            Kind::RegExp { source, flags } => {
                self.u8(4);
                self.str(source);
                self.str(flags);
            }
            Kind::Boxed(value) => {
                self.u8(5);
                self.slot(value);
            }
            Kind::Map(entries) => {
                self.u8(6);
                self.len(entries.len());
                for (key, value) in entries {
                    self.slot(key);
                    self.slot(value);
                }
            }
            Kind::Set(items) => {
                self.u8(7);
                self.len(items.len());
                for item in items {
                    self.slot(item);
                }
            }
            Kind::ArrayBuffer {
                bytes,
                max_length,
                detached,
            } => {
                self.u8(8);
                self.bytes(bytes);
                self.option_varint(*max_length);
                self.bool(*detached);
            }
            Kind::TypedArray {
                kind,
                buffer,
                byte_offset,
                length,
            } => {
                self.u8(9);
                self.u8(typed_array_code(*kind));
                self.varint(u64::from(*buffer));
                self.varint(*byte_offset);
                self.option_varint(*length);
            }
            Kind::DataView {
                buffer,
                byte_offset,
                byte_length,
            } => {
                self.u8(10);
                self.varint(u64::from(*buffer));
                self.varint(*byte_offset);
                self.option_varint(*byte_length);
            }
        }
        self.slot(&node.prototype);
        self.bool(node.extensible);
        self.properties(&node.properties);
    }

    fn option_varint(&mut self, value: Option<u64>) {
        match value {
            Some(value) => {
                self.u8(1);
                self.varint(value);
            }
            None => self.u8(0),
        }
    }

    fn properties(&mut self, properties: &[Property]) {
        self.len(properties.len());
        for property in properties {
            match &property.key {
                image::Key::String(name) => {
                    self.u8(0);
                    self.str(name);
                }
                image::Key::Index(index) => {
                    self.u8(2);
                    self.varint(u64::from(*index));
                }
                image::Key::Symbol(index) => {
                    self.u8(1);
                    self.varint(u64::from(*index));
                }
            }
            self.u8(property.attributes);
            match &property.value {
                PropertyValue::Data(value) => {
                    self.u8(0);
                    self.slot(value);
                }
                PropertyValue::Accessor(get, set) => {
                    self.u8(1);
                    self.slot(get);
                    self.slot(set);
                }
            }
        }
    }

    fn slot(&mut self, slot: &Slot) {
        match slot {
            Slot::Undefined => self.u8(tag::UNDEFINED),
            Slot::Null => self.u8(tag::NULL),
            Slot::Bool(false) => self.u8(tag::FALSE),
            Slot::Bool(true) => self.u8(tag::TRUE),
            Slot::Number(number) => {
                self.u8(tag::NUMBER);
                self.f64(*number);
            }
            Slot::BigInt(digits) => {
                self.u8(tag::BIGINT);
                self.str(digits);
            }
            Slot::String(text) => {
                self.u8(tag::STRING);
                self.str(text);
            }
            Slot::Symbol(index) => {
                self.u8(tag::SYMBOL);
                self.varint(u64::from(*index));
            }
            Slot::Object(index) => {
                self.u8(tag::NODE);
                self.varint(u64::from(*index));
            }
            Slot::Intrinsic(index) => {
                self.u8(tag::INTRINSIC);
                self.varint(u64::from(*index));
            }
            Slot::Tool(name) => {
                self.u8(tag::TOOL);
                self.str(name);
            }
        }
    }
}

/// A container the value reader is filling, with how many parts it still expects.
enum Open {
    Array(Vec<Option<Value>>, usize),
    /// Entries, how many are left, and the key read for the next one.
    Object(Vec<(String, Value)>, usize, Option<String>),
    /// Entries, how many are left, and the key read for the next one.
    Map(Vec<(Value, Value)>, usize, Option<Value>),
    Set(Vec<Value>, usize),
    /// A typed array whose buffer comes next.
    View(TypedArrayKind),
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Reader<'_> {
    fn malformed(&self, what: impl Into<String>) -> CodecError {
        CodecError::Malformed {
            at: self.at,
            what: what.into(),
        }
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, CodecError> {
        let byte = *self
            .bytes
            .get(self.at)
            .ok_or(CodecError::Truncated { at: self.at, what })?;
        self.at += 1;
        Ok(byte)
    }

    fn bool(&mut self, what: &'static str) -> Result<bool, CodecError> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(self.malformed(format!("{what}: {other} is not a boolean"))),
        }
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, CodecError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8(what)?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(self.malformed(format!("{what}: a number past 64 bits")));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.malformed(format!("{what}: a number past 64 bits")))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, CodecError> {
        let value = self.varint(what)?;
        u32::try_from(value).map_err(|_| self.malformed(format!("{what}: {value} is too large")))
    }

    fn usize(&mut self, what: &'static str) -> Result<usize, CodecError> {
        let value = self.varint(what)?;
        usize::try_from(value).map_err(|_| self.malformed(format!("{what}: {value} is too large")))
    }

    /// A count of items that each take at least one byte: never more than the bytes left, so
    /// that nothing is reserved for items the input cannot hold.
    fn count(&mut self, what: &'static str) -> Result<usize, CodecError> {
        let count = self.usize(what)?;
        let left = self.bytes.len() - self.at;
        if count > left {
            return Err(CodecError::Truncated {
                at: self.bytes.len(),
                what,
            });
        }
        Ok(count)
    }

    fn f64(&mut self, what: &'static str) -> Result<f64, CodecError> {
        let end = self
            .at
            .checked_add(8)
            .filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return Err(CodecError::Truncated {
                at: self.bytes.len(),
                what,
            });
        };
        let mut bits = [0u8; 8];
        bits.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(f64::from_bits(u64::from_le_bytes(bits)))
    }

    fn raw(&mut self, len: usize, what: &'static str) -> Result<&[u8], CodecError> {
        let end = self
            .at
            .checked_add(len)
            .filter(|end| *end <= self.bytes.len());
        let Some(end) = end else {
            return Err(CodecError::Truncated {
                at: self.bytes.len(),
                what,
            });
        };
        let bytes = &self.bytes[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn bytes(&mut self, what: &'static str) -> Result<Vec<u8>, CodecError> {
        let len = self.usize(what)?;
        self.raw(len, what).map(<[u8]>::to_vec)
    }

    fn string(&mut self, what: &'static str) -> Result<String, CodecError> {
        let len = self.usize(what)?;
        let start = self.at;
        let raw = self.raw(len, what)?;
        match std::str::from_utf8(raw) {
            Ok(text) => Ok(text.to_owned()),
            Err(_) => Err(CodecError::Malformed {
                at: start,
                what: format!("{what}: not UTF-8"),
            }),
        }
    }

    fn option_string(&mut self, what: &'static str) -> Result<Option<String>, CodecError> {
        if self.bool(what)? {
            self.string(what).map(Some)
        } else {
            Ok(None)
        }
    }

    fn option_varint(&mut self, what: &'static str) -> Result<Option<u64>, CodecError> {
        if self.bool(what)? {
            self.varint(what).map(Some)
        } else {
            Ok(None)
        }
    }

    fn terms(&mut self) -> Result<Terms, CodecError> {
        let timers = self.bool("the timers option")?;
        let imports = self.count("authorizedImports")?;
        let authorized_imports = (0..imports)
            .map(|_| self.string("authorizedImports"))
            .collect::<Result<_, _>>()?;
        let count = self.count("modules")?;
        let mut modules = Vec::with_capacity(count);
        for _ in 0..count {
            let name = self.string("a module's name")?;
            let mut digest = [0u8; 32];
            digest.copy_from_slice(self.raw(32, "a module's digest")?);
            modules.push((name, digest));
        }
        let max_canvas_size = self.u32("maxCanvasSize")?;
        let max_value_bytes = self.varint("maxValueBytes")?;
        let max_stack_bytes = self.usize("maxStackBytes")?;
        let levels = self.count("collectConsoleLevels")?;
        let log_levels = (0..levels)
            .map(|_| {
                let code = self.u8("collectConsoleLevels")?;
                level_of(code)
                    .ok_or_else(|| self.malformed(format!("{code} is not a console level")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Terms {
            timers,
            authorized_imports,
            modules,
            max_canvas_size,
            max_value_bytes,
            max_stack_bytes,
            log_levels,
        })
    }

    fn journal(&mut self) -> Result<Journal, CodecError> {
        let origin = match self.u8("the session's origin")? {
            0 => Origin::Fresh {
                random_seed: self.varint("the random seed")?,
                time_origin: self.f64("the clock origin")?,
            },
            1 => Origin::Checkpoint(Arc::new(self.image()?)),
            other => return Err(self.malformed(format!("{other} is not an origin"))),
        };
        let count = self.count("the steps")?;
        let mut steps = Vec::with_capacity(count);
        for _ in 0..count {
            steps.push(self.step()?);
        }
        Ok(Journal { origin, steps })
    }

    fn tools(&mut self) -> Result<Vec<ToolSpec>, CodecError> {
        let count = self.count("tools")?;
        let mut tools = Vec::with_capacity(count);
        for _ in 0..count {
            let name = self.string("a tool's name")?;
            let inputs = if self.bool("a tool's inputs")? {
                let inputs = self.count("a tool's inputs")?;
                Some(
                    (0..inputs)
                        .map(|_| self.string("a tool's input"))
                        .collect::<Result<_, _>>()?,
                )
            } else {
                None
            };
            tools.push(ToolSpec { name, inputs });
        }
        Ok(tools)
    }

    fn step(&mut self) -> Result<Step, CodecError> {
        match self.u8("a step")? {
            0 => Ok(Step::Tools(self.tools()?)),
            1 => {
                let count = self.count("variables")?;
                let mut variables = Vec::with_capacity(count);
                for _ in 0..count {
                    let name = self.string("a variable's name")?;
                    variables.push((name, self.value()?));
                }
                Ok(Step::Variables(variables))
            }
            2 => Ok(Step::Run(self.run()?)),
            other => Err(self.malformed(format!("{other} is not a step"))),
        }
    }

    fn run(&mut self) -> Result<RunRecord, CodecError> {
        let code = self.string("a run's code")?;
        let input = if self.bool("a run's input")? {
            Some(self.value()?)
        } else {
            None
        };
        let max_operations = self.varint("a run's maxOperations")?;
        let count = self.count("a run's events")?;
        let mut events = Vec::with_capacity(count);
        for _ in 0..count {
            events.push(self.event()?);
        }
        let end = if self.bool("a run's end")? {
            let outcome = match self.u8("a run's outcome")? {
                0 => Outcome::Completed,
                1 => Outcome::FinalAnswer,
                2 => Outcome::Failed,
                other => return Err(self.malformed(format!("{other} is not an outcome"))),
            };
            Some(RunEnd {
                outcome,
                operations: self.varint("a run's operations")?,
                calls: self.u32("a run's calls")?,
            })
        } else {
            None
        };
        Ok(RunRecord {
            code,
            input,
            max_operations,
            events,
            end,
        })
    }

    fn event(&mut self) -> Result<Event, CodecError> {
        match self.u8("an event")? {
            0 => Ok(Event::Clock(self.f64("a clock read")?)),
            1 => Ok(Event::Returned(self.tool_result()?)),
            2 => Ok(Event::Pending),
            3 => {
                let call = self.u32("a settled call")?;
                Ok(Event::Settled(call, self.tool_result()?))
            }
            4 => Ok(Event::Timer(self.varint("a timer")?)),
            6 => {
                let call = self.u32("a paused call")?;
                let tool = self.string("a paused call's tool")?;
                let count = self.count("a paused call's arguments")?;
                let mut args = Vec::with_capacity(count);
                for _ in 0..count {
                    args.push(self.value()?);
                }
                let line = match self.option_varint("a paused call's line")? {
                    Some(line) => Some(u32::try_from(line).map_err(|_| {
                        self.malformed(format!("a paused call's line: {line} is too large"))
                    })?),
                    None => None,
                };
                Ok(Event::Paused(Box::new(PausedCall {
                    call,
                    tool,
                    args,
                    line,
                    reason: self.value()?,
                })))
            }
            other => Err(self.malformed(format!("{other} is not an event"))),
        }
    }

    fn tool_result(&mut self) -> Result<ToolResult, CodecError> {
        match self.u8("a tool's answer")? {
            0 => Ok(Ok(self.value()?)),
            1 => Ok(Err(ToolFailure {
                name: self.string("a tool failure's name")?,
                message: self.string("a tool failure's message")?,
                retryable: self.bool("a tool failure's retryability")?,
            })),
            other => Err(self.malformed(format!("{other} is not a tool answer"))),
        }
    }

    /// Read without recursion: a stack of the containers being filled, at most [`MAX_DEPTH`]
    /// deep, so neither this reader nor the value's later walks run out of stack.
    fn value(&mut self) -> Result<Value, CodecError> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            // Key of the next object entry, or a hole in an array, come before a value.
            match open.last_mut() {
                Some(Open::Object(_, left, key @ None)) if *left > 0 => {
                    *key = Some(self.string("a key")?);
                }
                Some(Open::Array(items, left))
                    if *left > 0 && self.bytes.get(self.at) == Some(&tag::HOLE) =>
                {
                    self.at += 1;
                    items.push(None);
                    *left -= 1;
                    if let Some(finished) = Self::finished(&mut open) {
                        if let Some(done) = self.deliver(&mut open, finished)? {
                            return Ok(done);
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let at = self.at;
            let tag = self.u8("a value")?;
            let container = |reader: &Self, open: &[Open]| {
                if open.len() >= MAX_DEPTH {
                    Err(reader
                        .malformed(format!("a value nested more than {MAX_DEPTH} levels deep")))
                } else {
                    Ok(())
                }
            };
            let leaf = match tag {
                tag::UNDEFINED => Value::Undefined,
                tag::NULL => Value::Null,
                tag::FALSE => Value::Bool(false),
                tag::TRUE => Value::Bool(true),
                tag::NUMBER => Value::Number(self.f64("a number")?),
                tag::BIGINT => Value::BigInt(self.string("a BigInt")?),
                tag::STRING => Value::String(self.string("a string")?),
                tag::DATE => Value::Date(self.f64("a date")?),
                tag::REGEXP => Value::RegExp {
                    source: self.string("a regexp's source")?,
                    flags: self.string("a regexp's flags")?,
                },
                tag::ERROR => Value::Error {
                    name: self.string("an error's name")?,
                    message: self.string("an error's message")?,
                    stack: self.option_string("an error's stack")?,
                },
                tag::ARRAY_BUFFER => Value::ArrayBuffer(self.bytes("an ArrayBuffer")?),
                tag::REF => Value::Ref(self.usize("a reference")?),
                tag::UNCLONEABLE => Value::Uncloneable(self.string("a description")?),
                tag::ARRAY => {
                    container(self, &open)?;
                    let count = self.count("an array")?;
                    open.push(Open::Array(Vec::with_capacity(count), count));
                    match Self::finished(&mut open) {
                        Some(empty) => empty,
                        None => continue,
                    }
                }
                tag::OBJECT => {
                    container(self, &open)?;
                    let count = self.count("an object")?;
                    open.push(Open::Object(Vec::with_capacity(count), count, None));
                    match Self::finished(&mut open) {
                        Some(empty) => empty,
                        None => continue,
                    }
                }
                tag::MAP => {
                    container(self, &open)?;
                    let count = self.count("a map")?;
                    open.push(Open::Map(Vec::with_capacity(count), count, None));
                    match Self::finished(&mut open) {
                        Some(empty) => empty,
                        None => continue,
                    }
                }
                tag::SET => {
                    container(self, &open)?;
                    let count = self.count("a set")?;
                    open.push(Open::Set(Vec::with_capacity(count), count));
                    match Self::finished(&mut open) {
                        Some(empty) => empty,
                        None => continue,
                    }
                }
                tag::TYPED_ARRAY => {
                    container(self, &open)?;
                    let code = self.u8("a typed array's kind")?;
                    let kind = typed_array_of(code).ok_or_else(|| {
                        self.malformed(format!("{code} is not a typed array kind"))
                    })?;
                    open.push(Open::View(kind));
                    continue;
                }
                other => {
                    return Err(CodecError::Malformed {
                        at,
                        what: format!("{other} is not a value"),
                    })
                }
            };
            if let Some(done) = self.deliver(&mut open, leaf)? {
                return Ok(done);
            }
        }
    }

    /// Hands a finished value to the container being filled, and each container that this
    /// finishes to the one around it; returns the outermost value once it is finished.
    fn deliver(
        &mut self,
        open: &mut Vec<Open>,
        mut value: Value,
    ) -> Result<Option<Value>, CodecError> {
        loop {
            match open.last_mut() {
                None => return Ok(Some(value)),
                Some(Open::Array(items, left)) => {
                    items.push(Some(value));
                    *left -= 1;
                }
                Some(Open::Object(entries, left, key)) => {
                    entries.push((key.take().unwrap_or_default(), value));
                    *left -= 1;
                }
                Some(Open::Map(entries, left, key)) => match key.take() {
                    None => *key = Some(value),
                    Some(key) => {
                        entries.push((key, value));
                        *left -= 1;
                    }
                },
                Some(Open::Set(items, left)) => {
                    items.push(value);
                    *left -= 1;
                }
                Some(Open::View(kind)) => {
                    let kind = *kind;
                    open.pop();
                    value = Value::TypedArray {
                        kind,
                        buffer: Box::new(value),
                        byte_offset: self.usize("a typed array's offset")?,
                        length: self.usize("a typed array's length")?,
                    };
                    continue;
                }
            }
            match Self::finished(open) {
                Some(finished) => value = finished,
                None => return Ok(None),
            }
        }
    }

    /// The innermost container, taken off the stack, if it has all its parts.
    fn finished(open: &mut Vec<Open>) -> Option<Value> {
        let done = matches!(
            open.last(),
            Some(
                Open::Array(_, 0) | Open::Object(_, 0, _) | Open::Set(_, 0) | Open::Map(_, 0, None)
            )
        );
        if !done {
            return None;
        }
        match open.pop() {
            Some(Open::Array(items, _)) => Some(Value::Array(items)),
            Some(Open::Object(entries, ..)) => Some(Value::Object(entries)),
            Some(Open::Map(entries, ..)) => Some(Value::Map(entries)),
            Some(Open::Set(items, _)) => Some(Value::Set(items)),
            _ => None,
        }
    }

    fn image(&mut self) -> Result<Image, CodecError> {
        let random_state = self.varint("the random state")?;
        let time_origin = self.f64("the clock origin")?;
        let performance_now = self.f64("the last performance.now()")?;
        let timer_sequence = self.varint("the timer sequence")?;
        let timer_last_id = self.u32("the last timer id")?;
        let tools = self.tools()?;
        let count = self.count("symbols")?;
        let mut symbols = Vec::with_capacity(count);
        for _ in 0..count {
            symbols.push(match self.u8("a symbol")? {
                0 => image::Symbol::Local(self.option_string("a symbol's description")?),
                1 => image::Symbol::Registered(self.string("a symbol's key")?),
                2 => image::Symbol::WellKnown(self.string("a well-known symbol")?),
                other => return Err(self.malformed(format!("{other} is not a symbol"))),
            });
        }
        let count = self.count("objects")?;
        let mut nodes = Vec::with_capacity(count);
        for _ in 0..count {
            nodes.push(self.node()?);
        }
        let globals = self.properties()?;
        let count = self.count("lexical bindings")?;
        let mut lexicals = Vec::with_capacity(count);
        for _ in 0..count {
            let name = self.string("a binding's name")?;
            let constant = self.bool("a binding's kind")?;
            let value = if self.bool("a binding's value")? {
                Some(self.slot()?)
            } else {
                None
            };
            lexicals.push(Lexical {
                name,
                constant,
                value,
            });
        }
        Ok(Image {
            random_state,
            time_origin,
            performance_now,
            timer_sequence,
            timer_last_id,
            tools,
            symbols,
            nodes,
            globals,
            lexicals,
        })
    }

    fn node(&mut self) -> Result<Node, CodecError> {
        let kind = match self.u8("an object's kind")? {
            0 => Kind::Object,
            1 => Kind::Array,
            2 => Kind::Error,
            3 => Kind::Date(self.f64("a date")?),
            4 => Kind::RegExp {
                source: self.string("a regexp's source")?,
                flags: self.string("a regexp's flags")?,
            },
            5 => Kind::Boxed(self.slot()?),
            6 => {
                let count = self.count("a map")?;
                let mut entries = Vec::with_capacity(count);
                for _ in 0..count {
                    let key = self.slot()?;
                    entries.push((key, self.slot()?));
                }
                Kind::Map(entries)
            }
            7 => {
                let count = self.count("a set")?;
                Kind::Set((0..count).map(|_| self.slot()).collect::<Result<_, _>>()?)
            }
            8 => Kind::ArrayBuffer {
                bytes: self.bytes("an ArrayBuffer")?,
                max_length: self.option_varint("a buffer's maximum length")?,
                detached: self.bool("a buffer's detachment")?,
            },
            9 => {
                let code = self.u8("a typed array's kind")?;
                let kind = typed_array_of(code)
                    .ok_or_else(|| self.malformed(format!("{code} is not a typed array kind")))?;
                Kind::TypedArray {
                    kind,
                    buffer: self.u32("a view's buffer")?,
                    byte_offset: self.varint("a view's offset")?,
                    length: self.option_varint("a view's length")?,
                }
            }
            10 => Kind::DataView {
                buffer: self.u32("a view's buffer")?,
                byte_offset: self.varint("a view's offset")?,
                byte_length: self.option_varint("a view's length")?,
            },
            other => return Err(self.malformed(format!("{other} is not an object kind"))),
        };
        Ok(Node {
            kind,
            prototype: self.slot()?,
            extensible: self.bool("an object's extensibility")?,
            properties: self.properties()?,
        })
    }

    fn properties(&mut self) -> Result<Vec<Property>, CodecError> {
        let count = self.count("properties")?;
        let mut properties = Vec::with_capacity(count);
        for _ in 0..count {
            let key = match self.u8("a property key")? {
                0 => image::Key::String(self.string("a property name")?),
                1 => image::Key::Symbol(self.u32("a symbol key")?),
                2 => match self.u32("an index key")? {
                    index @ 0..=image::MAX_INDEX_KEY => image::Key::Index(index),
                    index => return Err(self.malformed(format!("{index} is past the index keys"))),
                },
                other => return Err(self.malformed(format!("{other} is not a property key"))),
            };
            let attributes = self.u8("a property's attributes")?;
            if attributes & !image::attributes::ALL != 0 {
                return Err(self.malformed(format!("{attributes} is not a set of attributes")));
            }
            let value = match self.u8("a property's value")? {
                0 => PropertyValue::Data(self.slot()?),
                1 => PropertyValue::Accessor(self.slot()?, self.slot()?),
                other => return Err(self.malformed(format!("{other} is not a property value"))),
            };
            properties.push(Property {
                key,
                attributes,
                value,
            });
        }
        Ok(properties)
    }

    fn slot(&mut self) -> Result<Slot, CodecError> {
        let at = self.at;
        Ok(match self.u8("a value")? {
            tag::UNDEFINED => Slot::Undefined,
            tag::NULL => Slot::Null,
            tag::FALSE => Slot::Bool(false),
            tag::TRUE => Slot::Bool(true),
            tag::NUMBER => Slot::Number(self.f64("a number")?),
            tag::BIGINT => Slot::BigInt(self.string("a BigInt")?),
            tag::STRING => Slot::String(self.string("a string")?),
            tag::SYMBOL => Slot::Symbol(self.u32("a symbol")?),
            tag::NODE => Slot::Object(self.u32("an object")?),
            tag::INTRINSIC => Slot::Intrinsic(self.u32("a built-in")?),
            tag::TOOL => Slot::Tool(self.string("a tool's name")?),
            other => {
                return Err(CodecError::Malformed {
                    at,
                    what: format!("{other} is not a value"),
                })
            }
        })
    }
}

fn level_code(level: LogLevel) -> u8 {
    match level {
        LogLevel::Log => 0,
        LogLevel::Info => 1,
        LogLevel::Warn => 2,
        LogLevel::Error => 3,
    }
}

fn level_of(code: u8) -> Option<LogLevel> {
    LogLevel::ALL
        .into_iter()
        .find(|level| level_code(*level) == code)
}

fn typed_array_code(kind: TypedArrayKind) -> u8 {
    TypedArrayKind::ALL
        .iter()
        .position(|each| *each == kind)
        .and_then(|index| u8::try_from(index).ok())
        .unwrap_or(u8::MAX)
}

fn typed_array_of(code: u8) -> Option<TypedArrayKind> {
    TypedArrayKind::ALL.get(usize::from(code)).copied()
}

#[cfg(test)]
pub(crate) mod tests;
