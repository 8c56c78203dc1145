//! Snapshots as untrusted input (docs/sessions.md): the first input byte chooses what
//! the rest is.
//!
//! - `0`: a whole snapshot, opened as `restore()` opens one, without a key and with one: every
//!   input is refused with a `SnapshotError` or read, never a panic.
//! - anything else: a session's payload (what the seal wraps), decoded. A payload that decodes
//!   encodes back to bytes that decode to the same session; sealed under the engine's own terms
//!   (so that its steps are replayed, not refused for their options), it is restored into an
//!   engine with small limits (16 MiB, 200 ms, 10,000 loop iterations): the restore succeeds or
//!   fails with a structured error, the process survives every tampered journal and image, and a
//!   restored engine still runs code.

use std::sync::Arc;

use ses_executor::engine::host::{Host, ToolCall};
use ses_executor::engine::session::{ReplayLimits, Source};
use ses_executor::engine::{Engine, EngineConfig, RunAbort, RunRequest};
use ses_executor::options::Options;
use ses_executor::session::{codec, seal, Terms};

/// The key a signed snapshot is checked with.
const KEY: &[u8] = b"a fuzzing key of enough bytes";

/// A host no replay asks anything of: replayed calls are answered from the journal.
struct Silent;

impl Host for Silent {
    fn call_tool(&self, call: ToolCall) {
        drop(call);
    }
}

fn options() -> Options {
    Options {
        memory_limit_bytes: 16 << 20,
        timeout_ms: 200,
        max_operations: 10_000,
        timers: true,
        ..Options::default()
    }
}

/// Checks one input (see the module documentation); panics on any violation.
pub fn check_snapshot(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else {
        return;
    };
    if mode == 0 {
        let _ = seal::open(bytes, None);
        let _ = seal::open(bytes, Some(KEY));
        return;
    }
    let Ok(session) = codec::decode(bytes) else {
        return;
    };
    let again = codec::encode(&session.terms, &session.journal);
    let decoded = codec::decode(&again).expect("a session's own encoding decodes");
    assert_eq!(
        codec::encode(&decoded.terms, &decoded.journal),
        again,
        "encoding is stable"
    );
    let options = options();
    let terms = Terms::of(&options);
    let sealed = seal::seal(&terms, &session.journal, None);
    let (engine, ready) = Engine::restore(
        EngineConfig::from(&options),
        Arc::new(Silent),
        Source::Bytes(sealed, None),
        ReplayLimits {
            max_operations: options.max_operations,
            timeout_ms: options.timeout_ms,
        },
        None,
    );
    if let Ok(Ok(_)) = ready.blocking_recv() {
        // Whatever the session made, the engine still runs code (unless the session left the
        // context unusable, which a run then reports).
        let report = engine
            .run(RunRequest::new("1 + 1".into(), &options, RunAbort::new()))
            .blocking_recv()
            .expect("a restored engine answers runs");
        drop(report);
    }
    let _ = engine.stop().blocking_recv();
}

/// Real snapshots to start the fuzzer from (`mode 0` + sealed, `mode 1` + payload): a session
/// replayed from its journal, one checkpointed, and one paused in a run.
pub fn seeds() -> Vec<Vec<u8>> {
    let options = options();
    let sessions: [&[&str]; 3] = [
        &[
            "function kept(x) { return x * 2 } let n = kept(21)",
            "const t = [Date.now(), Math.random()]; for (let i = 0; i < 10; i++) n++",
        ],
        &[
            "const data = { list: [1, , 3], map: new Map([[1, 'a']]), when: new Date(0) }; data.self = data",
            "let late; const bytes = new Uint8Array([1, 2, 3]); const s = Symbol.for('k')",
        ],
        &["globalThis.k = 0; await new Promise((resolve) => setTimeout(resolve, 2)); k = 1"],
    ];
    let mut seeds = Vec::new();
    for runs in sessions {
        let (engine, ready) = Engine::start(EngineConfig::from(&options), Arc::new(Silent));
        ready.blocking_recv().expect("answers").expect("starts");
        for code in runs {
            let _ = engine
                .run(RunRequest::new((*code).into(), &options, RunAbort::new()))
                .blocking_recv();
        }
        let sealed = engine
            .snapshot(None)
            .blocking_recv()
            .expect("answers")
            .expect("a session at rest is written");
        let session = seal::open(&sealed, None).expect("its own snapshot opens");
        seeds.push([&[0], &sealed[..]].concat());
        seeds.push([&[1], &codec::encode(&session.terms, &session.journal)[..]].concat());
    }
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_snapshots_and_every_cut_of_one_are_checked_without_a_failure() {
        let seeds = seeds();
        for seed in &seeds {
            check_snapshot(seed);
        }
        let payload = &seeds[3];
        for end in (1..payload.len()).step_by(7) {
            check_snapshot(&payload[..end]);
        }
    }

    /// Writes the seeds to `fuzz/corpus/snapshot` (`cargo test --lib -- --ignored seeds`).
    #[test]
    #[ignore = "writes the fuzzer's starting corpus"]
    fn write_seeds() {
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/snapshot");
        std::fs::create_dir_all(&directory).expect("a corpus directory");
        for (number, seed) in seeds().iter().enumerate() {
            std::fs::write(directory.join(format!("seed-{number}")), seed).expect("writable");
        }
    }
}
