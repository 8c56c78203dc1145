//! The host side of tool calls (§7.4): the engine thread reaches Node's thread through the
//! executor's queue (`queue.rs`); on Node's thread the call is dispatched to the tool the host
//! sent, and the tool's value, promise or exception is answered back.
//!
//! Every reference to a JS function lives in the tool table, which is only touched on Node's
//! thread (by `sendTools` and by the dispatcher) and dropped there.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use napi::bindgen_prelude::{FunctionRef, Unknown};
use napi::{Env, JsValue};

use super::env_data;
use super::guarded::{self, Thrown};
use super::log_stream::LogStream;
use super::queue::NodeQueue;
use super::session::pause_reason;
use super::value::{from_js, to_js};
use super::watcher::{OnSettled, Watcher};
use crate::engine::host::{
    Host, LogEntry, PauseRequest, ToolCall, ToolFailure, ToolReply, ToolResult,
};
use crate::scheduler::pool::others_waiting_besides_one;
use crate::scheduler::spin::{Chain, Core, Spin};
use crate::value::Value;

/// A tool as the host sent it: the function to call, and for a smolagents tool object
/// (`{ inputs, forward(args) }`) the names of its inputs, from which the engine makes the one
/// object of named inputs `forward` takes (`crate::tool_args::named_inputs`).
pub struct NodeTool {
    /// The tool's function; for a tool object, its `forward` bound to the object
    /// (`env_data::bind_method`), so that one function reference holds both.
    pub function: ToolFunction,
    /// `Some` for a tool object.
    pub inputs: Option<Vec<String>>,
}

/// A host function the addon calls (through `guarded::call`). Every reference the node layer
/// keeps to a host value is a `FunctionRef` like this one: napi-rs releases it when it is
/// dropped, on whichever thread, and forgets it when its environment is torn down (an
/// `ObjectRef` needs an explicit `unref` on Node's thread, and leaked its object wherever that
/// was missed).
pub type ToolFunction = FunctionRef<(), Unknown<'static>>;

/// The tools of one executor: the functions of its object modules, for its whole life, and the
/// tools sent to it, until `cleanup()` (a later `init()` builds a sandbox without them).
#[derive(Default)]
pub struct Tools {
    modules: HashMap<String, NodeTool>,
    sent: HashMap<String, NodeTool>,
}

impl Tools {
    /// Tools that start with the functions of the object modules.
    pub fn with_modules(modules: Vec<(String, NodeTool)>) -> Self {
        Self {
            modules: modules.into_iter().collect(),
            sent: HashMap::new(),
        }
    }

    /// Adds sent tools (a name sent again is replaced).
    pub fn send(&mut self, tools: Vec<(String, NodeTool)>) {
        self.sent.extend(tools);
    }

    /// Drops the sent tools (the sandbox that could call them is gone); on Node's thread.
    pub fn forget_sent(&mut self) -> HashMap<String, NodeTool> {
        std::mem::take(&mut self.sent)
    }

    fn get(&self, name: &str) -> Option<&NodeTool> {
        self.sent.get(name).or_else(|| self.modules.get(name))
    }
}

/// The tools of one executor, shared by its `SESExecutor` and its dispatcher.
pub type ToolTable = Arc<Mutex<Tools>>;

/// Locks the table (poisoning cannot leave it inconsistent: every change is one call).
pub fn lock(table: &ToolTable) -> MutexGuard<'_, Tools> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The [`Host`] the engine thread calls: tool calls and log entries go to Node's thread on the
/// executor's queue.
pub struct NodeHost {
    queue: Arc<NodeQueue>,
    /// Tool calls queued for Node's thread so far (see [`Burst`]).
    calls: Arc<AtomicU64>,
    /// `onLog`, when the caller set it.
    logs: Option<LogStream>,
}

impl NodeHost {
    /// A host dispatching to `tools`, and streaming log entries to `logs` if given, bound to
    /// `env`'s thread; a tool's result of more than `max_value_bytes` (`maxValueBytes`) is a
    /// failure of the call.
    pub fn new(
        env: &Env,
        tools: ToolTable,
        logs: Option<LogStream>,
        max_value_bytes: u64,
    ) -> napi::Result<Self> {
        let watches = Rc::new(RefCell::new(Watches::default()));
        let calls = Arc::new(AtomicU64::new(0));
        let sender = Arc::new(Core::new());
        let burst = Rc::new(RefCell::new(Burst::new(
            Arc::clone(&calls),
            Arc::clone(&sender),
        )));
        let data = env_data::require(env)?;
        let queue = NodeQueue::new(
            data.queue(env)?,
            &data.dispatchers,
            sender,
            move |env, call| {
                burst.borrow_mut().dispatched += 1;
                if dispatch(env, &tools, &watches, &burst, call, max_value_bytes) {
                    burst.borrow_mut().await_next_call();
                }
            },
        );
        Ok(Self {
            queue: Arc::new(queue),
            calls,
            logs,
        })
    }

    /// The executor's queue to Node's thread, which also settles its promises.
    pub fn queue(&self) -> Arc<NodeQueue> {
        Arc::clone(&self.queue)
    }
}

impl Host for NodeHost {
    fn call_tool(&self, call: ToolCall) {
        self.queue.call_tool(call);
        // Counted once queued, so that Node's thread, seeing the count move, knows the call
        // is in the threadsafe function's queue.
        self.calls.fetch_add(1, Ordering::Release);
    }

    fn streams_logs(&self) -> bool {
        self.logs.is_some()
    }

    // Entries share the queue that settles the run's promise, so none can be overtaken by it.
    fn log(&self, entry: LogEntry) {
        if let Some(logs) = &self.logs {
            self.queue.on_node(logs.deliver(entry));
        }
    }
}

/// How long Node's thread waits, after answering a synchronous tool call, for the engine's next
/// one.
const NEXT_CALL_WAIT: Duration = Duration::from_micros(20);
/// The longest chain of calls Node's thread serves by waiting, after which it answers one call
/// without waiting, so that the event loop gets its turn.
const CHAIN_LIMIT: Duration = Duration::from_millis(1);

/// Node's side of a burst of tool calls (code calling a tool in a loop).
///
/// Each call reaches Node's thread through the threadsafe function, whose signal wakes the
/// event loop from `epoll`, and Node's queue lock is still held by the signalling engine
/// thread when Node's thread wakes (perf record of a sync-tool loop: 8% of all samples were
/// Node's thread blocked on that lock): two wake-ups per call, most of a synchronous call's
/// time. But a call queued while Node is still dispatching the previous one is taken in the
/// same dispatch loop, with no signal at all. So after answering a synchronous call Node's
/// thread waits up to [`NEXT_CALL_WAIT`] for the next call, which the engine thread sends within
/// microseconds, without giving up its core (see [`Spin::keeping_core`]; no wait when the
/// engine thread ran on Node's core). A chain of calls served so lasts at most [`CHAIN_LIMIT`];
/// then Node's thread answers one call without waiting and goes back to its event loop, which
/// runs its timers and I/O before it takes the next call (which starts a new chain). Stopping
/// the waits for as long as the chain had lasted instead made half of a tool loop's calls each
/// take a turn of the event loop (bench/README.md, "Tool-call chains on Node's thread").
///
/// An asynchronous tool's answer goes back when its promise settles, in a microtask; a promise
/// that settles at once (a tool answering from memory) runs it as the dispatch that called the
/// tool closes, still inside the same dispatch loop. So the answer waits the same way (see
/// [`watch`]), and an awaited tool called in a loop is served without a wake-up either.
struct Burst {
    chain: Chain,
    /// Tool calls queued for Node's thread so far (by the engine thread).
    calls: Arc<AtomicU64>,
    /// Tool calls taken from the queue so far.
    dispatched: u64,
    /// The core of the engine thread that queued the last call (see [`Spin::keeping_core`]).
    caller: Arc<Core>,
}

impl Burst {
    fn new(calls: Arc<AtomicU64>, caller: Arc<Core>) -> Self {
        Self {
            chain: Chain::new(CHAIN_LIMIT),
            calls,
            dispatched: 0,
            caller,
        }
    }

    /// Waits until more calls have been queued than taken, within the bounds above.
    fn await_next_call(&mut self) {
        let (calls, taken) = (&*self.calls, self.dispatched);
        // With executors queued for engine threads every core is wanted: a waiting Node thread
        // that yields its core may not get it back for a whole time slice, and every engine
        // thread waiting on one of its answers waits as long (bench/README.md, "Tool-call chains
        // on Node's thread"). Nor would the wait save a wake-up: Node's thread has work queued.
        // One queued job may be this executor's own, queued by the answer just given (an engine
        // that awaited the tool off its thread), so it takes two (see `NodeQueue::await_message`).
        if others_waiting_besides_one() {
            self.chain.end();
            return;
        }
        let Some(spin) = Spin::keeping_core(&self.caller) else {
            self.chain.end();
            return;
        };
        let Some(until) = self.chain.wait_until(Instant::now(), NEXT_CALL_WAIT) else {
            return;
        };
        spin.until(until, || {
            calls.load(Ordering::Acquire) > taken || others_waiting_besides_one()
        });
        if calls.load(Ordering::Acquire) <= taken {
            self.chain.end();
        }
    }
}

/// Calls the tool on Node's thread and answers the engine. Never fails: every error becomes
/// the tool's failure, and whatever the tool throws (or its result's getters) is caught and
/// cleared (see `guarded`).
/// Returns whether the tool answered synchronously.
fn dispatch(
    env: &Env,
    tools: &ToolTable,
    watches: &Rc<RefCell<Watches>>,
    burst: &Rc<RefCell<Burst>>,
    call: ToolCall,
    max_value_bytes: u64,
) -> bool {
    let ToolCall { tool, args, reply } = call;
    let target = {
        let table = lock(tools);
        match table.get(&tool) {
            None => Err(ToolFailure::new(format!("tool '{tool}' is not available"))),
            // The engine has named a tool object's arguments already (`ToolSpec`).
            Some(NodeTool { function, .. }) => function
                .borrow_back(env)
                .map(|function| (function.to_unknown(), guarded::undefined(env)))
                .map_err(|error| ToolFailure::new(error.reason)),
        }
    };
    // The table is unlocked before the tool runs: a tool may itself call sendTools.
    let outcome = target.and_then(|(function, this)| {
        let args = args
            .iter()
            .map(|value| to_js(env, value).map(|value| value.raw()))
            .collect::<napi::Result<Vec<_>>>()
            .map_err(|error| {
                guarded::clear(env);
                ToolFailure::new(format!(
                    "the arguments of {tool} could not be made in Node: {}",
                    error.reason
                ))
            })?;
        guarded::call(env, &function, &this, &args).map_err(|thrown| failure_of(env, &thrown))
    });
    let synchronous = match outcome {
        Err(failure) => {
            reply.returned(Err(failure));
            true
        }
        Ok(value) if guarded::is_promise(&value) => {
            watch(env, watches, burst, value, reply, args, max_value_bytes);
            false
        }
        Ok(value) => {
            match pause_reason(env, &value) {
                Some(reason) => reply.paused(PauseRequest { reason, args }),
                None => reply.returned(copy_result(env, value, &tool, max_value_bytes)),
            }
            true
        }
    };
    guarded::clear(env);
    synchronous
}

/// The promises an executor's tools returned that have not settled yet, by watch number. Once
/// the executor is gone (its dispatcher dropped), they are forgotten: the environment's watcher
/// would otherwise keep their settlements for as long as the promises stay pending.
#[derive(Default)]
struct Watches {
    watcher: Option<Rc<Watcher>>,
    pending: BTreeSet<u64>,
}

impl Watches {
    /// The environment's watcher, made on first use and kept to forget the pending watches.
    fn watcher(&mut self, env: &Env) -> napi::Result<Rc<Watcher>> {
        if let Some(watcher) = &self.watcher {
            return Ok(Rc::clone(watcher));
        }
        let watcher = env_data::require(env)?.watcher(env)?;
        self.watcher = Some(Rc::clone(&watcher));
        Ok(watcher)
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        if let Some(watcher) = &self.watcher {
            for &id in &self.pending {
                watcher.forget(id);
            }
        }
    }
}

/// Answers `reply` as pending, and settles it when the tool's `promise` does (or pauses the
/// run, when it resolves to `pauseRun()`: the call's `args` go back with the pause).
fn watch(
    env: &Env,
    watches: &Rc<RefCell<Watches>>,
    burst: &Rc<RefCell<Burst>>,
    promise: Unknown,
    reply: ToolReply,
    args: Vec<Value>,
    max_value_bytes: u64,
) {
    let settlement = reply.pending();
    let watcher = watches.borrow_mut().watcher(env);
    let watcher = match watcher {
        Ok(watcher) => watcher,
        Err(error) => {
            settlement.settle(Err(ToolFailure::new(error.reason)));
            return;
        }
    };
    // Weak: a pending watch must not keep the executor's side alive.
    let (mine, burst) = (Rc::downgrade(watches), Rc::clone(burst));
    let on_settled: OnSettled = Box::new(move |env, id, result| {
        if let Some(watches) = mine.upgrade() {
            if let Ok(mut watches) = watches.try_borrow_mut() {
                watches.pending.remove(&id);
            }
        }
        match result {
            Ok(value) => match pause_reason(env, &value) {
                Some(reason) => settlement.paused(PauseRequest { reason, args }),
                None => settlement.settle(copy_result(env, value, "the tool", max_value_bytes)),
            },
            Err(thrown) => settlement.settle(Err(failure_of(env, &thrown))),
        }
        guarded::clear(env);
        // Not while the dispatcher itself waits (a settlement inside its wait cannot happen:
        // microtasks run only once it returns; this keeps it so).
        if let Ok(mut burst) = burst.try_borrow_mut() {
            burst.await_next_call();
        }
    });
    if let Some(id) = watcher.watch(env, promise, on_settled) {
        watches.borrow_mut().pending.insert(id);
    }
}

/// Copies a tool's result for the sandbox; a result that cannot be copied (or is larger than
/// `maxValueBytes`) is a tool failure.
fn copy_result(env: &Env, value: Unknown, tool: &str, max_value_bytes: u64) -> ToolResult {
    from_js(
        env,
        value,
        &format!("the result of {tool}"),
        max_value_bytes,
    )
    .map_err(|error| {
        let mut failure = ToolFailure::of_host(error.to_string());
        if error.limit.is_some() {
            "RangeError".clone_into(&mut failure.name);
        }
        failure
    })
}

/// The failure a tool's exception or rejection describes: an error's name and message (never
/// its stack, which would disclose host paths), or the value's string form (see
/// `guarded::Thrown::name_and_message`, which runs nothing that can throw past it); retryable
/// unless the error says `retryable: false` (§8.2: whether a tool failure is retryable depends
/// on it), read as guardedly as the rest.
pub(super) fn failure_of(env: &Env, thrown: &Thrown) -> ToolFailure {
    if let Thrown::Value(value) = thrown {
        if pause_reason(env, value).is_some() {
            return ToolFailure::of_host(
                "pauseRun() pauses a run when a tool returns it (or its promise resolves to it), not when a tool throws it",
            );
        }
    }
    let (name, message) = thrown.name_and_message(env);
    let retryable = match thrown {
        Thrown::Value(value) if guarded::is_error(value) => guarded::get(env, value, "retryable")
            .ok()
            .and_then(|retryable| guarded::boolean_value(&retryable))
            .unwrap_or(true),
        _ => true,
    };
    ToolFailure {
        name,
        message,
        retryable,
    }
}
