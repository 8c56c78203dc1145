//! The executor's error model (§8): one error type that every layer's failure is mapped to once,
//! carrying the spec's code, severity and retryability, with the §8.2 templates and every
//! message built on them here, one typed constructor per failure.

use serde_json::{json, Map, Value as Json};

use crate::diagnostic::Diagnostic;

/// The error codes of §3.1, each with the severity, retryability and message template of §8.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidState,
    SesInitFailed,
    ValidationFailed,
    ImportNotAllowed,
    MaxOpsExceeded,
    ExecTimeout,
    RuntimeException,
    ToolProxyFail,
    CleanupFailed,
    /// A snapshot `restore()` refuses (or whose replay fails): not this package's, damaged,
    /// tampered with, made under other options, or stopped by a limit.
    SnapshotInvalid,
}

/// §8.2's severity column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorSeverity {
    Fatal,
    Error,
    Warn,
}

impl ErrorSeverity {
    /// The spelling of §3.1 (`"FATAL" | "ERROR" | "WARN"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fatal => "FATAL",
            Self::Error => "ERROR",
            Self::Warn => "WARN",
        }
    }
}

impl ErrorCode {
    /// The code's name as JS callers compare it (`error.code === "ERR_EXEC_TIMEOUT"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidState => "ERR_INVALID_STATE",
            Self::SesInitFailed => "ERR_SES_INIT_FAILED",
            Self::ValidationFailed => "ERR_VALIDATION_FAILED",
            Self::ImportNotAllowed => "ERR_IMPORT_NOT_ALLOWED",
            Self::MaxOpsExceeded => "ERR_MAX_OPS_EXCEEDED",
            Self::ExecTimeout => "ERR_EXEC_TIMEOUT",
            Self::RuntimeException => "ERR_RUNTIME_EXCEPTION",
            Self::ToolProxyFail => "ERR_TOOL_PROXY_FAIL",
            Self::CleanupFailed => "ERR_CLEANUP_FAILED",
            Self::SnapshotInvalid => "ERR_SNAPSHOT_INVALID",
        }
    }

    /// §8.2's severity column.
    pub fn severity(self) -> ErrorSeverity {
        match self {
            Self::SesInitFailed => ErrorSeverity::Fatal,
            Self::CleanupFailed => ErrorSeverity::Warn,
            _ => ErrorSeverity::Error,
        }
    }

    /// §8.2's retryable column; for its two "Depends" rows (tool and runtime failures), what
    /// holds unless the failure says otherwise ([`ExecutorError::retryable`]): the model can
    /// rewrite the code or call the tool differently, and the executor stays `READY` (§7.6).
    pub fn retryable(self) -> bool {
        match self {
            Self::InvalidState
            | Self::SesInitFailed
            | Self::CleanupFailed
            | Self::SnapshotInvalid => false,
            Self::ValidationFailed
            | Self::ImportNotAllowed
            | Self::MaxOpsExceeded
            | Self::ExecTimeout
            | Self::RuntimeException
            | Self::ToolProxyFail => true,
        }
    }
}

/// A failure as the caller sees it (§8.1): the napi layer turns it into a JS `ExecutorError`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExecutorError {
    pub code: ErrorCode,
    pub message: String,
    /// Structured context (`diagnostics`, `line`, `column`, `state`, …); empty when there is none.
    pub details: Map<String, Json>,
    /// The run's logs up to the failure, for errors raised while user code ran (§9.5).
    pub logs: Option<String>,
    /// Whether trying again can succeed: the code's column of §8.2, decided per failure for its
    /// "Depends" rows (a tool's own say; a run cut short by the executor's shutdown is not).
    pub retryable: bool,
    /// The run's events up to its end, when the run was traced.
    pub trace: Option<Vec<crate::trace::TraceEvent>>,
}

impl ExecutorError {
    /// An error whose message is §8.2's template for `code` filled with `cause`.
    fn new(code: ErrorCode, cause: impl std::fmt::Display) -> Self {
        let message = match code {
            ErrorCode::SesInitFailed => format!("SES init failed: {cause}"),
            ErrorCode::InvalidState => format!("Invalid executor state: {cause}"),
            ErrorCode::ValidationFailed => format!("Code validation failed{cause}"),
            ErrorCode::ImportNotAllowed => format!("Import not allowed: {cause}"),
            ErrorCode::MaxOpsExceeded => format!("Max operations exceeded ({cause})"),
            ErrorCode::ExecTimeout => format!("Execution timed out after {cause}ms"),
            ErrorCode::ToolProxyFail => format!("Tool execution failed: {cause}"),
            ErrorCode::RuntimeException => format!("Runtime exception: {cause}"),
            ErrorCode::CleanupFailed => format!("Cleanup failed: {cause}"),
            ErrorCode::SnapshotInvalid => format!("Invalid snapshot: {cause}"),
        };
        Self {
            code,
            message,
            details: Map::new(),
            logs: None,
            trace: None,
            retryable: code.retryable(),
        }
    }

    /// An error whose message is already written to `code`'s template (e.g. the module
    /// loader's `Import not allowed: 'fs'. Allowed: x-ok`).
    fn with_message(code: ErrorCode, message: String) -> Self {
        Self {
            code,
            message,
            details: Map::new(),
            logs: None,
            trace: None,
            retryable: code.retryable(),
        }
    }

    /// Sets whether trying again can succeed (§8.2's "Depends" rows).
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// `ERR_INVALID_STATE` naming the state the call was refused in.
    pub fn invalid_state(state: impl std::fmt::Display, method: &str) -> Self {
        let state = state.to_string();
        let mut error = Self::new(
            ErrorCode::InvalidState,
            format!("{state} (cannot call {method}() in this state)"),
        );
        error.details.insert("state".into(), Json::String(state));
        error
            .details
            .insert("method".into(), Json::String(method.into()));
        error
    }

    /// `ERR_INVALID_STATE` for a `run()` that found the queue full (§2.3).
    pub fn queue_full(waiting: usize, max_queued_runs: usize) -> Self {
        Self::new(
            ErrorCode::InvalidState,
            format!("RUNNING (the run queue is full: {waiting} of {max_queued_runs} places taken)"),
        )
        .with_detail("state", "RUNNING")
        .with_detail("method", "run")
        .with_detail("maxQueuedRuns", max_queued_runs)
    }

    /// `ERR_SES_INIT_FAILED` (§5.1, §4.2).
    pub fn init_failed(cause: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::SesInitFailed, cause)
    }

    /// `ERR_VALIDATION_FAILED` listing each blocking diagnostic as `line:col rule: message`
    /// (§6.1, §8.3), with every diagnostic in `details.diagnostics`.
    pub fn validation(diagnostics: &[Diagnostic]) -> Self {
        let listing: String = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.is_error())
            .map(|diagnostic| format!("\n{}", diagnostic.summary()))
            .collect();
        Self::new(ErrorCode::ValidationFailed, format!(":{listing}")).with_diagnostics(diagnostics)
    }

    /// `ERR_VALIDATION_FAILED` for a tool or variable name the executor keeps: `why` says what
    /// is wrong with it ("is empty").
    pub fn endowment_refused(name: &str, why: &str) -> Self {
        Self::new(
            ErrorCode::ValidationFailed,
            format!(": the name '{name}' {why}"),
        )
        .with_detail("name", name)
    }

    /// `ERR_VALIDATION_FAILED` for a variable or tool the engine could not install.
    pub fn endowment_failed(message: &str) -> Self {
        Self::new(ErrorCode::ValidationFailed, format!(": {message}"))
    }

    /// `ERR_IMPORT_NOT_ALLOWED` whose message is already the template's (`Import not allowed:
    /// 'fs'. Allowed: x-ok`), as the import rule and the module loader write it.
    pub fn import_refused(message: String) -> Self {
        Self::with_message(ErrorCode::ImportNotAllowed, message)
    }

    /// `ERR_IMPORT_NOT_ALLOWED` for several refused imports, one summary line each, with every
    /// diagnostic of the code in `details.diagnostics`.
    pub fn imports_refused(refused: &[&Diagnostic], all: &[Diagnostic]) -> Self {
        let listing = refused.iter().fold(
            String::from("Import not allowed:"),
            |listing, diagnostic| format!("{listing}\n{}", diagnostic.summary()),
        );
        Self::import_refused(listing).with_diagnostics(all)
    }

    /// `ERR_RUNTIME_EXCEPTION` (§7.4).
    pub fn runtime(message: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::RuntimeException, message)
    }

    /// `ERR_RUNTIME_EXCEPTION` for a run past one of the executor's resource limits.
    pub fn limit(limit: &'static str, message: impl std::fmt::Display) -> Self {
        Self::runtime(message).with_detail("limit", limit)
    }

    /// `ERR_RUNTIME_EXCEPTION` for a value of the run (its output or final answer) past a size
    /// limit: `details.limit` names it, `details.size` is what the copy met (for
    /// `maxValueBytes`, the bytes counted when it stopped) and `details.max` the limit's value.
    pub fn too_large(message: impl std::fmt::Display, limit: &crate::value::SizeLimit) -> Self {
        Self::runtime(message)
            .with_detail("limit", limit.name)
            .with_detail("size", limit.size)
            .with_detail("max", limit.max)
    }

    /// `ERR_RUNTIME_EXCEPTION` for a run whose result could not be made in Node (a string past
    /// V8's length limit, which only a `maxValueBytes` above it lets through).
    pub fn result_unbuildable(reason: impl std::fmt::Display) -> Self {
        Self::runtime(format!(
            "the run's result could not be handed to Node: {reason}"
        ))
    }

    /// `ERR_RUNTIME_EXCEPTION` for a run cut short by `cleanup()`.
    pub fn shut_down() -> Self {
        // §8.2 "Depends": nothing is left to retry in.
        Self::runtime("the executor was shut down during the run").with_retryable(false)
    }

    /// `ERR_TOOL_PROXY_FAIL` (§7.4) for `tool`.
    pub fn tool_failed(tool: String, message: &str, retryable: bool) -> Self {
        Self::new(ErrorCode::ToolProxyFail, format!("{tool}: {message}"))
            .with_detail("tool", tool)
            .with_retryable(retryable)
    }

    /// `ERR_MAX_OPS_EXCEEDED` (§6.3, §9.3).
    pub fn max_operations(limit: u64) -> Self {
        Self::new(ErrorCode::MaxOpsExceeded, limit).with_detail("maxOperations", limit)
    }

    /// `ERR_EXEC_TIMEOUT` (§7.5).
    pub fn timeout(timeout_ms: u64) -> Self {
        Self::new(ErrorCode::ExecTimeout, timeout_ms)
            .with_detail("timeoutMs", timeout_ms)
            .with_detail("reason", "timeout")
    }

    /// `ERR_EXEC_TIMEOUT` for a run the caller's signal aborted, before it `started` or during.
    pub fn aborted(started: bool) -> Self {
        Self::with_message(
            ErrorCode::ExecTimeout,
            if started {
                "Execution aborted by the caller's signal".into()
            } else {
                "Execution aborted by the caller's signal before the run started".into()
            },
        )
        .with_detail("reason", "aborted")
        .with_detail("started", started)
    }

    /// `ERR_SNAPSHOT_INVALID`: `details.reason` names what is wrong (`truncated`, `malformed`,
    /// `checksum`, `version`, `hmac`, `options`, `diverged`, `limit`), and `details.limit` the
    /// option concerned for `options` and `limit`.
    pub fn snapshot_invalid(error: &crate::session::SnapshotError) -> Self {
        let invalid = Self::new(ErrorCode::SnapshotInvalid, &error.message)
            .with_detail("reason", error.problem.as_str());
        match error.limit {
            Some(limit) => invalid.with_detail("limit", limit),
            None => invalid,
        }
    }

    /// `ERR_INVALID_STATE` for a `sendTools()` of a `PAUSED` executor naming a tool its session
    /// does not have: until `resume()`, it takes only the functions of its own tools.
    pub fn not_a_paused_tool(tool: &str) -> Self {
        Self::new(
            ErrorCode::InvalidState,
            format!("PAUSED (sendTools() takes only the paused session's own tools until resume(); '{tool}' is not one of them)"),
        )
        .with_detail("state", "PAUSED")
        .with_detail("method", "sendTools")
        .with_detail("tool", tool)
    }

    /// `ERR_INVALID_STATE` for a `snapshot()` of a session that cannot be written (`why`).
    pub fn not_durable(why: &str) -> Self {
        Self::new(
            ErrorCode::InvalidState,
            format!("the session cannot be snapshotted: {why}"),
        )
        .with_detail("method", "snapshot")
        .with_detail("reason", why)
    }

    /// `ERR_CLEANUP_FAILED` (§8.2).
    pub fn cleanup_failed(cause: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::CleanupFailed, cause)
    }

    /// Every diagnostic, as §3.1 objects, in `details.diagnostics`.
    pub fn with_diagnostics(self, diagnostics: &[Diagnostic]) -> Self {
        let all: Vec<Json> = diagnostics.iter().map(Diagnostic::to_json).collect();
        self.with_detail("diagnostics", json!(all))
    }

    /// Adds one entry to `details`.
    pub fn with_detail(mut self, key: &str, value: impl Into<Json>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    /// Attaches the run's logs.
    pub fn with_logs(mut self, logs: String) -> Self {
        self.logs = Some(logs);
        self
    }

    /// Attaches a traced run's events.
    pub fn with_trace(mut self, trace: Vec<crate::trace::TraceEvent>) -> Self {
        self.trace = Some(trace);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorCode; 9] = [
        ErrorCode::InvalidState,
        ErrorCode::SesInitFailed,
        ErrorCode::ValidationFailed,
        ErrorCode::ImportNotAllowed,
        ErrorCode::MaxOpsExceeded,
        ErrorCode::ExecTimeout,
        ErrorCode::RuntimeException,
        ErrorCode::ToolProxyFail,
        ErrorCode::CleanupFailed,
    ];

    #[test]
    fn severities_follow_section_8_2() {
        let fatal: Vec<_> = ALL
            .iter()
            .filter(|c| c.severity() == ErrorSeverity::Fatal)
            .collect();
        let warn: Vec<_> = ALL
            .iter()
            .filter(|c| c.severity() == ErrorSeverity::Warn)
            .collect();
        assert_eq!(fatal, [&ErrorCode::SesInitFailed]);
        assert_eq!(warn, [&ErrorCode::CleanupFailed]);
    }

    #[test]
    fn messages_follow_section_8_2_templates() {
        assert_eq!(
            ExecutorError::new(ErrorCode::MaxOpsExceeded, 1000).message,
            "Max operations exceeded (1000)"
        );
        assert_eq!(
            ExecutorError::new(ErrorCode::ExecTimeout, 50).message,
            "Execution timed out after 50ms"
        );
        assert_eq!(
            ExecutorError::invalid_state("DEAD", "run").message,
            "Invalid executor state: DEAD (cannot call run() in this state)"
        );
    }

    #[test]
    fn only_lifecycle_failures_are_not_retryable() {
        let not_retryable: Vec<_> = ALL.iter().filter(|c| !c.retryable()).collect();
        assert_eq!(
            not_retryable,
            [
                &ErrorCode::InvalidState,
                &ErrorCode::SesInitFailed,
                &ErrorCode::CleanupFailed
            ]
        );
    }
}
