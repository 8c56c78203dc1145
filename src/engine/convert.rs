//! Copies a sandbox value out of QuickJS into the shared value model (DESIGN.md "Values across
//! the boundary"). Runs on the engine thread, so whatever user code it triggers (getters, Proxy
//! traps) runs inside the sandbox, under its guards; nothing of the sandbox reaches the host.

use rquickjs::convert::Coerced;
use rquickjs::{qjs, Array, Ctx, Object, Type, Value as JsValue};

use super::inspect;
use crate::value::Value;

/// Nesting deeper than this is cut (the rest becomes its inspect string): a hostile value must
/// not exhaust the engine thread's stack while being copied.
const MAX_DEPTH: usize = 64;

/// How to treat a part that cannot be copied.
pub enum Uncopyable {
    Describe,
    Refuse,
}

/// Copies `value` (interim: always describes).
pub fn to_value<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    _mode: Uncopyable,
    _root: &str,
) -> Result<Value, crate::value::CloneError> {
    Ok(copy_out(ctx, value))
}

/// Builds a sandbox value (interim: primitives, arrays and objects).
pub fn from_value<'js>(ctx: &Ctx<'js>, value: &Value) -> rquickjs::Result<JsValue<'js>> {
    use rquickjs::IntoJs;
    Ok(match value {
        Value::Undefined => JsValue::new_undefined(ctx.clone()),
        Value::Null => JsValue::new_null(ctx.clone()),
        Value::Bool(b) => b.into_js(ctx)?,
        Value::Number(n) => n.into_js(ctx)?,
        Value::String(s) | Value::Uncloneable(s) | Value::BigInt(s) => s.as_str().into_js(ctx)?,
        Value::Array(items) => {
            let array = Array::new(ctx.clone())?;
            for (index, item) in items.iter().enumerate() {
                if let Some(item) = item {
                    array.set(index, from_value(ctx, item)?)?;
                }
            }
            array.into_value()
        }
        Value::Object(entries) => {
            let object = Object::new(ctx.clone())?;
            for (key, item) in entries {
                object.set(key.as_str(), from_value(ctx, item)?)?;
            }
            object.into_value()
        }
        _ => JsValue::new_undefined(ctx.clone()),
    })
}

fn copy_out<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Value {
    let mut ancestors = Vec::new();
    let copied = copy(ctx, value, &mut ancestors);
    // A Proxy trap or getter that threw leaves an exception pending; it is not the run's.
    if ctx.has_exception() {
        ctx.catch();
    }
    copied
}

fn copy<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>, ancestors: &mut Vec<Object<'js>>) -> Value {
    match value.type_of() {
        Type::Undefined | Type::Uninitialized => Value::Undefined,
        Type::Null => Value::Null,
        Type::Bool => Value::Bool(value.as_bool().unwrap_or_default()),
        Type::Int => Value::Number(f64::from(value.as_int().unwrap_or_default())),
        Type::Float => Value::Number(value.as_float().unwrap_or(f64::NAN)),
        Type::String => Value::String(
            value
                .as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_default(),
        ),
        // ToString of a BigInt is its decimal digits, which is what the host rebuilds it from.
        Type::BigInt => match value.get::<Coerced<String>>() {
            Ok(Coerced(digits)) => Value::BigInt(digits),
            Err(_) => uncloneable(ctx, value),
        },
        Type::Array | Type::Object | Type::Exception => match value.as_object() {
            Some(object) => copy_object(ctx, value, object, ancestors),
            None => uncloneable(ctx, value),
        },
        _ => uncloneable(ctx, value),
    }
}

fn uncloneable<'js>(ctx: &Ctx<'js>, value: &JsValue<'js>) -> Value {
    Value::Uncloneable(inspect::inspect(ctx, value))
}

fn copy_object<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    object: &Object<'js>,
    ancestors: &mut Vec<Object<'js>>,
) -> Value {
    if ancestors.len() >= MAX_DEPTH {
        return uncloneable(ctx, value);
    }
    if ancestors.iter().any(|ancestor| ancestor == object) {
        return Value::Uncloneable("[Circular]".into());
    }
    let raw = value.as_raw();
    // SAFETY: `raw` is a live value owned by `value` for the duration of these calls; the
    // predicates only read its class id.
    let (is_date, is_regexp, is_map, is_set, is_error, is_proxy) = unsafe {
        (
            qjs::JS_IsDate(raw),
            qjs::JS_IsRegExp(raw),
            qjs::JS_IsMap(raw),
            qjs::JS_IsSet(raw),
            qjs::JS_IsError(raw),
            qjs::JS_IsProxy(raw),
        )
    };
    if is_proxy {
        return uncloneable(ctx, value);
    }
    if is_date {
        let time = call_method(object, "getTime")
            .and_then(|v| v.as_number())
            .unwrap_or(f64::NAN);
        return Value::Date(time);
    }
    if is_regexp {
        return Value::RegExp {
            source: string_property(object, "source").unwrap_or_default(),
            flags: string_property(object, "flags").unwrap_or_default(),
        };
    }
    if is_error {
        return Value::Error {
            name: string_property(object, "name").unwrap_or_else(|| "Error".into()),
            message: string_property(object, "message").unwrap_or_default(),
            stack: string_property(object, "stack"),
        };
    }

    ancestors.push(object.clone());
    let copied = if is_map || is_set {
        copy_collection(ctx, value, object, is_map, ancestors)
    } else if let Some(array) = value.as_array() {
        copy_array(ctx, array, ancestors)
    } else if value.is_function() {
        uncloneable(ctx, value)
    } else {
        let mut entries = Vec::new();
        for (key, property) in object.props::<String, JsValue>().flatten() {
            entries.push((key, copy(ctx, &property, ancestors)));
        }
        Value::Object(entries)
    };
    ancestors.pop();
    copied
}

fn copy_array<'js>(ctx: &Ctx<'js>, array: &Array<'js>, ancestors: &mut Vec<Object<'js>>) -> Value {
    let object = array.as_object();
    let items = (0..array.len())
        .map(|index| {
            // A hole is an index the array does not own, which is not the same as `undefined`.
            let owned =
                u32::try_from(index).is_ok_and(|index| object.contains_key(index).unwrap_or(false));
            owned.then(|| {
                let item = array
                    .get::<JsValue>(index)
                    .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone()));
                copy(ctx, &item, ancestors)
            })
        })
        .collect();
    Value::Array(items)
}

fn copy_collection<'js>(
    ctx: &Ctx<'js>,
    value: &JsValue<'js>,
    object: &Object<'js>,
    is_map: bool,
    ancestors: &mut Vec<Object<'js>>,
) -> Value {
    // `Array.from(collection)` gives `[key, value]` pairs for a Map and the items for a Set.
    let entries = ctx
        .globals()
        .get::<_, Object>("Array")
        .and_then(|array| array.get::<_, rquickjs::Function>("from"))
        .and_then(|from| from.call::<_, Array>((object.clone(),)));
    let Ok(entries) = entries else {
        return uncloneable(ctx, value);
    };
    let items: Vec<JsValue> = entries.iter().flatten().collect();
    if is_map {
        Value::Map(
            items
                .iter()
                .filter_map(|pair| pair.as_array())
                .map(|pair| {
                    let key = pair
                        .get::<JsValue>(0)
                        .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone()));
                    let item = pair
                        .get::<JsValue>(1)
                        .unwrap_or_else(|_| JsValue::new_undefined(ctx.clone()));
                    (copy(ctx, &key, ancestors), copy(ctx, &item, ancestors))
                })
                .collect(),
        )
    } else {
        Value::Set(
            items
                .iter()
                .map(|item| copy(ctx, item, ancestors))
                .collect(),
        )
    }
}

fn string_property(object: &Object, key: &str) -> Option<String> {
    object
        .get::<_, JsValue>(key)
        .ok()
        .and_then(|value| value.as_string().and_then(|s| s.to_string().ok()))
}

fn call_method<'js>(object: &Object<'js>, name: &str) -> Option<JsValue<'js>> {
    object
        .get::<_, rquickjs::Function>(name)
        .ok()
        .and_then(|method| {
            method
                .call::<_, JsValue>((rquickjs::function::This(object.clone()),))
                .ok()
        })
}
