//! A bitmap as a PNG file, encoded a band of rows at a time: the file grows under a charge of
//! the memory account, the straight-alpha copy is one row rather than the whole bitmap, and the
//! caller's interrupt is consulted between bands.

use std::io::{self, Write};
use std::rc::Rc;

use tiny_skia::Pixmap;

use super::{over_limit, CanvasError, Image};
use crate::memory::{Charge, MemoryAccount, OverLimit};

/// Bitmaps up to this size (a megapixel) are PNG-compressed at the balanced level; larger ones
/// with png's fast mode, about five times quicker for files two to six times larger.
const BALANCED_PNG_BYTES: usize = 4 << 20;

/// Pixels encoded between two looks at the interrupt (a few milliseconds of work).
const PIXELS_PER_CHECK: usize = 1 << 18;

/// What the encoder holds besides the file and a row: its deflate state and chunk buffer.
const ENCODER_BYTES: usize = 1 << 20;

/// A file being written, whose memory is charged before it grows.
struct ChargedFile {
    data: Vec<u8>,
    held: Charge,
    refused: Option<OverLimit>,
}

impl Write for ChargedFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let needed = self.data.len().saturating_add(bytes.len());
        if needed > self.data.capacity() {
            let capacity = needed.max(self.data.capacity() * 2).max(64 << 10);
            if let Err(over) = self.held.resize(capacity) {
                self.refused = Some(over);
                return Err(io::Error::other("memoryLimitBytes"));
            }
            self.data.reserve_exact(capacity - self.data.len());
        }
        self.data.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The PNG file of `pixmap` (straight-alpha RGBA), with the charge that holds its bytes.
/// `interrupted` is consulted between bands of rows.
pub(super) fn png(
    pixmap: &Pixmap,
    account: &Rc<MemoryAccount>,
    interrupted: &dyn Fn() -> bool,
) -> Result<(Image, Charge), CanvasError> {
    let (width, height) = (pixmap.width(), pixmap.height());
    let row_bytes = width as usize * 4;
    let _working = account
        .charge(ENCODER_BYTES + 3 * row_bytes)
        .map_err(|over| over_limit("PNG encoding", "the encoder", over))?;
    let mut file = ChargedFile {
        data: Vec::new(),
        held: account.empty_charge(),
        refused: None,
    };
    let encoded = encode_into(pixmap, &mut file, interrupted);
    match (encoded, file.refused) {
        (Ok(()), _) => Ok((
            Image {
                mime_type: Image::PNG,
                width,
                height,
                data: file.data,
            },
            file.held,
        )),
        (Err(_), Some(over)) => Err(over_limit("PNG encoding", "the file", over)),
        (Err(error), None) => Err(error),
    }
}

fn encode_into(
    pixmap: &Pixmap,
    file: &mut ChargedFile,
    interrupted: &dyn Fn() -> bool,
) -> Result<(), CanvasError> {
    let failed = |error: png::EncodingError| {
        CanvasError::invalid_state(format!("PNG encoding failed: {error}"))
    };
    let width = pixmap.width();
    let mut encoder = png::Encoder::new(file, width, pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(if pixmap.data().len() <= BALANCED_PNG_BYTES {
        png::Compression::Balanced
    } else {
        png::Compression::Fast
    });
    let mut writer = encoder.write_header().map_err(failed)?;
    let mut stream = writer.stream_writer().map_err(failed)?;
    let rows_per_check = (PIXELS_PER_CHECK / width as usize).max(1);
    let mut row = vec![0; width as usize * 4];
    for (y, pixels) in pixmap.pixels().chunks_exact(width as usize).enumerate() {
        if y % rows_per_check == rows_per_check - 1 && interrupted() {
            return Err(CanvasError::interrupted());
        }
        for (out, pixel) in row.chunks_exact_mut(4).zip(pixels) {
            let color = pixel.demultiply();
            out.copy_from_slice(&[color.red(), color.green(), color.blue(), color.alpha()]);
        }
        stream
            .write_all(&row)
            .map_err(|error| failed(png::EncodingError::IoError(error)))?;
    }
    stream.finish().map_err(failed)?;
    writer.finish().map_err(failed)
}
