//! `action-get`, `action-set`, `action-fail`, `action-log`.

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::context::ActionState;
use crate::flags::{FORMAT, OUTPUT, parse};
use serde_json::Value as Json;

const RESERVED: [&str; 4] = ["stdout", "stderr", "stdout-encoding", "stderr-encoding"];

/// Juju's action key rule for one dotted segment: `^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`.
pub fn valid_key_segment(s: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.starts_with(ok_char)
        && s.ends_with(ok_char)
        && s.chars().all(|c| ok_char(c) || c == '-')
}

fn action<'b>(cx: &'b mut ToolCx<'_>) -> Result<&'b mut ActionState, ToolError> {
    cx.hook
        .action
        .as_mut()
        .ok_or_else(|| ToolError::Runtime("not running an action".into()))
}

/// `action-get [<key>[.<key>...]]`
pub fn action_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let (key, rest) = match parsed.positionals.split_first() {
        Some((k, rest)) => (Some(k.clone()), rest),
        None => (None, &[][..]),
    };
    check_empty(rest)?;
    let params = action(cx)?.params.clone();
    let value = match key {
        None => params,
        Some(path) => {
            let mut cur = Some(&params);
            for seg in path.split('.') {
                cur = cur.and_then(|v| v.get(seg));
            }
            cur.cloned().unwrap_or(Json::Null)
        }
    };
    emit(cx, &parsed, &value)
}

/// Insert `value` at the dotted `path`, overwriting scalars with maps as needed.
pub fn insert_path(map: &mut serde_json::Map<String, Json>, path: &[&str], value: String) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = map;
    for seg in parents {
        let entry = cur
            .entry((*seg).to_owned())
            .or_insert_with(|| Json::Object(Default::default()));
        if !entry.is_object() {
            *entry = Json::Object(Default::default());
        }
        let Json::Object(next) = entry else { return };
        cur = next;
    }
    cur.insert((*last).to_owned(), Json::String(value));
}

/// `action-set key=value ...`
pub fn action_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[], args)?;
    let mut pairs = Vec::new();
    for arg in &parsed.positionals {
        let Some((key, value)) = arg.split_once('=') else {
            return Err(ToolError::Usage(format!(
                "argument {arg:?} must be of the form key...=value"
            )));
        };
        let segs: Vec<&str> = key.split('.').collect();
        for seg in &segs {
            if !valid_key_segment(seg) {
                return Err(ToolError::Usage(format!(
                    "key {seg:?} must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods"
                )));
            }
            if RESERVED.contains(seg) {
                return Err(ToolError::Usage(format!(
                    "cannot set reserved action key {seg:?}"
                )));
            }
        }
        pairs.push((segs, value.to_owned()));
    }
    let state = action(cx)?;
    for (segs, value) in pairs {
        insert_path(&mut state.results, &segs, value);
    }
    Ok(Vec::new())
}

/// `action-fail ["message"]`
pub fn action_fail(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[], args)?;
    let (message, rest) = match parsed.positionals.split_first() {
        Some((m, rest)) => (m.clone(), rest),
        None => (
            "action failed without reason given, check action for errors".to_owned(),
            &[][..],
        ),
    };
    check_empty(rest)?;
    action(cx)?.failed = Some(message);
    Ok(Vec::new())
}

/// `action-log <message...>`
pub fn action_log(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[], args)?;
    if parsed.positionals.is_empty() {
        return Err(ToolError::Usage("no message specified".into()));
    }
    let msg = parsed.positionals.join(" ");
    action(cx)?.logs.push(msg);
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_rule() {
        assert!(valid_key_segment("a"));
        assert!(valid_key_segment("gpu-0"));
        assert!(!valid_key_segment("-a"));
        assert!(!valid_key_segment("a-"));
        assert!(!valid_key_segment("A"));
        assert!(!valid_key_segment(""));
        assert!(!valid_key_segment("a_b"));
    }

    #[test]
    fn nested_insert_overwrites_scalars() {
        let mut m = serde_json::Map::new();
        insert_path(&mut m, &["a"], "1".into());
        insert_path(&mut m, &["a", "b"], "2".into());
        insert_path(&mut m, &["a", "c"], "3".into());
        assert_eq!(
            Json::Object(m),
            serde_json::json!({"a": {"b": "2", "c": "3"}})
        );
    }
}
