//! Builds host JS values from the shared value model: every value the host receives is a fresh
//! copy made on Node's thread (DESIGN.md "Values across the boundary").

use napi::bindgen_prelude::JsObjectValue;
use napi::bindgen_prelude::{
    FnArgs, Function, Null, Object, ToNapiValue, TypeName, Unknown, ValueType,
};
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
