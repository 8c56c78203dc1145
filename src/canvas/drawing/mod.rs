//! One canvas and its 2D context: the bitmap (premultiplied RGBA, as browsers keep it), the
//! drawing state and its `save()`/`restore()` stack, the current path, and every drawing
//! operation (what code does to pixels directly is in `pixels.rs`, how it paints in
//! `style.rs`). Methods take the Canvas API's arguments already converted to Rust values and
//! follow the spec's rules for them (non-finite numbers make a call a no-op, invalid style
//! values are ignored, sizes are checked).
//!
//! Everything a canvas holds is charged to the executor's memory account before it is
//! allocated (the bitmap, clip masks, each saved state's dash list and font, the path); drawing
//! goes through [`super::raster`], which charges what tiny-skia allocates and paints in bands
//! between which the run's interrupt is consulted.

mod pixels;

use std::rc::Rc;

use tiny_skia::{
    BlendMode, FillRule, LineCap, LineJoin, Mask, Paint, Pixmap, Rect, Shader, Stroke, Transform,
};

use super::color::Rgba;
use super::font::{FontSpec, TextAlign, TextBaseline, TextLine, TextMetrics};
use super::path::{CanvasPath, CornerRadii};
use super::raster::{self, Target, Work};
use super::style::{narrow, CompositeOp, Style};
use super::{encode, over_limit, CanvasError, Image};
use crate::memory::{vec_bytes, Charge, MemoryAccount};

pub use pixels::ImageDataRect;

/// The deepest `save()` nesting: each level copies the drawing state.
pub const MAX_SAVE_DEPTH: usize = 4096;

/// The most entries of a line dash: far more than any chart's pattern needs; each stroke
/// copies the list, and a saved state keeps its own.
pub const MAX_DASH_ENTRIES: usize = 1024;

/// The longest `font` value the canvas reads (longer values are ignored, as invalid ones are):
/// a family list of a few dozen names.
pub const MAX_FONT_LENGTH: usize = 1024;

/// A clip region: a coverage mask over the whole bitmap.
struct Clip {
    mask: Mask,
    _pixels: Charge,
}

impl std::fmt::Debug for Clip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clip")
    }
}

/// What `save()` saves.
#[derive(Debug)]
struct DrawState {
    transform: Transform,
    fill: Style,
    stroke: Style,
    global_alpha: f32,
    composite: CompositeOp,
    line_width: f32,
    line_cap: LineCap,
    line_join: LineJoin,
    miter_limit: f32,
    dash: Vec<f32>,
    dash_offset: f32,
    font: FontSpec,
    text_align: TextAlign,
    text_baseline: TextBaseline,
    smoothing: bool,
    clip: Option<Rc<Clip>>,
    /// What `dash` and the font's family hold on the heap.
    held: Charge,
}

impl DrawState {
    fn initial(account: &Rc<MemoryAccount>) -> Self {
        Self {
            transform: Transform::identity(),
            fill: Style::Color(Rgba::BLACK),
            stroke: Style::Color(Rgba::BLACK),
            global_alpha: 1.0,
            composite: CompositeOp(BlendMode::SourceOver),
            line_width: 1.0,
            line_cap: LineCap::Butt,
            line_join: LineJoin::Miter,
            miter_limit: 10.0,
            dash: Vec::new(),
            dash_offset: 0.0,
            font: FontSpec::default(),
            text_align: TextAlign::Start,
            text_baseline: TextBaseline::Alphabetic,
            smoothing: true,
            clip: None,
            held: account.empty_charge(),
        }
    }

    /// The heap bytes of a state holding `dash` and `font`.
    fn heap_bytes(dash: usize, font: &FontSpec) -> usize {
        vec_bytes::<f32>(dash).saturating_add(font.family.capacity())
    }

    /// A copy (for `save()`), whose dash list and font are charged before they are copied.
    fn duplicate(&self) -> Result<Self, CanvasError> {
        let held = self
            .held
            .account()
            .charge(Self::heap_bytes(self.dash.len(), &self.font))
            .map_err(|over| over_limit("save()", "the saved state", over))?;
        Ok(Self {
            transform: self.transform,
            fill: self.fill.clone(),
            stroke: self.stroke.clone(),
            global_alpha: self.global_alpha,
            composite: self.composite,
            line_width: self.line_width,
            line_cap: self.line_cap,
            line_join: self.line_join,
            miter_limit: self.miter_limit,
            dash: self.dash.clone(),
            dash_offset: self.dash_offset,
            font: FontSpec {
                family: self.font.family.clone(),
                ..self.font
            },
            text_align: self.text_align,
            text_baseline: self.text_baseline,
            smoothing: self.smoothing,
            clip: self.clip.clone(),
            held,
        })
    }
}

/// A canvas: its bitmap and its 2D context.
pub struct Canvas {
    pixmap: Pixmap,
    /// The charge held for `pixmap` (`None` only if it could not be taken back after a failed
    /// resize, which cannot happen: the same bytes were just released).
    pixels: Option<Charge>,
    account: Rc<MemoryAccount>,
    max_side: u32,
    state: DrawState,
    stack: Vec<DrawState>,
    /// What `stack` itself holds (its capacity of states).
    stack_held: Charge,
    path: CanvasPath,
    interrupted: Rc<dyn Fn() -> bool>,
}

impl std::fmt::Debug for Canvas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Canvas({}×{})", self.width(), self.height())
    }
}

/// Checks a canvas size and charges its bitmap.
fn allocate(
    account: &Rc<MemoryAccount>,
    width: f64,
    height: f64,
    max_side: u32,
) -> Result<(Pixmap, Charge), CanvasError> {
    let side = |value: f64| {
        (value.is_finite() && value >= 1.0 && value <= f64::from(max_side)).then(|| value.trunc())
    };
    let (Some(w), Some(h)) = (side(width), side(height)) else {
        if width.is_finite() && height.is_finite() && width >= 1.0 && height >= 1.0 {
            return Err(CanvasError::limit(
                "maxCanvasSize",
                format!(
                    "a canvas of {width}×{height} pixels is larger than maxCanvasSize allows ({max_side} per side)"
                ),
            ));
        }
        return Err(CanvasError::range(format!(
            "a canvas needs a width and height of at least 1 pixel, got {width}×{height}"
        )));
    };
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked to be whole numbers in 1..=max_side"
    )]
    let (w, h) = (w as u32, h as u32);
    let bytes = w as usize * h as usize * 4;
    let charge = account.charge(bytes).map_err(|over| {
        CanvasError::limit(
            "memoryLimitBytes",
            format!(
                "a canvas of {w}×{h} pixels needs {} bytes, and only {} are left under memoryLimitBytes",
                over.requested, over.available
            ),
        )
    })?;
    let pixmap = Pixmap::new(w, h)
        .ok_or_else(|| CanvasError::range(format!("cannot allocate a {w}×{h} canvas")))?;
    Ok((pixmap, charge))
}

impl Canvas {
    /// A transparent canvas of `width`×`height`, whose memory `account` pays for;
    /// `interrupted` tells long operations to stop.
    pub fn new(
        width: f64,
        height: f64,
        max_side: u32,
        account: Rc<MemoryAccount>,
        interrupted: Rc<dyn Fn() -> bool>,
    ) -> Result<Self, CanvasError> {
        let (pixmap, pixels) = allocate(&account, width, height, max_side)?;
        Ok(Self {
            pixmap,
            pixels: Some(pixels),
            max_side,
            state: DrawState::initial(&account),
            stack: Vec::new(),
            stack_held: account.empty_charge(),
            path: CanvasPath::new(&account),
            account,
            interrupted,
        })
    }

    pub fn width(&self) -> u32 {
        self.pixmap.width()
    }

    pub fn height(&self) -> u32 {
        self.pixmap.height()
    }

    /// The largest side this canvas may take (`maxCanvasSize`).
    pub fn max_side(&self) -> u32 {
        self.max_side
    }

    /// The memory account the canvas charges.
    pub fn account(&self) -> &Rc<MemoryAccount> {
        &self.account
    }

    /// Setting `width` or `height`: a new transparent bitmap, and the context reset. On
    /// failure the canvas keeps its bitmap and state.
    pub fn resize(&mut self, width: f64, height: f64) -> Result<(), CanvasError> {
        let old_bytes = self.pixmap.data().len();
        // The old bitmap's charge is given back first: a canvas may be resized to any size that
        // fits once the old bitmap is gone.
        self.pixels = None;
        let (pixmap, pixels) = match allocate(&self.account, width, height, self.max_side) {
            Ok(allocated) => allocated,
            Err(error) => {
                self.pixels = self.account.charge(old_bytes).ok();
                return Err(error);
            }
        };
        self.pixmap = pixmap;
        self.pixels = Some(pixels);
        self.reset_state();
        Ok(())
    }

    /// The initial state, no saved states, an empty path.
    fn reset_state(&mut self) {
        self.state = DrawState::initial(&self.account);
        self.stack = Vec::new();
        self.stack_held = self.account.empty_charge();
        self.path = CanvasPath::new(&self.account);
    }

    /// The bitmap as PNG (straight-alpha RGBA), with the charge holding the file's bytes. Up to
    /// a megapixel it is compressed at png's balanced level; larger bitmaps use its fast
    /// fdeflate mode (bench/README.md, "PNG compression level"). `interrupted` is consulted
    /// between bands of rows.
    pub fn to_image(&self, interrupted: &dyn Fn() -> bool) -> Result<(Image, Charge), CanvasError> {
        encode::png(&self.pixmap, &self.account, interrupted)
    }

    /// What the run's interrupt says now.
    pub fn interrupted(&self) -> bool {
        (self.interrupted)()
    }

    // --- state ---------------------------------------------------------------------------

    /// `save()`: the state is copied, and the copy's dash list and font are charged.
    pub fn save(&mut self) -> Result<(), CanvasError> {
        if self.stack.len() >= MAX_SAVE_DEPTH {
            return Err(CanvasError::range(format!(
                "save(): more than {MAX_SAVE_DEPTH} states are saved; call restore() for each save()"
            )));
        }
        if self.stack.len() == self.stack.capacity() {
            let capacity = (self.stack.capacity() * 2).clamp(8, MAX_SAVE_DEPTH);
            self.stack_held
                .resize(vec_bytes::<DrawState>(capacity))
                .map_err(|over| over_limit("save()", "the saved states", over))?;
            self.stack.reserve_exact(capacity - self.stack.len());
        }
        let copy = self.state.duplicate()?;
        self.stack.push(copy);
        Ok(())
    }

    /// `restore()`; a no-op with nothing saved.
    pub fn restore(&mut self) {
        if let Some(state) = self.stack.pop() {
            self.state = state;
        }
    }

    /// `reset()`: a transparent bitmap and the initial state.
    pub fn reset(&mut self) {
        self.pixmap.fill(tiny_skia::Color::TRANSPARENT);
        self.reset_state();
    }

    pub fn fill_style(&self) -> &Style {
        &self.state.fill
    }

    pub fn stroke_style(&self) -> &Style {
        &self.state.stroke
    }

    pub fn set_fill_style(&mut self, style: Style) {
        self.state.fill = style;
    }

    pub fn set_stroke_style(&mut self, style: Style) {
        self.state.stroke = style;
    }

    pub fn global_alpha(&self) -> f64 {
        f64::from(self.state.global_alpha)
    }

    /// Ignored outside 0..=1, as the spec says.
    pub fn set_global_alpha(&mut self, alpha: f64) {
        if (0.0..=1.0).contains(&alpha) {
            self.state.global_alpha = narrow(alpha);
        }
    }

    pub fn composite(&self) -> CompositeOp {
        self.state.composite
    }

    pub fn set_composite(&mut self, op: CompositeOp) {
        self.state.composite = op;
    }

    pub fn line_width(&self) -> f64 {
        f64::from(self.state.line_width)
    }

    /// Ignored unless finite and positive.
    pub fn set_line_width(&mut self, width: f64) {
        if width.is_finite() && width > 0.0 {
            self.state.line_width = narrow(width);
        }
    }

    pub fn line_cap(&self) -> &'static str {
        match self.state.line_cap {
            LineCap::Butt => "butt",
            LineCap::Round => "round",
            LineCap::Square => "square",
        }
    }

    /// Unknown values are ignored.
    pub fn set_line_cap(&mut self, cap: &str) {
        self.state.line_cap = match cap {
            "butt" => LineCap::Butt,
            "round" => LineCap::Round,
            "square" => LineCap::Square,
            _ => return,
        };
    }

    pub fn line_join(&self) -> &'static str {
        match self.state.line_join {
            LineJoin::Miter | LineJoin::MiterClip => "miter",
            LineJoin::Round => "round",
            LineJoin::Bevel => "bevel",
        }
    }

    /// Unknown values are ignored.
    pub fn set_line_join(&mut self, join: &str) {
        self.state.line_join = match join {
            "miter" => LineJoin::Miter,
            "round" => LineJoin::Round,
            "bevel" => LineJoin::Bevel,
            _ => return,
        };
    }

    pub fn miter_limit(&self) -> f64 {
        f64::from(self.state.miter_limit)
    }

    /// Ignored unless finite and positive.
    pub fn set_miter_limit(&mut self, limit: f64) {
        if limit.is_finite() && limit > 0.0 {
            self.state.miter_limit = narrow(limit);
        }
    }

    /// `getLineDash()`.
    pub fn line_dash(&self) -> Vec<f64> {
        self.state.dash.iter().map(|d| f64::from(*d)).collect()
    }

    /// `setLineDash(segments)`: ignored if any is negative or not finite; an odd list is
    /// repeated to make it even. Refused past [`MAX_DASH_ENTRIES`] entries.
    pub fn set_line_dash(&mut self, segments: &[f64]) -> Result<(), CanvasError> {
        check_dash_entries(segments.len())?;
        if !segments.iter().all(|d| d.is_finite() && *d >= 0.0) {
            return Ok(());
        }
        let entries = segments.len() * (1 + segments.len() % 2);
        self.state
            .held
            .resize(DrawState::heap_bytes(entries, &self.state.font))
            .map_err(|over| over_limit("setLineDash()", "the dash list", over))?;
        let mut dash = Vec::with_capacity(entries);
        dash.extend(segments.iter().copied().map(narrow));
        if dash.len() < entries {
            dash.extend_from_within(..);
        }
        self.state.dash = dash;
        Ok(())
    }

    pub fn line_dash_offset(&self) -> f64 {
        f64::from(self.state.dash_offset)
    }

    pub fn set_line_dash_offset(&mut self, offset: f64) {
        if offset.is_finite() {
            self.state.dash_offset = narrow(offset);
        }
    }

    pub fn font(&self) -> &FontSpec {
        &self.state.font
    }

    /// Ignored if `font` is not a valid CSS font or longer than [`MAX_FONT_LENGTH`] bytes.
    pub fn set_font(&mut self, font: &str) -> Result<(), CanvasError> {
        if font.len() > MAX_FONT_LENGTH {
            return Ok(());
        }
        // The family is at most as long as the value: charged before it is copied.
        self.state
            .held
            .resize(vec_bytes::<f32>(self.state.dash.len()) + font.len())
            .map_err(|over| over_limit("font", "the font", over))?;
        if let Some(mut spec) = FontSpec::parse(font) {
            spec.family.shrink_to_fit();
            self.state.font = spec;
        }
        let bytes = DrawState::heap_bytes(self.state.dash.len(), &self.state.font);
        let _ = self.state.held.resize(bytes);
        Ok(())
    }

    pub fn text_align(&self) -> TextAlign {
        self.state.text_align
    }

    pub fn set_text_align(&mut self, align: TextAlign) {
        self.state.text_align = align;
    }

    pub fn text_baseline(&self) -> TextBaseline {
        self.state.text_baseline
    }

    pub fn set_text_baseline(&mut self, baseline: TextBaseline) {
        self.state.text_baseline = baseline;
    }

    pub fn image_smoothing(&self) -> bool {
        self.state.smoothing
    }

    pub fn set_image_smoothing(&mut self, enabled: bool) {
        self.state.smoothing = enabled;
    }

    // --- transforms ----------------------------------------------------------------------

    /// The current transform as `[a, b, c, d, e, f]`.
    pub fn transform_matrix(&self) -> [f64; 6] {
        let t = self.state.transform;
        [t.sx, t.ky, t.kx, t.sy, t.tx, t.ty].map(f64::from)
    }

    fn multiply(&mut self, by: Transform, args: &[f64]) {
        if args.iter().all(|v| v.is_finite()) {
            self.state.transform = self.state.transform.pre_concat(by);
        }
    }

    pub fn translate(&mut self, x: f64, y: f64) {
        self.multiply(Transform::from_translate(narrow(x), narrow(y)), &[x, y]);
    }

    pub fn scale(&mut self, x: f64, y: f64) {
        self.multiply(Transform::from_scale(narrow(x), narrow(y)), &[x, y]);
    }

    /// `rotate(angle)`, in radians, clockwise on screen.
    pub fn rotate(&mut self, angle: f64) {
        let (sin, cos) = angle.sin_cos();
        let (sin, cos) = (narrow(sin), narrow(cos));
        self.multiply(Transform::from_row(cos, sin, -sin, cos, 0.0, 0.0), &[angle]);
    }

    /// `transform(a, b, c, d, e, f)`.
    pub fn transform(&mut self, m: [f64; 6]) {
        let [a, b, c, d, e, f] = m.map(narrow);
        self.multiply(Transform::from_row(a, b, c, d, e, f), &m);
    }

    /// `setTransform(a, b, c, d, e, f)`.
    pub fn set_transform(&mut self, m: [f64; 6]) {
        if m.iter().all(|v| v.is_finite()) {
            let [a, b, c, d, e, f] = m.map(narrow);
            self.state.transform = Transform::from_row(a, b, c, d, e, f);
        }
    }

    pub fn reset_transform(&mut self) {
        self.state.transform = Transform::identity();
    }

    // --- paths ---------------------------------------------------------------------------

    pub fn begin_path(&mut self) {
        self.path = CanvasPath::new(&self.account);
    }

    pub fn close_path(&mut self) {
        self.path.close();
    }

    pub fn move_to(&mut self, x: f64, y: f64) -> Result<(), CanvasError> {
        self.path.move_to(&self.state.transform, x, y)
    }

    pub fn line_to(&mut self, x: f64, y: f64) -> Result<(), CanvasError> {
        self.path.line_to(&self.state.transform, x, y)
    }

    pub fn quadratic_curve_to(
        &mut self,
        cx: f64,
        cy: f64,
        x: f64,
        y: f64,
    ) -> Result<(), CanvasError> {
        self.path.quad_to(&self.state.transform, cx, cy, x, y)
    }

    pub fn bezier_curve_to(&mut self, c: [f64; 6]) -> Result<(), CanvasError> {
        let [c1x, c1y, c2x, c2y, x, y] = c;
        self.path
            .cubic_to(&self.state.transform, c1x, c1y, c2x, c2y, x, y)
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64) -> Result<(), CanvasError> {
        self.path.rect(&self.state.transform, x, y, w, h)
    }

    pub fn round_rect(
        &mut self,
        rect: (f64, f64, f64, f64),
        radii: CornerRadii,
    ) -> Result<(), CanvasError> {
        self.path.round_rect(&self.state.transform, rect, radii)
    }

    pub fn arc(
        &mut self,
        x: f64,
        y: f64,
        r: f64,
        start: f64,
        end: f64,
        ccw: bool,
    ) -> Result<(), CanvasError> {
        self.path
            .arc(&self.state.transform, x, y, r, start, end, ccw)
    }

    /// `ellipse(x, y, rx, ry, rotation, start, end, ccw)`.
    pub fn ellipse(&mut self, e: [f64; 7], ccw: bool) -> Result<(), CanvasError> {
        let [x, y, rx, ry, rotation, start, end] = e;
        self.path.ellipse(
            &self.state.transform,
            x,
            y,
            rx,
            ry,
            rotation,
            start,
            end,
            ccw,
        )
    }

    pub fn arc_to(
        &mut self,
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        r: f64,
    ) -> Result<(), CanvasError> {
        self.path.arc_to(&self.state.transform, x1, y1, x2, y2, r)
    }

    // --- drawing -------------------------------------------------------------------------

    /// The paint for `style` whose shader maps user space by `shader_transform`; `None` when the
    /// style paints nothing.
    fn paint(&self, style: &Style, shader_transform: Transform) -> Option<Paint<'static>> {
        let alpha = self.state.global_alpha;
        let shader = match style {
            Style::Color(color) => Shader::SolidColor(color.to_skia(alpha)),
            Style::Gradient(gradient) => gradient.borrow().shader(alpha, shader_transform)?,
        };
        Some(Paint {
            shader,
            blend_mode: self.state.composite.0,
            anti_alias: true,
            ..Paint::default()
        })
    }

    /// Paints `path` under `transform` with `paint` (whose pixels cost `cost`): filled by
    /// `rule`, or stroked with the line styles.
    fn paint_path(
        &mut self,
        call: &str,
        path: &tiny_skia::Path,
        (paint, cost): (&Paint<'_>, usize),
        rule: Option<FillRule>,
        transform: Transform,
    ) -> Result<(), CanvasError> {
        let work = Work {
            account: &self.account,
            interrupted: &*self.interrupted,
            call,
        };
        let target = Target {
            pixmap: &mut self.pixmap,
            clip: self.state.clip.as_ref().map(|c| &c.mask),
        };
        match rule {
            Some(rule) => raster::fill(target, path, (paint, cost), rule, transform, &work),
            None => {
                let (stroke, dash) = {
                    let dash = self
                        .state
                        .dash
                        .iter()
                        .any(|d| *d > 0.0)
                        .then_some((self.state.dash.as_slice(), self.state.dash_offset));
                    let stroke = Stroke {
                        width: self.state.line_width,
                        miter_limit: self.state.miter_limit,
                        line_cap: self.state.line_cap,
                        line_join: self.state.line_join,
                        dash: None,
                    };
                    (stroke, dash)
                };
                raster::stroke(
                    target,
                    path,
                    (paint, cost),
                    (&stroke, dash),
                    transform,
                    &work,
                )
            }
        }
    }

    /// The paint of the fill or stroke style and what its pixels cost, with the charge for
    /// its shader's copy of a gradient's stops; `None` when it paints nothing.
    fn style_paint(
        &self,
        fill: bool,
        shader_transform: Transform,
    ) -> Result<Option<(Paint<'static>, usize, Charge)>, CanvasError> {
        let style = if fill {
            &self.state.fill
        } else {
            &self.state.stroke
        };
        let bytes = match style {
            Style::Gradient(gradient) => gradient.try_borrow().map_or(0, |g| g.shader_bytes()),
            Style::Color(_) => 0,
        };
        let held = self
            .account
            .charge(bytes)
            .map_err(|over| over_limit("drawing", "the gradient's stops", over))?;
        Ok(self
            .paint(style, shader_transform)
            .map(|paint| (paint, style.pixel_cost(), held)))
    }

    /// Fills or strokes `path` (user space) with the fill or stroke style under the current
    /// transform.
    fn fill_user_path(
        &mut self,
        call: &str,
        path: &tiny_skia::Path,
        fill: bool,
        rule: FillRule,
    ) -> Result<(), CanvasError> {
        let Some((paint, cost, _stops)) = self.style_paint(fill, Transform::identity())? else {
            return Ok(());
        };
        let transform = self.state.transform;
        self.paint_path(call, path, (&paint, cost), fill.then_some(rule), transform)
    }

    fn user_rect(x: f64, y: f64, w: f64, h: f64) -> Option<tiny_skia::Path> {
        if ![x, y, w, h].iter().all(|v| v.is_finite()) || w == 0.0 && h == 0.0 {
            return None;
        }
        let (x, w) = if w < 0.0 { (x + w, -w) } else { (x, w) };
        let (y, h) = if h < 0.0 { (y + h, -h) } else { (y, h) };
        let mut builder = tiny_skia::PathBuilder::new();
        builder.move_to(narrow(x), narrow(y));
        builder.line_to(narrow(x + w), narrow(y));
        builder.line_to(narrow(x + w), narrow(y + h));
        builder.line_to(narrow(x), narrow(y + h));
        builder.close();
        builder.finish()
    }

    /// `fillRect(x, y, w, h)`.
    pub fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64) -> Result<(), CanvasError> {
        if w == 0.0 || h == 0.0 {
            return Ok(());
        }
        match Self::user_rect(x, y, w, h) {
            Some(rect) => self.fill_user_path("fillRect()", &rect, true, FillRule::Winding),
            None => Ok(()),
        }
    }

    /// `strokeRect(x, y, w, h)`: a zero width or height strokes a line.
    pub fn stroke_rect(&mut self, x: f64, y: f64, w: f64, h: f64) -> Result<(), CanvasError> {
        match Self::user_rect(x, y, w, h) {
            Some(rect) => self.fill_user_path("strokeRect()", &rect, false, FillRule::Winding),
            None => Ok(()),
        }
    }

    /// `clearRect(x, y, w, h)`: transparent black, under the transform and clip.
    pub fn clear_rect(&mut self, x: f64, y: f64, w: f64, h: f64) -> Result<(), CanvasError> {
        if w == 0.0 || h == 0.0 {
            return Ok(());
        }
        let Some(rect) = Self::user_rect(x, y, w, h) else {
            return Ok(());
        };
        // Destination-out with opaque paint clears under the coverage: tiny-skia's `Clear`
        // ignores the clip mask.
        let paint = Paint {
            blend_mode: BlendMode::DestinationOut,
            anti_alias: true,
            ..Paint::default()
        };
        let transform = self.state.transform;
        self.paint_path(
            "clearRect()",
            &rect,
            (&paint, 1),
            Some(FillRule::Winding),
            transform,
        )
    }

    /// The current path, copied for tiny-skia, with the charge for the copy.
    fn current_path(&self, call: &str) -> Result<Option<(tiny_skia::Path, Charge)>, CanvasError> {
        let held = self
            .account
            .charge(self.path.bytes())
            .map_err(|over| over_limit(call, "the path's copy", over))?;
        Ok(self.path.to_path().map(|path| (path, held)))
    }

    /// `fill(fillRule)`: the current path, in device space.
    pub fn fill(&mut self, even_odd: bool) -> Result<(), CanvasError> {
        let Some((path, _copy)) = self.current_path("fill()")? else {
            return Ok(());
        };
        let Some((paint, cost, _stops)) = self.style_paint(true, self.state.transform)? else {
            return Ok(());
        };
        let rule = if even_odd {
            FillRule::EvenOdd
        } else {
            FillRule::Winding
        };
        self.paint_path(
            "fill()",
            &path,
            (&paint, cost),
            Some(rule),
            Transform::identity(),
        )
    }

    /// `stroke()`: the current path, stroked with the line styles of the current transform.
    pub fn stroke(&mut self) -> Result<(), CanvasError> {
        let Some((path, _copy)) = self.current_path("stroke()")? else {
            return Ok(());
        };
        let Some(user) = self
            .state
            .transform
            .invert()
            .and_then(|inverse| path.transform(inverse))
        else {
            return Ok(());
        };
        self.fill_user_path("stroke()", &user, false, FillRule::Winding)
    }

    /// `clip(fillRule)`: intersects the clip region with the current path.
    pub fn clip(&mut self, even_odd: bool) -> Result<(), CanvasError> {
        let (w, h) = (self.width(), self.height());
        let bytes = w as usize * h as usize;
        let pixels = self.account.charge(bytes).map_err(|over| {
            CanvasError::limit(
                "memoryLimitBytes",
                format!(
                    "clip(): a clip mask needs {} bytes, and only {} are left under memoryLimitBytes",
                    over.requested, over.available
                ),
            )
        })?;
        let mut mask =
            Mask::new(w, h).ok_or_else(|| CanvasError::range("clip(): cannot allocate a mask"))?;
        if let Some((path, _copy)) = self.current_path("clip()")? {
            let rule = if even_odd {
                FillRule::EvenOdd
            } else {
                FillRule::Winding
            };
            let work = Work {
                account: &self.account,
                interrupted: &*self.interrupted,
                call: "clip()",
            };
            raster::fill_mask(&mut mask, &path, rule, &work)?;
        }
        if let Some(old) = &self.state.clip {
            for (new, old) in mask.data_mut().iter_mut().zip(old.mask.data()) {
                *new = tiny_skia_mul(*new, *old);
            }
        }
        self.state.clip = Some(Rc::new(Clip {
            mask,
            _pixels: pixels,
        }));
        Ok(())
    }

    // --- text ----------------------------------------------------------------------------

    /// `fillText(text, x, y, maxWidth)` or, with `fill` false, `strokeText`.
    pub fn draw_text(
        &mut self,
        text: &str,
        x: f64,
        y: f64,
        max_width: Option<f64>,
        fill: bool,
    ) -> Result<(), CanvasError> {
        if !x.is_finite() || !y.is_finite() || text.is_empty() {
            return Ok(());
        }
        // A maxWidth that is not a positive number draws nothing.
        if max_width.is_some_and(|max| max.is_nan() || max <= 0.0) {
            return Ok(());
        }
        let call = if fill { "fillText()" } else { "strokeText()" };
        let interrupted = Rc::clone(&self.interrupted);
        let font = FontSpec {
            family: String::new(),
            ..self.state.font
        };
        let line = TextLine::new(&font, text, &*interrupted)?;
        let squeeze = match max_width {
            Some(max) if line.width > max => max / line.width,
            _ => 1.0,
        };
        let margin = if fill {
            1.0
        } else {
            self.state.line_width + 1.0
        };
        let transform = self.state.transform;
        let (w, h) = (self.width() as f32, self.height() as f32);
        let visible = |rect: Rect| {
            let corners = [
                (rect.left(), rect.top()),
                (rect.right(), rect.top()),
                (rect.left(), rect.bottom()),
                (rect.right(), rect.bottom()),
            ];
            let mut points = corners.map(|(x, y)| tiny_skia::Point::from_xy(x, y));
            transform.map_points(&mut points);
            let scale = transform.get_scale();
            let m = margin * scale.0.max(scale.1).max(1.0);
            let (mut l, mut t, mut r, mut b) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
            for p in points {
                l = l.min(p.x);
                t = t.min(p.y);
                r = r.max(p.x);
                b = b.max(p.y);
            }
            r + m >= 0.0 && b + m >= 0.0 && l - m <= w && t - m <= h
        };
        let mut outline = self.account.empty_charge();
        let outlines = line.outlines(
            &font,
            (x, y),
            (self.state.text_align, self.state.text_baseline),
            squeeze,
            &visible,
            (&*interrupted, &mut |points| {
                outline
                    .resize(points.next_power_of_two() * raster::PATH_BYTES_PER_POINT)
                    .map_err(|over| over_limit(call, "the glyph outlines", over))
            }),
        )?;
        match outlines {
            Some(path) => self.fill_user_path(call, &path, fill, FillRule::Winding),
            None => Ok(()),
        }
    }

    /// `measureText(text)`.
    pub fn measure_text(&self, text: &str) -> Result<TextMetrics, CanvasError> {
        let font = &self.state.font;
        let line = TextLine::new(font, text, &*self.interrupted)?;
        line.metrics(
            font,
            self.state.text_align,
            self.state.text_baseline,
            &*self.interrupted,
        )
    }
}

/// Refuses a dash list longer than [`MAX_DASH_ENTRIES`].
pub fn check_dash_entries(entries: usize) -> Result<(), CanvasError> {
    if entries > MAX_DASH_ENTRIES {
        return Err(CanvasError::range(format!(
            "setLineDash(): a line dash has at most {MAX_DASH_ENTRIES} entries, got {entries}"
        )));
    }
    Ok(())
}

/// `a × b / 255`, rounded, as tiny-skia multiplies coverage.
fn tiny_skia_mul(a: u8, b: u8) -> u8 {
    let product = u32::from(a) * u32::from(b) + 128;
    #[allow(clippy::cast_possible_truncation, reason = "at most 255")]
    let result = ((product + (product >> 8)) >> 8) as u8;
    result
}
