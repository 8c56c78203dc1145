//! Canvas work inside the executor's limits, through a real engine thread: every byte a canvas
//! holds counts against `memoryLimitBytes` (and `stats.peakHeapBytes`), every call whose cost
//! the code controls stops at the deadline or is capped, and re-entrant arguments cannot get
//! around either.

use std::time::{Duration, Instant};

use crate::engine::testing::{engine_with, run_on, FakeHost};
use crate::engine::{EngineError, RunReport};
use crate::options::Options;
use crate::value::Value;

const MIB: usize = 1 << 20;

/// How long after its deadline a run must have stopped (this suite's code is unoptimised, and
/// the machine may be loaded).
const LATE: Duration = Duration::from_millis(1500);

fn limited(memory_limit_bytes: usize, timeout_ms: u64) -> Options {
    Options {
        memory_limit_bytes,
        timeout_ms,
        max_operations: u64::MAX,
        ..Options::default()
    }
}

fn text(report: &RunReport) -> String {
    match &report.result {
        Ok(completion) => match &completion.output {
            Value::String(text) => text.clone(),
            other => format!("{other:?}"),
        },
        Err(error) => panic!("run failed: {error:?}"),
    }
}

fn peak(report: &RunReport) -> usize {
    usize::try_from(report.stats.peak_heap_bytes).unwrap()
}

/// Every `save()` copies the dash list and the font: 200 saves of a 1,000,000-entry dash list
/// took 800 MiB of the process under a 64 MiB limit. The dash list is capped, and the copies
/// are charged: saves are refused with a catchable `RangeError` naming the limit before the
/// memory passes it.
#[test]
fn a_canvas_s_saved_states_count_against_the_memory_limit() {
    let options = limited(16 * MIB, 60_000);
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const g = getCanvas(10, 10).getContext('2d')
         const refused = (f) => { try { f(); return 'no' } catch (e) { return `${e.name}: ${e.limit}` } }
         const long = refused(() => g.setLineDash(new Array(1e6)))
         g.setLineDash(new Array(1024).fill(1))
         g.font = '10px ' + 'a'.repeat(1000)
         let saves = 0
         const full = refused(() => { for (;;) { g.save(); saves++ } });
         `${long}|${full}|${saves}`",
        &options,
    );
    let out = text(&report);
    let parts: Vec<&str> = out.split('|').collect();
    assert_eq!(
        parts[0], "RangeError: undefined",
        "a dash list past the cap"
    );
    assert_eq!(parts[1], "RangeError: memoryLimitBytes", "{out}");
    let saves: usize = parts[2].parse().unwrap();
    // 4 KiB of dashes and 1 KB of font each: a few thousand fit in 16 MiB, not all 4096.
    assert!((1000..4096).contains(&saves), "{out}");
    assert!(peak(&report) <= 16 * MIB, "peak {}", peak(&report));
    assert!(
        !report.dirty,
        "nothing half-made: the executor stays usable"
    );
    // Restoring gives the memory back.
    let report = run_on(
        &engine,
        "for (let i = 0; i < 5000; i++) g.restore(); 'x'.repeat(6 << 20).length",
        &options,
    );
    assert_eq!(
        text(&report),
        format!("{:?}", Value::Number(f64::from(6 << 20)))
    );
}

/// A gradient's stops are capped and charged; each fill with it compares every pixel with every
/// stop, so a fill is painted in bands with the deadline checked between them: 50,000 stops
/// over a megapixel kept a pool thread busy 16–42 s after the run was answered.
#[test]
fn a_fill_with_many_gradient_stops_stops_at_the_deadline_and_frees_its_thread() {
    let options = limited(256 * MIB, 60_000);
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const g = getCanvas(4096, 4096).getContext('2d')
         var gradient = g.createLinearGradient(0, 0, 4096, 0)
         let stops = 0, refused
         try { for (;;) { gradient.addColorStop(stops / 50000, stops % 2 ? 'red' : 'blue'); stops++ } }
         catch (e) { refused = e.name };
         `${stops} ${refused}`",
        &options,
    );
    assert_eq!(text(&report), "1024 RangeError");

    let fast = limited(256 * MIB, 100);
    let started = Instant::now();
    let report = run_on(
        &engine,
        "g.fillStyle = gradient; g.fillRect(0, 0, 4096, 4096)",
        &fast,
    );
    let took = started.elapsed();
    assert!(
        matches!(report.result, Err(EngineError::Timeout { .. })),
        "{:?}",
        report.result
    );
    assert!(
        took < Duration::from_millis(100) + LATE,
        "stopped {took:?} after it started"
    );
}

/// Copying pixels in and out (`getImageData`, `putImageData`) and encoding them
/// (`toDataURL`) stop at the deadline between bands of rows: each call stopped by a deadline
/// early in it takes a fraction of the time it takes whole.
#[test]
fn pixel_copies_and_encodings_stop_at_the_deadline() {
    let options = limited(128 * MIB, 60_000);
    let setup = "var g = getCanvas(2048, 2048).getContext('2d');
                 var data = g.createImageData(2048, 2048); g.fillRect(0, 0, 9, 9)";
    for call in [
        "g.getImageData(0, 0, 2048, 2048); 0",
        "g.putImageData(data, 0, 0); 0",
        "g.canvas.toDataURL().length",
    ] {
        let timed = |timeout_ms: u64| {
            let engine = engine_with(FakeHost::default(), &options);
            assert!(run_on(&engine, setup, &options).result.is_ok());
            let started = Instant::now();
            let report = run_on(&engine, call, &limited(128 * MIB, timeout_ms));
            (report, started.elapsed())
        };
        let (whole, took_whole) = timed(60_000);
        assert!(whole.result.is_ok(), "{call}: {:?}", whole.result);
        let (stopped, took) = timed(20);
        assert!(
            matches!(stopped.result, Err(EngineError::Timeout { .. })),
            "{call}: {:?}",
            stopped.result
        );
        assert!(
            took < took_whole / 2,
            "{call}: stopped after {took:?}, whole in {took_whole:?}"
        );
    }
}

/// A path's points, the work of drawing it (tiny-skia's edge list, a stroke's outline and
/// dashes) and a text's copy are charged before they are made: refused under a small limit
/// with the canvas's `RangeError`, and a stroke too complex to draw within a bounded time is
/// refused outright.
#[test]
fn paths_strokes_and_texts_count_against_the_memory_limit() {
    let options = limited(16 * MIB, 60_000);
    let engine = engine_with(FakeHost::default(), &options);
    let refused = |code: &str| {
        let report = run_on(
            &engine,
            &format!(
                "const g = getCanvas(100, 100).getContext('2d');
                 (() => {{ try {{ {code}; return 'drawn' }} catch (e) {{ return `${{e.name}}: ${{e.limit}}: ${{e.message}}` }} }})()"
            ),
            &options,
        );
        assert!(peak(&report) <= 16 * MIB, "{code}: peak {}", peak(&report));
        text(&report)
    };
    let out = refused("for (let i = 0; i < 1e6; i++) g.lineTo(i % 100, i % 7); g.fill()");
    assert!(
        out.starts_with("RangeError: memoryLimitBytes: fill()"),
        "{out}"
    );
    let out = refused(
        "g.lineWidth = 9; g.lineJoin = 'round'; for (let i = 0; i < 60000; i++) g.lineTo(i % 100, i % 7); g.stroke()",
    );
    assert!(
        out.starts_with("RangeError: memoryLimitBytes: stroke()"),
        "{out}"
    );
    let out = refused(
        "g.lineWidth = 3; for (let i = 0; i < 4000; i++) g.bezierCurveTo(i, 9, i, 1, i, 5); g.stroke()",
    );
    assert!(out.contains("too complex"), "{out}");
    let out = refused("g.setLineDash([0.01, 0.01]); g.moveTo(0, 0); g.lineTo(1e6, 0); g.stroke()");
    assert!(out.contains("line dash"), "{out}");
    let out = refused("g.fillText('w'.repeat(5e6), 0, 50)");
    assert!(
        out.starts_with("RangeError: memoryLimitBytes: fillText()"),
        "{out}"
    );
    // What fits is drawn.
    assert_eq!(
        refused("for (let i = 0; i < 1000; i++) g.lineTo(i % 100, i % 7); g.stroke()"),
        "drawn"
    );
}

/// The PNG files of a run are charged while they are encoded and until the answer leaves the
/// engine: a run whose images do not fit fails naming the limit, and the executor stays usable.
#[test]
fn images_encoded_and_held_for_the_answer_count_against_the_memory_limit() {
    let options = limited(10 * MIB, 60_000);
    let engine = engine_with(FakeHost::default(), &options);
    // 4 MiB of noise, which does not compress: its PNG is about as large as its pixels, and the
    // canvas, the image data and the file do not fit in 10 MiB together.
    let report = run_on(
        &engine,
        "const g = getCanvas(1024, 1024).getContext('2d');
         const data = g.createImageData(1024, 1024), words = new Uint32Array(data.data.buffer);
         let x = 1; for (let i = 0; i < words.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; words[i] = x }
         g.putImageData(data, 0, 0)",
        &options,
    );
    match &report.result {
        Err(EngineError::CanvasLimit { limit, message, .. }) => {
            assert_eq!(*limit, "memoryLimitBytes");
            assert!(message.contains("PNG"), "{message}");
        }
        other => panic!(
            "{other:?} peak {} images {:?}",
            peak(&report),
            report
                .images
                .iter()
                .map(|i| i.data.len())
                .collect::<Vec<_>>()
        ),
    }
    assert!(peak(&report) <= 10 * MIB);
    assert!(report.images.is_empty());
    assert!(!report.dirty);
    // The peak counts what canvases hold, as it counts the heap.
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(&engine, "getCanvas(1000, 1000); 1", &options);
    assert!(peak(&report) >= 4_000_000, "peak {}", peak(&report));
}

/// Whatever the memory limit, every canvas call either works or fails with the limit's error:
/// the same program, run under limits from too small for anything to enough for everything,
/// never fails another way, and an engine freed with everything its canvases hold frees it all.
#[test]
fn every_canvas_call_works_or_fails_at_the_limit_whatever_the_limit() {
    let program = "
        const c = getCanvas(300, 200), g = c.getContext('2d');
        const gradient = g.createLinearGradient(0, 0, 300, 0);
        for (let i = 0; i < 200; i++) gradient.addColorStop(i / 200, i % 2 ? 'red' : 'blue');
        g.setLineDash(new Array(300).fill(2)); g.font = 'bold 12px ' + 'f'.repeat(900);
        for (let i = 0; i < 50; i++) g.save();
        g.fillStyle = gradient; g.beginPath();
        for (let i = 0; i < 3000; i++) g.lineTo(i % 300, (i * 7) % 200);
        g.fill(); g.stroke(); g.clip();
        g.fillText('memory '.repeat(200), 0, 50); g.measureText('x'.repeat(1000));
        const d = g.getImageData(0, 0, 300, 200); g.putImageData(d, 1, 1);
        g.drawImage(c, 0, 0, 150, 100); c.toDataURL().length";
    for mebibytes in [1, 2, 3, 4, 6, 8, 12, 16, 32] {
        let options = limited(mebibytes * MIB, 60_000);
        let engine = engine_with(FakeHost::default(), &options);
        let report = run_on(&engine, program, &options);
        match &report.result {
            Ok(_) => {}
            Err(
                EngineError::CanvasLimit {
                    limit: "memoryLimitBytes",
                    ..
                }
                | EngineError::Limit {
                    limit: "memoryLimitBytes",
                    ..
                },
            ) => {}
            other => panic!("{mebibytes} MiB: {other:?}"),
        }
        assert!(
            peak(&report) <= mebibytes * MIB,
            "{mebibytes} MiB: peak {}",
            peak(&report)
        );
    }
}

/// Arguments are converted before the canvas is touched: a `valueOf` that resizes the canvas,
/// saves states or changes the dash list during a call's conversions sees every charge kept
/// right, and a buffer detached meanwhile is refused.
#[test]
fn reentrant_arguments_keep_the_charges_right() {
    let options = limited(32 * MIB, 60_000);
    let engine = engine_with(FakeHost::default(), &options);
    let report = run_on(
        &engine,
        "const c = getCanvas(100, 100), g = c.getContext('2d');
         const evil = { valueOf() { c.width = 2000; c.height = 1000; g.save(); g.setLineDash([1, 2, 3]); return 5 } };
         g.fillRect(evil, evil, 50, 50);
         g.setLineDash([evil, evil]);
         const dash = g.getLineDash();
         const gradient = g.createLinearGradient(0, 0, 10, 0);
         gradient.addColorStop(0.5, { toString() { c.width = 10; gradient.addColorStop(0.1, 'blue'); return 'red' } });
         const data = g.createImageData(10, 10);
         let detached = 'kept';
         try { g.putImageData(data, { valueOf() { data.data.buffer.transfer(); return 0 } }, 0) } catch (e) { detached = e.name }
         c.width = 1; `${c.width}x${c.height} ${dash} ${detached}`",
        &options,
    );
    assert_eq!(text(&report), "1x1000 5,5 InvalidStateError");
    // What the canvas and its resizes held is given back when it goes.
    let report = run_on(&engine, "'x'.repeat(24 << 20).length", &options);
    assert!(report.result.is_ok(), "{:?}", report.result);
}

/// Hostile code that keeps what canvas calls hand it: canvases made in a loop, and the pixels of
/// `getImageData` kept in an array, each end with the canvas's catchable `RangeError` naming the
/// limit before the account passes it, and the executor stays usable.
#[test]
fn kept_canvases_and_image_data_are_refused_at_the_memory_limit() {
    let options = limited(16 * MIB, 60_000);
    for (what, code) in [
        ("canvases", "keep.push(getCanvas(512, 512))"),
        ("image data", "keep.push(g.getImageData(0, 0, 512, 512))"),
    ] {
        let engine = engine_with(FakeHost::default(), &options);
        let report = run_on(
            &engine,
            &format!(
                "const g = getCanvas(512, 512).getContext('2d'), keep = [];
                 (() => {{ try {{ for (;;) {code} }} catch (e) {{ return `${{e.name}}: ${{e.limit}}: ${{keep.length}}` }} }})()"
            ),
            &options,
        );
        let out = text(&report);
        assert!(
            out.starts_with("RangeError: memoryLimitBytes: "),
            "{what}: {out}"
        );
        let kept: usize = out.rsplit(": ").next().unwrap().parse().unwrap();
        // 1 MiB each: most of the limit was used before the refusal, none of it past it.
        assert!((8..16).contains(&kept), "{what}: {out}");
        assert!(peak(&report) <= 16 * MIB, "{what}: peak {}", peak(&report));
        assert!(!report.dirty, "{what}");
    }
}
