//! `config-get`, `is-leader`, `juju-log`, `juju-reboot`.

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::flags::{FORMAT, Flag, OUTPUT, parse};
use crate::model::LogEntry;
use serde_json::Value as Json;

/// `config-get [<key>] [-a|--all]`
pub fn config_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::boolean(&["a", "all"]), FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let (key, rest) = match parsed.positionals.split_first() {
        Some((k, rest)) => (Some(k.clone()), rest),
        None => (None, &[][..]),
    };
    check_empty(rest)?;
    let all = parsed.flag("all");
    if let (Some(k), true) = (&key, all) {
        return Err(ToolError::Usage(format!(
            "cannot use argument --all together with key {k:?}"
        )));
    }
    let app = cx
        .model
        .apps
        .get(&cx.hook.app)
        .ok_or_else(|| ToolError::Runtime("application not found".into()))?;
    let config = app.effective_config();
    let value = match key {
        Some(k) => config.get(&k).cloned().unwrap_or(Json::Null),
        None => {
            let mut map = serde_json::Map::new();
            if all {
                for k in app.charm.options.keys() {
                    map.insert(k.clone(), Json::Null);
                }
            }
            for (k, v) in config {
                map.insert(k, v);
            }
            Json::Object(map)
        }
    };
    emit(cx, &parsed, &value)
}

/// `is-leader`
pub fn is_leader(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    check_empty(&parsed.positionals)?;
    emit(cx, &parsed, &Json::Bool(cx.hook.leader))
}

const LEVELS: &[&str] = &["TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];

/// `juju-log [--debug] [-l|--log-level LEVEL] <message...>`
pub fn juju_log(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[
            Flag::boolean(&["debug"]),
            Flag::value(&["l", "log-level"]),
            FORMAT,
        ],
        args,
    )?;
    if parsed.positionals.is_empty() {
        return Err(ToolError::Usage("no message specified".into()));
    }
    let mut level = "INFO".to_owned();
    if parsed.flag("debug") {
        level = "DEBUG".into();
    } else if let Some(l) = parsed.value("log-level") {
        let up = l.value.to_ascii_uppercase();
        if LEVELS.contains(&up.as_str()) {
            level = up;
        } else {
            cx.warnings.extend_from_slice(
                format!("WARNING Specified log level ({}) is not valid\n", l.value).as_bytes(),
            );
        }
    }
    let mut message = parsed.positionals.join(" ");
    if let Some(r) = &cx.hook.relation {
        message = format!("{}:{}: {message}", r.endpoint, r.id);
    }
    if cx.model.keep_logs {
        cx.model.logs.push(LogEntry {
            unit: cx.hook.unit.clone(),
            hook: cx.hook.hook_name.clone(),
            level,
            message,
        });
    }
    Ok(Vec::new())
}

/// `juju-reboot [--now]`
pub fn juju_reboot(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::boolean(&["now"])], args)?;
    check_empty(&parsed.positionals)?;
    if cx.hook.action.is_some() {
        return Err(ToolError::Runtime(
            "juju-reboot is not supported when running an action.".into(),
        ));
    }
    cx.hook.reboot = true;
    Ok(Vec::new())
}
