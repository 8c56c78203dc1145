//! `ExecutorOptions` (§3.1, §3.3, docs/contract.md "Defaults beyond the spec"): what the caller
//! passed, checked once into the values every layer uses. Each option is declared once, below
//! ([`declare::declare_options!`]); `rules` holds every option rule and message.

pub mod declare;
pub mod rules;

use crate::diagnostic::Diagnostic;
use declare::{choice_option, declare_options, Bounds, Choice, JsDefault};
use rules::{log_budget_too_small, max_operations_valid, timeout_valid, MIN_LOG_BYTES};

/// The console levels of §7.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Log,
    Info,
    Warn,
    Error,
}

impl LogLevel {
    /// All four levels, in the order `console` exposes them.
    pub const ALL: [LogLevel; 4] = [Self::Log, Self::Info, Self::Warn, Self::Error];

    /// The method name (`"log"`, …), which is also the level's name in `LogEntry`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log => "log",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

impl Choice for LogLevel {
    const NAMED: &'static [(&'static str, Self)] = &[
        ("log", Self::Log),
        ("info", Self::Info),
        ("warn", Self::Warn),
        ("error", Self::Error),
    ];
}

/// §2.3's concurrency policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunConcurrency {
    #[default]
    Reject,
    Queue,
}

impl Choice for RunConcurrency {
    const NAMED: &'static [(&'static str, Self)] =
        &[("reject", Self::Reject), ("queue", Self::Queue)];
}

choice_option!(RunConcurrency);

/// `maxValueBytes`' default: 64 MiB, far more than an agent's values need, small enough that the
/// copies of a run cannot take the host's memory (they are outside the sandbox's heap limit).
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 64 * 1024 * 1024;

/// `maxValueBytes` may not be smaller than this: an error's message alone must fit.
const MIN_MAX_VALUE_BYTES: f64 = 1024.0;

/// The default of `maxTraceBytes`: what one run's recorded events may hold.
pub const DEFAULT_MAX_TRACE_BYTES: usize = 1024 * 1024;

/// The smallest `maxTraceBytes`: room for a run's start and a few calls.
pub const MIN_MAX_TRACE_BYTES: usize = 1024;

/// Smaller heaps cannot even hold a context; such a limit fails `init()` with
/// `ERR_SES_INIT_FAILED` rather than being refused here, which keeps that path reachable.
const MIN_MEMORY_LIMIT_BYTES: f64 = 64.0 * 1024.0;

/// The largest `maxCanvasSize`: tiny-skia's own limit on a bitmap side is far above, but a
/// 32768×32768 canvas already holds 4 GiB of pixels.
const MAX_CANVAS_SIZE: u64 = 32_768;

/// The smallest `maxStackBytes`: below it QuickJS cannot even start a run.
pub const MIN_STACK_BYTES: usize = 16 * 1024;

/// The largest `maxStackBytes`: every engine thread's stack is sized to hold a QuickJS stack of
/// this depth (plus oxc's below it), and it is the largest limit rquickjs passes on to QuickJS
/// (a larger one it silently turns into "no limit", and deep recursion then ran off the
/// thread's stack and took the host process down). A deeper limit is refused.
pub const MAX_STACK_BYTES: usize = 16 * 1024 * 1024;

/// Every level, the default of `collectConsoleLevels`.
const ALL_LEVELS: &[&str] = &["log", "info", "warn", "error"];

declare_options! {
    values {
        /// Loop iterations a run may make before `ERR_MAX_OPS_EXCEEDED`.
        max_operations: u64 = "maxOperations",
            default JsDefault::Number(50_000.0),
            bounds Bounds::at_least(1.0).rule(max_operations_valid::RULE);
        /// Wall-clock budget of a run in milliseconds.
        timeout_ms: u64 = "timeoutMs",
            default JsDefault::Number(10_000.0),
            bounds Bounds::at_least(1.0).rule(timeout_valid::RULE);
        /// What a `run()` does while another runs: refuse it, or queue it.
        run_concurrency: RunConcurrency = "runConcurrency",
            default JsDefault::Text("reject"),
            bounds Bounds::NONE;
        /// Queue capacity when `runConcurrency` is `"queue"`.
        max_queued_runs: usize = "maxQueuedRuns",
            default JsDefault::Number(0.0),
            bounds Bounds::at_least(0.0);
        /// Module names `import()` may load.
        authorized_imports: Vec<String> = "authorizedImports",
            default JsDefault::Texts(&[]),
            bounds Bounds::naming("module names");
        /// Budget of a run's `logs` in bytes; later output is cut and marked `...[TRUNCATED]`
        /// (below 16384 `validateCode` gives the INFO `log_budget_too_small`).
        max_log_bytes: usize = "maxLogBytes",
            default JsDefault::Number(262_144.0),
            bounds Bounds::at_least(MIN_LOG_BYTES).bytes();
        /// Console levels collected into `logs`.
        collect_console_levels: Vec<LogLevel> = "collectConsoleLevels",
            default JsDefault::Texts(ALL_LEVELS),
            bounds Bounds::NONE;
        /// The most memory the executor's runtime may take, in bytes: what QuickJS takes from the
        /// system (whole arenas, not just the blocks in use) and what the engine holds for it
        /// (canvases, the run's images, trace and log buffers).
        memory_limit_bytes: usize = "memoryLimitBytes",
            default JsDefault::Number(256.0 * 1024.0 * 1024.0),
            bounds Bounds::at_least(MIN_MEMORY_LIMIT_BYTES).bytes();
        /// Stack limit of the executor's QuickJS runtime in bytes, at most the stack every
        /// engine thread has for QuickJS.
        max_stack_bytes: usize = "maxStackBytes",
            default JsDefault::Number(1024.0 * 1024.0),
            bounds Bounds::at_least(MIN_STACK_BYTES as f64)
                .at_most(MAX_STACK_BYTES as u64)
                .because("16 MiB, the stack every engine thread keeps for QuickJS")
                .bytes();
        /// The most bytes one value may take when it crosses between the host and the sandbox (an
        /// output, a final answer, a tool's argument or result, a variable), counted as 8 bytes per
        /// value plus its text and buffer bytes. A larger one is never cut: the copy fails with an
        /// error naming the limit and the size.
        max_value_bytes: u64 = "maxValueBytes",
            default JsDefault::Number(DEFAULT_MAX_VALUE_BYTES as f64),
            bounds Bounds::at_least(MIN_MAX_VALUE_BYTES).bytes();
        /// The largest width or height of a sandbox canvas in pixels; `getCanvas` and
        /// `new OffscreenCanvas` throw a `RangeError` above it. What a canvas holds also counts
        /// against `memoryLimitBytes`.
        max_canvas_size: u32 = "maxCanvasSize",
            default JsDefault::Number(crate::canvas::DEFAULT_MAX_CANVAS_SIZE as f64),
            bounds Bounds::at_least(1.0).at_most(MAX_CANVAS_SIZE);
        /// Gives the sandbox `setTimeout`, `clearTimeout`, `setInterval` and `clearInterval`
        /// (spec §5.2 injects no timers: without this option, code using them gets a
        /// `forbidden_global_access` warning and a `ReferenceError`). They run on the executor's own
        /// clock, never past the run's deadline; a run waiting for a timer holds no engine thread;
        /// the run waits for the Promise its code returns (not for timers), and timers still pending
        /// when it ends are cancelled (`stats.timersCancelled`). A delay below 1 ms or above
        /// 2147483647 ms is 1 ms (as in Node); at most 10000 timers are pending at once.
        timers: bool = "timers",
            default JsDefault::Boolean(false),
            bounds Bounds::NONE;
        /// Record every run's events in `CodeOutput.trace` (and `ExecutorError.trace`): its start
        /// and end, each tool call with its arguments and result, `final_answer`, console entries
        /// (`run(code, { trace })` decides per run).
        trace: bool = "trace",
            default JsDefault::Boolean(false),
            bounds Bounds::NONE;
        /// Budget of one run's trace in bytes (approximate, values included). A call or result
        /// whose values do not fit is kept without them (`truncated: true`); an event that does
        /// not fit at all is dropped and counted in the run's `run_end.droppedEvents`. `run_end`
        /// is always kept.
        max_trace_bytes: usize = "maxTraceBytes",
            default JsDefault::Number(DEFAULT_MAX_TRACE_BYTES as f64),
            bounds Bounds::at_least(MIN_MAX_TRACE_BYTES as f64).bytes();
        /// Record each tool call's arguments and result on its OpenTelemetry span
        /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, as JSON text): opt-in, as
        /// the GenAI conventions ask, since they may hold user data. Left out, it is `true` when
        /// the environment variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is
        /// `true` (or `span_only`, `span_and_event`). Read here with the other options and handed
        /// to the package's JS entry (`lib/tracing.cjs`), as `tracer` is.
        capture_tool_content: bool = "captureToolContent",
            default JsDefault::Boolean(false),
            bounds Bounds::NONE;
    }
    host {
        /// Modules `await import(name)` can load, for names in `authorizedImports`: ES module source
        /// text (run inside the sandbox, under the same guards), or an object whose functions become
        /// exports that call the host like tools and whose other values are copied.
        "modules": "Record<string, string | Record<string, unknown>>";
        /// Called with each log entry while the run goes on (§10.2), in call order and before the
        /// run's promise settles; what it throws, or a promise it returns rejects with, is ignored.
        "onLog": "(entry: LogEntry) => void";
        /// Called with each trace event of every run as it happens, in order and before the run's
        /// promise settles (the same events `trace` records, under the same budget); what it throws,
        /// or a promise it returns rejects with, is ignored. Does not by itself fill
        /// `CodeOutput.trace`.
        "onEvent": "(event: TraceEvent) => void";
        /// An OpenTelemetry tracer (`trace.getTracer(…)` of `@opentelemetry/api`): each run becomes
        /// a span, each tool call a child span (`execute_tool {name}`). Without it, the global
        /// tracer is used when `@opentelemetry/api` is installed and an SDK registered. Read once,
        /// here, and handed to the package's JS entry (`lib/tracing.cjs`).
        "tracer": "SpanTracer";
        /// The key `snapshot()` signs snapshots with (HMAC-SHA256) and `restore` requires them to
        /// be signed with: a string (its UTF-8 bytes) or bytes, at least 16 of them. Without it,
        /// snapshots are unsigned (their checksum finds accidents, not tampering) and a signed
        /// snapshot is refused.
        "snapshotKey": "string | Uint8Array";
    }
    extra {
        /// The registered modules (`modules`), read and copied by the napi layer.
        modules: Vec<(String, crate::modules::ModuleSpec)> = Vec::new();
        /// `snapshotKey`, read by the napi layer.
        snapshot_key: Option<std::sync::Arc<[u8]>> = None;
    }
}

impl Options {
    /// Checks `raw` and fills in defaults. Every problem is reported, not just the first; the
    /// non-blocking ones (INFO/WARNING) come back with the options.
    pub fn resolve(raw: &RawOptions) -> Result<(Options, Vec<Diagnostic>), Vec<Diagnostic>> {
        let mut diagnostics = Vec::new();
        let options = Options::check_each(raw, &mut diagnostics);
        diagnostics.extend(log_budget_too_small::check(raw.max_log_bytes));
        if diagnostics.iter().any(Diagnostic::is_error) {
            Err(diagnostics)
        } else {
            Ok((options, diagnostics))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::DiagnosticSeverity;
    use std::path::Path;

    /// Where a generated text lives, and what it must hold now: docs/options.generated.md,
    /// and the `ExecutorOptions` interface inside the typings' header (between its markers).
    fn generated_files() -> Vec<(&'static str, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let docs = format!(
            "<!-- Generated from the option declarations in src/options/mod.rs by `cargo test \
             --lib options`; UPDATE_GENERATED=1 rewrites it. Do not edit. -->\n\n{}",
            declare::markdown_table(TABLE)
        );
        let header_path = root.join("src/node/header.d.ts");
        let header = std::fs::read_to_string(&header_path).expect("the typings' header");
        let (start, end) = (HEADER_START, HEADER_END);
        let before = header.split(start).next().expect("text before the marker");
        let after = header
            .split(end)
            .nth(1)
            .expect("the end marker in src/node/header.d.ts");
        let interface = declare::typescript_interface("ExecutorOptions", TABLE);
        let header = format!(
            "{before}{start}\n/** Options of §3.1 plus the resource limits (all optional). */\n\
             {interface}{end}{after}"
        );
        vec![
            ("docs/options.generated.md", docs),
            ("src/node/header.d.ts", header),
        ]
    }

    const HEADER_START: &str =
        "// Generated from the option declarations in src/options/mod.rs by `cargo test --lib\n\
        // options`; UPDATE_GENERATED=1 rewrites it.";
    const HEADER_END: &str = "// End of the generated ExecutorOptions.";

    #[test]
    fn the_generated_typings_and_docs_table_match_the_declarations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let update = std::env::var_os("UPDATE_GENERATED").is_some();
        for (path, wanted) in generated_files() {
            let path = root.join(path);
            if update {
                std::fs::write(&path, &wanted).expect("writable");
            }
            let found = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                found == wanted,
                "{} is out of date: run `UPDATE_GENERATED=1 cargo test --lib options`",
                path.display()
            );
        }
    }

    #[test]
    fn every_declared_default_passes_its_own_check_and_names_are_unique() {
        let mut diagnostics = Vec::new();
        Options::check_each(&RawOptions::default(), &mut diagnostics);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let mut names: Vec<&str> = TABLE.iter().map(|option| option.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
    }

    fn rules(raw: RawOptions) -> Vec<&'static str> {
        match Options::resolve(&raw) {
            Ok((_, diagnostics)) | Err(diagnostics) => diagnostics.iter().map(|d| d.rule).collect(),
        }
    }

    #[test]
    fn defaults_follow_section_3_3() {
        let (options, diagnostics) = Options::resolve(&RawOptions::default()).unwrap();
        assert!(diagnostics.is_empty());
        assert_eq!(options.max_operations, 50_000);
        assert_eq!(options.timeout_ms, 10_000);
        assert_eq!(options.run_concurrency, RunConcurrency::Reject);
        assert_eq!(options.max_queued_runs, 0);
        assert_eq!(options.max_log_bytes, 262_144);
        assert_eq!(options.collect_console_levels, LogLevel::ALL.to_vec());
        assert_eq!(options.memory_limit_bytes, 256 * 1024 * 1024);
        assert_eq!(options.max_stack_bytes, 1024 * 1024);
        assert_eq!(options.max_canvas_size, 8192);
        assert!(!options.timers, "§5.2: no timers unless asked for");
    }

    #[test]
    fn max_canvas_size_is_a_whole_number_of_pixels_up_to_32768() {
        for bad in [0.0, 1.5, 40_000.0, f64::NAN] {
            let raw = RawOptions {
                max_canvas_size: Some(bad),
                ..RawOptions::default()
            };
            assert_eq!(rules(raw), ["options_valid"], "value {bad}");
        }
        let raw = RawOptions {
            max_canvas_size: Some(512.0),
            ..RawOptions::default()
        };
        assert_eq!(Options::resolve(&raw).unwrap().0.max_canvas_size, 512);
    }

    #[test]
    fn max_operations_valid_rejects_zero_negative_fractional_nan_and_infinity() {
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            let raw = RawOptions {
                max_operations: Some(bad),
                ..RawOptions::default()
            };
            assert_eq!(rules(raw), ["max_operations_valid"], "value {bad}");
        }
    }

    #[test]
    fn timeout_valid_rejects_zero_and_nan() {
        for bad in [0.0, f64::NAN] {
            let raw = RawOptions {
                timeout_ms: Some(bad),
                ..RawOptions::default()
            };
            assert_eq!(rules(raw), ["timeout_valid"]);
        }
    }

    #[test]
    fn max_stack_bytes_is_refused_outside_what_an_engine_thread_holds() {
        let stack = |bytes: f64| {
            Options::resolve(&RawOptions {
                max_stack_bytes: Some(bytes),
                ..RawOptions::default()
            })
            .map(|(options, _)| options.max_stack_bytes)
            .map_err(|diagnostics| {
                assert_eq!(diagnostics.len(), 1);
                assert_eq!(diagnostics[0].rule, "options_valid");
                diagnostics[0].message.clone()
            })
        };
        #[allow(clippy::cast_precision_loss, reason = "16 MiB is exact in an f64")]
        let ceiling = MAX_STACK_BYTES as f64;
        assert_eq!(stack(16.0 * 1024.0), Ok(16 * 1024));
        assert_eq!(stack(ceiling), Ok(MAX_STACK_BYTES));
        for bad in [0.0, 1.0, 16.0 * 1024.0 - 1.0, -1.0, 1.5, f64::NAN] {
            assert!(stack(bad).unwrap_err().contains(">= 16384"), "{bad}");
        }
        for huge in [
            ceiling + 1.0,
            512.0 * 1024.0 * 1024.0,
            9_007_199_254_740_991.0,
            f64::INFINITY,
        ] {
            let message = stack(huge).unwrap_err();
            assert!(
                message.contains("at most 16777216") || message.contains("Infinity"),
                "{huge}: {message}"
            );
        }
    }

    #[test]
    fn every_invalid_option_is_reported_not_just_the_first() {
        let raw = RawOptions {
            max_operations: Some(0.0),
            timeout_ms: Some(-5.0),
            run_concurrency: Some("parallel".into()),
            ..RawOptions::default()
        };
        assert_eq!(
            rules(raw),
            ["max_operations_valid", "timeout_valid", "options_valid"]
        );
    }

    #[test]
    fn a_log_budget_below_1024_is_refused_and_one_below_the_recommendation_is_an_info() {
        // §3.3: maxLogBytes >= 1024; Appendix B's log_budget_too_small warns above that.
        for refused in [0.0, 100.0, 1023.0] {
            let raw = RawOptions {
                max_log_bytes: Some(refused),
                ..RawOptions::default()
            };
            assert_eq!(rules(raw), ["options_valid"], "{refused}");
        }
        let raw = RawOptions {
            max_log_bytes: Some(1024.0),
            ..RawOptions::default()
        };
        let (options, diagnostics) = Options::resolve(&raw).unwrap();
        assert_eq!(options.max_log_bytes, 1024);
        assert_eq!(diagnostics[0].rule, "log_budget_too_small");
        assert_eq!(diagnostics[0].severity, DiagnosticSeverity::Info);
    }

    #[test]
    fn max_value_bytes_is_a_whole_number_of_at_least_1024() {
        for bad in [
            0.0,
            1.0,
            1023.0,
            -1.0,
            1.5,
            f64::NAN,
            f64::INFINITY,
            2f64.powi(53),
        ] {
            let raw = RawOptions {
                max_value_bytes: Some(bad),
                ..RawOptions::default()
            };
            assert_eq!(rules(raw), ["options_valid"], "{bad}");
        }
        let raw = RawOptions {
            max_value_bytes: Some(1024.0),
            ..RawOptions::default()
        };
        assert_eq!(Options::resolve(&raw).unwrap().0.max_value_bytes, 1024);
        assert_eq!(Options::default().max_value_bytes, DEFAULT_MAX_VALUE_BYTES);
    }

    #[test]
    fn console_levels_are_parsed_and_unknown_ones_refused() {
        let raw = RawOptions {
            collect_console_levels: Some(vec!["warn".into(), "error".into()]),
            ..RawOptions::default()
        };
        let (options, _) = Options::resolve(&raw).unwrap();
        assert_eq!(
            options.collect_console_levels,
            [LogLevel::Warn, LogLevel::Error]
        );
        let raw = RawOptions {
            collect_console_levels: Some(vec!["debug".into()]),
            ..RawOptions::default()
        };
        assert_eq!(rules(raw), ["options_valid"]);
    }
}
