//! `--format smart|yaml|json` and `-o/--output`, as Juju's `cmd.Output`.

use super::{ToolCx, ToolError, ToolResult};
use crate::flags::Parsed;
use serde_json::Value as Json;

/// Render `value` in `format`.
pub fn render(format: &str, value: &Json) -> Result<Vec<u8>, String> {
    let mut out = match format {
        "json" => serde_json::to_vec(value).map_err(|e| e.to_string())?,
        "yaml" => {
            if value.is_null() {
                Vec::new()
            } else {
                serde_yaml::to_string(value)
                    .map_err(|e| e.to_string())?
                    .into_bytes()
            }
        }
        "smart" => match value {
            Json::Null => Vec::new(),
            Json::String(s) => s.clone().into_bytes(),
            Json::Bool(true) => b"True".to_vec(),
            Json::Bool(false) => b"False".to_vec(),
            Json::Array(items) if items.iter().all(Json::is_string) => items
                .iter()
                .filter_map(Json::as_str)
                .collect::<Vec<_>>()
                .join("\n")
                .into_bytes(),
            other => serde_yaml::to_string(other)
                .map_err(|e| e.to_string())?
                .into_bytes(),
        },
        other => return Err(format!("unknown format {other:?}")),
    };
    if !out.is_empty() && out.last() != Some(&b'\n') {
        out.push(b'\n');
    }
    Ok(out)
}

/// Validate `--format` early (a usage error, exit 2).
pub fn check_format(parsed: &Parsed) -> Result<String, ToolError> {
    match parsed.value("format") {
        None => Ok("smart".into()),
        Some(g) if matches!(g.value.as_str(), "smart" | "yaml" | "json") => Ok(g.value.clone()),
        Some(g) => Err(ToolError::Usage(format!(
            "invalid value {:?} for option {}: unknown format {:?}",
            g.value, g.written, g.value
        ))),
    }
}

/// Print `value` per the parsed `--format`/`--output` options.
pub fn emit(cx: &ToolCx<'_>, parsed: &Parsed, value: &Json) -> ToolResult {
    let format = check_format(parsed)?;
    let bytes = render(&format, value).map_err(ToolError::Runtime)?;
    if let Some(out) = parsed.value("output") {
        std::fs::write(cx.path(&out.value), &bytes)
            .map_err(|e| ToolError::Runtime(format!("cannot write {}: {e}", out.value)))?;
        return Ok(Vec::new());
    }
    Ok(bytes)
}

/// Print a typed value for tools that offer only `yaml|json` (default `default`), keeping the
/// field order of `T` as Go's struct marshalling does.
pub fn emit_typed<T: serde::Serialize>(
    cx: &ToolCx<'_>,
    parsed: &Parsed,
    value: &T,
    default: &str,
) -> ToolResult {
    let format = check_yaml_json(parsed, default)?;
    let mut bytes = match format.as_str() {
        "json" => serde_json::to_vec(value).map_err(|e| ToolError::Runtime(e.to_string()))?,
        _ => serde_yaml::to_string(value)
            .map_err(|e| ToolError::Runtime(e.to_string()))?
            .into_bytes(),
    };
    if bytes.last() != Some(&b'\n') {
        bytes.push(b'\n');
    }
    if let Some(out) = parsed.value("output") {
        std::fs::write(cx.path(&out.value), &bytes)
            .map_err(|e| ToolError::Runtime(format!("cannot write {}: {e}", out.value)))?;
        return Ok(Vec::new());
    }
    Ok(bytes)
}

/// Validate `--format` for tools that offer only `yaml|json` (a usage error, exit 2).
pub fn check_yaml_json(parsed: &Parsed, default: &str) -> Result<String, ToolError> {
    match parsed.value("format") {
        None => Ok(default.to_owned()),
        Some(g) if matches!(g.value.as_str(), "yaml" | "json") => Ok(g.value.clone()),
        Some(g) => Err(ToolError::Usage(format!(
            "invalid value {:?} for option {}: unknown format {:?}",
            g.value, g.written, g.value
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_compact_with_newline() {
        assert_eq!(
            render("json", &json!({"a": "b"})).unwrap(),
            b"{\"a\":\"b\"}\n"
        );
        assert_eq!(render("json", &Json::Null).unwrap(), b"null\n");
    }

    #[test]
    fn smart_forms() {
        assert_eq!(render("smart", &json!("x")).unwrap(), b"x\n");
        assert_eq!(render("smart", &json!("")).unwrap(), b"");
        assert_eq!(render("smart", &Json::Null).unwrap(), b"");
        assert_eq!(render("smart", &json!(true)).unwrap(), b"True\n");
        assert_eq!(render("smart", &json!(["a", "b"])).unwrap(), b"a\nb\n");
        assert_eq!(render("smart", &json!({"k": "v"})).unwrap(), b"k: v\n");
    }

    #[test]
    fn yaml_nil_prints_nothing() {
        assert_eq!(render("yaml", &Json::Null).unwrap(), b"");
    }
}
