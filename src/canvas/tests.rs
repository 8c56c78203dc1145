//! Pixel tests of the renderer: colours at points, text bounding boxes, limits.

use std::cell::{Cell, RefCell};
use std::f64::consts::TAU;
use std::rc::Rc;

use super::*;
use crate::memory::MemoryAccount;

fn unlimited() -> Rc<MemoryAccount> {
    MemoryAccount::new(usize::MAX)
}

fn never() -> Rc<dyn Fn() -> bool> {
    Rc::new(|| false)
}

fn canvas(width: u32, height: u32) -> Canvas {
    Canvas::new(
        f64::from(width),
        f64::from(height),
        DEFAULT_MAX_CANVAS_SIZE,
        MemoryAccount::new(64 << 20),
        never(),
    )
    .unwrap()
}

const RED: [u8; 4] = [255, 0, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];
const CLEAR: [u8; 4] = [0, 0, 0, 0];

fn color(css: &str) -> Style {
    Style::Color(Rgba::parse(css).unwrap())
}

fn at(canvas: &Canvas, x: u32, y: u32) -> [u8; 4] {
    canvas.pixel(x, y).unwrap()
}

/// The bounding box of pixels with any alpha: (left, top, right, bottom), inclusive.
fn inked(canvas: &Canvas) -> Option<(u32, u32, u32, u32)> {
    let mut found: Option<(u32, u32, u32, u32)> = None;
    for y in 0..canvas.height() {
        for x in 0..canvas.width() {
            if at(canvas, x, y)[3] > 0 {
                found = Some(match found {
                    None => (x, y, x, y),
                    Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
                });
            }
        }
    }
    found
}

#[test]
fn fill_rect_paints_exactly_its_pixels() {
    let mut c = canvas(20, 20);
    c.set_fill_style(color("red"));
    c.fill_rect(5.0, 5.0, 10.0, 10.0).unwrap();
    assert_eq!(at(&c, 5, 5), RED);
    assert_eq!(at(&c, 14, 14), RED);
    assert_eq!(at(&c, 4, 5), CLEAR);
    assert_eq!(at(&c, 15, 15), CLEAR);
    assert_eq!(inked(&c), Some((5, 5, 14, 14)));
}

#[test]
fn clear_rect_and_negative_sizes() {
    let mut c = canvas(20, 20);
    c.fill_rect(0.0, 0.0, 20.0, 20.0).unwrap();
    c.clear_rect(15.0, 15.0, -10.0, -10.0).unwrap();
    assert_eq!(at(&c, 5, 5), CLEAR);
    assert_eq!(at(&c, 14, 14), CLEAR);
    assert_eq!(at(&c, 15, 15), [0, 0, 0, 255]);
    assert_eq!(at(&c, 4, 4), [0, 0, 0, 255]);
}

#[test]
fn transforms_apply_to_rectangles_and_paths() {
    let mut c = canvas(40, 40);
    c.set_fill_style(color("blue"));
    c.translate(10.0, 10.0);
    c.scale(2.0, 2.0);
    c.fill_rect(0.0, 0.0, 5.0, 5.0).unwrap();
    assert_eq!(inked(&c), Some((10, 10, 19, 19)));

    let mut c = canvas(40, 40);
    c.translate(20.0, 20.0);
    c.rotate(TAU / 4.0);
    c.fill_rect(0.0, 0.0, 10.0, 5.0).unwrap();
    // Rotated a quarter turn clockwise: x runs down, y runs left.
    assert_eq!(inked(&c), Some((15, 20, 19, 29)));

    let mut c = canvas(40, 40);
    c.set_transform([1.0, 0.0, 0.0, 1.0, 30.0, 0.0]);
    c.reset_transform();
    c.save().unwrap();
    c.translate(100.0, 0.0);
    c.restore();
    c.fill_rect(0.0, 0.0, 2.0, 2.0).unwrap();
    assert_eq!(inked(&c), Some((0, 0, 1, 1)));
    assert_eq!(c.transform_matrix(), [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn path_points_keep_the_transform_of_their_time() {
    let mut c = canvas(40, 40);
    c.begin_path();
    c.rect(0.0, 0.0, 10.0, 10.0).unwrap();
    c.translate(20.0, 20.0);
    c.fill(false).unwrap();
    // The rectangle was added before the translation.
    assert_eq!(inked(&c), Some((0, 0, 9, 9)));
}

#[test]
fn fill_rules_differ_on_overlapping_subpaths() {
    let draw = |even_odd: bool| {
        let mut c = canvas(30, 30);
        c.begin_path();
        c.rect(0.0, 0.0, 30.0, 30.0).unwrap();
        c.rect(10.0, 10.0, 10.0, 10.0).unwrap();
        c.fill(even_odd).unwrap();
        c
    };
    assert_eq!(at(&draw(false), 15, 15)[3], 255);
    assert_eq!(at(&draw(true), 15, 15)[3], 0);
    assert_eq!(at(&draw(true), 5, 5)[3], 255);
}

#[test]
fn arcs_curves_and_round_rects_cover_their_shapes() {
    let mut c = canvas(100, 100);
    c.begin_path();
    c.arc(50.0, 50.0, 20.0, 0.0, TAU, false).unwrap();
    c.fill(false).unwrap();
    assert_eq!(at(&c, 50, 50)[3], 255);
    assert_eq!(at(&c, 50, 31)[3], 255);
    assert_eq!(at(&c, 34, 34)[3], 0, "outside the circle, inside its box");
    let (l, t, r, b) = inked(&c).unwrap();
    assert!(
        (29..=30).contains(&l)
            && (29..=30).contains(&t)
            && (69..=70).contains(&r)
            && (69..=70).contains(&b)
    );

    let mut c = canvas(100, 100);
    c.begin_path();
    c.ellipse([50.0, 50.0, 40.0, 10.0, 0.0, 0.0, TAU], false)
        .unwrap();
    c.fill(false).unwrap();
    let (l, t, r, b) = inked(&c).unwrap();
    assert!(l <= 10 && r >= 89 && t >= 39 && b <= 60);

    let mut c = canvas(100, 100);
    c.begin_path();
    c.round_rect((10.0, 10.0, 80.0, 80.0), [(20.0, 20.0); 4])
        .unwrap();
    c.fill(false).unwrap();
    assert_eq!(at(&c, 50, 11)[3], 255);
    assert_eq!(at(&c, 11, 11)[3], 0, "the corner is cut");

    let mut c = canvas(100, 100);
    c.begin_path();
    c.move_to(10.0, 90.0).unwrap();
    c.quadratic_curve_to(50.0, -70.0, 90.0, 90.0).unwrap();
    c.bezier_curve_to([90.0, 95.0, 10.0, 95.0, 10.0, 90.0])
        .unwrap();
    c.close_path();
    c.fill(false).unwrap();
    assert_eq!(at(&c, 50, 50)[3], 255);
    assert_eq!(at(&c, 50, 5)[3], 0);
}

#[test]
fn strokes_follow_line_width_caps_and_dashes() {
    let mut c = canvas(60, 20);
    c.set_stroke_style(color("red"));
    c.set_line_width(4.0);
    c.begin_path();
    c.move_to(10.0, 10.0).unwrap();
    c.line_to(50.0, 10.0).unwrap();
    c.stroke().unwrap();
    assert_eq!(inked(&c), Some((10, 8, 49, 11)));
    assert_eq!(at(&c, 30, 9), RED);

    c.set_line_cap("square");
    c.clear_rect(0.0, 0.0, 60.0, 20.0).unwrap();
    c.stroke().unwrap();
    assert_eq!(inked(&c), Some((8, 8, 51, 11)));

    c.set_line_cap("butt");
    c.set_line_dash(&[5.0, 5.0]).unwrap();
    assert_eq!(c.line_dash(), vec![5.0, 5.0]);
    c.clear_rect(0.0, 0.0, 60.0, 20.0).unwrap();
    c.stroke().unwrap();
    assert_eq!(at(&c, 12, 10), RED);
    assert_eq!(at(&c, 17, 10), CLEAR, "a gap of the dash");
    assert_eq!(at(&c, 22, 10), RED);

    c.set_line_dash(&[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(c.line_dash(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    c.set_line_dash(&[1.0, -2.0]).unwrap();
    assert_eq!(c.line_dash().len(), 6, "negative segments are ignored");
}

#[test]
fn stroke_width_scales_with_the_transform_current_at_stroke_time() {
    let mut c = canvas(40, 40);
    c.begin_path();
    c.move_to(0.0, 20.0).unwrap();
    c.line_to(40.0, 20.0).unwrap();
    c.scale(1.0, 4.0);
    c.stroke().unwrap();
    let (_, t, _, b) = inked(&c).unwrap();
    assert_eq!((t, b), (18, 21));
}

#[test]
fn clip_limits_drawing_until_restore() {
    let mut c = canvas(40, 40);
    c.save().unwrap();
    c.begin_path();
    c.rect(10.0, 10.0, 10.0, 10.0).unwrap();
    c.clip(false).unwrap();
    c.fill_rect(0.0, 0.0, 40.0, 40.0).unwrap();
    assert_eq!(inked(&c), Some((10, 10, 19, 19)));
    c.begin_path();
    c.rect(15.0, 0.0, 40.0, 40.0).unwrap();
    c.clip(false).unwrap();
    c.clear_rect(0.0, 0.0, 40.0, 40.0).unwrap();
    assert_eq!(at(&c, 12, 12)[3], 255, "outside the second clip");
    assert_eq!(at(&c, 17, 12)[3], 0);
    c.restore();
    c.fill_rect(30.0, 30.0, 5.0, 5.0).unwrap();
    assert_eq!(at(&c, 32, 32)[3], 255, "the clip ends at restore()");
}

#[test]
fn global_alpha_and_composite_operations() {
    let mut c = canvas(10, 10);
    c.set_fill_style(color("blue"));
    c.fill_rect(0.0, 0.0, 10.0, 10.0).unwrap();
    c.set_global_alpha(0.5);
    c.set_global_alpha(2.0);
    assert_eq!(c.global_alpha(), 0.5, "out-of-range alpha is ignored");
    c.set_fill_style(color("red"));
    c.fill_rect(0.0, 0.0, 5.0, 10.0).unwrap();
    let [r, g, b, a] = at(&c, 2, 2);
    assert!((126..=129).contains(&r) && g == 0 && (126..=129).contains(&b) && a == 255);

    c.set_global_alpha(1.0);
    c.set_composite(CompositeOp::parse("destination-out").unwrap());
    assert_eq!(c.composite().name(), "destination-out");
    c.fill_rect(5.0, 0.0, 5.0, 10.0).unwrap();
    assert_eq!(at(&c, 7, 2), CLEAR);
    assert!(CompositeOp::parse("plus-darker").is_none());
}

#[test]
fn gradients_interpolate_their_stops() {
    let mut c = canvas(101, 10);
    let mut gradient = Gradient::linear(0.0, 0.0, 100.0, 0.0, &unlimited()).unwrap();
    gradient.add_color_stop(0.0, "red").unwrap();
    gradient.add_color_stop(1.0, "blue").unwrap();
    c.set_fill_style(Style::Gradient(Rc::new(RefCell::new(gradient))));
    c.fill_rect(0.0, 0.0, 101.0, 10.0).unwrap();
    let left = at(&c, 0, 5);
    let middle = at(&c, 50, 5);
    let right = at(&c, 100, 5);
    assert!(left[0] > 245 && left[2] < 10, "{left:?}");
    assert!(right[2] > 245 && right[0] < 10, "{right:?}");
    assert!(
        (110..=145).contains(&middle[0]) && (110..=145).contains(&middle[2]),
        "{middle:?}"
    );

    let mut radial = Gradient::radial([50.0, 5.0, 0.0, 50.0, 5.0, 50.0], &unlimited()).unwrap();
    radial.add_color_stop(0.0, "white").unwrap();
    radial.add_color_stop(1.0, "black").unwrap();
    c.set_fill_style(Style::Gradient(Rc::new(RefCell::new(radial))));
    c.fill_rect(0.0, 0.0, 101.0, 10.0).unwrap();
    assert!(at(&c, 50, 5)[0] > 240);
    assert!(at(&c, 0, 5)[0] < 10);

    let mut bad = Gradient::linear(0.0, 0.0, 1.0, 1.0, &unlimited()).unwrap();
    assert!(bad.add_color_stop(1.5, "red").is_err());
    assert!(bad.add_color_stop(0.5, "not-a-colour").is_err());
    assert!(Gradient::radial([0.0, 0.0, -1.0, 0.0, 0.0, 1.0], &unlimited()).is_err());
}

#[test]
fn a_gradient_without_stops_paints_nothing() {
    let mut c = canvas(10, 10);
    let gradient = Gradient::linear(0.0, 0.0, 10.0, 0.0, &unlimited()).unwrap();
    c.set_fill_style(Style::Gradient(Rc::new(RefCell::new(gradient))));
    c.fill_rect(0.0, 0.0, 10.0, 10.0).unwrap();
    assert_eq!(inked(&c), None);
}

#[test]
fn invalid_style_values_are_ignored() {
    let mut c = canvas(10, 10);
    c.set_line_width(3.0);
    c.set_line_width(-1.0);
    c.set_line_width(f64::NAN);
    assert_eq!(c.line_width(), 3.0);
    c.set_line_cap("nope");
    c.set_line_join("round");
    c.set_line_join("nope");
    assert_eq!((c.line_cap(), c.line_join()), ("butt", "round"));
    c.set_font("bold 20px serif").unwrap();
    c.set_font("not a font").unwrap();
    assert_eq!(c.font().to_css(), "bold 20px serif");
}

#[test]
fn filled_text_lies_inside_its_measured_box() {
    let mut c = canvas(200, 60);
    c.set_font("bold 24px sans-serif").unwrap();
    c.set_fill_style(color("black"));
    let metrics = c.measure_text("Sales 2024").unwrap();
    c.draw_text("Sales 2024", 20.0, 40.0, None, true).unwrap();
    let (l, t, r, b) = inked(&c).unwrap();
    let left = 20.0 - metrics.actual_bounding_box_left;
    let right = 20.0 + metrics.actual_bounding_box_right;
    let top = 40.0 - metrics.actual_bounding_box_ascent;
    let bottom = 40.0 + metrics.actual_bounding_box_descent;
    let near = |pixel: u32, edge: f64| (f64::from(pixel) - edge).abs() <= 1.5;
    assert!(
        near(l, left) && near(r, right),
        "x {l}..{r} vs {left}..{right}"
    );
    assert!(
        near(t, top) && near(b, bottom),
        "y {t}..{b} vs {top}..{bottom}"
    );
    assert!(
        metrics.width > 120.0 && metrics.width < 160.0,
        "{}",
        metrics.width
    );
}

#[test]
fn text_align_and_baseline_move_the_text() {
    let bounds = |align: TextAlign, baseline: TextBaseline| {
        let mut c = canvas(200, 100);
        c.set_font("20px sans-serif").unwrap();
        c.set_text_align(align);
        c.set_text_baseline(baseline);
        c.draw_text("Hello", 100.0, 50.0, None, true).unwrap();
        inked(&c).unwrap()
    };
    let (l, _, r, b) = bounds(TextAlign::Center, TextBaseline::Alphabetic);
    assert!(
        (i64::from(l) + i64::from(r) - 200).abs() <= 2,
        "centred: {l}..{r}"
    );
    assert!((48..=50).contains(&b), "alphabetic: bottom {b}");
    let (_, _, r, _) = bounds(TextAlign::Right, TextBaseline::Alphabetic);
    assert!((98..=100).contains(&r), "right-aligned: {r}");
    let (l, t, _, _) = bounds(TextAlign::Left, TextBaseline::Top);
    assert!(
        (100..=102).contains(&l) && (50..=53).contains(&t),
        "top-left: {l}, {t}"
    );
    let (_, t, _, b) = bounds(TextAlign::Left, TextBaseline::Middle);
    assert!(t < 50 && b > 50, "middle: {t}..{b}");
}

#[test]
fn max_width_squeezes_text() {
    let mut c = canvas(300, 40);
    c.set_font("20px sans-serif").unwrap();
    c.draw_text("A fairly long label", 10.0, 30.0, Some(50.0), true)
        .unwrap();
    let (l, _, r, _) = inked(&c).unwrap();
    assert!(l >= 10 && r <= 61, "{l}..{r}");
    let mut c = canvas(300, 40);
    c.draw_text("x", 10.0, 30.0, Some(0.0), true).unwrap();
    assert_eq!(inked(&c), None);
}

#[test]
fn stroke_text_outlines_glyphs_and_rotated_text_draws() {
    let mut c = canvas(100, 100);
    c.set_font("bold 60px sans-serif").unwrap();
    c.set_line_width(1.0);
    c.draw_text("O", 20.0, 80.0, None, false).unwrap();
    let (l, t, r, b) = inked(&c).unwrap();
    let (cx, cy) = ((l + r) / 2, (t + b) / 2);
    assert_eq!(at(&c, cx, cy)[3], 0, "the counter of a stroked O is empty");

    let mut c = canvas(100, 100);
    c.set_font("20px sans-serif").unwrap();
    c.translate(50.0, 90.0);
    c.rotate(-TAU / 4.0);
    c.draw_text("Label", 0.0, 0.0, None, true).unwrap();
    let (l, t, r, b) = inked(&c).unwrap();
    assert!(
        b - t > r - l,
        "vertical text is taller than wide: {l},{t} {r},{b}"
    );
}

#[test]
fn image_data_round_trips_straight_alpha() {
    let mut c = canvas(10, 10);
    c.set_fill_style(color("rgba(255, 0, 0, 0.5)"));
    c.fill_rect(0.0, 0.0, 5.0, 5.0).unwrap();
    let rect = ImageDataRect::new(-1, -1, 4, 4, 8192).unwrap();
    let mut data = vec![0; rect.bytes()];
    c.read_image_data(rect, &mut data).unwrap();
    assert_eq!(&data[0..4], &CLEAR, "outside the bitmap");
    let inside = &data[(4 + 1) * 4..(4 + 1) * 4 + 4];
    assert_eq!(inside[0], 255);
    assert!((127..=129).contains(&inside[3]));

    let blue: Vec<u8> = BLUE.repeat(4);
    c.put_image_data((&blue, 2, 2), (8, 8), None).unwrap();
    assert_eq!(at(&c, 9, 9), BLUE);
    c.put_image_data((&blue, 2, 2), (0, 8), Some((1, 0, 1, 1)))
        .unwrap();
    assert_eq!(at(&c, 0, 8), CLEAR, "outside the dirty rectangle");
    assert_eq!(at(&c, 1, 8), BLUE);
    assert!(c.put_image_data((&blue[..4], 2, 2), (0, 0), None).is_err());

    assert!(ImageDataRect::new(0, 0, 0, 5, 8192).is_err());
    let flipped = ImageDataRect::new(5, 5, -2, -3, 8192).unwrap();
    assert_eq!(
        (flipped.x, flipped.y, flipped.width, flipped.height),
        (3, 2, 2, 3)
    );
    let error = ImageDataRect::new(0, 0, 9000, 1, 8192).unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Limit("maxCanvasSize"));
}

#[test]
fn draw_image_scales_and_crops_another_canvas() {
    let mut source = canvas(10, 10);
    source.set_fill_style(color("red"));
    source.fill_rect(0.0, 0.0, 5.0, 10.0).unwrap();
    source.set_fill_style(color("blue"));
    source.fill_rect(5.0, 0.0, 5.0, 10.0).unwrap();

    let mut c = canvas(40, 40);
    c.set_image_smoothing(false);
    c.draw_image(
        source.bitmap(),
        [0.0, 0.0, 10.0, 10.0],
        [0.0, 0.0, 40.0, 40.0],
    )
    .unwrap();
    assert_eq!(at(&c, 5, 20), RED);
    assert_eq!(at(&c, 35, 20), BLUE);

    let mut c = canvas(40, 40);
    c.draw_image(
        source.bitmap(),
        [5.0, 0.0, 5.0, 10.0],
        [10.0, 10.0, 5.0, 10.0],
    )
    .unwrap();
    assert_eq!(inked(&c), Some((10, 10, 14, 19)));
    assert_eq!(at(&c, 12, 15), BLUE);

    let (snapshot, _copy) = c.snapshot().unwrap();
    c.draw_image(&snapshot, [0.0, 0.0, 40.0, 40.0], [20.0, 0.0, 40.0, 40.0])
        .unwrap();
    assert_eq!(at(&c, 32, 15), BLUE, "drawn onto itself through a snapshot");
}

#[test]
fn sizes_are_capped_and_pixels_are_budgeted() {
    // An eighth of the limit stays for QuickJS: room for one 100×100 bitmap, not one more pixel.
    let account = MemoryAccount::new(100 * 100 * 4 * 8 / 7 + 3);
    let make = |w: f64, h: f64, max: u32| Canvas::new(w, h, max, Rc::clone(&account), never());
    let error = make(200.0, 10.0, 100).unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Limit("maxCanvasSize"));
    assert_eq!(
        make(0.0, 10.0, 100).unwrap_err().kind,
        CanvasErrorKind::Range
    );
    assert_eq!(
        make(f64::NAN, 10.0, 100).unwrap_err().kind,
        CanvasErrorKind::Range
    );

    let full = make(100.0, 100.0, 8192).unwrap();
    let error = make(1.0, 1.0, 8192).unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Limit("memoryLimitBytes"));
    drop(full);
    let mut small = make(50.0, 50.0, 8192).unwrap();
    small.resize(100.0, 100.0).unwrap();
    assert_eq!((small.width(), small.height()), (100, 100));
    assert!(small.clip(false).is_err(), "a clip mask needs budget too");
    assert!(small.resize(200.0, 200.0).is_err());
    assert_eq!(
        (small.width(), small.height()),
        (100, 100),
        "a failed resize keeps the bitmap"
    );
    small.resize(10.0, 10.0).unwrap();
    let _another = make(90.0, 90.0, 8192).unwrap();
}

#[test]
fn save_depth_is_bounded_and_restore_without_save_is_harmless() {
    let mut c = canvas(2, 2);
    c.restore();
    for _ in 0..drawing::MAX_SAVE_DEPTH {
        c.save().unwrap();
    }
    assert!(c.save().is_err());
}

#[test]
fn long_text_stops_when_interrupted() {
    let asked = Rc::new(Cell::new(0));
    let counter = Rc::clone(&asked);
    let mut c = Canvas::new(
        10.0,
        10.0,
        100,
        MemoryAccount::new(1 << 20),
        Rc::new(move || {
            counter.set(counter.get() + 1);
            true
        }),
    )
    .unwrap();
    let error = c
        .draw_text(&"w".repeat(100_000), 0.0, 5.0, None, true)
        .unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Interrupted);
    assert_eq!(asked.get(), 1);
}

#[test]
fn png_output_decodes_to_the_same_pixels() {
    let mut c = canvas(30, 20);
    c.set_fill_style(color("#336699"));
    c.fill_rect(0.0, 0.0, 15.0, 20.0).unwrap();
    let (image, _file) = c.to_image(&|| false).unwrap();
    assert_eq!(
        (image.mime_type, image.width, image.height),
        ("image/png", 30, 20)
    );
    assert_eq!(&image.data[..8], b"\x89PNG\r\n\x1a\n");
    let (width, height, rgba) = decode_png(&image.data);
    assert_eq!((width, height), (30, 20));
    let at = (5 * 30 + 5) * 4;
    assert_eq!(&rgba[at..at + 4], &[0x33, 0x66, 0x99, 255]);
    let clear = (5 * 30 + 20) * 4;
    assert_eq!(&rgba[clear..clear + 4], &[0, 0, 0, 0]);
    assert!(image
        .data_url()
        .starts_with("data:image/png;base64,iVBORw0KGgo"));
}

/// Everything a canvas holds is charged to its account while it holds it, and given back when
/// it goes: the bitmap, a clip mask, the dash list and font of the state and of each saved
/// state, the path's points, a gradient's stops.
#[test]
fn everything_a_canvas_holds_is_charged_and_given_back() {
    let account = MemoryAccount::new(64 << 20);
    let mut c = Canvas::new(100.0, 50.0, 8192, Rc::clone(&account), never()).unwrap();
    let pixels = 100 * 50 * 4;
    assert_eq!(account.charged(), pixels);
    c.set_line_dash(&[2.0; 100]).unwrap();
    c.set_font(&("12px ".to_owned() + &"x".repeat(500)))
        .unwrap();
    let state = account.charged() - pixels;
    assert!(state >= 100 * 4 + 500, "{state}");
    c.save().unwrap();
    let saved = account.charged() - pixels - state;
    assert!(
        saved >= state,
        "a saved state holds its own copies: {saved}"
    );
    for i in 0..1000 {
        c.line_to(f64::from(i), 1.0).unwrap();
    }
    c.clip(false).unwrap();
    let mut gradient = Gradient::linear(0.0, 0.0, 1.0, 0.0, &account).unwrap();
    for i in 0..100 {
        gradient
            .add_color_stop(f64::from(i) / 100.0, "red")
            .unwrap();
    }
    let with_all = account.charged();
    assert!(with_all >= pixels + state + saved + 1000 * 10 + 100 * 50 + 100 * 8);
    c.restore();
    c.begin_path();
    assert!(account.charged() < with_all);
    drop(gradient);
    drop(c);
    assert_eq!(account.charged(), 0);
    assert!(account.peak() >= with_all);
}

/// Past their caps, dash lists and gradient stops are refused with a `RangeError`, and a font
/// value longer than any valid one is ignored without being read.
#[test]
fn dash_lists_gradient_stops_and_fonts_are_capped() {
    let mut c = canvas(10, 10);
    let error = c
        .set_line_dash(&vec![1.0; MAX_DASH_ENTRIES + 1])
        .unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Range);
    c.set_line_dash(&vec![1.0; MAX_DASH_ENTRIES]).unwrap();
    let mut gradient = Gradient::linear(0.0, 0.0, 1.0, 0.0, &unlimited()).unwrap();
    for _ in 0..MAX_GRADIENT_STOPS {
        gradient.add_color_stop(0.5, "red").unwrap();
    }
    let error = gradient.add_color_stop(0.5, "red").unwrap_err();
    assert_eq!(error.kind, CanvasErrorKind::Range);
    c.set_font(&format!("12px {}", "f".repeat(MAX_FONT_LENGTH)))
        .unwrap();
    assert_eq!(c.font().to_css(), "10px sans-serif");
}
