//! Raw access to QuickJS (the C API that rquickjs wraps only in part): own-property
//! descriptors read without running accessors, class ids, atoms, the realm's intrinsic
//! functions, buffers and views, and the few constructors and flags the engine needs. It is the
//! engine's one home of `unsafe` and `qjs::` (the heap meter's allocator aside): the formatter
//! (`inspect`), the value copies (`convert`) and the bindings (`globals`) read and make values
//! through the safe functions here.
//!
//! Nothing here runs sandbox code unless it says so (`get`, `call_this`), and nothing leaves an
//! exception pending: a failed read is cleared and reported as `None` / `Err(())`.
//!
//! Spec: §5.2 (hardened endowments: nothing the sandbox replaced is trusted) and §7.3.

use std::cell::RefCell;
use std::ffi::{c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use rquickjs::atom::PredefinedAtom;
use rquickjs::function::This;
use rquickjs::{
    qjs, Coerced, Constructor, Context, Ctx, Function, JsLifetime, Runtime, Type, Value,
};

use crate::value::TypedArrayKind;

/// Prototype chains are walked for constructor names and inherited data properties; a chain this
/// long only exists to slow the caller down.
pub(crate) const MAX_PROTO_HOPS: usize = 1_000;
/// QuickJS stores array indices up to 2^31 - 2 as tagged integer atoms.
pub(crate) const ATOM_TAG_INT: u32 = 1 << 31;

/// `own_atoms` flags: string keys, symbol keys, enumerable ones only.
pub(crate) const KEYS_STRINGS: u32 = qjs::JS_GPN_STRING_MASK;
pub(crate) const KEYS_SYMBOLS: u32 = qjs::JS_GPN_SYMBOL_MASK;
pub(crate) const KEYS_ENUMERABLE: u32 = qjs::JS_GPN_ENUM_ONLY;

// Class ids of the built-in classes of the quickjs-ng bundled with rquickjs 0.14.0 (the
// `JS_CLASS_*` enum in quickjs.c, which the C header does not export). The test
// `class_ids_match_bundled_quickjs` pins them.
pub(crate) const CLASS_OBJECT: u32 = 1;
pub(crate) const CLASS_ARRAY: u32 = 2;
pub(crate) const CLASS_ERROR: u32 = 3;
pub(crate) const CLASS_NUMBER: u32 = 4;
pub(crate) const CLASS_STRING: u32 = 5;
pub(crate) const CLASS_BOOLEAN: u32 = 6;
pub(crate) const CLASS_SYMBOL: u32 = 7;
pub(crate) const CLASS_ARGUMENTS: u32 = 8;
pub(crate) const CLASS_MAPPED_ARGUMENTS: u32 = 9;
pub(crate) const CLASS_DATE: u32 = 10;
pub(crate) const CLASS_MODULE_NS: u32 = 11;
pub(crate) const CLASS_C_FUNCTION: u32 = 12;
pub(crate) const CLASS_BYTECODE_FUNCTION: u32 = 13;
pub(crate) const CLASS_GENERATOR_FUNCTION: u32 = 17;
pub(crate) const CLASS_REGEXP: u32 = 19;
pub(crate) const CLASS_ARRAY_BUFFER: u32 = 20;
pub(crate) const CLASS_SHARED_ARRAY_BUFFER: u32 = 21;
pub(crate) const CLASS_UINT8C_ARRAY: u32 = 22;
pub(crate) const CLASS_INT8_ARRAY: u32 = 23;
pub(crate) const CLASS_UINT8_ARRAY: u32 = 24;
pub(crate) const CLASS_INT16_ARRAY: u32 = 25;
pub(crate) const CLASS_UINT16_ARRAY: u32 = 26;
pub(crate) const CLASS_INT32_ARRAY: u32 = 27;
pub(crate) const CLASS_UINT32_ARRAY: u32 = 28;
pub(crate) const CLASS_BIG_INT64_ARRAY: u32 = 29;
pub(crate) const CLASS_BIG_UINT64_ARRAY: u32 = 30;
pub(crate) const CLASS_FLOAT16_ARRAY: u32 = 31;
pub(crate) const CLASS_FLOAT32_ARRAY: u32 = 32;
pub(crate) const CLASS_FLOAT64_ARRAY: u32 = 33;
pub(crate) const CLASS_DATAVIEW: u32 = 34;
pub(crate) const CLASS_BIG_INT: u32 = 35;
pub(crate) const CLASS_MAP: u32 = 36;
pub(crate) const CLASS_SET: u32 = 37;
pub(crate) const CLASS_WEAKMAP: u32 = 38;
pub(crate) const CLASS_WEAKSET: u32 = 39;
pub(crate) const CLASS_MAP_ITERATOR: u32 = 44;
pub(crate) const CLASS_SET_ITERATOR: u32 = 45;
pub(crate) const CLASS_PROMISE: u32 = 52;
pub(crate) const CLASS_ASYNC_FUNCTION: u32 = 55;
pub(crate) const CLASS_ASYNC_GENERATOR_FUNCTION: u32 = 59;

/// The built-in methods (`false`) and getters (`true`) the executor calls on sandbox values, by
/// the class whose intrinsic prototype holds them: what copies (`convert`) and the formatter
/// (`inspect`) ask of Maps, Sets, Dates, RegExps, errors, wrapped primitives and views.
pub(crate) const BUILT_INS: [(u32, &str, bool); 27] = [
    (CLASS_MAP, "entries", false),
    (CLASS_MAP, "set", false),
    (CLASS_MAP, "size", true),
    (CLASS_SET, "values", false),
    (CLASS_SET, "add", false),
    (CLASS_SET, "size", true),
    (CLASS_MAP_ITERATOR, "next", false),
    (CLASS_SET_ITERATOR, "next", false),
    (CLASS_DATE, "getTime", false),
    (CLASS_REGEXP, "source", true),
    (CLASS_REGEXP, "hasIndices", true),
    (CLASS_REGEXP, "global", true),
    (CLASS_REGEXP, "ignoreCase", true),
    (CLASS_REGEXP, "multiline", true),
    (CLASS_REGEXP, "dotAll", true),
    (CLASS_REGEXP, "unicode", true),
    (CLASS_REGEXP, "unicodeSets", true),
    (CLASS_REGEXP, "sticky", true),
    (CLASS_ERROR, "stack", true),
    (CLASS_NUMBER, "valueOf", false),
    (CLASS_STRING, "valueOf", false),
    (CLASS_BOOLEAN, "valueOf", false),
    (CLASS_BIG_INT, "valueOf", false),
    (CLASS_SYMBOL, "valueOf", false),
    (CLASS_DATAVIEW, "byteLength", true),
    (CLASS_DATAVIEW, "byteOffset", true),
    (CLASS_DATAVIEW, "buffer", true),
];

/// The constructors copies build with: by the class whose intrinsic prototype names them, or
/// (for the errors that share the Error class) by their global.
pub(crate) const CONSTRUCTORS: [(&str, Option<u32>); 5] = [
    ("Map", Some(CLASS_MAP)),
    ("Set", Some(CLASS_SET)),
    ("RegExp", Some(CLASS_REGEXP)),
    ("EvalError", None),
    ("URIError", None),
];

/// The realm's own functions for [`BUILT_INS`] and [`CONSTRUCTORS`], taken before any sandbox
/// code could reach them and kept for the context's lifetime (as Node keeps its "primordials"):
/// reading a sandbox value and building one never goes through a prototype, getter, iterator or
/// constructor that sandbox code can replace, however it changed the realm. Those of the classes
/// the context has when it is made are taken then; those of a group QuickJS makes on first use
/// ([`new_context`]) when it is made, before anything of it is handed out. Kept as the runtime's
/// user data: one context per runtime.
pub(crate) struct Intrinsics<'js> {
    functions: RefCell<Vec<Option<Function<'js>>>>,
    constructors: RefCell<Vec<Option<Constructor<'js>>>>,
}

// SAFETY: the only lifetime held is the runtime's `'js`, which `Changed` replaces everywhere.
unsafe impl<'js> JsLifetime<'js> for Intrinsics<'js> {
    type Changed<'to> = Intrinsics<'to>;
}

/// What an own property holds, read without running accessors.
pub(crate) enum PropValue<'js> {
    Data(Value<'js>),
    Accessor {
        get: bool,
        set: bool,
    },
    /// Reading threw (an uninitialized module binding is the only ordinary cause).
    Unreadable,
}

pub(crate) struct PropDesc<'js> {
    pub(crate) value: PropValue<'js>,
    pub(crate) enumerable: bool,
    pub(crate) writable: bool,
}

/// The collector and stack limit of a runtime, for native code that runs inside it (the memory
/// account's reclaim hook, which the engine clears before it frees the runtime). Its holder must
/// not outlive the runtime.
pub(crate) struct RuntimeLimit(*mut qjs::JSRuntime);

impl RuntimeLimit {
    /// The runtime of `ctx`.
    pub(crate) fn of(ctx: &Ctx<'_>) -> Self {
        // SAFETY: `ctx` is a live context; the call only reads its runtime pointer.
        Self(unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) })
    }

    /// Runs the cycle collector. QuickJS allows a collection wherever it could allocate.
    pub(crate) fn collect_garbage(&self) {
        // SAFETY: the runtime is alive (see the type's contract) and locked by the running code.
        unsafe { qjs::JS_RunGC(self.0) };
    }
    /// Makes QuickJS measure its stack limit from the calling thread's stack: the runtime moves
    /// between engine threads, and the stack top it recorded belongs to the previous one.
    pub(crate) fn update_stack_top(&self) {
        // SAFETY: the runtime is alive (see the type's contract) and used by this thread alone;
        // the call records the current frame's address.
        unsafe { qjs::JS_UpdateStackTop(self.0) };
    }
}

/// Reads a context's values without running its code.
#[derive(Clone, Copy)]
pub(crate) struct Reflect<'a, 'js> {
    ctx: &'a Ctx<'js>,
}

impl<'a, 'js> Reflect<'a, 'js> {
    pub(crate) fn new(ctx: &'a Ctx<'js>) -> Self {
        Self { ctx }
    }

    fn raw_ctx(&self) -> *mut qjs::JSContext {
        self.ctx.as_raw().as_ptr()
    }

    fn clear_exception(&self) {
        let _ = self.ctx.catch();
    }

    /// An own property's value, getter, setter and flags, read without running anything.
    fn raw_own_property(
        &self,
        obj: &Value<'js>,
        atom: &OwnedAtom<'js>,
    ) -> Result<Option<(Value<'js>, Value<'js>, Value<'js>, u32)>, ()> {
        let mut desc = qjs::JSPropertyDescriptor {
            flags: 0,
            value: qjs::JS_UNDEFINED,
            getter: qjs::JS_UNDEFINED,
            setter: qjs::JS_UNDEFINED,
        };
        // SAFETY: `obj` is a live value and `atom` a live atom for the duration of the call.
        // The descriptor starts out holding `undefined` (nothing to free); when QuickJS reports
        // the property (1) every field holds an owned reference, which is handed to `Value`s
        // below exactly once.
        let r =
            unsafe { qjs::JS_GetOwnProperty(self.raw_ctx(), &mut desc, obj.as_raw(), atom.raw) };
        if r < 0 {
            self.clear_exception();
            return Err(());
        }
        if r == 0 {
            return Ok(None);
        }
        // SAFETY: see above; each owned field is wrapped once and freed on drop.
        let (value, getter, setter) = unsafe {
            (
                Value::from_raw(self.ctx.clone(), desc.value),
                Value::from_raw(self.ctx.clone(), desc.getter),
                Value::from_raw(self.ctx.clone(), desc.setter),
            )
        };
        Ok(Some((value, getter, setter, desc.flags as u32)))
    }

    /// V8's `GetConstructorName` stand-in: the QuickJS class name of the object.
    pub(crate) fn internal_constructor_name(&self, obj: &Value<'js>) -> String {
        let class = class_id(obj);
        // SAFETY: the runtime pointer comes from a live context; `JS_GetClassName` only reads the
        // class table and returns an owned atom (or JS_ATOM_NULL for unknown ids).
        let raw = unsafe {
            let rt = qjs::JS_GetRuntime(self.raw_ctx());
            qjs::JS_GetClassName(rt, class)
        };
        if raw == 0 {
            return "Object".into();
        }
        let atom = OwnedAtom {
            ctx: self.ctx.clone(),
            raw,
        };
        atom.to_value()
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))
            .unwrap_or_else(|| "Object".into())
    }

    /// A regexp's source and flags, or `None` once user code replaced one of the engine's own
    /// accessors.
    pub(crate) fn regexp_parts(&self, value: &Value<'js>) -> Option<(String, String)> {
        let source = self
            .call_native(CLASS_REGEXP, "source", true, value)
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))?;
        // The individual flag getters read the regexp's own flags; the `flags` getter would go
        // through (possibly user-defined) properties.
        let mut flags = String::new();
        for (ch, getter) in [
            ('d', "hasIndices"),
            ('g', "global"),
            ('i', "ignoreCase"),
            ('m', "multiline"),
            ('s', "dotAll"),
            ('u', "unicode"),
            ('v', "unicodeSets"),
            ('y', "sticky"),
        ] {
            if self
                .call_native(CLASS_REGEXP, getter, true, value)?
                .as_bool()?
            {
                flags.push(ch);
            }
        }
        Some((source, flags))
    }

    /// The raw `stack` value: an own or inherited data property, else the engine's own stack
    /// accessor on `Error.prototype`.
    pub(crate) fn raw_stack(&self, err: &Value<'js>) -> Option<Value<'js>> {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Stack);
        let mut current = Some(err.clone());
        for _ in 0..MAX_PROTO_HOPS {
            let o = current?;
            match self.own_desc(&o, &atom) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => return Some(v),
                Ok(Some(_)) => {
                    return if Some(&o) == self.class_proto(CLASS_ERROR).as_ref() {
                        self.call_native(CLASS_ERROR, "stack", true, err)
                    } else {
                        None
                    };
                }
                Ok(None) => {}
                Err(()) => return None,
            }
            current = self.proto_of(&o);
        }
        None
    }

    pub(crate) fn own_desc(
        &self,
        obj: &Value<'js>,
        atom: &OwnedAtom<'js>,
    ) -> Result<Option<PropDesc<'js>>, ()> {
        if !obj.is_object() {
            return Ok(None);
        }
        let Some((value, getter, setter, flags)) = self.raw_own_property(obj, atom)? else {
            return Ok(None);
        };
        let value = if flags & qjs::JS_PROP_GETSET != 0 {
            PropValue::Accessor {
                get: !getter.is_undefined(),
                set: !setter.is_undefined(),
            }
        } else {
            PropValue::Data(value)
        };
        Ok(Some(PropDesc {
            value,
            enumerable: flags & qjs::JS_PROP_ENUMERABLE != 0,
            writable: flags & qjs::JS_PROP_WRITABLE != 0,
        }))
    }

    /// `obj[key]` for data properties only: the first own property found on the prototype
    /// chain, or `None` when it is missing or an accessor (which Node would call).
    pub(crate) fn data_get(&self, obj: &Value<'js>, atom: &OwnedAtom<'js>) -> Option<Value<'js>> {
        let mut current = obj.clone();
        for _ in 0..MAX_PROTO_HOPS {
            match self.own_desc(&current, atom) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => return Some(v),
                Ok(Some(_)) | Err(()) => return None,
                Ok(None) => {}
            }
            current = self.proto_of(&current)?;
        }
        None
    }

    pub(crate) fn data_get_pre(
        &self,
        obj: &Value<'js>,
        atom: PredefinedAtom,
    ) -> Option<Value<'js>> {
        let atom = OwnedAtom::predefined(self.ctx, atom);
        self.data_get(obj, &atom)
    }

    pub(crate) fn data_get_str_value(&self, obj: &Value<'js>, name: &str) -> Option<Value<'js>> {
        let atom = OwnedAtom::from_str(self.ctx, name)?;
        self.data_get(obj, &atom)
    }

    pub(crate) fn data_get_str(&self, obj: &Value<'js>, name: &str) -> Option<String> {
        self.data_get_str_value(obj, name)
            .and_then(|v| self.plain_string(&v))
    }

    pub(crate) fn has_property(&self, obj: &Value<'js>, name: &str) -> bool {
        let Some(atom) = OwnedAtom::from_str(self.ctx, name) else {
            return false;
        };
        // SAFETY: live object and atom; a negative result leaves an exception that is cleared.
        let r = unsafe { qjs::JS_HasProperty(self.raw_ctx(), obj.as_raw(), atom.raw) };
        if r < 0 {
            self.clear_exception();
        }
        r > 0
    }

    /// Element `i` of an engine-made array (Map entries), as a data property.
    pub(crate) fn index_data(&self, array: &Value<'js>, i: u32) -> Value<'js> {
        OwnedAtom::from_index(self.ctx, i)
            .and_then(|atom| match self.own_desc(array, &atom) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => Some(v),
                _ => None,
            })
            .unwrap_or_else(|| Value::new_undefined(self.ctx.clone()))
    }

    /// `Object.getPrototypeOf`. rquickjs' `Object::get_prototype` would wrap the exception
    /// marker of a throwing `getPrototypeOf` trap as if it were an object.
    pub(crate) fn proto_of(&self, obj: &Value<'js>) -> Option<Value<'js>> {
        if !obj.is_object() {
            return None;
        }
        // SAFETY: `obj` is a live object; JS_GetPrototype returns an owned reference (or the
        // exception marker, which owns nothing).
        let proto = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetPrototype(self.raw_ctx(), obj.as_raw()),
            )
        };
        if proto.is_exception() {
            self.clear_exception();
            return None;
        }
        proto.is_object().then_some(proto)
    }

    pub(crate) fn class_proto(&self, class: u32) -> Option<Value<'js>> {
        // SAFETY: only called with ids of classes every full context registers; the result is an
        // owned reference (undefined when the realm lacks the class).
        let proto = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetClassProto(self.raw_ctx(), class),
            )
        };
        proto.is_object().then_some(proto)
    }

    /// A built-in method or getter of `class`'s prototype (one of [`BUILT_INS`]): the engine's
    /// own function as the context had it when it was made ([`Intrinsics`]), whatever sandbox
    /// code did to the prototype since. A context whose intrinsics were never captured (tests
    /// that build a bare one) gets the prototype's current function while it is still an engine
    /// function.
    pub(crate) fn native_fn(&self, class: u32, name: &str, getter: bool) -> Option<Function<'js>> {
        let index = BUILT_INS
            .iter()
            .position(|&built_in| built_in == (class, name, getter));
        debug_assert!(index.is_some(), "{name} is not one of BUILT_INS");
        let index = index?;
        if let Some(intrinsics) = self.ctx.userdata::<Intrinsics<'js>>() {
            return intrinsics.functions.borrow()[index].clone();
        }
        self.current_native_fn(class, name, getter)
    }

    /// The function `class`'s prototype holds under `name` now, if it is an engine function.
    fn current_native_fn(&self, class: u32, name: &str, getter: bool) -> Option<Function<'js>> {
        let atom = OwnedAtom::from_str(self.ctx, name)?;
        let proto = self.class_proto(class)?;
        let (value, get, _set, _flags) = self.raw_own_property(&proto, &atom).ok()??;
        let f = if getter { get } else { value };
        if class_id(&f) != CLASS_C_FUNCTION {
            return None;
        }
        f.into_function()
    }

    /// The engine's own constructor called `name` (one of [`CONSTRUCTORS`]), as the context had
    /// it when it was made (its group made first if QuickJS had not made it yet); for a context
    /// whose intrinsics were never captured, the one the realm holds now if it still is the
    /// engine's.
    pub(crate) fn intrinsic_constructor(&self, name: &str) -> Option<Constructor<'js>> {
        let index = CONSTRUCTORS.iter().position(|&(known, _)| known == name);
        debug_assert!(index.is_some(), "{name} is not one of CONSTRUCTORS");
        let index = index?;
        if let Some(class) = CONSTRUCTORS[index].1 {
            self.make_class(class)?;
        }
        if let Some(intrinsics) = self.ctx.userdata::<Intrinsics<'js>>() {
            return intrinsics.constructors.borrow()[index].clone();
        }
        self.current_constructor(CONSTRUCTORS[index])
    }

    /// Makes the built-ins of `class` if QuickJS has not made them yet (patch 0700): `None` when
    /// they could not be made (no memory).
    pub(in crate::engine) fn make_class(&self, class: u32) -> Option<()> {
        // SAFETY: a live context, used by this thread; the call makes the group of `class` (and
        // tells `intrinsics_made`) or throws.
        if unsafe { JS_MakeClassIntrinsics(self.raw_ctx(), class) } < 0 {
            self.clear_exception();
            return None;
        }
        Some(())
    }

    /// The constructor the realm holds now: the `constructor` of the class's intrinsic
    /// prototype, or the global of that name (`EvalError`, `URIError`, which share the Error
    /// class), accepted only while it is an engine function whose `prototype` is the one the
    /// engine gave it.
    fn current_constructor(&self, (name, class): (&str, Option<u32>)) -> Option<Constructor<'js>> {
        let data = |object: &Value<'js>, atom: &OwnedAtom<'js>| match self.own_desc(object, atom) {
            Ok(Some(PropDesc {
                value: PropValue::Data(value),
                writable,
                ..
            })) => Some((value, writable)),
            _ => None,
        };
        let (candidate, _) = match class {
            Some(class) => data(
                &self.class_proto(class)?,
                &OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor),
            )?,
            None => data(
                &self.ctx.globals().into_value(),
                &OwnedAtom::from_str(self.ctx, name)?,
            )?,
        };
        if class_id(&candidate) != CLASS_C_FUNCTION || !candidate.is_constructor() {
            return None;
        }
        // A `prototype` that cannot be re-pointed and is the intrinsic one (for the errors that
        // share the Error class: one whose prototype is Error.prototype).
        let (prototype, writable) = data(
            &candidate,
            &OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype),
        )?;
        let expected = match class {
            Some(class) => self.class_proto(class) == Some(prototype),
            None => self.proto_of(&prototype) == self.class_proto(CLASS_ERROR),
        };
        if writable || !expected {
            return None;
        }
        candidate.into_constructor()
    }

    /// Takes the realm's [`Intrinsics`] and keeps them for the context's lifetime. Called once,
    /// when the context is made and before any sandbox code runs; later calls keep the first.
    pub(crate) fn capture_intrinsics(&self) -> rquickjs::Result<()> {
        if self.ctx.userdata::<Intrinsics<'js>>().is_some() {
            return Ok(());
        }
        let intrinsics = Intrinsics {
            functions: RefCell::new(vec![None; BUILT_INS.len()]),
            constructors: RefCell::new(vec![None; CONSTRUCTORS.len()]),
        };
        self.ctx
            .store_userdata(intrinsics)
            .map_err(|_| rquickjs::Error::new_from_js("intrinsics", "stored intrinsics"))?;
        self.capture_made()
    }

    /// Takes the [`Intrinsics`] of every class the realm has made that are not taken yet: all of
    /// them when the context is made but those of the groups QuickJS makes on first use, and
    /// those of such a group when it is made (`intrinsics_made`). All or nothing: a failure
    /// keeps none of this call's, as QuickJS then undoes the group it made.
    fn capture_made(&self) -> rquickjs::Result<()> {
        let Some(intrinsics) = self.ctx.userdata::<Intrinsics<'js>>() else {
            return Ok(());
        };
        let missing = || rquickjs::Error::new_from_js("context", "a context with every built-in");
        let made = |class: Option<u32>| class.is_none_or(|class| self.class_proto(class).is_some());
        let mut functions = Vec::new();
        for (index, &(class, name, getter)) in BUILT_INS.iter().enumerate() {
            if intrinsics.functions.borrow()[index].is_none() && made(Some(class)) {
                let function = self
                    .current_native_fn(class, name, getter)
                    .ok_or_else(missing)?;
                functions.push((index, function));
            }
        }
        let mut constructors = Vec::new();
        for (index, &constructor) in CONSTRUCTORS.iter().enumerate() {
            if intrinsics.constructors.borrow()[index].is_none() && made(constructor.1) {
                let found = self.current_constructor(constructor).ok_or_else(missing)?;
                constructors.push((index, found));
            }
        }
        for (index, function) in functions {
            intrinsics.functions.borrow_mut()[index] = Some(function);
        }
        for (index, constructor) in constructors {
            intrinsics.constructors.borrow_mut()[index] = Some(constructor);
        }
        Ok(())
    }

    pub(crate) fn call_native(
        &self,
        class: u32,
        name: &str,
        getter: bool,
        this: &Value<'js>,
    ) -> Option<Value<'js>> {
        let f = self.native_fn(class, name, getter)?;
        self.call_this(&f, this)
    }

    pub(crate) fn call_this(&self, f: &Function<'js>, this: &Value<'js>) -> Option<Value<'js>> {
        match f.call::<_, Value<'js>>((This(this.clone()),)) {
            Ok(v) => Some(v),
            Err(_) => {
                self.clear_exception();
                None
            }
        }
    }

    /// Up to `limit` entries of a Map (`[key, value]` arrays) or values of a Set, read through
    /// the engine's own `entries` / `values` and iterator (see [`Intrinsics`]), so that no
    /// user-replaceable method runs. `None` when `value` is no Map or Set, or a step failed.
    pub(crate) fn collection_entries(
        &self,
        value: &Value<'js>,
        class: u32,
        limit: usize,
    ) -> Option<Vec<Value<'js>>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Some(out);
        }
        let (method, iter_class) = if class == CLASS_MAP {
            ("entries", CLASS_MAP_ITERATOR)
        } else {
            ("values", CLASS_SET_ITERATOR)
        };
        let iter = self.call_native(class, method, false, value)?;
        let next = self.native_fn(iter_class, "next", false)?;
        let done_atom = OwnedAtom::from_str(self.ctx, "done")?;
        let value_atom = OwnedAtom::from_str(self.ctx, "value")?;
        while out.len() < limit {
            let step = self.call_this(&next, &iter)?;
            let field = |atom: &OwnedAtom<'js>| match self.own_desc(&step, atom) {
                Ok(Some(PropDesc {
                    value: PropValue::Data(v),
                    ..
                })) => Some(v),
                _ => None,
            };
            if field(&done_atom).and_then(|d| d.as_bool()).unwrap_or(true) {
                break;
            }
            out.push(field(&value_atom).unwrap_or_else(|| Value::new_undefined(self.ctx.clone())));
        }
        Some(out)
    }

    pub(crate) fn array_length(&self, array: &Value<'js>) -> u64 {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Length);
        match self.own_desc(array, &atom) {
            Ok(Some(PropDesc {
                value: PropValue::Data(v),
                ..
            })) => v.as_number().map_or(0, |n| {
                if n.is_finite() && n > 0.0 {
                    n as u64
                } else {
                    0
                }
            }),
            _ => 0,
        }
    }

    /// `(byteLength, first `limit` bytes)` of an (Shared)ArrayBuffer; `None` when detached.
    pub(crate) fn array_buffer_bytes(
        &self,
        buffer: &Value<'js>,
        limit: usize,
    ) -> Option<(usize, Vec<u8>)> {
        self.array_buffer_window(buffer, 0, limit)
    }

    pub(crate) fn array_buffer_window(
        &self,
        buffer: &Value<'js>,
        offset: usize,
        len: usize,
    ) -> Option<(usize, Vec<u8>)> {
        let mut size: qjs::size_t = 0;
        // SAFETY: `buffer` is a live value; QuickJS checks its class. The returned pointer is
        // valid for `size` bytes until the next JS call, and the bytes are copied before any.
        let data = unsafe { qjs::JS_GetArrayBuffer(self.raw_ctx(), &mut size, buffer.as_raw()) };
        if data.is_null() {
            self.clear_exception();
            return None;
        }
        let size = size as usize;
        let start = offset.min(size);
        let end = offset.saturating_add(len).min(size);
        // SAFETY: `start..end` lies within the `size` bytes QuickJS reported.
        let bytes = unsafe { std::slice::from_raw_parts(data.add(start), end - start) }.to_vec();
        Some((size, bytes))
    }

    /// Own property keys as atoms; `skip_indices` drops the integer-tagged array indices right
    /// away, which keeps a million-element array from costing a million wrappers.
    pub(crate) fn own_atoms(
        &self,
        obj: &Value<'js>,
        flags: u32,
        skip_indices: bool,
    ) -> Vec<OwnedAtom<'js>> {
        let mut tab: *mut qjs::JSPropertyEnum = ptr::null_mut();
        let mut len: u32 = 0;
        // SAFETY: `obj` is a live object; on success QuickJS hands over `len` entries whose
        // atoms we take ownership of, and the table itself is released with `js_free`.
        let r = unsafe {
            qjs::JS_GetOwnPropertyNames(
                self.raw_ctx(),
                &mut tab,
                &mut len,
                obj.as_raw(),
                flags as i32,
            )
        };
        if r < 0 {
            self.clear_exception();
            return Vec::new();
        }
        let mut out = Vec::new();
        if !tab.is_null() {
            for i in 0..len as usize {
                // SAFETY: `i < len` entries were initialised by QuickJS.
                let entry = unsafe { *tab.add(i) };
                let atom = OwnedAtom {
                    ctx: self.ctx.clone(),
                    raw: entry.atom,
                };
                if !(skip_indices && atom.raw & ATOM_TAG_INT != 0) {
                    out.push(atom);
                }
            }
            // SAFETY: the table came from QuickJS' allocator and its atoms now belong to `out`.
            unsafe { qjs::js_free(self.raw_ctx(), tab as *mut c_void) };
        }
        out
    }

    /// `String(v)` for primitives; `None` for objects (converting those runs user code).
    pub(crate) fn plain_string(&self, v: &Value<'js>) -> Option<String> {
        if v.is_string() {
            js_string_units(self.ctx, v).map(|u| lossy(&u))
        } else if v.is_symbol() {
            Some(lossy(&symbol_to_string_units(self.ctx, v)))
        } else if v.is_object() {
            None
        } else {
            Some(primitive_to_string(self.ctx, v))
        }
    }

    /// `object[atom]` through its getter if it has one (this runs sandbox code): `Err` with
    /// what it threw.
    pub(crate) fn get(
        &self,
        object: &Value<'js>,
        atom: &OwnedAtom<'js>,
    ) -> Result<Value<'js>, Value<'js>> {
        // SAFETY: `object` is a live object and `atom` a live atom of this context; the result is
        // an owned value or the exception marker.
        let value = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetProperty(self.raw_ctx(), object.as_raw(), atom.raw),
            )
        };
        if value.is_exception() {
            Err(self.ctx.catch())
        } else {
            Ok(value)
        }
    }

    /// A typed array's buffer, byte offset, byte length and bytes per element; `None` when the
    /// view is out of bounds (its buffer detached or shrunk).
    pub(crate) fn typed_array_buffer(
        &self,
        view: &Value<'js>,
    ) -> Option<(Value<'js>, usize, usize, usize)> {
        let (mut offset, mut byte_length, mut bpe): (qjs::size_t, qjs::size_t, qjs::size_t) =
            (0, 0, 0);
        // SAFETY: `view` is a live value (QuickJS checks it is a typed array); the out-pointers
        // are valid locals and the result is an owned reference to the backing buffer, or the
        // exception marker, which owns nothing.
        let buffer = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_GetTypedArrayBuffer(
                    self.raw_ctx(),
                    view.as_raw(),
                    &mut offset,
                    &mut byte_length,
                    &mut bpe,
                ),
            )
        };
        if buffer.is_exception() || bpe == 0 {
            self.clear_exception();
            return None;
        }
        Some((buffer, offset as usize, byte_length as usize, bpe as usize))
    }

    /// A zeroed `ArrayBuffer` of `len` bytes, allocated by QuickJS (under `memoryLimitBytes`);
    /// `None` with the engine's exception pending.
    pub(crate) fn new_array_buffer(&self, len: usize) -> Option<Value<'js>> {
        // SAFETY: with no source QuickJS allocates and zeroes `len` bytes; the result is an
        // owned ArrayBuffer or the exception marker.
        let raw = unsafe { qjs::JS_NewArrayBufferCopy(self.raw_ctx(), ptr::null(), len as _) };
        // SAFETY: `raw` is owned and handed over.
        let buffer = unsafe { Value::from_raw(self.ctx.clone(), raw) };
        (!buffer.is_exception()).then_some(buffer)
    }

    /// Calls `f` with bytes `offset..offset + len` of an (Shared)ArrayBuffer in place; `None`
    /// when detached or shorter. `f` must not run JS (which could detach or resize it).
    pub(crate) fn with_array_buffer<R>(
        &self,
        buffer: &Value<'js>,
        (offset, len): (usize, usize),
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> Option<R> {
        let mut size: qjs::size_t = 0;
        // SAFETY: `buffer` is a live value; QuickJS checks its class. The returned pointer is
        // valid for `size` bytes until the next JS call, and `f` makes none.
        let data = unsafe { qjs::JS_GetArrayBuffer(self.raw_ctx(), &mut size, buffer.as_raw()) };
        if data.is_null() {
            self.clear_exception();
            return None;
        }
        if offset.checked_add(len)? > size as usize {
            return None;
        }
        // SAFETY: `offset..offset + len` lies within the `size` bytes QuickJS reported.
        Some(f(unsafe {
            std::slice::from_raw_parts_mut(data.add(offset), len)
        }))
    }

    /// `new Date(time)` with the engine's own constructor.
    pub(crate) fn new_date(&self, time: f64) -> Option<Value<'js>> {
        // SAFETY: plain constructor call on a live context; the result is an owned Date or the
        // exception marker.
        let date =
            unsafe { Value::from_raw(self.ctx.clone(), qjs::JS_NewDate(self.raw_ctx(), time)) };
        (!date.is_exception()).then_some(date)
    }

    /// `new <kind>Array(buffer, byte_offset, length)` with the engine's own constructor; `None`
    /// with the engine's exception pending (e.g. a RangeError for a view outside its buffer).
    pub(crate) fn new_typed_array(
        &self,
        kind: TypedArrayKind,
        buffer: &Value<'js>,
        byte_offset: usize,
        length: usize,
    ) -> Option<Value<'js>> {
        // Offsets and lengths beyond 2^53 are no valid view; the engine rejects them as such.
        let byte_offset = Value::new_number(self.ctx.clone(), byte_offset as f64);
        let length = Value::new_number(self.ctx.clone(), length as f64);
        let mut args = [buffer.as_raw(), byte_offset.as_raw(), length.as_raw()];
        // SAFETY: the three arguments are live values borrowed for the call (QuickJS duplicates
        // what it keeps); the result is an owned view or the exception marker.
        let view = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_NewTypedArray(
                    self.raw_ctx(),
                    args.len() as i32,
                    args.as_mut_ptr(),
                    quickjs_kind(kind),
                ),
            )
        };
        (!view.is_exception()).then_some(view)
    }

    /// A new error of a class QuickJS has a C constructor for, without a message; `None` with
    /// the engine's exception pending.
    pub(crate) fn new_error(&self, class: NativeError) -> Option<Value<'js>> {
        type NewError =
            unsafe extern "C" fn(*mut qjs::JSContext, *const std::ffi::c_char, ...) -> qjs::JSValue;
        let new_error: NewError = match class {
            NativeError::Error => qjs::JS_NewPlainError,
            NativeError::TypeError => qjs::JS_NewTypeError,
            NativeError::RangeError => qjs::JS_NewRangeError,
            NativeError::ReferenceError => qjs::JS_NewReferenceError,
            NativeError::SyntaxError => qjs::JS_NewSyntaxError,
            NativeError::InternalError => qjs::JS_NewInternalError,
        };
        // SAFETY: a live context and an empty, NUL-terminated format string that takes no
        // arguments; the result is an owned error or the exception marker.
        let error =
            unsafe { Value::from_raw(self.ctx.clone(), new_error(self.raw_ctx(), c"".as_ptr())) };
        (!error.is_exception()).then_some(error)
    }

    /// The line and column (1-based) of the innermost running frame of script `file`, as the
    /// first frame of that script in an `Error` made now would name them, without building a
    /// backtrace (QuickJS patch 0501); `None` when that script is not running.
    pub(crate) fn current_position(&self, file: &str) -> Option<(u32, u32)> {
        let script = OwnedAtom::from_str(self.ctx, file)?;
        let (mut line, mut column): (c_int, c_int) = (0, 0);
        // SAFETY: a live context and atom; the out-pointers are valid locals.
        let found =
            unsafe { JS_GetCurrentPosition(self.raw_ctx(), script.raw, &mut line, &mut column) };
        if !found {
            return None;
        }
        Some((u32::try_from(line).ok()?, u32::try_from(column).ok()?))
    }

    /// Freezes `value` with QuickJS's own `Object.freeze` (the global one may have been
    /// replaced by sandbox code); `false` with the engine's exception pending.
    pub(crate) fn freeze(&self, value: &Value<'js>) -> bool {
        // SAFETY: `value` is a live value of this context; the call freezes it or fails.
        unsafe { qjs::JS_FreezeObject(self.raw_ctx(), value.as_raw()) >= 0 }
    }

    /// Marks `error` uncatchable: no `catch` or `finally` in user code runs for it (quickjs-ng's
    /// flag, the same mechanism as its interrupt handler).
    pub(crate) fn set_uncatchable(&self, error: &Value<'js>) {
        // SAFETY: `error` is a live value of this context; the call only sets a flag on it.
        unsafe { qjs::JS_SetUncatchableError(self.raw_ctx(), error.as_raw()) };
    }
}

// ---------------------------------------------------------------------------------------------
// atoms

/// An atom reference owned by this module (rquickjs' `Atom` does not expose the raw atom that
/// the descriptor APIs need).
pub(crate) struct OwnedAtom<'js> {
    ctx: Ctx<'js>,
    pub(crate) raw: qjs::JSAtom,
}

impl<'js> OwnedAtom<'js> {
    pub(crate) fn predefined(ctx: &Ctx<'js>, atom: PredefinedAtom) -> Self {
        // SAFETY: predefined atoms always exist; the duplicate is released on drop.
        let raw = unsafe { qjs::JS_DupAtom(ctx.as_raw().as_ptr(), atom as qjs::JSAtom) };
        OwnedAtom {
            ctx: ctx.clone(),
            raw,
        }
    }

    pub(crate) fn from_str(ctx: &Ctx<'js>, s: &str) -> Option<Self> {
        // SAFETY: the pointer/length pair describes valid UTF-8 for the duration of the call.
        let raw =
            unsafe { qjs::JS_NewAtomLen(ctx.as_raw().as_ptr(), s.as_ptr().cast(), s.len() as _) };
        Self::checked(ctx, raw)
    }

    pub(crate) fn from_index(ctx: &Ctx<'js>, i: u32) -> Option<Self> {
        // SAFETY: plain constructor call on a live context.
        let raw = unsafe { qjs::JS_NewAtomUInt32(ctx.as_raw().as_ptr(), i) };
        Self::checked(ctx, raw)
    }

    /// For string and symbol values only, which convert without running code.
    pub(crate) fn from_value(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Self> {
        if !(v.is_string() || v.is_symbol()) {
            return None;
        }
        // SAFETY: `v` is a live string or symbol.
        let raw = unsafe { qjs::JS_ValueToAtom(ctx.as_raw().as_ptr(), v.as_raw()) };
        Self::checked(ctx, raw)
    }

    fn checked(ctx: &Ctx<'js>, raw: qjs::JSAtom) -> Option<Self> {
        if raw == 0 {
            let _ = ctx.catch();
            return None;
        }
        Some(OwnedAtom {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// The index of an integer-tagged atom (array indices up to 2^31 - 2).
    pub(crate) fn tagged_index(&self) -> Option<u64> {
        (self.raw & ATOM_TAG_INT != 0).then(|| u64::from(self.raw & !ATOM_TAG_INT))
    }

    pub(crate) fn to_value(&self) -> Option<Value<'js>> {
        // SAFETY: `raw` is a live atom; the result is an owned string/symbol (or exception).
        let v = unsafe {
            Value::from_raw(
                self.ctx.clone(),
                qjs::JS_AtomToValue(self.ctx.as_raw().as_ptr(), self.raw),
            )
        };
        if v.is_exception() {
            let _ = self.ctx.catch();
            return None;
        }
        Some(v)
    }
}

impl Drop for OwnedAtom<'_> {
    fn drop(&mut self) {
        // SAFETY: each `OwnedAtom` holds exactly one reference to `raw`.
        unsafe { qjs::JS_FreeAtom(self.ctx.as_raw().as_ptr(), self.raw) };
    }
}

// ---------------------------------------------------------------------------------------------
// the context

extern "C" {
    /// vendor/quickjs-patches/0700: what `JS_NewContext` adds after the base objects, in its
    /// order, the groups in `lazy_groups` (bits `1 << JSIntrinsicGroup`) made on first use.
    fn JS_AddStandardIntrinsics(ctx: *mut qjs::JSContext, lazy_groups: c_int) -> c_int;
    /// vendor/quickjs-patches/0700: makes the group of `class_id` now if it is still to be made.
    fn JS_MakeClassIntrinsics(ctx: *mut qjs::JSContext, class_id: qjs::JSClassID) -> c_int;
    /// vendor/quickjs-patches/0700: `func` is told when a context made a group on first use.
    fn JS_SetIntrinsicsMadeFunc(
        rt: *mut qjs::JSRuntime,
        func: Option<unsafe extern "C" fn(*mut qjs::JSContext, c_int, *mut c_void) -> c_int>,
        opaque: *mut c_void,
    );
}

/// The groups of built-ins a context makes on first use (patch 0700), by their
/// `JSIntrinsicGroup` bits: `Date`; `Map`, `Set`, `WeakMap`, `WeakSet`; the ArrayBuffers, typed
/// arrays, `DataView` and `Atomics`; `WeakRef` and `FinalizationRegistry`; `DOMException`. A
/// quarter of a fresh context that agent code rarely touches (docs/performance.md "Memory").
const LAZY_INTRINSIC_GROUPS: c_int = 0b1_1111;

/// A context with every built-in `JS_NewContext` gives, those of [`LAZY_INTRINSIC_GROUPS`] made
/// on first use; their [`Intrinsics`] are taken as they are made. `prepare` runs on the context
/// of base objects alone, before the other built-ins are added.
pub(crate) fn new_context(
    runtime: &Runtime,
    prepare: impl FnOnce(&Ctx<'_>),
) -> rquickjs::Result<Context> {
    let context = Context::base(runtime)?;
    context.with(|ctx| {
        prepare(&ctx);
        let raw = ctx.as_raw().as_ptr();
        // SAFETY: a new context of the runtime, locked by `with`; the hook is a plain function
        // that lives as long as the program.
        let added = unsafe {
            JS_SetIntrinsicsMadeFunc(
                qjs::JS_GetRuntime(raw),
                Some(intrinsics_made),
                ptr::null_mut(),
            );
            JS_AddStandardIntrinsics(raw, LAZY_INTRINSIC_GROUPS)
        };
        if added < 0 {
            return Err(rquickjs::Error::Allocation);
        }
        Ok(())
    })?;
    Ok(context)
}

/// QuickJS made a group of built-ins on first use (patch 0700): takes its [`Intrinsics`] before
/// anything of it reaches sandbox code. A failure (no memory for the atoms) fails the access
/// that made the group, which stays to be made.
unsafe extern "C" fn intrinsics_made(
    ctx: *mut qjs::JSContext,
    _group: c_int,
    _opaque: *mut c_void,
) -> c_int {
    let Some(raw) = NonNull::new(ctx) else {
        return -1;
    };
    // SAFETY: QuickJS calls this on the thread that runs the context, with the context alive and
    // its runtime locked by the code that caused the group to be made.
    let ctx = unsafe { Ctx::from_raw(raw) };
    let captured = catch_unwind(AssertUnwindSafe(|| Reflect::new(&ctx).capture_made()));
    if matches!(captured, Ok(Ok(()))) {
        return 0;
    }
    // SAFETY: a live context (above); reading the built-ins can only have failed for memory.
    unsafe { qjs::JS_ThrowOutOfMemory(raw.as_ptr()) };
    -1
}

// ---------------------------------------------------------------------------------------------
// the heap

extern "C" {
    /// vendor/quickjs-patches/0101: the allocations `rt`'s heap has refused so far.
    fn JS_GetRefusedAllocationCount(rt: *mut qjs::JSRuntime) -> u64;
}

/// How many allocations the heap of `ctx`'s runtime has refused so far (at `memoryLimitBytes`,
/// or because the system had no memory). An operation that fails after this count moved failed
/// for lack of memory, whatever it threw: QuickJS throws `null` when it cannot even allocate the
/// error, and reports some refusals as other errors (a parser that cannot grow a buffer throws a
/// `SyntaxError`); a copy into the sandbox fails with whatever part it could not build.
pub(crate) fn refused_allocations(ctx: &Ctx<'_>) -> u64 {
    // SAFETY: the context is alive for `ctx`'s lifetime, and so is its runtime; the call only
    // reads a counter.
    unsafe { JS_GetRefusedAllocationCount(qjs::JS_GetRuntime(ctx.as_raw().as_ptr())) }
}

// ---------------------------------------------------------------------------------------------
// value helpers

pub(crate) fn class_id(v: &Value<'_>) -> u32 {
    // SAFETY: JS_GetClassID only inspects the tag and, for objects, the header of a live object.
    unsafe { qjs::JS_GetClassID(v.as_raw()) }
}

extern "C" {
    /// vendor/quickjs-patches/0501: the line and column of the innermost running frame of
    /// script `filename` (of any script for `JS_ATOM_NULL`); `false` when none runs.
    fn JS_GetCurrentPosition(
        ctx: *mut qjs::JSContext,
        filename: qjs::JSAtom,
        pline: *mut c_int,
        pcol: *mut c_int,
    ) -> bool;

    /// vendor/quickjs-patches/0500: the characters of string `val` where QuickJS keeps them, and
    /// the string holding them (an owned reference), or the exception marker.
    fn JS_GetStringBuffer(
        ctx: *mut qjs::JSContext,
        val: qjs::JSValue,
        pbuf: *mut *const c_void,
        plen: *mut u32,
        pwide: *mut c_int,
    ) -> qjs::JSValue;
}

/// A string's characters as QuickJS keeps them.
pub(crate) enum Chars<'a> {
    /// One byte per character, U+0000 to U+00FF.
    Latin1(&'a [u8]),
    /// UTF-16 code units, lone surrogates included.
    Utf16(&'a [u16]),
}

impl Chars<'_> {
    /// The length in UTF-16 code units (what JS calls the string's `length`).
    pub(crate) fn len(&self) -> usize {
        match self {
            Chars::Latin1(bytes) => bytes.len(),
            Chars::Utf16(units) => units.len(),
        }
    }

    /// The text as UTF-8, exactly: `None` for a lone surrogate, which has no UTF-8 form.
    pub(crate) fn to_string_exact(&self) -> Option<String> {
        match self {
            // ASCII is its own UTF-8: copied as it is.
            Chars::Latin1(bytes) if bytes.is_ascii() => {
                std::str::from_utf8(bytes).ok().map(Into::into)
            }
            Chars::Latin1(_) => Some(self.to_string_lossy()),
            Chars::Utf16(units) => String::from_utf16(units).ok(),
        }
    }

    /// The text as UTF-8; lone surrogates, which have no UTF-8 form, become U+FFFD.
    pub(crate) fn to_string_lossy(&self) -> String {
        match self {
            Chars::Latin1(bytes) => bytes.iter().map(|&byte| char::from(byte)).collect(),
            Chars::Utf16(units) => String::from_utf16_lossy(units),
        }
    }
}

/// Calls `read` with the characters of string `v`, read in place: nothing is copied into the
/// QuickJS heap, so the memory limit cannot make a string unreadable (a rope is first made
/// flat, which can fail for lack of memory). `None` for anything else than a string, or when
/// that flattening failed.
pub(crate) fn with_chars<'js, R>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    read: impl FnOnce(Chars<'_>) -> R,
) -> Option<R> {
    if !v.is_string() {
        return None;
    }
    let (mut buf, mut len, mut wide): (*const c_void, u32, c_int) = (ptr::null(), 0, 0);
    // SAFETY: `v` is a live string of this context; the out-pointers are valid locals. The
    // result is an owned reference to the string that holds the characters (or the exception
    // marker, which owns nothing), kept alive in `holder` while they are read.
    let holder = unsafe {
        Value::from_raw(
            ctx.clone(),
            JS_GetStringBuffer(
                ctx.as_raw().as_ptr(),
                v.as_raw(),
                &mut buf,
                &mut len,
                &mut wide,
            ),
        )
    };
    if holder.is_exception() || (buf.is_null() && len > 0) {
        let _ = ctx.catch();
        return None;
    }
    let len = len as usize;
    // SAFETY: QuickJS reported `len` characters of the given width at `buf`, inside `holder`,
    // which stays alive (and unchanged: no JS code runs) until `read` returns.
    let chars = unsafe {
        if len == 0 {
            Chars::Latin1(&[])
        } else if wide != 0 {
            Chars::Utf16(std::slice::from_raw_parts(buf.cast::<u16>(), len))
        } else {
            Chars::Latin1(std::slice::from_raw_parts(buf.cast::<u8>(), len))
        }
    };
    let out = read(chars);
    drop(holder);
    Some(out)
}

/// The UTF-16 code units of a string value (lone surrogates included).
pub(crate) fn js_string_units<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u16>> {
    with_chars(ctx, v, |chars| match chars {
        Chars::Latin1(bytes) => bytes.iter().map(|&byte| u16::from(byte)).collect(),
        Chars::Utf16(units) => units.to_vec(),
    })
}

/// `Symbol.prototype.toString`: `Symbol(description)`.
pub(crate) fn symbol_to_string_units<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Vec<u16> {
    let description = v
        .as_symbol()
        .and_then(|s| s.description().ok())
        .and_then(|d| js_string_units(ctx, &d))
        .unwrap_or_default();
    let mut out: Vec<u16> = "Symbol(".encode_utf16().collect();
    out.extend(description);
    out.push(u16::from(b')'));
    out
}

/// `String(v)` for a primitive, which never runs user code.
pub(crate) fn primitive_to_string<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    match v.type_of() {
        Type::Int | Type::Float => number_to_js_string(v.as_number().unwrap_or(f64::NAN)),
        Type::Bool => if v.as_bool().unwrap_or(false) {
            "true"
        } else {
            "false"
        }
        .into(),
        Type::Null => "null".into(),
        Type::Undefined | Type::Uninitialized => "undefined".into(),
        Type::String => lossy(&js_string_units(ctx, v).unwrap_or_default()),
        Type::Symbol => lossy(&symbol_to_string_units(ctx, v)),
        Type::BigInt => match v.get::<Coerced<rquickjs::String>>() {
            Ok(s) => lossy(&js_string_units(ctx, s.0.as_value()).unwrap_or_default()),
            Err(_) => {
                let _ = ctx.catch();
                "0".into()
            }
        },
        _ => String::new(),
    }
}

pub(crate) fn lossy(units: &[u16]) -> String {
    String::from_utf16_lossy(units)
}

/// ECMAScript `Number::toString(10)`.
pub(crate) fn number_to_js_string(n: f64) -> String {
    ryu_js::Buffer::new().format(n).to_string()
}

/// The error classes QuickJS has a C constructor for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NativeError {
    Error,
    TypeError,
    RangeError,
    ReferenceError,
    SyntaxError,
    InternalError,
}

/// The kind of a typed array; `None` for anything else, and for `Float16Array`, which
/// structured clone does not know.
pub(crate) fn typed_array_kind(value: &Value<'_>) -> Option<TypedArrayKind> {
    // SAFETY: only reads the class id of a live value.
    let raw = unsafe { qjs::JS_GetTypedArrayType(value.as_raw()) };
    TypedArrayKind::ALL
        .into_iter()
        .find(|&kind| i64::from(quickjs_kind(kind)) == i64::from(raw))
}

fn quickjs_kind(kind: TypedArrayKind) -> qjs::JSTypedArrayEnum {
    match kind {
        TypedArrayKind::Int8 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT8,
        TypedArrayKind::Uint8 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8,
        TypedArrayKind::Uint8Clamped => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8C,
        TypedArrayKind::Int16 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT16,
        TypedArrayKind::Uint16 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT16,
        TypedArrayKind::Int32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT32,
        TypedArrayKind::Uint32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT32,
        TypedArrayKind::Float32 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT32,
        TypedArrayKind::Float64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT64,
        TypedArrayKind::BigInt64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_INT64,
        TypedArrayKind::BigUint64 => qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_UINT64,
    }
}

// ---------------------------------------------------------------------------------------------
// scripts and the global lexical environment (QuickJS patches 0201–0203)

// What the patches add to QuickJS's C API is not in rquickjs-sys's bindings, which are generated
// from the unpatched header: declared here, next to their one use.

/// `JS_EVAL_FLAG_TOP_LEVEL_RETURN` of `vendor/quickjs-patches/0201-top-level-return.patch`.
const JS_EVAL_FLAG_TOP_LEVEL_RETURN: u32 = 1 << 16;
/// `JS_EVAL_FLAG_REPL` of `vendor/quickjs-patches/0202-repl-lexical-redeclaration.patch`.
const JS_EVAL_FLAG_REPL: u32 = 1 << 17;

extern "C" {
    /// `vendor/quickjs-patches/0203-global-lexical-lookup.patch`.
    fn JS_HasGlobalLexical(ctx: *mut qjs::JSContext, prop: qjs::JSAtom) -> bool;
}

/// How a global script is evaluated.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ScriptFlags {
    /// Top-level `await`: the evaluation is a promise (`JS_EVAL_FLAG_ASYNC`).
    pub asynchronous: bool,
    /// Top-level `return` (with `asynchronous`; patch 0201).
    pub top_level_return: bool,
    /// A REPL input: may declare again an earlier script's `let`/`class` or `const` (patch 0202).
    pub repl: bool,
    /// Compile only: check that the script compiles, run nothing.
    pub compile_only: bool,
}

/// Evaluates `code` as a global script named `name` (so its stack frames say so). The value is
/// the script's completion value, its promise when `asynchronous`, or `undefined` when
/// `compile_only`; `Err(Exception)` leaves the exception in `ctx`.
pub(crate) fn eval_script<'js>(
    ctx: &Ctx<'js>,
    code: &str,
    name: &str,
    flags: ScriptFlags,
) -> rquickjs::Result<Value<'js>> {
    let bit = |on: bool, flag: u32| if on { flag } else { 0 };
    let flags = qjs::JS_EVAL_TYPE_GLOBAL
        | qjs::JS_EVAL_FLAG_BACKTRACE_BARRIER
        | bit(flags.asynchronous, qjs::JS_EVAL_FLAG_ASYNC)
        | bit(flags.top_level_return, JS_EVAL_FLAG_TOP_LEVEL_RETURN)
        | bit(flags.repl, JS_EVAL_FLAG_REPL)
        | bit(flags.compile_only, qjs::JS_EVAL_FLAG_COMPILE_ONLY);
    let source = CString::new(code)?;
    let name = CString::new(name)?;
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is this live context, on its thread; `source` is NUL-terminated as QuickJS
    // requires (`len` excludes the terminator); the result is owned and handed to `Value`, which
    // frees it (a compiled function included).
    let value = unsafe {
        Value::from_raw(
            ctx.clone(),
            qjs::JS_Eval(
                raw,
                source.as_ptr(),
                code.len() as _,
                name.as_ptr(),
                flags as c_int,
            ),
        )
    };
    if value.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    if (flags & qjs::JS_EVAL_FLAG_COMPILE_ONLY) != 0 {
        return Ok(Value::new_undefined(ctx.clone()));
    }
    Ok(value)
}

/// Whether the context has a global lexical binding (a top-level `let`, `const` or `class` of
/// a script) named `name`: it hides the global object's property of that name from every
/// script.
pub(crate) fn has_global_lexical(ctx: &Ctx<'_>, name: &str) -> bool {
    OwnedAtom::from_str(ctx, name).is_some_and(|atom| {
        // SAFETY: a lookup in this live context's global lexical environment; reads only.
        unsafe { JS_HasGlobalLexical(ctx.as_raw().as_ptr(), atom.raw) }
    })
}
