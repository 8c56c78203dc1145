//! One canvas and its 2D context: the bitmap (premultiplied RGBA, as browsers keep it), the
//! drawing state and its `save()`/`restore()` stack, the current path, and every drawing
//! operation. Methods take the Canvas API's arguments already converted to Rust values and
//! follow the spec's rules for them (non-finite numbers make a call a no-op, invalid style
//! values are ignored, sizes are checked).

use std::cell::RefCell;
use std::rc::Rc;

use tiny_skia::{
    BlendMode, FillRule, FilterQuality, GradientStop, LineCap, LineJoin, LinearGradient, Mask,
    Paint, Pattern, Pixmap, RadialGradient, Rect, Shader, SpreadMode, Stroke, StrokeDash,
    Transform,
};

use super::budget::{PixelBudget, Reservation};
use super::color::Rgba;
use super::font::{FontSpec, TextAlign, TextBaseline, TextLine, TextMetrics};
use super::path::{CanvasPath, CornerRadii};
use super::{CanvasError, Image};

/// Bitmaps up to this size (a megapixel) are PNG-compressed at the balanced level.
const BALANCED_PNG_BYTES: usize = 4 << 20;

/// The deepest `save()` nesting: each level copies the drawing state.
pub const MAX_SAVE_DEPTH: usize = 4096;

/// A `fillStyle` or `strokeStyle`.
#[derive(Debug, Clone)]
pub enum Style {
    Color(Rgba),
    /// Shared with the sandbox's `CanvasGradient` object: stops added later apply to later
    /// drawing, as in browsers.
    Gradient(Rc<RefCell<Gradient>>),
}

/// A `CanvasGradient`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    kind: GradientKind,
    stops: Vec<(f32, Rgba)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum GradientKind {
    Linear([f32; 4]),
    Radial([f32; 6]),
}

#[allow(clippy::cast_possible_truncation, reason = "tiny-skia draws in f32")]
fn narrow(value: f64) -> f32 {
    value as f32
}

impl Gradient {
    /// `createLinearGradient(x0, y0, x1, y1)`; `None` for non-finite arguments (a TypeError).
    pub fn linear(x0: f64, y0: f64, x1: f64, y1: f64) -> Result<Self, CanvasError> {
        let points = [x0, y0, x1, y1];
        if !points.iter().all(|v| v.is_finite()) {
            return Err(CanvasError::type_error(
                "createLinearGradient(): every coordinate must be a finite number",
            ));
        }
        Ok(Self {
            kind: GradientKind::Linear(points.map(narrow)),
            stops: Vec::new(),
        })
    }

    /// `createRadialGradient(x0, y0, r0, x1, y1, r1)`.
    pub fn radial(circles: [f64; 6]) -> Result<Self, CanvasError> {
        if !circles.iter().all(|v| v.is_finite()) {
            return Err(CanvasError::type_error(
                "createRadialGradient(): every argument must be a finite number",
            ));
        }
        if circles[2] < 0.0 || circles[5] < 0.0 {
            return Err(CanvasError::index_size(
                "createRadialGradient(): a radius must not be negative",
            ));
        }
        Ok(Self {
            kind: GradientKind::Radial(circles.map(narrow)),
            stops: Vec::new(),
        })
    }

    /// `addColorStop(offset, color)`.
    pub fn add_color_stop(&mut self, offset: f64, color: &str) -> Result<(), CanvasError> {
        if !(0.0..=1.0).contains(&offset) {
            return Err(CanvasError::index_size(format!(
                "addColorStop(): the offset must be between 0 and 1, got {offset}"
            )));
        }
        let Some(color) = Rgba::parse(color) else {
            return Err(CanvasError::range(format!(
                "addColorStop(): '{color}' is not a CSS colour"
            )));
        };
        let offset = narrow(offset);
        // Stops at the same offset keep the order they were added in.
        let at = self.stops.partition_point(|(o, _)| *o <= offset);
        self.stops.insert(at, (offset, color));
        Ok(())
    }

    /// The shader, in user space mapped by `transform`; `None` when nothing is painted (no
    /// stops, or a degenerate gradient, which the spec paints as nothing).
    fn shader(&self, alpha: f32, transform: Transform) -> Option<Shader<'static>> {
        let stops: Vec<GradientStop> = self
            .stops
            .iter()
            .map(|(offset, color)| GradientStop::new(*offset, color.to_skia(alpha)))
            .collect();
        match (self.kind, stops.len()) {
            (_, 0) => None,
            (GradientKind::Linear([x0, y0, x1, y1]), _) => {
                if x0 == x1 && y0 == y1 {
                    return None;
                }
                LinearGradient::new(
                    (x0, y0).into(),
                    (x1, y1).into(),
                    stops,
                    SpreadMode::Pad,
                    transform,
                )
            }
            (GradientKind::Radial([x0, y0, r0, x1, y1, r1]), _) => {
                if x0 == x1 && y0 == y1 && r0 == r1 {
                    return None;
                }
                RadialGradient::new(
                    (x0, y0).into(),
                    r0,
                    (x1, y1).into(),
                    r1,
                    stops,
                    SpreadMode::Pad,
                    transform,
                )
            }
        }
    }
}

/// `globalCompositeOperation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositeOp(BlendMode);

impl CompositeOp {
    /// Every operation the canvas knows, by name.
    pub const ALL: [(&'static str, BlendMode); 26] = [
        ("source-over", BlendMode::SourceOver),
        ("source-in", BlendMode::SourceIn),
        ("source-out", BlendMode::SourceOut),
        ("source-atop", BlendMode::SourceAtop),
        ("destination-over", BlendMode::DestinationOver),
        ("destination-in", BlendMode::DestinationIn),
        ("destination-out", BlendMode::DestinationOut),
        ("destination-atop", BlendMode::DestinationAtop),
        ("lighter", BlendMode::Plus),
        ("copy", BlendMode::Source),
        ("xor", BlendMode::Xor),
        ("multiply", BlendMode::Multiply),
        ("screen", BlendMode::Screen),
        ("overlay", BlendMode::Overlay),
        ("darken", BlendMode::Darken),
        ("lighten", BlendMode::Lighten),
        ("color-dodge", BlendMode::ColorDodge),
        ("color-burn", BlendMode::ColorBurn),
        ("hard-light", BlendMode::HardLight),
        ("soft-light", BlendMode::SoftLight),
        ("difference", BlendMode::Difference),
        ("exclusion", BlendMode::Exclusion),
        ("hue", BlendMode::Hue),
        ("saturation", BlendMode::Saturation),
        ("color", BlendMode::Color),
        ("luminosity", BlendMode::Luminosity),
    ];

    /// The operation called `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, mode)| Self(*mode))
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, mode)| *mode == self.0)
            .map_or("source-over", |(name, _)| name)
    }
}

/// A clip region: a coverage mask over the whole bitmap.
struct Clip {
    mask: Mask,
    _pixels: Reservation,
}

impl std::fmt::Debug for Clip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clip")
    }
}

/// What `save()` saves.
#[derive(Debug, Clone)]
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
}

impl Default for DrawState {
    fn default() -> Self {
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
        }
    }
}

/// A rectangle of pixels as `getImageData`/`putImageData` address it: whole numbers, possibly
/// negative or reaching outside the bitmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDataRect {
    pub x: i64,
    pub y: i64,
    pub width: u32,
    pub height: u32,
}

impl ImageDataRect {
    /// The rectangle `(x, y, w, h)` with negative sizes flipped, as the spec does; refused when
    /// a side is 0 or larger than `max_side`.
    pub fn new(x: i64, y: i64, w: i64, h: i64, max_side: u32) -> Result<Self, CanvasError> {
        if w == 0 || h == 0 {
            return Err(CanvasError::index_size(
                "the width and height of image data must not be 0",
            ));
        }
        let (x, w) = if w < 0 { (x + w, -w) } else { (x, w) };
        let (y, h) = if h < 0 { (y + h, -h) } else { (y, h) };
        let width = u32::try_from(w).ok().filter(|w| *w <= max_side);
        let height = u32::try_from(h).ok().filter(|h| *h <= max_side);
        match (width, height) {
            (Some(width), Some(height)) => Ok(Self {
                x,
                y,
                width,
                height,
            }),
            _ => Err(CanvasError::limit(
                "maxCanvasSize",
                format!("image data of {w}×{h} pixels is larger than maxCanvasSize ({max_side} per side)"),
            )),
        }
    }

    /// Bytes of RGBA data.
    pub fn bytes(&self) -> usize {
        self.width as usize * self.height as usize * 4
    }
}

/// A canvas: its bitmap and its 2D context.
pub struct Canvas {
    pixmap: Pixmap,
    /// The budget held for `pixmap` (`None` only if it could not be taken back after a failed
    /// resize, which cannot happen: the same bytes were just released).
    pixels: Option<Reservation>,
    budget: Rc<dyn PixelBudget>,
    max_side: u32,
    state: DrawState,
    stack: Vec<DrawState>,
    path: CanvasPath,
    interrupted: Rc<dyn Fn() -> bool>,
}

impl std::fmt::Debug for Canvas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Canvas({}×{})", self.width(), self.height())
    }
}

/// Checks a canvas size and reserves its bitmap.
fn allocate(
    budget: &Rc<dyn PixelBudget>,
    width: f64,
    height: f64,
    max_side: u32,
) -> Result<(Pixmap, Reservation), CanvasError> {
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
    let reservation = Reservation::take(budget, bytes).map_err(|over| {
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
    Ok((pixmap, reservation))
}

impl Canvas {
    /// A transparent canvas of `width`×`height`, whose pixels `budget` pays for;
    /// `interrupted` tells long operations (text) to stop.
    pub fn new(
        width: f64,
        height: f64,
        max_side: u32,
        budget: Rc<dyn PixelBudget>,
        interrupted: Rc<dyn Fn() -> bool>,
    ) -> Result<Self, CanvasError> {
        let (pixmap, pixels) = allocate(&budget, width, height, max_side)?;
        Ok(Self {
            pixmap,
            pixels: Some(pixels),
            budget,
            max_side,
            state: DrawState::default(),
            stack: Vec::new(),
            path: CanvasPath::new(),
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

    /// Setting `width` or `height`: a new transparent bitmap, and the context reset. On
    /// failure the canvas keeps its bitmap and state.
    pub fn resize(&mut self, width: f64, height: f64) -> Result<(), CanvasError> {
        let old_bytes = self.pixmap.data().len();
        // The old bitmap's budget is given back first: a canvas may be resized to any size that
        // fits once the old bitmap is gone.
        self.pixels = None;
        let (pixmap, pixels) = match allocate(&self.budget, width, height, self.max_side) {
            Ok(allocated) => allocated,
            Err(error) => {
                self.pixels = Reservation::take(&self.budget, old_bytes).ok();
                return Err(error);
            }
        };
        self.pixmap = pixmap;
        self.pixels = Some(pixels);
        self.state = DrawState::default();
        self.stack.clear();
        self.path = CanvasPath::new();
        Ok(())
    }

    /// The bitmap as PNG (straight-alpha RGBA). Up to a megapixel it is compressed at png's
    /// balanced level (a 640×400 chart: 16 KB in about 8 ms); larger bitmaps use its fast
    /// fdeflate mode, about five times quicker for files two to six times larger, so that a
    /// huge canvas does not hold the run's answer for seconds.
    pub fn to_image(&self) -> Result<Image, CanvasError> {
        let failed = |error: png::EncodingError| {
            CanvasError::invalid_state(format!("PNG encoding failed: {error}"))
        };
        let rgba = self.pixmap.clone().take_demultiplied();
        let mut data = Vec::new();
        let mut encoder = png::Encoder::new(&mut data, self.width(), self.height());
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(if self.pixmap.data().len() <= BALANCED_PNG_BYTES {
            png::Compression::Balanced
        } else {
            png::Compression::Fast
        });
        let mut writer = encoder.write_header().map_err(failed)?;
        writer.write_image_data(&rgba).map_err(failed)?;
        writer.finish().map_err(failed)?;
        Ok(Image {
            mime_type: Image::PNG,
            width: self.width(),
            height: self.height(),
            data,
        })
    }

    // --- state ---------------------------------------------------------------------------

    /// `save()`.
    pub fn save(&mut self) -> Result<(), CanvasError> {
        if self.stack.len() >= MAX_SAVE_DEPTH {
            return Err(CanvasError::range(format!(
                "save(): more than {MAX_SAVE_DEPTH} states are saved; call restore() for each save()"
            )));
        }
        self.stack.push(self.state.clone());
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
        self.state = DrawState::default();
        self.stack.clear();
        self.path = CanvasPath::new();
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
    /// repeated to make it even.
    pub fn set_line_dash(&mut self, segments: &[f64]) {
        if !segments.iter().all(|d| d.is_finite() && *d >= 0.0) {
            return;
        }
        let mut dash: Vec<f32> = segments.iter().copied().map(narrow).collect();
        if dash.len() % 2 == 1 {
            dash.extend_from_within(..);
        }
        self.state.dash = dash;
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

    /// Ignored if `font` is not a valid CSS font.
    pub fn set_font(&mut self, font: &str) {
        if let Some(spec) = FontSpec::parse(font) {
            self.state.font = spec;
        }
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
        self.path = CanvasPath::new();
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

    fn stroke_settings(&self) -> Stroke {
        let dash = if self.state.dash.iter().any(|d| *d > 0.0) {
            StrokeDash::new(self.state.dash.clone(), self.state.dash_offset)
        } else {
            None
        };
        Stroke {
            width: self.state.line_width,
            miter_limit: self.state.miter_limit,
            line_cap: self.state.line_cap,
            line_join: self.state.line_join,
            dash,
        }
    }

    /// Fills `path` (user space) with `style` under the current transform.
    fn fill_user_path(&mut self, path: &tiny_skia::Path, fill: bool, rule: FillRule) {
        let style = if fill {
            &self.state.fill
        } else {
            &self.state.stroke
        };
        let Some(paint) = self.paint(style, Transform::identity()) else {
            return;
        };
        let transform = self.state.transform;
        if fill {
            self.pixmap.fill_path(
                path,
                &paint,
                rule,
                transform,
                self.state.clip.as_ref().map(|c| &c.mask),
            );
        } else {
            let stroke = self.stroke_settings();
            self.pixmap.stroke_path(
                path,
                &paint,
                &stroke,
                transform,
                self.state.clip.as_ref().map(|c| &c.mask),
            );
        }
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
    pub fn fill_rect(&mut self, x: f64, y: f64, w: f64, h: f64) {
        if w == 0.0 || h == 0.0 {
            return;
        }
        if let Some(rect) = Self::user_rect(x, y, w, h) {
            self.fill_user_path(&rect, true, FillRule::Winding);
        }
    }

    /// `strokeRect(x, y, w, h)`: a zero width or height strokes a line.
    pub fn stroke_rect(&mut self, x: f64, y: f64, w: f64, h: f64) {
        if let Some(rect) = Self::user_rect(x, y, w, h) {
            self.fill_user_path(&rect, false, FillRule::Winding);
        }
    }

    /// `clearRect(x, y, w, h)`: transparent black, under the transform and clip.
    pub fn clear_rect(&mut self, x: f64, y: f64, w: f64, h: f64) {
        if w == 0.0 || h == 0.0 {
            return;
        }
        let Some(rect) = Self::user_rect(x, y, w, h) else {
            return;
        };
        // Destination-out with opaque paint clears under the coverage: tiny-skia's `Clear`
        // ignores the clip mask.
        let paint = Paint {
            blend_mode: BlendMode::DestinationOut,
            anti_alias: true,
            ..Paint::default()
        };
        let transform = self.state.transform;
        self.pixmap.fill_path(
            &rect,
            &paint,
            FillRule::Winding,
            transform,
            self.state.clip.as_ref().map(|c| &c.mask),
        );
    }

    /// `fill(fillRule)`: the current path, in device space.
    pub fn fill(&mut self, even_odd: bool) {
        let Some(path) = self.path.to_path() else {
            return;
        };
        let Some(paint) = self.paint(&self.state.fill, self.state.transform) else {
            return;
        };
        let rule = if even_odd {
            FillRule::EvenOdd
        } else {
            FillRule::Winding
        };
        self.pixmap.fill_path(
            &path,
            &paint,
            rule,
            Transform::identity(),
            self.state.clip.as_ref().map(|c| &c.mask),
        );
    }

    /// `stroke()`: the current path, stroked with the line styles of the current transform.
    pub fn stroke(&mut self) {
        let Some(path) = self.path.to_path() else {
            return;
        };
        let Some(user) = self
            .state
            .transform
            .invert()
            .and_then(|inverse| path.transform(inverse))
        else {
            return;
        };
        self.fill_user_path(&user, false, FillRule::Winding);
    }

    /// `clip(fillRule)`: intersects the clip region with the current path.
    pub fn clip(&mut self, even_odd: bool) -> Result<(), CanvasError> {
        let (w, h) = (self.width(), self.height());
        let bytes = w as usize * h as usize;
        let pixels = Reservation::take(&self.budget, bytes).map_err(|over| {
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
        if let Some(path) = self.path.to_path() {
            let rule = if even_odd {
                FillRule::EvenOdd
            } else {
                FillRule::Winding
            };
            mask.fill_path(&path, rule, true, Transform::identity());
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
        let interrupted = Rc::clone(&self.interrupted);
        let font = self.state.font.clone();
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
        let outlines = line.outlines(
            &font,
            (x, y),
            self.state.text_align,
            self.state.text_baseline,
            squeeze,
            &visible,
            &*interrupted,
        )?;
        if let Some(path) = outlines {
            self.fill_user_path(&path, fill, FillRule::Winding);
        }
        Ok(())
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

    // --- pixels --------------------------------------------------------------------------

    /// `getImageData`: straight-alpha RGBA of `rect`, transparent black outside the bitmap.
    pub fn get_image_data(&self, rect: ImageDataRect) -> Vec<u8> {
        let mut data = vec![0; rect.bytes()];
        let (w, h) = (i64::from(self.width()), i64::from(self.height()));
        let pixels = self.pixmap.pixels();
        for row in 0..i64::from(rect.height) {
            let sy = rect.y + row;
            if !(0..h).contains(&sy) {
                continue;
            }
            let from = rect.x.max(0);
            let to = (rect.x + i64::from(rect.width)).min(w);
            for sx in from..to {
                #[allow(
                    clippy::cast_sign_loss,
                    clippy::cast_possible_truncation,
                    reason = "inside the bitmap and the rectangle"
                )]
                let (source, target) = (
                    (sy * w + sx) as usize,
                    ((row * i64::from(rect.width) + sx - rect.x) * 4) as usize,
                );
                let color = pixels[source].demultiply();
                data[target..target + 4].copy_from_slice(&[
                    color.red(),
                    color.green(),
                    color.blue(),
                    color.alpha(),
                ]);
            }
        }
        data
    }

    /// `putImageData(data, dx, dy, dirtyX, dirtyY, dirtyWidth, dirtyHeight)`: copies the dirty
    /// part of `width`×`height` straight RGBA `data` to `(dx, dy)`, ignoring the transform,
    /// alpha, compositing and clip, as the spec says.
    pub fn put_image_data(
        &mut self,
        (data, width, height): (&[u8], u32, u32),
        (dx, dy): (i64, i64),
        dirty: Option<(i64, i64, i64, i64)>,
    ) -> Result<(), CanvasError> {
        if data.len() != width as usize * height as usize * 4 {
            return Err(CanvasError::invalid_state(
                "putImageData(): the image data's length does not match its width and height",
            ));
        }
        let (mut x0, mut y0, mut dw, mut dh) =
            dirty.unwrap_or((0, 0, i64::from(width), i64::from(height)));
        if dw < 0 {
            x0 += dw;
            dw = -dw;
        }
        if dh < 0 {
            y0 += dh;
            dh = -dh;
        }
        let (x1, y1) = (
            (x0 + dw).min(i64::from(width)),
            (y0 + dh).min(i64::from(height)),
        );
        let (x0, y0) = (x0.max(0), y0.max(0));
        let (w, h) = (i64::from(self.width()), i64::from(self.height()));
        let pixels = self.pixmap.pixels_mut();
        for sy in y0..y1 {
            let ty = dy + sy;
            if !(0..h).contains(&ty) {
                continue;
            }
            for sx in x0..x1 {
                let tx = dx + sx;
                if !(0..w).contains(&tx) {
                    continue;
                }
                #[allow(
                    clippy::cast_sign_loss,
                    clippy::cast_possible_truncation,
                    reason = "inside the bitmap and the data"
                )]
                let (source, target) = (
                    ((sy * i64::from(width) + sx) * 4) as usize,
                    (ty * w + tx) as usize,
                );
                let [r, g, b, a] = [0, 1, 2, 3].map(|i| data[source + i]);
                pixels[target] = tiny_skia::ColorU8::from_rgba(r, g, b, a).premultiply();
            }
        }
        Ok(())
    }

    /// A snapshot of the bitmap (`drawImage` of a canvas onto itself draws from one).
    pub fn snapshot(&self) -> Pixmap {
        self.pixmap.clone()
    }

    /// The bitmap, for drawing it onto another canvas.
    pub fn bitmap(&self) -> &Pixmap {
        &self.pixmap
    }

    /// `drawImage(source, sx, sy, sw, sh, dx, dy, dw, dh)` with a canvas as the source.
    pub fn draw_image(&mut self, source: &Pixmap, src: [f64; 4], dst: [f64; 4]) {
        if !src.iter().chain(dst.iter()).all(|v| v.is_finite()) {
            return;
        }
        let normalise = |[x, y, w, h]: [f64; 4]| {
            let (x, w) = if w < 0.0 { (x + w, -w) } else { (x, w) };
            let (y, h) = if h < 0.0 { (y + h, -h) } else { (y, h) };
            [x, y, w, h]
        };
        let [mut sx, mut sy, mut sw, mut sh] = normalise(src);
        let [mut dx, mut dy, mut dw, mut dh] = normalise(dst);
        if sw == 0.0 || sh == 0.0 || dw == 0.0 || dh == 0.0 {
            return;
        }
        // Clip the source rectangle to the source bitmap, and the destination with it.
        let (scale_x, scale_y) = (dw / sw, dh / sh);
        let (bw, bh) = (f64::from(source.width()), f64::from(source.height()));
        if sx < 0.0 {
            dx -= sx * scale_x;
            dw += sx * scale_x;
            sw += sx;
            sx = 0.0;
        }
        if sy < 0.0 {
            dy -= sy * scale_y;
            dh += sy * scale_y;
            sh += sy;
            sy = 0.0;
        }
        if sx + sw > bw {
            dw -= (sx + sw - bw) * scale_x;
            sw = bw - sx;
        }
        if sy + sh > bh {
            dh -= (sy + sh - bh) * scale_y;
            sh = bh - sy;
        }
        if sw <= 0.0 || sh <= 0.0 || dw <= 0.0 || dh <= 0.0 {
            return;
        }
        let quality = if self.state.smoothing {
            FilterQuality::Bilinear
        } else {
            FilterQuality::Nearest
        };
        let pattern_transform = Transform::from_row(
            narrow(scale_x),
            0.0,
            0.0,
            narrow(scale_y),
            narrow(dx - sx * scale_x),
            narrow(dy - sy * scale_y),
        );
        let paint = Paint {
            shader: Pattern::new(
                source.as_ref(),
                SpreadMode::Pad,
                quality,
                self.state.global_alpha,
                pattern_transform,
            ),
            blend_mode: self.state.composite.0,
            anti_alias: true,
            ..Paint::default()
        };
        let Some(rect) = Self::user_rect(dx, dy, dw, dh) else {
            return;
        };
        let transform = self.state.transform;
        self.pixmap.fill_path(
            &rect,
            &paint,
            FillRule::Winding,
            transform,
            self.state.clip.as_ref().map(|c| &c.mask),
        );
    }

    /// The colour of one pixel, straight alpha (for tests and diagnostics).
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        let color = self.pixmap.pixel(x, y)?.demultiply();
        Some([color.red(), color.green(), color.blue(), color.alpha()])
    }
}

/// `a × b / 255`, rounded, as tiny-skia multiplies coverage.
fn tiny_skia_mul(a: u8, b: u8) -> u8 {
    let product = u32::from(a) * u32::from(b) + 128;
    #[allow(clippy::cast_possible_truncation, reason = "at most 255")]
    let result = ((product + (product >> 8)) >> 8) as u8;
    result
}
