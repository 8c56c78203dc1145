//! One declaration per option: [`declare_options!`] takes each option's name, JS name, type,
//! default, bounds and doc once, and makes from them what every layer needs — the raw record
//! the napi layer fills ([`ReadOptions`], each property read once), the checks with their
//! messages, the defaults, and the table that renders the typings' `ExecutorOptions` interface
//! and the docs' options table ([`typescript_interface`], [`markdown_table`]).
//!
//! A declarative macro rather than a derive: the table is data (one row per option) that the
//! crate also reads at run time to render docs, and `macro_rules!` keeps it in plain Rust with
//! no procedural-macro crate to maintain.

use crate::diagnostic::Diagnostic;

use super::rules::{self, integer, OPTIONS_VALID};

/// How the napi layer reads an option's value (each through the guarded path, once).
pub trait ReadOptions {
    /// A number, as given (`NaN`, `-1` and `1.5` reach the checks).
    fn number(&mut self, name: &str) -> Result<Option<f64>, Diagnostic>;
    /// A boolean.
    fn boolean(&mut self, name: &str) -> Result<Option<bool>, Diagnostic>;
    /// A string.
    fn string(&mut self, name: &str) -> Result<Option<String>, Diagnostic>;
    /// An array of strings.
    fn strings(&mut self, name: &str) -> Result<Option<Vec<String>>, Diagnostic>;
}

/// An option's default as JS writes it: what the checks turn into the typed default, and what
/// the docs show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JsDefault {
    Number(f64),
    Boolean(bool),
    Text(&'static str),
    Texts(&'static [&'static str]),
}

/// The kind of value the caller gives, as JS sees it.
pub trait RawValue: Sized {
    /// Reads it from `reader` under `name`.
    fn read<R: ReadOptions + ?Sized>(
        reader: &mut R,
        name: &str,
    ) -> Result<Option<Self>, Diagnostic>;
    /// The default in this kind, if `default` is of it.
    fn from_default(default: JsDefault) -> Option<Self>;
}

impl RawValue for f64 {
    fn read<R: ReadOptions + ?Sized>(
        reader: &mut R,
        name: &str,
    ) -> Result<Option<Self>, Diagnostic> {
        reader.number(name)
    }

    fn from_default(default: JsDefault) -> Option<Self> {
        match default {
            JsDefault::Number(number) => Some(number),
            _ => None,
        }
    }
}

impl RawValue for bool {
    fn read<R: ReadOptions + ?Sized>(
        reader: &mut R,
        name: &str,
    ) -> Result<Option<Self>, Diagnostic> {
        reader.boolean(name)
    }

    fn from_default(default: JsDefault) -> Option<Self> {
        match default {
            JsDefault::Boolean(flag) => Some(flag),
            _ => None,
        }
    }
}

impl RawValue for String {
    fn read<R: ReadOptions + ?Sized>(
        reader: &mut R,
        name: &str,
    ) -> Result<Option<Self>, Diagnostic> {
        reader.string(name)
    }

    fn from_default(default: JsDefault) -> Option<Self> {
        match default {
            JsDefault::Text(text) => Some(text.to_owned()),
            _ => None,
        }
    }
}

impl RawValue for Vec<String> {
    fn read<R: ReadOptions + ?Sized>(
        reader: &mut R,
        name: &str,
    ) -> Result<Option<Self>, Diagnostic> {
        reader.strings(name)
    }

    fn from_default(default: JsDefault) -> Option<Self> {
        match default {
            JsDefault::Texts(texts) => Some(texts.iter().map(|text| (*text).to_owned()).collect()),
            _ => None,
        }
    }
}

/// What an option accepts beyond its type: for an integer, its smallest and largest value, the
/// rule it reports under and why the largest is what it is; for a list of names, what they
/// name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub min: f64,
    pub max: Option<u64>,
    pub rule: &'static str,
    /// Said when a value is above `max` (`maxStackBytes`: the stack engine threads keep).
    pub max_reason: Option<&'static str>,
    /// What the items of a list name (`module names`).
    pub items: &'static str,
    /// Whether the value counts bytes (the docs then name whole KiB, MiB and GiB).
    pub bytes: bool,
}

impl Bounds {
    /// Any value of the option's type (bounds matter to integers only).
    pub const NONE: Bounds = Bounds::at_least(0.0);

    /// Integers of at least `min`, under `options_valid`.
    pub const fn at_least(min: f64) -> Self {
        Self {
            min,
            max: None,
            rule: OPTIONS_VALID,
            max_reason: None,
            items: "names",
            bytes: false,
        }
    }

    /// The same, counting bytes.
    pub const fn bytes(self) -> Self {
        Self {
            bytes: true,
            ..self
        }
    }

    /// The same, up to `max`.
    pub const fn at_most(self, max: u64) -> Self {
        Self {
            max: Some(max),
            ..self
        }
    }

    /// The same, reported under `rule` (one of §6.2's own).
    pub const fn rule(self, rule: &'static str) -> Self {
        Self { rule, ..self }
    }

    /// A list whose items name `items`.
    pub const fn naming(items: &'static str) -> Self {
        Self {
            items,
            ..Self::NONE
        }
    }

    /// The same, saying `reason` when a value is above the largest.
    pub const fn because(self, reason: &'static str) -> Self {
        Self {
            max_reason: Some(reason),
            ..self
        }
    }
}

/// A type an option can have once checked: what the caller gives for it, how that is checked,
/// and how typings and docs name it.
pub trait OptionType: Sized + Default {
    /// What the caller gives.
    type Raw: RawValue;
    /// Checks `raw`, given as option `name`; every problem is reported.
    fn check(name: &str, raw: &Self::Raw, bounds: &Bounds) -> Result<Self, Vec<Diagnostic>>;
    /// The TypeScript type of the option.
    fn typescript() -> String;
    /// What it accepts, in words, for the docs' table.
    fn accepts(bounds: &Bounds) -> String;
}

/// An enum option: its values, by name.
pub trait Choice: Copy + PartialEq + 'static {
    /// Every value and its name, in the order the docs list them.
    const NAMED: &'static [(&'static str, Self)];
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn alternatives(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("{name:?}")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `"a" | "b"`.
fn union(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn names<T: Choice>() -> Vec<&'static str> {
    T::NAMED.iter().map(|(name, _)| *name).collect()
}

fn checked_integer(name: &str, raw: f64, bounds: &Bounds) -> Result<u64, Vec<Diagnostic>> {
    let value = integer(Some(raw), name, bounds.min, bounds.rule)
        .map_err(|diagnostic| vec![diagnostic])?
        .unwrap_or_default();
    match bounds.max {
        Some(max) if value > max => Err(vec![rules::too_large(
            name,
            value,
            bounds.min,
            max,
            bounds.max_reason,
        )]),
        _ => Ok(value),
    }
}

fn integer_accepts(bounds: &Bounds) -> String {
    match bounds.max {
        Some(max) => format!("integer {}–{max}", rules::js_number(bounds.min)),
        None => format!("integer ≥ {}", rules::js_number(bounds.min)),
    }
}

macro_rules! integer_types {
    ($($ty:ty),*) => {$(
        impl OptionType for $ty {
            type Raw = f64;

            fn check(name: &str, raw: &f64, bounds: &Bounds) -> Result<Self, Vec<Diagnostic>> {
                // The bounds of every option of this type keep the value in range.
                checked_integer(name, *raw, bounds).map(|value| <$ty>::try_from(value).unwrap_or(<$ty>::MAX))
            }

            fn typescript() -> String {
                "number".into()
            }

            fn accepts(bounds: &Bounds) -> String {
                integer_accepts(bounds)
            }
        }
    )*};
}

integer_types!(u32, u64, usize);

impl OptionType for bool {
    type Raw = bool;

    fn check(_: &str, raw: &bool, _: &Bounds) -> Result<Self, Vec<Diagnostic>> {
        Ok(*raw)
    }

    fn typescript() -> String {
        "boolean".into()
    }

    fn accepts(_: &Bounds) -> String {
        "boolean".into()
    }
}

/// A free list of names (`authorizedImports`): none of them empty.
impl OptionType for Vec<String> {
    type Raw = Vec<String>;

    fn check(name: &str, raw: &Vec<String>, bounds: &Bounds) -> Result<Self, Vec<Diagnostic>> {
        if raw.iter().any(|item| item.trim().is_empty()) {
            return Err(vec![rules::empty_name(name, bounds.items)]);
        }
        Ok(raw.clone())
    }

    fn typescript() -> String {
        "Array<string>".into()
    }

    fn accepts(bounds: &Bounds) -> String {
        format!("non-empty {}", bounds.items)
    }
}

/// Checks a [`Choice`] given by name (see [`choice_option!`]).
pub fn check_choice<T: Choice>(name: &str, raw: &str) -> Result<T, Vec<Diagnostic>> {
    T::NAMED
        .iter()
        .find(|(known, _)| *known == raw)
        .map(|(_, value)| *value)
        .ok_or_else(|| vec![rules::not_one_of(name, &alternatives(&names::<T>()), raw)])
}

/// The TypeScript union of a [`Choice`]'s names.
pub fn choice_typescript<T: Choice>() -> String {
    union(&names::<T>())
}

/// What a [`Choice`] accepts, in words.
pub fn choice_accepts<T: Choice>() -> String {
    alternatives(&names::<T>())
}

/// Makes a [`Choice`] an option type, given by one of its names.
macro_rules! choice_option {
    ($ty:ty) => {
        impl $crate::options::declare::OptionType for $ty {
            type Raw = String;

            fn check(
                name: &str,
                raw: &String,
                _: &$crate::options::declare::Bounds,
            ) -> Result<Self, Vec<$crate::diagnostic::Diagnostic>> {
                $crate::options::declare::check_choice(name, raw)
            }

            fn typescript() -> String {
                $crate::options::declare::choice_typescript::<$ty>()
            }

            fn accepts(_: &$crate::options::declare::Bounds) -> String {
                $crate::options::declare::choice_accepts::<$ty>()
            }
        }
    };
}

pub(crate) use choice_option;

/// A set of [`Choice`]s, given as an array of names: repeats are dropped, the first order
/// kept.
impl<T: Choice> OptionType for Vec<T> {
    type Raw = Vec<String>;

    fn check(name: &str, raw: &Vec<String>, _: &Bounds) -> Result<Self, Vec<Diagnostic>> {
        let mut chosen = Vec::new();
        let mut refused = Vec::new();
        for item in raw {
            match T::NAMED.iter().find(|(known, _)| known == item) {
                Some((_, value)) if !chosen.contains(value) => chosen.push(*value),
                Some(_) => {}
                None => refused.push(rules::not_among(name, &names::<T>(), item)),
            }
        }
        if refused.is_empty() {
            Ok(chosen)
        } else {
            Err(refused)
        }
    }

    fn typescript() -> String {
        format!("Array<{}>", union(&names::<T>()))
    }

    fn accepts(_: &Bounds) -> String {
        format!(
            "any of {}",
            alternatives(&names::<T>()).replace(" or ", " and ")
        )
    }
}

/// One option, as the docs and typings describe it.
#[derive(Debug, Clone, Copy)]
pub struct OptionDoc {
    /// Its name in JS (`maxCanvasSize`).
    pub name: &'static str,
    /// Its TypeScript type.
    pub typescript: fn() -> String,
    /// What it accepts, in words (`None`: a host object, whose reader says).
    pub accepts: Option<fn(&Bounds) -> String>,
    pub bounds: Bounds,
    /// `None` for host objects (callbacks, modules, tracers), which default to nothing.
    pub default: Option<JsDefault>,
    /// Its documentation, one source line each.
    pub doc: &'static [&'static str],
}

/// Checks `raw` (the caller's value) or, when absent, the declared default; problems go to
/// `diagnostics` and leave the type's default in place.
pub fn resolve_one<T: OptionType>(
    name: &str,
    raw: Option<&T::Raw>,
    default: JsDefault,
    bounds: &Bounds,
    diagnostics: &mut Vec<Diagnostic>,
) -> T {
    let checked = match raw {
        Some(raw) => T::check(name, raw, bounds),
        None => match T::Raw::from_default(default) {
            Some(raw) => T::check(name, &raw, bounds),
            None => Err(vec![rules::bad_default(name)]),
        },
    };
    checked.unwrap_or_else(|refused| {
        diagnostics.extend(refused);
        T::default()
    })
}

/// Declares the options: `RawOptions` (what the caller gave, filled by
/// `RawOptions::read`), `Options` (checked, with defaults; `Options::check_each` reports every
/// problem), and `TABLE`, every option's [`OptionDoc`], host options (read by the napi layer
/// itself) after the values.
///
/// ```text
/// declare_options! {
///     values {
///         /// Doc lines.
///         field_name: CheckedType = "jsName", default JsDefault::…, bounds Bounds::…;
///     }
///     host {
///         /// Doc lines.
///         "jsName": "TypeScript type";
///     }
///     extra {
///         /// Doc lines.
///         field_name: Type = default expression;
///     }
/// }
/// ```
macro_rules! declare_options {
    (
        values {
            $(
                $(#[doc = $doc:literal])*
                $field:ident: $ty:ty = $js:literal, default $default:expr, bounds $bounds:expr;
            )*
        }
        host {
            $(
                $(#[doc = $host_doc:literal])*
                $host_js:literal: $host_ts:literal;
            )*
        }
        extra {
            $(
                $(#[doc = $extra_doc:literal])*
                $extra:ident: $extra_ty:ty = $extra_default:expr;
            )*
        }
    ) => {
        /// The options exactly as the caller gave them: numbers stay `f64` so that `NaN`, `-1`
        /// or `1.5` reach the checks that report them instead of being lost in a conversion.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct RawOptions {
            $(
                $(#[doc = $doc])*
                pub $field: Option<<$ty as $crate::options::declare::OptionType>::Raw>,
            )*
        }

        impl RawOptions {
            /// Reads every option from `reader`, each property once, in the table's order.
            pub fn read<R: $crate::options::declare::ReadOptions + ?Sized>(
                reader: &mut R,
            ) -> Result<Self, $crate::diagnostic::Diagnostic> {
                Ok(Self {
                    $(
                        $field: <<$ty as $crate::options::declare::OptionType>::Raw
                            as $crate::options::declare::RawValue>::read(reader, $js)?,
                    )*
                })
            }
        }

        /// Checked options with the defaults filled in.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Options {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
            $(
                $(#[doc = $extra_doc])*
                pub $extra: $extra_ty,
            )*
        }

        impl Options {
            /// Checks each option of `raw` (its default when absent), reporting every problem to
            /// `diagnostics`; a refused option keeps its type's default.
            pub fn check_each(
                raw: &RawOptions,
                diagnostics: &mut Vec<$crate::diagnostic::Diagnostic>,
            ) -> Self {
                Self {
                    $(
                        $field: $crate::options::declare::resolve_one::<$ty>(
                            $js,
                            raw.$field.as_ref(),
                            $default,
                            &$bounds,
                            diagnostics,
                        ),
                    )*
                    $( $extra: $extra_default, )*
                }
            }
        }

        impl Default for Options {
            /// The declared defaults (a test checks that each passes its own check).
            fn default() -> Self {
                Self::check_each(&RawOptions::default(), &mut Vec::new())
            }
        }

        /// Every option, for typings and docs: the values, then the host objects.
        pub const TABLE: &[$crate::options::declare::OptionDoc] = &[
            $(
                $crate::options::declare::OptionDoc {
                    name: $js,
                    typescript: <$ty as $crate::options::declare::OptionType>::typescript,
                    accepts: Some(<$ty as $crate::options::declare::OptionType>::accepts),
                    bounds: $bounds,
                    default: Some($default),
                    doc: &[$($doc),*],
                },
            )*
            $(
                $crate::options::declare::OptionDoc {
                    name: $host_js,
                    typescript: || String::from($host_ts),
                    accepts: None,
                    bounds: $crate::options::declare::Bounds::NONE,
                    default: None,
                    doc: &[$($host_doc),*],
                },
            )*
        ];
    };
}

pub(crate) use declare_options;

/// `268435456 (256 MiB)`: a number as JS writes it, with whole KiB, MiB and GiB said too when it
/// counts bytes.
fn number_text(number: f64, bytes: bool) -> String {
    let text = rules::js_number(number);
    if !bytes {
        return text;
    }
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "only whole numbers below 2^53 are named in units"
    )]
    let unit = (number.fract() == 0.0 && (1024.0..9e15).contains(&number))
        .then(|| {
            let whole = number as u64;
            units
                .iter()
                .find(|(size, _)| whole.is_multiple_of(*size))
                .map(|(size, unit)| format!("{} {unit}", whole / size))
        })
        .flatten();
    match unit {
        Some(unit) => format!("{text} ({unit})"),
        None => text,
    }
}

/// The default as JS writes it.
fn default_text(default: JsDefault, bounds: &Bounds) -> String {
    match default {
        JsDefault::Number(number) => number_text(number, bounds.bytes),
        JsDefault::Boolean(flag) => flag.to_string(),
        JsDefault::Text(text) => format!("{text:?}"),
        JsDefault::Texts(texts) => format!(
            "[{}]",
            texts
                .iter()
                .map(|text| format!("{text:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What the docs add to an option's own doc: its default and what it accepts.
fn summary(option: &OptionDoc) -> Option<String> {
    let default = option.default?;
    let accepts = option.accepts.map(|accepts| accepts(&option.bounds));
    Some(match accepts {
        Some(accepts) if accepts != "boolean" => {
            format!(
                "Default: `{}`. Accepts: {accepts}.",
                default_text(default, &option.bounds)
            )
        }
        _ => format!("Default: `{}`.", default_text(default, &option.bounds)),
    })
}

/// The TypeScript interface `name` of `table`, with each option's doc and summary as JSDoc.
pub fn typescript_interface(name: &str, table: &[OptionDoc]) -> String {
    let mut out = format!("export interface {name} {{\n");
    for option in table {
        out.push_str("  /**\n");
        for line in option.doc {
            out.push_str(format!("   *{}", line.trim_end()).trim_end());
            out.push('\n');
        }
        if let Some(summary) = summary(option) {
            out.push_str("   *\n   * ");
            out.push_str(&summary);
            out.push('\n');
        }
        out.push_str("   */\n");
        out.push_str(&format!("  {}?: {}\n", option.name, (option.typescript)()));
    }
    out.push_str("}\n");
    out
}

/// A markdown table of `table`: name, type, default, accepted values and description.
pub fn markdown_table(table: &[OptionDoc]) -> String {
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = String::from(
        "| Option | Type | Default | Accepts | Description |\n|---|---|---|---|---|\n",
    );
    for option in table {
        let doc: Vec<&str> = option.doc.iter().map(|line| line.trim()).collect();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            option.name,
            cell(&(option.typescript)()),
            option.default.map_or("none".into(), |d| format!(
                "`{}`",
                cell(&default_text(d, &option.bounds))
            )),
            option
                .accepts
                .map_or("see description".into(), |accepts| cell(&accepts(
                    &option.bounds
                ))),
            cell(&doc.join(" ")),
        ));
    }
    out
}

#[cfg(test)]
mod tests;
