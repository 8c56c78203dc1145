//! CSS colours for `fillStyle`, `strokeStyle` and gradient stops: parsed by `csscolorparser`
//! (named colours, `#rgb[a]`, `#rrggbb[aa]`, `rgb()`, `hsl()`, `hwb()`, `lab()`, `oklch()`, …)
//! and serialised back the way the HTML canvas does (`#rrggbb` when opaque, `rgba(r, g, b, a)`
//! otherwise).

use std::fmt;

/// A straight (not premultiplied) 8-bit sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

impl Rgba {
    /// Opaque black, the initial `fillStyle` and `strokeStyle`.
    pub const BLACK: Rgba = Rgba {
        r: 0,
        g: 0,
        b: 0,
        a: 255,
    };

    /// Parses a CSS colour; `None` for anything CSS would reject (the canvas then keeps its
    /// previous style, as browsers do). `currentcolor` is the initial black: a canvas without a
    /// document has no other.
    pub fn parse(text: &str) -> Option<Rgba> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("currentcolor") {
            return Some(Rgba::BLACK);
        }
        let [r, g, b, a] = csscolorparser::parse(text).ok()?.clamp().to_rgba8();
        Some(Rgba { r, g, b, a })
    }

    /// As a tiny-skia colour, with `alpha` (the global alpha) multiplied in.
    pub fn to_skia(self, alpha: f32) -> tiny_skia::Color {
        let mut color = tiny_skia::Color::from_rgba8(self.r, self.g, self.b, self.a);
        color.apply_opacity(alpha);
        color
    }
}

/// The HTML canvas's serialisation of a colour (what the `fillStyle` getter returns).
impl fmt::Display for Rgba {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.a == 255 {
            write!(f, "#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
        } else {
            // The shortest decimal that reads back as the same 8-bit alpha, as browsers print it.
            let alpha = f64::from(self.a) / 255.0;
            let alpha = (1..=3)
                .map(|digits| format!("{alpha:.digits$}"))
                .find(|short| {
                    short
                        .parse::<f64>()
                        .is_ok_and(|back| (back * 255.0).round() as u8 == self.a)
                })
                .unwrap_or_else(|| format!("{alpha}"));
            let alpha = alpha.trim_end_matches('0').trim_end_matches('.');
            let alpha = if alpha.is_empty() { "0" } else { alpha };
            write!(f, "rgba({}, {}, {}, {alpha})", self.r, self.g, self.b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rgba;

    #[test]
    fn css_colour_syntaxes_parse() {
        let red = Rgba {
            r: 255,
            g: 0,
            b: 0,
            a: 255,
        };
        for text in [
            "red",
            "RED",
            " #f00 ",
            "#ff0000",
            "rgb(255, 0, 0)",
            "rgb(255 0 0)",
            "hsl(0, 100%, 50%)",
        ] {
            assert_eq!(Rgba::parse(text), Some(red), "{text}");
        }
        assert_eq!(
            Rgba::parse("rgba(0, 0, 255, 0.5)"),
            Some(Rgba {
                r: 0,
                g: 0,
                b: 255,
                a: 128
            })
        );
        assert_eq!(Rgba::parse("transparent").map(|c| c.a), Some(0));
        assert_eq!(Rgba::parse("currentColor"), Some(Rgba::BLACK));
    }

    #[test]
    fn invalid_colours_are_refused() {
        for text in ["", "nope", "#12", "rgb(1, 2)", "12px"] {
            assert_eq!(Rgba::parse(text), None, "{text}");
        }
    }

    #[test]
    fn colours_serialise_like_the_html_canvas() {
        assert_eq!(Rgba::parse("steelblue").unwrap().to_string(), "#4682b4");
        assert_eq!(
            Rgba::parse("rgba(255, 0, 0, 0.5)").unwrap().to_string(),
            "rgba(255, 0, 0, 0.5)"
        );
        assert_eq!(
            Rgba::parse("rgba(1, 2, 3, 0.25)").unwrap().to_string(),
            "rgba(1, 2, 3, 0.25)"
        );
        assert_eq!(
            Rgba::parse("transparent").unwrap().to_string(),
            "rgba(0, 0, 0, 0)"
        );
    }
}
