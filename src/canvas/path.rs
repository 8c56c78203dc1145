//! The current default path of a 2D context, with the HTML canvas's rules: points go through the
//! transformation current when they are added (so the path is kept in device space), a line or
//! arc without a subpath starts one, arcs are joined to the previous point by a straight line,
//! and calls with non-finite numbers are ignored.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use std::rc::Rc;

use tiny_skia::{PathBuilder, Point, Transform};

use super::raster::PATH_BYTES_PER_POINT;
use super::{over_limit, CanvasError};
use crate::memory::{Charge, MemoryAccount};

/// The most points one path may hold (every segment adds one to three): a bound on the memory
/// and on the time of a single `fill()` or `stroke()`, which cannot be interrupted.
pub const MAX_PATH_POINTS: usize = 1 << 20;

/// A rounded rectangle's corner radii, `(x, y)` each, in the order upper-left, upper-right,
/// lower-right, lower-left.
pub type CornerRadii = [(f64, f64); 4];

/// A path under construction, in device space.
#[derive(Debug)]
pub struct CanvasPath {
    builder: PathBuilder,
    /// Whether a subpath exists (the spec's "ensure there is a subpath").
    open: bool,
    /// The points the charge covers: the builder's vectors double as they grow, and so does it.
    room: usize,
    held: Charge,
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|value| value.is_finite())
}

fn device(transform: &Transform, x: f64, y: f64) -> Point {
    #[allow(clippy::cast_possible_truncation, reason = "tiny-skia draws in f32")]
    let mut point = Point::from_xy(x as f32, y as f32);
    transform.map_point(&mut point);
    point
}

impl CanvasPath {
    /// An empty path (`beginPath()`), charged to `account` as it grows.
    pub fn new(account: &Rc<MemoryAccount>) -> Self {
        Self {
            builder: PathBuilder::new(),
            open: false,
            room: 0,
            held: account.empty_charge(),
        }
    }

    /// The path as tiny-skia draws it, if it has any segment (a copy: see [`CanvasPath::bytes`]).
    pub fn to_path(&self) -> Option<tiny_skia::Path> {
        self.builder.clone().finish()
    }

    /// The bytes a copy of the path takes.
    pub fn bytes(&self) -> usize {
        self.builder.len() * PATH_BYTES_PER_POINT
    }

    /// Makes room for `more` points: refused past [`MAX_PATH_POINTS`], or when the memory limit
    /// has no room for them.
    fn check_room(&mut self, more: usize) -> Result<(), CanvasError> {
        let needed = self.builder.len() + more;
        if needed > MAX_PATH_POINTS {
            return Err(CanvasError::range(format!(
                "the path has more than {MAX_PATH_POINTS} points; call beginPath() to start a new one"
            )));
        }
        if needed > self.room {
            let room = needed.max(self.room * 2).max(16);
            self.held
                .resize(room * PATH_BYTES_PER_POINT)
                .map_err(|over| over_limit("the path", "its points", over))?;
            self.room = room;
        }
        Ok(())
    }

    /// `moveTo(x, y)`.
    pub fn move_to(&mut self, t: &Transform, x: f64, y: f64) -> Result<(), CanvasError> {
        if !finite(&[x, y]) {
            return Ok(());
        }
        self.check_room(1)?;
        let p = device(t, x, y);
        self.builder.move_to(p.x, p.y);
        self.open = true;
        Ok(())
    }

    /// `lineTo(x, y)`.
    pub fn line_to(&mut self, t: &Transform, x: f64, y: f64) -> Result<(), CanvasError> {
        if !finite(&[x, y]) {
            return Ok(());
        }
        if !self.open {
            return self.move_to(t, x, y);
        }
        self.check_room(1)?;
        let p = device(t, x, y);
        self.builder.line_to(p.x, p.y);
        Ok(())
    }

    /// `quadraticCurveTo(cpx, cpy, x, y)`.
    pub fn quad_to(
        &mut self,
        t: &Transform,
        cx: f64,
        cy: f64,
        x: f64,
        y: f64,
    ) -> Result<(), CanvasError> {
        if !finite(&[cx, cy, x, y]) {
            return Ok(());
        }
        if !self.open {
            self.move_to(t, cx, cy)?;
        }
        self.check_room(2)?;
        let (c, p) = (device(t, cx, cy), device(t, x, y));
        self.builder.quad_to(c.x, c.y, p.x, p.y);
        Ok(())
    }

    /// `bezierCurveTo(cp1x, cp1y, cp2x, cp2y, x, y)`.
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn cubic_to(
        &mut self,
        t: &Transform,
        c1x: f64,
        c1y: f64,
        c2x: f64,
        c2y: f64,
        x: f64,
        y: f64,
    ) -> Result<(), CanvasError> {
        if !finite(&[c1x, c1y, c2x, c2y, x, y]) {
            return Ok(());
        }
        if !self.open {
            self.move_to(t, c1x, c1y)?;
        }
        self.check_room(3)?;
        let (c1, c2, p) = (device(t, c1x, c1y), device(t, c2x, c2y), device(t, x, y));
        self.builder.cubic_to(c1.x, c1.y, c2.x, c2.y, p.x, p.y);
        Ok(())
    }

    /// `closePath()`: the next segment starts where this subpath started.
    pub fn close(&mut self) {
        if self.open && !self.builder.is_empty() {
            self.builder.close();
        }
    }

    /// `rect(x, y, w, h)`: a closed subpath, then a new one at `(x, y)`.
    pub fn rect(
        &mut self,
        t: &Transform,
        x: f64,
        y: f64,
        w: f64,
        h: f64,
    ) -> Result<(), CanvasError> {
        if !finite(&[x, y, w, h]) {
            return Ok(());
        }
        self.check_room(6)?;
        self.move_to(t, x, y)?;
        self.line_to(t, x + w, y)?;
        self.line_to(t, x + w, y + h)?;
        self.line_to(t, x, y + h)?;
        self.close();
        self.move_to(t, x, y)
    }

    /// `arc(x, y, radius, startAngle, endAngle, counterclockwise)`.
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn arc(
        &mut self,
        t: &Transform,
        x: f64,
        y: f64,
        radius: f64,
        start: f64,
        end: f64,
        counterclockwise: bool,
    ) -> Result<(), CanvasError> {
        self.elliptic_arc(
            "arc",
            t,
            (x, y),
            (radius, radius),
            0.0,
            (start, end),
            counterclockwise,
        )
    }

    /// `ellipse(x, y, radiusX, radiusY, rotation, startAngle, endAngle, counterclockwise)`.
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn ellipse(
        &mut self,
        t: &Transform,
        x: f64,
        y: f64,
        rx: f64,
        ry: f64,
        rotation: f64,
        start: f64,
        end: f64,
        counterclockwise: bool,
    ) -> Result<(), CanvasError> {
        self.elliptic_arc(
            "ellipse",
            t,
            (x, y),
            (rx, ry),
            rotation,
            (start, end),
            counterclockwise,
        )
    }

    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own parameters")]
    fn elliptic_arc(
        &mut self,
        method: &str,
        t: &Transform,
        (x, y): (f64, f64),
        (rx, ry): (f64, f64),
        rotation: f64,
        (start, end): (f64, f64),
        counterclockwise: bool,
    ) -> Result<(), CanvasError> {
        if !finite(&[x, y, rx, ry, rotation, start, end]) {
            return Ok(());
        }
        if rx < 0.0 || ry < 0.0 {
            return Err(CanvasError::index_size(format!(
                "{method}(): a radius must not be negative (got {})",
                rx.min(ry)
            )));
        }
        let sweep = if !counterclockwise && end - start >= TAU {
            TAU
        } else if counterclockwise && start - end >= TAU {
            -TAU
        } else if counterclockwise {
            -(start - end).rem_euclid(TAU)
        } else {
            (end - start).rem_euclid(TAU)
        };
        self.arc_segments(t, (x, y), (rx, ry), rotation, start, sweep)
    }

    /// Joins the current point to the start of an elliptical arc, then adds the arc as cubic
    /// Béziers of at most a quarter turn each.
    fn arc_segments(
        &mut self,
        t: &Transform,
        (cx, cy): (f64, f64),
        (rx, ry): (f64, f64),
        rotation: f64,
        start: f64,
        sweep: f64,
    ) -> Result<(), CanvasError> {
        let (sin_r, cos_r) = rotation.sin_cos();
        let on_ellipse = |ux: f64, uy: f64| {
            let (ex, ey) = (ux * rx, uy * ry);
            (cx + ex * cos_r - ey * sin_r, cy + ex * sin_r + ey * cos_r)
        };
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "at most four segments: |sweep| <= 2π"
        )]
        let segments = ((sweep.abs() / FRAC_PI_2).ceil() as usize).max(1);
        self.check_room(1 + 3 * segments)?;
        let (x0, y0) = on_ellipse(start.cos(), start.sin());
        let first = device(t, x0, y0);
        match (self.open, self.builder.last_point()) {
            (true, Some(last)) if last == first => {}
            (true, Some(_)) => self.builder.line_to(first.x, first.y),
            _ => {
                self.builder.move_to(first.x, first.y);
                self.open = true;
            }
        }
        if sweep == 0.0 {
            return Ok(());
        }
        #[allow(clippy::cast_precision_loss, reason = "at most four segments")]
        let step = sweep / segments as f64;
        let kappa = 4.0 / 3.0 * (step / 4.0).tan();
        let mut angle = start;
        for _ in 0..segments {
            let next = angle + step;
            let (s0, c0) = angle.sin_cos();
            let (s1, c1) = next.sin_cos();
            let (ax, ay) = on_ellipse(c0 - kappa * s0, s0 + kappa * c0);
            let (bx, by) = on_ellipse(c1 + kappa * s1, s1 - kappa * c1);
            let (px, py) = on_ellipse(c1, s1);
            let (a, b, p) = (device(t, ax, ay), device(t, bx, by), device(t, px, py));
            self.builder.cubic_to(a.x, a.y, b.x, b.y, p.x, p.y);
            angle = next;
        }
        Ok(())
    }

    /// `arcTo(x1, y1, x2, y2, radius)`: a line to the arc's first tangent point and the arc of
    /// `radius` tangent to both lines (current point → p1 → p2).
    #[allow(clippy::too_many_arguments, reason = "the Canvas API's own signature")]
    pub fn arc_to(
        &mut self,
        t: &Transform,
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        radius: f64,
    ) -> Result<(), CanvasError> {
        if !finite(&[x1, y1, x2, y2, radius]) {
            return Ok(());
        }
        if radius < 0.0 {
            return Err(CanvasError::index_size(format!(
                "arcTo(): the radius must not be negative (got {radius})"
            )));
        }
        if !self.open {
            self.move_to(t, x1, y1)?;
        }
        let Some(last) = self.builder.last_point() else {
            return self.move_to(t, x1, y1);
        };
        let Some(inverse) = t.invert() else {
            return Ok(());
        };
        let mut p0 = last;
        inverse.map_point(&mut p0);
        let (x0, y0) = (f64::from(p0.x), f64::from(p0.y));
        let (v1x, v1y) = (x0 - x1, y0 - y1);
        let (v2x, v2y) = (x2 - x1, y2 - y1);
        let (l1, l2) = (v1x.hypot(v1y), v2x.hypot(v2y));
        let cross = v1x * v2y - v1y * v2x;
        if l1 == 0.0 || l2 == 0.0 || radius == 0.0 || cross.abs() <= 1e-9 * l1 * l2 {
            return self.line_to(t, x1, y1);
        }
        let (u1x, u1y, u2x, u2y) = (v1x / l1, v1y / l1, v2x / l2, v2y / l2);
        let angle = (u1x * u2x + u1y * u2y).clamp(-1.0, 1.0).acos();
        let tangent = radius / (angle / 2.0).tan();
        let (t1x, t1y) = (x1 + u1x * tangent, y1 + u1y * tangent);
        let (t2x, t2y) = (x1 + u2x * tangent, y1 + u2y * tangent);
        let (bx, by) = (u1x + u2x, u1y + u2y);
        let bl = bx.hypot(by);
        let distance = radius / (angle / 2.0).sin();
        let (cx, cy) = (x1 + bx / bl * distance, y1 + by / bl * distance);
        let start = (t1y - cy).atan2(t1x - cx);
        let end = (t2y - cy).atan2(t2x - cx);
        let counterclockwise = cross > 0.0;
        let mut sweep = end - start;
        if counterclockwise && sweep > 0.0 {
            sweep -= TAU;
        } else if !counterclockwise && sweep < 0.0 {
            sweep += TAU;
        }
        self.line_to(t, t1x, t1y)?;
        self.arc_segments(t, (cx, cy), (radius, radius), 0.0, start, sweep)
    }

    /// `roundRect(x, y, w, h, radii)` with radii already read (see [`CornerRadii`]); negative
    /// sizes flip the rectangle and its corners, and radii too large for the sides shrink
    /// together, as the spec says.
    pub fn round_rect(
        &mut self,
        t: &Transform,
        (mut x, mut y, mut w, mut h): (f64, f64, f64, f64),
        radii: CornerRadii,
    ) -> Result<(), CanvasError> {
        if !finite(&[x, y, w, h]) || !radii.iter().all(|(rx, ry)| finite(&[*rx, *ry])) {
            return Ok(());
        }
        let [mut ul, mut ur, mut lr, mut ll] = radii;
        if w < 0.0 {
            x += w;
            w = -w;
            std::mem::swap(&mut ul, &mut ur);
            std::mem::swap(&mut ll, &mut lr);
        }
        if h < 0.0 {
            y += h;
            h = -h;
            std::mem::swap(&mut ul, &mut ll);
            std::mem::swap(&mut ur, &mut lr);
        }
        let sides = [
            (w, ul.0 + ur.0),
            (h, ur.1 + lr.1),
            (w, lr.0 + ll.0),
            (h, ul.1 + ll.1),
        ];
        let scale = sides
            .iter()
            .filter(|(_, sum)| *sum > 0.0)
            .map(|(side, sum)| side / sum)
            .fold(1.0_f64, f64::min);
        let [ul, ur, lr, ll] = [ul, ur, lr, ll].map(|(rx, ry)| (rx * scale, ry * scale));
        self.check_room(30)?;
        self.move_to(t, x + ul.0, y)?;
        self.line_to(t, x + w - ur.0, y)?;
        self.arc_segments(t, (x + w - ur.0, y + ur.1), ur, 0.0, -FRAC_PI_2, FRAC_PI_2)?;
        self.line_to(t, x + w, y + h - lr.1)?;
        self.arc_segments(t, (x + w - lr.0, y + h - lr.1), lr, 0.0, 0.0, FRAC_PI_2)?;
        self.line_to(t, x + ll.0, y + h)?;
        self.arc_segments(t, (x + ll.0, y + h - ll.1), ll, 0.0, FRAC_PI_2, FRAC_PI_2)?;
        self.line_to(t, x, y + ul.1)?;
        self.arc_segments(t, (x + ul.0, y + ul.1), ul, 0.0, PI, FRAC_PI_2)?;
        self.close();
        self.move_to(t, x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(path: &CanvasPath) -> (f32, f32, f32, f32) {
        let b = path.to_path().unwrap().bounds();
        (b.left(), b.top(), b.right(), b.bottom())
    }

    #[test]
    fn points_go_through_the_transform_current_when_added() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let scaled = Transform::from_scale(2.0, 2.0);
        path.move_to(&scaled, 1.0, 1.0).unwrap();
        path.line_to(&Transform::identity(), 10.0, 1.0).unwrap();
        assert_eq!(bounds(&path), (2.0, 1.0, 10.0, 2.0));
    }

    #[test]
    fn non_finite_arguments_are_ignored() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let t = Transform::identity();
        path.move_to(&t, 0.0, 0.0).unwrap();
        path.line_to(&t, f64::NAN, 5.0).unwrap();
        path.line_to(&t, f64::INFINITY, 5.0).unwrap();
        path.line_to(&t, 4.0, 4.0).unwrap();
        assert_eq!(bounds(&path), (0.0, 0.0, 4.0, 4.0));
    }

    #[test]
    fn a_full_arc_is_a_circle_and_negative_radii_are_refused() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let t = Transform::identity();
        path.arc(&t, 50.0, 50.0, 10.0, 0.0, TAU, false).unwrap();
        let (l, top, r, b) = bounds(&path);
        assert!((l - 40.0).abs() < 0.01 && (r - 60.0).abs() < 0.01);
        assert!((top - 40.0).abs() < 0.01 && (b - 60.0).abs() < 0.01);
        let error = path.arc(&t, 0.0, 0.0, -1.0, 0.0, 1.0, false).unwrap_err();
        assert!(error.message.contains("arc()"), "{}", error.message);
    }

    #[test]
    fn arc_to_ends_at_the_second_tangent_point() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let t = Transform::identity();
        path.move_to(&t, 0.0, 0.0).unwrap();
        path.arc_to(&t, 10.0, 0.0, 10.0, 10.0, 4.0).unwrap();
        let last = path.builder.last_point().unwrap();
        assert!(
            (last.x - 10.0).abs() < 1e-3 && (last.y - 4.0).abs() < 1e-3,
            "{last:?}"
        );
    }

    #[test]
    fn round_rect_radii_shrink_to_fit() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let t = Transform::identity();
        path.round_rect(&t, (0.0, 0.0, 20.0, 10.0), [(50.0, 50.0); 4])
            .unwrap();
        assert_eq!(bounds(&path), (0.0, 0.0, 20.0, 10.0));
    }

    #[test]
    fn paths_are_bounded() {
        let mut path = CanvasPath::new(&MemoryAccount::new(usize::MAX));
        let t = Transform::identity();
        let mut refused = None;
        for i in 0..=MAX_PATH_POINTS {
            #[allow(clippy::cast_precision_loss, reason = "i is at most MAX_PATH_POINTS")]
            if let Err(error) = path.line_to(&t, i as f64, 0.0) {
                refused = Some(error);
                break;
            }
        }
        assert!(refused.unwrap().message.contains("beginPath()"));
    }
}
