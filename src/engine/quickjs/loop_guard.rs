//! The loop guard of QuickJS patch 0600: the counter QuickJS advances at every loop-body entry
//! of code its runtime compiles while a guard is installed, and the handler it calls once the
//! count passes its limit (§6.3).

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::rc::Rc;

use rquickjs::{qjs, Ctx, JsLifetime};

/// The loop guard's handler in QuickJS (`JSLoopGuard.trip`).
type Trip = unsafe extern "C" fn(*mut qjs::JSContext, *mut c_void) -> c_int;

/// `JSLoopGuard` of `vendor/quickjs-patches/0600-loop-guard-opcode.patch`, laid out as the C
/// struct: QuickJS advances `count` at every loop-body entry of code its runtime compiles while
/// this guard is installed, and calls `trip` at the entry where `count` passes `limit`. Both
/// counters are `Cell`s because the interpreter writes them while the owner holds `&self`.
#[repr(C)]
pub(crate) struct LoopGuard {
    count: Cell<u64>,
    limit: Cell<u64>,
    trip: Cell<Option<Trip>>,
    opaque: Cell<*mut c_void>,
}

impl LoopGuard {
    /// A guard that counts without limit, not yet installed.
    pub fn new() -> Self {
        Self {
            count: Cell::new(0),
            limit: Cell::new(u64::MAX),
            trip: Cell::new(None),
            opaque: Cell::new(ptr::null_mut()),
        }
    }

    /// Loop-body entries counted since the last [`LoopGuard::restart`].
    pub fn count(&self) -> u64 {
        self.count.get()
    }

    /// Counts from zero again; `trip` is called once the count passes `limit`.
    pub fn restart(&self, limit: u64) {
        self.count.set(0);
        self.limit.set(limit);
    }

    /// Calls `trip` at the next loop-body entry, and every one after it until the next
    /// [`LoopGuard::restart`].
    pub fn trip_at_next_entry(&self) {
        self.limit.set(0);
    }
}

impl Default for LoopGuard {
    fn default() -> Self {
        Self::new()
    }
}

/// What owns a [`LoopGuard`] and decides, when its count passes its limit, whether the loop body
/// may run.
pub(crate) trait LoopTrip: 'static {
    /// The guard QuickJS counts in.
    fn loop_guard(&self) -> &LoopGuard;
    /// Called when the count passed the limit; `true` when the loop body must not run.
    fn trip(&self) -> bool;
    /// Throws the error that ends the loop body's function when [`LoopTrip::trip`] said so.
    fn throw(&self, ctx: &Ctx<'_>);
}

/// Keeps the loop guard's owner alive as long as the runtime, which reaches it through the raw
/// pointers of the installed `JSLoopGuard`.
struct Kept<T> {
    _state: Rc<T>,
}

// SAFETY: holds no JS values, so no lifetime of the runtime to change.
unsafe impl<'js, T: 'static> JsLifetime<'js> for Kept<T> {
    type Changed<'to> = Kept<T>;
}

extern "C" {
    /// `vendor/quickjs-patches/0600-loop-guard-opcode.patch`.
    fn JS_SetLoopGuard(rt: *mut qjs::JSRuntime, guard: *mut LoopGuard);
}

/// Installs `state`'s loop guard in the runtime of `ctx`: every loop body compiled from now on
/// counts in it (§6.3). One guard per runtime; it lives as long as the runtime.
pub(crate) fn install_loop_guard<T: LoopTrip>(
    ctx: &Ctx<'_>,
    state: &Rc<T>,
) -> rquickjs::Result<()> {
    ctx.store_userdata(Kept {
        _state: Rc::clone(state),
    })
    .map_err(|_| rquickjs::Error::new_from_js("state", "loop guard state"))?;
    let guard = state.loop_guard();
    guard.trip.set(Some(loop_trip::<T>));
    guard.opaque.set(Rc::as_ptr(state).cast_mut().cast());
    set_loop_guard(ctx, Some(guard));
    Ok(())
}

/// Points the runtime of `ctx` at `guard`, or at none: code compiled while it has none has no
/// guard in its loops, and guards already compiled count nothing. The runtime reads the guard
/// until it is replaced, so `guard` must outlive that ([`install_loop_guard`] keeps it alive).
pub(crate) fn set_loop_guard(ctx: &Ctx<'_>, guard: Option<&LoopGuard>) {
    let guard = guard.map_or(ptr::null_mut(), |guard| ptr::from_ref(guard).cast_mut());
    // SAFETY: `ctx` is live; QuickJS only stores the pointer, which it dereferences on this
    // thread while the guard is alive (see above). Its fields are `Cell`s, written through
    // shared references by design.
    unsafe { JS_SetLoopGuard(qjs::JS_GetRuntime(ctx.as_raw().as_ptr()), guard) }
}

unsafe extern "C" fn loop_trip<T: LoopTrip>(
    ctx: *mut qjs::JSContext,
    opaque: *mut c_void,
) -> c_int {
    // SAFETY: set by `install_loop_guard` to a `T` kept alive for the runtime's lifetime; only
    // this thread touches it.
    let state = unsafe { &*opaque.cast::<T>() };
    if !state.trip() {
        return 0;
    }
    // SAFETY: called by QuickJS's interpreter on this context, whose runtime is locked by the
    // running code.
    let ctx = unsafe { Ctx::from_raw(ptr::NonNull::new_unchecked(ctx)) };
    state.throw(&ctx);
    1
}
