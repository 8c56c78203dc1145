//! The 2D context in the sandbox (`CanvasRenderingContext2D`): every member of the Canvas API
//! this canvas implements, as methods of one rquickjs class over the canvas's renderer (the
//! members it does not implement are in `stubs.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::class::{Trace, Tracer};
use rquickjs::function::{Opt, Rest};
use rquickjs::{Class, Coerced, Ctx, Exception, JsLifetime, Object, Result, Value};

use super::{
    throw, unsupported, with_canvas, with_clamped_bytes, CanvasEnv, JsCanvas, JsGradient,
    JsImageData, Short, Surface, MAX_COLOR_LENGTH, MAX_KEYWORD_LENGTH,
};
use crate::canvas::{
    check_dash_entries, Canvas, CanvasError, CompositeOp, CornerRadii, Gradient, ImageDataRect,
    Rgba, Style, TextAlign, TextBaseline, MAX_FONT_LENGTH,
};
use crate::engine::realm::globals::named_error;

/// The 2D context of a canvas.
#[derive(JsLifetime)]
#[rquickjs::class(rename = "CanvasRenderingContext2D")]
pub struct JsContext2d<'js> {
    pub(super) canvas: Class<'js, JsCanvas<'js>>,
    pub(super) surface: Rc<Surface>,
    pub(super) env: Rc<CanvasEnv>,
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
    fn style_of(ctx: &Ctx<'js>, value: &Value<'js>) -> Option<Style> {
        if let Some(text) = Short::<MAX_COLOR_LENGTH>::of_string(ctx, value) {
            return Rgba::parse(text.as_str()).map(Style::Color);
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
        match rule.get::<Short<MAX_KEYWORD_LENGTH>>()?.as_str() {
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
    pub fn set_global_composite_operation(
        &self,
        ctx: Ctx<'js>,
        op: Short<MAX_KEYWORD_LENGTH>,
    ) -> Result<()> {
        match CompositeOp::parse(op.as_str()) {
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
        match Self::style_of(&ctx, &value) {
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
        match Self::style_of(&ctx, &value) {
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
        let gradient = Gradient::linear(x0.0, y0.0, x1.0, y1.0, &self.env.account)
            .map_err(|error| throw(&ctx, error))?;
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
        let gradient = Gradient::radial([x0.0, y0.0, r0.0, x1.0, y1.0, r1.0], &self.env.account)
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
    pub fn set_line_cap(&self, ctx: Ctx<'js>, cap: Short<MAX_KEYWORD_LENGTH>) -> Result<()> {
        self.set(&ctx, |c| c.set_line_cap(cap.as_str()))
    }

    #[qjs(get, rename = "lineJoin")]
    pub fn line_join(&self) -> &'static str {
        self.read(Canvas::line_join, "miter")
    }

    #[qjs(set, rename = "lineJoin")]
    pub fn set_line_join(&self, ctx: Ctx<'js>, join: Short<MAX_KEYWORD_LENGTH>) -> Result<()> {
        self.set(&ctx, |c| c.set_line_join(join.as_str()))
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
        check_dash_entries(array.len()).map_err(|error| throw(&ctx, error))?;
        let segments = array
            .iter::<Coerced<f64>>()
            .map(|value| value.map(|v| v.0))
            .collect::<Result<Vec<f64>>>()?;
        self.path(&ctx, |c| c.set_line_dash(&segments))
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
    pub fn set_font(&self, ctx: Ctx<'js>, font: Short<MAX_FONT_LENGTH>) -> Result<()> {
        self.path(&ctx, |c| c.set_font(font.as_str()))
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
    pub fn set_text_align(&self, ctx: Ctx<'js>, align: Short<MAX_KEYWORD_LENGTH>) -> Result<()> {
        match TextAlign::ALL
            .iter()
            .find(|(_, name)| *name == align.as_str())
        {
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
    pub fn set_text_baseline(
        &self,
        ctx: Ctx<'js>,
        baseline: Short<MAX_KEYWORD_LENGTH>,
    ) -> Result<()> {
        match TextBaseline::ALL
            .iter()
            .find(|(_, name)| *name == baseline.as_str())
        {
            Some((baseline, _)) => self.set(&ctx, |c| c.set_text_baseline(*baseline)),
            None => Ok(()),
        }
    }

    // rectangles

    #[qjs(rename = "fillRect")]
    pub fn fill_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| c.fill_rect(x.0, y.0, w.0, h.0))
    }

    #[qjs(rename = "strokeRect")]
    pub fn stroke_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| c.stroke_rect(x.0, y.0, w.0, h.0))
    }

    #[qjs(rename = "clearRect")]
    pub fn clear_rect(&self, ctx: Ctx<'js>, x: N, y: N, w: N, h: N) -> Result<()> {
        self.draw(&ctx, |c| c.clear_rect(x.0, y.0, w.0, h.0))
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
        self.draw(&ctx, |c| c.fill(even_odd))
    }

    pub fn stroke(&self, ctx: Ctx<'js>, path: Opt<Value<'js>>) -> Result<()> {
        if path.0.as_ref().is_some_and(Value::is_object) {
            return Err(unsupported(
                &ctx,
                "stroke(path: Path2D)",
                "draw on the context's own path",
            ));
        }
        self.draw(&ctx, Canvas::stroke)
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
        text: Coerced<rquickjs::String<'js>>,
        x: N,
        y: N,
        max_width: Opt<N>,
    ) -> Result<()> {
        let max_width = max_width.0.map(|m| m.0);
        let (text, _copy) = self.env.text(&ctx, "fillText()", &text)?;
        self.draw(&ctx, |c| c.draw_text(&text, x.0, y.0, max_width, true))
    }

    #[qjs(rename = "strokeText")]
    pub fn stroke_text(
        &self,
        ctx: Ctx<'js>,
        text: Coerced<rquickjs::String<'js>>,
        x: N,
        y: N,
        max_width: Opt<N>,
    ) -> Result<()> {
        let max_width = max_width.0.map(|m| m.0);
        let (text, _copy) = self.env.text(&ctx, "strokeText()", &text)?;
        self.draw(&ctx, |c| c.draw_text(&text, x.0, y.0, max_width, false))
    }

    /// `measureText(text)`: a plain object with the `TextMetrics` fields.
    #[qjs(rename = "measureText")]
    pub fn measure_text(
        &self,
        ctx: Ctx<'js>,
        text: Coerced<rquickjs::String<'js>>,
    ) -> Result<Object<'js>> {
        self.env.check_deadline(&ctx)?;
        let (text, _copy) = self.env.text(&ctx, "measureText()", &text)?;
        let metrics = {
            let canvas = self.surface.canvas.try_borrow().map_err(|_| {
                Exception::throw_type(&ctx, "the canvas is busy (re-entered while drawing)")
            })?;
            canvas
                .measure_text(&text)
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
                let (snapshot, _copy) = c.snapshot()?;
                c.draw_image(&snapshot, src, dst)
            })
        } else {
            let bitmap = source
                .canvas
                .try_borrow()
                .map_err(|_| Exception::throw_type(&ctx, "the source canvas is busy"))?;
            self.draw(&ctx, |c| c.draw_image(bitmap.bitmap(), src, dst))
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
        JsImageData::new(&ctx, rect, |_| Ok(()))
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
        // The data goes to the QuickJS heap: asking the account first (which collects dropped
        // canvases if it must) turns a request that cannot fit into a clear RangeError instead of
        // an out-of-memory failure of the heap.
        if let Err(over) = self.env.account.charge(rect.bytes()) {
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
        JsImageData::new(&ctx, rect, |bytes| {
            let canvas = self.surface.canvas.try_borrow().map_err(|_| {
                Exception::throw_type(&ctx, "the canvas is busy (re-entered while drawing)")
            })?;
            canvas
                .read_image_data(rect, bytes)
                .map_err(|error| throw(&ctx, error))
        })
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
        let detached = || {
            named_error(
                &ctx,
                "InvalidStateError",
                "putImageData(): the image data's buffer is detached",
            )
            .map(|e| ctx.throw(e.into_value()))
            .unwrap_or_else(|e| e)
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
        // The bytes are read in place: nothing runs JS while the canvas copies them.
        with_clamped_bytes(&ctx, &view, |bytes| {
            self.draw(&ctx, |c| {
                c.put_image_data(
                    (bytes, width, height),
                    (i64::from(dx.0), i64::from(dy.0)),
                    dirty,
                )
            })
        })
        .ok_or_else(detached)?
    }
}
