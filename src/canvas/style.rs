//! How a canvas paints: `fillStyle` and `strokeStyle` (a colour or a `CanvasGradient`, and the
//! gradient's shader), and `globalCompositeOperation`.

use std::cell::RefCell;
use std::rc::Rc;

use tiny_skia::{
    BlendMode, GradientStop, LinearGradient, RadialGradient, Shader, SpreadMode, Transform,
};

use super::color::Rgba;
use super::CanvasError;

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
pub(super) fn narrow(value: f64) -> f32 {
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
