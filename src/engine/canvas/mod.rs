//! The Canvas 2D API in the sandbox: `getCanvas(width, height)`, `new OffscreenCanvas(w, h)`,
//! `ImageData`, and the 2D context with its gradients, as rquickjs classes over the renderer in
//! [`crate::canvas`] (which knows nothing of QuickJS).
//!
//! - **Limits.** Pixels are reserved from the executor's heap limit: a canvas (or clip mask)
//!   lowers QuickJS's `memoryLimitBytes` by its size for as long as it lives, so pixels and JS
//!   values share one budget. Every drawing call first checks the run's deadline and abort
//!   (QuickJS's interrupt handler only runs between bytecodes, and a run of costly native calls
//!   would otherwise pass it by many calls); long texts check it while they are laid out.
//! - **Images.** A canvas whose pixels change during a run is listed; when the run succeeds,
//!   each listed canvas is encoded as PNG, in the order the canvases were created. Runs that
//!   draw nothing pay nothing.
//! - **Unsupported members** of the Canvas API (shadows, filters, patterns, `Path2D`, hit
//!   testing) exist and throw a `TypeError` naming the member, so agent code fails at the line
//!   that needs them rather than drawing something else silently; setting such a property to
//!   the value that disables it (`shadowBlur = 0`) is allowed.
//! - Argument conversions (which may call user `valueOf`/`toString`) happen before a canvas is
//!   borrowed, and every borrow is checked, so re-entrant user code gets a `TypeError`, never a
//!   panic.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rquickjs::class::{Trace, Tracer};
use rquickjs::function::{Opt, Rest, This};
use rquickjs::object::{Accessor, Property};
use rquickjs::{
    qjs, ArrayBuffer, Class, Coerced, Constructor, Ctx, Exception, Function, JsLifetime, Object,
    Result, Value,
};

use super::globals::{named_error, throw_stop};
use super::heap::HeapMeter;
use super::state::RunState;
use crate::canvas::{
    data_url, Canvas, CanvasError, CanvasErrorKind, CompositeOp, CornerRadii, Gradient, Image,
    ImageDataRect, OverBudget, PixelBudget, Rgba, Style, TextAlign, TextBaseline,
};

/// What the canvas bindings share: the run state (deadline), the pixel budget, the size cap, and
/// the canvases drawn during the current run.
pub struct CanvasEnv {
    state: Rc<RunState>,
    budget: Rc<dyn PixelBudget>,
    max_side: u32,
    next_serial: Cell<u64>,
    drawn: RefCell<Vec<Rc<Surface>>>,
    /// Whether the 2D context's prototype has its unsupported members yet.
    stubs_installed: Cell<bool>,
    /// Which [`LazyGlobal`]s became data properties.
    settled: [Cell<bool>; 3],
}

/// One canvas, shared by its JS canvas object and its context.
pub struct Surface {
    serial: u64,
    canvas: RefCell<Canvas>,
    /// Whether it is in [`CanvasEnv::drawn`].
    listed: Cell<bool>,
}

/// The executor's side of the canvases: the images of a run.
pub struct CanvasHost {
    env: Rc<CanvasEnv>,
}

impl CanvasHost {
    /// The canvases drawn since the last call, as PNG images in creation order; none when the
    /// run failed (its drawing stays on the canvases, but no image is encoded). An `Err` says
    /// why a canvas could not be encoded.
    pub fn take_images(&self, succeeded: bool) -> std::result::Result<Vec<Image>, String> {
        let drawn = std::mem::take(&mut *self.env.drawn.borrow_mut());
        if drawn.is_empty() {
            return Ok(Vec::new());
        }
        for surface in &drawn {
            surface.listed.set(false);
        }
        if !succeeded {
            return Ok(Vec::new());
        }
        let mut drawn = drawn;
        drawn.sort_by_key(|surface| surface.serial);
        drawn
            .iter()
            .map(|surface| {
                let canvas = surface
                    .canvas
                    .try_borrow()
                    .map_err(|_| "a canvas was still in use at the end of the run".to_owned())?;
                canvas
                    .to_image()
                    .map_err(|error| format!("canvas {}: {error}", surface.serial))
            })
            .collect()
    }
}

/// The pixel budget of an executor: what its QuickJS heap does not use of `memoryLimitBytes`.
/// Reserving lowers QuickJS's own limit by the same amount, so the heap cannot grow into pixels.
struct HeapBudget {
    runtime: *mut qjs::JSRuntime,
    limit: usize,
    reserved: Cell<usize>,
    heap: Rc<HeapMeter>,
}

impl HeapBudget {
    fn apply(&self) {
        // SAFETY: the runtime outlives every canvas: canvases are owned by its objects (freed
        // while it is torn down, before it is gone) and by the engine thread's `CanvasHost`,
        // dropped before the runtime. Setting the limit only writes a field.
        unsafe {
            qjs::JS_SetMemoryLimit(
                self.runtime,
                u64::try_from(self.limit.saturating_sub(self.reserved.get()).max(1))
                    .unwrap_or(u64::MAX),
            );
        };
    }
}

impl HeapBudget {
    fn available(&self) -> usize {
        let used = self.heap.held().saturating_add(self.reserved.get());
        self.limit.saturating_sub(used)
    }
}

impl PixelBudget for HeapBudget {
    fn reserve(&self, bytes: usize) -> std::result::Result<(), OverBudget> {
        if bytes > self.available() {
            // Canvases dropped by the code may still wait for the cycle collector (a canvas and
            // its context refer to each other): collect before refusing.
            // SAFETY: see `apply`; QuickJS allows a collection whenever it could allocate, and
            // what it finalizes only releases budget (no borrow is held across this call).
            unsafe { qjs::JS_RunGC(self.runtime) };
        }
        let available = self.available();
        if bytes > available {
            return Err(OverBudget {
                requested: bytes,
                available,
            });
        }
        self.reserved.set(self.reserved.get() + bytes);
        self.apply();
        Ok(())
    }

    fn release(&self, bytes: usize) {
        self.reserved.set(self.reserved.get().saturating_sub(bytes));
        self.apply();
    }
}

/// Installs `getCanvas`, `OffscreenCanvas` and `ImageData` in `ctx`'s global object. The 2D
/// context's prototype (most of the API) is only built when a first context is made.
pub fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    heap: &Rc<HeapMeter>,
    max_side: u32,
    memory_limit: usize,
) -> Result<CanvasHost> {
    // SAFETY: `ctx` is a live context; the call only reads its runtime pointer.
    let runtime = unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
    let budget: Rc<dyn PixelBudget> = Rc::new(HeapBudget {
        runtime,
        limit: memory_limit,
        reserved: Cell::new(0),
        heap: Rc::clone(heap),
    });
    let env = Rc::new(CanvasEnv {
        state: Rc::clone(state),
        budget,
        max_side,
        next_serial: Cell::new(0),
        drawn: RefCell::new(Vec::new()),
        stubs_installed: Cell::new(false),
        settled: Default::default(),
    });
    let for_get = Rc::clone(&env);
    let get_canvas = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, width: Coerced<f64>, height: Coerced<f64>| {
            // The class's constructor, so that canvases inspect as `OffscreenCanvas {}`.
            settle_global(&ctx, &for_get, LazyGlobal::OffscreenCanvas, None)?;
            JsCanvas::create(&ctx, &for_get, width.0, height.0)
        },
    )?
    .with_name("getCanvas")?;
    ctx.globals().prop(
        "getCanvas",
        Property::from(get_canvas).writable().configurable(),
    )?;
    for global in LazyGlobal::ALL {
        let (for_get, for_set) = (Rc::clone(&env), Rc::clone(&env));
        let get = move |ctx: Ctx<'js>| -> Result<Value<'js>> {
            settle_global(&ctx, &for_get, global, None)?;
            ctx.globals().get(global.name())
        };
        let set = move |ctx: Ctx<'js>, value: Value<'js>| -> Result<()> {
            settle_global(&ctx, &for_set, global, Some(value))
        };
        ctx.globals()
            .prop(global.name(), Accessor::new(get, set).configurable())?;
    }
    Ok(CanvasHost { env })
}

/// The canvas globals besides `getCanvas`, defined lazily: each starts as an accessor that, on
/// first use, becomes a plain writable global (as in browsers) holding the real constructor,
/// or whatever the code assigned. Building the constructors (and their prototypes) at context
/// creation would cost every executor, drawing or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LazyGlobal {
    OffscreenCanvas,
    ImageData,
    Path2D,
}

impl LazyGlobal {
    const ALL: [LazyGlobal; 3] = [Self::OffscreenCanvas, Self::ImageData, Self::Path2D];

    fn name(self) -> &'static str {
        match self {
            Self::OffscreenCanvas => "OffscreenCanvas",
            Self::ImageData => "ImageData",
            Self::Path2D => "Path2D",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Turns `global` into a data property holding `value`, or its constructor, unless that
/// happened already.
fn settle_global<'js>(
    ctx: &Ctx<'js>,
    env: &Rc<CanvasEnv>,
    global: LazyGlobal,
    value: Option<Value<'js>>,
) -> Result<()> {
    let settled = &env.settled[global.index()];
    if settled.get() && value.is_none() {
        return Ok(());
    }
    let value = match value {
        Some(value) => value,
        None => match global {
            LazyGlobal::OffscreenCanvas => {
                let env = Rc::clone(env);
                Constructor::new_class::<JsCanvas, _, _>(
                    ctx.clone(),
                    move |ctx: Ctx<'js>, width: Coerced<f64>, height: Coerced<f64>| {
                        JsCanvas::create(&ctx, &env, width.0, height.0)
                    },
                )?
                .into_value()
            }
            LazyGlobal::ImageData => {
                let env = Rc::clone(env);
                Constructor::new_class::<JsImageData, _, _>(
                    ctx.clone(),
                    move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                        JsImageData::construct(&ctx, &env, &args.0)
                    },
                )?
                .into_value()
            }
            LazyGlobal::Path2D => Function::new(ctx.clone(), |ctx: Ctx<'js>| -> Result<()> {
                Err(unsupported(
                    &ctx,
                    "Path2D",
                    "build the path on the context with beginPath(), moveTo(), lineTo() …",
                ))
            })?
            .with_name("Path2D")?
            .with_constructor(true)
            .into_value(),
        },
    };
    ctx.globals().prop(
        global.name(),
        Property::from(value).writable().configurable(),
    )?;
    settled.set(true);
    Ok(())
}

/// The `TypeError` for an API member this canvas does not implement.
fn unsupported(ctx: &Ctx<'_>, member: &str, instead: &str) -> rquickjs::Error {
    Exception::throw_type(
        ctx,
        &format!("{member} is not supported by this sandbox's canvas; {instead}"),
    )
}

/// Throws `error` into the sandbox as the JS error its kind says.
fn throw(ctx: &Ctx<'_>, error: CanvasError) -> rquickjs::Error {
    match error.kind {
        CanvasErrorKind::Type => Exception::throw_type(ctx, &error.message),
        CanvasErrorKind::Range => Exception::throw_range(ctx, &error.message),
        CanvasErrorKind::Limit(option) => {
            let _ = Exception::throw_range(ctx, &error.message);
            let thrown = ctx.catch();
            if let Some(object) = thrown.as_object() {
                let _ = object.set(LIMIT_PROPERTY, option);
            }
            ctx.throw(thrown)
        }
        CanvasErrorKind::InvalidState => {
            match named_error(ctx, "InvalidStateError", &error.message) {
                Ok(object) => ctx.throw(object.into_value()),
                Err(error) => error,
            }
        }
        CanvasErrorKind::Interrupted => throw_stop(ctx),
    }
}

/// The property naming the executor option behind a canvas `RangeError`.
const LIMIT_PROPERTY: &str = "limit";

/// The option a canvas limit error names (`maxCanvasSize`, `memoryLimitBytes`), if `thrown` is
/// one: the run then fails with `details.limit`.
pub fn limit_of<'js>(thrown: &Value<'js>) -> Option<&'static str> {
    let error = thrown.as_exception()?;
    let limit: String = error.get(LIMIT_PROPERTY).ok()?;
    ["maxCanvasSize", "memoryLimitBytes"]
        .into_iter()
        .find(|option| *option == limit)
}

impl CanvasEnv {
    /// Throws the uncatchable stop if the run must end (deadline, abort, shutdown).
    fn check_deadline(&self, ctx: &Ctx<'_>) -> Result<()> {
        if self.state.should_interrupt() {
            return Err(throw_stop(ctx));
        }
        Ok(())
    }

    /// Lists `surface` among the canvases drawn in this run.
    fn note_drawn(&self, surface: &Rc<Surface>) {
        if !surface.listed.replace(true) {
            self.drawn.borrow_mut().push(Rc::clone(surface));
        }
    }

    fn interrupt(&self) -> Rc<dyn Fn() -> bool> {
        let state = Rc::clone(&self.state);
        Rc::new(move || state.should_interrupt())
    }
}

/// Borrows the canvas of `surface` for a change, converting a busy canvas (re-entered from a
/// user callback) into a `TypeError`.
fn with_canvas<'js, R>(
    ctx: &Ctx<'js>,
    surface: &Surface,
    f: impl FnOnce(&mut Canvas) -> std::result::Result<R, CanvasError>,
) -> Result<R> {
    let mut canvas = surface
        .canvas
        .try_borrow_mut()
        .map_err(|_| Exception::throw_type(ctx, "the canvas is busy (re-entered while drawing)"))?;
    f(&mut canvas).map_err(|error| throw(ctx, error))
}

// --- OffscreenCanvas ---------------------------------------------------------------------

/// A canvas (`getCanvas()` or `new OffscreenCanvas()`).
#[derive(JsLifetime)]
#[rquickjs::class(rename = "OffscreenCanvas")]
pub struct JsCanvas<'js> {
    surface: Rc<Surface>,
    env: Rc<CanvasEnv>,
    context: RefCell<Option<Class<'js, JsContext2d<'js>>>>,
}

impl<'js> Trace<'js> for JsCanvas<'js> {
    fn trace<'a>(&self, tracer: Tracer<'a, 'js>) {
        if let Ok(context) = self.context.try_borrow() {
            context.trace(tracer);
        }
    }
}

impl<'js> JsCanvas<'js> {
    fn create(
        ctx: &Ctx<'js>,
        env: &Rc<CanvasEnv>,
        width: f64,
        height: f64,
    ) -> Result<Class<'js, Self>> {
        let canvas = Canvas::new(
            width,
            height,
            env.max_side,
            Rc::clone(&env.budget),
            env.interrupt(),
        )
        .map_err(|error| throw(ctx, error))?;
        let serial = env.next_serial.get();
        env.next_serial.set(serial + 1);
        Class::instance(
            ctx.clone(),
            JsCanvas {
                surface: Rc::new(Surface {
                    serial,
                    canvas: RefCell::new(canvas),
                    listed: Cell::new(false),
                }),
                env: Rc::clone(env),
                context: RefCell::new(None),
            },
        )
    }

    fn size(&self) -> (u32, u32) {
        self.surface
            .canvas
            .try_borrow()
            .map(|canvas| (canvas.width(), canvas.height()))
            .unwrap_or((0, 0))
    }

    fn resize(&self, ctx: &Ctx<'js>, width: Option<f64>, height: Option<f64>) -> Result<()> {
        let (w, h) = self.size();
        let (w, h) = (
            width.unwrap_or(f64::from(w)),
            height.unwrap_or(f64::from(h)),
        );
        with_canvas(ctx, &self.surface, |canvas| canvas.resize(w, h))?;
        self.env.note_drawn(&self.surface);
        Ok(())
    }
}

#[rquickjs::methods]
impl<'js> JsCanvas<'js> {
    #[qjs(get)]
    pub fn width(&self) -> u32 {
        self.size().0
    }

    /// Setting it clears the canvas and resets its context, as in browsers.
    #[qjs(set, rename = "width")]
    pub fn set_width(&self, ctx: Ctx<'js>, width: Coerced<f64>) -> Result<()> {
        self.resize(&ctx, Some(width.0.trunc()), None)
    }

    #[qjs(get)]
    pub fn height(&self) -> u32 {
        self.size().1
    }

    #[qjs(set, rename = "height")]
    pub fn set_height(&self, ctx: Ctx<'js>, height: Coerced<f64>) -> Result<()> {
        self.resize(&ctx, None, Some(height.0.trunc()))
    }

    /// `getContext('2d')`: the same context object on every call.
    #[qjs(rename = "getContext")]
    pub fn get_context(
        this: This<Class<'js, Self>>,
        ctx: Ctx<'js>,
        kind: Coerced<String>,
        _options: Opt<Value<'js>>,
    ) -> Result<Class<'js, JsContext2d<'js>>> {
        if kind.0 != "2d" {
            return Err(Exception::throw_type(
                &ctx,
                &format!(
                    "getContext('{}') is not supported by this sandbox's canvas; use getContext('2d')",
                    kind.0
                ),
            ));
        }
        let (surface, env) = {
            let canvas = this.0.try_borrow()?;
            if let Some(context) = canvas.context.try_borrow().ok().and_then(|c| c.clone()) {
                return Ok(context);
            }
            (Rc::clone(&canvas.surface), Rc::clone(&canvas.env))
        };
        if !env.stubs_installed.get() {
            install_stubs(&ctx)?;
            env.stubs_installed.set(true);
        }
        let context = Class::instance(
            ctx.clone(),
            JsContext2d {
                canvas: this.0.clone(),
                surface,
                env,
            },
        )?;
        let canvas = this.0.try_borrow()?;
        if let Ok(mut slot) = canvas.context.try_borrow_mut() {
            *slot = Some(context.clone());
        }
        Ok(context)
    }

    /// `toDataURL(type)`: always PNG (the spec's fallback for types a canvas cannot encode).
    #[qjs(rename = "toDataURL")]
    pub fn to_data_url(
        &self,
        ctx: Ctx<'js>,
        _type: Opt<Value<'js>>,
        _quality: Opt<Value<'js>>,
    ) -> Result<String> {
        self.env.check_deadline(&ctx)?;
        let image = with_canvas(&ctx, &self.surface, |canvas| canvas.to_image())?;
        Ok(data_url(image.mime_type, &image.data))
    }

    #[qjs(rename = "convertToBlob")]
    pub fn convert_to_blob(&self, ctx: Ctx<'js>) -> Result<()> {
        Err(unsupported(
            &ctx,
            "OffscreenCanvas.convertToBlob()",
            "use canvas.toDataURL(); every canvas drawn during a run is also returned as a PNG image",
        ))
    }

    #[qjs(rename = "transferToImageBitmap")]
    pub fn transfer_to_image_bitmap(&self, ctx: Ctx<'js>) -> Result<()> {
        Err(unsupported(
            &ctx,
            "OffscreenCanvas.transferToImageBitmap()",
            "draw the canvas itself with drawImage(canvas, x, y)",
        ))
    }

    #[qjs(rename = "toBlob")]
    pub fn to_blob(&self, ctx: Ctx<'js>) -> Result<()> {
        Err(unsupported(
            &ctx,
            "canvas.toBlob()",
            "use canvas.toDataURL()",
        ))
    }
}

// --- CanvasGradient ----------------------------------------------------------------------

/// A `CanvasGradient`.
#[derive(JsLifetime)]
#[rquickjs::class(rename = "CanvasGradient")]
pub struct JsGradient {
    gradient: Rc<RefCell<Gradient>>,
}

impl<'js> Trace<'js> for JsGradient {
    fn trace<'a>(&self, _tracer: Tracer<'a, 'js>) {}
}

#[rquickjs::methods]
impl JsGradient {
    #[qjs(rename = "addColorStop")]
    pub fn add_color_stop<'js>(
        &self,
        ctx: Ctx<'js>,
        offset: Coerced<f64>,
        color: Coerced<String>,
    ) -> Result<()> {
        let mut gradient = self
            .gradient
            .try_borrow_mut()
            .map_err(|_| Exception::throw_type(&ctx, "the gradient is in use"))?;
        gradient
            .add_color_stop(offset.0, &color.0)
            .map_err(|error| throw(&ctx, error))
    }
}

// --- ImageData ---------------------------------------------------------------------------

/// An `ImageData`: `width`, `height`, and `data`, a `Uint8ClampedArray` of straight RGBA.
#[derive(JsLifetime)]
#[rquickjs::class(rename = "ImageData")]
pub struct JsImageData<'js> {
    width: u32,
    height: u32,
    data: Value<'js>,
}

impl<'js> Trace<'js> for JsImageData<'js> {
    fn trace<'a>(&self, tracer: Tracer<'a, 'js>) {
        self.data.trace(tracer);
    }
}

/// A `Uint8ClampedArray` holding a copy of `bytes`, allocated in the QuickJS heap (so it counts
/// against the heap limit like any array).
fn clamped_array<'js>(ctx: &Ctx<'js>, bytes: &[u8]) -> Result<Value<'js>> {
    let buffer = ArrayBuffer::new_copy(ctx.clone(), bytes)?.into_value();
    let mut args = [buffer.as_raw()];
    // SAFETY: the argument is a live ArrayBuffer borrowed for the call; the result is an owned
    // view or the exception marker.
    let view = unsafe {
        Value::from_raw(
            ctx.clone(),
            qjs::JS_NewTypedArray(
                ctx.as_raw().as_ptr(),
                1,
                args.as_mut_ptr(),
                qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8C,
            ),
        )
    };
    if view.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Ok(view)
}

/// The bytes a `Uint8ClampedArray` views, copied out; `None` for anything else.
fn clamped_bytes(ctx: &Ctx<'_>, view: &Value<'_>) -> Option<Vec<u8>> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `view` is a live value; the call only reads its class.
    let kind = unsafe { qjs::JS_GetTypedArrayType(view.as_raw()) };
    if kind != qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8C as i32 {
        return None;
    }
    let (mut offset, mut length, mut element) = (0, 0, 0);
    // SAFETY: `view` is a typed array of this context; the result is an owned buffer or the
    // exception marker (a detached buffer).
    let buffer = unsafe {
        Value::from_raw(
            ctx.clone(),
            qjs::JS_GetTypedArrayBuffer(raw, view.as_raw(), &mut offset, &mut length, &mut element),
        )
    };
    if buffer.is_exception() {
        let _ = ctx.catch();
        return None;
    }
    let (Ok(offset), Ok(length)) = (usize::try_from(offset), usize::try_from(length)) else {
        return None;
    };
    let mut size = 0;
    // SAFETY: `buffer` is a live ArrayBuffer; the pointer is valid for `size` bytes until the
    // buffer is detached or freed, which cannot happen before the copy below (no JS runs).
    let data = unsafe { qjs::JS_GetArrayBuffer(raw, &mut size, buffer.as_raw()) };
    if data.is_null() || offset.checked_add(length)? > usize::try_from(size).ok()? {
        let _ = ctx.catch();
        return None;
    }
    // SAFETY: checked to lie inside the buffer.
    Some(unsafe { std::slice::from_raw_parts(data.add(offset), length) }.to_vec())
}

impl<'js> JsImageData<'js> {
    fn new(ctx: &Ctx<'js>, rect: ImageDataRect, bytes: &[u8]) -> Result<Class<'js, Self>> {
        let data = clamped_array(ctx, bytes)?;
        Class::instance(
            ctx.clone(),
            JsImageData {
                width: rect.width,
                height: rect.height,
                data,
            },
        )
    }

    /// `new ImageData(width, height)` or `new ImageData(data, width, height?)`.
    fn construct(ctx: &Ctx<'js>, env: &CanvasEnv, args: &[Value<'js>]) -> Result<Class<'js, Self>> {
        let number = |value: Option<&Value<'js>>| -> Result<f64> {
            match value {
                Some(value) => Ok(value.get::<Coerced<f64>>()?.0),
                None => Err(Exception::throw_type(
                    ctx,
                    "ImageData(): width and height are required",
                )),
            }
        };
        let whole = |value: f64| -> i64 {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "saturating, as the DOM's `unsigned long` checks below refuse such sizes"
            )]
            let value = value.trunc() as i64;
            value
        };
        match args.first() {
            Some(first) if first.is_object() => {
                let Some(bytes) = clamped_bytes(ctx, first) else {
                    return Err(Exception::throw_type(
                        ctx,
                        "ImageData(): the data must be a Uint8ClampedArray",
                    ));
                };
                let width = whole(number(args.get(1))?);
                let pixels = bytes.len() / 4;
                if bytes.is_empty()
                    || bytes.len() % 4 != 0
                    || width <= 0
                    || pixels % usize::try_from(width).unwrap_or(usize::MAX) != 0
                {
                    return Err(Exception::throw_range(
                        ctx,
                        "ImageData(): the data length must be a non-zero multiple of 4 × width",
                    ));
                }
                let rows = i64::try_from(pixels).unwrap_or(i64::MAX) / width;
                let height = match args.get(2) {
                    Some(height) => whole(height.get::<Coerced<f64>>()?.0),
                    None => rows,
                };
                if height != rows {
                    return Err(Exception::throw_range(
                        ctx,
                        "ImageData(): the data length does not match width × height × 4",
                    ));
                }
                let rect = ImageDataRect::new(0, 0, width, height, env.max_side)
                    .map_err(|error| throw(ctx, error))?;
                Class::instance(
                    ctx.clone(),
                    JsImageData {
                        width: rect.width,
                        height: rect.height,
                        data: first.clone(),
                    },
                )
            }
            _ => {
                let (w, h) = (whole(number(args.first())?), whole(number(args.get(1))?));
                if w <= 0 || h <= 0 {
                    return Err(Exception::throw_range(
                        ctx,
                        "ImageData(): width and height must be positive",
                    ));
                }
                let rect = ImageDataRect::new(0, 0, w, h, env.max_side)
                    .map_err(|error| throw(ctx, error))?;
                JsImageData::new(ctx, rect, &vec![0; rect.bytes()])
            }
        }
    }
}

#[rquickjs::methods]
impl<'js> JsImageData<'js> {
    #[qjs(get)]
    pub fn width(&self) -> u32 {
        self.width
    }

    #[qjs(get)]
    pub fn height(&self) -> u32 {
        self.height
    }

    #[qjs(get)]
    pub fn data(&self) -> Value<'js> {
        self.data.clone()
    }

    #[qjs(get, rename = "colorSpace")]
    pub fn color_space(&self) -> &'static str {
        "srgb"
    }
}

// --- CanvasRenderingContext2D ------------------------------------------------------------

/// The 2D context of a canvas.
#[derive(JsLifetime)]
#[rquickjs::class(rename = "CanvasRenderingContext2D")]
pub struct JsContext2d<'js> {
    canvas: Class<'js, JsCanvas<'js>>,
    surface: Rc<Surface>,
    env: Rc<CanvasEnv>,
}

impl<'js> Trace<'js> for JsContext2d<'js> {
    fn trace<'a>(&self, tracer: Tracer<'a, 'js>) {
        self.canvas.trace(tracer);
    }
}

impl<'js> JsContext2d<'js> {
    /// A call that changes pixels: checks the deadline, draws, and lists the canvas.
    fn draw<R>(
        &self,
        ctx: &Ctx<'js>,
        f: impl FnOnce(&mut Canvas) -> std::result::Result<R, CanvasError>,
    ) -> Result<R> {
        self.env.check_deadline(ctx)?;
        let result = with_canvas(ctx, &self.surface, f)?;
        self.env.note_drawn(&self.surface);
        Ok(result)
    }

    /// A call that changes only the context's state or path.
    fn set<R>(&self, ctx: &Ctx<'js>, f: impl FnOnce(&mut Canvas) -> R) -> Result<R> {
        with_canvas(ctx, &self.surface, |canvas| Ok(f(canvas)))
    }

    /// A path call (may refuse an over-long path).
    fn path(
        &self,
        ctx: &Ctx<'js>,
        f: impl FnOnce(&mut Canvas) -> std::result::Result<(), CanvasError>,
    ) -> Result<()> {
        with_canvas(ctx, &self.surface, f)
    }

    fn read<R>(&self, f: impl FnOnce(&Canvas) -> R, fallback: R) -> R {
        self.surface
            .canvas
            .try_borrow()
            .map(|canvas| f(&canvas))
            .unwrap_or(fallback)
    }

    fn style_value(&self, ctx: &Ctx<'js>, style: Style) -> Result<Value<'js>> {
        match style {
            Style::Color(color) => {
                rquickjs::String::from_str(ctx.clone(), &color.to_string()).map(|s| s.into_value())
            }
            Style::Gradient(gradient) => {
                Class::instance(ctx.clone(), JsGradient { gradient }).map(|g| g.into_value())
            }
        }
    }

    /// A `fillStyle`/`strokeStyle` value: a CSS colour string or a `CanvasGradient`; anything
    /// else (an invalid colour included) is ignored, as browsers do.
    fn style_of(value: &Value<'js>) -> Option<Style> {
        if let Some(text) = value.as_string().and_then(|s| s.to_string().ok()) {
            return Rgba::parse(&text).map(Style::Color);
        }
        let gradient = Class::<JsGradient>::from_value(value).ok()?;
        let gradient = gradient.try_borrow().ok()?;
        Some(Style::Gradient(Rc::clone(&gradient.gradient)))
    }

    fn fill_rule(ctx: &Ctx<'js>, method: &str, rule: Option<&Value<'js>>) -> Result<bool> {
        let Some(rule) = rule else { return Ok(false) };
        if rule.is_undefined() {
            return Ok(false);
        }
        if rule.is_object() {
            return Err(unsupported(
                ctx,
                &format!("{method}(path: Path2D)"),
                "draw on the context's own path",
            ));
        }
        match rule.get::<Coerced<String>>()?.0.as_str() {
            "nonzero" => Ok(false),
            "evenodd" => Ok(true),
            other => Err(Exception::throw_type(
                ctx,
                &format!("{method}(): '{other}' is not a fill rule ('nonzero' or 'evenodd')"),
            )),
        }
    }
}

/// Reads `roundRect`'s radii: a number, a `{x, y}` object, or a list of one to four of those.
fn corner_radii<'js>(ctx: &Ctx<'js>, radii: Option<&Value<'js>>) -> Result<Option<CornerRadii>> {
    let one = |value: &Value<'js>| -> Result<(f64, f64)> {
        let (x, y) = if let Some(object) = value.as_object().filter(|_| !value.is_array()) {
            let x: Coerced<f64> = object
                .get::<_, Option<Coerced<f64>>>("x")?
                .unwrap_or(Coerced(0.0));
            let y: Coerced<f64> = object
                .get::<_, Option<Coerced<f64>>>("y")?
                .unwrap_or(Coerced(0.0));
            (x.0, y.0)
        } else {
            let r = value.get::<Coerced<f64>>()?.0;
            (r, r)
        };
        if x < 0.0 || y < 0.0 {
            return Err(Exception::throw_range(
                ctx,
                &format!(
                    "roundRect(): a radius must not be negative (got {})",
                    x.min(y)
                ),
            ));
        }
        Ok((x, y))
    };
    let Some(radii) = radii.filter(|r| !r.is_undefined()) else {
        return Ok(Some([(0.0, 0.0); 4]));
    };
    let list: Vec<Value<'js>> = match radii.as_array() {
        Some(array) => array.iter().collect::<Result<_>>()?,
        None => vec![radii.clone()],
    };
    let parsed = list.iter().map(one).collect::<Result<Vec<_>>>()?;
    if parsed.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return Ok(None);
    }
    Ok(Some(match parsed.as_slice() {
        [all] => [*all; 4],
        [a, b] => [*a, *b, *a, *b],
        [a, b, c] => [*a, *b, *c, *b],
        [a, b, c, d] => [*a, *b, *c, *d],
        _ => {
            return Err(Exception::throw_range(
                ctx,
                &format!(
                    "roundRect(): radii must be a list of 1 to 4 values, got {}",
                    parsed.len()
                ),
            ))
        }
    }))
}

/// Numbers of a call (`Coerced`, so `"10"` works as in browsers).
type N = Coerced<f64>;

#[rquickjs::methods]
impl<'js> JsContext2d<'js> {
    #[qjs(get)]
    pub fn canvas(&self) -> Class<'js, JsCanvas<'js>> {
        self.canvas.clone()
    }

    #[qjs(rename = "getContextAttributes")]
    pub fn get_context_attributes(&self, ctx: Ctx<'js>) -> Result<Object<'js>> {
        let attributes = Object::new(ctx)?;
        attributes.set("alpha", true)?;
        attributes.set("colorSpace", "srgb")?;
        attributes.set("desynchronized", false)?;
        attributes.set("willReadFrequently", false)?;
        Ok(attributes)
    }

    #[qjs(rename = "isContextLost")]
    pub fn is_context_lost(&self) -> bool {
        false
    }

    // state

    pub fn save(&self, ctx: Ctx<'js>) -> Result<()> {
        self.path(&ctx, Canvas::save)
    }

    pub fn restore(&self, ctx: Ctx<'js>) -> Result<()> {
        self.set(&ctx, Canvas::restore)
    }

    pub fn reset(&self, ctx: Ctx<'js>) -> Result<()> {
        self.draw(&ctx, |canvas| {
            canvas.reset();
            Ok(())
        })
    }

    // transforms

    pub fn translate(&self, ctx: Ctx<'js>, x: N, y: N) -> Result<()> {
        self.set(&ctx, |c| c.translate(x.0, y.0))
    }

    pub fn scale(&self, ctx: Ctx<'js>, x: N, y: N) -> Result<()> {
        self.set(&ctx, |c| c.scale(x.0, y.0))
    }

    pub fn rotate(&self, ctx: Ctx<'js>, angle: N) -> Result<()> {
        self.set(&ctx, |c| c.rotate(angle.0))
    }

    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn transform(&self, ctx: Ctx<'js>, a: N, b: N, c: N, d: N, e: N, f: N) -> Result<()> {
        self.set(&ctx, |canvas| {
            canvas.transform([a.0, b.0, c.0, d.0, e.0, f.0])
        })
    }

    /// `setTransform(a, b, c, d, e, f)`, `setTransform({a, b, c, d, e, f})` or
    /// `setTransform()` (identity).
    #[qjs(rename = "setTransform")]
    pub fn set_transform(&self, ctx: Ctx<'js>, args: Rest<Value<'js>>) -> Result<()> {
        let m = match args.0.as_slice() {
            [] => [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
            [matrix] if matrix.is_object() => {
                let object = matrix
                    .as_object()
                    .cloned()
                    .ok_or(rquickjs::Error::Unknown)?;
                let mut m = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
                for (slot, (name, alias)) in m.iter_mut().zip([
                    ("a", "m11"),
                    ("b", "m12"),
                    ("c", "m21"),
                    ("d", "m22"),
                    ("e", "m41"),
                    ("f", "m42"),
                ]) {
                    for key in [name, alias] {
                        if let Some(value) = object.get::<_, Option<Coerced<f64>>>(key)? {
                            *slot = value.0;
                            break;
                        }
                    }
                }
                m
            }
            values if values.len() >= 6 => {
                let mut m = [0.0; 6];
                for (slot, value) in m.iter_mut().zip(values) {
                    *slot = value.get::<Coerced<f64>>()?.0;
                }
                m
            }
            _ => {
                return Err(Exception::throw_type(
                    &ctx,
                    "setTransform() takes six numbers, a matrix object, or nothing",
                ))
            }
        };
        self.set(&ctx, |canvas| canvas.set_transform(m))
    }

    #[qjs(rename = "resetTransform")]
    pub fn reset_transform(&self, ctx: Ctx<'js>) -> Result<()> {
        self.set(&ctx, Canvas::reset_transform)
    }

    /// `getTransform()`: a plain `DOMMatrix`-like object (`a`…`f` and `m11`…`m42`).
    #[qjs(rename = "getTransform")]
    pub fn get_transform(&self, ctx: Ctx<'js>) -> Result<Object<'js>> {
        let [a, b, c, d, e, f] =
            self.read(Canvas::transform_matrix, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let matrix = Object::new(ctx)?;
        for (names, value) in [
            (["a", "m11"], a),
            (["b", "m12"], b),
            (["c", "m21"], c),
            (["d", "m22"], d),
            (["e", "m41"], e),
            (["f", "m42"], f),
        ] {
            for name in names {
                matrix.set(name, value)?;
            }
        }
        matrix.set("is2D", true)?;
        matrix.set(
            "isIdentity",
            [a, b, c, d, e, f] == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        )?;
        Ok(matrix)
    }

    // compositing and styles

    #[qjs(get, rename = "globalAlpha")]
    pub fn global_alpha(&self) -> f64 {
        self.read(Canvas::global_alpha, 1.0)
    }

    #[qjs(set, rename = "globalAlpha")]
    pub fn set_global_alpha(&self, ctx: Ctx<'js>, alpha: N) -> Result<()> {
        self.set(&ctx, |c| c.set_global_alpha(alpha.0))
    }

    #[qjs(get, rename = "globalCompositeOperation")]
    pub fn global_composite_operation(&self) -> &'static str {
        self.read(|c| c.composite().name(), "source-over")
    }

    #[qjs(set, rename = "globalCompositeOperation")]
    pub fn set_global_composite_operation(&self, ctx: Ctx<'js>, op: Coerced<String>) -> Result<()> {
        match CompositeOp::parse(&op.0) {
            Some(op) => self.set(&ctx, |c| c.set_composite(op)),
            None => Ok(()),
        }
    }

    #[qjs(get, rename = "fillStyle")]
    pub fn fill_style(&self, ctx: Ctx<'js>) -> Result<Value<'js>> {
        let style = self.read(|c| c.fill_style().clone(), Style::Color(Rgba::BLACK));
        self.style_value(&ctx, style)
    }

    #[qjs(set, rename = "fillStyle")]
    pub fn set_fill_style(&self, ctx: Ctx<'js>, value: Value<'js>) -> Result<()> {
        match Self::style_of(&value) {
            Some(style) => self.set(&ctx, |c| c.set_fill_style(style)),
            None => Ok(()),
        }
    }

    #[qjs(get, rename = "strokeStyle")]
    pub fn stroke_style(&self, ctx: Ctx<'js>) -> Result<Value<'js>> {
        let style = self.read(|c| c.stroke_style().clone(), Style::Color(Rgba::BLACK));
        self.style_value(&ctx, style)
    }

    #[qjs(set, rename = "strokeStyle")]
    pub fn set_stroke_style(&self, ctx: Ctx<'js>, value: Value<'js>) -> Result<()> {
        match Self::style_of(&value) {
            Some(style) => self.set(&ctx, |c| c.set_stroke_style(style)),
            None => Ok(()),
        }
    }

    #[qjs(rename = "createLinearGradient")]
    pub fn create_linear_gradient(
        &self,
        ctx: Ctx<'js>,
        x0: N,
        y0: N,
        x1: N,
        y1: N,
    ) -> Result<Class<'js, JsGradient>> {
        let gradient =
            Gradient::linear(x0.0, y0.0, x1.0, y1.0).map_err(|error| throw(&ctx, error))?;
        Class::instance(
            ctx,
            JsGradient {
                gradient: Rc::new(RefCell::new(gradient)),
            },
        )
    }

    #[qjs(rename = "createRadialGradient")]
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn create_radial_gradient(
        &self,
        ctx: Ctx<'js>,
        x0: N,
        y0: N,
        r0: N,
        x1: N,
        y1: N,
        r1: N,
    ) -> Result<Class<'js, JsGradient>> {
        let gradient = Gradient::radial([x0.0, y0.0, r0.0, x1.0, y1.0, r1.0])
            .map_err(|error| throw(&ctx, error))?;
        Class::instance(
            ctx,
            JsGradient {
                gradient: Rc::new(RefCell::new(gradient)),
            },
        )
    }

    #[qjs(get, rename = "imageSmoothingEnabled")]
    pub fn image_smoothing_enabled(&self) -> bool {
        self.read(Canvas::image_smoothing, true)
    }

    #[qjs(set, rename = "imageSmoothingEnabled")]
    pub fn set_image_smoothing_enabled(&self, ctx: Ctx<'js>, enabled: Coerced<bool>) -> Result<()> {
        self.set(&ctx, |c| c.set_image_smoothing(enabled.0))
    }

    // line styles

    #[qjs(get, rename = "lineWidth")]
    pub fn line_width(&self) -> f64 {
        self.read(Canvas::line_width, 1.0)
    }

    #[qjs(set, rename = "lineWidth")]
    pub fn set_line_width(&self, ctx: Ctx<'js>, width: N) -> Result<()> {
        self.set(&ctx, |c| c.set_line_width(width.0))
    }

    #[qjs(get, rename = "lineCap")]
    pub fn line_cap(&self) -> &'static str {
        self.read(Canvas::line_cap, "butt")
    }

    #[qjs(set, rename = "lineCap")]
    pub fn set_line_cap(&self, ctx: Ctx<'js>, cap: Coerced<String>) -> Result<()> {
        self.set(&ctx, |c| c.set_line_cap(&cap.0))
    }

    #[qjs(get, rename = "lineJoin")]
    pub fn line_join(&self) -> &'static str {
        self.read(Canvas::line_join, "miter")
    }

    #[qjs(set, rename = "lineJoin")]
    pub fn set_line_join(&self, ctx: Ctx<'js>, join: Coerced<String>) -> Result<()> {
        self.set(&ctx, |c| c.set_line_join(&join.0))
    }

    #[qjs(get, rename = "miterLimit")]
    pub fn miter_limit(&self) -> f64 {
        self.read(Canvas::miter_limit, 10.0)
    }

    #[qjs(set, rename = "miterLimit")]
    pub fn set_miter_limit(&self, ctx: Ctx<'js>, limit: N) -> Result<()> {
        self.set(&ctx, |c| c.set_miter_limit(limit.0))
    }

    #[qjs(rename = "setLineDash")]
    pub fn set_line_dash(&self, ctx: Ctx<'js>, segments: Value<'js>) -> Result<()> {
        let Some(array) = segments.as_array() else {
            return Err(Exception::throw_type(
                &ctx,
                "setLineDash() takes an array of numbers",
            ));
        };
        let segments = array
            .iter::<Coerced<f64>>()
            .map(|value| value.map(|v| v.0))
            .collect::<Result<Vec<f64>>>()?;
        self.set(&ctx, |c| c.set_line_dash(&segments))
    }

    #[qjs(rename = "getLineDash")]
    pub fn get_line_dash(&self) -> Vec<f64> {
        self.read(Canvas::line_dash, Vec::new())
    }

    #[qjs(get, rename = "lineDashOffset")]
    pub fn line_dash_offset(&self) -> f64 {
        self.read(Canvas::line_dash_offset, 0.0)
    }

    #[qjs(set, rename = "lineDashOffset")]
    pub fn set_line_dash_offset(&self, ctx: Ctx<'js>, offset: N) -> Result<()> {
        self.set(&ctx, |c| c.set_line_dash_offset(offset.0))
    }

    // text styles

    #[qjs(get)]
    pub fn font(&self) -> String {
        self.read(|c| c.font().to_css(), "10px sans-serif".into())
    }

    #[qjs(set, rename = "font")]
    pub fn set_font(&self, ctx: Ctx<'js>, font: Coerced<String>) -> Result<()> {
        self.set(&ctx, |c| c.set_font(&font.0))
    }

    #[qjs(get, rename = "textAlign")]
    pub fn text_align(&self) -> &'static str {
        let align = self.read(Canvas::text_align, TextAlign::Start);
        TextAlign::ALL
            .iter()
            .find(|(value, _)| *value == align)
            .map_or("start", |(_, name)| name)
    }

    #[qjs(set, rename = "textAlign")]
    pub fn set_text_align(&self, ctx: Ctx<'js>, align: Coerced<String>) -> Result<()> {
        match TextAlign::ALL.iter().find(|(_, name)| *name == align.0) {
            Some((align, _)) => self.set(&ctx, |c| c.set_text_align(*align)),
            None => Ok(()),
        }
    }

    #[qjs(get, rename = "textBaseline")]
    pub fn text_baseline(&self) -> &'static str {
        let baseline = self.read(Canvas::text_baseline, TextBaseline::Alphabetic);
        TextBaseline::ALL
            .iter()
            .find(|(value, _)| *value == baseline)
            .map_or("alphabetic", |(_, name)| name)
    }

    #[qjs(set, rename = "textBaseline")]
    pub fn set_text_baseline(&self, ctx: Ctx<'js>, baseline: Coerced<String>) -> Result<()> {
        match TextBaseline::ALL
            .iter()
            .find(|(_, name)| *name == baseline.0)
        {
            Some((baseline, _)) => self.set(&ctx, |c| c.set_text_baseline(*baseline)),
            None => Ok(()),
        }
    }

    // rectangles

    #[qjs(rename = "fillRect")]
    pub fn fill_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| {
            c.fill_rect(x.0, y.0, w.0, h.0);
            Ok(())
        })
    }

    #[qjs(rename = "strokeRect")]
    pub fn stroke_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| {
            c.stroke_rect(x.0, y.0, w.0, h.0);
            Ok(())
        })
    }

    #[qjs(rename = "clearRect")]
    pub fn clear_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| {
            c.clear_rect(x.0, y.0, w.0, h.0);
            Ok(())
        })
    }

    // paths

    #[qjs(rename = "beginPath")]
    pub fn begin_path(&self, ctx: Ctx<'js>) -> Result<()> {
        self.set(&ctx, Canvas::begin_path)
    }

    #[qjs(rename = "closePath")]
    pub fn close_path(&self, ctx: Ctx<'js>) -> Result<()> {
        self.set(&ctx, Canvas::close_path)
    }

    #[qjs(rename = "moveTo")]
    pub fn move_to(&self, ctx: Ctx<'js>, x: N, y: N) -> Result<()> {
        self.path(&ctx, |c| c.move_to(x.0, y.0))
    }

    #[qjs(rename = "lineTo")]
    pub fn line_to(&self, ctx: Ctx<'js>, x: N, y: N) -> Result<()> {
        self.path(&ctx, |c| c.line_to(x.0, y.0))
    }

    #[qjs(rename = "quadraticCurveTo")]
    pub fn quadratic_curve_to(&self, ctx: Ctx<'js>, cx: N, cy: N, x: N, y: N) -> Result<()> {
        self.path(&ctx, |c| c.quadratic_curve_to(cx.0, cy.0, x.0, y.0))
    }

    #[qjs(rename = "bezierCurveTo")]
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn bezier_curve_to(
        &self,
        ctx: Ctx<'js>,
        c1x: N,
        c1y: N,
        c2x: N,
        c2y: N,
        x: N,
        y: N,
    ) -> Result<()> {
        self.path(&ctx, |c| {
            c.bezier_curve_to([c1x.0, c1y.0, c2x.0, c2y.0, x.0, y.0])
        })
    }

    pub fn rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.path(&ctx, |c| c.rect(x.0, y.0, w.0, h.0))
    }

    #[qjs(rename = "roundRect")]
    pub fn round_rect(
        &self,
        ctx: Ctx<'js>,
        x: N,
        y: N,
        w: N,
        h: N,
        radii: Opt<Value<'js>>,
    ) -> Result<()> {
        let Some(radii) = corner_radii(&ctx, radii.0.as_ref())? else {
            return Ok(());
        };
        self.path(&ctx, |c| c.round_rect((x.0, y.0, w.0, h.0), radii))
    }

    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn arc(
        &self,
        ctx: Ctx<'js>,
        x: N,
        y: N,
        r: N,
        start: N,
        end: N,
        ccw: Opt<Coerced<bool>>,
    ) -> Result<()> {
        let ccw = ccw.0.is_some_and(|c| c.0);
        self.path(&ctx, |c| c.arc(x.0, y.0, r.0, start.0, end.0, ccw))
    }

    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn ellipse(
        &self,
        ctx: Ctx<'js>,
        x: N,
        y: N,
        rx: N,
        ry: N,
        rotation: N,
        start: N,
        end: N,
        ccw: Opt<Coerced<bool>>,
    ) -> Result<()> {
        let ccw = ccw.0.is_some_and(|c| c.0);
        self.path(&ctx, |c| {
            c.ellipse([x.0, y.0, rx.0, ry.0, rotation.0, start.0, end.0], ccw)
        })
    }

    #[qjs(rename = "arcTo")]
    pub fn arc_to(&self, ctx: Ctx<'js>, x1: N, y1: N, x2: N, y2: N, r: N) -> Result<()> {
        self.path(&ctx, |c| c.arc_to(x1.0, y1.0, x2.0, y2.0, r.0))
    }

    pub fn fill(&self, ctx: Ctx<'js>, rule: Opt<Value<'js>>) -> Result<()> {
        let even_odd = Self::fill_rule(&ctx, "fill", rule.0.as_ref())?;
        self.draw(&ctx, |c| {
            c.fill(even_odd);
            Ok(())
        })
    }

    pub fn stroke(&self, ctx: Ctx<'js>, path: Opt<Value<'js>>) -> Result<()> {
        if path.0.as_ref().is_some_and(Value::is_object) {
            return Err(unsupported(
                &ctx,
                "stroke(path: Path2D)",
                "draw on the context's own path",
            ));
        }
        self.draw(&ctx, |c| {
            c.stroke();
            Ok(())
        })
    }

    pub fn clip(&self, ctx: Ctx<'js>, rule: Opt<Value<'js>>) -> Result<()> {
        let even_odd = Self::fill_rule(&ctx, "clip", rule.0.as_ref())?;
        self.env.check_deadline(&ctx)?;
        self.path(&ctx, |c| c.clip(even_odd))
    }

    // text

    #[qjs(rename = "fillText")]
    pub fn fill_text(
        &self,
        ctx: Ctx<'js>,
        text: Coerced<String>,
        x: N,
        y: N,
        max_width: Opt<N>,
    ) -> Result<()> {
        let max_width = max_width.0.map(|m| m.0);
        self.draw(&ctx, |c| c.draw_text(&text.0, x.0, y.0, max_width, true))
    }

    #[qjs(rename = "strokeText")]
    pub fn stroke_text(
        &self,
        ctx: Ctx<'js>,
        text: Coerced<String>,
        x: N,
        y: N,
        max_width: Opt<N>,
    ) -> Result<()> {
        let max_width = max_width.0.map(|m| m.0);
        self.draw(&ctx, |c| c.draw_text(&text.0, x.0, y.0, max_width, false))
    }

    /// `measureText(text)`: a plain object with the `TextMetrics` fields.
    #[qjs(rename = "measureText")]
    pub fn measure_text(&self, ctx: Ctx<'js>, text: Coerced<String>) -> Result<Object<'js>> {
        self.env.check_deadline(&ctx)?;
        let metrics = {
            let canvas = self.surface.canvas.try_borrow().map_err(|_| {
                Exception::throw_type(&ctx, "the canvas is busy (re-entered while drawing)")
            })?;
            canvas
                .measure_text(&text.0)
                .map_err(|error| throw(&ctx, error))?
        };
        let object = Object::new(ctx)?;
        for (name, value) in metrics.fields() {
            object.set(name, value)?;
        }
        Ok(object)
    }

    // images and pixels

    /// `drawImage(canvas, dx, dy)`, `(canvas, dx, dy, dw, dh)` or
    /// `(canvas, sx, sy, sw, sh, dx, dy, dw, dh)`, with a canvas of this sandbox as the source.
    #[qjs(rename = "drawImage")]
    pub fn draw_image(&self, ctx: Ctx<'js>, args: Rest<Value<'js>>) -> Result<()> {
        let args = args.0;
        let source = args
            .first()
            .and_then(|value| Class::<JsCanvas>::from_value(value).ok())
            .or_else(|| {
                args.first()
                    .and_then(|value| Class::<JsContext2d>::from_value(value).ok())
                    .and_then(|context| context.try_borrow().ok().map(|c| c.canvas.clone()))
            });
        let Some(source) = source else {
            return Err(Exception::throw_type(
                &ctx,
                "drawImage(): the image must be a canvas from getCanvas() or new OffscreenCanvas() (images cannot be loaded in this sandbox)",
            ));
        };
        let numbers = args[1..]
            .iter()
            .map(|value| value.get::<Coerced<f64>>().map(|n| n.0))
            .collect::<Result<Vec<f64>>>()?;
        let source = Rc::clone(&source.try_borrow()?.surface);
        let (sw, sh) = source
            .canvas
            .try_borrow()
            .map(|c| (f64::from(c.width()), f64::from(c.height())))
            .unwrap_or((0.0, 0.0));
        let (src, dst) = match numbers.as_slice() {
            [dx, dy] => ([0.0, 0.0, sw, sh], [*dx, *dy, sw, sh]),
            [dx, dy, dw, dh] => ([0.0, 0.0, sw, sh], [*dx, *dy, *dw, *dh]),
            [sx, sy, sw, sh, dx, dy, dw, dh] => ([*sx, *sy, *sw, *sh], [*dx, *dy, *dw, *dh]),
            other => {
                return Err(Exception::throw_type(
                    &ctx,
                    &format!(
                        "drawImage() takes 3, 5 or 9 arguments, got {}",
                        other.len() + 1
                    ),
                ))
            }
        };
        if Rc::ptr_eq(&source, &self.surface) {
            self.draw(&ctx, |c| {
                let snapshot = c.snapshot();
                c.draw_image(&snapshot, src, dst);
                Ok(())
            })
        } else {
            let bitmap = source
                .canvas
                .try_borrow()
                .map_err(|_| Exception::throw_type(&ctx, "the source canvas is busy"))?;
            self.draw(&ctx, |c| {
                c.draw_image(bitmap.bitmap(), src, dst);
                Ok(())
            })
        }
    }

    #[qjs(rename = "createImageData")]
    pub fn create_image_data(
        &self,
        ctx: Ctx<'js>,
        first: Value<'js>,
        height: Opt<N>,
    ) -> Result<Class<'js, JsImageData<'js>>> {
        let max_side = self.read(Canvas::max_side, 0);
        let (w, h) = match Class::<JsImageData>::from_value(&first) {
            Ok(other) => {
                let other = other.try_borrow()?;
                (i64::from(other.width), i64::from(other.height))
            }
            Err(_) => {
                let Some(height) = height.0 else {
                    return Err(Exception::throw_type(
                        &ctx,
                        "createImageData() takes a width and a height, or an ImageData",
                    ));
                };
                #[allow(
                    clippy::cast_possible_truncation,
                    reason = "whole numbers; huge ones are refused by the size check"
                )]
                let size = (first.get::<N>()?.0.trunc() as i64, height.0.trunc() as i64);
                (size.0.abs(), size.1.abs())
            }
        };
        let rect = ImageDataRect::new(0, 0, w, h, max_side).map_err(|error| throw(&ctx, error))?;
        JsImageData::new(&ctx, rect, &vec![0; rect.bytes()])
    }

    #[qjs(rename = "getImageData")]
    pub fn get_image_data(
        &self,
        ctx: Ctx<'js>,
        x: Coerced<i32>,
        y: Coerced<i32>,
        w: Coerced<i32>,
        h: Coerced<i32>,
    ) -> Result<Class<'js, JsImageData<'js>>> {
        self.env.check_deadline(&ctx)?;
        let max_side = self.read(Canvas::max_side, 0);
        let rect = ImageDataRect::new(
            i64::from(x.0),
            i64::from(y.0),
            i64::from(w.0),
            i64::from(h.0),
            max_side,
        )
        .map_err(|error| throw(&ctx, error))?;
        // The data goes to the QuickJS heap: asking the budget first turns a request that cannot
        // fit into a clear RangeError instead of an out-of-memory failure of the heap.
        if let Err(over) = self.env.budget.reserve(rect.bytes()) {
            return Err(throw(
                &ctx,
                CanvasError::limit(
                    "memoryLimitBytes",
                    format!(
                        "getImageData(): {} bytes of image data do not fit in memoryLimitBytes ({} bytes left)",
                        over.requested, over.available
                    ),
                ),
            ));
        }
        self.env.budget.release(rect.bytes());
        let bytes = with_canvas(
            &ctx,
            &self.surface,
            |canvas| Ok(canvas.get_image_data(rect)),
        )?;
        JsImageData::new(&ctx, rect, &bytes)
    }

    #[qjs(rename = "putImageData")]
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn put_image_data(
        &self,
        ctx: Ctx<'js>,
        data: Value<'js>,
        dx: Coerced<i32>,
        dy: Coerced<i32>,
        dirty: Rest<Coerced<i32>>,
    ) -> Result<()> {
        let Ok(image) = Class::<JsImageData>::from_value(&data) else {
            return Err(Exception::throw_type(
                &ctx,
                "putImageData(): the first argument must be an ImageData",
            ));
        };
        let (width, height, view) = {
            let image = image.try_borrow()?;
            (image.width, image.height, image.data.clone())
        };
        let Some(bytes) = clamped_bytes(&ctx, &view) else {
            return Err(named_error(
                &ctx,
                "InvalidStateError",
                "putImageData(): the image data's buffer is detached",
            )
            .map(|e| ctx.throw(e.into_value()))
            .unwrap_or_else(|e| e));
        };
        let dirty = match dirty.0.as_slice() {
            [] => None,
            [x, y, w, h] => Some((
                i64::from(x.0),
                i64::from(y.0),
                i64::from(w.0),
                i64::from(h.0),
            )),
            _ => {
                return Err(Exception::throw_type(
                    &ctx,
                    "putImageData() takes 3 or 7 arguments",
                ))
            }
        };
        self.draw(&ctx, |c| {
            c.put_image_data(
                (&bytes, width, height),
                (i64::from(dx.0), i64::from(dy.0)),
                dirty,
            )
        })
    }
}

/// Members of the Canvas 2D API this canvas does not implement: `(name, what to do instead)`.
/// Methods throw when called.
const UNSUPPORTED_METHODS: [(&str, &str); 7] = [
    (
        "createPattern",
        "fill with colours or gradients, or drawImage() the canvas where it is needed",
    ),
    (
        "createConicGradient",
        "use createLinearGradient() or createRadialGradient()",
    ),
    (
        "isPointInPath",
        "compute the hit test from the shape's own geometry",
    ),
    (
        "isPointInStroke",
        "compute the hit test from the shape's own geometry",
    ),
    ("drawFocusIfNeeded", "there is no focus in this sandbox"),
    (
        "scrollPathIntoView",
        "there is nothing to scroll in this sandbox",
    ),
    (
        "createImageBitmap",
        "draw the canvas itself with drawImage(canvas, x, y)",
    ),
];

/// Properties this canvas does not implement: `(name, the value that disables them)`. Reading
/// gives that value; setting it is allowed, any other value throws.
const UNSUPPORTED_PROPERTIES: [(&str, Disabled); 13] = [
    ("shadowBlur", Disabled::Number(0.0)),
    ("shadowOffsetX", Disabled::Number(0.0)),
    ("shadowOffsetY", Disabled::Number(0.0)),
    ("shadowColor", Disabled::Color),
    ("filter", Disabled::Text("none")),
    ("direction", Disabled::Text("ltr")),
    ("letterSpacing", Disabled::Text("0px")),
    ("wordSpacing", Disabled::Text("0px")),
    ("fontKerning", Disabled::Text("auto")),
    ("fontStretch", Disabled::Text("normal")),
    ("fontVariantCaps", Disabled::Text("normal")),
    ("textRendering", Disabled::Text("auto")),
    ("imageSmoothingQuality", Disabled::Text("low")),
];

/// The value of an unsupported property that means "off".
#[derive(Clone, Copy)]
enum Disabled {
    Number(f64),
    Text(&'static str),
    /// Any fully transparent colour (`shadowColor`'s default is `rgba(0, 0, 0, 0)`).
    Color,
}

impl Disabled {
    fn value<'js>(self, ctx: &Ctx<'js>) -> Result<Value<'js>> {
        Ok(match self {
            Self::Number(n) => Value::new_number(ctx.clone(), n),
            Self::Text(text) => rquickjs::String::from_str(ctx.clone(), text)?.into_value(),
            Self::Color => {
                rquickjs::String::from_str(ctx.clone(), "rgba(0, 0, 0, 0)")?.into_value()
            }
        })
    }

    fn accepts(self, value: &Value<'_>) -> bool {
        match self {
            Self::Number(n) => {
                value.as_number().or_else(|| value.as_int().map(f64::from)) == Some(n)
            }
            Self::Text(text) => value
                .as_string()
                .and_then(|s| s.to_string().ok())
                .is_some_and(|s| {
                    s == text
                        || (text == "ltr" && s == "inherit")
                        || (text == "low" && matches!(s.as_str(), "medium" | "high"))
                }),
            Self::Color => value
                .as_string()
                .and_then(|s| s.to_string().ok())
                .and_then(|s| Rgba::parse(&s))
                .is_some_and(|color| color.a == 0),
        }
    }
}

/// Completes the 2D context's prototype when a first context is made (most executors never
/// draw, and building it at creation would cost every one of them): the unsupported members,
/// and the interface objects `CanvasRenderingContext2D` and `CanvasGradient` (globals whose
/// `prototype` is the class's, for `instanceof` and inspection; `new` throws, as in browsers).
fn install_stubs<'js>(ctx: &Ctx<'js>) -> Result<()> {
    let interfaces = [
        (
            "CanvasRenderingContext2D",
            Class::<JsContext2d>::prototype(ctx)?,
        ),
        ("CanvasGradient", Class::<JsGradient>::prototype(ctx)?),
    ];
    for (name, prototype) in interfaces {
        let Some(prototype) = prototype else { continue };
        let interface = Function::new(ctx.clone(), |ctx: Ctx<'js>| -> Result<()> {
            Err(Exception::throw_type(&ctx, "Illegal constructor"))
        })?
        .with_name(name)?
        .with_constructor(true);
        interface.prop("prototype", Property::from(prototype.clone()))?;
        prototype.prop(
            "constructor",
            Property::from(interface.clone()).writable().configurable(),
        )?;
        ctx.globals()
            .prop(name, Property::from(interface).writable().configurable())?;
    }
    let Some(prototype) = Class::<JsContext2d>::prototype(ctx)? else {
        return Ok(());
    };
    for (name, instead) in UNSUPPORTED_METHODS {
        let method = Function::new(ctx.clone(), move |ctx: Ctx<'_>| -> Result<()> {
            Err(unsupported(
                &ctx,
                &format!("CanvasRenderingContext2D.{name}()"),
                instead,
            ))
        })?
        .with_name(name)?;
        prototype.prop(name, Property::from(method).writable().configurable())?;
    }
    for (name, disabled) in UNSUPPORTED_PROPERTIES {
        let get = move |ctx: Ctx<'js>| disabled.value(&ctx);
        let set = move |ctx: Ctx<'js>, value: Value<'js>| -> Result<()> {
            if disabled.accepts(&value) {
                return Ok(());
            }
            let off = match disabled {
                Disabled::Number(n) => format!("{n}"),
                Disabled::Text(text) => format!("'{text}'"),
                Disabled::Color => "a transparent colour".into(),
            };
            Err(unsupported(
                &ctx,
                &format!("CanvasRenderingContext2D.{name}"),
                &format!("only {off} (the value that turns it off) can be set"),
            ))
        };
        prototype.prop(name, Accessor::new(get, set).configurable())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
