//! Painting into a bitmap or a clip mask so that every call is bounded or interruptible, and
//! pays for the memory it uses.
//!
//! tiny-skia cannot be interrupted inside a call, and what one call costs grows with what the
//! code controls: the pixels covered times the cost of a pixel (a gradient compares each pixel
//! with every stop), the points of the path (its edge list, the outline a stroke makes). So:
//!
//! - a fill covering more than [`BAND_WORK`] is painted in bands of rows, each a bitmap (or mask)
//!   of its own over the same memory, with the run's interrupt consulted between bands, the way
//!   tiny-skia itself tiles a bitmap too large for its fixed-point maths;
//! - what tiny-skia allocates for a call (the edge list and copy of the path a fill makes, the
//!   outline of a stroke, its dashes) is charged to the memory account before it is allocated,
//!   from the path's size, and refused past `memoryLimitBytes`;
//! - the one step that cannot be banded, turning a stroke into its outline, is bounded by a
//!   cost the code cannot inflate: the outline's precision is capped ([`MAX_STROKE_RESOLUTION`])
//!   and a path whose stroking would take more than [`MAX_STROKE_WORK`] is refused.

use std::rc::Rc;

use tiny_skia::{
    FillRule, IntSize, Mask, Paint, Path, PathSegment, PathStroker, Pixmap, PixmapMut, Point, Rect,
    Stroke, StrokeDash, Transform,
};

use super::{over_limit, CanvasError};
use crate::memory::{Charge, MemoryAccount};

/// The work of one band: rows × width × a pixel's cost (a solid colour's pixel costs 1), about a
/// millisecond of tiny-skia's time, so that a run stops within a few of its deadline. Fills
/// below it (a megapixel chart in plain colours) are one call.
pub(super) const BAND_WORK: usize = 1 << 20;

/// Bytes a path holds per point: the point, and up to two verbs (a `moveTo` and a
/// `closePath`).
pub(super) const PATH_BYTES_PER_POINT: usize = 10;

/// Bytes tiny-skia allocates per point of a path it fills: its edge list, and the copy of the
/// path it maps to the device (124–194 bytes per point measured, lines and curves).
pub(super) const FILL_BYTES_PER_POINT: usize = 256;

/// The finest precision a stroke's outline is computed with (tiny-skia's resolution scale,
/// which follows the transform's scale): past it, the outline's size and the stroker's time
/// grow with a scale the code chooses, for detail no bitmap of `maxCanvasSize` can show.
pub(super) const MAX_STROKE_RESOLUTION: f32 = 16.0;

/// The most points the stroker makes for one point of the path at [`MAX_STROKE_RESOLUTION`]:
/// 58 measured for looping cubics with round joins, 40 for quadratics, 20 for lines.
pub(super) const OUTLINE_POINTS_PER_POINT: usize = 64;

/// The most work one stroke may take, in [`stroke_work`]'s units (about a microsecond of the
/// stroker's time each): a polyline of 131,072 points, or about 2,700 cubic Béziers.
pub const MAX_STROKE_WORK: usize = 1 << 18;

/// What a drawing call is allowed: the memory account it charges, and the run's interrupt.
pub(super) struct Work<'a> {
    pub account: &'a Rc<MemoryAccount>,
    pub interrupted: &'a dyn Fn() -> bool,
    /// The call, for error messages (`fill()`, `stroke()`).
    pub call: &'a str,
}

impl Work<'_> {
    fn charge(&self, what: &str, bytes: usize) -> Result<Charge, CanvasError> {
        self.account
            .charge(bytes)
            .map_err(|over| over_limit(self.call, what, over))
    }

    fn grow(&self, charge: &mut Charge, what: &str, bytes: usize) -> Result<(), CanvasError> {
        charge
            .resize(bytes)
            .map_err(|over| over_limit(self.call, what, over))
    }

    fn check(&self) -> Result<(), CanvasError> {
        if (self.interrupted)() {
            return Err(CanvasError::interrupted());
        }
        Ok(())
    }
}

/// What stroking `path` costs, in units of about a microsecond each
/// (bench/README.md "A stroke's work").
pub fn stroke_work(path: &Path) -> usize {
    path.segments()
        .map(|segment| match segment {
            PathSegment::MoveTo(_) | PathSegment::Close => 1,
            PathSegment::LineTo(_) => 2,
            PathSegment::QuadTo(..) => 6,
            PathSegment::CubicTo(..) => 96,
        })
        .sum()
}

/// The rows `[top, bottom)` of a `height`-row target that `bounds` (device space) may touch,
/// anti-aliasing included; `None` when it touches none.
fn rows_of(bounds: Rect, height: u32) -> Option<(u32, u32)> {
    let height = f64::from(height);
    let top = (f64::from(bounds.top()).floor() - 1.0).clamp(0.0, height);
    let bottom = (f64::from(bounds.bottom()).ceil() + 1.0).clamp(0.0, height);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 0..=height, a u32"
    )]
    let (top, bottom) = (top as u32, bottom as u32);
    (top < bottom).then_some((top, bottom))
}

/// How many rows of `width` pixels of `cost` each one band holds.
fn band_rows(width: u32, cost: usize) -> u32 {
    let per_row = (width as usize).saturating_mul(cost.max(1)).max(1);
    u32::try_from((BAND_WORK / per_row).max(1)).unwrap_or(u32::MAX)
}

/// Calls `paint(y, rows)` for each band of `rows_per_band` rows in `[top, bottom)`, top down,
/// asking `work` before every band but the first whether to stop.
fn in_bands(
    (top, bottom): (u32, u32),
    rows_per_band: u32,
    work: &Work<'_>,
    mut paint: impl FnMut(u32, u32),
) -> Result<(), CanvasError> {
    let mut y = top;
    while y < bottom {
        if y != top {
            work.check()?;
        }
        let rows = rows_per_band.min(bottom - y);
        paint(y, rows);
        y += rows;
    }
    Ok(())
}

/// The part of `clip` over rows `[y, y + rows)`, as a mask of its own, made in `spare` (whose
/// memory the caller charged; given back by [`Mask::take`]).
fn clip_band(clip: &Mask, y: u32, rows: u32, spare: &mut Vec<u8>) -> Mask {
    let width = clip.width() as usize;
    let (from, to) = (y as usize * width, (y + rows) as usize * width);
    let mut data = std::mem::take(spare);
    data.clear();
    data.extend_from_slice(&clip.data()[from..to]);
    IntSize::from_wh(clip.width(), rows)
        .and_then(|size| Mask::from_vec(data, size))
        .expect("a band of a mask is a mask")
}

/// A bitmap's pixels and the clip mask that limits where they change.
pub(super) struct Target<'a> {
    pub pixmap: &'a mut Pixmap,
    pub clip: Option<&'a Mask>,
}

/// Fills `path`, mapped to the device by `transform`, with `paint` whose pixels cost `cost`
/// each ([`BAND_WORK`]'s units).
pub(super) fn fill(
    target: Target<'_>,
    path: &Path,
    (paint, cost): (&Paint<'_>, usize),
    rule: FillRule,
    transform: Transform,
    work: &Work<'_>,
) -> Result<(), CanvasError> {
    let _edges = work.charge(
        "the path's edges",
        path.len().saturating_mul(FILL_BYTES_PER_POINT),
    )?;
    fill_charged(target, path, (paint, cost), rule, transform, work)
}

/// [`fill`] once its memory is charged.
fn fill_charged(
    target: Target<'_>,
    path: &Path,
    (paint, cost): (&Paint<'_>, usize),
    rule: FillRule,
    transform: Transform,
    work: &Work<'_>,
) -> Result<(), CanvasError> {
    let Target { pixmap, clip } = target;
    let (width, height) = (pixmap.width(), pixmap.height());
    let Some(rows) = path
        .bounds()
        .transform(transform)
        .and_then(|bounds| rows_of(bounds, height))
    else {
        return Ok(());
    };
    let per_band = band_rows(width, cost);
    if rows.1 - rows.0 <= per_band {
        pixmap.fill_path(path, paint, rule, transform, clip);
        return Ok(());
    }
    // The path and the paint's shader in device space, and for each band a copy moved up by
    // the band's top (from the device copy each time: moving the same copy band after band
    // would add up rounding errors).
    let Some(device) = path.clone().transform(transform) else {
        return Ok(());
    };
    let mut paint = paint.clone();
    paint.shader.transform(transform);
    let _mask = match clip {
        Some(_) => Some(work.charge("the clip's band", per_band as usize * width as usize)?),
        None => None,
    };
    let mut spare = Vec::new();
    let stride = width as usize * 4;
    let data = pixmap.data_mut();
    in_bands(rows, per_band, work, |y, n| {
        let shift = Transform::from_translate(0.0, -(y as f32));
        let Some(moved) = device.clone().transform(shift) else {
            return;
        };
        let mut band_paint = paint.clone();
        band_paint.shader.transform(shift);
        let band_clip = clip.map(|clip| clip_band(clip, y, n, &mut spare));
        let rows = &mut data[y as usize * stride..(y + n) as usize * stride];
        if let Some(mut band) = PixmapMut::from_bytes(rows, width, n) {
            band.fill_path(
                &moved,
                &band_paint,
                rule,
                Transform::identity(),
                band_clip.as_ref(),
            );
        }
        if let Some(band_clip) = band_clip {
            spare = band_clip.take();
        }
    })
}

/// Whether tiny-skia draws a stroke of `width` under `transform` as a hairline (no outline):
/// its own rule, which is private to it.
fn is_hairline(width: f32, transform: Transform) -> bool {
    if width == 0.0 {
        return true;
    }
    let fast_len = |x: f32, y: f32| {
        let (x, y) = (x.abs(), y.abs());
        x.max(y) + x.min(y) / 2.0
    };
    let (sx, ky, kx, sy) = (transform.sx, transform.ky, transform.kx, transform.sy);
    fast_len(width * sx, width * ky) <= 1.0 && fast_len(width * kx, width * sy) <= 1.0
}

/// Strokes `path` (user space) under `transform`, dashed by `dash` (the list and its offset).
pub(super) fn stroke(
    target: Target<'_>,
    path: &Path,
    (paint, cost): (&Paint<'_>, usize),
    (stroke, dash): (&Stroke, Option<(&[f32], f32)>),
    transform: Transform,
    work: &Work<'_>,
) -> Result<(), CanvasError> {
    if stroke.width.is_nan() || stroke.width < 0.0 {
        return Ok(());
    }
    let resolution = PathStroker::compute_resolution_scale(&transform).min(MAX_STROKE_RESOLUTION);
    let mut held = work.charge("its dashes", 0)?;
    let dashed;
    let path = match dash
        .and_then(|(array, offset)| Some((StrokeDash::new(array.to_vec(), offset)?, array)))
    {
        Some((dash, array)) => {
            // Each dash is a subpath of two points or more: refused before it is made if that
            // is already more than a stroke may take.
            let dashes = dash_count(path, array);
            if dashes * 3.0 > MAX_STROKE_WORK as f64 {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a count, saturating"
                )]
                return Err(too_complex(
                    work.call,
                    "its line dash makes",
                    (dashes * 3.0) as usize,
                ));
            }
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "bounded above"
            )]
            let estimate = (dashes as usize + path.len()).saturating_mul(4 * PATH_BYTES_PER_POINT);
            work.grow(&mut held, "its dashes", estimate)?;
            let Some(made) = path.dash(&dash, resolution) else {
                return Ok(());
            };
            dashed = made;
            work.grow(&mut held, "its dashes", dashed.len() * PATH_BYTES_PER_POINT)?;
            &dashed
        }
        None => path,
    };
    let work_needed = stroke_work(path);
    if work_needed > MAX_STROKE_WORK {
        return Err(too_complex(work.call, "its path has", work_needed));
    }
    let plain = Stroke {
        dash: None,
        ..stroke.clone()
    };
    let dash_bytes = held.bytes();
    if is_hairline(stroke.width, transform) {
        // No outline: tiny-skia strokes the path itself, mapped by a copy per call.
        work.grow(
            &mut held,
            "the path's copy",
            dash_bytes + path.len() * PATH_BYTES_PER_POINT,
        )?;
        return stroke_hairline(target, path, (paint, cost), &plain, transform, work);
    }
    work.grow(
        &mut held,
        "its outline",
        dash_bytes + path.len() * OUTLINE_POINTS_PER_POINT * PATH_BYTES_PER_POINT,
    )?;
    let Some(outline) = path.stroke(&plain, resolution) else {
        return Ok(());
    };
    work.grow(
        &mut held,
        "its outline",
        dash_bytes + outline.len() * (PATH_BYTES_PER_POINT + FILL_BYTES_PER_POINT),
    )?;
    fill_charged(
        target,
        &outline,
        (paint, cost),
        FillRule::Winding,
        transform,
        work,
    )
}

/// A hairline stroke: drawn segment by segment, with no area to fill, so it is cut into runs
/// of segments (not bands: tiny-skia's anti-aliased hairlines are not the same when cut by a
/// band's edge), each at most [`BAND_WORK`], with the run's interrupt consulted between runs.
/// A run starts where the last one ended; hairlines have no joins, so the pixels are those of
/// one call, but for the caps a run's ends get when they are not butt (half a pixel, inside
/// the next segment's own line).
fn stroke_hairline(
    target: Target<'_>,
    path: &Path,
    (paint, cost): (&Paint<'_>, usize),
    stroke: &Stroke,
    transform: Transform,
    work: &Work<'_>,
) -> Result<(), CanvasError> {
    let Target { pixmap, clip } = target;
    let diagonal = f64::from(pixmap.width()).hypot(f64::from(pixmap.height()));
    // A segment's hairline touches about two pixels per pixel of its length on the bitmap.
    let segment_cost = |points: &[Point], from: Point| -> usize {
        let mut length = 0.0;
        let mut last = from;
        for point in points {
            let (mut a, mut b) = (last, *point);
            transform.map_point(&mut a);
            transform.map_point(&mut b);
            length += f64::from(a.distance(b));
            last = *point;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped"
        )]
        let pixels = length.min(diagonal * points.len() as f64).max(0.0) as usize;
        (2 * pixels + 1).saturating_mul(cost.max(1))
    };
    let total: usize = {
        let (mut total, mut last, mut start) = (0usize, Point::zero(), Point::zero());
        for segment in path.segments() {
            let (points, next): (&[Point], Point) = match &segment {
                PathSegment::MoveTo(p) => {
                    (last, start) = (*p, *p);
                    continue;
                }
                PathSegment::LineTo(p) => (std::slice::from_ref(p), *p),
                PathSegment::QuadTo(c, p) => (&[*c, *p][..], *p),
                PathSegment::CubicTo(c1, c2, p) => (&[*c1, *c2, *p][..], *p),
                PathSegment::Close => (std::slice::from_ref(&start), start),
            };
            total = total.saturating_add(segment_cost(points, last));
            last = next;
        }
        total
    };
    if total <= BAND_WORK {
        pixmap.stroke_path(path, paint, stroke, transform, clip);
        return Ok(());
    }
    let mut run = tiny_skia::PathBuilder::new();
    let (mut run_cost, mut last, mut start) = (0, Point::zero(), Point::zero());
    let mut first = true;
    let mut draw =
        |run: &mut tiny_skia::PathBuilder, pixmap: &mut Pixmap| -> Result<(), CanvasError> {
            if !std::mem::replace(&mut first, false) {
                work.check()?;
            }
            if let Some(path) = std::mem::take(run).finish() {
                pixmap.stroke_path(&path, paint, stroke, transform, clip);
            }
            Ok(())
        };
    for segment in path.segments() {
        if let PathSegment::MoveTo(p) = segment {
            (last, start) = (p, p);
            run.move_to(p.x, p.y);
            continue;
        }
        if run_cost >= BAND_WORK {
            draw(&mut run, pixmap)?;
            run_cost = 0;
            run.move_to(last.x, last.y);
        }
        match segment {
            PathSegment::LineTo(p) => {
                run_cost += segment_cost(&[p], last);
                run.line_to(p.x, p.y);
                last = p;
            }
            PathSegment::QuadTo(c, p) => {
                run_cost += segment_cost(&[c, p], last);
                run.quad_to(c.x, c.y, p.x, p.y);
                last = p;
            }
            PathSegment::CubicTo(c1, c2, p) => {
                run_cost += segment_cost(&[c1, c2, p], last);
                run.cubic_to(c1.x, c1.y, c2.x, c2.y, p.x, p.y);
                last = p;
            }
            PathSegment::Close => {
                run_cost += segment_cost(&[start], last);
                run.line_to(start.x, start.y);
                last = start;
            }
            PathSegment::MoveTo(_) => {}
        }
    }
    draw(&mut run, pixmap)
}

/// Fills `mask` with `path` (device space), anti-aliased, in bands.
pub(super) fn fill_mask(
    mask: &mut Mask,
    path: &Path,
    rule: FillRule,
    work: &Work<'_>,
) -> Result<(), CanvasError> {
    let _edges = work.charge(
        "the path's edges",
        path.len().saturating_mul(FILL_BYTES_PER_POINT),
    )?;
    let (width, height) = (mask.width(), mask.height());
    let Some(rows) = rows_of(path.bounds(), height) else {
        return Ok(());
    };
    let per_band = band_rows(width, 1);
    if rows.1 - rows.0 <= per_band {
        mask.fill_path(path, rule, true, Transform::identity());
        return Ok(());
    }
    let _band = work.charge("the clip's band", per_band as usize * width as usize)?;
    let mut spare = Vec::new();
    let stride = width as usize;
    let data = mask.data_mut();
    in_bands(rows, per_band, work, |y, n| {
        let shift = Transform::from_translate(0.0, -(y as f32));
        let mut buffer = std::mem::take(&mut spare);
        buffer.clear();
        buffer.resize(n as usize * stride, 0);
        let Some(mut band) =
            IntSize::from_wh(width, n).and_then(|size| Mask::from_vec(buffer, size))
        else {
            return;
        };
        band.fill_path(path, rule, true, shift);
        data[y as usize * stride..(y + n) as usize * stride].copy_from_slice(band.data());
        spare = band.take();
    })
}

/// How many dashes `array` makes along `path`: its length (the control polygon's, at least the
/// curves' own) times the dashes per interval, as tiny-skia counts them.
fn dash_count(path: &Path, array: &[f32]) -> f64 {
    let interval: f64 = array.iter().map(|d| f64::from(*d)).sum();
    if interval.is_nan() || interval <= 0.0 {
        return 0.0;
    }
    let (mut length, mut last, mut start) = (0.0, Point::zero(), Point::zero());
    let mut legs = |points: &[Point], last: &mut Point| {
        for point in points {
            length += f64::from(last.distance(*point));
            *last = *point;
        }
    };
    for segment in path.segments() {
        match segment {
            PathSegment::MoveTo(p) => (last, start) = (p, p),
            PathSegment::LineTo(p) => legs(&[p], &mut last),
            PathSegment::QuadTo(c, p) => legs(&[c, p], &mut last),
            PathSegment::CubicTo(c1, c2, p) => legs(&[c1, c2, p], &mut last),
            PathSegment::Close => legs(&[start], &mut last),
        }
    }
    length * (array.len() / 2) as f64 / interval
}

fn too_complex(call: &str, what: &str, work: usize) -> CanvasError {
    CanvasError::range(format!(
        "{call}: the stroke is too complex to draw at once ({what} {work} units of work, at most {MAX_STROKE_WORK}); stroke the path in parts"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::{Color, PathBuilder};

    fn never() -> bool {
        false
    }

    fn work(account: &Rc<MemoryAccount>) -> Work<'_> {
        Work {
            account,
            interrupted: &never,
            call: "test",
        }
    }

    fn zigzag(points: usize) -> Path {
        let mut builder = PathBuilder::new();
        builder.move_to(3.0, 3.0);
        for i in 0..points {
            let x = 3.0 + (i % 190) as f32 + 0.37;
            builder.line_to(
                x,
                if i % 2 == 0 {
                    190.0
                } else {
                    3.0 + (i % 7) as f32 * 20.0
                },
            );
        }
        builder.close();
        builder.finish().unwrap()
    }

    fn wavy(points: usize) -> Path {
        let mut builder = PathBuilder::new();
        builder.move_to(3.0, 3.0);
        for i in 0..points {
            let x = 3.0 + (i % 190) as f32;
            builder.quad_to(x, 40.0 + (i % 7) as f32 * 20.0, x + 1.0, 190.0);
        }
        builder.close();
        builder.finish().unwrap()
    }

    /// How far two bitmaps are apart: the pixels that differ, and the largest difference of a
    /// channel.
    fn distance(one: &[u8], other: &[u8]) -> (usize, u8) {
        let mut pixels = 0;
        let mut most = 0;
        for (a, b) in one.chunks(4).zip(other.chunks(4)) {
            let worst = a
                .iter()
                .zip(b)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap_or(0);
            if worst > 0 {
                pixels += 1;
                most = most.max(worst);
            }
        }
        (pixels, most)
    }

    /// Painting in bands gives the pixels one call gives, for anti-aliased shapes, a gradient,
    /// a clip and a transform, up to the coverage of edge pixels: tiny-skia sets an edge up
    /// anew where a band cuts it, and the anti-aliasing of those edges moves by at most an
    /// eighth of a pixel (measured: 567 of 40,000 pixels, by up to 31 levels of 255).
    #[test]
    fn bands_paint_what_one_call_paints() {
        let account = MemoryAccount::new(usize::MAX);
        let gradient = tiny_skia::LinearGradient::new(
            (0.0, 0.0).into(),
            (200.0, 150.0).into(),
            vec![
                tiny_skia::GradientStop::new(0.0, Color::from_rgba8(255, 0, 0, 255)),
                tiny_skia::GradientStop::new(0.5, Color::from_rgba8(0, 255, 0, 128)),
                tiny_skia::GradientStop::new(1.0, Color::from_rgba8(0, 0, 255, 255)),
            ],
            tiny_skia::SpreadMode::Pad,
            Transform::identity(),
        )
        .unwrap();
        let paint = Paint {
            shader: gradient,
            anti_alias: true,
            ..Paint::default()
        };
        let mut clip = Mask::new(200, 200).unwrap();
        let mut circle = PathBuilder::new();
        circle.push_circle(100.0, 100.0, 80.0);
        clip.fill_path(
            &circle.finish().unwrap(),
            FillRule::Winding,
            true,
            Transform::identity(),
        );
        let transform = Transform::from_row(0.9, 0.1, -0.1, 0.8, 5.5, 7.25);
        let wide = Stroke {
            width: 3.5,
            ..Stroke::default()
        };
        let hairline = Stroke {
            width: 0.5,
            ..Stroke::default()
        };
        for (name, path) in [("polygon", zigzag(300)), ("curves", wavy(300))] {
            let within = |one: &Pixmap, banded: &Pixmap, what: &str| {
                let (pixels, most) = distance(one.data(), banded.data());
                assert!(
                    pixels <= 1000 && most <= 40,
                    "{name} {what}: {pixels} pixels differ, by up to {most}"
                );
            };
            for cost in [1, BAND_WORK / 200 / 7] {
                let mut one = Pixmap::new(200, 200).unwrap();
                let mut banded = Pixmap::new(200, 200).unwrap();
                one.fill_path(&path, &paint, FillRule::EvenOdd, transform, Some(&clip));
                fill(
                    Target {
                        pixmap: &mut banded,
                        clip: Some(&clip),
                    },
                    &path,
                    (&paint, cost),
                    FillRule::EvenOdd,
                    transform,
                    &work(&account),
                )
                .unwrap();
                within(&one, &banded, &format!("fill, cost {cost}"));
                for style in [&wide, &hairline] {
                    let mut one = Pixmap::new(200, 200).unwrap();
                    let mut banded = Pixmap::new(200, 200).unwrap();
                    one.stroke_path(&path, &paint, style, transform, None);
                    stroke(
                        Target {
                            pixmap: &mut banded,
                            clip: None,
                        },
                        &path,
                        (&paint, cost),
                        (style, None),
                        transform,
                        &work(&account),
                    )
                    .unwrap();
                    within(
                        &one,
                        &banded,
                        &format!("stroke {}, cost {cost}", style.width),
                    );
                }
            }
            let mut one = Mask::new(200, 200).unwrap();
            one.fill_path(&path, FillRule::Winding, true, Transform::identity());
            let mut banded = Mask::new(200, 200).unwrap();
            fill_mask(&mut banded, &path, FillRule::Winding, &work(&account)).unwrap();
            let (pixels, most) = distance(one.data(), banded.data());
            assert!(
                pixels <= 1000 && most <= 40,
                "{name} mask: {pixels}, {most}"
            );
        }
        assert_eq!(account.held(), 0, "every charge was given back");
    }

    /// A fill of many bands stops at the first band after the interrupt says so.
    #[test]
    fn a_banded_fill_stops_when_interrupted() {
        let account = MemoryAccount::new(usize::MAX);
        let bands = std::cell::Cell::new(0);
        let interrupted = || {
            bands.set(bands.get() + 1);
            bands.get() >= 3
        };
        let mut pixmap = Pixmap::new(2000, 2000).unwrap();
        let mut rect = PathBuilder::new();
        rect.push_rect(Rect::from_xywh(0.0, 0.0, 2000.0, 2000.0).unwrap());
        let result = fill(
            Target {
                pixmap: &mut pixmap,
                clip: None,
            },
            &rect.finish().unwrap(),
            (&Paint::default(), 256),
            FillRule::Winding,
            Transform::identity(),
            &Work {
                account: &account,
                interrupted: &interrupted,
                call: "fill()",
            },
        );
        assert_eq!(
            result.unwrap_err().kind,
            super::super::CanvasErrorKind::Interrupted
        );
        assert_eq!(bands.get(), 3);
        // The rows painted before the stop are painted; the last row is not.
        assert_eq!(pixmap.pixel(0, 0).unwrap().alpha(), 255);
        assert_eq!(pixmap.pixel(0, 1999).unwrap().alpha(), 0);
    }

    /// The stroker's outline stays within what the charge assumes, for the shapes that make it
    /// largest (looping and cusped cubics, wide round joins and caps, tight quadratics), at the
    /// finest precision a stroke gets.
    #[test]
    fn outlines_stay_within_their_charge() {
        type Segment = fn(&mut PathBuilder, f32);
        let shapes: [(&str, Segment); 5] = [
            ("loop", |b, x| {
                b.cubic_to(x + 100.0, 100.0, x - 100.0, 100.0, x, 0.0)
            }),
            ("cusp", |b, x| {
                b.cubic_to(x + 100.0, 100.0, x, 100.0, x + 100.0, 0.0)
            }),
            ("tight", |b, x| {
                b.cubic_to(x + 0.01, 100.0, x - 0.01, -100.0, x, 0.0)
            }),
            ("quad", |b, x| b.quad_to(x + 1000.0, 1.0, x, 0.0)),
            ("zigzag", |b, x| {
                b.line_to(x + 0.001, 100.0);
                b.line_to(x, 0.0);
            }),
        ];
        for (name, segment) in shapes {
            for (width, cap, join) in [
                (1.5, tiny_skia::LineCap::Round, tiny_skia::LineJoin::Round),
                (200.0, tiny_skia::LineCap::Round, tiny_skia::LineJoin::Round),
                (
                    200.0,
                    tiny_skia::LineCap::Square,
                    tiny_skia::LineJoin::Miter,
                ),
            ] {
                let mut builder = PathBuilder::new();
                builder.move_to(0.0, 0.0);
                for i in 0..100 {
                    segment(&mut builder, i as f32 * 0.5);
                }
                let path = builder.finish().unwrap();
                let style = Stroke {
                    width,
                    line_cap: cap,
                    line_join: join,
                    miter_limit: 1000.0,
                    ..Stroke::default()
                };
                let outline = path.stroke(&style, MAX_STROKE_RESOLUTION).unwrap();
                assert!(
                    outline.len() <= path.len() * OUTLINE_POINTS_PER_POINT,
                    "{name} {width}: {} points for {}",
                    outline.len(),
                    path.len()
                );
            }
        }
    }

    #[test]
    fn strokes_past_their_work_and_memory_are_refused_before_they_are_made() {
        let mut builder = PathBuilder::new();
        builder.move_to(0.0, 0.0);
        for i in 0..MAX_STROKE_WORK / 96 + 1 {
            let x = i as f32;
            builder.cubic_to(x + 0.3, 5.0, x + 0.6, -5.0, x + 1.0, 0.0);
        }
        let curvy = builder.finish().unwrap();
        let mut pixmap = Pixmap::new(100, 100).unwrap();
        let account = MemoryAccount::new(usize::MAX);
        let wide = Stroke {
            width: 4.0,
            ..Stroke::default()
        };
        let refused = stroke(
            Target {
                pixmap: &mut pixmap,
                clip: None,
            },
            &curvy,
            (&Paint::default(), 1),
            (&wide, None),
            Transform::identity(),
            &work(&account),
        )
        .unwrap_err();
        assert!(
            refused.message.contains("too complex"),
            "{}",
            refused.message
        );

        // A long line dashed finely: refused from its length, before a dash is made.
        let mut line = PathBuilder::new();
        line.move_to(0.0, 0.0);
        line.line_to(1e6, 0.0);
        let refused = stroke(
            Target {
                pixmap: &mut pixmap,
                clip: None,
            },
            &line.finish().unwrap(),
            (&Paint::default(), 1),
            (&wide, Some((&[0.5, 0.5], 0.0))),
            Transform::identity(),
            &work(&account),
        )
        .unwrap_err();
        assert!(refused.message.contains("line dash"), "{}", refused.message);

        // Memory: a small account refuses the outline's charge.
        let small = MemoryAccount::new(64 << 10);
        let refused = stroke(
            Target {
                pixmap: &mut pixmap,
                clip: None,
            },
            &wavy(2000),
            (&Paint::default(), 1),
            (&wide, None),
            Transform::identity(),
            &work(&small),
        )
        .unwrap_err();
        assert_eq!(
            refused.kind,
            super::super::CanvasErrorKind::Limit("memoryLimitBytes")
        );
        assert_eq!((account.held(), small.held()), (0, 0));
    }
}
