//! The canvas as sandbox code sees it, through a real engine thread: images out, limits,
//! deadlines, unsupported members.

use std::time::{Duration, Instant};

use crate::engine::testing::{engine_with, run_on, slowdown, FakeHost};
use crate::engine::{EngineError, RunReport};
use crate::options::Options;
use crate::value::Value;

mod bounds;

fn options() -> Options {
    Options {
        timeout_ms: 5_000,
        ..Options::default()
    }
}

fn output(report: &RunReport) -> Value {
    match &report.result {
        Ok(completion) => completion.output.clone(),
        Err(error) => panic!("run failed: {error:?}"),
    }
}

fn text(report: &RunReport) -> String {
    match output(report) {
        Value::String(text) => text,
        other => panic!("not a string: {other:?}"),
    }
}

/// The straight RGBA of pixel `(x, y)` of a PNG.
fn png_pixel(png: &[u8], x: u32, y: u32) -> [u8; 4] {
    let (width, _, rgba) = crate::canvas::decode_png(png);
    let at = ((y * width + x) * 4) as usize;
    [rgba[at], rgba[at + 1], rgba[at + 2], rgba[at + 3]]
}

#[test]
fn a_run_that_draws_returns_its_canvas_as_png() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const c = getCanvas(40, 30); const g = c.getContext('2d');
         g.fillStyle = 'rgb(0, 128, 255)'; g.fillRect(10, 10, 20, 10); 'done'",
        &options,
    );
    assert_eq!(text(&report), "done");
    assert_eq!(report.images.len(), 1);
    let image = &report.images[0];
    assert_eq!(
        (image.mime_type, image.width, image.height),
        ("image/png", 40, 30)
    );
    assert_eq!(png_pixel(&image.data, 15, 15), [0, 128, 255, 255]);
    assert_eq!(png_pixel(&image.data, 5, 5), [0, 0, 0, 0]);
}

#[test]
fn runs_that_do_not_draw_return_no_images() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    assert!(run_on(&engine, "1 + 1", &options).images.is_empty());
    let report = run_on(
        &engine,
        "globalThis.kept = getCanvas(10, 10); kept.getContext('2d').lineWidth = 3; kept.width",
        &options,
    );
    assert_eq!(output(&report), Value::Number(10.0));
    assert!(report.images.is_empty(), "a canvas that was not drawn on");
}

#[test]
fn images_come_in_creation_order_and_a_kept_canvas_returns_when_drawn_again() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "var first = getCanvas(10, 10), second = new OffscreenCanvas(20, 20);
         second.getContext('2d').fillRect(0, 0, 1, 1);
         first.getContext('2d').fillRect(0, 0, 1, 1);
         second.getContext('2d').fillRect(1, 1, 1, 1);",
        &options,
    );
    let sizes: Vec<u32> = report.images.iter().map(|image| image.width).collect();
    assert_eq!(sizes, [10, 20]);

    let report = run_on(&engine, "first.width", &options);
    assert!(report.images.is_empty());
    let report = run_on(
        &engine,
        "first.getContext('2d').fillStyle = 'red'; first.getContext('2d').fillRect(5, 5, 5, 5)",
        &options,
    );
    assert_eq!(report.images.len(), 1);
    let png = &report.images[0].data;
    assert_eq!(
        png_pixel(png, 0, 0),
        [0, 0, 0, 255],
        "drawn in the first run"
    );
    assert_eq!(png_pixel(png, 7, 7), [255, 0, 0, 255], "drawn in this run");
}

#[test]
fn a_canvas_dropped_during_the_run_still_comes_back() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "(() => { getCanvas(7, 7).getContext('2d').fillRect(0, 0, 7, 7) })();
         Array.from({ length: 2000 }, (_, i) => ({ i }));",
        &options,
    );
    assert_eq!(report.images.len(), 1);
    assert_eq!(report.images[0].width, 7);
}

#[test]
fn a_failed_run_returns_no_images() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "getCanvas(5, 5).getContext('2d').fillRect(0, 0, 5, 5); throw new Error('late')",
        &options,
    );
    assert!(report.result.is_err());
    assert!(report.images.is_empty());
    assert!(
        run_on(&engine, "1", &options).images.is_empty(),
        "nothing left over"
    );
}

#[test]
fn the_size_cap_is_a_catchable_range_error_and_a_structured_failure() {
    let options = Options {
        max_canvas_size: 100,
        ..options()
    };
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "(() => { try { getCanvas(101, 10) } catch (e) { return `${e.name}|${e.limit}|${e.message}` } })()",
        &options,
    );
    let caught = text(&report);
    assert!(caught.starts_with("RangeError|maxCanvasSize|"), "{caught}");
    assert!(caught.contains("101×10"), "{caught}");

    let report = run_on(
        &engine,
        "const big = new OffscreenCanvas(10, 1000)",
        &options,
    );
    match report.result {
        Err(EngineError::CanvasLimit { limit, message, at }) => {
            assert_eq!(limit, "maxCanvasSize");
            assert!(message.contains("maxCanvasSize"), "{message}");
            assert_eq!(at.map(|at| at.location.line), Some(1));
        }
        other => panic!("expected a canvas limit, got {other:?}"),
    }
    assert!(!report.dirty);
    assert_eq!(output(&run_on(&engine, "2", &options)), Value::Number(2.0));
}

#[test]
fn pixels_count_against_the_memory_limit_and_are_given_back() {
    let options = Options {
        memory_limit_bytes: 16 << 20,
        ..options()
    };
    let engine = engine_with(FakeHost::default(), &options);
    // 4096 × 1024 × 4 = 16 MiB: more than the heap leaves.
    let report = run_on(&engine, "getCanvas(4096, 1024)", &options);
    match &report.result {
        Err(EngineError::CanvasLimit { limit, .. }) => assert_eq!(*limit, "memoryLimitBytes"),
        other => panic!("expected a canvas limit, got {other:?}"),
    }
    assert!(
        !report.dirty,
        "nothing was allocated: the executor stays usable"
    );

    // 12 MiB of pixels leave QuickJS about 4 MiB: a 6 MiB string no longer fits, and the run
    // fails at the heap limit even though the code catches QuickJS's error (docs/limits-and-errors.md "Limits and what they guarantee").
    let report = run_on(
        &engine,
        "var big = getCanvas(2048, 1536);
         (() => { try { return 'x'.repeat(6 << 20).length } catch (e) { return 'refused' } })()",
        &options,
    );
    assert!(
        matches!(
            report.result,
            Err(EngineError::Limit {
                limit: "memoryLimitBytes",
                ..
            })
        ),
        "{:?}",
        report.result
    );
    // Once the canvas is gone, the heap has its memory back (a fresh engine: the failed run
    // left the last one dirty).
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "var big = getCanvas(2048, 1536); big.width",
        &options,
    );
    assert_eq!(output(&report), Value::Number(2048.0));
    let report = run_on(
        &engine,
        "big = undefined; 'x'.repeat(6 << 20).length",
        &options,
    );
    assert_eq!(output(&report), Value::Number(f64::from(6 << 20)));

    // A canvas with a context is a cycle (each refers to the other): once dropped, it is
    // collected before a new canvas is refused. (Canvases drawn during a run are held until it
    // ends, to be returned.)
    let report = run_on(
        &engine,
        "var kept = getCanvas(2048, 1536); kept.getContext('2d').fillRect(0, 0, 1, 1)",
        &options,
    );
    assert_eq!(report.images.len(), 1);
    let report = run_on(
        &engine,
        "kept = undefined; getCanvas(2048, 1536).width",
        &options,
    );
    assert_eq!(output(&report), Value::Number(2048.0));
}

#[test]
fn drawing_stops_at_the_deadline() {
    let options = Options {
        timeout_ms: 300,
        ..options()
    };
    let engine = engine_with(FakeHost::default(), &options);
    let started = Instant::now();
    // Array.from's callback is not a loop the guard counts; each call fills 4 megapixels.
    let report = run_on(
        &engine,
        "const g = getCanvas(2048, 2048).getContext('2d');
         g.globalAlpha = 0.5;
         Array.from({ length: 1000000 }, () => g.fillRect(0, 0, 2048, 2048));",
        &options,
    );
    let took = started.elapsed();
    assert!(
        matches!(report.result, Err(EngineError::Timeout { .. })),
        "{:?}",
        report.result
    );
    assert!(
        took < Duration::from_secs(3) * slowdown(),
        "stopped after {took:?}"
    );
    assert!(report.images.is_empty());
}

#[test]
fn unsupported_members_throw_type_errors_naming_them() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let caught = |code: &str| {
        let report = run_on(
            &engine,
            &format!(
                "const g = getCanvas(5, 5).getContext('2d');
                 (() => {{ try {{ {code}; return 'no error' }} catch (e) {{ return `${{e.name}}: ${{e.message}}` }} }})()"
            ),
            &options,
        );
        text(&report)
    };
    let message = caught("g.createPattern(g.canvas, 'repeat')");
    assert!(
        message.starts_with("TypeError: CanvasRenderingContext2D.createPattern() is not supported"),
        "{message}"
    );
    let message = caught("g.shadowBlur = 4");
    assert!(
        message.starts_with("TypeError: CanvasRenderingContext2D.shadowBlur"),
        "{message}"
    );
    assert_eq!(
        caught("g.shadowBlur = 0; g.shadowColor = 'transparent'"),
        "no error"
    );
    let message = caught("g.canvas.getContext('webgl')");
    assert!(message.contains("getContext('webgl')"), "{message}");
    let message = caught("new Path2D()");
    assert!(
        message.starts_with("TypeError: Path2D is not supported"),
        "{message}"
    );
    assert_eq!(
        caught(
            "if (!(g instanceof CanvasRenderingContext2D)) throw 1; new CanvasRenderingContext2D()"
        ),
        "TypeError: Illegal constructor"
    );
    let message = caught("g.fill(new Path2D())");
    assert!(message.contains("Path2D"), "{message}");
}

#[test]
fn the_lazy_globals_behave_like_plain_writable_globals() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "ImageData = 5;
         const kinds = [typeof OffscreenCanvas, ImageData, typeof Path2D, typeof getCanvas];
         const c = getCanvas(1, 1);
         [...kinds, c instanceof OffscreenCanvas, c.constructor.name,
          Object.getOwnPropertyDescriptor(globalThis, 'OffscreenCanvas').writable].join()",
        &options,
    );
    assert_eq!(
        text(&report),
        "function,5,function,function,true,OffscreenCanvas,true"
    );
}

#[test]
fn the_api_round_trips_state_pixels_and_data_urls() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const c = getCanvas(4, 4), g = c.getContext('2d');
         const same = c.getContext('2d') === g && g.canvas === c;
         g.fillStyle = 'steelblue'; g.strokeStyle = 'rgba(255, 0, 0, 0.5)'; g.font = 'bold 14px sans-serif';
         g.textAlign = 'center'; g.textAlign = 'bogus'; g.lineWidth = -1;
         const data = new ImageData(2, 2);
         data.data.set([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 0, 0, 0, 0]);
         g.putImageData(data, 1, 1);
         const back = g.getImageData(1, 1, 2, 2);
         const m = g.measureText('Hi');
         [same, g.fillStyle, g.strokeStyle, g.font, g.textAlign, g.lineWidth,
          Array.from(back.data).join(','), back.data instanceof Uint8ClampedArray,
          m.width > 0 && m.actualBoundingBoxAscent > 0,
          c.toDataURL('image/jpeg').slice(0, 22)].join('|')",
        &options,
    );
    assert_eq!(
        text(&report),
        "true|#4682b4|rgba(255, 0, 0, 0.5)|bold 14px sans-serif|center|1|\
         255,0,0,255,0,255,0,255,0,0,255,255,0,0,0,0|true|true|data:image/png;base64,"
    );
    assert_eq!(report.images.len(), 1);
}

#[test]
fn reentrant_arguments_cannot_break_a_drawing_call() {
    let options = options();
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const g = getCanvas(10, 10).getContext('2d');
         const sneaky = { valueOf() { g.fillRect(0, 0, 1, 1); g.canvas.width = 20; return 2 } };
         g.fillRect(sneaky, 0, 5, 5);
         g.drawImage(g.canvas, sneaky, 0);
         g.canvas.width",
        &options,
    );
    assert_eq!(output(&report), Value::Number(20.0));
    assert_eq!(report.images.len(), 1);
}

#[test]
fn hostile_arguments_to_every_member_never_break_the_engine() {
    let options = Options {
        max_operations: 10_000_000,
        timeout_ms: 60_000,
        ..Options::default()
    };
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        r#"
        const c = getCanvas(40, 40), g = c.getContext('2d')
        const odd = [undefined, null, NaN, Infinity, -Infinity, -1, 0, 0.5, 1e308, -1e308, 2 ** 31,
          -(2 ** 31), 'x', '10', 'evenodd', 'red', {}, [], [1, 2, 3, 4, 5], [-1], () => 1,
          Symbol('s'), 1n, { valueOf() { g.beginPath(); return 7 } }, c, g, new ImageData(2, 2)]
        const targets = [[g, Object.getPrototypeOf(g)], [c, Object.getPrototypeOf(c)]]
        let calls = 0, threw = 0
        for (const [object, proto] of targets) {
          for (const name of Object.getOwnPropertyNames(proto)) {
            if (name === 'constructor') continue
            const d = Object.getOwnPropertyDescriptor(proto, name)
            for (const a of odd) {
              for (const b of [NaN, 1e308, 5, -5, 'x']) {
                calls++
                try {
                  if (typeof d.value === 'function') object[name](a, b, a, b, a, b, a, b, a)
                  else if (d.set) object[name] = a
                  else void object[name]
                } catch (e) {
                  threw++
                }
              }
            }
          }
        }
        for (const args of [[1e9, 1], [0, 0], [-5, 5], [NaN, NaN], [2, 'x']]) {
          try { new ImageData(...args) } catch { threw++ }
          try { getCanvas(...args) } catch { threw++ }
        }
        try { new ImageData(new Uint8ClampedArray(12), 2) } catch { threw++ }
        ;[calls, threw, c.width, c.height, g.getImageData(0, 0, 1, 1).data.length].join()
        "#,
        &options,
    );
    let summary = text(&report);
    let parts: Vec<u64> = summary.split(',').map(|n| n.parse().unwrap()).collect();
    assert!(parts[0] > 2000, "{summary}");
    assert!(parts[1] > 0 && parts[1] < parts[0], "{summary}");
    assert_eq!(parts[4], 4, "{summary}");
    // The engine still runs code.
    assert_eq!(
        output(&run_on(&engine, "6 * 7", &options)),
        Value::Number(42.0)
    );
}
