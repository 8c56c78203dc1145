//! The Canvas 2D renderer: a bitmap and the state machine of one `CanvasRenderingContext2D`
//! (HTML Living Standard, "The canvas element"), drawn with tiny-skia. Pure Rust: it knows
//! neither QuickJS nor napi; `engine::realm::canvas` binds it to the sandbox, and finished bitmaps
//! leave the engine as [`Image`]s (PNG bytes) with a run's result.
//!
//! Everything a canvas holds, and what tiny-skia allocates for one of its calls, is charged to
//! the executor's [`MemoryAccount`](crate::memory::MemoryAccount) before it is allocated, so that
//! `memoryLimitBytes` bounds it; every call whose cost grows with what the code controls is
//! either painted in bands between which the run's interrupt is consulted, or bounded by a cap
//! (gradient stops, dash entries, path points, a stroke's work).
//!
//! Spec: beyond it, as docs/contract.md "Where we go beyond SES" decides ("what the agent drew");
//! `CodeOutput.images` is an optional extension of the result (§10.2).

mod color;
mod drawing;
mod encode;
mod font;
mod path;
mod raster;
mod style;

use base64::Engine as _;

pub use color::Rgba;
pub use drawing::{
    check_dash_entries, Canvas, ImageDataRect, MAX_DASH_ENTRIES, MAX_FONT_LENGTH, MAX_SAVE_DEPTH,
};
pub use font::{FontSpec, TextAlign, TextBaseline, TextMetrics};
pub use path::{CornerRadii, MAX_PATH_POINTS};
pub use raster::{stroke_work, MAX_STROKE_WORK};
pub use style::{CompositeOp, Gradient, Style, MAX_GRADIENT_STOPS};

/// The default of `maxCanvasSize`: the largest width or height of a canvas, in pixels.
pub const DEFAULT_MAX_CANVAS_SIZE: u32 = 8192;

/// What went wrong in a canvas call; `kind` says which JS error the sandbox sees.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct CanvasError {
    pub kind: CanvasErrorKind,
    pub message: String,
}

/// The JS error a [`CanvasError`] becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanvasErrorKind {
    /// `TypeError`: a wrong argument type, or an API member this canvas does not implement.
    Type,
    /// `RangeError`: an argument out of range (the DOM's `IndexSizeError` and `SyntaxError` for
    /// numbers and colours are reported as `RangeError`s).
    Range,
    /// `RangeError` with `limit`: the named executor option refused the request.
    Limit(&'static str),
    /// The DOM's `InvalidStateError`.
    InvalidState,
    /// The run must stop (deadline, abort): no JS error, the engine ends the run.
    Interrupted,
}

impl CanvasError {
    pub(crate) fn type_error(message: impl Into<String>) -> Self {
        Self {
            kind: CanvasErrorKind::Type,
            message: message.into(),
        }
    }

    pub(crate) fn range(message: impl Into<String>) -> Self {
        Self {
            kind: CanvasErrorKind::Range,
            message: message.into(),
        }
    }

    pub(crate) fn index_size(message: impl Into<String>) -> Self {
        Self::range(message)
    }

    pub(crate) fn limit(option: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: CanvasErrorKind::Limit(option),
            message: message.into(),
        }
    }

    pub(crate) fn invalid_state(message: impl Into<String>) -> Self {
        Self {
            kind: CanvasErrorKind::InvalidState,
            message: message.into(),
        }
    }

    pub(crate) fn interrupted() -> Self {
        Self {
            kind: CanvasErrorKind::Interrupted,
            message: "the run was stopped".into(),
        }
    }
}

/// The `RangeError` with `limit: "memoryLimitBytes"` of a `call` refused because `what` it
/// needed did not fit.
pub(crate) fn over_limit(call: &str, what: &str, over: crate::memory::OverLimit) -> CanvasError {
    CanvasError::limit(
        "memoryLimitBytes",
        format!(
            "{call}: {} bytes for {what} do not fit: only {} are left under memoryLimitBytes",
            over.requested, over.available
        ),
    )
}

/// A finished canvas: what `CodeOutput.images` holds for each canvas drawn during a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Always `image/png`.
    pub mime_type: &'static str,
    pub width: u32,
    pub height: u32,
    /// The encoded file.
    pub data: Vec<u8>,
}

impl Image {
    /// The MIME type of every image.
    pub const PNG: &'static str = "image/png";

    /// A `data:` URL of the image (what `canvas.toDataURL()` returns, and what a JSON-safe
    /// result can carry).
    pub fn data_url(&self) -> String {
        data_url(self.mime_type, &self.data)
    }
}

/// `data:<mime>;base64,<data>`.
pub fn data_url(mime_type: &str, data: &[u8]) -> String {
    let mut url = format!("data:{mime_type};base64,");
    base64::engine::general_purpose::STANDARD.encode_string(data, &mut url);
    url
}

/// Decodes a PNG of [`Image`] into `(width, height, straight RGBA)`, for tests that read back
/// the pixels a host receives.
#[cfg(test)]
pub(crate) fn decode_png(data: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(data));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut rgba = vec![0; reader.output_buffer_size().expect("a PNG size")];
    let frame = reader.next_frame(&mut rgba).expect("PNG data");
    assert_eq!(frame.color_type, png::ColorType::Rgba);
    rgba.truncate(frame.buffer_size());
    (frame.width, frame.height, rgba)
}

#[cfg(test)]
mod tests;
