//! The executors' way onto Node's thread (§7.4 tool calls, the settling of their promises,
//! `onLog` entries): one ThreadsafeFunction per Node environment, shared by every executor made
//! in it, carrying each executor's tool calls to its dispatcher and any other work to run there,
//! in the order it was queued.
//!
//! One per environment, not one per executor: each threadsafe function is a libuv async handle,
//! and libuv looks at every async handle of the loop each time any of them signals, so with a
//! function per executor every wake-up of Node's thread cost time in proportion to the live
//! executors (bench/README.md, "One threadsafe function per Node environment"), besides about
//! 1 KiB per executor.
//!
//! The function is weak, so idle executors never keep the process alive; while any promise of
//! the environment's executors is pending it is referenced ([`NodeQueue::hold`]), as napi's own
//! `JsDeferred` would keep a function of its own alive.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, Status};

use super::guarded;
use crate::engine::host::ToolCall;
use crate::scheduler::pool::others_waiting_besides_one;
use crate::scheduler::spin::{Core, Spin};

/// Work to do on Node's thread.
pub type OnNode = Box<dyn FnOnce(&Env) + Send>;

/// What an executor does with its tool calls on Node's thread.
type Dispatcher = Box<dyn FnMut(&Env, ToolCall)>;

/// The dispatchers of an environment's executors, by executor; only touched on Node's thread.
pub type Dispatchers = Rc<RefCell<HashMap<u64, Dispatcher>>>;

/// What the queue carries to Node's thread.
enum ToNode {
    /// A tool call, for the dispatcher of the executor numbered so.
    Tool(u64, ToolCall),
    /// Work such as settling a method's promise (see `settle.rs`).
    Work(OnNode),
    /// The executor numbered so is gone: its dispatcher (and the tools it holds) goes too.
    Forget(u64),
}

/// An environment's threadsafe function, which its executors share.
pub struct EnvQueue {
    function: ThreadsafeFunction<ToNode, (), (), Status, false, true>,
    /// Promises of the environment's executors not settled yet; while there are any the (weak)
    /// threadsafe function keeps the process alive. Only changed on Node's thread.
    pending: AtomicUsize,
}

impl EnvQueue {
    /// The queue of the thread `bridge` belongs to, which hands tool calls to `dispatchers`.
    pub fn new(bridge: Function<(), ()>, dispatchers: Dispatchers) -> napi::Result<Self> {
        // The function the ThreadsafeFunction calls is a no-op: the work happens in its
        // callback, which has the environment and can call each tool with its own `this` and
        // any number of arguments.
        let function = bridge
            .build_threadsafe_function::<ToNode>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |context| {
                match context.value {
                    ToNode::Tool(executor, call) => {
                        dispatch(&context.env, &dispatchers, executor, call)
                    }
                    ToNode::Work(work) => work(&context.env),
                    ToNode::Forget(executor) => {
                        // Dropped outside the borrow: dropping tool references runs no JS, but
                        // nothing here assumes so.
                        let gone = dispatchers.borrow_mut().remove(&executor);
                        drop(gone);
                    }
                }
                // Nothing raised while host code ran may reach Node as an uncaught exception
                // (and returning an error from here is a fatal one): each step clears what it
                // caught, and this clears whatever one missed.
                guarded::clear(&context.env);
                Ok(())
            })?;
        Ok(Self {
            function,
            pending: AtomicUsize::new(0),
        })
    }
}

/// Hands a tool call to its executor's dispatcher. The dispatcher is out of the table while it
/// runs, so that the tool it calls may make or drop executors (which changes the table); a call
/// for an executor that is gone is dropped, and its reply answers the failure.
fn dispatch(env: &Env, dispatchers: &Dispatchers, executor: u64, call: ToolCall) {
    let Some(mut dispatcher) = dispatchers.borrow_mut().remove(&executor) else {
        return;
    };
    dispatcher(env, call);
    dispatchers.borrow_mut().insert(executor, dispatcher);
}

/// Numbers the executors of the process.
static NEXT_EXECUTOR: AtomicU64 = AtomicU64::new(0);

/// How long Node's thread waits, after handing an executor work, for the executor's first
/// message back (see [`NodeQueue::await_message`]).
const FIRST_MESSAGE_WAIT: Duration = Duration::from_micros(20);

/// An executor's queue to Node's thread: its place on its environment's [`EnvQueue`].
pub struct NodeQueue {
    shared: Arc<EnvQueue>,
    executor: u64,
    /// Messages the executor has queued so far.
    sent: AtomicU64,
    /// The core of the thread that queued the last of them (see [`Spin::keeping_core`]).
    sender: Arc<Core>,
}

impl NodeQueue {
    /// An executor's place on `shared`, whose tool calls go to `dispatch` on its thread (where
    /// this is called: `dispatchers` are that thread's); each message records its sender's core
    /// in `sender`.
    pub fn new(
        shared: Arc<EnvQueue>,
        dispatchers: &Dispatchers,
        sender: Arc<Core>,
        dispatch: impl FnMut(&Env, ToolCall) + 'static,
    ) -> Self {
        let executor = NEXT_EXECUTOR.fetch_add(1, Ordering::Relaxed);
        dispatchers
            .borrow_mut()
            .insert(executor, Box::new(dispatch));
        Self {
            shared,
            executor,
            sent: AtomicU64::new(0),
            sender,
        }
    }

    /// Queues a tool call for the dispatcher. If Node is shutting down the call is dropped, and
    /// its reply answers the failure.
    pub fn call_tool(&self, call: ToolCall) {
        self.send(ToNode::Tool(self.executor, call));
    }

    /// Runs `work` on Node's thread. If Node is shutting down it is dropped.
    pub fn on_node(&self, work: OnNode) {
        self.send(ToNode::Work(work));
    }

    fn send(&self, message: ToNode) {
        self.sender.record();
        let _ = self
            .shared
            .function
            .call(message, ThreadsafeFunctionCallMode::NonBlocking);
        self.sent.fetch_add(1, Ordering::Release);
    }

    /// Messages the executor has queued for Node's thread so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// After a method handed the executor work, on Node's thread: waits up to
    /// [`FIRST_MESSAGE_WAIT`] for its first message back (the method's outcome, a tool call, a
    /// log entry), queued after `since` messages, without giving up its core
    /// ([`Spin::keeping_core`]; no wait when the executor's last message came from this core).
    ///
    /// An answer that arrives while Node's thread sleeps in its event loop wakes it from
    /// `epoll`, which costs more than a trivial run's whole work (bench/README.md, "Node's
    /// thread waits for an executor's first answer"). An answer queued while Node's thread still runs is taken by the next turn of the
    /// loop without sleeping. Longer work costs Node's thread the wait and nothing more: the
    /// engine thread computes meanwhile. No wait while other executors are queued for engine
    /// threads: then Node's thread has work waiting (see `host.rs`, `Burst`). This executor's
    /// own job may still be queued, not yet taken by the pool thread that will serve it: it once
    /// counted, and a third of trivial runs then got no wait and a wake-up from `epoll`.
    pub fn await_message(&self, since: u64) {
        let Some(spin) = Spin::keeping_core(&self.sender) else {
            return;
        };
        spin.until(Instant::now() + FIRST_MESSAGE_WAIT, || {
            self.sent() != since || others_waiting_besides_one()
        });
    }

    /// Keeps the process alive until a matching [`release`](Self::release); on Node's thread.
    pub fn hold(&self, env: &Env) {
        if self.shared.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            // SAFETY: on Node's thread, for a threadsafe function of this environment.
            unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.shared.function.raw()) };
        }
    }

    /// Ends a [`hold`](Self::hold); on Node's thread.
    pub fn release(&self, env: &Env) {
        if self.shared.pending.fetch_sub(1, Ordering::Relaxed) == 1 {
            // SAFETY: on Node's thread, for a threadsafe function of this environment.
            unsafe { sys::napi_unref_threadsafe_function(env.raw(), self.shared.function.raw()) };
        }
    }
}

impl Drop for NodeQueue {
    /// Dropped on whichever thread let the executor go: its dispatcher is dropped on Node's
    /// thread (or with the environment, if that is being torn down).
    fn drop(&mut self) {
        self.send(ToNode::Forget(self.executor));
    }
}
