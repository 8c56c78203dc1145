//! The walk over a toy heap: numbering, paths, limits and refusals, without either engine.
//!
//! Spec: docs/contract.md "Values across the boundary".

use std::collections::HashMap;

use super::*;

/// An object graph: a handle is an index into it.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    Primitive(Value),
    Function,
    Array(Vec<Option<usize>>),
    Object(Vec<(String, usize)>),
    /// An object whose getter for this key throws.
    Throwing(&'static str),
    Map(Vec<(usize, usize)>),
    Set(Vec<usize>),
    Date(f64),
    Buffer(Vec<u8>),
    View(usize, usize),
}

#[derive(Default)]
struct Heap {
    nodes: Vec<Node>,
    seen: HashMap<usize, usize>,
}

impl Heap {
    fn add(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }
}

impl Source for Heap {
    type Handle = usize;
    type Thrown = &'static str;
    type Keys = Vec<(String, usize)>;
    type Items = Vec<(usize, usize)>;

    fn primitive(
        &mut self,
        value: &usize,
        room: u64,
    ) -> Result<Option<Value>, Refusal<&'static str>> {
        match &self.nodes[*value] {
            Node::Primitive(Value::String(text)) if text.len() as u64 > room => {
                Err(Refusal::TooLarge(text.len() as u64))
            }
            Node::Primitive(copied) => Ok(Some(copied.clone())),
            Node::Function => Err(Refusal::What("a function".into())),
            _ => Ok(None),
        }
    }

    fn shape(&mut self, object: &usize, _room: u64) -> Result<Shape<Self>, Refusal<&'static str>> {
        Ok(match self.nodes[*object].clone() {
            Node::Array(items) => Shape::Array(items.len() as u64),
            Node::Object(entries) => Shape::Plain(entries),
            Node::Throwing(key) => Shape::Plain(vec![(key.to_string(), usize::MAX)]),
            Node::Map(entries) => Shape::Map(entries),
            Node::Set(items) => Shape::Set(items.into_iter().map(|item| (item, item)).collect()),
            Node::Date(time) => Shape::Leaf(Value::Date(time)),
            Node::Buffer(bytes) => Shape::Leaf(Value::ArrayBuffer(bytes)),
            Node::View(buffer, length) => Shape::TypedArray {
                kind: TypedArrayKind::Uint8,
                buffer: ViewBuffer::Shared(buffer),
                byte_offset: 0,
                length,
            },
            Node::Primitive(_) | Node::Function => unreachable!("not objects"),
        })
    }

    fn number_of(&mut self, object: &usize) -> Result<Option<usize>, &'static str> {
        Ok(self.seen.get(object).copied())
    }

    fn remember(&mut self, object: &usize, number: usize) -> Result<(), &'static str> {
        self.seen.insert(*object, number);
        Ok(())
    }

    fn element(&mut self, array: &usize, index: u32) -> Element<usize, &'static str> {
        match &self.nodes[*array] {
            Node::Array(items) => match items[index as usize] {
                Some(item) => Element::Value(item),
                None => Element::Hole,
            },
            _ => Element::Thrown("not an array"),
        }
    }

    fn key_count(&self, keys: &Self::Keys) -> usize {
        keys.len()
    }

    fn property(
        &mut self,
        _object: &usize,
        keys: &Self::Keys,
        index: usize,
    ) -> Property<usize, &'static str> {
        match &keys[index] {
            (key, usize::MAX) => Property::Thrown(key.clone(), "Error: boom"),
            (key, value) => Property::Value(key.clone(), *value),
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
    ) -> Result<usize, &'static str> {
        let (key, value) = items[index];
        Ok(if field == Field::MapValue { value } else { key })
    }

    fn map_key_label(&mut self, _items: &Self::Items, _index: usize, key: &Value) -> String {
        format!("{key:?}")
    }

    fn buffer_bytes(
        &mut self,
        buffer: &usize,
        room: u64,
    ) -> Result<Vec<u8>, Refusal<&'static str>> {
        match &self.nodes[*buffer] {
            Node::Buffer(bytes) if bytes.len() as u64 > room => {
                Err(Refusal::TooLarge(bytes.len() as u64))
            }
            Node::Buffer(bytes) => Ok(bytes.clone()),
            _ => Err(Refusal::What("a view over no buffer".into())),
        }
    }

    fn thrown(&mut self, thrown: &'static str) -> String {
        thrown.into()
    }
}

impl Describe for Heap {
    fn describe(&mut self, value: &usize) -> String {
        format!("<node {value}>")
    }
}

impl Sink for Heap {
    type Handle = usize;
    type Array = usize;
    type Object = usize;
    type Map = usize;
    type Set = usize;
    type Error = Problem;

    fn leaf(&mut self, leaf: Leaf<'_>) -> Result<usize, Problem> {
        Ok(self.add(match leaf {
            Leaf::Number(number) => Node::Primitive(Value::Number(number)),
            Leaf::String(text) => Node::Primitive(Value::String(text.into())),
            Leaf::Date(time) => Node::Date(time),
            Leaf::ArrayBuffer(bytes) => Node::Buffer(bytes.to_vec()),
            other => Node::Primitive(Value::Uncloneable(format!("{other:?}"))),
        }))
    }

    fn array(&mut self, length: u32) -> Result<(usize, usize), Problem> {
        let array = self.add(Node::Array(vec![None; length as usize]));
        Ok((array, array))
    }

    fn object(&mut self) -> Result<(usize, usize), Problem> {
        let object = self.add(Node::Object(Vec::new()));
        Ok((object, object))
    }

    fn map(&mut self) -> Result<(usize, usize), Problem> {
        let map = self.add(Node::Map(Vec::new()));
        Ok((map, map))
    }

    fn set(&mut self) -> Result<(usize, usize), Problem> {
        let set = self.add(Node::Set(Vec::new()));
        Ok((set, set))
    }

    fn is_array_buffer(&mut self, value: &usize) -> Result<bool, Problem> {
        Ok(matches!(self.nodes[*value], Node::Buffer(_)))
    }

    fn typed_array(
        &mut self,
        _kind: TypedArrayKind,
        buffer: &usize,
        _byte_offset: usize,
        length: usize,
    ) -> Result<usize, Problem> {
        Ok(self.add(Node::View(*buffer, length)))
    }

    fn set_element(&mut self, array: &usize, index: u32, value: usize) -> Result<(), Problem> {
        if let Node::Array(items) = &mut self.nodes[*array] {
            items[index as usize] = Some(value);
        }
        Ok(())
    }

    fn define(&mut self, object: &usize, key: &str, value: usize) -> Result<(), Problem> {
        if let Node::Object(entries) = &mut self.nodes[*object] {
            entries.push((key.into(), value));
        }
        Ok(())
    }

    fn map_set(&mut self, map: &usize, key: usize, value: usize) -> Result<(), Problem> {
        if let Node::Map(entries) = &mut self.nodes[*map] {
            entries.push((key, value));
        }
        Ok(())
    }

    fn set_add(&mut self, set: &usize, item: usize) -> Result<(), Problem> {
        if let Node::Set(items) = &mut self.nodes[*set] {
            items.push(item);
        }
        Ok(())
    }

    fn fail(&mut self, problem: Problem) -> Problem {
        problem
    }
}

fn number(n: f64) -> Value {
    Value::Number(n)
}

/// `[shared, { self: <the object>, again: shared }, shared]` with `shared = { n: 1 }`.
fn shared_and_cyclic() -> (Heap, usize) {
    let mut heap = Heap::default();
    let one = heap.add(Node::Primitive(number(1.0)));
    let shared = heap.add(Node::Object(vec![("n".into(), one)]));
    let object = heap.add(Node::Object(Vec::new()));
    heap.nodes[object] = Node::Object(vec![("self".into(), object), ("again".into(), shared)]);
    let root = heap.add(Node::Array(vec![Some(shared), Some(object), Some(shared)]));
    (heap, root)
}

#[test]
fn objects_are_numbered_in_pre_order_and_met_again_as_refs() {
    let (heap, root) = shared_and_cyclic();
    let copied = Reader::refusing(heap, u64::MAX)
        .read(&root, "x")
        .expect("copied");
    let shared = Value::Object(vec![("n".into(), number(1.0))]);
    assert_eq!(
        copied,
        Value::Array(vec![
            Some(shared),
            Some(Value::Object(vec![
                ("self".into(), Value::Ref(2)),
                ("again".into(), Value::Ref(1)),
            ])),
            Some(Value::Ref(1)),
        ])
    );
}

#[test]
fn building_then_reading_again_gives_the_same_copy() {
    let (heap, root) = shared_and_cyclic();
    let copied = Reader::refusing(heap, u64::MAX)
        .read(&root, "x")
        .expect("copied");
    let mut builder = Builder::new(Heap::default());
    let rebuilt = builder.build(&copied).expect("built");
    let Builder { sink: heap, .. } = builder;
    // The rebuilt graph shares as the original did: the same node at [0] and [2].
    let Node::Array(items) = &heap.nodes[rebuilt] else {
        panic!("{:?}", heap.nodes[rebuilt])
    };
    assert_eq!(items[0], items[2]);
    assert_eq!(
        Reader::refusing(heap, u64::MAX).read(&rebuilt, "x"),
        Ok(copied)
    );
}

#[test]
fn views_share_their_buffer_by_number() {
    let mut heap = Heap::default();
    let buffer = heap.add(Node::Buffer(vec![1, 2, 3]));
    let first = heap.add(Node::View(buffer, 3));
    let second = heap.add(Node::View(buffer, 1));
    let root = heap.add(Node::Array(vec![Some(first), Some(second), Some(buffer)]));
    let copied = Reader::refusing(heap, u64::MAX)
        .read(&root, "x")
        .expect("copied");
    let Value::Array(items) = &copied else {
        panic!("{copied:?}")
    };
    // The array is 0, the first view 1, its buffer 2, the second view 3.
    assert!(
        matches!(&items[0], Some(Value::TypedArray { buffer, .. }) if **buffer == Value::ArrayBuffer(vec![1, 2, 3]))
    );
    assert!(
        matches!(&items[1], Some(Value::TypedArray { buffer, .. }) if **buffer == Value::Ref(2))
    );
    assert_eq!(items[2], Some(Value::Ref(2)));
    let mut builder = Builder::new(Heap::default());
    let rebuilt = builder.build(&copied).expect("built");
    let Builder { sink: heap, .. } = builder;
    let Node::Array(items) = &heap.nodes[rebuilt] else {
        panic!()
    };
    let buffer_of = |item: Option<usize>| match heap.nodes[item.expect("no hole")] {
        Node::View(buffer, _) => buffer,
        _ => panic!("not a view"),
    };
    assert_eq!(buffer_of(items[0]), buffer_of(items[1]));
    assert_eq!(items[2], Some(buffer_of(items[0])));
}

#[test]
fn a_refusal_names_its_path() {
    let mut heap = Heap::default();
    let function = heap.add(Node::Function);
    let one = heap.add(Node::Primitive(number(1.0)));
    let key = heap.add(Node::Primitive(Value::String("k".into())));
    let map = heap.add(Node::Map(vec![(key, function)]));
    let object = heap.add(Node::Object(vec![("cfg".into(), map)]));
    let root = heap.add(Node::Array(vec![Some(one), None, Some(object)]));
    let error = Reader::refusing(heap, u64::MAX)
        .read(&root, "vars")
        .expect_err("refused");
    assert_eq!(error.path, r#"vars[2].cfg.get(String("k"))"#);
    assert_eq!(error.what, "a function");
}

#[test]
fn describing_replaces_what_refusing_refuses() {
    let mut heap = Heap::default();
    let function = heap.add(Node::Function);
    let throwing = heap.add(Node::Throwing("bad"));
    let root = heap.add(Node::Array(vec![Some(function), Some(throwing)]));
    assert_eq!(
        Reader::describing(heap, u64::MAX).read(&root, "x"),
        Ok(Value::Array(vec![
            Some(Value::Uncloneable(format!("<node {function}>"))),
            Some(Value::Object(vec![(
                "bad".into(),
                Value::Uncloneable("[Thrown: Error: boom]".into())
            )])),
        ]))
    );
    let mut heap = Heap::default();
    let throwing = heap.add(Node::Throwing("bad"));
    let error = Reader::refusing(heap, u64::MAX)
        .read(&throwing, "x")
        .expect_err("refused");
    assert_eq!(
        (error.path.as_str(), error.what.as_str()),
        ("x.bad", "unreadable (reading it threw Error: boom)")
    );
}

/// Nothing is lost silently: past a limit a copy fails, naming it, whether uncopyable parts are
/// described or refused; nothing is cut or replaced by a description.
#[test]
fn every_limit_fails_the_copy_in_both_modes() {
    let describing =
        |heap: Heap, root: usize, max: u64| Reader::describing(heap, max).read(&root, "x");
    let refusing = |heap: Heap, root: usize, max: u64| Reader::refusing(heap, max).read(&root, "x");
    for read in [describing, refusing] {
        let mut heap = Heap::default();
        let one = heap.add(Node::Primitive(number(1.0)));
        let mut sparse = vec![None; MAX_HOLES + 2];
        sparse[0] = Some(one);
        let sparse = heap.add(Node::Array(sparse));
        let root = heap.add(Node::Array(vec![Some(one), Some(sparse)]));
        let error = read(heap, root, u64::MAX).expect_err("too many holes");
        assert_eq!(error.path, "x[1]");
        assert_eq!(error.limit.map(|limit| limit.name), Some("maxArrayHoles"));
        assert_eq!(
            error.to_string(),
            format!("x[1] is an array with more than {MAX_HOLES} holes, more than a copy takes (maxArrayHoles)")
        );

        let mut heap = Heap::default();
        let mut inner = heap.add(Node::Array(Vec::new()));
        for _ in 0..MAX_DEPTH {
            inner = heap.add(Node::Array(vec![Some(inner)]));
        }
        let error = read(heap, inner, u64::MAX).expect_err("too deep");
        assert_eq!(error.limit.map(|limit| limit.name), Some("maxCopyDepth"));
    }
}

#[test]
fn the_byte_budget_counts_slots_text_keys_and_bytes() {
    let mut heap = Heap::default();
    let text = heap.add(Node::Primitive(Value::String("abcd".into())));
    let bytes = heap.add(Node::Buffer(vec![0; 10]));
    let root = heap.add(Node::Object(vec![
        ("key".into(), text),
        ("b".into(), bytes),
    ]));
    // The object (8), "key" (3) and its string (8 + 4), "b" (1) and the buffer (8 + 10).
    let exact = 8 + 3 + 12 + 1 + 18;
    let read = |max| {
        let mut heap = Heap::default();
        let text = heap.add(Node::Primitive(Value::String("abcd".into())));
        let bytes = heap.add(Node::Buffer(vec![0; 10]));
        let root = heap.add(Node::Object(vec![
            ("key".into(), text),
            ("b".into(), bytes),
        ]));
        Reader::refusing(heap, max).read(&root, "x")
    };
    assert!(read(exact).is_ok());
    let error = read(exact - 1).expect_err("one byte over");
    assert_eq!(error.limit, Some(SizeLimit::value_bytes(exact - 1, exact)));
    assert_eq!(
        error.to_string(),
        format!(
            "x.b is at least {exact} bytes, more than maxValueBytes ({}) allows for one value",
            exact - 1
        )
    );
    assert!(Reader::describing(heap, u64::MAX).read(&root, "x").is_ok());
}

#[test]
fn a_string_past_the_room_left_is_refused_unread() {
    let mut heap = Heap::default();
    let short = heap.add(Node::Primitive(Value::String("ab".into())));
    let long = heap.add(Node::Primitive(Value::String("x".repeat(100))));
    let root = heap.add(Node::Array(vec![Some(short), Some(long)]));
    let error = Reader::describing(heap, 50)
        .read(&root, "x")
        .expect_err("too large");
    assert_eq!(error.path, "x[1]");
    // The array (8) and "ab" (10), then 8 + 100 for the string that was not read.
    assert_eq!(error.limit.map(|limit| limit.size), Some(8 + 10 + 108));
}

#[test]
fn nesting_is_limited_both_ways() {
    let mut heap = Heap::default();
    let mut inner = heap.add(Node::Array(Vec::new()));
    for _ in 0..MAX_DEPTH {
        inner = heap.add(Node::Array(vec![Some(inner)]));
    }
    let error = Reader::refusing(heap, u64::MAX)
        .read(&inner, "x")
        .expect_err("too deep");
    assert_eq!(error.limit, Some(SizeLimit::depth(MAX_DEPTH as u64 + 1)));
    assert_eq!(error.path, format!("x{}", "[0]".repeat(MAX_DEPTH)));

    let mut value = Value::Null;
    for _ in 0..=MAX_DEPTH + 1 {
        value = Value::Array(vec![Some(value)]);
    }
    assert_eq!(
        Builder::new(Heap::default()).build(&value),
        Err(Problem::TooDeep)
    );
}

#[test]
fn malformed_copies_are_reported_not_built() {
    for (value, problem) in [
        (Value::Ref(0), Problem::DanglingRef),
        (
            Value::Array(vec![Some(Value::Ref(1))]),
            Problem::DanglingRef,
        ),
        (
            Value::TypedArray {
                kind: TypedArrayKind::Uint8,
                buffer: Box::new(number(1.0)),
                byte_offset: 0,
                length: 0,
            },
            Problem::NotABuffer,
        ),
    ] {
        assert_eq!(
            Builder::new(Heap::default()).build(&value),
            Err(problem),
            "{value:?}"
        );
    }
}
