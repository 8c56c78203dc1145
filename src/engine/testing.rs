//! A fake host for tests: tools are Rust closures, answered synchronously or, for "async"
//! tools, from another thread after a delay — the way Node answers a promise.
//!
//! Spec: §7.4 (tool invocation contract).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::host::{
    Host, PauseRequest, ToolCall, ToolFailure, ToolResult, ToolSettlement, ToolSpec,
};
use super::{Engine, EngineConfig, RunAbort, RunReport, RunRequest};
use crate::options::Options;
use crate::value::Value;

type Behaviour = Arc<dyn Fn(Vec<Value>) -> ToolResult + Send + Sync>;

/// How a fake tool answers.
#[derive(Clone)]
pub enum FakeTool {
    /// Returns at once.
    Sync(Behaviour),
    /// Returns a promise settled after the delay.
    Async(Duration, Behaviour),
    /// Returns synchronously, but only after the delay (a slow synchronous host function: the
    /// engine's thread waits for it).
    SlowSync(Duration, Behaviour),
    /// Returns a promise that never settles.
    Never,
    /// Asks the run to pause with this reason (`pauseRun`), synchronously or (with a delay)
    /// through its promise.
    Pause(Option<Duration>, Value),
}

/// The settlements of [`FakeTool::Never`]'s calls, for the rest of the process.
static NEVER_SETTLED: std::sync::Mutex<Vec<ToolSettlement>> = std::sync::Mutex::new(Vec::new());

/// A [`Host`] whose tools are [`FakeTool`]s.
#[derive(Default)]
pub struct FakeHost {
    tools: HashMap<String, FakeTool>,
}

impl FakeHost {
    /// Adds a tool.
    pub fn with(mut self, name: &str, tool: FakeTool) -> Self {
        self.tools.insert(name.into(), tool);
        self
    }
}

impl Host for FakeHost {
    fn call_tool(&self, call: ToolCall) {
        match self.tools.get(&call.tool).cloned() {
            None => call
                .reply
                .returned(Err(ToolFailure::new(format!("no tool {}", call.tool)))),
            Some(FakeTool::Sync(behaviour)) => call.reply.returned(behaviour(call.args)),
            Some(FakeTool::Async(delay, behaviour)) => {
                let settlement = call.reply.pending();
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    settlement.settle(behaviour(call.args));
                });
            }
            Some(FakeTool::SlowSync(delay, behaviour)) => {
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    call.reply.returned(behaviour(call.args));
                });
            }
            // Kept, not forgotten: a settlement held for good is still reachable (LeakSanitizer
            // reports what is not), and dropping it would settle the promise.
            Some(FakeTool::Never) => NEVER_SETTLED
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(call.reply.pending()),
            Some(FakeTool::Pause(None, reason)) => call.reply.paused(PauseRequest {
                reason,
                args: call.args,
            }),
            Some(FakeTool::Pause(Some(delay), reason)) => {
                let settlement = call.reply.pending();
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    settlement.paused(PauseRequest {
                        reason,
                        args: call.args,
                    });
                });
            }
        }
    }
}

/// A sync tool from a closure.
pub fn sync(f: impl Fn(Vec<Value>) -> ToolResult + Send + Sync + 'static) -> FakeTool {
    FakeTool::Sync(Arc::new(f))
}

/// An async tool from a closure, settling after `millis`.
pub fn after(
    millis: u64,
    f: impl Fn(Vec<Value>) -> ToolResult + Send + Sync + 'static,
) -> FakeTool {
    FakeTool::Async(Duration::from_millis(millis), Arc::new(f))
}

/// A started engine serving `host`'s tools under `options`, with the tools installed.
pub fn engine_with(host: FakeHost, options: &Options) -> Engine {
    let names: Vec<String> = host.tools.keys().cloned().collect();
    let (engine, ready) = Engine::start(EngineConfig::from(options), Arc::new(host));
    ready.blocking_recv().unwrap().unwrap();
    engine
        .define_tools(names.into_iter().map(ToolSpec::from).collect())
        .blocking_recv()
        .unwrap()
        .unwrap();
    engine
}

/// Runs `code` and waits for the report.
pub fn run_on(engine: &Engine, code: &str, options: &Options) -> RunReport {
    run_abortable(engine, code, options, &RunAbort::new())
}

/// Runs `code` with `input` bound, and waits for the report.
pub fn run_with_input(
    engine: &Engine,
    code: &str,
    options: &Options,
    input: Option<Value>,
) -> RunReport {
    engine
        .run(RunRequest::new(code.into(), options, RunAbort::new()).with_input(input))
        .blocking_recv()
        .unwrap()
}

/// Runs `code`, which `abort` can abort, and waits for the report.
pub fn run_abortable(
    engine: &Engine,
    code: &str,
    options: &Options,
    abort: &RunAbort,
) -> RunReport {
    engine
        .run(RunRequest::new(code.into(), options, abort.clone()))
        .blocking_recv()
        .unwrap()
}

/// How many times slower than usual the tests' code runs: `SES_TEST_SLOW` (a whole number, 1 when
/// unset or unreadable), which `npm run test:asan` sets for the sanitizer's cost. The time bounds
/// of tests that prove something stops promptly are multiplied by it; nothing else changes.
pub fn slowdown() -> u32 {
    std::env::var("SES_TEST_SLOW")
        .ok()
        .and_then(|factor| factor.parse().ok())
        .filter(|&factor| factor >= 1)
        .unwrap_or(1)
}
