//! Temporary: replaced by the util.inspect port.
use rquickjs::{Ctx, Value};
pub fn format_log_args<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> String {
    args.iter().map(|a| if let Some(s) = a.as_string() { s.to_string().unwrap_or_default() } else { inspect(ctx, a) }).collect::<Vec<_>>().join(" ")
}
pub fn inspect<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> String {
    let _ = ctx;
    format!("{value:?}")
}
