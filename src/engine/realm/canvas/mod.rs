//! The Canvas 2D API in the sandbox: `getCanvas(width, height)`, `new OffscreenCanvas(w, h)`,
//! `ImageData`, and the 2D context with its gradients, as rquickjs classes over the renderer in
//! [`crate::canvas`] (which knows nothing of QuickJS).
//!
//! The 2D context's class is in `context2d`; raw QuickJS access goes through
//! `engine::quickjs::reflect`.
//!
//! - **Limits.** Everything a canvas holds is charged to the executor's memory account, whose
//!   limit (`memoryLimitBytes`) QuickJS's heap shares, before it is allocated. Every drawing
//!   call first checks the run's deadline and abort (QuickJS's interrupt handler only runs
//!   between bytecodes, and a run of costly native calls would otherwise pass it by many
//!   calls); calls whose cost grows with the code's arguments check it again between bands of
//!   rows or runs of characters (`crate::canvas`). String arguments that can only be short
//!   (keywords, colours, fonts) are read in place and ignored past a bound, so that a huge
//!   string is never copied for them; texts are charged before they are copied.
//! - **Images.** A canvas whose pixels change during a run is listed; when the run succeeds,
//!   each listed canvas is encoded as PNG, in the order the canvases were created, after the
//!   run's code is over and outside its deadline (the executor is told: see
//!   `RunAbort::mark_finished`); the files are charged until the answer leaves the engine.
//!   Runs that draw nothing pay nothing.
//! - **Unsupported members** of the Canvas API (shadows, filters, patterns, `Path2D`, hit
//!   testing) exist and throw a `TypeError` naming the member, so agent code fails at the line
//!   that needs them rather than drawing something else silently; setting such a property to
//!   the value that disables it (`shadowBlur = 0`) is allowed.
//! - Argument conversions (which may call user `valueOf`/`toString`) happen before a canvas is
//!   borrowed, and every borrow is checked, so re-entrant user code gets a `TypeError`, never a
//!   panic.
//!
//! Spec: docs/contract.md "Where we go beyond SES" ("what the agent drew"); §10.2 (the images are
//! an optional extension of `CodeOutput`); the limits follow docs/contract.md's `memoryLimitBytes`
//! and the run's deadline (§7.5).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rquickjs::class::{Trace, Tracer};
use rquickjs::function::{Opt, Rest, This};
use rquickjs::object::{Accessor, Property};
use rquickjs::{Class, Coerced, Constructor, Ctx, Exception, Function, JsLifetime, Result, Value};

mod context2d;
mod stubs;

use context2d::JsContext2d;
use stubs::install_stubs;

use super::globals::{named_error, throw_stop};
use crate::canvas::{
    data_url, over_limit, Canvas, CanvasError, CanvasErrorKind, Gradient, Image, ImageDataRect,
};
use crate::engine::quickjs::reflect::{typed_array_kind, with_chars, Reflect};
use crate::engine::run::state::RunState;
use crate::memory::{Charge, MemoryAccount};
use crate::value::TypedArrayKind;

/// What the canvas bindings share: the run state (deadline), the memory account, the size cap,
/// and the canvases drawn during the current run.
pub struct CanvasEnv {
    state: Rc<RunState>,
    account: Rc<MemoryAccount>,
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
    /// The canvases drawn since the last call, as PNG images in creation order, with the
    /// charges that hold their files until the answer leaves; none when the run failed (its
    /// drawing stays on the canvases, but no image is encoded). `interrupted` is consulted
    /// between bands of rows (the executor's shutdown: the run's own deadline is over).
    pub fn take_images(
        &self,
        succeeded: bool,
        interrupted: &dyn Fn() -> bool,
    ) -> std::result::Result<(Vec<Image>, Vec<Charge>), CanvasError> {
        let drawn = std::mem::take(&mut *self.env.drawn.borrow_mut());
        if drawn.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        for surface in &drawn {
            surface.listed.set(false);
        }
        if !succeeded {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut drawn = drawn;
        drawn.sort_by_key(|surface| surface.serial);
        let mut images = Vec::with_capacity(drawn.len());
        let mut held = Vec::with_capacity(drawn.len());
        for surface in &drawn {
            let canvas = surface.canvas.try_borrow().map_err(|_| {
                CanvasError::invalid_state("a canvas was still in use at the end of the run")
            })?;
            let (image, charge) = canvas.to_image(interrupted).map_err(|error| CanvasError {
                message: format!("canvas {}: {}", surface.serial, error.message),
                ..error
            })?;
            images.push(image);
            held.push(charge);
        }
        Ok((images, held))
    }
}

/// Installs `getCanvas`, `OffscreenCanvas` and `ImageData` in `ctx`'s global object. The 2D
/// context's prototype (most of the API) is only built when a first context is made.
pub fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RunState>,
    account: &Rc<MemoryAccount>,
    max_side: u32,
) -> Result<CanvasHost> {
    let env = Rc::new(CanvasEnv {
        state: Rc::clone(state),
        account: Rc::clone(account),
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

/// The longest keyword a canvas argument can be (`'destination-over'`, `'ideographic'`).
const MAX_KEYWORD_LENGTH: usize = 64;

/// The longest CSS colour a canvas reads (`'rgba(255, 255, 255, 0.5)'` with room to spare).
const MAX_COLOR_LENGTH: usize = 256;

/// A string argument that can only be short (a keyword, a colour, a font): converted as any
/// string is (`toString()` included), then read in place, and empty past `MAX` characters,
/// which no valid value has, so that a huge string is never copied for it.
pub struct Short<const MAX: usize>(Option<String>);

impl<const MAX: usize> Short<MAX> {
    /// The value, or `""` when it was too long (a value no caller accepts).
    fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }

    /// Reads `value` as [`Short`] if it is a string, without converting anything else.
    fn of_string<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> Option<Self> {
        with_chars(ctx, value, |chars| {
            Self((chars.len() <= MAX).then(|| chars.to_string_lossy()))
        })
    }
}

impl<'js, const MAX: usize> rquickjs::FromJs<'js> for Short<MAX> {
    fn from_js(ctx: &Ctx<'js>, value: Value<'js>) -> Result<Self> {
        let string = value
            .get::<Coerced<rquickjs::String<'js>>>()?
            .0
            .into_value();
        Self::of_string(ctx, &string).ok_or_else(|| unreadable(ctx))
    }
}

/// The error for a string QuickJS could not make readable (flattening it needed memory the
/// limit refused: the run fails at the limit).
fn unreadable(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_range(ctx, "the string could not be read: out of memory")
}

impl CanvasEnv {
    /// A text argument (`fillText`, `measureText`), converted as any string is and charged
    /// before it is copied out of the heap.
    fn text<'js>(
        &self,
        ctx: &Ctx<'js>,
        call: &str,
        text: &Coerced<rquickjs::String<'js>>,
    ) -> Result<(String, Charge)> {
        let value = text.0.clone().into_value();
        with_chars(ctx, &value, |chars| {
            let held = self
                .account
                .charge(chars.len().saturating_mul(3))
                .map_err(|over| throw(ctx, over_limit(call, "the text", over)))?;
            Ok((chars.to_string_lossy(), held))
        })
        .ok_or_else(|| unreadable(ctx))?
    }
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
            Rc::clone(&env.account),
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
        kind: Short<MAX_KEYWORD_LENGTH>,
        _options: Opt<Value<'js>>,
    ) -> Result<Class<'js, JsContext2d<'js>>> {
        if kind.as_str() != "2d" {
            return Err(Exception::throw_type(
                &ctx,
                &format!(
                    "getContext('{}') is not supported by this sandbox's canvas; use getContext('2d')",
                    kind.as_str()
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
    /// The file and its base64 text are charged while they are made.
    #[qjs(rename = "toDataURL")]
    pub fn to_data_url(
        &self,
        ctx: Ctx<'js>,
        _type: Opt<Value<'js>>,
        _quality: Opt<Value<'js>>,
    ) -> Result<rquickjs::String<'js>> {
        self.env.check_deadline(&ctx)?;
        let interrupt = self.env.interrupt();
        let (image, _file) =
            with_canvas(&ctx, &self.surface, |canvas| canvas.to_image(&*interrupt))?;
        let _text = self
            .env
            .account
            .charge(image.data.len().div_ceil(3) * 4 + 32)
            .map_err(|over| throw(&ctx, over_limit("toDataURL()", "the data URL", over)))?;
        rquickjs::String::from_str(ctx, &data_url(image.mime_type, &image.data))
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
        color: Short<MAX_COLOR_LENGTH>,
    ) -> Result<()> {
        let mut gradient = self
            .gradient
            .try_borrow_mut()
            .map_err(|_| Exception::throw_type(&ctx, "the gradient is in use"))?;
        gradient
            .add_color_stop(offset.0, color.as_str())
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

/// A zeroed `Uint8ClampedArray` of `len` bytes, allocated by QuickJS (so it counts against
/// the memory limit like any array) and filled in place by `fill`, which runs no JS.
fn clamped_array<'js>(
    ctx: &Ctx<'js>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<()>,
) -> Result<Value<'js>> {
    let reflect = Reflect::new(ctx);
    let buffer = reflect
        .new_array_buffer(len)
        .ok_or(rquickjs::Error::Exception)?;
    reflect
        .with_array_buffer(&buffer, (0, len), fill)
        .ok_or(rquickjs::Error::Exception)??;
    reflect
        .new_typed_array(TypedArrayKind::Uint8Clamped, &buffer, 0, len)
        .ok_or(rquickjs::Error::Exception)
}

/// Calls `read` with the bytes a `Uint8ClampedArray` views, in place (`read` runs no JS);
/// `None` for anything else, a detached buffer included.
fn with_clamped_bytes<'js, R>(
    ctx: &Ctx<'js>,
    view: &Value<'js>,
    read: impl FnOnce(&mut [u8]) -> R,
) -> Option<R> {
    if typed_array_kind(view) != Some(TypedArrayKind::Uint8Clamped) {
        return None;
    }
    let reflect = Reflect::new(ctx);
    let (buffer, offset, length, _) = reflect.typed_array_buffer(view)?;
    reflect.with_array_buffer(&buffer, (offset, length), read)
}

impl<'js> JsImageData<'js> {
    /// An `ImageData` of `rect`'s size whose bytes `fill` writes.
    fn new(
        ctx: &Ctx<'js>,
        rect: ImageDataRect,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<Class<'js, Self>> {
        let data = clamped_array(ctx, rect.bytes(), fill)?;
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
                let Some(length) = with_clamped_bytes(ctx, first, |bytes| bytes.len()) else {
                    return Err(Exception::throw_type(
                        ctx,
                        "ImageData(): the data must be a Uint8ClampedArray",
                    ));
                };
                let width = whole(number(args.get(1))?);
                let pixels = length / 4;
                if length == 0
                    || length % 4 != 0
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
                JsImageData::new(ctx, rect, |_| Ok(()))
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

#[cfg(test)]
mod tests;
