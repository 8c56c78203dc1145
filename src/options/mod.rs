//! `ExecutorOptions` (§3.1, §3.3, DESIGN.md "Defaults beyond the spec"): what the caller passed,
//! checked once into the values every layer uses. `rules` holds every option rule and message.

pub mod rules;

use crate::diagnostic::Diagnostic;
use rules::{
    integer, log_budget_too_small, max_operations_valid, timeout_valid, MIN_LOG_BYTES,
    OPTIONS_VALID,
};

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

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.as_str() == name)
    }
}

/// §2.3's concurrency policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunConcurrency {
    Reject,
    Queue,
}

/// The options exactly as the caller gave them: numbers stay `f64` so that `NaN`, `-1` or `1.5`
/// reach the rules that report them (`max_operations_valid`, `timeout_valid`) instead of being
/// lost in a conversion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawOptions {
    pub max_operations: Option<f64>,
    pub timeout_ms: Option<f64>,
    pub run_concurrency: Option<String>,
    pub max_queued_runs: Option<f64>,
    pub authorized_imports: Option<Vec<String>>,
    pub max_log_bytes: Option<f64>,
    pub collect_console_levels: Option<Vec<String>>,
    pub memory_limit_bytes: Option<f64>,
    pub max_stack_bytes: Option<f64>,
    pub max_value_bytes: Option<f64>,
    pub max_canvas_size: Option<f64>,
    pub trace: Option<bool>,
    pub max_trace_bytes: Option<f64>,
    pub timers: Option<bool>,
}

/// Checked options with the defaults of §3.3 filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub max_operations: u64,
    pub timeout_ms: u64,
    pub run_concurrency: RunConcurrency,
    pub max_queued_runs: usize,
    pub authorized_imports: Vec<String>,
    pub max_log_bytes: usize,
    pub collect_console_levels: Vec<LogLevel>,
    pub memory_limit_bytes: usize,
    pub max_stack_bytes: usize,
    /// The most bytes one copied value may take (see `value::walk::Reader::size_of`).
    pub max_value_bytes: u64,
    /// The largest width or height of a sandbox canvas, in pixels.
    pub max_canvas_size: u32,
    /// Modules `import()` can load (by name), checked by the napi layer, which reads them.
    pub modules: Vec<(String, crate::modules::ModuleSpec)>,
    /// Whether runs record their events in their result (`trace`; a run may say otherwise).
    pub trace: bool,
    /// The budget of one run's recorded events (`maxTraceBytes`).
    pub max_trace_bytes: usize,
    /// Whether the sandbox has `setTimeout`/`setInterval` and their `clear*` (off by default:
    /// §5.2 does not inject timers).
    pub timers: bool,
    /// The key snapshots are signed with and restores require (`snapshotKey`), if any.
    pub snapshot_key: Option<std::sync::Arc<[u8]>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_operations: 50_000,
            timeout_ms: 10_000,
            run_concurrency: RunConcurrency::Reject,
            max_queued_runs: 0,
            authorized_imports: Vec::new(),
            max_log_bytes: 262_144,
            collect_console_levels: LogLevel::ALL.to_vec(),
            memory_limit_bytes: 256 * 1024 * 1024,
            max_stack_bytes: 1024 * 1024,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            max_canvas_size: crate::canvas::DEFAULT_MAX_CANVAS_SIZE,
            modules: Vec::new(),
            trace: false,
            max_trace_bytes: DEFAULT_MAX_TRACE_BYTES,
            timers: false,
            snapshot_key: None,
        }
    }
}

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
const MAX_CANVAS_SIZE: u32 = 32_768;

/// The smallest `maxStackBytes`: below it QuickJS cannot even start a run.
pub const MIN_STACK_BYTES: usize = 16 * 1024;

/// The largest `maxStackBytes` (issue 12): every engine thread's stack is sized to hold a
/// QuickJS stack of this depth (plus oxc's below it), and it is the largest limit rquickjs
/// passes on to QuickJS (a larger one it silently turns into "no limit", and deep recursion then
/// ran off the thread's stack and took the host process down). A deeper limit is refused.
pub const MAX_STACK_BYTES: usize = 16 * 1024 * 1024;

impl Options {
    /// Checks `raw` and fills in defaults. Every problem is reported, not just the first; the
    /// non-blocking ones (INFO/WARNING) come back with the options.
    pub fn resolve(raw: &RawOptions) -> Result<(Options, Vec<Diagnostic>), Vec<Diagnostic>> {
        let mut options = Options::default();
        let mut diagnostics = Vec::new();
        let mut record =
            |result: Result<Option<u64>, Diagnostic>, slot: &mut dyn FnMut(u64)| match result {
                Ok(Some(value)) => slot(value),
                Ok(None) => {}
                Err(diagnostic) => diagnostics.push(diagnostic),
            };
        record(max_operations_valid::check(raw.max_operations), &mut |v| {
            options.max_operations = v;
        });
        record(timeout_valid::check(raw.timeout_ms), &mut |v| {
            options.timeout_ms = v;
        });
        record(
            integer(raw.max_queued_runs, "maxQueuedRuns", 0.0, OPTIONS_VALID),
            &mut |v| options.max_queued_runs = saturating_usize(v),
        );
        record(
            integer(
                raw.max_log_bytes,
                "maxLogBytes",
                MIN_LOG_BYTES,
                OPTIONS_VALID,
            ),
            &mut |v| options.max_log_bytes = saturating_usize(v),
        );
        record(
            integer(
                raw.memory_limit_bytes,
                "memoryLimitBytes",
                MIN_MEMORY_LIMIT_BYTES,
                OPTIONS_VALID,
            ),
            &mut |v| options.memory_limit_bytes = saturating_usize(v),
        );
        record(max_stack_bytes(raw.max_stack_bytes), &mut |v| {
            options.max_stack_bytes = saturating_usize(v);
        });
        record(
            integer(raw.max_canvas_size, "maxCanvasSize", 1.0, OPTIONS_VALID).and_then(|size| {
                match size {
                    Some(size) if size > u64::from(MAX_CANVAS_SIZE) => {
                        Err(rules::canvas_size_too_large(size, MAX_CANVAS_SIZE))
                    }
                    other => Ok(other),
                }
            }),
            &mut |v| options.max_canvas_size = u32::try_from(v).unwrap_or(MAX_CANVAS_SIZE),
        );
        #[allow(clippy::cast_precision_loss, reason = "1 KiB is exact in an f64")]
        record(
            integer(
                raw.max_trace_bytes,
                "maxTraceBytes",
                MIN_MAX_TRACE_BYTES as f64,
                OPTIONS_VALID,
            ),
            &mut |v| options.max_trace_bytes = saturating_usize(v),
        );
        if let Some(trace) = raw.trace {
            options.trace = trace;
        }

        record(
            integer(
                raw.max_value_bytes,
                "maxValueBytes",
                MIN_MAX_VALUE_BYTES,
                OPTIONS_VALID,
            ),
            &mut |v| options.max_value_bytes = v,
        );

        options.timers = raw.timers.unwrap_or(false);
        if let Some(policy) = &raw.run_concurrency {
            match policy.as_str() {
                "reject" => options.run_concurrency = RunConcurrency::Reject,
                "queue" => options.run_concurrency = RunConcurrency::Queue,
                other => diagnostics.push(rules::run_concurrency(other)),
            }
        }
        if let Some(imports) = &raw.authorized_imports {
            if imports.iter().any(|name| name.trim().is_empty()) {
                diagnostics.push(rules::empty_import_name());
            }
            options.authorized_imports = imports.clone();
        }
        if let Some(levels) = &raw.collect_console_levels {
            let mut parsed = Vec::new();
            for name in levels {
                match LogLevel::parse(name) {
                    Some(level) if !parsed.contains(&level) => parsed.push(level),
                    Some(_) => {}
                    None => diagnostics.push(rules::console_level(name)),
                }
            }
            options.collect_console_levels = parsed;
        }
        diagnostics.extend(log_budget_too_small::check(raw.max_log_bytes));

        if diagnostics.iter().any(Diagnostic::is_error) {
            Err(diagnostics)
        } else {
            Ok((options, diagnostics))
        }
    }
}

/// `maxStackBytes`: an integer in `MIN_STACK_BYTES..=MAX_STACK_BYTES`.
fn max_stack_bytes(value: Option<f64>) -> Result<Option<u64>, Diagnostic> {
    #[allow(clippy::cast_precision_loss, reason = "16 KiB is exact in an f64")]
    let min = MIN_STACK_BYTES as f64;
    match integer(value, "maxStackBytes", min, OPTIONS_VALID)? {
        Some(bytes) if bytes > MAX_STACK_BYTES as u64 => {
            Err(rules::stack_too_large(bytes, MAX_STACK_BYTES))
        }
        checked => Ok(checked),
    }
}

fn saturating_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::DiagnosticSeverity;

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
