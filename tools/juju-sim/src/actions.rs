//! Action parameter validation against `actions.yaml` (a JSON-schema subset), with defaults
//! inserted, as the Juju controller does when an action is enqueued.

use serde_json::{Map, Value as Json};

fn type_ok(ty: &str, v: &Json) -> bool {
    match ty {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn check_value(path: &str, schema: &Json, v: &Json) -> Result<(), String> {
    if let Some(ty) = schema.get("type") {
        let ok = match ty {
            Json::String(t) => type_ok(t, v),
            Json::Array(ts) => ts.iter().filter_map(Json::as_str).any(|t| type_ok(t, v)),
            _ => true,
        };
        if !ok {
            return Err(format!("{path}: invalid type, expected {ty}, given {v}"));
        }
    }
    if let Some(Json::Array(options)) = schema.get("enum")
        && !options.contains(v)
    {
        return Err(format!(
            "{path}: value {v} is not one of the allowed values"
        ));
    }
    if let Some(min) = schema.get("minimum").and_then(Json::as_f64)
        && v.as_f64().is_some_and(|x| x < min)
    {
        return Err(format!("{path}: must be greater than or equal to {min}"));
    }
    if let Some(max) = schema.get("maximum").and_then(Json::as_f64)
        && v.as_f64().is_some_and(|x| x > max)
    {
        return Err(format!("{path}: must be less than or equal to {max}"));
    }
    if let (Some(items), Json::Array(values)) = (schema.get("items"), v) {
        for (i, item) in values.iter().enumerate() {
            check_value(&format!("{path}.{i}"), items, item)?;
        }
    }
    if let Json::Object(map) = v
        && schema.get("properties").is_some()
    {
        check_object(path, schema, map, false)?;
    }
    Ok(())
}

fn check_object(
    path: &str,
    schema: &Json,
    given: &Map<String, Json>,
    default_closed: bool,
) -> Result<(), String> {
    let props = schema.get("properties").and_then(Json::as_object);
    let additional = schema
        .get("additionalProperties")
        .and_then(Json::as_bool)
        .unwrap_or(!default_closed);
    for (k, v) in given {
        match props.and_then(|p| p.get(k)) {
            Some(s) => check_value(&format!("{path}.{k}"), s, v)?,
            None if !additional => {
                return Err(format!("{path}: additional property {k:?} is not allowed"));
            }
            None => {}
        }
    }
    for req in schema
        .get("required")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
    {
        if !given.contains_key(req) {
            return Err(format!("{path}: {req:?} property is missing and required"));
        }
    }
    Ok(())
}

fn insert_defaults(schema: &Json, given: &mut Map<String, Json>) {
    let Some(props) = schema.get("properties").and_then(Json::as_object) else {
        return;
    };
    for (k, s) in props {
        match given.get_mut(k) {
            None => {
                if let Some(d) = s.get("default") {
                    given.insert(k.clone(), d.clone());
                }
            }
            Some(Json::Object(inner)) => insert_defaults(s, inner),
            Some(_) => {}
        }
    }
}

/// Validate `params` for action `spec` (the actions.yaml entry) and return them with defaults
/// inserted. Errors read `validation failed: …` like Juju's.
pub fn validate_params(spec: &Json, params: &Map<String, Json>) -> Result<Json, String> {
    let params_schema = spec
        .get("params")
        .cloned()
        .unwrap_or(Json::Object(Map::new()));
    let mut schema = serde_json::json!({ "properties": params_schema });
    if let Some(r) = spec.get("required") {
        schema["required"] = r.clone();
    }
    // Juju's default for actions is additionalProperties: false.
    schema["additionalProperties"] = spec
        .get("additionalProperties")
        .cloned()
        .unwrap_or(Json::Bool(false));
    check_object("(root)", &schema, params, true).map_err(|e| format!("validation failed: {e}"))?;
    let mut out = params.clone();
    insert_defaults(&schema, &mut out);
    Ok(Json::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Json {
        json!({"params": {"n": {"type": "integer", "default": 3}, "s": {"type": "string"}},
               "required": ["s"]})
    }

    fn m(v: Json) -> Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn defaults_inserted() {
        let out = validate_params(&spec(), &m(json!({"s": "x"}))).unwrap();
        assert_eq!(out, json!({"s": "x", "n": 3}));
    }

    #[test]
    fn rejects_unknown_wrong_type_and_missing() {
        assert!(
            validate_params(&spec(), &m(json!({"s": "x", "zz": 1})))
                .unwrap_err()
                .contains("additional property \"zz\"")
        );
        assert!(
            validate_params(&spec(), &m(json!({"s": 1})))
                .unwrap_err()
                .contains("invalid type")
        );
        assert!(
            validate_params(&spec(), &m(json!({})))
                .unwrap_err()
                .contains("\"s\" property is missing")
        );
    }
}
