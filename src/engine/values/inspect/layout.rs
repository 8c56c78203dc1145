//! How entries are joined: Node's `reduceToSingleString`, `groupArrayElements` and
//! `isBelowBreakLength`, with display widths.
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs".

use super::*;

impl<'a, 'js> Inspector<'a, 'js> {
    // -----------------------------------------------------------------------------------------
    // reduceToSingleString and friends

    pub(super) fn reduce_to_single_string(
        &self,
        mut output: Vec<String>,
        base: &str,
        braces: &[String; 2],
        extras_type: PropType,
        recurse_times: i64,
        elements: &Elements<'js>,
    ) -> String {
        let entries = output.len();
        if extras_type == PropType::ArrayExtras && entries > 6 {
            output = self.group_array_elements(output, elements);
        }
        if self.current_depth - recurse_times < COMPACT && entries == output.len() {
            let start =
                output.len() + self.indentation_lvl + js_len(&braces[0]) + js_len(base) + 10;
            if is_below_break_length(&output, start, base) {
                let joined = output.join(", ");
                if !joined.contains('\n') {
                    let base = if base.is_empty() {
                        String::new()
                    } else {
                        format!("{base} ")
                    };
                    return format!("{base}{} {joined} {}", braces[0], braces[1]);
                }
            }
        }
        let indentation = format!("\n{}", " ".repeat(self.indentation_lvl));
        let base = if base.is_empty() {
            String::new()
        } else {
            format!("{base} ")
        };
        format!(
            "{base}{}{indentation}  {}{indentation}{}",
            braces[0],
            output.join(&format!(",{indentation}  ")),
            braces[1]
        )
    }

    pub(super) fn group_array_elements(
        &self,
        output: Vec<String>,
        elements: &Elements<'js>,
    ) -> Vec<String> {
        let mut total_length = 0usize;
        let mut max_length = 0usize;
        let mut output_length = output.len();
        if MAX_ARRAY_LENGTH < output.len() {
            // The "... n more items" entry does not take part in the grouping.
            output_length -= 1;
        }
        let separator_space = 2;
        let data_len: Vec<usize> = output[..output_length]
            .iter()
            .map(|s| get_string_width(s))
            .collect();
        for &len in &data_len {
            total_length += len + separator_space;
            max_length = max_length.max(len);
        }
        let actual_max = max_length + separator_space;
        if actual_max * 3 + self.indentation_lvl < BREAK_LENGTH
            && (total_length as f64 / actual_max as f64 > 5.0 || max_length <= 6)
        {
            let approx_char_heights = 2.5;
            let average_bias =
                (actual_max as f64 - total_length as f64 / output.len() as f64).sqrt();
            let biased_max = (actual_max as f64 - 3.0 - average_bias).max(1.0);
            let columns = js_round(
                (approx_char_heights * biased_max * output_length as f64).sqrt() / biased_max,
            )
            .min(((BREAK_LENGTH - self.indentation_lvl) as f64 / actual_max as f64).floor())
            .min((COMPACT * 4) as f64)
            .min(15.0);
            if columns <= 1.0 || columns.is_nan() {
                return output;
            }
            let columns = columns as usize;
            let mut max_line_length = Vec::with_capacity(columns);
            for i in 0..columns {
                let mut line_max = 0;
                let mut j = i;
                while j < output_length {
                    line_max = line_max.max(data_len[j]);
                    j += columns;
                }
                max_line_length.push(line_max + separator_space);
            }
            let pad_start = self.all_number_like(elements, output.len());
            let mut tmp = Vec::new();
            let mut i = 0;
            while i < output_length {
                let max = (i + columns).min(output_length);
                let mut line = String::new();
                let mut j = i;
                while j + 1 < max {
                    let padding =
                        (max_line_length[j - i] + js_len(&output[j])).saturating_sub(data_len[j]);
                    let cell = format!("{}, ", output[j]);
                    line.push_str(&pad(&cell, padding, pad_start));
                    j += 1;
                }
                if pad_start {
                    let padding = (max_line_length[j - i] + js_len(&output[j]))
                        .saturating_sub(data_len[j] + separator_space);
                    line.push_str(&pad(&output[j], padding, true));
                } else {
                    line.push_str(&output[j]);
                }
                tmp.push(line);
                i += columns;
            }
            if MAX_ARRAY_LENGTH < output.len() {
                tmp.push(output[output_length].clone());
            }
            return tmp;
        }
        output
    }

    /// Node right-aligns grouped columns when every `value[i]` behind the output is a number or
    /// bigint.
    pub(super) fn all_number_like(&self, elements: &Elements<'js>, count: usize) -> bool {
        match elements {
            Elements::Unknown => true,
            Elements::TypedArray(len) => count <= *len,
            Elements::Array(array) => (0..count).all(|i| {
                let Some(atom) = OwnedAtom::from_index(self.ctx, i as u32) else {
                    return false;
                };
                match self.reflect.own_desc(array, &atom) {
                    Ok(Some(PropDesc {
                        value: PropValue::Data(v),
                        ..
                    })) => matches!(v.type_of(), Type::Int | Type::Float | Type::BigInt),
                    _ => false,
                }
            }),
        }
    }
}
