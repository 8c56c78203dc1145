//! Text helpers of the port: code units, quoting and escaping, typed array elements, numbers
//! and ISO dates.
//!
//! Spec: §7.3 (console capture).

use super::*;

pub(super) fn number_value<'js>(ctx: &Ctx<'js>, n: f64) -> Value<'js> {
    Value::new_number(ctx.clone(), n)
}

/// JS truthiness for non-string primitives; objects count as falsy here because they are never
/// converted.
pub(super) fn is_truthy_non_string_primitive(v: &Value<'_>) -> bool {
    match v.type_of() {
        Type::Bool => v.as_bool().unwrap_or(false),
        Type::Int | Type::Float => v.as_number().is_some_and(|n| n != 0.0 && !n.is_nan()),
        Type::Symbol => true,
        Type::BigInt => v
            .as_big_int()
            .is_some_and(|b| b.clone().to_i64().map_or(true, |n| n != 0)),
        _ => false,
    }
}

pub(super) fn units_eq(units: &[u16], s: &str) -> bool {
    units.iter().copied().eq(s.encode_utf16())
}

/// Length in UTF-16 code units, the unit of JS `.length` that Node's layout decisions use.
pub(super) fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

pub(super) fn plural(n: usize) -> &'static str {
    if n > 1 {
        "s"
    } else {
        ""
    }
}

pub(super) fn remaining_text(remaining: u64) -> String {
    format!("... {remaining} more item{}", plural(remaining as usize))
}

pub(super) fn is_typed_array_class(class: u32) -> bool {
    (CLASS_UINT8C_ARRAY..=CLASS_FLOAT64_ARRAY).contains(&class)
}

pub(super) fn is_boxed_class(class: u32) -> bool {
    matches!(
        class,
        CLASS_NUMBER | CLASS_STRING | CLASS_BOOLEAN | CLASS_BIG_INT | CLASS_SYMBOL
    )
}

pub(super) fn typed_array_name(class: u32) -> &'static str {
    match class {
        CLASS_UINT8C_ARRAY => "Uint8ClampedArray",
        CLASS_INT8_ARRAY => "Int8Array",
        CLASS_UINT8_ARRAY => "Uint8Array",
        CLASS_INT16_ARRAY => "Int16Array",
        CLASS_UINT16_ARRAY => "Uint16Array",
        CLASS_INT32_ARRAY => "Int32Array",
        CLASS_UINT32_ARRAY => "Uint32Array",
        CLASS_BIG_INT64_ARRAY => "BigInt64Array",
        CLASS_BIG_UINT64_ARRAY => "BigUint64Array",
        CLASS_FLOAT16_ARRAY => "Float16Array",
        CLASS_FLOAT32_ARRAY => "Float32Array",
        _ => "Float64Array",
    }
}

pub(super) fn typed_array_element_size(class: u32) -> usize {
    match class {
        CLASS_UINT8C_ARRAY | CLASS_INT8_ARRAY | CLASS_UINT8_ARRAY => 1,
        CLASS_INT16_ARRAY | CLASS_UINT16_ARRAY | CLASS_FLOAT16_ARRAY => 2,
        CLASS_INT32_ARRAY | CLASS_UINT32_ARRAY | CLASS_FLOAT32_ARRAY => 4,
        _ => 8,
    }
}

pub(super) fn typed_array_element(info: &TypedArrayInfo<'_>, i: usize) -> String {
    let size = info.bytes_per_element;
    let Some(b) = info.bytes.get(i * size..(i + 1) * size) else {
        return "undefined".into();
    };
    let mut raw = [0u8; 8];
    raw[..size].copy_from_slice(b);
    match info.class {
        CLASS_INT8_ARRAY => format_number(f64::from(b[0] as i8)),
        CLASS_UINT8_ARRAY | CLASS_UINT8C_ARRAY => format_number(f64::from(b[0])),
        CLASS_INT16_ARRAY => format_number(f64::from(i16::from_ne_bytes([b[0], b[1]]))),
        CLASS_UINT16_ARRAY => format_number(f64::from(u16::from_ne_bytes([b[0], b[1]]))),
        CLASS_INT32_ARRAY => format_number(f64::from(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))),
        CLASS_UINT32_ARRAY => {
            format_number(f64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])))
        }
        CLASS_FLOAT16_ARRAY => format_number(half::f16::from_ne_bytes([b[0], b[1]]).to_f64()),
        CLASS_FLOAT32_ARRAY => {
            format_number(f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])))
        }
        CLASS_BIG_INT64_ARRAY => format!("{}n", i64::from_ne_bytes(raw)),
        CLASS_BIG_UINT64_ARRAY => format!("{}n", u64::from_ne_bytes(raw)),
        _ => format_number(f64::from_ne_bytes(raw)),
    }
}

pub(super) fn get_prefix(
    constructor: Option<&str>,
    tag: &str,
    fallback: &str,
    size: &str,
) -> String {
    match constructor {
        None => {
            if !tag.is_empty() && fallback != tag {
                format!("[{fallback}{size}: null prototype] [{tag}] ")
            } else {
                format!("[{fallback}{size}: null prototype] ")
            }
        }
        Some(c) => {
            if !tag.is_empty() && c != tag {
                format!("{c}{size} [{tag}] ")
            } else {
                format!("{c}{size} ")
            }
        }
    }
}

pub(super) fn get_iterator_braces(kind: &str, tag: &str) -> [String; 2] {
    let iterator = format!("{kind} Iterator");
    let mut tag = tag.to_string();
    if tag != iterator {
        if !tag.is_empty() {
            tag.push_str("] [");
        }
        tag.push_str(&iterator);
    }
    [format!("[{tag}] {{"), "}".to_string()]
}

pub(super) fn is_below_break_length(output: &[String], start: usize, base: &str) -> bool {
    let mut total_length = output.len() + start;
    if total_length + output.len() > BREAK_LENGTH {
        return false;
    }
    for entry in output {
        total_length += js_len(entry);
        if total_length > BREAK_LENGTH {
            return false;
        }
    }
    base.is_empty() || !base.contains('\n')
}

/// `padStart` / `padEnd` with spaces to a UTF-16 length.
pub(super) fn pad(s: &str, target: usize, start: bool) -> String {
    let len = js_len(s);
    if len >= target {
        return s.to_string();
    }
    let fill = " ".repeat(target - len);
    if start {
        fill + s
    } else {
        s.to_string() + &fill
    }
}

/// `Math.round` for the non-negative values `groupArrayElements` feeds it.
pub(super) fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// Node's `getStringWidth` without colors: the East Asian Width of each character (what Node
/// asks ICU for), control characters counting nothing.
pub(super) fn get_string_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Node's `keyStrRegExp`: `^[a-zA-Z_][a-zA-Z_0-9]*$`.
pub(super) fn is_identifier(units: &[u16]) -> bool {
    let ident = |u: u16, first: bool| {
        u == u16::from(b'_')
            || (u16::from(b'a')..=u16::from(b'z')).contains(&u)
            || (u16::from(b'A')..=u16::from(b'Z')).contains(&u)
            || (!first && (u16::from(b'0')..=u16::from(b'9')).contains(&u))
    };
    match units.split_first() {
        Some((&first, rest)) => ident(first, true) && rest.iter().all(|&u| ident(u, false)),
        None => false,
    }
}

/// The value of a canonical array index string (`numberRegExp`: `^(0|[1-9][0-9]*)$`).
pub(super) fn canonical_index(units: &[u16]) -> Option<u64> {
    if units.is_empty() || units.len() > 10 || (units.len() > 1 && units[0] == u16::from(b'0')) {
        return None;
    }
    let mut n = 0u64;
    for &u in units {
        if !(u16::from(b'0')..=u16::from(b'9')).contains(&u) {
            return None;
        }
        n = n * 10 + u64::from(u - u16::from(b'0'));
    }
    Some(n)
}

/// `str.split(/(?<=\n)/)`: pieces ending right after each newline.
pub(super) fn split_after_newlines(units: &[u16]) -> Vec<&[u16]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, &u) in units.iter().enumerate() {
        if u == u16::from(b'\n') && i + 1 < units.len() {
            pieces.push(&units[start..=i]);
            start = i + 1;
        }
    }
    pieces.push(&units[start..]);
    pieces
}

// ---------------------------------------------------------------------------------------------
// string escaping

/// Node's `meta` table: the escape for code units below 0xA0 that need one.
pub(super) fn meta(u: u16) -> Option<String> {
    Some(match u {
        0x08 => "\\b".into(),
        0x09 => "\\t".into(),
        0x0A => "\\n".into(),
        0x0C => "\\f".into(),
        0x0D => "\\r".into(),
        0x27 => "\\'".into(),
        0x5C => "\\\\".into(),
        0x00..=0x1F | 0x7F..=0x9F => format!("\\x{u:02X}"),
        _ => return None,
    })
}

/// Node's `strEscape`: quote with `'` (or `"` / `` ` `` to avoid escaping quotes) and escape
/// control characters, backslashes and lone surrogates.
pub(super) fn str_escape(units: &[u16]) -> String {
    let has = |c: u8| units.contains(&u16::from(c));
    let mut quote = b'\'';
    if has(b'\'') {
        if !has(b'"') {
            quote = b'"';
        } else if !has(b'`')
            && !units
                .windows(2)
                .any(|w| w == [u16::from(b'$'), u16::from(b'{')])
        {
            quote = b'`';
        }
    }
    let mut out = String::with_capacity(units.len() + 2);
    out.push(char::from(quote));
    escape_into(&mut out, units, quote == b'\'');
    out.push(char::from(quote));
    out
}

/// `strEscapeSequencesReplacer` + `escapeFn`, used for symbol and non-enumerable key names.
pub(super) fn escape_replace(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    escape_into(&mut out, units, true);
    out
}

pub(super) fn escape_into(out: &mut String, units: &[u16], escape_single_quote: bool) {
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if u < 0xA0 && (u != 0x27 || escape_single_quote) {
            if let Some(escaped) = meta(u) {
                out.push_str(&escaped);
                i += 1;
                continue;
            }
        }
        if (0xD800..=0xDFFF).contains(&u) {
            if u <= 0xDBFF && i + 1 < units.len() && (0xDC00..=0xDFFF).contains(&units[i + 1]) {
                let c =
                    0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(units[i + 1]) - 0xDC00);
                out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                i += 2;
                continue;
            }
            out.push_str(&format!("\\u{u:x}"));
            i += 1;
            continue;
        }
        out.push(char::from_u32(u32::from(u)).unwrap_or('\u{FFFD}'));
        i += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// numbers and dates

/// Node's `formatNumber` without numeric separators: like `String(n)` but keeps `-0`.
pub(super) fn format_number(n: f64) -> String {
    if n == 0.0 && n.is_sign_negative() {
        return "-0".into();
    }
    number_to_js_string(n)
}

pub(super) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `parseInt(s)` with no radix. Not the engine's own `parseInt`: formatting never calls what
/// sandbox code can replace, and QuickJS has no C entry point for it.
pub(super) fn parse_int(s: &str) -> f64 {
    let s = s.trim_start_matches(is_js_whitespace);
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, s) = if s.starts_with("0x") || s.starts_with("0X") {
        (16, &s[2..])
    } else {
        (10, s)
    };
    let digits: &str = &s[..s
        .bytes()
        .take_while(|b| (*b as char).is_digit(radix))
        .count()];
    if digits.is_empty() {
        return f64::NAN;
    }
    let value = if radix == 10 {
        digits.parse::<f64>().unwrap_or(f64::NAN)
    } else {
        digits.chars().fold(0.0, |acc, c| {
            acc * 16.0 + f64::from(c.to_digit(16).unwrap_or(0))
        })
    };
    if negative {
        -value
    } else {
        value
    }
}

/// `parseFloat(s)` (by hand for the reason `parse_int` gives).
pub(super) fn parse_float(s: &str) -> f64 {
    let s = s.trim_start_matches(is_js_whitespace);
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut literal = String::new();
    if let Some(&sign @ (b'+' | b'-')) = bytes.first() {
        literal.push(char::from(sign));
        i = 1;
    }
    if s[i..].starts_with("Infinity") {
        return if literal == "-" {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let int_len = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    literal.push_str(&s[i..i + int_len]);
    i += int_len;
    let mut frac_len = 0;
    if bytes.get(i) == Some(&b'.') {
        frac_len = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac_len > 0 {
            literal.push('.');
            literal.push_str(&s[i + 1..i + 1 + frac_len]);
        }
        i += 1 + frac_len;
    }
    if int_len == 0 && frac_len == 0 {
        return f64::NAN;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if let Some(&sign @ (b'+' | b'-')) = bytes.get(j) {
            exp.push(char::from(sign));
            j += 1;
        }
        let exp_len = bytes[j.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if exp_len > 0 {
            exp.push_str(&s[j..j + exp_len]);
            literal.push_str(&exp);
        }
    }
    if int_len == 0 {
        literal = literal.replacen('.', "0.", 1);
    }
    literal.parse::<f64>().unwrap_or(f64::NAN)
}

/// `Date.prototype.toISOString` for a finite time value. Not `humantime`: it writes years
/// 0000–9999 only, and a JS date spans ±275760 years (`+275760-09-13T00:00:00.000Z`).
pub(super) fn iso_date(ms: f64) -> String {
    let ms = ms as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else if year < 0 {
        format!("-{:06}", -year)
    } else {
        format!("+{year:06}")
    };
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}
