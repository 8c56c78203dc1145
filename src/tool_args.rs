//! The calling convention of smolagents tool objects (`{ name, inputs, forward(args) }`): their
//! `forward` takes one object of named inputs, while agent code may call a tool either way,
//! `t({ path, limit })` or `t(path, limit)` (docs/contract.md "Tools").

use crate::value::Value;

/// The single argument `forward` receives for a call with `args`, given the tool's input names
/// in declaration order.
///
/// One plain-object argument whose keys are all input names is already that object; anything
/// else is positional and is zipped with the input names (extra arguments are dropped, missing
/// ones left out so `forward` sees its defaults).
pub fn named_inputs(inputs: &[String], args: Vec<Value>) -> Value {
    if let [Value::Object(entries)] = args.as_slice() {
        let all_named = entries
            .iter()
            .all(|(key, _)| inputs.iter().any(|input| input == key));
        if all_named && (!entries.is_empty() || inputs.is_empty()) {
            return args.into_iter().next().unwrap_or(Value::Undefined);
        }
    }
    Value::Object(inputs.iter().cloned().zip(args).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<String> {
        vec!["path".into(), "limit".into()]
    }

    fn object(entries: &[(&str, Value)]) -> Value {
        Value::Object(
            entries
                .iter()
                .map(|(key, value)| ((*key).to_owned(), value.clone()))
                .collect(),
        )
    }

    #[test]
    fn an_object_of_named_inputs_is_passed_as_is() {
        let args = object(&[
            ("limit", Value::Number(3.0)),
            ("path", Value::String("a".into())),
        ]);
        assert_eq!(named_inputs(&inputs(), vec![args.clone()]), args);
    }

    #[test]
    fn positional_arguments_are_named_in_input_order() {
        let named = named_inputs(
            &inputs(),
            vec![Value::String("a".into()), Value::Number(3.0)],
        );
        assert_eq!(
            named,
            object(&[
                ("path", Value::String("a".into())),
                ("limit", Value::Number(3.0))
            ])
        );
    }

    #[test]
    fn missing_arguments_are_left_out_and_extra_ones_dropped() {
        assert_eq!(
            named_inputs(&inputs(), vec![Value::String("a".into())]),
            object(&[("path", Value::String("a".into()))])
        );
        let three = vec![Value::Null, Value::Null, Value::Null];
        assert_eq!(
            named_inputs(&inputs(), three),
            object(&[("path", Value::Null), ("limit", Value::Null)])
        );
    }

    #[test]
    fn an_object_that_is_not_made_of_input_names_is_one_positional_argument() {
        let data = object(&[("other", Value::Bool(true))]);
        assert_eq!(
            named_inputs(&inputs(), vec![data.clone()]),
            object(&[("path", data)])
        );
    }
}
