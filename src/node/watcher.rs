//! Watches the promises tools return, for every executor of a Node environment: one JS helper
//! attaches a pair of callbacks to each promise, which report to one native function by watch
//! number. napi-rs's `PromiseRaw::then`/`catch` would create two native functions (each with a
//! finalizer) per call, which was about a quarter of an awaited call's cost.
//!
//! One per environment, not one per executor: an executor's own helper and native function
//! outlived it until one of V8's later collections (seconds after Node had collected the
//! executor), and with them what they held of its host side, which kept the pages around it from
//! going back to the system after a mass cleanup (bench/README.md, "One promise watcher per Node
//! environment").
//!
//! Only touched on Node's thread.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use napi::bindgen_prelude::{Function, FunctionRef, Unknown};
use napi::{Env, JsValue};

use super::guarded::{self, Thrown};

/// What to do once a watched promise settles: with its watch number, and its value or (`Err`)
/// its rejection reason (or what attaching to it threw).
pub type OnSettled = Box<dyn for<'env> FnOnce(&'env Env, u64, Result<Unknown<'env>, Thrown<'env>>)>;

/// The helper's factory: takes the native `done(id, value, rejected)`. Rejections are handled
/// by `then`'s second callback, so none is ever reported as unhandled by Node. `then` is
/// `Promise.prototype.then` as it was when the helper was made (a promise's own `then` may be
/// anything); if attaching throws (a promise whose `constructor` getter throws), the call fails
/// with what it threw.
const WATCHER_SOURCE: &str = "(function (done) {
  var then = Promise.prototype.then;
  return function watch(promise, id) {
    try {
      then.call(promise, function (value) { done(id, value, false) }, function (error) { done(id, error, true) })
    } catch (error) {
      done(id, error, true)
    }
  }
})";

/// The environment's promise watcher.
pub struct Watcher {
    /// `(promise, id) => then(promise, v => done(id, v, false), e => done(id, e, true))`.
    watch: FunctionRef<(), ()>,
    /// What to do when each watched promise settles, by watch number. Ordered maps of the
    /// numbers here and in the executors' sets, not hash maps: nothing to hash, and hashing was a
    /// visible part of an awaited call's cost.
    pending: Rc<RefCell<BTreeMap<u64, OnSettled>>>,
    next_id: Cell<u64>,
}

impl Watcher {
    /// Compiles the helper for `env`.
    pub fn new(env: &Env) -> napi::Result<Self> {
        let pending: Rc<RefCell<BTreeMap<u64, OnSettled>>> = Rc::default();
        let settled = Rc::clone(&pending);
        let done = env.create_function_from_closure("done", move |call| {
            let id: i64 = call.get(0)?;
            let value: Unknown = call.get(1)?;
            let rejected: bool = call.get(2)?;
            // Out of the table before it runs: it may watch more promises.
            let id = u64::try_from(id).ok();
            let on_settled = id.and_then(|id| Some((id, settled.borrow_mut().remove(&id)?)));
            if let Some((id, on_settled)) = on_settled {
                on_settled(
                    call.env,
                    id,
                    if rejected {
                        Err(Thrown::Value(value))
                    } else {
                        Ok(value)
                    },
                );
            }
            guarded::clear(call.env);
            Ok(())
        })?;
        let factory: Function<Function<(), ()>, Function<(), ()>> =
            env.run_script(WATCHER_SOURCE)?;
        Ok(Self {
            watch: factory.call(done)?.create_ref()?,
            pending,
            next_id: Cell::new(0),
        })
    }

    /// Calls `on_settled` when `promise` settles; the watch number, to [`forget`](Self::forget)
    /// it. If the promise cannot be watched (attaching threw), `on_settled` has been called
    /// with what was thrown by the time this returns, and there is no watch (`None`).
    pub fn watch(&self, env: &Env, promise: Unknown, on_settled: OnSettled) -> Option<u64> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.pending.borrow_mut().insert(id, on_settled);
        let watching = self
            .watch
            .borrow_back(env)
            .and_then(|watch| {
                Ok((
                    watch,
                    env.create_int64(i64::try_from(id).unwrap_or(i64::MAX))?,
                ))
            })
            .map_err(|error| Thrown::Failed(error.reason))
            .and_then(|(watch, number)| {
                guarded::call(
                    env,
                    &watch.to_unknown(),
                    &guarded::undefined(env),
                    &[promise.raw(), number.raw()],
                )
            });
        match watching {
            // Attaching threw inside the helper, which reported it already.
            Ok(_) if !self.pending.borrow().contains_key(&id) => None,
            Ok(_) => Some(id),
            Err(thrown) => {
                let on_settled = self.pending.borrow_mut().remove(&id);
                if let Some(on_settled) = on_settled {
                    on_settled(env, id, Err(thrown));
                }
                guarded::clear(env);
                None
            }
        }
    }

    /// Forgets a watch whose promise has not settled (its executor is gone): its callback is
    /// dropped unrun.
    pub fn forget(&self, id: u64) {
        let forgotten = self.pending.borrow_mut().remove(&id);
        drop(forgotten);
    }
}
