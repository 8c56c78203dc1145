//! How a canvas paints: `fillStyle` and `strokeStyle` (a colour or a `CanvasGradient`, and the
//! gradient's shader), and `globalCompositeOperation`. A gradient's stops are charged to the
//! executor's memory account, and their number is capped: each pixel a gradient paints looks
//! at every stop, so the stops multiply the cost of every fill drawn with it.

use std::cell::RefCell;
use std::rc::Rc;

use tiny_skia::{
    BlendMode, GradientStop, LinearGradient, RadialGradient, Shader, SpreadMode, Transform,
};

use super::color::Rgba;
use super::{over_limit, CanvasError};
use crate::memory::{vec_bytes, Charge, MemoryAccount};

/// The most stops a gradient holds: far more than any chart's colour scale needs, few enough
/// that a fill's cost per pixel stays small (each pixel compares its position with every stop).
pub const MAX_GRADIENT_STOPS: usize = 1024;

/// A `fillStyle` or `strokeStyle`.
#[derive(Debug, Clone)]
pub enum Style {
    Color(Rgba),
    /// Shared with the sandbox's `CanvasGradient` object: stops added later apply to later
    /// drawing, as in browsers.
    Gradient(Rc<RefCell<Gradient>>),
}

impl Style {
    /// What painting one pixel with this style costs, in the units of
    /// [`super::raster::BAND_WORK`].
    pub(super) fn pixel_cost(&self) -> usize {
        match self {
            Style::Color(_) => 1,
            Style::Gradient(gradient) => gradient.try_borrow().map_or(1, |g| g.pixel_cost()),
        }
    }
}

/// A `CanvasGradient`.
#[derive(Debug)]
pub struct Gradient {
    kind: GradientKind,
    stops: Vec<(f32, Rgba)>,
    /// What `stops` holds.
    held: Charge,
}

impl PartialEq for Gradient {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.stops == other.stops
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum GradientKind {
    Linear([f32; 4]),
    Radial([f32; 6]),
}

#[allow(clippy::cast_possible_truncation, reason = "tiny-skia draws in f32")]
pub(super) fn narrow(value: f64) -> f32 {
    value as f32
}

impl Gradient {
    /// `createLinearGradient(x0, y0, x1, y1)`; a `TypeError` for non-finite arguments.
    pub fn linear(
        x0: f64,
        y0: f64,
        x1: f64,
        y1: f64,
        account: &Rc<MemoryAccount>,
    ) -> Result<Self, CanvasError> {
        let points = [x0, y0, x1, y1];
        if !points.iter().all(|v| v.is_finite()) {
            return Err(CanvasError::type_error(
                "createLinearGradient(): every coordinate must be a finite number",
            ));
        }
        Ok(Self {
            kind: GradientKind::Linear(points.map(narrow)),
            stops: Vec::new(),
            held: account.empty_charge(),
        })
    }

    /// `createRadialGradient(x0, y0, r0, x1, y1, r1)`.
    pub fn radial(circles: [f64; 6], account: &Rc<MemoryAccount>) -> Result<Self, CanvasError> {
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
            held: account.empty_charge(),
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
        if self.stops.len() >= MAX_GRADIENT_STOPS {
            return Err(CanvasError::range(format!(
                "addColorStop(): a gradient holds at most {MAX_GRADIENT_STOPS} colour stops"
            )));
        }
        if self.stops.len() == self.stops.capacity() {
            let capacity = (self.stops.capacity() * 2).clamp(4, MAX_GRADIENT_STOPS);
            self.held
                .resize(vec_bytes::<(f32, Rgba)>(capacity))
                .map_err(|over| over_limit("addColorStop()", "its colour stops", over))?;
            self.stops.reserve_exact(capacity - self.stops.len());
        }
        let offset = narrow(offset);
        // Stops at the same offset keep the order they were added in.
        let at = self.stops.partition_point(|(o, _)| *o <= offset);
        self.stops.insert(at, (offset, color));
        Ok(())
    }

    /// The stops.
    pub fn stop_count(&self) -> usize {
        self.stops.len()
    }

    fn pixel_cost(&self) -> usize {
        // tiny-skia compares each pixel's position with every stop beyond the second.
        2 + self.stops.len() / 4
    }

    /// The bytes [`Gradient::shader`] allocates for its copy of the stops (tiny-skia keeps
    /// them twice more, as colours and offsets).
    pub(super) fn shader_bytes(&self) -> usize {
        self.stops.len().saturating_mul(64)
    }

    /// The shader, in user space mapped by `transform`; `None` when nothing is painted (no
    /// stops, or a degenerate gradient, which the spec paints as nothing).
    pub(super) fn shader(&self, alpha: f32, transform: Transform) -> Option<Shader<'static>> {
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
pub struct CompositeOp(pub(super) BlendMode);

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
