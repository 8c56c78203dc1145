//! The raw QuickJS access of durable sessions (QuickJS patches 0800 and 0802,
//! `engine::session`): the session hook that every clock read (and every `WeakRef` or
//! `FinalizationRegistry` made) passes through, a context's `Math.random` state, and the
//! interrupt counter a run starts afresh. Like `reflect.rs`, nothing here runs sandbox code.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use rquickjs::{qjs, Ctx, Value};

use super::reflect;

/// What the session hook is asked about (`JS_SESSION_*` of the patch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::engine) enum ClockRead {
    /// `Date.now()`, `new Date()`, `Date()`: milliseconds since 1970, a whole number.
    DateNow,
    /// `performance.now()`.
    PerformanceNow,
    /// `performance.timeOrigin`, read once as a context is made.
    TimeOrigin,
    /// A `WeakRef` or `FinalizationRegistry` is made (patch 0802): no value, but from now on
    /// code can tell when the garbage collector ran, which no record can make a replay repeat.
    GcObserver,
}

impl ClockRead {
    fn of(kind: c_int) -> Option<Self> {
        match kind {
            0 => Some(Self::DateNow),
            1 => Some(Self::PerformanceNow),
            2 => Some(Self::TimeOrigin),
            3 => Some(Self::GcObserver),
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

// ---------------------------------------------------------------------------------------------
// checkpoints (QuickJS patch 0801)

extern "C" {
    fn JS_GetGlobalLexicals(ctx: *mut qjs::JSContext) -> qjs::JSValue;
    fn JS_GetShapePropertyCount(obj: qjs::JSValue) -> u32;
    fn JS_GetClassCount(ctx: *mut qjs::JSContext) -> u32;
    fn JS_GetShapeProperty(
        obj: qjs::JSValue,
        i: u32,
        atom: *mut qjs::JSAtom,
        flags: *mut c_int,
    ) -> c_int;
}

/// The `JS_PROP_*` bits a checkpoint reads (besides the configurable and enumerable ones the
/// image keeps as they are): writable, and an accessor's kind.
pub(in crate::engine) const WRITABLE: u8 = qjs::JS_PROP_WRITABLE as u8;
/// An accessor property (getter and setter).
pub(in crate::engine) const ACCESSOR: u8 = qjs::JS_PROP_GETSET as u8;
const KIND: c_int = qjs::JS_PROP_TMASK as c_int;
const AUTOINIT: c_int = qjs::JS_PROP_AUTOINIT as c_int;

/// An atom this module holds a reference to.
pub(in crate::engine) struct Atom<'js> {
    ctx: Ctx<'js>,
    raw: qjs::JSAtom,
}

impl<'js> Atom<'js> {
    /// The atom of a property key (a string, number or symbol value); `None` when it cannot be
    /// made (no memory).
    pub(in crate::engine) fn of(ctx: &Ctx<'js>, key: &Value<'js>) -> Option<Self> {
        // SAFETY: a live value; the result is a new atom reference (or JS_ATOM_NULL).
        let raw = unsafe { qjs::JS_ValueToAtom(ctx.as_raw().as_ptr(), key.as_raw()) };
        Self::made(ctx, raw)
    }

    /// The atom of array index `index` (a number QuickJS tags in the atom itself up to
    /// 2^31 - 1); `None` when it cannot be made (no memory, for a larger index).
    pub(in crate::engine) fn of_index(ctx: &Ctx<'js>, index: u32) -> Option<Self> {
        // SAFETY: a live context; the result is a new atom reference (or JS_ATOM_NULL).
        let raw = unsafe { qjs::JS_NewAtomUInt32(ctx.as_raw().as_ptr(), index) };
        Self::made(ctx, raw)
    }

    /// A new atom reference QuickJS made, or `None` for JS_ATOM_NULL (its exception taken).
    fn made(ctx: &Ctx<'js>, raw: qjs::JSAtom) -> Option<Self> {
        if raw == 0 {
            let _ = ctx.catch();
            return None;
        }
        Some(Self {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// An atom borrowed from QuickJS, taken as a reference of its own.
    fn duplicate(ctx: &Ctx<'js>, raw: qjs::JSAtom) -> Self {
        // SAFETY: `raw` is a live atom of this runtime.
        let raw = unsafe { qjs::JS_DupAtom(ctx.as_raw().as_ptr(), raw) };
        Self {
            ctx: ctx.clone(),
            raw,
        }
    }

    /// The key as a value: a string (array indices as their decimal string) or the symbol.
    pub(in crate::engine) fn key(&self) -> Option<Value<'js>> {
        // SAFETY: a live atom; the result is a new reference or the exception marker.
        let value = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_AtomToValue(self.ctx.as_raw().as_ptr(), self.raw),
            )
        };
        if value.is_exception() {
            let _ = self.ctx.catch();
            return None;
        }
        Some(value)
    }

    fn raw(&self) -> qjs::JSAtom {
        self.raw
    }

    /// Whether the key is an array index (QuickJS tags those in the atom itself).
    pub(in crate::engine) fn is_index(&self) -> bool {
        self.raw & reflect::ATOM_TAG_INT != 0
    }

    /// The array index the key is, when QuickJS tags it in the atom (up to 2^31 - 1).
    pub(in crate::engine) fn index(&self) -> Option<u32> {
        self.is_index().then_some(self.raw & !reflect::ATOM_TAG_INT)
    }

    /// The atom's number: equal for the same key (the same symbol) while both are alive.
    pub(in crate::engine) fn raw_id(&self) -> u32 {
        self.raw
    }
}

impl Drop for Atom<'_> {
    fn drop(&mut self) {
        // SAFETY: this is the reference `of` or `duplicate` took.
        unsafe { qjs::JS_FreeAtom(self.ctx.as_raw().as_ptr(), self.raw) }
    }
}

/// Own property keys of `obj` in the order the language lists them (indices, strings, then
/// symbols; `private` lists private names only).
pub(in crate::engine) fn own_keys<'js>(
    ctx: &Ctx<'js>,
    obj: &Value<'js>,
    private: bool,
) -> Option<Vec<Atom<'js>>> {
    let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
    let mut len: u32 = 0;
    let flags = if private {
        qjs::JS_GPN_PRIVATE_MASK
    } else {
        qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SYMBOL_MASK
    };
    // SAFETY: a live object; on success QuickJS hands over `len` entries whose atoms this takes,
    // and the table is freed with `js_free`.
    let listed = unsafe {
        qjs::JS_GetOwnPropertyNames(
            ctx.as_raw().as_ptr(),
            &mut tab,
            &mut len,
            obj.as_raw(),
            flags as c_int,
        )
    };
    if listed < 0 {
        let _ = ctx.catch();
        return None;
    }
    let mut keys = Vec::with_capacity(len as usize);
    for i in 0..len as usize {
        // SAFETY: `i < len` entries were filled by QuickJS.
        let raw = unsafe { (*tab.add(i)).atom };
        keys.push(Atom {
            ctx: ctx.clone(),
            raw,
        });
    }
    if !tab.is_null() {
        // SAFETY: the table came from QuickJS's allocator; its atoms now belong to `keys`.
        unsafe { qjs::js_free(ctx.as_raw().as_ptr(), tab.cast()) };
    }
    Some(keys)
}

/// One own property slot of an object, as its shape lists it.
pub(in crate::engine) struct Slot<'js> {
    pub atom: Atom<'js>,
    /// The property is still to be made (a lazily made built-in): nothing of it exists yet.
    pub lazy: bool,
}

/// The own property slots of `obj` in the order they were added, without making any of them.
/// An array's elements are not among them.
pub(in crate::engine) fn shape<'js>(ctx: &Ctx<'js>, obj: &Value<'js>) -> Vec<Slot<'js>> {
    // SAFETY: a live value; both calls only read the object's shape.
    let count = unsafe { JS_GetShapePropertyCount(obj.as_raw()) };
    let mut slots = Vec::new();
    for i in 0..count {
        let (mut atom, mut flags) = (0, 0);
        // SAFETY: as above; `i` is below the count, and the atom is borrowed from the shape.
        if unsafe { JS_GetShapeProperty(obj.as_raw(), i, &mut atom, &mut flags) } == 0 {
            continue;
        }
        slots.push(Slot {
            atom: Atom::duplicate(ctx, atom),
            lazy: flags & KIND == AUTOINIT,
        });
    }
    slots
}

/// How many classes the runtime has: every class id below can be asked for its prototype.
pub(in crate::engine) fn class_count(ctx: &Ctx<'_>) -> u32 {
    // SAFETY: reads a field of the live context's runtime.
    unsafe { JS_GetClassCount(ctx.as_raw().as_ptr()) }
}

/// The object holding the context's global `let`, `const` and `class` bindings.
pub(in crate::engine) fn global_lexicals<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    // SAFETY: a live context; the result is a new reference to one of its objects.
    unsafe { Value::from_raw(ctx.clone(), JS_GetGlobalLexicals(ctx.as_raw().as_ptr())) }
}

/// An own property read without running anything.
pub(in crate::engine) struct Own<'js> {
    /// [`CONFIGURABLE`] | [`WRITABLE`] | [`ENUMERABLE`] | [`ACCESSOR`].
    pub flags: u8,
    pub value: Value<'js>,
    pub getter: Value<'js>,
    pub setter: Value<'js>,
}

/// `obj`'s own property `atom` (`None` when it has none, or reading failed). A lazily made
/// property is made first.
pub(in crate::engine) fn own<'js>(
    ctx: &Ctx<'js>,
    obj: &Value<'js>,
    atom: &Atom<'js>,
) -> Option<Own<'js>> {
    let mut desc = qjs::JSPropertyDescriptor {
        flags: 0,
        value: qjs::JS_UNDEFINED,
        getter: qjs::JS_UNDEFINED,
        setter: qjs::JS_UNDEFINED,
    };
    // SAFETY: live value and atom; on 1 every field of the descriptor is an owned reference,
    // wrapped below exactly once; on 0 or -1 they hold `undefined`.
    let found = unsafe {
        qjs::JS_GetOwnProperty(ctx.as_raw().as_ptr(), &mut desc, obj.as_raw(), atom.raw())
    };
    if found < 0 {
        let _ = ctx.catch();
        return None;
    }
    if found == 0 {
        return None;
    }
    // SAFETY: see above.
    let (value, getter, setter) = unsafe {
        (
            Value::from_raw(ctx.clone(), desc.value),
            Value::from_raw(ctx.clone(), desc.getter),
            Value::from_raw(ctx.clone(), desc.setter),
        )
    };
    let flags = desc.flags as u32;
    Some(Own {
        flags: (flags & qjs::JS_PROP_C_W_E) as u8
            | if flags & qjs::JS_PROP_GETSET != 0 {
                ACCESSOR
            } else {
                0
            },
        value,
        getter,
        setter,
    })
}

/// Defines `obj`'s own property `atom` exactly as given (a data property with `value`, or with
/// [`ACCESSOR`] an accessor of `getter` and `setter`). False when QuickJS refuses it (the
/// exception is cleared).
pub(in crate::engine) fn define<'js>(
    ctx: &Ctx<'js>,
    obj: &Value<'js>,
    atom: &Atom<'js>,
    flags: u8,
    value: &Value<'js>,
    getter: &Value<'js>,
    setter: &Value<'js>,
) -> bool {
    let mut how = qjs::JS_PROP_HAS_CONFIGURABLE
        | qjs::JS_PROP_HAS_ENUMERABLE
        | qjs::JS_PROP_THROW
        | u32::from(flags) & (qjs::JS_PROP_CONFIGURABLE | qjs::JS_PROP_ENUMERABLE);
    if flags & ACCESSOR != 0 {
        how |= qjs::JS_PROP_HAS_GET | qjs::JS_PROP_HAS_SET;
    } else {
        how |= qjs::JS_PROP_HAS_VALUE
            | qjs::JS_PROP_HAS_WRITABLE
            | u32::from(flags) & qjs::JS_PROP_WRITABLE;
    }
    // SAFETY: live values and atom, borrowed for the call (QuickJS duplicates what it keeps).
    let defined = unsafe {
        qjs::JS_DefineProperty(
            ctx.as_raw().as_ptr(),
            obj.as_raw(),
            atom.raw(),
            value.as_raw(),
            getter.as_raw(),
            setter.as_raw(),
            how as c_int,
        )
    };
    if defined < 0 {
        let _ = ctx.catch();
        return false;
    }
    defined == 1
}

/// The value of a global lexical binding in its temporal dead zone.
pub(in crate::engine) fn uninitialized<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    // SAFETY: a tag without a payload owns nothing.
    unsafe { Value::from_raw(ctx.clone(), qjs::JS_MKVAL(qjs::JS_TAG_UNINITIALIZED, 0)) }
}

/// Whether `value` is a binding's temporal dead zone marker.
pub(in crate::engine) fn is_uninitialized(value: &Value<'_>) -> bool {
    // SAFETY: reads the tag of a live value.
    unsafe { qjs::JS_VALUE_GET_TAG(value.as_raw()) == qjs::JS_TAG_UNINITIALIZED }
}

/// `obj`'s extensibility (`None` when it cannot be read: a revoked Proxy).
pub(in crate::engine) fn is_extensible(ctx: &Ctx<'_>, obj: &Value<'_>) -> Option<bool> {
    // SAFETY: a live value; an ordinary object's flag is read without running anything.
    match unsafe { qjs::JS_IsExtensible(ctx.as_raw().as_ptr(), obj.as_raw()) } {
        0 => Some(false),
        1 => Some(true),
        _ => {
            let _ = ctx.catch();
            None
        }
    }
}

/// Makes `obj` non-extensible.
pub(in crate::engine) fn prevent_extensions(ctx: &Ctx<'_>, obj: &Value<'_>) -> bool {
    // SAFETY: a live value.
    let done = unsafe { qjs::JS_PreventExtensions(ctx.as_raw().as_ptr(), obj.as_raw()) };
    if done < 0 {
        let _ = ctx.catch();
    }
    done == 1
}

/// Sets `obj`'s prototype (false when refused: a cycle, a non-extensible object).
pub(in crate::engine) fn set_prototype(ctx: &Ctx<'_>, obj: &Value<'_>, proto: &Value<'_>) -> bool {
    // SAFETY: live values.
    let done = unsafe { qjs::JS_SetPrototype(ctx.as_raw().as_ptr(), obj.as_raw(), proto.as_raw()) };
    if done < 0 {
        let _ = ctx.catch();
    }
    done == 1
}

/// Where an object lives: its identity within one context.
pub(in crate::engine) fn address(value: &Value<'_>) -> usize {
    // SAFETY: reads the pointer of a live object value.
    unsafe { qjs::JS_VALUE_GET_PTR(value.as_raw()) as usize }
}
