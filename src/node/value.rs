//! Builds host JS values from the shared value model: every value the host receives is a fresh
//! copy made on Node's thread (DESIGN.md "Values across the boundary").

use napi::bindgen_prelude::{
    FnArgs, Function, Null, Object, ToNapiValue, TypeName, Unknown, ValueType,
};
use napi::bindgen_prelude::{FromNapiValue, JsObjectValue};
use napi::{sys, Env, JsValue, Result};

use crate::value::Value;

/// A [`Value`] on its way to JS, converted when napi asks for it.
pub struct ToJs<'v>(pub &'v Value);

impl TypeName for ToJs<'_> {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ToNapiValue for ToJs<'_> {
    unsafe fn to_napi_value(raw_env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(raw_env);
        match val.0 {
            Value::Undefined => <() as ToNapiValue>::to_napi_value(raw_env, ()),
            Value::Null => Null::to_napi_value(raw_env, Null),
            Value::Bool(value) => bool::to_napi_value(raw_env, *value),
            Value::Number(value) => f64::to_napi_value(raw_env, *value),
            Value::ArrayBuffer(_) | Value::TypedArray { .. } | Value::Ref(_) => {
                <&str>::to_napi_value(raw_env, "[not yet converted]")
            }
            Value::String(value) | Value::Uncloneable(value) => {
                <&str>::to_napi_value(raw_env, value.as_str())
            }
            Value::BigInt(digits) => {
                let big_int: Function<String, Unknown> = global(&env, "BigInt")?;
                Ok(big_int.call(digits.clone())?.raw())
            }
            Value::Array(items) => {
                let length = u32::try_from(items.len()).unwrap_or(u32::MAX);
                let mut array = env.create_array(length)?;
                for (index, item) in (0..length).zip(items) {
                    if let Some(item) = item {
                        array.set(index, ToJs(item))?;
                    }
                }
                Ok(array.raw())
            }
            Value::Object(entries) => {
                let mut object = Object::new(&env)?;
                for (key, item) in entries {
                    object.set(key, ToJs(item))?;
                }
                Ok(object.raw())
            }
            Value::Date(time) => Ok(env.create_date(*time)?.raw()),
            Value::RegExp { source, flags } => {
                let regexp: Function<FnArgs<(String, String)>, Unknown> = global(&env, "RegExp")?;
                Ok(regexp
                    .new_instance((source.clone(), flags.clone()).into())?
                    .raw())
            }
            Value::Map(entries) => {
                let pairs = Value::Array(
                    entries
                        .iter()
                        .map(|(key, item)| {
                            Some(Value::Array(vec![Some(key.clone()), Some(item.clone())]))
                        })
                        .collect(),
                );
                construct_from(&env, "Map", &pairs)
            }
            Value::Set(items) => {
                let items = Value::Array(items.iter().cloned().map(Some).collect());
                construct_from(&env, "Set", &items)
            }
            Value::Error {
                name,
                message,
                stack,
            } => {
                let mut error = env.create_error(napi::Error::from_reason(message.clone()))?;
                error.set("name", name.as_str())?;
                match stack {
                    Some(stack) => error.set("stack", stack.as_str())?,
                    None => error.set("stack", format!("{name}: {message}"))?,
                }
                Ok(error.raw())
            }
        }
    }
}

/// `new <name>(items)` for the host's own `Map` and `Set`.
fn construct_from(env: &Env, name: &str, items: &Value) -> Result<sys::napi_value> {
    let constructor: Function<ToJs, Unknown> = global(env, name)?;
    Ok(constructor.new_instance(ToJs(items))?.raw())
}

fn global<'env, Args, Return>(env: &'env Env, name: &str) -> Result<Function<'env, Args, Return>>
where
    Args: napi::bindgen_prelude::JsValuesTupleIntoVec,
{
    env.get_global()?.get_named_property(name)
}

/// Copies a host value in (interim: primitives, arrays and plain objects).
pub fn from_js(
    env: &Env,
    value: Unknown,
    root: &str,
) -> std::result::Result<Value, crate::value::CloneError> {
    let refused = |what: &str| crate::value::CloneError {
        path: root.to_owned(),
        what: what.to_owned(),
    };
    let text = |value: &Unknown| {
        value
            .coerce_to_string()
            .and_then(|s| s.into_utf8())
            .and_then(|s| s.into_owned())
            .unwrap_or_default()
    };
    Ok(match value.get_type().map_err(|_| refused("unreadable"))? {
        ValueType::Undefined => Value::Undefined,
        ValueType::Null => Value::Null,
        ValueType::Boolean => Value::Bool(text(&value) == "true"),
        ValueType::Number => Value::Number(
            value
                .coerce_to_number()
                .and_then(|n| n.get_double())
                .unwrap_or(f64::NAN),
        ),
        ValueType::String => Value::String(text(&value)),
        ValueType::BigInt => Value::BigInt(text(&value)),
        ValueType::Object if value.is_array().unwrap_or(false) => {
            // SAFETY: checked to be an array of this environment.
            let array =
                unsafe { napi::bindgen_prelude::Array::from_napi_value(env.raw(), value.raw()) }
                    .map_err(|_| refused("unreadable"))?;
            let mut items = Vec::new();
            for index in 0..array.len() {
                let item: Unknown = array
                    .get(index)
                    .ok()
                    .flatten()
                    .ok_or_else(|| refused("unreadable"))?;
                items.push(Some(from_js(env, item, &format!("{root}[{index}]"))?));
            }
            Value::Array(items)
        }
        ValueType::Object => {
            // SAFETY: checked to be an object of this environment.
            let object = unsafe { Object::from_napi_value(env.raw(), value.raw()) }
                .map_err(|_| refused("unreadable"))?;
            let mut entries = Vec::new();
            for key in Object::keys(&object).map_err(|_| refused("unreadable"))? {
                let item: Unknown = object
                    .get_named_property(&key)
                    .map_err(|_| refused("unreadable"))?;
                let path = format!("{root}.{key}");
                entries.push((key, from_js(env, item, &path)?));
            }
            Value::Object(entries)
        }
        ValueType::Function => return Err(refused("a function")),
        _ => return Err(refused("a symbol")),
    })
}
