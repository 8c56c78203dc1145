//! The engine's side of tool calls (§7.4): the inbox every answer arrives on, the calls of the
//! current run still in flight, and the errors that came from tools (so an uncaught one is
//! reported as `ERR_TOOL_PROXY_FAIL`, anything else as a runtime exception).
//!
//! A synchronous call holds its pool thread until the host answers (a C stack lies between the
//! call and its answer; the wait ends at the run's deadline). A run that awaits a tool's promise
//! does not: [`Bridge::settle_next`] reports [`Next::Waiting`] and the run gives its thread up
//! until an answer arrives.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use std::rc::Rc;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Weak};

use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Persistent, Value as JsValue};

use super::failure::out_of_memory;
use super::frames::CallSite;
use super::state::{RunState, Stop};
use crate::engine::host::{
    Host, PauseRequest, ToolAnswer, ToolCall, ToolFailure, ToolReply, ToolResult,
};
use crate::engine::quickjs::reflect::refused_allocations;
use crate::engine::realm::globals::{named_error, named_error_at, throw_stop};
use crate::engine::session::Replayed;
use crate::engine::values::convert::{from_value, to_value, Uncopyable};
use crate::engine::{Command, EngineInbox};
use crate::scheduler::inbox::SPIN;
use crate::session::PausedCall;
use crate::tool_args::named_inputs;
use crate::trace::ToolOutcome;
use crate::value::Value;

/// The resolving functions of the promise a pending call handed to the sandbox.
struct Awaiting {
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
    /// Where the call was made: the error the promise rejects with if the tool fails names it.
    site: Option<CallSite>,
    tool: String,
    /// When the call was made, for [`Bridge::end_run`]'s tool time.
    started: Instant,
    /// The call's number in the run's trace, when it is traced.
    call: Option<u64>,
}

/// A call as its answer arrives: its number in the trace, when it was made, and whether the tool
/// returned a promise.
#[derive(Clone, Copy)]
struct Answered {
    call: Option<u64>,
    started: Instant,
    asynchronous: bool,
}

/// What settles a pending call's promise: the tool's outcome, or a request to pause the run.
pub(super) enum Settlement {
    Result(ToolResult),
    Pause(Box<PauseRequest>),
}

/// How waiting for a message ended.
pub(crate) enum Waited {
    Answer(u64, ToolAnswer),
    /// The run must stop (deadline passed, or the executor is shutting down).
    Stopped,
}

/// What [`Bridge::settle_next`] did.
pub(crate) enum Next {
    /// It settled a tool's promise (or dropped a stale answer): the run can go on.
    Settled,
    /// The run must stop.
    Stopped,
    /// No answer has arrived: the run must wait for one, off the thread.
    Waiting,
}

/// Everything the engine receives during a run, and the tool calls of the current run.
pub(crate) struct Bridge {
    inbox: Weak<EngineInbox>,
    host: Arc<dyn Host>,
    /// Commands that arrived while a run was in flight (queued runs, shutdown), for after it.
    deferred: RefCell<VecDeque<Command>>,
    /// Settlements that arrived while a synchronous call was waiting for its own answer (and
    /// the failures of calls a paused run abandoned), delivered one at a time.
    settled: RefCell<VecDeque<(u64, Settlement)>>,
    next_id: Cell<u64>,
    /// Calls numbered below this belong to earlier runs; their answers are dropped.
    first_id_of_run: Cell<u64>,
    awaiting: RefCell<HashMap<u64, Awaiting>>,
    tool_errors: RefCell<Vec<(Persistent<Object<'static>>, String, ToolFailure)>>,
    /// Time the run's answered calls took.
    tool_time: Cell<Duration>,
    /// The input names of the tools that take one object of named inputs, by tool.
    inputs: RefCell<HashMap<String, Rc<[String]>>>,
}

impl Bridge {
    pub(crate) fn new(inbox: Weak<EngineInbox>, host: Arc<dyn Host>) -> Self {
        Self {
            inbox,
            host,
            deferred: RefCell::new(VecDeque::new()),
            settled: RefCell::new(VecDeque::new()),
            next_id: Cell::new(0),
            first_id_of_run: Cell::new(0),
            awaiting: RefCell::new(HashMap::new()),
            tool_errors: RefCell::new(Vec::new()),
            tool_time: Cell::new(Duration::ZERO),
            inputs: RefCell::new(HashMap::new()),
        }
    }

    /// Sets how `tool` takes its arguments: as they are, or (with `inputs`) as one object of
    /// named inputs.
    pub(crate) fn set_inputs(&self, tool: &str, inputs: Option<&[String]>) {
        let mut named = self.inputs.borrow_mut();
        match inputs {
            Some(inputs) => {
                named.insert(tool.to_owned(), Rc::from(inputs));
            }
            None => {
                named.remove(tool);
            }
        }
    }

    /// The arguments as `tool` receives them: named for a tool with inputs (see
    /// [`named_inputs`]), as they are otherwise.
    fn normalise(&self, tool: &str, args: Vec<Value>) -> Vec<Value> {
        let named = self.inputs.borrow();
        if named.is_empty() {
            return args;
        }
        match named.get(tool) {
            Some(inputs) => vec![named_inputs(inputs, args)],
            None => args,
        }
    }

    /// Takes a message that arrived while the run waited off the thread: an answer is kept
    /// for [`Bridge::settle_next`], anything else set aside until the run is over.
    pub(crate) fn receive_while_waiting(&self, state: &RunState, command: Command) {
        match command {
            Command::Tool(id, ToolAnswer::Settled(result)) if id >= self.first_id_of_run.get() => {
                self.settled
                    .borrow_mut()
                    .push_back((id, Settlement::Result(result)));
            }
            Command::Tool(id, ToolAnswer::Paused(pause)) if id >= self.first_id_of_run.get() => {
                self.settled
                    .borrow_mut()
                    .push_back((id, Settlement::Pause(pause)));
            }
            Command::Tool(..) | Command::Wake => {}
            command => self.set_aside(state, command),
        }
    }

    /// Commands set aside during the run (queued runs, tools, variables, shutdown), in order.
    pub(crate) fn take_set_aside(&self) -> VecDeque<Command> {
        std::mem::take(&mut *self.deferred.borrow_mut())
    }

    fn set_aside(&self, state: &RunState, command: Command) {
        if matches!(command, Command::Shutdown(_)) {
            state.stop_with(Stop::Shutdown);
        }
        self.deferred.borrow_mut().push_back(command);
    }

    /// Starts a run: calls numbered from here on are its own.
    pub(crate) fn begin_run(&self) {
        self.first_id_of_run.set(self.next_id.get());
        self.tool_time.set(Duration::ZERO);
    }

    /// Forgets the run's calls: their promises stay pending forever in the sandbox, and their
    /// late answers are dropped on arrival. Returns how many calls the run made and the time
    /// they took (calls still pending count until now).
    pub(crate) fn end_run(&self) -> (u64, Duration) {
        let pending: Duration = self
            .awaiting
            .borrow_mut()
            .drain()
            .map(|(_, awaiting)| awaiting.started.elapsed())
            .sum();
        self.settled.borrow_mut().clear();
        self.tool_errors.borrow_mut().clear();
        let calls = self.next_id.get() - self.first_id_of_run.get();
        self.first_id_of_run.set(self.next_id.get());
        (calls, self.tool_time.get() + pending)
    }

    fn add_tool_time(&self, started: Instant) {
        self.tool_time.set(self.tool_time.get() + started.elapsed());
    }

    /// Whether the run still waits for a tool's promise.
    pub(crate) fn has_pending_calls(&self) -> bool {
        !self.awaiting.borrow().is_empty()
    }

    /// Calls host tool `tool` from the sandbox: returns its value, a promise for it, or throws
    /// a catchable error carrying the tool's failure.
    pub(crate) fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        state: &RunState,
        tool: &str,
        args: &[JsValue<'js>],
    ) -> rquickjs::Result<JsValue<'js>> {
        if state.stop.get().is_some() {
            return Err(throw_stop(ctx));
        }
        let refused = refused_allocations(ctx);
        let mut copied = Vec::with_capacity(args.len());
        for (index, arg) in args.iter().enumerate() {
            match to_value(
                ctx,
                arg,
                Uncopyable::Refuse,
                &format!("{tool} argument {index}"),
                state.max_value_bytes.get(),
            ) {
                Ok(value) => copied.push(value),
                Err(error) => {
                    // The call never reaches the host: the trace shows the arguments copied so
                    // far and the refusal, which names the argument.
                    let mut failure = ToolFailure::new(error.to_string());
                    if error.limit.is_some() {
                        "RangeError".clone_into(&mut failure.name);
                    }
                    let call = state.record_call(ctx, tool, &copied);
                    state.record_result(call, tool, Instant::now(), false, || failed(&failure));
                    return Err(self.throw_failure(ctx, tool, failure));
                }
            }
        }
        // Parts read while the heap refused memory may have come out missing or empty: the tool
        // must not be called with them.
        if refused_allocations(ctx) != refused {
            let failure = ToolFailure::new(format!(
                "the arguments of {tool} could not be copied: {}",
                out_of_memory()
            ));
            let call = state.record_call(ctx, tool, &copied);
            state.record_result(call, tool, Instant::now(), false, || failed(&failure));
            return Err(self.throw_failure(ctx, tool, failure));
        }
        let copied = self.normalise(tool, copied);
        let call = state.record_call(ctx, tool, &copied);
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let number = state.tape.next_call();
        let started = Instant::now();
        if state.tape.replaying() {
            let answered = Answered {
                call,
                started,
                asynchronous: false,
            };
            let result = match state.tape.replay_call(number) {
                Replayed::Returned(result) => result,
                Replayed::Pending => return self.promise_for(ctx, id, tool, started, call),
                Replayed::Resumed(answer) => {
                    self.abandon_pending();
                    answer
                }
                Replayed::Diverged => {
                    state.stop_with(Stop::Diverged);
                    return Err(throw_stop(ctx));
                }
            };
            return self
                .accept(ctx, state, tool, answered, &result)
                .map_err(|failure| self.throw_failure(ctx, tool, failure));
        }
        self.host.call_tool(ToolCall {
            tool: tool.to_owned(),
            args: copied,
            reply: ToolReply::new(id, Weak::clone(&self.inbox)),
        });
        loop {
            match self.wait(state) {
                Waited::Stopped => return Err(throw_stop(ctx)),
                Waited::Answer(answer_id, answer) if answer_id == id => {
                    let (result, asynchronous) = match answer {
                        ToolAnswer::Pending => {
                            state.tape.pending();
                            return self.promise_for(ctx, id, tool, started, call);
                        }
                        ToolAnswer::Returned(result) => (result, false),
                        ToolAnswer::Settled(result) => (result, true),
                        ToolAnswer::Paused(pause) => match unpausable(state) {
                            Some(failure) => (Err(failure), false),
                            None => {
                                let site = CallSite::here(ctx).map(|site| site.position());
                                self.pause(state, tool, number, site, *pause);
                                return Err(throw_stop(ctx));
                            }
                        },
                    };
                    self.add_tool_time(started);
                    state.tape.returned(&result);
                    let answered = Answered {
                        call,
                        started,
                        asynchronous,
                    };
                    return self
                        .accept(ctx, state, tool, answered, &result)
                        .map_err(|failure| self.throw_failure(ctx, tool, failure));
                }
                Waited::Answer(other, ToolAnswer::Settled(result)) => {
                    self.settled
                        .borrow_mut()
                        .push_back((other, Settlement::Result(result)));
                }
                Waited::Answer(other, ToolAnswer::Paused(pause)) => {
                    self.settled
                        .borrow_mut()
                        .push_back((other, Settlement::Pause(pause)));
                }
                Waited::Answer(..) => {}
            }
        }
    }

    /// The sandbox function that calls host tool `tool` (a tool, or a function of an object
    /// module), named `name`.
    pub(crate) fn tool_function<'js>(
        ctx: &Ctx<'js>,
        bridge: &Rc<Bridge>,
        state: &Rc<RunState>,
        tool: String,
        name: &str,
    ) -> rquickjs::Result<Function<'js>> {
        let (bridge, state) = (Rc::clone(bridge), Rc::clone(state));
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<JsValue<'js>>| -> rquickjs::Result<JsValue<'js>> {
                bridge.call(&ctx, &state, &tool, &args.0)
            },
        )?
        .with_name(name)
    }

    /// Settles one promise handed out by a pending call, if the host has settled one (polling
    /// briefly for an answer while no other executor waits for a thread).
    pub(crate) fn settle_next<'js>(&self, ctx: &Ctx<'js>, state: &RunState) -> Next {
        let next = self.settled.borrow_mut().pop_front();
        let (id, result) = match next {
            Some(settled) => settled,
            None => loop {
                if state.should_interrupt() {
                    return Next::Stopped;
                }
                let Some(inbox) = self.inbox.upgrade() else {
                    state.stop_with(Stop::Shutdown);
                    return Next::Stopped;
                };
                let until = state
                    .deadline
                    .get()
                    .map_or(Instant::now() + SPIN, |deadline| {
                        deadline.min(Instant::now() + SPIN)
                    });
                match inbox.poll(until) {
                    None => return Next::Waiting,
                    Some(Command::Tool(id, ToolAnswer::Settled(result)))
                        if id >= self.first_id_of_run.get() =>
                    {
                        break (id, Settlement::Result(result))
                    }
                    Some(Command::Tool(id, ToolAnswer::Paused(pause)))
                        if id >= self.first_id_of_run.get() =>
                    {
                        break (id, Settlement::Pause(pause))
                    }
                    Some(Command::Tool(..) | Command::Wake) => {}
                    Some(command) => self.set_aside(state, command),
                }
            },
        };
        let Some(awaiting) = self.awaiting.borrow_mut().remove(&id) else {
            return Next::Settled;
        };
        let number = self.number(id);
        let result = match (result, unpausable(state)) {
            (Settlement::Pause(_), Some(failure)) => Settlement::Result(Err(failure)),
            (result, _) => result,
        };
        match result {
            Settlement::Result(result) => {
                state.tape.settled(number, &result);
                self.deliver(ctx, state, &awaiting, &result);
                Next::Settled
            }
            Settlement::Pause(pause) => {
                let site = awaiting.site.as_ref().map(CallSite::position);
                self.pause(state, &awaiting.tool, number, site, *pause);
                Next::Stopped
            }
        }
    }

    /// The call's number in its run (what the session's record names it by).
    fn number(&self, id: u64) -> u32 {
        u32::try_from(id.saturating_sub(self.first_id_of_run.get())).unwrap_or(u32::MAX)
    }

    /// Settles the promise a pending call handed out with `result`.
    fn deliver<'js>(
        &self,
        ctx: &Ctx<'js>,
        state: &RunState,
        awaiting: &Awaiting,
        result: &ToolResult,
    ) {
        self.add_tool_time(awaiting.started);
        let answered = Answered {
            call: awaiting.call,
            started: awaiting.started,
            asynchronous: true,
        };
        let settled = match self.accept(ctx, state, &awaiting.tool, answered, result) {
            Ok(value) => awaiting
                .resolve
                .clone()
                .restore(ctx)
                .and_then(|resolve| resolve.call::<_, ()>((value,))),
            Err(failure) => self.reject_with(ctx, awaiting, failure),
        };
        if settled.is_err() {
            ctx.catch();
        }
    }

    /// A replayed settlement of the run's call number `call`; false when no promise of that
    /// call is pending (the replay diverged).
    pub(super) fn settle_replayed<'js>(
        &self,
        ctx: &Ctx<'js>,
        state: &RunState,
        call: u32,
        result: &ToolResult,
    ) -> bool {
        let id = self.first_id_of_run.get().saturating_add(u64::from(call));
        let Some(awaiting) = self.awaiting.borrow_mut().remove(&id) else {
            return false;
        };
        self.deliver(ctx, state, &awaiting, result);
        true
    }

    /// The replay reached the promise the run paused on: it settles with `answer`, and the calls
    /// still pending then fail (their answers, if the host gave any, were lost with the paused
    /// run). Returns false when no promise of that call is pending.
    pub(super) fn resume_awaiting<'js>(
        &self,
        ctx: &Ctx<'js>,
        state: &RunState,
        call: u32,
        answer: &ToolResult,
    ) -> bool {
        let settled = self.settle_replayed(ctx, state, call, answer);
        self.abandon_pending();
        settled
    }

    /// Queues a failure for every call still pending, delivered one at a time as the host's
    /// answers are (and recorded as they are).
    fn abandon_pending(&self) {
        let mut pending: Vec<u64> = self.awaiting.borrow().keys().copied().collect();
        pending.sort_unstable();
        let mut settled = self.settled.borrow_mut();
        for id in pending {
            settled.push_back((
                id,
                Settlement::Result(Err(ToolFailure::new(
                    "the call had not been answered when the run paused, and its answer was lost; call it again",
                ))),
            ));
        }
    }

    /// A tool asked the run to pause at its call, made at `site` (a position in the run's
    /// script): the run stops, and the engine records the call as the run's last event (its
    /// runtime is dropped; `resume()` replays the run up to this call).
    fn pause(
        &self,
        state: &RunState,
        tool: &str,
        call: u32,
        site: Option<(u32, u32)>,
        pause: PauseRequest,
    ) {
        let paused = PausedCall {
            call,
            tool: tool.to_owned(),
            args: pause.args,
            line: None,
            reason: pause.reason,
        };
        // From here the journal is what the resume replays: nothing the run's unwinding
        // allocates may drop it.
        state.tape.pausing();
        *state.paused.borrow_mut() = Some((paused, site));
        state.stop_with(Stop::Paused);
    }

    /// The tool whose failure `thrown` is, if it is one.
    pub(crate) fn tool_failure_of<'js>(
        &self,
        ctx: &Ctx<'js>,
        thrown: &JsValue<'js>,
    ) -> Option<(String, ToolFailure)> {
        let thrown = thrown.as_object()?;
        self.tool_errors
            .borrow()
            .iter()
            .find(|(error, _, _)| {
                error
                    .clone()
                    .restore(ctx)
                    .is_ok_and(|error| &error == thrown)
            })
            .map(|(_, tool, failure)| (tool.clone(), failure.clone()))
    }

    /// Waits, holding the thread, for the next tool answer until the run's deadline (a
    /// synchronous call). Other commands are set aside; answers of earlier runs are dropped.
    fn wait(&self, state: &RunState) -> Waited {
        let Some(inbox) = self.inbox.upgrade() else {
            state.stop_with(Stop::Shutdown);
            return Waited::Stopped;
        };
        loop {
            if state.should_interrupt() {
                return Waited::Stopped;
            }
            match inbox.receive(state.deadline.get()) {
                Ok(Command::Tool(id, answer)) if id >= self.first_id_of_run.get() => {
                    return Waited::Answer(id, answer)
                }
                Ok(Command::Tool(..) | Command::Wake) => {}
                Ok(command) => self.set_aside(state, command),
                Err(RecvTimeoutError::Timeout) => state.stop_with(Stop::Timeout),
                Err(RecvTimeoutError::Disconnected) => state.stop_with(Stop::Shutdown),
            }
        }
    }

    /// What the sandbox gets from a tool's answer: its value copied in, or the failure (the
    /// tool's, or the copy's); either is recorded in the run's trace.
    fn accept<'js>(
        &self,
        ctx: &Ctx<'js>,
        state: &RunState,
        tool: &str,
        answered: Answered,
        result: &ToolResult,
    ) -> Result<JsValue<'js>, ToolFailure> {
        let Answered {
            call,
            started,
            asynchronous,
        } = answered;
        let accepted = match result {
            Ok(value) => {
                let copied = self.copy_in(ctx, tool, value);
                if copied.is_ok() {
                    state.record_result(call, tool, started, asynchronous, || {
                        ToolOutcome::Returned(Some(value.clone()))
                    });
                }
                copied
            }
            Err(failure) => Err(failure.clone()),
        };
        if let Err(failure) = &accepted {
            state.record_result(call, tool, started, asynchronous, || failed(failure));
        }
        accepted
    }

    /// The tool's result as a sandbox value, or the failure the sandbox sees when it cannot be
    /// copied in.
    fn copy_in<'js>(
        &self,
        ctx: &Ctx<'js>,
        tool: &str,
        value: &Value,
    ) -> Result<JsValue<'js>, ToolFailure> {
        from_value(ctx, value).map_err(|_| {
            ctx.catch();
            ToolFailure::of_host(format!(
                "the result of {tool} cannot be copied into the sandbox"
            ))
        })
    }

    fn promise_for<'js>(
        &self,
        ctx: &Ctx<'js>,
        id: u64,
        tool: &str,
        started: Instant,
        call: Option<u64>,
    ) -> rquickjs::Result<JsValue<'js>> {
        let (promise, resolve, reject) = ctx.promise()?;
        let site = CallSite::here(ctx);
        self.awaiting.borrow_mut().insert(
            id,
            Awaiting {
                resolve: Persistent::save(ctx, resolve),
                reject: Persistent::save(ctx, reject),
                site,
                tool: tool.to_owned(),
                started,
                call,
            },
        );
        Ok(promise.into_value())
    }

    fn reject_with<'js>(
        &self,
        ctx: &Ctx<'js>,
        awaiting: &Awaiting,
        failure: ToolFailure,
    ) -> rquickjs::Result<()> {
        let error = match &awaiting.site {
            Some(site) => named_error_at(ctx, &failure.name, &failure.message, site)?,
            None => named_error(ctx, &failure.name, &failure.message)?,
        };
        self.remember_failure(ctx, &error, &awaiting.tool, failure);
        awaiting
            .reject
            .clone()
            .restore(ctx)?
            .call::<_, ()>((error,))
    }

    /// Throws `failure` into the sandbox as a catchable `Error`.
    fn throw_failure(&self, ctx: &Ctx<'_>, tool: &str, failure: ToolFailure) -> rquickjs::Error {
        match self.failure_error(ctx, tool, failure) {
            Ok(error) => ctx.throw(error.into_value()),
            Err(error) => error,
        }
    }

    /// The `Error` the sandbox sees for a tool failure (name and message only), remembered so
    /// that, if user code does not catch it, the run fails with `ERR_TOOL_PROXY_FAIL`.
    fn failure_error<'js>(
        &self,
        ctx: &Ctx<'js>,
        tool: &str,
        failure: ToolFailure,
    ) -> rquickjs::Result<Object<'js>> {
        let error = named_error(ctx, &failure.name, &failure.message)?;
        self.remember_failure(ctx, &error, tool, failure);
        Ok(error)
    }

    /// Remembers that `error` is `tool`'s failure, so that if user code does not catch it the
    /// run fails with `ERR_TOOL_PROXY_FAIL`.
    fn remember_failure<'js>(
        &self,
        ctx: &Ctx<'js>,
        error: &Object<'js>,
        tool: &str,
        failure: ToolFailure,
    ) {
        self.tool_errors.borrow_mut().push((
            Persistent::save(ctx, error.clone()),
            tool.to_owned(),
            failure,
        ));
    }
}

/// A failure as the trace shows it.
/// Why a tool's `pauseRun()` cannot pause the run, if it cannot: a paused run is resumed by
/// replaying the session, which must then be one a replay repeats exactly. The call fails
/// instead, as if the tool had thrown.
fn unpausable(state: &RunState) -> Option<ToolFailure> {
    state.tape.broken().map(|why| {
        ToolFailure::new(format!(
            "pauseRun(): the run cannot pause, because the session cannot be replayed: {why}"
        ))
    })
}

fn failed(failure: &ToolFailure) -> ToolOutcome {
    ToolOutcome::Failed {
        name: failure.name.clone(),
        message: failure.message.clone(),
    }
}
