//! Sessions at the engine: a snapshot restored into a fresh runtime answers as the original,
//! without asking its host anything; a replay that goes another way, or passes a limit, is
//! refused; a paused run resumes where it paused.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::{ReplayLimits, Restored, Source};
use crate::engine::host::{ToolFailure, ToolResult};
use crate::engine::testing::{after, engine_with, run_on, sync, FakeHost, FakeTool};
use crate::engine::{
    Engine, EngineConfig, EngineError, PausedRun, RunAbort, RunReport, RunRequest,
};
use crate::options::Options;
use crate::session::{
    codec, seal, Event, Journal, RunRecord, SnapshotError, SnapshotProblem, Step,
};
use crate::value::Value;

fn snapshot(engine: &Engine) -> Vec<u8> {
    engine.snapshot(None).blocking_recv().unwrap().unwrap()
}

fn limits(options: &Options) -> ReplayLimits {
    ReplayLimits {
        max_operations: options.max_operations,
        timeout_ms: options.timeout_ms,
    }
}

fn restore(
    bytes: Vec<u8>,
    options: &Options,
    host: FakeHost,
) -> Result<(Engine, Restored), EngineError> {
    let (engine, ready) = Engine::restore(
        EngineConfig::from(options),
        Arc::new(host),
        Source::Bytes(bytes, None),
        limits(options),
        None,
    );
    ready
        .blocking_recv()
        .unwrap()
        .map(|restored| (engine, restored))
}

fn refusal(result: Result<(Engine, Restored), EngineError>) -> SnapshotError {
    match result {
        Err(EngineError::Snapshot(error)) => error,
        Err(other) => panic!("expected a snapshot error, got {other:?}"),
        Ok((_, restored)) => panic!("the restore succeeded: {restored:?}"),
    }
}

fn output(report: RunReport) -> Value {
    report.result.expect("the run succeeds").output
}

/// A tool that counts its calls and answers with the count (times `scale`).
fn counting(calls: &Arc<AtomicU64>, scale: f64, delay: Option<u64>) -> FakeTool {
    let calls = Arc::clone(calls);
    let answer = move |_: Vec<Value>| -> ToolResult {
        let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
        #[allow(clippy::cast_precision_loss, reason = "a small count")]
        Ok(Value::Number(n as f64 * scale))
    };
    match delay {
        Some(millis) => after(millis, answer),
        None => sync(answer),
    }
}

fn host(calls: &Arc<AtomicU64>) -> FakeHost {
    FakeHost::default()
        .with("lookup", counting(calls, 1.0, None))
        .with("fetch", counting(calls, 10.0, Some(3)))
}

const SESSION: [&str; 3] = [
    "let n = lookup(); const f = await fetch(); var seen = [n, f];
     function twice(x) { return x * 2 }
     const counter = (() => { let c = 0; return () => ++c })(); counter();
     class P { #x = 1; bump() { return ++this.#x } }
     const p = new P(); p.bump();
     const key = { k: 1 }; const m = new Map([[key, 'v']]); const cycle = { m }; cycle.self = cycle;
     const bytes = new Uint8Array([1, 2, 3]); const view = new Uint16Array(bytes.buffer, 0, 1);",
    "counter(); globalThis.r = Math.random(); globalThis.t = Date.now(); const late = performance.now();
     const [a, b] = await Promise.all([fetch(), fetch()]); let order = [a, b];",
    "let tdz; try { later } catch (e) { tdz = e.name } let later = -0; var negative = 1 / later;",
];

const PROBE: &str =
    "[seen, twice(3), counter(), p.bump(), m.get(key), cycle.self === cycle, cycle.m === m,
    bytes[0], view[0], r, t, Math.random(), typeof late, order, tdz, negative, Object.is(later, -0),
    Object.getOwnPropertyNames(globalThis).length]";

#[test]
fn a_restored_session_answers_every_probe_as_the_original_and_calls_no_tool() {
    let options = Options::default();
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    for code in SESSION {
        output(run_on(&original, code, &options));
    }
    let made = calls.load(Ordering::SeqCst);
    assert_eq!(made, 4);
    let bytes = snapshot(&original);
    let replayed_calls = Arc::new(AtomicU64::new(100));
    let (restored, how) = restore(bytes.clone(), &options, host(&replayed_calls)).unwrap();
    assert!(matches!(how, Restored::Ready));
    assert_eq!(
        replayed_calls.load(Ordering::SeqCst),
        100,
        "no tool was called again"
    );
    let expected = output(run_on(&original, PROBE, &options));
    assert_eq!(output(run_on(&restored, PROBE, &options)), expected);
    // The restored session is itself durable: its snapshot is the same bytes.
    let again = snapshot(&restored);
    assert_eq!(
        codec::decode(&again[..]).ok(),
        None,
        "a snapshot is sealed, not a bare session"
    );
    let (first, second) = (
        seal::open(&bytes, None).unwrap(),
        seal::open(&again, None).unwrap(),
    );
    assert_eq!(first.journal.steps.len() + 1, second.journal.steps.len());
}

#[test]
fn math_random_and_the_clock_continue_after_a_restore() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(
        &original,
        "globalThis.drawn = [Math.random(), Math.random()]; globalThis.at = performance.now()",
        &options,
    ));
    let (restored, _) = restore(snapshot(&original), &options, FakeHost::default()).unwrap();
    let next = "[drawn, Math.random(), Math.random()]";
    assert_eq!(
        output(run_on(&restored, next, &options)),
        output(run_on(&original, next, &options))
    );
    // performance.now() goes on from where the session left it, never back.
    let later = output(run_on(&restored, "performance.now() >= at", &options));
    assert_eq!(later, Value::Bool(true));
    // Another executor draws other numbers.
    let other = engine_with(FakeHost::default(), &options);
    assert_ne!(
        output(run_on(&other, "Math.random()", &options)),
        output(run_on(&original, "Math.random()", &options))
    );
}

#[test]
fn recursion_stops_at_the_same_depth_in_a_replay() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(
        &original,
        "let depth = 0; function down() { depth++; down() } try { down() } catch (e) { globalThis.caught = e.name }",
        &options,
    ));
    let (restored, _) = restore(snapshot(&original), &options, FakeHost::default()).unwrap();
    let probe = "[depth, caught]";
    assert_eq!(
        output(run_on(&restored, probe, &options)),
        output(run_on(&original, probe, &options))
    );
}

#[test]
fn work_stopped_after_final_answer_stops_at_the_same_call_in_a_replay() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    // The jobs left after final_answer() run until the engine's next interrupt poll stops one
    // of them; a replay must reach that poll at the same job.
    let report = run_on(
        &original,
        "globalThis.k = 0; let p = Promise.resolve();
         for (let i = 0; i < 9000; i++) p = p.then(() => { globalThis.k += 1 });
         final_answer(1)",
        &options,
    );
    assert!(report.result.unwrap().is_final_answer);
    let stopped = output(run_on(&original, "k", &options));
    assert!(
        matches!(stopped, Value::Number(k) if k > 0.0 && k < 9000.0),
        "{stopped:?}"
    );
    let (restored, _) = restore(snapshot(&original), &options, FakeHost::default()).unwrap();
    assert_eq!(output(run_on(&restored, "k", &options)), stopped);
}

#[test]
fn timers_fire_in_their_recorded_order() {
    let options = Options {
        timers: true,
        ..Options::default()
    };
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    output(run_on(
        &original,
        "const log = []; const done = new Promise((resolve) => setTimeout(resolve, 30));
         setTimeout(() => log.push('a'), 10); fetch().then((v) => log.push('tool ' + v));
         const every = setInterval(() => { log.push('tick'); if (log.length > 4) clearInterval(every) }, 4);
         await done; log.push(setTimeout(() => {}, 1))",
        &options,
    ));
    let (restored, _) = restore(snapshot(&original), &options, host(&calls)).unwrap();
    assert_eq!(
        output(run_on(&restored, "log", &options)),
        output(run_on(&original, "log", &options))
    );
    // Timer ids continue where they were.
    assert_eq!(
        output(run_on(&restored, "setTimeout(() => {}, 1)", &options)),
        output(run_on(&original, "setTimeout(() => {}, 1)", &options))
    );
}

/// The session of `engine`, rewritten by `change` and sealed again (a tampered snapshot whose
/// checksum is right).
fn tampered(engine: &Engine, change: impl FnOnce(&mut Journal)) -> Vec<u8> {
    let mut session = seal::open(&snapshot(engine), None).unwrap();
    change(&mut session.journal);
    seal::seal(&session.terms, &session.journal, None)
}

fn last_run(journal: &mut Journal) -> &mut RunRecord {
    journal
        .steps
        .iter_mut()
        .rev()
        .find_map(|step| match step {
            Step::Run(run) => Some(run),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_replay_that_goes_another_way_is_refused_as_diverged() {
    let options = Options::default();
    let calls = Arc::new(AtomicU64::new(0));
    let original = engine_with(host(&calls), &options);
    // A function the session made keeps its state out of a checkpoint: the journal is replayed.
    output(run_on(&original, "function kept() {}", &options));
    output(run_on(
        &original,
        "globalThis.x = lookup() + Date.now()",
        &options,
    ));
    type Change = Box<dyn FnOnce(&mut Journal)>;
    let changes: [(&str, Change); 4] = [
        (
            "another code",
            Box::new(|journal| last_run(journal).code = "globalThis.x = 2".into()),
        ),
        (
            "events swapped",
            Box::new(|journal| last_run(journal).events.reverse()),
        ),
        (
            "an event dropped",
            Box::new(|journal| {
                last_run(journal).events.pop();
            }),
        ),
        (
            "another end",
            Box::new(|journal| {
                if let Some(end) = last_run(journal).end.as_mut() {
                    end.operations += 1;
                }
            }),
        ),
    ];
    for (what, change) in changes {
        let error = refusal(restore(tampered(&original, change), &options, host(&calls)));
        assert_eq!(error.problem, SnapshotProblem::Diverged, "{what}: {error}");
    }
    // A tool answer the journal says was huge is refused as the host's would be.
    let huge = tampered(&original, |journal| {
        last_run(journal).events[0] = Event::Returned(Ok(Value::String("x".repeat(1 << 20))));
    });
    assert!(restore(
        huge,
        &Options {
            max_value_bytes: 1024,
            ..Options::default()
        },
        host(&calls)
    )
    .is_err());
}

#[test]
fn limits_hold_while_a_session_is_replayed() {
    let options = Options {
        max_operations: 1_000_000,
        ..Options::default()
    };
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(
        &original,
        "function kept() {} let s = 0; for (let i = 0; i < 200000; i++) { s += i } s",
        &options,
    ));
    let bytes = snapshot(&original);
    let error = refusal(restore(
        bytes.clone(),
        &Options {
            max_operations: 1_000,
            ..options.clone()
        },
        FakeHost::default(),
    ));
    assert_eq!(
        (error.problem, error.limit),
        (SnapshotProblem::Limit, Some("maxOperations"))
    );
    let error = refusal(restore(
        bytes.clone(),
        &Options {
            timeout_ms: 1,
            ..options.clone()
        },
        FakeHost::default(),
    ));
    assert_eq!(
        (error.problem, error.limit),
        (SnapshotProblem::Limit, Some("timeoutMs"))
    );
    let big = engine_with(FakeHost::default(), &options);
    output(run_on(
        &big,
        "globalThis.blob = 'x'.repeat(8 << 20); 1",
        &options,
    ));
    let error = refusal(restore(
        snapshot(&big),
        &Options {
            memory_limit_bytes: 4 << 20,
            ..options.clone()
        },
        FakeHost::default(),
    ));
    assert_eq!(error.problem, SnapshotProblem::Limit, "{error}");
}

#[test]
fn a_restore_under_other_options_the_state_depends_on_is_refused() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(&original, "1", &options));
    let error = refusal(restore(
        snapshot(&original),
        &Options {
            timers: true,
            ..Options::default()
        },
        FakeHost::default(),
    ));
    assert_eq!(
        (error.problem, error.limit),
        (SnapshotProblem::Options, Some("timers"))
    );
}

fn resume_request(options: &Options) -> RunRequest {
    RunRequest::new(String::new(), options, RunAbort::new())
}

/// Resumes the paused run of `paused` in a fresh engine, with `answer`.
fn resume_from(
    paused: PausedRun,
    options: &Options,
    host: FakeHost,
    answer: ToolResult,
) -> RunReport {
    let (reply, report) = oneshot::channel();
    let (_engine, ready) = Engine::restore(
        EngineConfig::from(options),
        Arc::new(host),
        Source::Journal(paused.journal),
        limits(options),
        Some((resume_request(options), answer, reply)),
    );
    assert!(matches!(
        ready.blocking_recv().unwrap(),
        Ok(Restored::Resumed)
    ));
    report.blocking_recv().unwrap()
}

fn pausing(calls: &Arc<AtomicU64>) -> FakeHost {
    host(calls)
        .with(
            "approve",
            FakeTool::Pause(None, Value::String("ship it?".into())),
        )
        .with(
            "approveLater",
            FakeTool::Pause(Some(Duration::from_millis(3)), Value::Null),
        )
}

#[test]
fn a_run_paused_by_a_synchronous_tool_resumes_from_that_call() {
    let options = Options::default();
    let calls = Arc::new(AtomicU64::new(0));
    let engine = engine_with(pausing(&calls), &options);
    output(run_on(&engine, "globalThis.steps = []", &options));
    let report = run_on(
        &engine,
        "steps.push(lookup());\nconst answer = approve('deploy', 2);\nsteps.push(answer); answer + '!'",
        &options,
    );
    let paused = report.paused.expect("the run paused");
    assert_eq!(paused.call.tool, "approve");
    assert_eq!(
        paused.call.args,
        vec![Value::String("deploy".into()), Value::Number(2.0)]
    );
    assert_eq!(paused.call.line, Some(2));
    assert_eq!(paused.call.reason, Value::String("ship it?".into()));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let resumed = resume_from(
        *paused,
        &options,
        pausing(&calls),
        Ok(Value::String("yes".into())),
    );
    assert_eq!(output(resumed), Value::String("yes!".into()));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the call before the pause is not repeated"
    );
}

#[test]
fn a_run_paused_by_an_awaited_tool_resumes_after_a_snapshot_and_a_restore() {
    let options = Options::default();
    let calls = Arc::new(AtomicU64::new(0));
    let engine = engine_with(pausing(&calls), &options);
    let report = run_on(
        &engine,
        "const before = await fetch();\nlet verdict;\ntry { verdict = await approveLater() } catch (e) { verdict = 'refused: ' + e.message }\n[before, verdict, await fetch()]",
        &options,
    );
    let paused = report.paused.expect("the run paused");
    assert_eq!(
        (paused.call.tool.as_str(), paused.call.line),
        ("approveLater", Some(3))
    );
    // The paused session as a snapshot, restored: the engine holds the state before the run.
    let terms = crate::session::Terms::of(&options);
    let bytes = seal::seal(&terms, &paused.journal, None);
    let (restored, how) = restore(bytes, &options, pausing(&calls)).unwrap();
    match how {
        Restored::Paused(call, tools) => {
            assert_eq!(call, paused.call);
            assert!(tools.contains(&"approveLater".to_owned()));
        }
        other => panic!("expected a paused session, got {other:?}"),
    }
    let failure = ToolFailure::new("not today");
    let report = restored
        .resume(resume_request(&options), Err(failure))
        .blocking_recv()
        .unwrap();
    assert_eq!(
        output(report),
        Value::Array(vec![
            Some(Value::Number(10.0)),
            Some(Value::String("refused: not today".into())),
            Some(Value::Number(20.0)),
        ])
    );
}

/// Whether a snapshot's session starts from a checkpoint, and how many steps follow it.
fn checkpointed(bytes: &[u8]) -> (bool, usize) {
    let session = seal::open(bytes, None).unwrap();
    (
        matches!(
            session.journal.origin,
            crate::session::Origin::Checkpoint(_)
        ),
        session.journal.steps.len(),
    )
}

const DATA: &str = "
    const people = [{ name: 'Ana', tags: new Set(['a', -0]) }, { name: 'Luc', born: new Date(86400000) }];
    people[1].friend = people[0]; people[0].friend = people[1];
    const byName = new Map(people.map((p) => [p.name, p])); byName.set(people[0], 'object key');
    let sparse = [1, , 3]; sparse.length = 5; sparse.note = 'extra';
    const frozen = Object.freeze({ deep: Object.seal({ n: NaN }) });
    const shape = Object.create(null); Object.defineProperty(shape, 'hidden', { value: 1, enumerable: false });
    const own = Symbol('mine'); const shared = Symbol.for('app'); const keyed = { [own]: 1, [shared]: 2, [Symbol.iterator]: null };
    const pattern = /a(b)?/giy; pattern.lastIndex = 2;
    const bytes = new Uint8Array([1, 2, 3, 4]); const words = new Uint16Array(bytes.buffer, 2, 1); const view = new DataView(bytes.buffer, 1, 2);
    const floats = new Float64Array(2); floats[0] = -0; new Uint8Array(floats.buffer).set([1, 0, 0, 0, 0, 0, 248, 127], 8); floats.label = 'two';
    const failure = new TypeError('bad'); failure.code = 7;
    const boxed = [Object(1n), new String('s'), Object(own)];
    const indexed = { b: 1, 2147483648: 'past', 2147483647: 'last', 0: 'zero', '01': 'padded', 4294967295: 'top' };
    let later; const answer = 42n ** 3n;
    var counter = 3;
    try { pending } catch {} let pending = undefined; globalThis.direct = { proto: Object.getPrototypeOf([]) };";

const DATA_PROBE: &str = "[
    people[1].friend === people[0], [...people[0].tags].map((t) => Object.is(t, -0)), people[1].born.getTime(),
    byName.get('Luc') === people[1], byName.get(people[0]), [...byName.keys()].length,
    sparse.length, 1 in sparse, sparse.note, Object.isFrozen(frozen), Object.isSealed(frozen.deep), Number.isNaN(frozen.deep.n),
    Object.getPrototypeOf(shape), Object.getOwnPropertyDescriptor(shape, 'hidden').enumerable,
    keyed[own], keyed[shared], Symbol.keyFor(Object.getOwnPropertySymbols(keyed)[1]), Reflect.ownKeys(keyed).length,
    pattern.source, pattern.flags, pattern.lastIndex, pattern.exec('xxab')?.[0],
    [...bytes], words[0], view.getUint16(0), words.buffer === bytes.buffer,
    Object.is(floats[0], -0), [...new Uint8Array(floats.buffer)].join(), floats.label,
    failure instanceof TypeError, failure.message, failure.code, Object.prototype.toString.call(failure),
    typeof boxed[0], boxed[0] + 1n, boxed[1].length, typeof boxed[2].valueOf(),
    Reflect.ownKeys(indexed).join(), indexed[2147483647], indexed[2147483648],
    later, String(answer), counter, pending, direct.proto === Array.prototype,
    Object.keys(globalThis).includes('counter')
]";

#[test]
fn a_state_of_data_is_checkpointed_and_restores_from_the_image_alone() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(&original, DATA, &options));
    let bytes = snapshot(&original);
    assert_eq!(checkpointed(&bytes), (true, 0));
    let (restored, _) = restore(bytes.clone(), &options, FakeHost::default()).unwrap();
    // The same image from the restored session: nothing was lost or added.
    assert_eq!(snapshot(&restored), bytes);
    let expected = output(run_on(&original, DATA_PROBE, &options));
    assert_eq!(output(run_on(&restored, DATA_PROBE, &options)), expected);
    // The session goes on from the checkpoint: its journal holds only what came after.
    output(run_on(&original, "counter += 1", &options));
    assert_eq!(checkpointed(&snapshot(&original)), (true, 0));
}

#[test]
fn array_elements_are_kept_as_index_keys_not_as_decimal_strings() {
    use crate::session::image::{Key, Kind, MAX_INDEX_KEY};
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(
        &original,
        "const list = ['a', 'b']; list[2147483648] = 'past'",
        &options,
    ));
    let session = seal::open(&snapshot(&original), None).unwrap();
    let crate::session::Origin::Checkpoint(image) = &session.journal.origin else {
        panic!("not checkpointed");
    };
    let array = image
        .nodes
        .iter()
        .find(|node| matches!(node.kind, Kind::Array))
        .unwrap();
    let keys: Vec<&Key> = array
        .properties
        .iter()
        .map(|property| &property.key)
        .collect();
    assert_eq!(keys[..2], [&Key::Index(0), &Key::Index(1)]);
    // Past QuickJS's integer atoms, an index is a string key, as the engine keeps it.
    assert!(keys.contains(&&Key::String((u64::from(MAX_INDEX_KEY) + 1).to_string())));
}

#[test]
fn a_changed_built_in_or_a_function_keeps_the_state_out_of_a_checkpoint_and_the_journal_replays() {
    let options = Options::default();
    for change in [
        "Array.prototype.total = function () { return this.reduce((a, b) => a + b, 0) }",
        "Object.freeze(Math)",
        "delete globalThis.escape",
        "JSON.parse = JSON.stringify",
        "new Map().constructor.prototype.extra = 1",
        "const f = () => 1",
        "class K {}",
        "globalThis.weak = new WeakMap()",
        "var p = Promise.resolve(1)",
    ] {
        let original = engine_with(FakeHost::default(), &options);
        output(run_on(&original, "let before = [1, 2]", &options));
        output(run_on(&original, change, &options));
        let bytes = snapshot(&original);
        // The tools sent (none), and the two runs.
        assert_eq!(checkpointed(&bytes), (false, 3), "{change}");
        let (restored, _) = restore(bytes, &options, FakeHost::default()).unwrap();
        let probe = "[before, typeof Array.prototype.total, Math.PI, typeof escape, JSON.parse === JSON.stringify]";
        assert_eq!(
            output(run_on(&restored, probe, &options)),
            output(run_on(&original, probe, &options)),
            "{change}"
        );
    }
}

#[test]
fn a_run_after_a_checkpoint_stops_at_the_same_point_after_final_answer() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(
        &original,
        "let data = Array.from({ length: 50 }, (_, i) => ({ i }))",
        &options,
    ));
    assert_eq!(checkpointed(&snapshot(&original)), (true, 0));
    let report = run_on(
        &original,
        "globalThis.k = 0; let p = Promise.resolve();
         for (let i = 0; i < 9000; i++) p = p.then(() => { globalThis.k += 1 });
         final_answer(1)",
        &options,
    );
    assert!(report.result.unwrap().is_final_answer);
    let bytes = snapshot(&original);
    assert_eq!(checkpointed(&bytes), (true, 1));
    let (restored, _) = restore(bytes, &options, FakeHost::default()).unwrap();
    assert_eq!(
        output(run_on(&restored, "[k, data.length]", &options)),
        output(run_on(&original, "[k, data.length]", &options))
    );
}

#[test]
fn a_weak_reference_keeps_the_session_from_a_snapshot_until_a_checkpoint() {
    let options = Options::default();
    let original = engine_with(FakeHost::default(), &options);
    output(run_on(&original, DATA, &options));
    // When the garbage collector runs depends on the heap's history, which a replay does not
    // repeat: the original found these targets collected, a replay found them alive.
    for code in [
        "globalThis.refs = []; for (let k = 0; k < 50; k++) { const a = { k }; a.self = a; refs.push(new WeakRef(a)) }",
        "globalThis.registry = new FinalizationRegistry(() => {})",
    ] {
        output(run_on(&original, code, &options));
        let refused = original.snapshot(None).blocking_recv().unwrap();
        assert!(
            matches!(&refused, Err(EngineError::NotDurable(why)) if why.contains("WeakRef")),
            "{code}: {refused:?}"
        );
    }
    // Once no WeakRef is left in the state, a checkpoint holds it exactly.
    output(run_on(
        &original,
        "delete globalThis.refs; delete globalThis.registry",
        &options,
    ));
    let bytes = snapshot(&original);
    assert_eq!(checkpointed(&bytes), (true, 0));
    // A WeakRef the guest cannot make does not mark the session (a TypeError before it).
    output(run_on(
        &original,
        "try { new WeakRef(1) } catch {}",
        &options,
    ));
    snapshot(&original);
}

/// Whether a charge fits in `memoryLimitBytes` depends on what the heap holds, which a restore
/// does not repeat: a run that caught a refused canvas could go another way when replayed.
#[test]
fn a_refused_charge_keeps_the_session_from_a_snapshot() {
    let options = Options {
        memory_limit_bytes: 16 << 20,
        ..Options::default()
    };
    let attempt = |side: u32| {
        let engine = engine_with(FakeHost::default(), &options);
        let code = format!(
            "try {{ getCanvas({side}, {side}) }} catch (e) {{ globalThis.caught = e.name }}"
        );
        output(run_on(&engine, &code, &options));
        engine.snapshot(None).blocking_recv().unwrap()
    };
    let refused = attempt(4000);
    assert!(
        matches!(&refused, Err(EngineError::NotDurable(why)) if why.contains("memoryLimitBytes")),
        "{refused:?}"
    );
    // The same run with a canvas that fits is kept.
    assert!(attempt(4).is_ok());
}

#[test]
fn a_run_cannot_pause_in_a_session_a_replay_cannot_repeat() {
    let options = Options::default();
    let calls = Arc::new(AtomicU64::new(0));
    let engine = engine_with(pausing(&calls), &options);
    output(run_on(
        &engine,
        "globalThis.ref = new WeakRef({})",
        &options,
    ));
    // Resuming replays the run up to the paused call: a run that could go another way in the
    // replay does not pause; the call fails, for the code to handle.
    for code in [
        "let m1; try { approve() } catch (e) { m1 = e.message } m1",
        "let m2; try { await approveLater() } catch (e) { m2 = e.message } m2",
    ] {
        let report = run_on(&engine, code, &options);
        assert!(report.paused.is_none(), "{code}");
        let Value::String(message) = output(report) else {
            panic!("{code}: the call did not fail with a message")
        };
        assert!(message.contains("cannot pause"), "{code}: {message}");
    }
}

mod forged;

/// A session that keeps a function (so no checkpoint) and received `answers` tool answers of
/// 1 MiB each, under an 8 MiB limit.
fn holding_answers(answers: usize) -> (Engine, Options) {
    let options = Options {
        memory_limit_bytes: 8 << 20,
        ..Options::default()
    };
    let host = FakeHost::default().with("page", sync(|_| Ok(Value::String("x".repeat(1 << 20)))));
    let engine = engine_with(host, &options);
    output(run_on(&engine, "function keep() {}", &options));
    for _ in 0..answers {
        output(run_on(&engine, "page().length", &options));
    }
    (engine, options)
}

#[test]
fn the_journal_counts_against_memory_limit_bytes() {
    let (engine, options) = holding_answers(3);
    let report = run_on(&engine, "1", &options);
    let peak = report.stats.peak_heap_bytes;
    assert!(
        peak > 3 << 20,
        "a trivial run's peak counts the journal: {peak}"
    );
    // Still durable: the journal holds the answers, and a restore's journal counts them too.
    let bytes = snapshot(&engine);
    let (restored, _) = restore(bytes, &options, FakeHost::default()).unwrap();
    let peak = run_on(&restored, "1", &options).stats.peak_heap_bytes;
    assert!(peak > 3 << 20, "a restored journal counts too: {peak}");
}

#[test]
fn the_journal_gives_way_to_what_the_sandbox_needs_and_the_session_says_why() {
    let (engine, options) = holding_answers(4);
    // 5 MiB beside a 4 MiB journal passes 8 MiB: the journal goes, the run does not fail.
    output(run_on(
        &engine,
        "globalThis.big = 'y'.repeat(5 << 20); big.length",
        &options,
    ));
    let report = run_on(&engine, "1", &options);
    assert!(report.stats.peak_heap_bytes < 8 << 20);
    match engine.snapshot(None).blocking_recv().unwrap() {
        Err(EngineError::NotDurable(why)) => {
            assert!(why.contains("dropped to make room"), "{why}");
        }
        other => panic!(
            "expected NotDurable, got {:?}",
            other.map(|bytes| bytes.len())
        ),
    }
}

#[test]
fn a_journal_that_would_not_fit_is_not_kept_and_the_run_goes_on() {
    // Two 1 MiB answers at once beside a 6 MiB string: the second cannot be kept.
    let (engine, options) = holding_answers(0);
    output(run_on(
        &engine,
        "globalThis.big = 'y'.repeat(6 << 20); [page().length, page().length]",
        &options,
    ));
    assert!(matches!(
        engine.snapshot(None).blocking_recv().unwrap(),
        Err(EngineError::NotDurable(_))
    ));
    // Nothing is kept for the runs after it either, until a checkpoint.
    output(run_on(&engine, "page().length", &options));
    let report = run_on(&engine, "1", &options);
    assert!(report.stats.peak_heap_bytes < 7 << 20);
}

/// A run that pauses records its call as its last event; a call whose arguments would not fit
/// beside the journal must not drop the journal the resume replays (the state before the run
/// would be lost, and the resumed run would answer from another state).
#[test]
fn a_pause_whose_call_would_not_fit_beside_the_journal_resumes_with_the_whole_session() {
    let options = Options {
        memory_limit_bytes: 8 << 20,
        ..Options::default()
    };
    let calls = Arc::new(AtomicU64::new(0));
    let engine = engine_with(pausing(&calls), &options);
    output(run_on(
        &engine,
        "function keep() {} globalThis.before = 41",
        &options,
    ));
    let report = run_on(
        &engine,
        "const big = 'y'.repeat(6 << 20); const answer = approve(big); before + answer",
        &options,
    );
    let paused = report.paused.expect("the run paused");
    let resumed = resume_from(*paused, &options, pausing(&calls), Ok(Value::Number(1.0)));
    assert_eq!(output(resumed), Value::Number(42.0));
}

/// A restore under a smaller `memoryLimitBytes` than the session was made with: the journal
/// it rebuilds gives way to what the replayed runs need, as the original's would have, rather
/// than failing a replayed run that fits without it.
#[test]
fn a_replay_under_a_smaller_limit_drops_the_rebuilt_journal_before_failing_a_run() {
    let roomy = Options {
        memory_limit_bytes: 64 << 20,
        ..Options::default()
    };
    let host =
        || FakeHost::default().with("page", sync(|_| Ok(Value::String("x".repeat(1 << 20)))));
    let original = engine_with(host(), &roomy);
    output(run_on(&original, "function keep() {}", &roomy));
    for _ in 0..4 {
        output(run_on(&original, "page().length", &roomy));
    }
    output(run_on(
        &original,
        "globalThis.size = 'y'.repeat(5 << 20).length",
        &roomy,
    ));
    let bytes = snapshot(&original);
    let tight = Options {
        memory_limit_bytes: 8 << 20,
        ..Options::default()
    };
    let (restored, how) = restore(bytes, &tight, host()).expect("the restore succeeds");
    assert!(matches!(how, Restored::Ready));
    assert_eq!(
        output(run_on(&restored, "size", &tight)),
        Value::Number(f64::from(5 << 20))
    );
    assert!(matches!(
        restored.snapshot(None).blocking_recv().unwrap(),
        Err(EngineError::NotDurable(why)) if why.contains("dropped to make room")
    ));
}

/// Canvas charges (pixels, image data, the PNG held for the answer) that need the journal's
/// room take it, as QuickJS's blocks do: the run draws and answers with its image.
#[test]
fn canvases_image_data_and_pngs_take_the_journals_room_and_the_run_draws() {
    let (engine, options) = holding_answers(4);
    let options = Options {
        max_operations: 1 << 20,
        ..options
    };
    // About 2 MiB of noise (it does not compress) three times over: the canvas, its image
    // data and its PNG fit in 8 MiB only without the 4 MiB journal.
    let report = run_on(
        &engine,
        "const g = getCanvas(700, 700).getContext('2d');
         const data = g.createImageData(700, 700), words = new Uint32Array(data.data.buffer);
         let x = 1; for (let i = 0; i < words.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; words[i] = x | 0xff000000 }
         g.putImageData(data, 0, 0);
         g.getImageData(0, 0, 700, 700).data.length",
        &options,
    );
    assert_eq!(report.images.len(), 1, "{:?}", report.result);
    assert!(report.images[0].data.len() > 1 << 20);
    assert_eq!(output(report), Value::Number(1_960_000.0));
    assert!(matches!(
        engine.snapshot(None).blocking_recv().unwrap(),
        Err(EngineError::NotDurable(why)) if why.contains("dropped to make room")
    ));
}
