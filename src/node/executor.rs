//! The `SESExecutor` class (§3.2): converts arguments, forwards to [`Executor`], and turns its
//! results into `CodeOutput` objects and `ExecutorError`s. It decides nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{
    Function, PromiseRaw, This, ToNapiValue, Uint8Array, Unknown, ValueType,
};
use napi::{sys, Env, JsValue, Result};
use serde_json::Value as Json;

use super::arguments;
use super::env_data::{self, Builder};
use super::error::to_napi_error;
use super::guarded::{self, Thrown};
use super::host::{self, failure_of, NodeHost, ToolTable, Tools};
use super::log_stream::{JsLogEntry, LogStream};
use super::options::{
    clone_refused, entries, node_tool, resolve, run_input, run_tracing, watch_signal, Resolved,
};
use super::program::{read_code, CODE_NOT_A_STRING};
use super::queue::NodeQueue;
use super::session::{pause_reason, paused_output, PauseRequest};
use super::settle::{settle, settle_on_runtime, settle_then};
use super::teardown;
use super::trace_events::{Event, EventStream, Listener, Trace};
use super::value::{from_js, Copied};
use crate::diagnostic::Diagnostic;
use crate::engine::host::{Host, ToolResult, ToolSpec};
use crate::error::ExecutorError;
use crate::executor::{
    memory_freed, Executor, ExecutorState, RunAbort, RunOutput, RunStats, Settled, Tracing,
};
use crate::program::rules::code_non_empty;
use crate::session::{SnapshotError, SnapshotProblem};
use crate::trace::EventSink;
use crate::value::{CloneError, Value};

/// The result of a successful `run()` (§3.1).
// Made by the environment's `codeOutput` builder (`env_data.rs` says why), not by napi's
// property-by-property conversion.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct CodeOutput {
    /// The value of the code's last expression statement or top-level `return`, or the value
    /// passed to `final_answer()`; a copy (structured-clone semantics).
    #[napi(ts_type = "unknown")]
    pub output: Copied,
    /// The run's console output, entries joined by `\n` (§7.3).
    pub logs: String,
    /// `true` when the run ended by `final_answer()` (§5.4).
    #[napi(js_name = "is_final_answer")]
    pub is_final_answer: bool,
    /// The same console output as structured entries, in call order, under the same
    /// `maxLogBytes` budget (§10.2).
    #[napi(ts_type = "Array<LogEntry>")]
    pub log_entries: Vec<JsLogEntry>,
    /// Figures about the run (§10.2).
    #[napi(ts_type = "RunStats")]
    pub stats: JsRunStats,
    /// What validation noted without blocking the run (§8.3): `WARNING`s and `INFO`s such as
    /// `forbidden_global_access` or `log_budget_too_small`; empty when there is nothing.
    #[napi(ts_type = "Array<Diagnostic>")]
    pub diagnostics: Vec<Json>,
    /// Every canvas the run drew on (`getCanvas()`, `new OffscreenCanvas()`), as a PNG image,
    /// in the order the canvases were created; empty when the run drew nothing. A canvas kept
    /// in a global and drawn on again in a later run comes back again, with all its pixels.
    #[napi(ts_type = "Array<CanvasImage>")]
    pub images: Vec<CanvasImage>,
    /// The run's events in order, when it was traced (the `trace` option, or `run(code, {
    /// trace: true })`): `run_start`, each `tool_call` and its `tool_result`, `console`
    /// entries (by index into `logEntries`), `final_answer`, and `run_end` last. Times are
    /// milliseconds since the run's deadline began, as `stats.wallTimeMs` counts.
    #[napi(ts_type = "Array<TraceEvent>")]
    pub trace: Option<Trace>,
    /// Present when a tool asked the run to pause (`pauseRun(reason)`): the call it paused at,
    /// `{ tool, args, line, reason }`. The executor is `PAUSED`; `resume(answer)` continues the
    /// run from that call.
    #[napi(ts_type = "PausedCall")]
    pub paused: Option<Copied>,
}

/// A canvas drawn during a run, encoded as PNG.
#[napi(object, object_from_js = false)]
pub struct CanvasImage {
    /// Always `"image/png"`.
    #[napi(ts_type = "'image/png'")]
    pub mime_type: String,
    /// The canvas's width in pixels.
    pub width: u32,
    /// The canvas's height in pixels.
    pub height: u32,
    /// The PNG file's bytes (`Buffer.from(data).toString('base64')` gives a data URL's payload).
    pub data: Uint8Array,
}

impl From<crate::canvas::Image> for CanvasImage {
    fn from(image: crate::canvas::Image) -> Self {
        Self {
            mime_type: image.mime_type.to_owned(),
            width: image.width,
            height: image.height,
            data: Uint8Array::new(image.data),
        }
    }
}

/// Figures about one run.
// Made inside `CodeOutput`'s builder.
#[napi(
    object,
    object_from_js = false,
    object_to_js = false,
    js_name = "RunStats"
)]
pub struct JsRunStats {
    /// Milliseconds from the moment the run's deadline began (the `run()` call, or the end of
    /// the run it was queued behind on the same executor) to its end: waits for an engine
    /// thread, validation and tool calls included.
    pub wall_time_ms: f64,
    /// Milliseconds the run held an engine thread: its time slices, synchronous tool calls
    /// included; not the time it waited for a thread, nor for asynchronous tools or timers.
    pub cpu_time_ms: f64,
    /// Milliseconds tool calls took, from call to answer (to settlement for async tools), summed
    /// over calls: overlapping calls each count in full.
    pub tool_time_ms: f64,
    /// Tool calls made (functions of object modules included).
    pub tool_calls: f64,
    /// Loop iterations the guard counted (what `maxOperations` limits).
    pub operations: f64,
    /// The most bytes the executor's memory account held during the run: what its QuickJS
    /// runtime took from the system and what the engine held for it (canvases, the run's
    /// images, trace and log buffers), the figure `memoryLimitBytes` bounds; earlier runs'
    /// leftovers included.
    pub peak_heap_bytes: f64,
    /// Timers still pending when the run ended, which were cancelled; present only when the
    /// executor was created with `timers: true` (a run without the option pays for no field).
    pub timers_cancelled: Option<f64>,
}

impl From<RunStats> for JsRunStats {
    #[allow(
        clippy::cast_precision_loss,
        reason = "counts stay far below 2^53; JS numbers are f64"
    )]
    fn from(stats: RunStats) -> Self {
        Self {
            wall_time_ms: stats.wall_time.as_secs_f64() * 1000.0,
            cpu_time_ms: stats.cpu_time.as_secs_f64() * 1000.0,
            tool_time_ms: stats.tool_time.as_secs_f64() * 1000.0,
            tool_calls: stats.tool_calls as f64,
            operations: stats.operations as f64,
            peak_heap_bytes: stats.peak_heap_bytes as f64,
            timers_cancelled: stats.timers_cancelled.map(|count| count as f64),
        }
    }
}

impl ToNapiValue for CodeOutput {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        let undefined = guarded::undefined(&env).raw();
        let stats = val.stats;
        // SAFETY: each conversion runs on Node's thread, making values for this environment.
        let args = unsafe {
            [
                Copied::to_napi_value(raw_env, val.output)?,
                String::to_napi_value(raw_env, val.logs)?,
                bool::to_napi_value(raw_env, val.is_final_answer)?,
                array_or_undefined(raw_env, val.log_entries, undefined)?,
                array_or_undefined(raw_env, val.diagnostics, undefined)?,
                array_or_undefined(raw_env, val.images, undefined)?,
                match val.trace {
                    Some(trace) => Trace::to_napi_value(raw_env, trace)?,
                    None => undefined,
                },
                f64::to_napi_value(raw_env, stats.wall_time_ms)?,
                f64::to_napi_value(raw_env, stats.cpu_time_ms)?,
                f64::to_napi_value(raw_env, stats.tool_time_ms)?,
                f64::to_napi_value(raw_env, stats.tool_calls)?,
                f64::to_napi_value(raw_env, stats.operations)?,
                f64::to_napi_value(raw_env, stats.peak_heap_bytes)?,
                match stats.timers_cancelled {
                    Some(count) => f64::to_napi_value(raw_env, count)?,
                    None => undefined,
                },
                match val.paused {
                    Some(paused) => Copied::to_napi_value(raw_env, paused)?,
                    None => undefined,
                },
            ]
        };
        env_data::build(&env, Builder::CodeOutput, &args)
    }
}

/// `values` as a JS array, or `undefined` when there are none (the builder makes the empty
/// array: one napi call less per empty field).
///
/// # Safety
/// On Node's thread, with `raw_env` the current environment.
unsafe fn array_or_undefined<T: ToNapiValue>(
    raw_env: sys::napi_env,
    values: Vec<T>,
    undefined: sys::napi_value,
) -> Result<sys::napi_value> {
    if values.is_empty() {
        Ok(undefined)
    } else {
        // SAFETY: as the caller promised.
        unsafe { Vec::<T>::to_napi_value(raw_env, values) }
    }
}

impl From<RunOutput> for CodeOutput {
    fn from(run: RunOutput) -> Self {
        Self {
            output: Copied(run.output),
            logs: run.logs,
            is_final_answer: run.is_final_answer,
            log_entries: run.log_entries.into_iter().map(JsLogEntry::from).collect(),
            stats: run.stats.into(),
            diagnostics: run.diagnostics.iter().map(Diagnostic::to_json).collect(),
            images: run.images.into_iter().map(CanvasImage::from).collect(),
            trace: run.trace.map(Trace),
            paused: paused_output(run.paused),
        }
    }
}

/// Runs agent code in an isolated QuickJS runtime of its own, on the process's pool of engine
/// threads (§3.2 `ICodeExecutor`). Construct it, `init()` it (or use `SESExecutor.create()`),
/// `run()` code, and `cleanup()` when done.
#[napi(js_name = "SESExecutor")]
pub struct SesExecutor {
    pub(super) executor: Executor,
    /// `maxValueBytes`, for the copies made on Node's side (variables).
    pub(super) max_value_bytes: u64,
    /// The tools sent so far; only touched on Node's thread.
    tools: ToolTable,
    /// The executor's queue to Node's thread, which settles its promises.
    pub(super) node: Arc<NodeQueue>,
    /// Set once the executor's Node environment is being torn down.
    closing: Arc<AtomicBool>,
    /// `onEvent`, when the caller set it.
    on_event: Option<Arc<Listener>>,
}

#[napi]
impl SesExecutor {
    /// A `NEW` executor. Throws `ExecutorError` (`ERR_VALIDATION_FAILED`) when an option is
    /// invalid, with the rule (`max_operations_valid`, `timeout_valid`, `options_valid`) in
    /// `details.diagnostics`.
    /// Called without `new` it throws a `TypeError`, as a class constructor does.
    // `read_to`, a second argument left out of the typings, is how the package's JS entry
    // (`lib/executor.cjs`) gets what it needs of the options as this reader read them, so that
    // no option is read twice: called with the `tracer` and its `startSpan` (or `undefined`
    // for none), the `authorizedImports` and `captureToolContent` (`undefined` when left out).
    #[napi(constructor, ts_args_type = "options?: ExecutorOptions")]
    pub fn new(
        env: Env,
        this: This<Unknown>,
        options: Option<Unknown>,
        read_to: Option<Unknown>,
    ) -> Result<Self> {
        if !env_data::constructed(&env, &this.object) {
            return Err(arguments::type_error(
                &env,
                "Class constructor SESExecutor cannot be invoked without 'new'",
            ));
        }
        let mut resolved = resolve(&env, options).map_err(|error| to_napi_error(&env, error))?;
        let tracer = resolved.tracer.take();
        let imports = resolved.options.authorized_imports.clone();
        let capture_tool_content = resolved.capture_tool_content;
        let executor = Self::with_options(&env, resolved)?;
        if let Some(to) = read_to.filter(|to| guarded::type_of(to) == ValueType::Function) {
            let undefined = guarded::undefined(&env).raw();
            let (tracer, start_span) = tracer.map_or((undefined, undefined), |tracer| {
                (tracer.tracer.raw(), tracer.start_span.raw())
            });
            let imports = imports.into_unknown(&env)?;
            let capture = match capture_tool_content {
                Some(capture) => capture.into_unknown(&env)?.raw(),
                None => undefined,
            };
            let _ = guarded::call(
                &env,
                &to,
                &guarded::undefined(&env),
                &[tracer, start_span, imports.raw(), capture],
            );
            guarded::clear(&env);
        }
        Ok(executor)
    }

    /// Creates an executor and `init()`s it: a drop-in for clients that never call `init()`.
    #[napi(
        ts_args_type = "options?: ExecutorOptions",
        ts_return_type = "Promise<SESExecutor>"
    )]
    pub fn create<'env>(
        env: &'env Env,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, SesExecutor>> {
        let created = match resolve(env, options) {
            Ok(resolved) => Ok(Self::with_options(env, resolved)?),
            Err(error) => Err(error),
        };
        let ready = created.as_ref().ok().map(|created| created.executor.init());
        let node = created
            .as_ref()
            .ok()
            .map(|created| Arc::clone(&created.node));
        let creating = async move {
            let created = created?;
            if let Some(ready) = ready {
                ready.await.finish()?;
            }
            Ok(created)
        };
        match node {
            Some(node) => settle(env, &node, creating, |_, created| Ok(created)),
            None => settle_on_runtime(env, creating, |_, created| Ok(created)),
        }
    }

    /// Makes an executor with `options` and gives it the session of `snapshot` (see
    /// `restore(snapshot)` on an executor): resolves to a `READY` executor (`PAUSED` for a
    /// session paused in a run), to which the host sends its tools again. The snapshot comes
    /// from `snapshot()` of the same package version, in any process; it is checked and its
    /// runs replayed under these options and limits. Rejects with `ERR_SNAPSHOT_INVALID`.
    #[napi(
        js_name = "restore",
        ts_args_type = "snapshot: Uint8Array, options?: ExecutorOptions",
        ts_return_type = "Promise<SESExecutor>"
    )]
    pub fn restored<'env>(
        env: &'env Env,
        snapshot: Unknown,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, SesExecutor>> {
        let created = match resolve(env, options) {
            Ok(resolved) => Ok(Self::with_options(env, resolved)?),
            Err(error) => Err(error),
        };
        let restoring = created.as_ref().ok().map(|created| {
            snapshot_bytes(env, &snapshot).map(|bytes| created.executor.restore(bytes))
        });
        let node = created
            .as_ref()
            .ok()
            .map(|created| Arc::clone(&created.node));
        let restoring = async move {
            let created = created?;
            if let Some(restoring) = restoring {
                restoring?.await.finish()?;
            }
            Ok(created)
        };
        match node {
            Some(node) => settle(env, &node, restoring, |_, created| Ok(created)),
            None => settle_on_runtime(env, restoring, |_, created| Ok(created)),
        }
    }

    /// Sets each entry as a global of the sandbox holding a copy of the value (§4.3.2);
    /// functions are refused with the path to them. Requires `READY`.
    #[napi(
        ts_args_type = "variables: Record<string, unknown>",
        ts_return_type = "Promise<void>"
    )]
    pub fn send_variables<'env>(
        &self,
        env: &'env Env,
        variables: Unknown,
    ) -> Result<PromiseRaw<'env, ()>> {
        let copied = entries(env, variables, "variables").and_then(|entries| {
            entries
                .into_iter()
                .map(|(name, value)| {
                    from_js(
                        env,
                        value,
                        &format!("variables.{name}"),
                        self.max_value_bytes,
                    )
                    .map(|value| (name, value))
                    .map_err(|error| clone_refused(&error))
                })
                .collect::<std::result::Result<Vec<_>, _>>()
        });
        let sent = copied.map(|variables| self.executor.send_variables(variables));
        settle(env, &self.node, async move { sent?.await }, |_, ()| Ok(()))
    }

    /// Makes each entry callable from the sandbox under its key (§4.3.3): a function, or a
    /// smolagents tool object `{ inputs, forward(args) }`. Merges with earlier tools (a name sent
    /// again is replaced); further arguments are ignored. Requires `READY`.
    #[napi(
        ts_args_type = "tools: Record<string, ((...args: any[]) => unknown) | SmolagentsTool>",
        ts_return_type = "Promise<void>"
    )]
    pub fn send_tools<'env>(&self, env: &'env Env, tools: Unknown) -> Result<PromiseRaw<'env, ()>> {
        let parsed = entries(env, tools, "tools").and_then(|entries| {
            entries
                .into_iter()
                .map(|(name, value)| {
                    node_tool(env, &format!("tools.{name}"), value).map(|tool| (name, tool))
                })
                .collect::<std::result::Result<Vec<_>, _>>()
        });
        let sent = parsed.map(|tools| {
            let specs = tools
                .iter()
                .map(|(name, tool)| ToolSpec {
                    name: name.clone(),
                    inputs: tool.inputs.clone(),
                })
                .collect();
            let table = Arc::clone(&self.tools);
            self.executor
                .send_tools(specs, move || host::lock(&table).send(tools))
        });
        settle(env, &self.node, async move { sent?.await }, |_, ()| Ok(()))
    }

    /// The lifecycle state (§4.1).
    #[napi(getter, ts_return_type = "ExecutorState")]
    pub fn state(&self) -> &'static str {
        self.executor.state().as_str()
    }

    /// Builds the sandbox (§4.3.1): `NEW`/`DEAD` → `READY`; a no-op when `READY`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn init<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        settle(env, &self.node, self.executor.init(), |_, ()| Ok(()))
    }

    /// Validates, rewrites and runs `code` (§7.2); `options.signal` aborts it, and a copy of
    /// `options.input` is the global `input` for this run only.
    #[napi(
        ts_args_type = "code: string, options?: RunOptions",
        ts_return_type = "Promise<CodeOutput>"
    )]
    // `observer`, a third argument left out of the typings, is the trace listener of the
    // package's JS entry (`lib/tracing.cjs`): with it the options reach this reader untouched,
    // and it hears every event whatever the caller's own listeners do.
    pub fn run<'env>(
        &self,
        env: &'env Env,
        code: Unknown,
        options: Option<Unknown>,
        observer: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, CodeOutput>> {
        let refuse = |error: ExecutorError| {
            settle(
                env,
                &self.node,
                async move { Err(error) },
                |_, output: RunOutput| Ok(output.into()),
            )
        };
        let code = match read_code(code)? {
            Some(code) => code,
            None => {
                return refuse(ExecutorError::validation(&[Diagnostic::error(
                    code_non_empty::RULE,
                    CODE_NOT_A_STRING,
                )]));
            }
        };
        let input = match run_input(env, options, self.max_value_bytes) {
            Ok(input) => input,
            Err(error) => return refuse(error),
        };
        let abort = RunAbort::new();
        let watch = match watch_signal(env, options, &abort) {
            Ok(watch) => watch,
            Err(error) => return refuse(error),
        };
        let (record, listener) = match run_tracing(env, options) {
            Ok(tracing) => tracing,
            Err(error) => {
                if let Some(watch) = watch {
                    watch.detach(env);
                }
                return refuse(error);
            }
        };
        let listeners = run_observer(observer)
            .into_iter()
            .chain(self.on_event.iter().cloned())
            .chain(listener.map(Arc::new))
            .collect();
        let sink = EventStream::new(Arc::clone(&self.node), listeners)
            .map(|stream| Arc::new(stream) as Arc<dyn EventSink>);
        settle_then(
            env,
            &self.node,
            self.executor
                .run(code, abort, input, Tracing { record, sink }),
            |_, output| Ok(output.into()),
            move |env| {
                if let Some(watch) = watch {
                    watch.detach(env);
                }
            },
        )
    }

    /// Releases the sandbox (§4.3.5): `READY`/`DIRTY` → `DEAD`, settling once its QuickJS
    /// runtime is freed; a no-op when `DEAD`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn cleanup<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let cleaning = self.executor.cleanup();
        if self.executor.state() == ExecutorState::Dead {
            // The sandbox that could call the sent tools is gone (a later `init()` builds one
            // without them): their references go now, on Node's thread, not when Node collects
            // the executor.
            let forgotten = host::lock(&self.tools).forget_sent();
            drop(forgotten);
        }
        settle(env, &self.node, cleaning, |_, ()| Ok(()))
    }
}

impl Drop for SesExecutor {
    /// Collected: what the executor held on Node's side (its tool dispatcher and references,
    /// queues) goes back to the system with the next trim, as its runtime's does.
    /// Finalized as its environment is torn down: its engine stops now (see `teardown.rs`).
    fn drop(&mut self) {
        if self.closing.load(Ordering::Acquire) {
            self.executor.stop_now();
        }
        memory_freed();
    }
}

impl SesExecutor {
    /// An executor whose host starts with the functions of the registered object modules.
    fn with_options(env: &Env, resolved: Resolved) -> Result<Self> {
        let Resolved {
            options,
            module_tools,
            on_log,
            on_event,
            tracer: _,
            capture_tool_content: _,
        } = resolved;
        let tools: ToolTable = Arc::new(Mutex::new(Tools::with_modules(module_tools)));
        let logs = on_log.map(LogStream::new);
        let max_value_bytes = options.max_value_bytes;
        let host = NodeHost::new(env, Arc::clone(&tools), logs, max_value_bytes)?;
        let node = host.queue();
        Ok(Self {
            executor: Executor::new(options, Arc::new(host) as Arc<dyn Host>),
            max_value_bytes,
            tools,
            node,
            closing: teardown::closing(env),
            on_event: on_event.map(Arc::new),
        })
    }
}

/// The JS layer's trace listener of one run, when it passed a function.
fn run_observer(observer: Option<Unknown>) -> Option<Arc<Listener>> {
    let observer = observer.filter(|observer| guarded::type_of(observer) == ValueType::Function)?;
    let function: Function<Event, Unknown<'static>> = guarded::view(&observer).ok()?;
    function.create_ref().ok().map(Arc::new)
}

#[napi]
impl SesExecutor {
    /// The session as bytes (`READY` or `PAUSED`; signed with `snapshotKey` when the executor
    /// has one): what `SESExecutor.restore(bytes, options)` takes back, in this process or
    /// another running the same package version. Rejects with `ERR_INVALID_STATE` while a run is
    /// in flight, after a timeout (`DIRTY`), or when the session cannot be written.
    #[napi(ts_return_type = "Promise<Uint8Array>")]
    pub fn snapshot<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Uint8Array>> {
        settle(env, &self.node, self.executor.snapshot(), |_, bytes| {
            Ok(Uint8Array::new(bytes))
        })
    }

    /// Takes the session of a snapshot (`NEW` → `READY`, or `PAUSED` for a session paused in a
    /// run): what `SESExecutor.restore(bytes, options)` does after making the executor. The
    /// snapshot is checked and replayed under this executor's options and limits; the host then
    /// sends its tools again. Rejects with `ERR_SNAPSHOT_INVALID` (`details.reason`).
    #[napi(
        ts_args_type = "snapshot: Uint8Array",
        ts_return_type = "Promise<void>"
    )]
    pub fn restore<'env>(&self, env: &'env Env, snapshot: Unknown) -> Result<PromiseRaw<'env, ()>> {
        let bytes = snapshot_bytes(env, &snapshot);
        let restored = bytes.map(|bytes| self.executor.restore(bytes));
        // The state changes as the promise settles, on Node's thread (`Settled`).
        settle(
            env,
            &self.node,
            async move {
                match restored {
                    Ok(restoring) => restoring.await,
                    Err(error) => Settled::refused(error),
                }
            },
            |_, ()| Ok(()),
        )
    }

    /// Continues the paused run from the call it paused at, which returns `answer` to the code
    /// (`{ error }` — an object with that one key — makes the call throw `error` instead);
    /// resolves to that run's `CodeOutput`, or rejects as `run()` would. `PAUSED` only.
    #[napi(
        ts_args_type = "answer?: unknown",
        ts_return_type = "Promise<CodeOutput>"
    )]
    pub fn resume<'env>(
        &self,
        env: &'env Env,
        answer: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, CodeOutput>> {
        // The state decides first: only a paused run has a call to answer.
        let state = self.executor.state();
        let answer = if state == ExecutorState::Paused {
            resume_answer(env, answer, self.max_value_bytes)
        } else {
            Err(ExecutorError::invalid_state(state, "resume"))
        };
        let resumed = answer.map(|answer| self.executor.resume(answer));
        settle(
            env,
            &self.node,
            async move {
                match resumed {
                    Ok(resuming) => resuming.await,
                    Err(error) => Settled::refused(error),
                }
            },
            |_, output| Ok(output.into()),
        )
    }

    /// The call the run paused at while the executor is `PAUSED` (`{ tool, args, line, reason
    /// }`, as `CodeOutput.paused` gave it), else `undefined`.
    #[napi(getter, ts_return_type = "PausedCall | undefined")]
    pub fn paused(&self) -> Copied {
        paused_output(self.executor.paused()).unwrap_or(Copied(Value::Undefined))
    }
}

/// A snapshot's bytes: a `Uint8Array` (a `Buffer` is one).
fn snapshot_bytes(env: &Env, snapshot: &Unknown) -> std::result::Result<Vec<u8>, ExecutorError> {
    guarded::bytes_of(env, snapshot).ok_or_else(|| {
        ExecutorError::snapshot_invalid(&SnapshotError::new(
            SnapshotProblem::Malformed,
            "a snapshot is the Uint8Array that snapshot() resolved to",
        ))
    })
}

/// What `resume(answer)` gives the paused call: `answer` copied, or the failure of `{ error }`.
fn resume_answer(
    env: &Env,
    answer: Option<Unknown>,
    max_value_bytes: u64,
) -> std::result::Result<ToolResult, ExecutorError> {
    let Some(answer) = answer else {
        return Ok(Ok(Value::Undefined));
    };
    if pause_reason(env, &answer).is_some() {
        // A tool returns pauseRun() to pause; the answer to a paused call is a value.
        return Err(clone_refused(&CloneError::at(
            "resume(answer)",
            &[],
            "a pauseRun() request".into(),
        )));
    }
    if let Some(error) = only_error(env, &answer) {
        return Ok(Err(failure_of(env, &Thrown::Value(error))));
    }
    from_js(env, answer, "resume(answer)", max_value_bytes)
        .map(Ok)
        .map_err(|error| clone_refused(&error))
}

/// The `error` of an answer that is an object with that one own key.
fn only_error<'env>(env: &'env Env, answer: &Unknown<'env>) -> Option<Unknown<'env>> {
    if guarded::type_of(answer) != ValueType::Object || guarded::is_array(answer) {
        return None;
    }
    let (keys, count) = guarded::own_keys(env, answer).ok()?;
    let only = guarded::get_element(env, &keys, 0).ok()?;
    if count != 1 || guarded::string_value(&only).as_deref() != Some("error") {
        return None;
    }
    guarded::get(env, answer, "error").ok()
}

/// `pauseRun(reason)`: what a tool returns to pause the run at its call until the host calls
/// `executor.resume(answer)`; the run's `CodeOutput.paused` names the call and carries a copy of
/// `reason` (any value structured clone copies). Only a tool's answer pauses: thrown, it fails
/// the call; anywhere else it is an object like any other.
#[napi(ts_args_type = "reason?: unknown")]
pub fn pause_run(env: &Env, reason: Option<Unknown>) -> Result<PauseRequest> {
    let reason = match reason {
        Some(reason) => from_js(
            env,
            reason,
            "pauseRun(reason)",
            crate::options::DEFAULT_MAX_VALUE_BYTES,
        )
        .map_err(|error| to_napi_error(env, clone_refused(&error)))?,
        None => Value::Undefined,
    };
    Ok(PauseRequest::new(reason))
}
