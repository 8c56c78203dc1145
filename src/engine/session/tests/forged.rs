//! Forged snapshots: a checksum finds accidents, not an attacker, who can write any payload and
//! seal it (without `snapshotKey`, nothing else stands in the way). Whatever a forged checkpoint
//! holds, a restore makes the state or refuses with a `SnapshotError`: it never panics, never
//! calls a tool, and a restored engine still runs code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{host, output, restore, snapshot, DATA};
use crate::engine::testing::{engine_with, run_on};
use crate::engine::EngineError;
use crate::options::Options;
use crate::session::image::{
    attributes, Image, Key, Kind, Lexical, Node, Property, PropertyValue, Slot,
};
use crate::session::{codec, seal, Origin, SnapshotProblem};
use crate::value::{TypedArrayKind, Value};

/// The snapshot of `DATA` (a checkpoint of data alone), its image changed by `change` and sealed
/// again as an attacker would.
fn forged(bytes: &[u8], change: impl FnOnce(&mut Image)) -> Vec<u8> {
    let mut session = seal::open(bytes, None).unwrap();
    let Origin::Checkpoint(image) = &mut session.journal.origin else {
        panic!("the session of DATA is checkpointed")
    };
    change(Arc::make_mut(image));
    seal::seal(&session.terms, &session.journal, None)
}

/// The number of the first node of a kind.
fn first(image: &Image, kind: impl Fn(&Kind) -> bool) -> u32 {
    let index = image
        .nodes
        .iter()
        .position(|node| kind(&node.kind))
        .unwrap();
    u32::try_from(index).unwrap()
}

fn node(image: &mut Image, kind: impl Fn(&Kind) -> bool) -> &mut Node {
    let index = first(image, kind) as usize;
    &mut image.nodes[index]
}

fn data(key: &str, slot: Slot) -> Property {
    Property {
        key: Key::String(key.into()),
        attributes: attributes::ALL,
        value: PropertyValue::Data(slot),
    }
}

type Change = Box<dyn FnOnce(&mut Image)>;

/// Changes no restore may accept: each names something that does not exist, or a state no
/// session can be in.
fn refused_changes() -> Vec<(&'static str, Change)> {
    vec![
        (
            "a prototype past the table",
            Box::new(|image| image.nodes[0].prototype = Slot::Object(u32::MAX)),
        ),
        (
            "a built-in that does not exist",
            Box::new(|image| image.nodes[0].prototype = Slot::Intrinsic(u32::MAX)),
        ),
        (
            "a symbol key past the table",
            Box::new(|image| {
                image.nodes[0].properties.push(Property {
                    key: Key::Symbol(u32::MAX),
                    attributes: attributes::ALL,
                    value: PropertyValue::Data(Slot::Null),
                });
            }),
        ),
        (
            "a prototype cycle",
            Box::new(|image| {
                image.nodes[0].prototype = Slot::Object(1);
                image.nodes[1].prototype = Slot::Object(0);
            }),
        ),
        (
            "an object its own prototype",
            Box::new(|image| image.nodes[0].prototype = Slot::Object(0)),
        ),
        (
            "a prototype that is a number",
            Box::new(|image| image.nodes[0].prototype = Slot::Number(1.0)),
        ),
        (
            "a typed array over an object",
            Box::new(|image| {
                let object = first(image, |kind| matches!(kind, Kind::Object));
                if let Kind::TypedArray { buffer, .. } =
                    &mut node(image, |kind| matches!(kind, Kind::TypedArray { .. })).kind
                {
                    *buffer = object;
                }
            }),
        ),
        (
            "a typed array past its buffer",
            Box::new(|image| {
                if let Kind::TypedArray {
                    byte_offset,
                    length,
                    ..
                } = &mut node(image, |kind| matches!(kind, Kind::TypedArray { .. })).kind
                {
                    *byte_offset = u64::MAX - 1;
                    *length = Some(u64::MAX);
                }
            }),
        ),
        (
            "a misaligned typed array",
            Box::new(|image| {
                let buffer = first(image, |kind| matches!(kind, Kind::ArrayBuffer { .. }));
                image.nodes.push(Node {
                    kind: Kind::TypedArray {
                        kind: TypedArrayKind::Float64,
                        buffer,
                        byte_offset: 1,
                        length: Some(1),
                    },
                    prototype: Slot::Null,
                    extensible: true,
                    properties: Vec::new(),
                });
            }),
        ),
        (
            "a data view past its buffer",
            Box::new(|image| {
                if let Kind::DataView { byte_length, .. } =
                    &mut node(image, |kind| matches!(kind, Kind::DataView { .. })).kind
                {
                    *byte_length = Some(1 << 40);
                }
            }),
        ),
        (
            "a resizable buffer",
            Box::new(|image| {
                if let Kind::ArrayBuffer { max_length, .. } =
                    &mut node(image, |kind| matches!(kind, Kind::ArrayBuffer { .. })).kind
                {
                    *max_length = Some(u64::MAX);
                }
            }),
        ),
        (
            "a regular expression with unknown flags",
            Box::new(|image| {
                node(image, |kind| matches!(kind, Kind::RegExp { .. })).kind = Kind::RegExp {
                    source: "(".into(),
                    flags: "zz".into(),
                };
            }),
        ),
        (
            "a BigInt that is no number",
            Box::new(|image| {
                image
                    .globals
                    .push(data("forged", Slot::BigInt("12x".into())));
            }),
        ),
        (
            "an array length no array has",
            Box::new(|image| {
                node(image, |kind| matches!(kind, Kind::Array))
                    .properties
                    .push(data("length", Slot::Number(-1.0)));
            }),
        ),
        (
            "a non-configurable global redefined",
            Box::new(|image| image.globals.push(data("undefined", Slot::Number(1.0)))),
        ),
        (
            "an accessor whose getter is no function",
            Box::new(|image| {
                image.nodes[0].properties.push(Property {
                    key: Key::String("got".into()),
                    attributes: attributes::ALL,
                    value: PropertyValue::Accessor(Slot::Number(1.0), Slot::Undefined),
                });
            }),
        ),
        (
            "a tool the session does not have",
            Box::new(|image| {
                image
                    .globals
                    .push(data("forged", Slot::Tool("nowhere".into())))
            }),
        ),
        (
            "a wrapper around an object (which would hand a built-in to the image to change)",
            Box::new(|image| {
                node(image, |kind| matches!(kind, Kind::Boxed(_))).kind =
                    Kind::Boxed(Slot::Intrinsic(0));
            }),
        ),
        (
            "a wrapper around an object of the image",
            Box::new(|image| {
                let object = first(image, |kind| matches!(kind, Kind::Object));
                node(image, |kind| matches!(kind, Kind::Boxed(_))).kind =
                    Kind::Boxed(Slot::Object(object));
            }),
        ),
    ]
}

/// Changes a restore may accept (they make some state a session could make) or refuse; either
/// way nothing crashes and the engine stays usable.
fn other_changes() -> Vec<(&'static str, Change)> {
    vec![
        (
            "attribute bits past the known ones",
            Box::new(|image| {
                for property in &mut image.nodes[0].properties {
                    property.attributes = u8::MAX;
                }
            }),
        ),
        (
            "a global lexical binding over a global property",
            Box::new(|image| {
                image.globals.push(data("twice", Slot::Number(1.0)));
                image.lexicals.push(Lexical {
                    name: "twice".into(),
                    constant: true,
                    value: Some(Slot::Number(2.0)),
                });
            }),
        ),
        (
            "a binding named as no identifier is",
            Box::new(|image| {
                image.lexicals.push(Lexical {
                    name: "not a name".into(),
                    constant: false,
                    value: None,
                });
            }),
        ),
        (
            "the same binding twice",
            Box::new(|image| {
                let again = image.lexicals[0].clone();
                image.lexicals.push(again);
            }),
        ),
        (
            "timer counters at their ends",
            Box::new(|image| {
                image.timer_sequence = u64::MAX;
                image.timer_last_id = u32::MAX;
            }),
        ),
        (
            "a clock and a generator no session has",
            Box::new(|image| {
                image.random_state = 0;
                image.time_origin = f64::NAN;
                image.performance_now = f64::INFINITY;
            }),
        ),
        (
            "dates out of range",
            Box::new(|image| {
                node(image, |kind| matches!(kind, Kind::Date(_))).kind = Kind::Date(1e300);
            }),
        ),
        (
            "a non-extensible object that still takes properties",
            Box::new(|image| {
                image.nodes[0].extensible = false;
                image.nodes[0].properties.push(data("late", Slot::Null));
            }),
        ),
        (
            "a tool list that names no tool the host has",
            Box::new(|image| {
                image
                    .tools
                    .push(crate::tools::ToolSpec::from("constructor".to_owned()));
            }),
        ),
    ]
}

fn options() -> Options {
    Options {
        timers: true,
        ..Options::default()
    }
}

#[test]
fn a_forged_checkpoint_that_names_what_does_not_exist_is_refused_as_malformed() {
    let options = options();
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    output(run_on(&original, DATA, &options));
    let bytes = snapshot(&original);
    for (what, change) in refused_changes() {
        match restore(forged(&bytes, change), &options, host(&calls)) {
            Err(EngineError::Snapshot(error)) => {
                assert_eq!(error.problem, SnapshotProblem::Malformed, "{what}: {error}");
            }
            Err(other) => panic!("{what}: refused as {other:?}"),
            Ok(_) => panic!("{what}: the forged checkpoint was restored"),
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no tool was called");
}

#[test]
fn a_forged_checkpoint_restores_or_is_refused_and_the_engine_stays_usable() {
    let options = options();
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    output(run_on(&original, DATA, &options));
    output(run_on(&original, "let twice = 2", &options));
    let bytes = snapshot(&original);
    for (what, change) in other_changes() {
        match restore(forged(&bytes, change), &options, host(&calls)) {
            Err(EngineError::Snapshot(_)) => {}
            Err(other) => panic!("{what}: refused as {other:?}"),
            Ok((restored, _)) => {
                let code = "setTimeout(() => {}, 0); [typeof people, Math.random() < 1, typeof Date.now()]";
                let report = run_on(&restored, code, &options);
                assert!(report.result.is_ok(), "{what}: {:?}", report.result);
                assert_eq!(
                    output(run_on(&restored, "1 + 1", &options)),
                    Value::Number(2.0),
                    "{what}"
                );
            }
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no tool was called");
}

#[test]
fn every_single_byte_change_of_a_checkpoint_restores_or_is_refused() {
    let options = options();
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    output(run_on(&original, DATA, &options));
    let session = seal::open(&snapshot(&original), None).unwrap();
    let payload = codec::encode(&session.terms, &session.journal);
    let (mut restored, mut refused) = (0, 0);
    for at in 0..payload.len() {
        let mut changed = payload.clone();
        changed[at] ^= 1;
        // What decodes is sealed again under the engine's own terms, as an attacker would.
        let Ok(decoded) = codec::decode(&changed) else {
            continue;
        };
        let forged = seal::seal(&session.terms, &decoded.journal, None);
        match restore(forged, &options, host(&calls)) {
            Err(EngineError::Snapshot(_)) => refused += 1,
            Err(other) => panic!("byte {at}: refused as {other:?}"),
            Ok((engine, _)) => {
                assert_eq!(
                    output(run_on(&engine, "1 + 1", &options)),
                    Value::Number(2.0),
                    "byte {at}"
                );
                restored += 1;
            }
        }
    }
    assert!(
        restored > 0 && refused > 0,
        "{restored} restored, {refused} refused"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no tool was called");
}
