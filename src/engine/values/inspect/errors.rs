//! Errors as Node prints them: `name: message`, the stack (QuickJS keeps only the frame lines,
//! so the header is rebuilt), own properties, and `improveStack`.
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs" and "Errors".

use super::*;

impl<'a, 'js> Inspector<'a, 'js> {
    // -----------------------------------------------------------------------------------------
    // errors

    pub(super) fn is_error(&self, value: &Value<'js>) -> bool {
        value.is_error()
            || self
                .reflect
                .class_proto(CLASS_ERROR)
                .is_some_and(|proto| self.proto_chain_contains(value, &proto))
    }

    /// `Error.prototype.toString` over data properties: `name: message`.
    pub(super) fn error_header(&mut self, err: &Value<'js>) -> String {
        let name = match self.reflect.data_get_pre(err, PredefinedAtom::Name) {
            None => "Error".to_string(),
            Some(v) if v.is_undefined() => "Error".to_string(),
            Some(v) => self
                .reflect
                .plain_string(&v)
                .unwrap_or_else(|| "Error".into()),
        };
        let message = match self.reflect.data_get_pre(err, PredefinedAtom::Message) {
            None => String::new(),
            Some(v) if v.is_undefined() => String::new(),
            Some(v) => self.reflect.plain_string(&v).unwrap_or_default(),
        };
        if name.is_empty() {
            message
        } else if message.is_empty() {
            name
        } else {
            format!("{name}: {message}")
        }
    }

    /// What V8 would have in `err.stack`. QuickJS keeps only the frame lines there, so the
    /// `Name: message` header is put in front of them.
    pub(super) fn error_stack_string(&mut self, err: &Value<'js>) -> String {
        // `error.stack ? String(error.stack) : ErrorPrototypeToString(error)`; objects are not
        // stringified because that would run their `toString`.
        let raw = self.reflect.raw_stack(err).and_then(|v| {
            if v.is_string() {
                js_string_units(self.ctx, &v)
                    .filter(|u| !u.is_empty())
                    .map(|u| lossy(&u))
            } else if is_truthy_non_string_primitive(&v) {
                Some(primitive_to_string(self.ctx, &v))
            } else {
                None
            }
        });
        match raw {
            Some(s) => {
                if s.starts_with("    at ") {
                    format!("{}\n{}", self.error_header(err), s.trim_end_matches('\n'))
                } else {
                    s
                }
            }
            _ => self.error_header(err),
        }
    }

    pub(super) fn format_error(
        &mut self,
        err: &Value<'js>,
        constructor: Option<&str>,
        tag: &str,
        keys: &mut Vec<PropKey<'js>>,
    ) -> String {
        let name = match self.reflect.data_get_pre(err, PredefinedAtom::Name) {
            Some(v) if !v.is_undefined() && !v.is_null() => self
                .reflect
                .plain_string(&v)
                .unwrap_or_else(|| "Error".into()),
            _ => "Error".to_string(),
        };
        let mut stack = self.error_stack_string(err);

        self.remove_duplicate_error_keys(keys, err, &stack);

        if !keys.iter().any(|k| k.is_named("cause")) && self.reflect.has_property(err, "cause") {
            if let Some(key) = self.named_key("cause") {
                keys.push(key);
            }
        }
        if !keys.iter().any(|k| k.is_named("errors")) {
            if let Some(errors) = self.reflect.data_get_str_value(err, "errors") {
                if errors.is_array() {
                    if let Some(key) = self.named_key("errors") {
                        keys.push(key);
                    }
                }
            }
        }

        stack = improve_stack(stack, constructor, &name, tag);

        let message = self
            .reflect
            .data_get_pre(err, PredefinedAtom::Message)
            .filter(|v| v.is_string())
            .and_then(|v| js_string_units(self.ctx, &v))
            .map(|u| lossy(&u))
            .unwrap_or_default();
        // `(err.message && stack.indexOf(err.message)) || -1`, quirks included.
        let pos = if message.is_empty() {
            None
        } else {
            match stack.find(&message) {
                Some(p) if p > 0 => Some(p + message.len()),
                _ => None,
            }
        };
        let from = pos.unwrap_or(0).min(stack.len());
        let stack_start = stack[from..].find("\n    at").map(|p| p + from);
        match stack_start {
            None => stack = format!("[{stack}]"),
            Some(start) => {
                let frames = self.get_stack_frames(err, &stack[start + 1..]);
                stack = format!("{}\n{}", &stack[..start], frames.join("\n"));
            }
        }
        if self.indentation_lvl != 0 {
            let indentation = " ".repeat(self.indentation_lvl);
            stack = stack.replace('\n', &format!("\n{indentation}"));
        }
        stack
    }

    pub(super) fn remove_duplicate_error_keys(
        &self,
        keys: &mut Vec<PropKey<'js>>,
        err: &Value<'js>,
        stack: &str,
    ) {
        if self.show_hidden || keys.is_empty() {
            return;
        }
        for name in ["name", "message", "stack"] {
            let Some(index) = keys.iter().position(|k| k.is_named(name)) else {
                continue;
            };
            let shown = self
                .reflect
                .data_get_str_value(err, name)
                .and_then(|v| self.reflect.plain_string(&v));
            if let Some(s) = shown {
                let s = if name == "stack" {
                    s.trim_end_matches('\n').to_string()
                } else {
                    s
                };
                if stack.contains(&s) {
                    keys.remove(index);
                }
            }
        }
    }

    pub(super) fn get_stack_frames(&mut self, err: &Value<'js>, stack: &str) -> Vec<String> {
        let mut frames: Vec<String> = stack.split('\n').map(str::to_string).collect();
        let cause = self.reflect.data_get_str_value(err, "cause");
        if let Some(cause) = cause.filter(|c| c.is_object() && self.is_error(c)) {
            let cause_stack = self.error_stack_string(&cause);
            if let Some(start) = cause_stack.find("\n    at") {
                let cause_frames: Vec<&str> = cause_stack[start + 1..].split('\n').collect();
                let (len, offset) = identical_sequence_range(&frames, &cause_frames);
                if len > 0 {
                    let skipped = len - 2;
                    let msg = format!("    ... {skipped} lines matching cause stack trace ...");
                    frames.splice(offset + 1..offset + 1 + skipped, [msg]);
                }
            }
        }
        frames
    }
}

// ---------------------------------------------------------------------------------------------
// errors

/// Node's `improveStack`: make the first line mention the constructor name.
pub(super) fn improve_stack(
    stack: String,
    constructor: Option<&str>,
    name: &str,
    tag: &str,
) -> String {
    let mut len = name.len();
    let starts_with_name = stack.starts_with(name)
        && matches!(stack.as_bytes().get(len), None | Some(b':') | Some(b'\n'));
    if !(constructor.is_none() || (name.ends_with("Error") && starts_with_name)) {
        return stack;
    }
    let mut fallback = "Error".to_string();
    if constructor.is_none() {
        let start = error_name_prefix(&stack);
        len = start.len();
        fallback = if start.is_empty() {
            "Error".into()
        } else {
            start
        };
    }
    let prefix = get_prefix(constructor, tag, &fallback, "");
    let prefix = prefix.strip_suffix(' ').unwrap_or(&prefix);
    if name == prefix {
        return stack;
    }
    let rest = stack.get(len..).unwrap_or("");
    if prefix.contains(name) {
        if len == 0 {
            format!("{prefix}: {stack}")
        } else {
            format!("{prefix}{rest}")
        }
    } else {
        format!("{prefix} [{name}]{rest}")
    }
}

/// `/^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n {4}at)/` or `/^([a-z_A-Z0-9-]*Error)$/`, group 1.
pub(super) fn error_name_prefix(stack: &str) -> String {
    let bytes = stack.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_uppercase) {
        let in_class = |b: u8| b.is_ascii_alphanumeric() || b"_ []()-".contains(&b);
        let end = 1 + bytes[1..].iter().take_while(|&&b| in_class(b)).count();
        if end > 1 && (stack[end..].starts_with(':') || stack[end..].starts_with("\n    at")) {
            return stack[..end].to_string();
        }
    }
    if stack.ends_with("Error")
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return stack.to_string();
    }
    String::new()
}

pub(super) fn identical_sequence_range(a: &[String], b: &[&str]) -> (usize, usize) {
    if a.len() < 4 {
        return (0, 0);
    }
    for i in 0..a.len() - 3 {
        let Some(pos) = b.iter().position(|x| *x == a[i]) else {
            continue;
        };
        let rest = b.len() - pos;
        if rest > 3 {
            let mut len = 1;
            let max_len = (a.len() - i).min(rest);
            while max_len > len && a[i + len] == b[pos + len] {
                len += 1;
            }
            if len > 3 {
                return (len, i);
            }
        }
    }
    (0, 0)
}
