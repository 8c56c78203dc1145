//! The raw QuickJS access of durable sessions (QuickJS patch 0800, `engine::session`): the
//! session hook that every clock read passes through, a context's `Math.random` state, and the
//! interrupt counter a run starts afresh. Like `reflect.rs`, nothing here runs sandbox code.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use rquickjs::{qjs, Ctx};

/// What the session hook is asked about (`JS_SESSION_*` of the patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum ClockRead {
    /// `Date.now()`, `new Date()`, `Date()`: milliseconds since 1970, a whole number.
    DateNow,
    /// `performance.now()`.
    PerformanceNow,
    /// `performance.timeOrigin`, read once as a context is made.
    TimeOrigin,
}

impl ClockRead {
    fn of(kind: c_int) -> Option<Self> {
        match kind {
            0 => Some(Self::DateNow),
            1 => Some(Self::PerformanceNow),
            2 => Some(Self::TimeOrigin),
            _ => None,
        }
    }
}

extern "C" {
    fn JS_SetSessionHook(
        rt: *mut qjs::JSRuntime,
        hook: Option<unsafe extern "C" fn(*mut c_void, c_int, u64) -> u64>,
        opaque: *mut c_void,
    );
    fn JS_GetRandomState(ctx: *mut qjs::JSContext) -> u64;
    fn JS_SetRandomState(ctx: *mut qjs::JSContext, state: u64);
    fn JS_ResetInterruptCounter(ctx: *mut qjs::JSContext);
}

/// What answers clock reads (the session's tape).
pub(in crate::engine) trait Clock {
    /// The value a read of `read` gives, `value` being what the clock says now.
    fn read(&self, read: ClockRead, value: f64) -> f64;
}

/// Makes every clock read of `ctx`'s runtime pass through `clock`, or through nothing with
/// `None`. The caller keeps the clock alive (at the same address) while it is set, and sets
/// `None` before it goes.
pub(in crate::engine) fn set_hook<C: Clock>(ctx: &Ctx<'_>, clock: Option<&C>) {
    // SAFETY: a live context and its runtime, used by this thread alone; the hook is a plain
    // function, and the opaque pointer stays valid while it is set (the caller's promise).
    unsafe {
        let rt = qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        match clock {
            Some(clock) => JS_SetSessionHook(
                rt,
                Some(call_hook::<C>),
                std::ptr::from_ref(clock).cast_mut().cast(),
            ),
            None => JS_SetSessionHook(rt, None, std::ptr::null_mut()),
        }
    }
}

unsafe extern "C" fn call_hook<C: Clock>(opaque: *mut c_void, kind: c_int, bits: u64) -> u64 {
    let value = f64::from_bits(bits);
    let Some(read) = ClockRead::of(kind) else {
        return bits;
    };
    // SAFETY: `opaque` is the clock `set_hook` was given (a `C`), alive while the hook is set;
    // QuickJS calls the hook on the thread that runs the context.
    let clock = unsafe { &*opaque.cast::<C>() };
    let answered = catch_unwind(AssertUnwindSafe(|| clock.read(read, value)));
    answered.unwrap_or(value).to_bits()
}

/// `Math.random`'s generator state.
pub(in crate::engine) fn random_state(ctx: &Ctx<'_>) -> u64 {
    // SAFETY: a live context; reads one field.
    unsafe { JS_GetRandomState(ctx.as_raw().as_ptr()) }
}

/// Sets `Math.random`'s generator state (0, which the generator cannot hold, becomes 1).
pub(in crate::engine) fn set_random_state(ctx: &Ctx<'_>, state: u64) {
    // SAFETY: a live context; writes one field.
    unsafe { JS_SetRandomState(ctx.as_raw().as_ptr(), state) }
}

/// Starts the count to the context's next interrupt poll afresh.
pub(in crate::engine) fn reset_interrupt_counter(ctx: &Ctx<'_>) {
    // SAFETY: a live context; writes one field.
    unsafe { JS_ResetInterruptCounter(ctx.as_raw().as_ptr()) }
}
