//! What an object is called: constructor names, `Symbol.toStringTag`, prefixes, and the bases
//! of functions, classes, boxed primitives, regexps and dates; and `%s`'s
//! `hasBuiltInToString`.
//!
//! Spec: §7.3 (console capture), docs/contract.md "Logs".

use super::*;

impl<'a, 'js> Inspector<'a, 'js> {
    // -----------------------------------------------------------------------------------------
    // constructor names, tags, prefixes

    /// Node's `getConstructorName`: the name of the first `constructor` data property on the
    /// prototype chain that is a named function the value is an instance of; `None` for a null
    /// prototype.
    pub(super) fn get_constructor_name(
        &mut self,
        obj: &Value<'js>,
        recurse_times: i64,
    ) -> Option<String> {
        let object_proto = self.reflect.class_proto(CLASS_OBJECT);
        let function_proto = self.reflect.class_proto(CLASS_BYTECODE_FUNCTION);
        let constructor_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor);
        let mut current = Some(obj.clone());
        // `None` until the first step; then the first prototype (`Some(None)` when it is null).
        let mut first_proto: Option<Option<Value<'js>>> = None;
        let mut hops = 0;
        while let Some(o) = current {
            hops += 1;
            if hops > MAX_PROTO_HOPS {
                break;
            }
            for (proto, name) in [(&object_proto, "Object"), (&function_proto, "Function")] {
                if proto.as_ref() == Some(&o) && self.proto_chain_contains(obj, &o) {
                    return Some(name.into());
                }
            }
            if let Ok(Some(PropDesc {
                value: PropValue::Data(ctor),
                ..
            })) = self.reflect.own_desc(&o, &constructor_atom)
            {
                if ctor.is_function() {
                    let name = self.function_name(&ctor);
                    if !name.is_empty() && self.ordinary_has_instance(&ctor, obj) {
                        return Some(name);
                    }
                }
            }
            let proto = self.reflect.proto_of(&o);
            if first_proto.is_none() {
                first_proto = Some(proto.clone());
            }
            current = proto;
        }

        let first_proto = match first_proto {
            Some(Some(p)) => p,
            Some(None) => return None,
            None => return Some(self.reflect.internal_constructor_name(obj)),
        };
        let res = self.reflect.internal_constructor_name(obj);
        if recurse_times > self.depth {
            return Some(format!("{res} <Complex prototype>"));
        }
        match self.get_constructor_name(&first_proto, recurse_times + 1) {
            Some(proto_constr) => Some(format!("{res} <{proto_constr}>")),
            None => {
                let mut nested = Inspector::new(self.ctx, -1, self.show_hidden, self.show_proxy);
                Some(format!(
                    "{res} <{}>",
                    nested.format_value(&first_proto, 0, false)
                ))
            }
        }
    }

    /// `OrdinaryHasInstance` without `Symbol.hasInstance` and without accessors: is
    /// `ctor.prototype` on the prototype chain of `obj`?
    pub(super) fn ordinary_has_instance(&self, ctor: &Value<'js>, obj: &Value<'js>) -> bool {
        let prototype_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype);
        match self.reflect.own_desc(ctor, &prototype_atom) {
            Ok(Some(PropDesc {
                value: PropValue::Data(proto),
                ..
            })) if proto.is_object() => self.proto_chain_contains(obj, &proto),
            _ => false,
        }
    }

    /// Whether `target` is a strict ancestor of `obj`.
    pub(super) fn proto_chain_contains(&self, obj: &Value<'js>, target: &Value<'js>) -> bool {
        let mut current = self.reflect.proto_of(obj);
        for _ in 0..MAX_PROTO_HOPS {
            match current {
                Some(p) if &p == target => return true,
                Some(p) => current = self.reflect.proto_of(&p),
                None => return false,
            }
        }
        false
    }

    /// `fn.name` read as a data property (own or inherited).
    pub(super) fn function_name(&self, func: &Value<'js>) -> String {
        match self.reflect.data_get_pre(func, PredefinedAtom::Name) {
            Some(v) if v.is_string() => lossy(&js_string_units(self.ctx, &v).unwrap_or_default()),
            Some(v) if v.is_undefined() => String::new(),
            Some(v) if !v.is_object() => primitive_to_string(self.ctx, &v),
            _ => String::new(),
        }
    }

    /// The `Symbol.toStringTag` Node would show next to the constructor name, read without
    /// calling accessors (typed arrays, whose tag is an accessor, are special-cased).
    pub(super) fn to_string_tag(&self, value: &Value<'js>, class: u32) -> String {
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::SymbolToStringTag);
        let mut current = Some(value.clone());
        let mut found = None;
        let mut is_own = true;
        for _ in 0..MAX_PROTO_HOPS {
            let Some(o) = current else { break };
            match self.reflect.own_desc(&o, &atom) {
                Ok(Some(desc)) => {
                    found = Some((desc, o));
                    break;
                }
                Ok(None) => {}
                Err(()) => break,
            }
            current = self.reflect.proto_of(&o);
            is_own = false;
        }
        let Some((desc, owner)) = found else {
            return String::new();
        };
        let tag = match desc.value {
            PropValue::Data(v) if v.is_string() => {
                lossy(&js_string_units(self.ctx, &v).unwrap_or_default())
            }
            PropValue::Accessor { get: true, .. }
                if is_typed_array_class(class)
                    && Some(&owner) == self.typed_array_proto().as_ref() =>
            {
                typed_array_name(class).to_string()
            }
            _ => return String::new(),
        };
        if !tag.is_empty() && is_own && (self.show_hidden || desc.enumerable) {
            return String::new();
        }
        tag
    }

    pub(super) fn get_ctx_style(
        &self,
        value: &Value<'js>,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        let mut fallback = String::new();
        if constructor.is_none() {
            fallback = self.reflect.internal_constructor_name(value);
            if fallback == tag {
                fallback = "Object".into();
            }
        }
        get_prefix(constructor, tag, &fallback, "")
    }

    // -----------------------------------------------------------------------------------------
    // functions, boxed primitives, regexps, dates

    pub(super) fn get_function_base(
        &self,
        value: &Value<'js>,
        class: u32,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        if self.is_class_constructor(value, class) {
            return self.get_class_base(value, constructor, tag);
        }
        let kind = match class {
            CLASS_GENERATOR_FUNCTION => "GeneratorFunction",
            CLASS_ASYNC_FUNCTION => "AsyncFunction",
            CLASS_ASYNC_GENERATOR_FUNCTION => "AsyncGeneratorFunction",
            _ => "Function",
        };
        let mut base = format!("[{kind}");
        if constructor.is_none() {
            base.push_str(" (null prototype)");
        }
        match self.reflect.data_get_pre(value, PredefinedAtom::Name) {
            Some(v) if v.is_string() => {
                let name = lossy(&js_string_units(self.ctx, &v).unwrap_or_default());
                if name.is_empty() {
                    base.push_str(" (anonymous)");
                } else {
                    base.push_str(&format!(": {name}"));
                }
            }
            Some(v) if v.is_symbol() => {
                base.push_str(&format!(
                    ": {}",
                    lossy(&symbol_to_string_units(self.ctx, &v))
                ));
            }
            Some(v) if !v.is_object() => {
                base.push_str(&format!(": {}", primitive_to_string(self.ctx, &v)));
            }
            _ => base.push_str(": undefined"),
        }
        base.push(']');
        if let Some(c) = constructor {
            if c != kind {
                base.push_str(&format!(" {c}"));
            }
        }
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        base
    }

    /// Node recognises classes by their source text. Function sources are not reachable without
    /// calling a (replaceable) `Function.prototype.toString`, so this uses the property the spec
    /// gives every class constructor and no ordinary function: a non-writable `prototype`.
    pub(super) fn is_class_constructor(&self, value: &Value<'js>, class: u32) -> bool {
        if class != CLASS_BYTECODE_FUNCTION {
            return false;
        }
        let atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Prototype);
        matches!(
            self.reflect.own_desc(value, &atom),
            Ok(Some(PropDesc {
                value: PropValue::Data(_),
                writable: false,
                ..
            }))
        )
    }

    pub(super) fn get_class_base(
        &self,
        value: &Value<'js>,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        let name_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Name);
        let name = match self.reflect.own_desc(value, &name_atom) {
            Ok(Some(PropDesc {
                value: PropValue::Data(v),
                ..
            })) => {
                if v.is_string() {
                    lossy(&js_string_units(self.ctx, &v).unwrap_or_default())
                } else if v.is_object() || v.is_symbol() || v.is_undefined() || v.is_null() {
                    String::new()
                } else {
                    primitive_to_string(self.ctx, &v)
                }
            }
            _ => String::new(),
        };
        let name = if name.is_empty() || name == "false" || name == "0" {
            "(anonymous)".to_string()
        } else {
            name
        };
        let mut base = format!("class {name}");
        if let Some(c) = constructor {
            if c != "Function" {
                base.push_str(&format!(" [{c}]"));
            }
        }
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        if constructor.is_some() {
            if let Some(proto) = self.reflect.proto_of(value) {
                let super_name = self.function_name(&proto);
                if !super_name.is_empty() {
                    base.push_str(&format!(" extends {super_name}"));
                }
            }
        } else {
            base.push_str(" extends [null prototype]");
        }
        format!("[{base}]")
    }

    pub(super) fn get_boxed_base(
        &self,
        value: &Value<'js>,
        class: u32,
        keys: &mut Vec<PropKey<'js>>,
        constructor: Option<&str>,
        tag: &str,
    ) -> String {
        let type_name = match class {
            CLASS_NUMBER => "Number",
            CLASS_STRING => "String",
            CLASS_BOOLEAN => "Boolean",
            CLASS_BIG_INT => "BigInt",
            _ => "Symbol",
        };
        let primitive = self.reflect.call_native(class, "valueOf", false, value);
        if class == CLASS_STRING {
            // The index properties of a String object only repeat its value.
            let len = primitive
                .as_ref()
                .and_then(|p| js_string_units(self.ctx, p))
                .map_or(0, |u| u.len());
            let drop = len.min(keys.len());
            keys.drain(..drop);
        }
        let mut base = format!("[{type_name}");
        if constructor != Some(type_name) {
            match constructor {
                None => base.push_str(" (null prototype)"),
                Some(c) => base.push_str(&format!(" ({c})")),
            }
        }
        let shown = match primitive {
            Some(p) => self.format_primitive(&p),
            None => "undefined".into(),
        };
        base.push_str(&format!(": {shown}]"));
        if !tag.is_empty() && constructor != Some(tag) {
            base.push_str(&format!(" [{tag}]"));
        }
        base
    }

    pub(super) fn regexp_to_string(&self, value: &Value<'js>) -> String {
        let (source, flags) = self
            .reflect
            .regexp_parts(value)
            .unwrap_or_else(|| ("(?:)".into(), String::new()));
        format!("/{source}/{flags}")
    }

    pub(super) fn date_to_string(&self, value: &Value<'js>) -> String {
        let time = self
            .reflect
            .call_native(CLASS_DATE, "getTime", false, value)
            .and_then(|v| v.as_number())
            .unwrap_or(f64::NAN);
        if time.is_finite() {
            iso_date(time)
        } else {
            "Invalid Date".into()
        }
    }

    // -----------------------------------------------------------------------------------------
    // `%s` support

    /// Node's `hasBuiltInToString`, with `toString` and `Symbol.toPrimitive` looked up as data
    /// properties.
    pub(super) fn has_built_in_to_string(&mut self, value: &Value<'js>) -> bool {
        let value = if value.is_proxy() {
            match self.proxy_target(value) {
                Some(t) => t,
                None => return true,
            }
        } else {
            value.clone()
        };
        let Some(to_string) = OwnedAtom::from_str(self.ctx, "toString") else {
            return true;
        };
        let to_primitive = rquickjs::Symbol::to_primitive(self.ctx.clone());
        let Some(to_primitive) = OwnedAtom::from_value(self.ctx, to_primitive.as_value()) else {
            return true;
        };
        let is_fn = |v: Option<Value<'js>>| v.is_some_and(|v| v.is_function());
        let has_own = |this: &Self, o: &Value<'js>, atom: &OwnedAtom<'js>| {
            matches!(this.reflect.own_desc(o, atom), Ok(Some(_)))
        };
        let mut check_to_string = true;
        let mut check_to_primitive = true;
        if !is_fn(self.reflect.data_get(&value, &to_string)) {
            if !is_fn(self.reflect.data_get(&value, &to_primitive)) {
                return true;
            } else if has_own(self, &value, &to_primitive) {
                return false;
            }
            check_to_string = false;
        } else if has_own(self, &value, &to_string) {
            return false;
        } else if !is_fn(self.reflect.data_get(&value, &to_primitive)) {
            check_to_primitive = false;
        } else if has_own(self, &value, &to_primitive) {
            return false;
        }
        let mut pointer = value;
        for _ in 0..MAX_PROTO_HOPS {
            let Some(next) = self.reflect.proto_of(&pointer) else {
                return true;
            };
            pointer = next;
            if (check_to_string && has_own(self, &pointer, &to_string))
                || (check_to_primitive && has_own(self, &pointer, &to_primitive))
            {
                let ctor_atom = OwnedAtom::predefined(self.ctx, PredefinedAtom::Constructor);
                return match self.reflect.own_desc(&pointer, &ctor_atom) {
                    Ok(Some(PropDesc {
                        value: PropValue::Data(ctor),
                        ..
                    })) if ctor.is_function() => {
                        BUILT_IN_OBJECTS.contains(&self.function_name(&ctor).as_str())
                    }
                    _ => false,
                };
            }
        }
        true
    }
}
