//! What happens to executors when their Node environment goes away (a worker thread terminated
//! or exiting): their engines are stopped at once, interrupting any run still going, instead of
//! holding a pool thread until the run's deadline.
//!
//! A run in flight keeps its executor's engine alive even after Node collects the executor
//! object (the run's promise may still be awaited), so collection alone must not stop it. But
//! when the environment itself is torn down nobody can await anything any more: a cleanup hook,
//! registered when the module loads in the environment and so run before Node finalizes the
//! environment's objects, marks the environment as closing, and an executor finalized after that
//! stops its engine.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use napi::{Env, Result};

/// The closing flag of each live environment, by its `napi_env` address.
static ENVIRONMENTS: Mutex<Option<HashMap<usize, Arc<AtomicBool>>>> = Mutex::new(None);

fn with_environments<R>(work: impl FnOnce(&mut HashMap<usize, Arc<AtomicBool>>) -> R) -> R {
    let mut environments = ENVIRONMENTS.lock().unwrap_or_else(PoisonError::into_inner);
    work(environments.get_or_insert_with(HashMap::new))
}

/// Watches `env` for teardown; called once as the module loads in it.
pub fn watch(env: &Env) -> Result<()> {
    let key = env.raw() as usize;
    with_environments(|environments| {
        environments.insert(key, Arc::new(AtomicBool::new(false)));
    });
    env.add_env_cleanup_hook(key, |key| {
        if let Some(closing) = with_environments(|environments| environments.remove(&key)) {
            closing.store(true, Ordering::Release);
        }
    })?;
    Ok(())
}

/// The flag that tells whether `env` is being torn down.
pub fn closing(env: &Env) -> Arc<AtomicBool> {
    with_environments(|environments| {
        Arc::clone(
            environments
                .entry(env.raw() as usize)
                .or_insert_with(|| Arc::new(AtomicBool::new(false))),
        )
    })
}
