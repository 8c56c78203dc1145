use std::sync::Arc;

use super::*;
use crate::session::image::attributes;

/// A session with every kind of step, event, value and image part.
pub(crate) fn sample() -> Session {
    let every_value = Value::Array(vec![
        Some(Value::Undefined),
        None,
        Some(Value::Null),
        Some(Value::Bool(true)),
        Some(Value::Number(-0.0)),
        Some(Value::Number(f64::NAN)),
        Some(Value::BigInt("-12345678901234567890".into())),
        Some(Value::String("héllo\u{1F600}".into())),
        Some(Value::Object(vec![("a".into(), Value::Ref(0))])),
        Some(Value::Date(1.5e12)),
        Some(Value::RegExp {
            source: "a+".into(),
            flags: "gi".into(),
        }),
        Some(Value::Map(vec![(Value::Number(1.0), Value::Null)])),
        Some(Value::Set(vec![Value::String("x".into())])),
        Some(Value::Error {
            name: "TypeError".into(),
            message: "m".into(),
            stack: Some("at x".into()),
        }),
        Some(Value::TypedArray {
            kind: TypedArrayKind::Float64,
            buffer: Box::new(Value::ArrayBuffer(vec![0; 16])),
            byte_offset: 8,
            length: 1,
        }),
        Some(Value::Uncloneable("[Function: f]".into())),
    ]);
    let image = Image {
        random_state: u64::MAX,
        time_origin: 1234.5,
        performance_now: 99.25,
        timer_sequence: 7,
        timer_last_id: 3,
        tools: vec![ToolSpec {
            name: "search".into(),
            inputs: Some(vec!["query".into()]),
        }],
        symbols: vec![
            image::Symbol::Local(Some("s".into())),
            image::Symbol::Local(None),
            image::Symbol::Registered("app".into()),
            image::Symbol::WellKnown("iterator".into()),
        ],
        nodes: vec![
            Node {
                kind: Kind::Object,
                prototype: Slot::Intrinsic(2),
                extensible: false,
                properties: vec![
                    Property {
                        key: image::Key::String("self".into()),
                        attributes: attributes::ALL,
                        value: PropertyValue::Data(Slot::Object(0)),
                    },
                    Property {
                        key: image::Key::Symbol(0),
                        attributes: attributes::CONFIGURABLE,
                        value: PropertyValue::Accessor(Slot::Intrinsic(9), Slot::Undefined),
                    },
                    Property {
                        key: image::Key::Index(0),
                        attributes: attributes::ALL,
                        value: PropertyValue::Data(Slot::String("zero".into())),
                    },
                    Property {
                        key: image::Key::Index(image::MAX_INDEX_KEY),
                        attributes: attributes::ENUMERABLE,
                        value: PropertyValue::Data(Slot::Number(1.0)),
                    },
                ],
            },
            Node {
                kind: Kind::Map(vec![(Slot::Object(0), Slot::BigInt("1".into()))]),
                prototype: Slot::Null,
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::ArrayBuffer {
                    bytes: vec![1, 2, 3, 4],
                    max_length: Some(8),
                    detached: false,
                },
                prototype: Slot::Intrinsic(4),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::TypedArray {
                    kind: TypedArrayKind::Uint8,
                    buffer: 2,
                    byte_offset: 1,
                    length: None,
                },
                prototype: Slot::Intrinsic(5),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::DataView {
                    buffer: 2,
                    byte_offset: 0,
                    byte_length: Some(2),
                },
                prototype: Slot::Intrinsic(6),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::Boxed(Slot::Symbol(2)),
                prototype: Slot::Intrinsic(7),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::RegExp {
                    source: "x".into(),
                    flags: "y".into(),
                },
                prototype: Slot::Intrinsic(8),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::Date(f64::NAN),
                prototype: Slot::Intrinsic(10),
                extensible: true,
                properties: vec![],
            },
            Node {
                kind: Kind::Set(vec![Slot::Tool("search".into()), Slot::Bool(false)]),
                prototype: Slot::Intrinsic(11),
                extensible: true,
                properties: vec![],
            },
        ],
        globals: vec![Property {
            key: image::Key::String("shared".into()),
            attributes: attributes::WRITABLE | attributes::ENUMERABLE,
            value: PropertyValue::Data(Slot::Object(1)),
        }],
        lexicals: vec![
            Lexical {
                name: "later".into(),
                constant: false,
                value: None,
            },
            Lexical {
                name: "fixed".into(),
                constant: true,
                value: Some(Slot::Number(f64::INFINITY)),
            },
        ],
    };
    let run = |end| RunRecord {
        code: "const x = await search('q')".into(),
        input: Some(every_value.clone()),
        max_operations: 50_000,
        events: vec![
            Event::Clock(1.7e12),
            Event::Returned(Ok(Value::Number(1.0))),
            Event::Returned(Err(ToolFailure {
                name: "RangeError".into(),
                message: "too big".into(),
                retryable: false,
            })),
            Event::Pending,
            Event::Settled(2, Ok(every_value.clone())),
            Event::Timer(u64::MAX),
            Event::Paused(Box::new(crate::session::PausedCall {
                call: 3,
                tool: "approve".into(),
                args: vec![Value::String("deploy".into())],
                line: Some(4),
                reason: Value::String("approve?".into()),
            })),
        ],
        end,
    };
    Session {
        terms: Terms {
            timers: true,
            authorized_imports: vec!["*".into()],
            modules: vec![("m".into(), [7; 32])],
            max_canvas_size: 8192,
            max_value_bytes: 1 << 26,
            max_stack_bytes: 1 << 20,
            log_levels: LogLevel::ALL.to_vec(),
        },
        journal: Journal {
            origin: Origin::Checkpoint(Arc::new(image)),
            steps: vec![
                Step::Tools(vec!["plain".into()]),
                Step::Variables(vec![("v".into(), every_value.clone())]),
                Step::Run(run(Some(RunEnd {
                    outcome: Outcome::Failed,
                    operations: 12,
                    calls: 3,
                }))),
                Step::Run(run(None)),
            ],
        },
    }
}

/// `Value` and `Slot` compare NaN as unequal; the encoding is compared instead.
fn same(a: &Session, b: &Session) -> bool {
    encode(&a.terms, &a.journal) == encode(&b.terms, &b.journal)
}

#[test]
fn a_session_of_every_kind_reads_back_as_it_was_written() {
    let session = sample();
    let decoded = decode(&encode(&session.terms, &session.journal)).unwrap();
    assert!(same(&session, &decoded));
    let fresh = Session {
        journal: Journal::fresh(42, 0.25),
        ..session
    };
    assert!(same(
        &fresh,
        &decode(&encode(&fresh.terms, &fresh.journal)).unwrap()
    ));
}

#[test]
fn every_truncation_is_refused_as_truncated_and_nothing_panics() {
    let session = sample();
    let bytes = encode(&session.terms, &session.journal);
    for end in 0..bytes.len() {
        match decode(&bytes[..end]) {
            Err(CodecError::Truncated { .. }) => {}
            other => panic!(
                "a session cut at {end} of {} read as {other:?}",
                bytes.len()
            ),
        }
    }
}

#[test]
fn every_single_byte_change_is_refused_or_reads_as_some_session() {
    let session = sample();
    let bytes = encode(&session.terms, &session.journal);
    for at in 0..bytes.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut changed = bytes.clone();
            changed[at] ^= flip;
            // Either outcome is fine; what is tested is that neither panics nor allocates wildly.
            let _ = decode(&changed);
        }
    }
}

#[test]
fn a_count_past_the_input_is_refused_before_anything_is_reserved() {
    let mut out = Writer(Vec::new());
    out.terms(&sample().terms);
    out.u8(0);
    out.varint(1);
    out.f64(0.0);
    out.varint(u64::MAX >> 1); // a number of steps no input holds
    assert!(matches!(
        decode(&out.0),
        Err(CodecError::Truncated {
            what: "the steps",
            ..
        })
    ));
}

#[test]
fn a_value_nested_past_the_copy_depth_is_refused() {
    let mut deep = Value::Null;
    for _ in 0..=MAX_DEPTH {
        deep = Value::Array(vec![Some(deep)]);
    }
    let mut session = sample();
    session.journal.steps = vec![Step::Variables(vec![("deep".into(), deep)])];
    match decode(&encode(&session.terms, &session.journal)) {
        Err(CodecError::Malformed { what, .. }) => assert!(what.contains("nested"), "{what}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn unknown_tags_overlong_numbers_bad_text_and_trailing_bytes_are_malformed() {
    let mut bytes = encode(&sample().terms, &Journal::fresh(1, 2.0));
    bytes.push(0);
    assert_eq!(decode(&bytes), Err(CodecError::Trailing(1)));
    bytes.pop();
    let steps_at = bytes.len() - 1;
    bytes[steps_at] = 1;
    bytes.push(9); // step tag 9
    assert!(matches!(decode(&bytes), Err(CodecError::Malformed { .. })));
    let mut reader = Reader {
        bytes: &[0xff; 11],
        at: 0,
    };
    assert!(matches!(
        reader.varint("n"),
        Err(CodecError::Malformed { .. })
    ));
    let mut reader = Reader {
        bytes: &[2, 0xc3, 0x28],
        at: 0,
    };
    assert!(matches!(
        reader.string("s"),
        Err(CodecError::Malformed { .. })
    ));
}

#[test]
fn an_index_key_past_the_integer_atoms_is_malformed() {
    // One property: an index key of 2^31 (tag 2, varint 0x80 0x80 0x80 0x80 0x08).
    let mut reader = Reader {
        bytes: &[1, 2, 0x80, 0x80, 0x80, 0x80, 0x08],
        at: 0,
    };
    assert!(matches!(
        reader.properties(),
        Err(CodecError::Malformed { .. })
    ));
    let mut reader = Reader {
        bytes: &[
            1,
            2,
            0xff,
            0xff,
            0xff,
            0xff,
            0x07,
            attributes::ALL,
            0,
            tag::NULL,
        ],
        at: 0,
    };
    assert_eq!(
        reader.properties().unwrap()[0].key,
        image::Key::Index(image::MAX_INDEX_KEY)
    );
}
