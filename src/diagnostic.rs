//! Validation diagnostics (§3.1 `Diagnostic`, §8.3): produced by the option checks and the
//! program rules, returned by `validateCode` and carried in `ERR_VALIDATION_FAILED` details.

use serde_json::{json, Value as Json};

/// §3.1's diagnostic severities. Only `Error` blocks a run (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiagnosticSeverity {
    Error,
    Warning,
    Info,
}

impl DiagnosticSeverity {
    /// The spelling of §3.1.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "ERROR",
            Self::Warning => "WARNING",
            Self::Info => "INFO",
        }
    }
}

/// A 1-based position in the user's original code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub line: u32,
    pub column: u32,
}

/// One finding of a rule (§3.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The rule id of Appendix B (`syntax_valid`, `code_non_empty`, …).
    pub rule: &'static str,
    pub severity: DiagnosticSeverity,
    pub message: String,
    pub location: Option<Location>,
    /// A hint the model can act on.
    pub fix: Option<String>,
    /// The offending source line followed by a caret line under the column, for syntax errors.
    pub code_frame: Option<String>,
}

impl Diagnostic {
    /// A blocking diagnostic without location.
    pub fn error(rule: &'static str, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: DiagnosticSeverity::Error,
            message: message.into(),
            location: None,
            fix: None,
            code_frame: None,
        }
    }

    /// Sets the severity.
    pub fn with_severity(mut self, severity: DiagnosticSeverity) -> Self {
        self.severity = severity;
        self
    }

    /// Sets the location.
    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    /// Sets the fix hint.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// Whether this diagnostic blocks execution (§6.1).
    pub fn is_error(&self) -> bool {
        self.severity == DiagnosticSeverity::Error
    }

    /// The diagnostic as the JS object of §3.1 (plus `codeFrame` where there is one).
    pub fn to_json(&self) -> Json {
        let mut object = json!({
            "rule": self.rule,
            "severity": self.severity.as_str(),
            "message": self.message,
        });
        if let Some(location) = self.location {
            object["location"] = json!({ "line": location.line, "column": location.column });
        }
        if let Some(fix) = &self.fix {
            object["fix"] = json!(fix);
        }
        if let Some(frame) = &self.code_frame {
            object["codeFrame"] = json!(frame);
        }
        object
    }

    /// One line of an `ERR_VALIDATION_FAILED` message: `line:col rule: message`, followed by the
    /// code frame when there is one.
    pub fn summary(&self) -> String {
        let place = match self.location {
            Some(Location { line, column }) => format!("{line}:{column} "),
            None => String::new(),
        };
        let mut text = format!("{place}{}: {}", self.rule, self.message);
        if let Some(frame) = &self.code_frame {
            text.push('\n');
            text.push_str(frame);
        }
        text
    }
}
