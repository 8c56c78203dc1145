//! What completes the 2D context's prototype when a first context is made: the members of the
//! Canvas 2D API this canvas does not implement, which throw a `TypeError` naming themselves
//! (or, for properties, accept only the value that turns them off), and the interface objects
//! `CanvasRenderingContext2D` and `CanvasGradient`.

use rquickjs::object::{Accessor, Property};
use rquickjs::{Class, Ctx, Exception, Function, Result, Value};

use super::context2d::JsContext2d;
use super::{unsupported, JsGradient};
use crate::canvas::Rgba;

/// Members of the Canvas 2D API this canvas does not implement: `(name, what to do instead)`.
/// Methods throw when called.
const UNSUPPORTED_METHODS: [(&str, &str); 7] = [
    (
        "createPattern",
        "fill with colours or gradients, or drawImage() the canvas where it is needed",
    ),
    (
        "createConicGradient",
        "use createLinearGradient() or createRadialGradient()",
    ),
    (
        "isPointInPath",
        "compute the hit test from the shape's own geometry",
    ),
    (
        "isPointInStroke",
        "compute the hit test from the shape's own geometry",
    ),
    ("drawFocusIfNeeded", "there is no focus in this sandbox"),
    (
        "scrollPathIntoView",
        "there is nothing to scroll in this sandbox",
    ),
    (
        "createImageBitmap",
        "draw the canvas itself with drawImage(canvas, x, y)",
    ),
];

/// Properties this canvas does not implement: `(name, the value that disables them)`. Reading
/// gives that value; setting it is allowed, any other value throws.
const UNSUPPORTED_PROPERTIES: [(&str, Disabled); 13] = [
    ("shadowBlur", Disabled::Number(0.0)),
    ("shadowOffsetX", Disabled::Number(0.0)),
    ("shadowOffsetY", Disabled::Number(0.0)),
    ("shadowColor", Disabled::Color),
    ("filter", Disabled::Text("none")),
    ("direction", Disabled::Text("ltr")),
    ("letterSpacing", Disabled::Text("0px")),
    ("wordSpacing", Disabled::Text("0px")),
    ("fontKerning", Disabled::Text("auto")),
    ("fontStretch", Disabled::Text("normal")),
    ("fontVariantCaps", Disabled::Text("normal")),
    ("textRendering", Disabled::Text("auto")),
    ("imageSmoothingQuality", Disabled::Text("low")),
];

/// The value of an unsupported property that means "off".
#[derive(Clone, Copy)]
enum Disabled {
    Number(f64),
    Text(&'static str),
    /// Any fully transparent colour (`shadowColor`'s default is `rgba(0, 0, 0, 0)`).
    Color,
}

impl Disabled {
    fn value<'js>(self, ctx: &Ctx<'js>) -> Result<Value<'js>> {
        Ok(match self {
            Self::Number(n) => Value::new_number(ctx.clone(), n),
            Self::Text(text) => rquickjs::String::from_str(ctx.clone(), text)?.into_value(),
            Self::Color => {
                rquickjs::String::from_str(ctx.clone(), "rgba(0, 0, 0, 0)")?.into_value()
            }
        })
    }

    fn accepts(self, value: &Value<'_>) -> bool {
        match self {
            Self::Number(n) => {
                value.as_number().or_else(|| value.as_int().map(f64::from)) == Some(n)
            }
            Self::Text(text) => value
                .as_string()
                .and_then(|s| s.to_string().ok())
                .is_some_and(|s| {
                    s == text
                        || (text == "ltr" && s == "inherit")
                        || (text == "low" && matches!(s.as_str(), "medium" | "high"))
                }),
            Self::Color => value
                .as_string()
                .and_then(|s| s.to_string().ok())
                .and_then(|s| Rgba::parse(&s))
                .is_some_and(|color| color.a == 0),
        }
    }
}

/// Completes the 2D context's prototype when a first context is made (most executors never
/// draw, and building it at creation would cost every one of them): the unsupported members,
/// and the interface objects `CanvasRenderingContext2D` and `CanvasGradient` (globals whose
/// `prototype` is the class's, for `instanceof` and inspection; `new` throws, as in browsers).
pub(super) fn install_stubs<'js>(ctx: &Ctx<'js>) -> Result<()> {
    let interfaces = [
        (
            "CanvasRenderingContext2D",
            Class::<JsContext2d>::prototype(ctx)?,
        ),
        ("CanvasGradient", Class::<JsGradient>::prototype(ctx)?),
    ];
    for (name, prototype) in interfaces {
        let Some(prototype) = prototype else { continue };
        let interface = Function::new(ctx.clone(), |ctx: Ctx<'js>| -> Result<()> {
            Err(Exception::throw_type(&ctx, "Illegal constructor"))
        })?
        .with_name(name)?
        .with_constructor(true);
        interface.prop("prototype", Property::from(prototype.clone()))?;
        prototype.prop(
            "constructor",
            Property::from(interface.clone()).writable().configurable(),
        )?;
        ctx.globals()
            .prop(name, Property::from(interface).writable().configurable())?;
    }
    let Some(prototype) = Class::<JsContext2d>::prototype(ctx)? else {
        return Ok(());
    };
    for (name, instead) in UNSUPPORTED_METHODS {
        let method = Function::new(ctx.clone(), move |ctx: Ctx<'_>| -> Result<()> {
            Err(unsupported(
                &ctx,
                &format!("CanvasRenderingContext2D.{name}()"),
                instead,
            ))
        })?
        .with_name(name)?;
        prototype.prop(name, Property::from(method).writable().configurable())?;
    }
    for (name, disabled) in UNSUPPORTED_PROPERTIES {
        let get = move |ctx: Ctx<'js>| disabled.value(&ctx);
        let set = move |ctx: Ctx<'js>, value: Value<'js>| -> Result<()> {
            if disabled.accepts(&value) {
                return Ok(());
            }
            let off = match disabled {
                Disabled::Number(n) => format!("{n}"),
                Disabled::Text(text) => format!("'{text}'"),
                Disabled::Color => "a transparent colour".into(),
            };
            Err(unsupported(
                &ctx,
                &format!("CanvasRenderingContext2D.{name}"),
                &format!("only {off} (the value that turns it off) can be set"),
            ))
        };
        prototype.prop(name, Accessor::new(get, set).configurable())?;
    }
    Ok(())
}
