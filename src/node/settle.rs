//! Settles the promises of `SESExecutor`'s methods from the thread that completes them.
//!
//! `env.spawn_future_with_callback` polls a method's future on tokio's runtime and settles the
//! promise through a `JsDeferred`, which creates (and later tears down) a threadsafe function of
//! its own per promise. A run then costs two thread wake-ups after the engine answers (the
//! engine thread wakes a tokio worker, which wakes Node's thread) plus that setup, about half of
//! a trivial run's time. Here the future is polled where it is woken, on the engine thread as it
//! answers (with `async_task`, whose `schedule` simply runs the task), and the outcome goes to
//! Node's thread through the environment's one threadsafe function, the one tool calls use
//! (`queue.rs`): a single wake-up, and nothing created per promise but the promise itself.
//!
//! That threadsafe function is weak so that idle executors never keep the process alive; it is
//! referenced while any promise of its executors is pending, as a `JsDeferred` would keep its
//! own alive.
//!
//! Spec: §3.2 (every method returns a promise) and §4.2 (state moves as it settles).

use std::future::Future;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{PromiseRaw, ToNapiValue};
use napi::{check_status, sys, Env, Result};

use super::error::to_napi_error;
use super::guarded;
use super::queue::{NodeQueue, OnNode};
use crate::error::ExecutorError;

/// What an executor future yields: a result, or a result whose state change is applied as the
/// promise settles, on Node's thread.
pub trait Outcome<T>: Send + 'static {
    fn finish(self) -> std::result::Result<T, ExecutorError>;
}

impl<T: Send + 'static> Outcome<T> for std::result::Result<T, ExecutorError> {
    fn finish(self) -> std::result::Result<T, ExecutorError> {
        self
    }
}

impl<T: Send + 'static> Outcome<T> for crate::executor::Settled<T> {
    fn finish(self) -> std::result::Result<T, ExecutorError> {
        crate::executor::Settled::finish(self)
    }
}

/// A promise's resolving handle. Only ever used on Node's thread, inside [`OnNode`] work.
struct Deferred(sys::napi_deferred);

// SAFETY: the handle is only carried across threads; it is dereferenced by napi on Node's
// thread, in the environment that created it, exactly once.
unsafe impl Send for Deferred {}

impl Deferred {
    /// Resolves or rejects the promise; on Node's thread.
    fn settle(self, env: &Env, settled: Result<sys::napi_value>) {
        // SAFETY: on Node's thread; the handle belongs to this environment and, consumed here,
        // is settled once.
        unsafe {
            match settled {
                Ok(value) => {
                    sys::napi_resolve_deferred(env.raw(), self.0, value);
                }
                Err(error) => {
                    if let Ok(reason) = napi::Error::to_napi_value(env.raw(), error) {
                        sys::napi_reject_deferred(env.raw(), self.0, reason);
                    }
                }
            }
        }
    }
}

/// A promise that settles with `convert(outcome)` (or the outcome's `ExecutorError`) once
/// `future` completes.
pub fn settle<'env, T, V, O, F, C>(
    env: &'env Env,
    node: &Arc<NodeQueue>,
    future: F,
    convert: C,
) -> Result<PromiseRaw<'env, V>>
where
    V: ToNapiValue + 'static,
    O: Outcome<T>,
    F: Future<Output = O> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + Send + 'static,
{
    settle_then(env, node, future, convert, |_| {})
}

/// [`settle`], running `after` on Node's thread just before the promise settles, either way.
pub fn settle_then<'env, T, V, O, F, C, A>(
    env: &'env Env,
    node: &Arc<NodeQueue>,
    future: F,
    convert: C,
    after: A,
) -> Result<PromiseRaw<'env, V>>
where
    V: ToNapiValue + 'static,
    O: Outcome<T>,
    F: Future<Output = O> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + Send + 'static,
    A: FnOnce(&Env) + Send + 'static,
{
    let mut deferred = ptr::null_mut();
    let mut promise = ptr::null_mut();
    // SAFETY: on Node's thread, with out-pointers napi fills.
    check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
    let deferred = Deferred(deferred);
    node.hold(env);
    let queue = Arc::clone(node);
    let delivery = async move {
        let outcome = future.await;
        let holder = Arc::clone(&queue);
        let on_node: OnNode = Box::new(move |env: &Env| {
            holder.release(env);
            after(env);
            let settled = finish(env, outcome, convert).and_then(|value| {
                // SAFETY: on Node's thread, converting a value for this environment.
                unsafe { V::to_napi_value(env.raw(), value) }.map_err(|error| {
                    // The result could not be made in Node: say so, as every failure is said.
                    guarded::clear(env);
                    to_napi_error(env, ExecutorError::result_unbuildable(&error.reason))
                })
            });
            // A promise settles only with no exception pending.
            guarded::clear(env);
            deferred.settle(env, settled);
        });
        queue.on_node(on_node);
    };
    // Polled first here, then by whichever thread wakes it (the engine thread, as it answers).
    let (runnable, task) = async_task::spawn(delivery, |runnable: async_task::Runnable| {
        runnable.run();
    });
    task.detach();
    let since = node.sent();
    runnable.run();
    node.await_message(since);
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// [`settle`] for futures that need tokio (joining the engine thread blocks: that takes tokio's
/// blocking pool), settled through napi's own `spawn_future_with_callback`.
pub fn settle_on_runtime<'env, T, V, O, F, C>(
    env: &'env Env,
    future: F,
    convert: C,
) -> Result<PromiseRaw<'env, V>>
where
    V: ToNapiValue + 'static,
    O: Outcome<T>,
    F: Future<Output = O> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(future.await) }, move |env, outcome| {
        finish(env, outcome, convert)
    })
}

/// Applies the outcome's state change and converts its value, or its error, for Node.
fn finish<T, V, O: Outcome<T>>(
    env: &Env,
    outcome: O,
    convert: impl FnOnce(&Env, T) -> Result<V>,
) -> Result<V> {
    match outcome.finish() {
        Ok(value) => convert(env, value),
        Err(error) => Err(to_napi_error(env, error)),
    }
}
