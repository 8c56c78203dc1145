//! The pixels of a canvas as code addresses them directly: `getImageData` and `putImageData`
//! (straight-alpha RGBA, ignoring the drawing state, as the spec says), `drawImage` of another
//! canvas, and snapshots of the bitmap. Copies are charged to the canvas's memory account, and
//! the run's interrupt is consulted between bands of rows.

use std::rc::Rc;

use tiny_skia::{FillRule, FilterQuality, Paint, Pattern, Pixmap, SpreadMode, Transform};

use super::Canvas;
use crate::canvas::style::narrow;
use crate::canvas::{over_limit, CanvasError};
use crate::memory::Charge;

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

impl Canvas {
    /// `getImageData`: writes the straight-alpha RGBA of `rect` into `data` (`rect.bytes()`
    /// long, zeroed: transparent black stays outside the bitmap); the run's interrupt is
    /// consulted between bands of rows.
    pub fn read_image_data(&self, rect: ImageDataRect, data: &mut [u8]) -> Result<(), CanvasError> {
        if data.len() != rect.bytes() {
            return Err(CanvasError::invalid_state(
                "getImageData(): the image data's length does not match its width and height",
            ));
        }
        let (w, h) = (i64::from(self.width()), i64::from(self.height()));
        let pixels = self.pixmap.pixels();
        let rows_per_check = rows_per_check(rect.width);
        for row in 0..i64::from(rect.height) {
            if row % rows_per_check == rows_per_check - 1 && self.interrupted() {
                return Err(CanvasError::interrupted());
            }
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
        Ok(())
    }

    /// `putImageData(data, dx, dy, dirtyX, dirtyY, dirtyWidth, dirtyHeight)`: copies the dirty
    /// part of `width`×`height` straight RGBA `data` to `(dx, dy)`, ignoring the transform,
    /// alpha, compositing and clip, as the spec says; the run's interrupt is consulted between
    /// bands of rows.
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
            (x0.saturating_add(dw)).min(i64::from(width)),
            (y0.saturating_add(dh)).min(i64::from(height)),
        );
        let (x0, y0) = (x0.max(0), y0.max(0));
        let (w, h) = (i64::from(self.width()), i64::from(self.height()));
        let interrupted = Rc::clone(&self.interrupted);
        let rows_per_check = rows_per_check(width);
        let pixels = self.pixmap.pixels_mut();
        for sy in y0..y1 {
            if (sy - y0) % rows_per_check == rows_per_check - 1 && interrupted() {
                return Err(CanvasError::interrupted());
            }
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

    /// A snapshot of the bitmap (`drawImage` of a canvas onto itself draws from one), with the
    /// charge for its pixels.
    pub fn snapshot(&self) -> Result<(Pixmap, Charge), CanvasError> {
        let held = self
            .account
            .charge(self.pixmap.data().len())
            .map_err(|over| over_limit("drawImage()", "a copy of the canvas", over))?;
        Ok((self.pixmap.clone(), held))
    }

    /// The bitmap, for drawing it onto another canvas.
    pub fn bitmap(&self) -> &Pixmap {
        &self.pixmap
    }

    /// `drawImage(source, sx, sy, sw, sh, dx, dy, dw, dh)` with a canvas as the source.
    pub fn draw_image(
        &mut self,
        source: &Pixmap,
        src: [f64; 4],
        dst: [f64; 4],
    ) -> Result<(), CanvasError> {
        if !src.iter().chain(dst.iter()).all(|v| v.is_finite()) {
            return Ok(());
        }
        let normalise = |[x, y, w, h]: [f64; 4]| {
            let (x, w) = if w < 0.0 { (x + w, -w) } else { (x, w) };
            let (y, h) = if h < 0.0 { (y + h, -h) } else { (y, h) };
            [x, y, w, h]
        };
        let [mut sx, mut sy, mut sw, mut sh] = normalise(src);
        let [mut dx, mut dy, mut dw, mut dh] = normalise(dst);
        if sw == 0.0 || sh == 0.0 || dw == 0.0 || dh == 0.0 {
            return Ok(());
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
            return Ok(());
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
            return Ok(());
        };
        let transform = self.state.transform;
        // A filtered image pixel reads four source pixels.
        self.paint_path(
            "drawImage()",
            &rect,
            (&paint, 4),
            Some(FillRule::Winding),
            transform,
        )
    }

    /// The colour of one pixel, straight alpha (for tests and diagnostics).
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        let color = self.pixmap.pixel(x, y)?.demultiply();
        Some([color.red(), color.green(), color.blue(), color.alpha()])
    }
}

/// How many rows of `width` pixels are copied between two looks at the interrupt.
fn rows_per_check(width: u32) -> i64 {
    i64::from((1 << 18) / width.max(1)).max(1)
}
