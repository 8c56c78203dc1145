//! Text: the CSS `font` shorthand as agents write it (`bold 14px sans-serif`,
//! `italic 600 12pt "Helvetica Neue", Arial`), the bundled DejaVu Sans faces (regular and bold;
//! every family resolves to them, italic is a synthetic slant), and the layout of one line:
//! advances from `hmtx`, pair kerning from `kern`, glyph outlines from `glyf`, all through
//! ttf-parser. Glyphs become tiny-skia paths, so text obeys the same transform, clip, styles and
//! compositing as every other shape, and `strokeText` strokes real outlines.

use std::sync::LazyLock;

use tiny_skia::{PathBuilder, Rect};
use ttf_parser::{Face, GlyphId};

use super::path::MAX_PATH_POINTS;
use super::CanvasError;

static REGULAR: LazyLock<Option<Face<'static>>> =
    LazyLock::new(|| Face::parse(include_bytes!("fonts/DejaVuSans.ttf"), 0).ok());
static BOLD: LazyLock<Option<Face<'static>>> =
    LazyLock::new(|| Face::parse(include_bytes!("fonts/DejaVuSans-Bold.ttf"), 0).ok());

/// The slant of synthetic italics (horizontal shift per unit of height), about 11°.
const ITALIC_SKEW: f64 = 0.2;
/// How often long texts look at the interrupt (in characters).
const INTERRUPT_EVERY: usize = 4096;

/// `font-style`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FontStyle {
    Normal,
    Italic,
    Oblique,
}

/// A parsed `font` value.
#[derive(Debug, Clone, PartialEq)]
pub struct FontSpec {
    pub style: FontStyle,
    pub small_caps: bool,
    /// 1–1000; `bold` is 700.
    pub weight: u16,
    /// The size in CSS pixels.
    pub size: f64,
    /// The family list as written (it only matters for the `font` getter: every family draws
    /// with the bundled face).
    pub family: String,
}

impl Default for FontSpec {
    /// The canvas's initial font, `10px sans-serif`.
    fn default() -> Self {
        Self {
            style: FontStyle::Normal,
            small_caps: false,
            weight: 400,
            size: 10.0,
            family: "sans-serif".into(),
        }
    }
}

/// Named sizes of CSS (`medium` is 16px).
const SIZE_KEYWORDS: [(&str, f64); 7] = [
    ("xx-small", 9.0),
    ("x-small", 10.0),
    ("small", 13.0),
    ("medium", 16.0),
    ("large", 18.0),
    ("x-large", 24.0),
    ("xx-large", 32.0),
];

const STRETCH_KEYWORDS: [&str; 9] = [
    "ultra-condensed",
    "extra-condensed",
    "condensed",
    "semi-condensed",
    "semi-expanded",
    "expanded",
    "extra-expanded",
    "ultra-expanded",
    "normal",
];

/// A CSS length in pixels (`14px`, `10.5pt`, `1.2em` of the 10px default), or a size keyword.
fn font_size(token: &str) -> Option<f64> {
    let lower = token.to_ascii_lowercase();
    if let Some((_, px)) = SIZE_KEYWORDS.iter().find(|(name, _)| *name == lower) {
        return Some(*px);
    }
    match lower.as_str() {
        "larger" => return Some(12.0),
        "smaller" => return Some(8.333_333),
        _ => {}
    }
    let split = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-' || c == 'e'))
        .unwrap_or(lower.len());
    // `1e2px` vs units starting with `e` (`em`, `ex`): take the longest numeric prefix that parses.
    let (number, unit) = (0..=split)
        .rev()
        .find_map(|end| lower[..end].parse::<f64>().ok().map(|n| (n, &lower[end..])))?;
    let px = match unit {
        "px" => number,
        "pt" => number * 4.0 / 3.0,
        "pc" => number * 16.0,
        "in" => number * 96.0,
        "cm" => number * 96.0 / 2.54,
        "mm" => number * 96.0 / 25.4,
        "q" => number * 96.0 / 101.6,
        "em" | "rem" => number * 10.0,
        "ex" | "ch" => number * 5.0,
        "%" => number * 0.1,
        _ => return None,
    };
    (px.is_finite() && px >= 0.0).then_some(px)
}

/// Splits `font` text into tokens, keeping quoted family names and everything after the size
/// together.
fn leading_tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split_whitespace().map(move |token| {
        let at = text[offset..].find(token).map_or(offset, |i| offset + i);
        offset = at + token.len();
        (at, token)
    })
}

impl FontSpec {
    /// Parses the CSS `font` shorthand; `None` for text CSS rejects (the canvas then keeps its
    /// font). System fonts (`caption`, `menu`, …) and CSS-wide keywords are refused too.
    pub fn parse(text: &str) -> Option<FontSpec> {
        let text = text.trim();
        let mut spec = FontSpec::default();
        let (mut style, mut variant, mut weight, mut stretch) = (false, false, false, false);
        for (at, token) in leading_tokens(text) {
            let lower = token.to_ascii_lowercase();
            // The size, possibly with `/line-height` attached or following.
            let (size_token, rest_at) = match lower.split_once('/') {
                Some((size, _)) => (size.to_owned(), at + token.len()),
                None => (lower.clone(), at + token.len()),
            };
            if let Some(size) = font_size(&size_token) {
                let mut rest = text[rest_at..].trim_start();
                if !lower.contains('/') {
                    if let Some(after_slash) = rest.strip_prefix('/') {
                        let after_slash = after_slash.trim_start();
                        let end = after_slash
                            .find(char::is_whitespace)
                            .unwrap_or(after_slash.len());
                        rest = after_slash[end..].trim_start();
                    }
                }
                let family = rest.trim();
                if family.is_empty() || family.ends_with(',') {
                    return None;
                }
                spec.size = size;
                spec.family = family.to_owned();
                return Some(spec);
            }
            match lower.as_str() {
                "normal" => {}
                "italic" if !style => {
                    spec.style = FontStyle::Italic;
                    style = true;
                }
                "oblique" if !style => {
                    spec.style = FontStyle::Oblique;
                    style = true;
                }
                "small-caps" if !variant => {
                    spec.small_caps = true;
                    variant = true;
                }
                "bold" | "bolder" if !weight => {
                    spec.weight = 700;
                    weight = true;
                }
                "lighter" if !weight => {
                    spec.weight = 100;
                    weight = true;
                }
                _ if !weight && lower.parse::<u16>().is_ok_and(|w| (1..=1000).contains(&w)) => {
                    spec.weight = lower.parse().ok()?;
                    weight = true;
                }
                _ if !stretch && STRETCH_KEYWORDS.contains(&lower.as_str()) => stretch = true,
                _ => return None,
            }
        }
        None
    }

    /// The `font` getter's serialisation: `[italic] [small-caps] [weight] <size>px <family>`.
    pub fn to_css(&self) -> String {
        let mut parts = Vec::new();
        match self.style {
            FontStyle::Normal => {}
            FontStyle::Italic => parts.push("italic".to_owned()),
            FontStyle::Oblique => parts.push("oblique".to_owned()),
        }
        if self.small_caps {
            parts.push("small-caps".to_owned());
        }
        match self.weight {
            400 => {}
            700 => parts.push("bold".to_owned()),
            other => parts.push(other.to_string()),
        }
        parts.push(format!("{}px", js_number(self.size)));
        parts.push(self.family.clone());
        parts.join(" ")
    }

    fn face(&self) -> Result<&'static Face<'static>, CanvasError> {
        let face = if self.weight >= 600 {
            &*BOLD
        } else {
            &*REGULAR
        };
        face.as_ref()
            .ok_or_else(|| CanvasError::invalid_state("the bundled font could not be read"))
    }

    fn skew(&self) -> f64 {
        if self.style == FontStyle::Normal {
            0.0
        } else {
            ITALIC_SKEW
        }
    }
}

/// A number as JS prints it (`14`, `10.5`).
fn js_number(value: f64) -> String {
    let text = format!("{value}");
    text.strip_suffix(".0").map(str::to_owned).unwrap_or(text)
}

/// `textAlign`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextAlign {
    Start,
    End,
    Left,
    Right,
    Center,
}

impl TextAlign {
    /// Every value, with its name.
    pub const ALL: [(TextAlign, &'static str); 5] = [
        (Self::Start, "start"),
        (Self::End, "end"),
        (Self::Left, "left"),
        (Self::Right, "right"),
        (Self::Center, "center"),
    ];

    /// The horizontal offset of the text's left edge from the anchor (text runs left to right).
    fn offset(self, width: f64) -> f64 {
        match self {
            Self::Start | Self::Left => 0.0,
            Self::End | Self::Right => -width,
            Self::Center => -width / 2.0,
        }
    }
}

/// `textBaseline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextBaseline {
    Top,
    Hanging,
    Middle,
    Alphabetic,
    Ideographic,
    Bottom,
}

impl TextBaseline {
    /// Every value, with its name.
    pub const ALL: [(TextBaseline, &'static str); 6] = [
        (Self::Top, "top"),
        (Self::Hanging, "hanging"),
        (Self::Middle, "middle"),
        (Self::Alphabetic, "alphabetic"),
        (Self::Ideographic, "ideographic"),
        (Self::Bottom, "bottom"),
    ];
}

/// The vertical metrics of a face at a size, in pixels (ascents up, descents down, positive).
struct VerticalMetrics {
    ascent: f64,
    descent: f64,
    em_ascent: f64,
    em_descent: f64,
}

impl VerticalMetrics {
    fn of(face: &Face<'_>, size: f64) -> Self {
        let units = f64::from(face.units_per_em());
        let ascender = f64::from(face.ascender());
        let descender = -f64::from(face.descender());
        let total = (ascender + descender).max(1.0);
        Self {
            ascent: ascender * size / units,
            descent: descender * size / units,
            em_ascent: size * ascender / total,
            em_descent: size * descender / total,
        }
    }

    /// How far below the anchor's `y` the alphabetic baseline lies for `baseline`.
    fn shift(&self, baseline: TextBaseline) -> f64 {
        match baseline {
            TextBaseline::Alphabetic => 0.0,
            TextBaseline::Top => self.em_ascent,
            TextBaseline::Hanging => self.em_ascent * 0.8,
            TextBaseline::Middle => (self.em_ascent - self.em_descent) / 2.0,
            TextBaseline::Ideographic | TextBaseline::Bottom => -self.em_descent,
        }
    }
}

/// What `measureText()` returns (the `TextMetrics` interface), in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TextMetrics {
    pub width: f64,
    pub actual_bounding_box_left: f64,
    pub actual_bounding_box_right: f64,
    pub actual_bounding_box_ascent: f64,
    pub actual_bounding_box_descent: f64,
    pub font_bounding_box_ascent: f64,
    pub font_bounding_box_descent: f64,
    pub em_height_ascent: f64,
    pub em_height_descent: f64,
    pub hanging_baseline: f64,
    pub alphabetic_baseline: f64,
    pub ideographic_baseline: f64,
}

impl TextMetrics {
    /// The fields with their `TextMetrics` names.
    pub fn fields(&self) -> [(&'static str, f64); 12] {
        [
            ("width", self.width),
            ("actualBoundingBoxLeft", self.actual_bounding_box_left),
            ("actualBoundingBoxRight", self.actual_bounding_box_right),
            ("actualBoundingBoxAscent", self.actual_bounding_box_ascent),
            ("actualBoundingBoxDescent", self.actual_bounding_box_descent),
            ("fontBoundingBoxAscent", self.font_bounding_box_ascent),
            ("fontBoundingBoxDescent", self.font_bounding_box_descent),
            ("emHeightAscent", self.em_height_ascent),
            ("emHeightDescent", self.em_height_descent),
            ("hangingBaseline", self.hanging_baseline),
            ("alphabeticBaseline", self.alphabetic_baseline),
            ("ideographicBaseline", self.ideographic_baseline),
        ]
    }
}

/// Told the points of an outline as it grows; refuses with the error to report.
pub type Grow<'a> = &'a mut dyn FnMut(usize) -> Result<(), CanvasError>;

/// One line of text in one font, laid out left to right from the pen position 0.
pub struct TextLine<'t> {
    face: &'static Face<'static>,
    text: &'t str,
    /// Pixels per font unit.
    scale: f64,
    skew: f64,
    /// The advance width in pixels, kerning included.
    pub width: f64,
}

/// The canvas replaces these with spaces before drawing or measuring.
fn displayed(c: char) -> char {
    if matches!(c, '\t' | '\n' | '\u{000C}' | '\r') {
        ' '
    } else {
        c
    }
}

impl<'t> TextLine<'t> {
    /// Lays `text` out in `font`; `interrupted` is consulted every few thousand characters.
    pub fn new(
        font: &FontSpec,
        text: &'t str,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Self, CanvasError> {
        let face = font.face()?;
        let scale = font.size / f64::from(face.units_per_em());
        let mut line = Self {
            face,
            text,
            scale,
            skew: font.skew(),
            width: 0.0,
        };
        let mut units = 0.0;
        line.for_each_glyph(interrupted, |_, pen| {
            units = pen;
            true
        })?;
        line.width = units * scale;
        Ok(line)
    }

    /// Calls `each(glyph, pen)` for every glyph, pen in font units from the line's start, and
    /// once more with the final pen position and glyph 0; stops early when `each` says so.
    fn for_each_glyph(
        &self,
        interrupted: &dyn Fn() -> bool,
        mut each: impl FnMut(Option<GlyphId>, f64) -> bool,
    ) -> Result<(), CanvasError> {
        let kern = self.face.tables().kern;
        let mut pen = 0.0;
        let mut previous: Option<GlyphId> = None;
        for (index, c) in self.text.chars().enumerate() {
            if index % INTERRUPT_EVERY == INTERRUPT_EVERY - 1 && interrupted() {
                return Err(CanvasError::interrupted());
            }
            let glyph = self.face.glyph_index(displayed(c)).unwrap_or(GlyphId(0));
            if let (Some(left), Some(kern)) = (previous, kern) {
                let pair = kern
                    .subtables
                    .into_iter()
                    .filter(|table| table.horizontal && !table.variable)
                    .find_map(|table| table.glyphs_kerning(left, glyph));
                pen += f64::from(pair.unwrap_or(0));
            }
            if !each(Some(glyph), pen) {
                return Ok(());
            }
            pen += f64::from(self.face.glyph_hor_advance(glyph).unwrap_or(0));
            previous = Some(glyph);
        }
        each(None, pen);
        Ok(())
    }

    /// The glyph outlines, placed with the anchor `(x, y)`, `align`, `baseline` and a horizontal
    /// squeeze (`maxWidth`), in user space; `visible` culls glyphs by their user-space bounds.
    /// `grow` is told the outline's points after each glyph (it charges them), and may refuse;
    /// an outline past [`MAX_PATH_POINTS`] is refused as an over-long path is.
    pub fn outlines(
        &self,
        font: &FontSpec,
        (x, y): (f64, f64),
        (align, baseline): (TextAlign, TextBaseline),
        squeeze: f64,
        visible: &dyn Fn(Rect) -> bool,
        (interrupted, grow): (&dyn Fn() -> bool, Grow<'_>),
    ) -> Result<Option<tiny_skia::Path>, CanvasError> {
        let metrics = VerticalMetrics::of(self.face, font.size);
        let left = x + align.offset(self.width) * squeeze;
        let base = y + metrics.shift(baseline);
        let (sx, sy) = (self.scale * squeeze, self.scale);
        let mut builder = PathBuilder::new();
        let mut refused = None;
        self.for_each_glyph(interrupted, |glyph, pen| {
            let Some(glyph) = glyph else { return true };
            let Some(bounds) = self.face.glyph_bounding_box(glyph) else {
                return true;
            };
            let origin = left + pen * sx;
            let user = |fx: f32, fy: f32| {
                let (fx, fy) = (f64::from(fx), f64::from(fy));
                #[allow(clippy::cast_possible_truncation, reason = "tiny-skia draws in f32")]
                (
                    (origin + fx * sx + self.skew * fy * sy) as f32,
                    (base - fy * sy) as f32,
                )
            };
            let (l, t) = user(f32::from(bounds.x_min), f32::from(bounds.y_max));
            let (r, b) = user(f32::from(bounds.x_max), f32::from(bounds.y_min));
            let slant = (self.skew * f64::from(bounds.y_max.max(0)) * sy).abs();
            #[allow(clippy::cast_possible_truncation, reason = "tiny-skia draws in f32")]
            let slant = slant as f32;
            if let Some(rect) =
                Rect::from_ltrb(l.min(r) - slant, t.min(b), l.max(r) + slant, t.max(b))
            {
                if visible(rect) {
                    let mut sink = Outline {
                        builder: &mut builder,
                        map: &user,
                    };
                    self.face.outline_glyph(glyph, &mut sink);
                    // A glyph adds at most a few hundred points: checked after each.
                    let points = builder.len();
                    let checked = if points > MAX_PATH_POINTS {
                        Err(CanvasError::range(format!(
                            "the text's outlines have more than {MAX_PATH_POINTS} points; draw it in parts"
                        )))
                    } else {
                        grow(points)
                    };
                    if let Err(error) = checked {
                        refused = Some(error);
                        return false;
                    }
                }
            }
            true
        })?;
        if let Some(error) = refused {
            return Err(error);
        }
        Ok(builder.finish())
    }

    /// `measureText()` for this line under `baseline` (text runs left to right from the anchor).
    pub fn metrics(
        &self,
        font: &FontSpec,
        align: TextAlign,
        baseline: TextBaseline,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<TextMetrics, CanvasError> {
        let vertical = VerticalMetrics::of(self.face, font.size);
        let shift = vertical.shift(baseline);
        let offset = align.offset(self.width);
        let (mut left, mut right, mut top, mut bottom) = (f64::MAX, f64::MIN, f64::MIN, f64::MAX);
        self.for_each_glyph(interrupted, |glyph, pen| {
            if let Some(bounds) = glyph.and_then(|glyph| self.face.glyph_bounding_box(glyph)) {
                let slant = self.skew * f64::from(bounds.y_max.max(0));
                left = left.min(pen + f64::from(bounds.x_min));
                right = right.max(pen + f64::from(bounds.x_max) + slant);
                top = top.max(f64::from(bounds.y_max));
                bottom = bottom.min(f64::from(bounds.y_min));
            }
            true
        })?;
        let inked = left <= right;
        let s = self.scale;
        Ok(TextMetrics {
            width: self.width,
            actual_bounding_box_left: if inked { -(offset + left * s) } else { 0.0 },
            actual_bounding_box_right: if inked { offset + right * s } else { 0.0 },
            actual_bounding_box_ascent: if inked { top * s - shift } else { 0.0 },
            actual_bounding_box_descent: if inked { shift - bottom * s } else { 0.0 },
            font_bounding_box_ascent: vertical.ascent - shift,
            font_bounding_box_descent: vertical.descent + shift,
            em_height_ascent: vertical.em_ascent - shift,
            em_height_descent: vertical.em_descent + shift,
            hanging_baseline: vertical.em_ascent * 0.8 - shift,
            alphabetic_baseline: -shift,
            ideographic_baseline: -vertical.em_descent - shift,
        })
    }
}

/// Feeds a glyph outline (font units, y up) into a path, through `map`.
struct Outline<'a, F: Fn(f32, f32) -> (f32, f32)> {
    builder: &'a mut PathBuilder,
    map: &'a F,
}

impl<F: Fn(f32, f32) -> (f32, f32)> ttf_parser::OutlineBuilder for Outline<'_, F> {
    fn move_to(&mut self, x: f32, y: f32) {
        let (x, y) = (self.map)(x, y);
        self.builder.move_to(x, y);
    }

    fn line_to(&mut self, x: f32, y: f32) {
        let (x, y) = (self.map)(x, y);
        self.builder.line_to(x, y);
    }

    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        let (x1, y1) = (self.map)(x1, y1);
        let (x, y) = (self.map)(x, y);
        self.builder.quad_to(x1, y1, x, y);
    }

    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        let (x1, y1) = (self.map)(x1, y1);
        let (x2, y2) = (self.map)(x2, y2);
        let (x, y) = (self.map)(x, y);
        self.builder.cubic_to(x1, y1, x2, y2, x, y);
    }

    fn close(&mut self) {
        self.builder.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    #[test]
    fn the_shorthand_agents_write_parses() {
        let bold = FontSpec::parse("bold 14px sans-serif").unwrap();
        assert_eq!(
            (bold.weight, bold.size, bold.family.as_str()),
            (700, 14.0, "sans-serif")
        );
        let all =
            FontSpec::parse("italic small-caps 600 12pt/1.5 \"Helvetica Neue\", Arial").unwrap();
        assert_eq!(all.style, FontStyle::Italic);
        assert!(all.small_caps);
        assert_eq!(all.weight, 600);
        assert!((all.size - 16.0).abs() < 1e-9);
        assert_eq!(all.family, "\"Helvetica Neue\", Arial");
        assert_eq!(FontSpec::parse("16px / 2 serif").unwrap().family, "serif");
        assert_eq!(FontSpec::parse("large monospace").unwrap().size, 18.0);
        assert_eq!(FontSpec::parse("2em x").unwrap().size, 20.0);
    }

    #[test]
    fn invalid_fonts_are_refused() {
        for text in [
            "",
            "14px",
            "bold",
            "sans-serif",
            "14 sans-serif",
            "bold bold 1px a",
            "-1px a",
            "menu",
        ] {
            assert_eq!(FontSpec::parse(text), None, "{text}");
        }
    }

    #[test]
    fn fonts_serialise_in_canonical_order() {
        assert_eq!(
            FontSpec::parse("bold italic 14px Arial").unwrap().to_css(),
            "italic bold 14px Arial"
        );
        assert_eq!(FontSpec::default().to_css(), "10px sans-serif");
        assert_eq!(
            FontSpec::parse("300 10.5px x").unwrap().to_css(),
            "300 10.5px x"
        );
    }

    #[test]
    fn width_scales_with_size_and_bold_is_wider() {
        let at = |font: &str| {
            let font = FontSpec::parse(font).unwrap();
            TextLine::new(&font, "Hello, world", &never).unwrap().width
        };
        let (ten, twenty) = (at("10px a"), at("20px a"));
        assert!(ten > 40.0 && ten < 90.0, "{ten}");
        assert!((twenty - 2.0 * ten).abs() < 1e-9);
        assert!(at("bold 10px a") > ten);
    }

    #[test]
    fn kerning_pairs_apply() {
        let font = FontSpec::parse("100px a").unwrap();
        let pair = TextLine::new(&font, "AV", &never).unwrap().width;
        let apart = TextLine::new(&font, "A", &never).unwrap().width
            + TextLine::new(&font, "V", &never).unwrap().width;
        assert!(pair < apart, "AV {pair} vs A+V {apart}");
    }

    #[test]
    fn metrics_follow_the_baseline_and_alignment() {
        let font = FontSpec::parse("20px a").unwrap();
        let line = TextLine::new(&font, "Hg", &never).unwrap();
        let alpha = line
            .metrics(&font, TextAlign::Left, TextBaseline::Alphabetic, &never)
            .unwrap();
        assert!(alpha.actual_bounding_box_ascent > 13.0 && alpha.actual_bounding_box_ascent < 16.0);
        assert!(alpha.actual_bounding_box_descent > 3.0 && alpha.actual_bounding_box_descent < 6.0);
        assert_eq!(alpha.alphabetic_baseline, 0.0);
        let top = line
            .metrics(&font, TextAlign::Center, TextBaseline::Top, &never)
            .unwrap();
        assert!(top.em_height_ascent.abs() < 1e-9);
        assert!((top.actual_bounding_box_left - top.actual_bounding_box_right).abs() < 2.0);
    }

    #[test]
    fn long_texts_can_be_interrupted() {
        let font = FontSpec::default();
        let text = "x".repeat(3 * INTERRUPT_EVERY);
        let error = TextLine::new(&font, &text, &|| true).err().unwrap();
        assert_eq!(error, CanvasError::interrupted());
    }
}
