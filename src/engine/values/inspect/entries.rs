//! Node's entry formatters (`formatArray`, `formatSet`, `formatMap`, `formatTypedArray`,
//! `formatArrayBuffer`, `formatPromise`) and `formatProperty`.
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs".

use super::*;

impl<'a, 'js> Inspector<'a, 'js> {
    // -----------------------------------------------------------------------------------------
    // entry formatters

    pub(super) fn format_array(&mut self, array: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let value_len = self.reflect.array_length(array);
        let len = value_len.min(MAX_ARRAY_LENGTH as u64);
        let remaining = value_len - len;
        let mut output = Vec::new();
        for i in 0..len {
            let Some(atom) = OwnedAtom::from_index(self.ctx, i as u32) else {
                return output;
            };
            match self.reflect.own_desc(array, &atom) {
                Ok(Some(desc)) => {
                    let entry = self.format_property_desc(desc, None, recurse_times);
                    output.push(entry);
                }
                _ => {
                    return self.format_special_array(
                        array,
                        recurse_times,
                        len as usize,
                        output,
                        i,
                    );
                }
            }
        }
        if remaining > 0 {
            output.push(remaining_text(remaining));
        }
        output
    }

    /// The array is sparse and/or has extra keys.
    pub(super) fn format_special_array(
        &mut self,
        array: &Value<'js>,
        recurse_times: i64,
        max_length: usize,
        mut output: Vec<String>,
        start: u64,
    ) -> Vec<String> {
        let keys = self
            .reflect
            .own_atoms(array, KEYS_STRINGS | KEYS_ENUMERABLE, false);
        let mut index = start;
        let mut i = start as usize;
        while i < keys.len() && output.len() < max_length {
            let Some(key_index) = self.atom_array_index(&keys[i]) else {
                break;
            };
            if key_index > 4_294_967_294 {
                break;
            }
            if key_index != index {
                let empty = key_index.saturating_sub(index);
                output.push(format!("<{empty} empty item{}>", plural(empty as usize)));
                index = key_index;
                if output.len() == max_length {
                    break;
                }
            }
            match self.reflect.own_desc(array, &keys[i]) {
                Ok(Some(desc)) => {
                    let entry = self.format_property_desc(desc, None, recurse_times);
                    output.push(entry);
                }
                Ok(None) => output.push("undefined".into()),
                Err(()) => output.push("<uninitialized>".into()),
            }
            index += 1;
            i += 1;
        }
        let remaining = self.reflect.array_length(array).saturating_sub(index);
        if output.len() != max_length {
            if remaining > 0 {
                output.push(format!(
                    "<{remaining} empty item{}>",
                    plural(remaining as usize)
                ));
            }
        } else if remaining > 0 {
            output.push(remaining_text(remaining));
        }
        output
    }

    pub(super) fn format_set(&mut self, set: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let size = self.collection_size(set, CLASS_SET).unwrap_or(0);
        let max_length = size.min(MAX_ARRAY_LENGTH);
        let mut output = Vec::new();
        self.indentation_lvl += 2;
        for v in self
            .reflect
            .collection_entries(set, CLASS_SET, max_length)
            .unwrap_or_default()
        {
            output.push(self.format_value(&v, recurse_times, false));
        }
        if size > max_length {
            output.push(remaining_text((size - max_length) as u64));
        }
        self.indentation_lvl -= 2;
        output
    }

    pub(super) fn format_map(&mut self, map: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let size = self.collection_size(map, CLASS_MAP).unwrap_or(0);
        let max_length = size.min(MAX_ARRAY_LENGTH);
        let mut output = Vec::new();
        self.indentation_lvl += 2;
        for entry in self
            .reflect
            .collection_entries(map, CLASS_MAP, max_length)
            .unwrap_or_default()
        {
            let k = self.reflect.index_data(&entry, 0);
            let v = self.reflect.index_data(&entry, 1);
            let k = self.format_value(&k, recurse_times, false);
            let v = self.format_value(&v, recurse_times, false);
            output.push(format!("{k} => {v}"));
        }
        if size > max_length {
            output.push(remaining_text((size - max_length) as u64));
        }
        self.indentation_lvl -= 2;
        output
    }

    pub(super) fn format_typed_array(
        &mut self,
        info: &TypedArrayInfo<'js>,
        recurse_times: i64,
    ) -> Vec<String> {
        let max_length = info.length.min(MAX_ARRAY_LENGTH);
        let mut output: Vec<String> = (0..max_length)
            .map(|i| typed_array_element(info, i))
            .collect();
        if info.length > max_length {
            output.push(remaining_text((info.length - max_length) as u64));
        }
        if self.show_hidden {
            self.indentation_lvl += 2;
            let byte_length = info.length * info.bytes_per_element;
            let numbers = [
                ("BYTES_PER_ELEMENT", info.bytes_per_element),
                ("length", info.length),
                ("byteLength", byte_length),
                ("byteOffset", info.byte_offset),
            ];
            for (name, n) in numbers {
                output.push(format!("[{name}]: {}", format_number(n as f64)));
            }
            let buffer = match &info.buffer {
                Some(b) => self.format_value(b, recurse_times, true),
                None => "undefined".into(),
            };
            output.push(format!("[buffer]: {buffer}"));
            self.indentation_lvl -= 2;
        }
        output
    }

    pub(super) fn format_array_buffer(&self, buffer: &Value<'js>) -> String {
        let Some((len, bytes)) = self.reflect.array_buffer_bytes(buffer, MAX_ARRAY_LENGTH) else {
            return "(detached)".into();
        };
        let mut s = bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        if len > MAX_ARRAY_LENGTH {
            let remaining = len - MAX_ARRAY_LENGTH;
            s.push_str(&format!(" ... {remaining} more byte{}", plural(remaining)));
        }
        format!("[Uint8Contents]: <{s}>")
    }

    pub(super) fn format_promise(&mut self, value: &Value<'js>, recurse_times: i64) -> Vec<String> {
        let Some(promise) = value.as_promise() else {
            return vec!["<pending>".into()];
        };
        let state = promise.state();
        let result = match state {
            PromiseState::Pending => return vec!["<pending>".into()],
            PromiseState::Resolved => match promise.result::<Value<'js>>() {
                Some(Ok(v)) => v,
                _ => {
                    self.clear_exception();
                    Value::new_undefined(self.ctx.clone())
                }
            },
            // `result` rethrows the rejection reason into the context; take it back out.
            PromiseState::Rejected => {
                let _ = promise.result::<Value<'js>>();
                self.ctx.catch()
            }
        };
        self.indentation_lvl += 2;
        let s = self.format_value(&result, recurse_times, false);
        self.indentation_lvl -= 2;
        if state == PromiseState::Rejected {
            vec![format!("<rejected> {s}")]
        } else {
            vec![s]
        }
    }

    // -----------------------------------------------------------------------------------------
    // formatProperty

    pub(super) fn format_property(
        &mut self,
        obj: &Value<'js>,
        recurse_times: i64,
        key: &PropKey<'js>,
        prop_type: PropType,
    ) -> String {
        let desc = match (&key.value, &key.atom) {
            (Some(v), _) => PropDesc {
                value: PropValue::Data(v.clone()),
                enumerable: true,
                writable: true,
            },
            (None, Some(atom)) => match self.reflect.own_desc(obj, atom) {
                Ok(Some(desc)) => desc,
                // The key is inherited (`cause` in a prototype) or vanished: Node reads it with
                // `value[key]`.
                Ok(None) => PropDesc {
                    value: PropValue::Data(
                        self.reflect
                            .data_get(obj, atom)
                            .unwrap_or_else(|| Value::new_undefined(self.ctx.clone())),
                    ),
                    enumerable: true,
                    writable: true,
                },
                Err(()) => PropDesc {
                    value: PropValue::Unreadable,
                    enumerable: true,
                    writable: true,
                },
            },
            (None, None) => PropDesc {
                value: PropValue::Data(Value::new_undefined(self.ctx.clone())),
                enumerable: true,
                writable: true,
            },
        };
        let label = (prop_type != PropType::Array).then_some(&key.label);
        self.format_property_desc(desc, label, recurse_times)
    }

    pub(super) fn format_property_desc(
        &mut self,
        desc: PropDesc<'js>,
        label: Option<&KeyLabel>,
        recurse_times: i64,
    ) -> String {
        let s = match &desc.value {
            PropValue::Data(v) if !v.is_undefined() => {
                self.indentation_lvl += 2;
                let s = self.format_value(v, recurse_times, false);
                self.indentation_lvl -= 2;
                s
            }
            PropValue::Data(_) => "undefined".into(),
            PropValue::Accessor { get: true, set } => {
                if *set {
                    "[Getter/Setter]".into()
                } else {
                    "[Getter]".into()
                }
            }
            PropValue::Accessor {
                get: false,
                set: true,
            } => "[Setter]".into(),
            PropValue::Accessor { .. } => "undefined".into(),
            PropValue::Unreadable => "<uninitialized>".into(),
        };
        let Some(label) = label else {
            return s;
        };
        let name = match label {
            KeyLabel::Sym(units) => format!("[{}]", escape_replace(units)),
            KeyLabel::Str(units) if units_eq(units, "__proto__") => "['__proto__']".into(),
            KeyLabel::Str(units) if !desc.enumerable => format!("[{}]", escape_replace(units)),
            KeyLabel::Str(units) if is_identifier(units) => lossy(units),
            KeyLabel::Str(units) => str_escape(units),
        };
        format!("{name}: {s}")
    }
}
