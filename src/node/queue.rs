//! The executor's one way onto Node's thread (§7.4 tool calls, the settling of its promises,
//! `onLog` entries): a ThreadsafeFunction per executor, carrying tool calls to the host's
//! dispatcher and any other work to run there, in the order it was queued.
//!
//! The function is weak, so an idle executor never keeps the process alive; while any promise
//! of the executor is pending it is referenced ([`NodeQueue::hold`]), as napi's own `JsDeferred`
//! would keep its function alive.

use std::sync::atomic::{AtomicUsize, Ordering};

use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, Status};

use super::env_data;
use super::guarded;
use crate::engine::host::ToolCall;

/// Work to do on Node's thread.
pub type OnNode = Box<dyn FnOnce(&Env) + Send>;

/// What the queue carries to Node's thread.
enum ToNode {
    /// A tool call, for the dispatcher.
    Tool(ToolCall),
    /// Work such as settling a method's promise (see `settle.rs`).
    Work(OnNode),
}

/// An executor's queue to Node's thread.
pub struct NodeQueue {
    function: ThreadsafeFunction<ToNode, (), (), Status, false, true>,
    /// Promises of the executor not settled yet; while there are any the (weak) threadsafe
    /// function keeps the process alive. Only changed on Node's thread.
    pending: AtomicUsize,
}

impl NodeQueue {
    /// A queue bound to `env`'s thread, whose tool calls go to `dispatch` there.
    pub fn new(
        env: &Env,
        mut dispatch: impl FnMut(&Env, ToolCall) + 'static,
    ) -> napi::Result<Self> {
        // The function the ThreadsafeFunction calls is the environment's no-op: the work
        // happens in its callback, which has the environment and can call each tool with its
        // own `this` and any number of arguments.
        let bridge: Function<(), ()> = env_data::get(env)
            .ok_or_else(|| napi::Error::from_reason("the addon's environment data is missing"))?
            .tool_bridge
            .borrow_back(env)?;
        let function = bridge
            .build_threadsafe_function::<ToNode>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |context| {
                match context.value {
                    ToNode::Tool(call) => dispatch(&context.env, call),
                    ToNode::Work(work) => work(&context.env),
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

    /// Queues a tool call for the dispatcher. If Node is shutting down the call is dropped, and
    /// its reply answers the failure.
    pub fn call_tool(&self, call: ToolCall) {
        let _ = self
            .function
            .call(ToNode::Tool(call), ThreadsafeFunctionCallMode::NonBlocking);
    }

    /// Runs `work` on Node's thread. If Node is shutting down it is dropped.
    pub fn on_node(&self, work: OnNode) {
        let _ = self
            .function
            .call(ToNode::Work(work), ThreadsafeFunctionCallMode::NonBlocking);
    }

    /// Keeps the process alive until a matching [`release`](Self::release); on Node's thread.
    pub fn hold(&self, env: &Env) {
        if self.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            // SAFETY: on Node's thread, for a threadsafe function of this environment.
            unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.function.raw()) };
        }
    }

    /// Ends a [`hold`](Self::hold); on Node's thread.
    pub fn release(&self, env: &Env) {
        if self.pending.fetch_sub(1, Ordering::Relaxed) == 1 {
            // SAFETY: on Node's thread, for a threadsafe function of this environment.
            unsafe { sys::napi_unref_threadsafe_function(env.raw(), self.function.raw()) };
        }
    }
}
