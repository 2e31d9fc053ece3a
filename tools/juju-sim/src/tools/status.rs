//! `status-set`, `status-get`, `application-version-set` (all immediate, never rolled back).

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::flags::{FORMAT, Flag, OUTPUT, parse};
use crate::model::Status;
use serde_json::{Value as Json, json};

const APPLICATION: Flag = Flag::boolean(&["application"]);
const SETTABLE: [&str; 4] = ["maintenance", "blocked", "waiting", "active"];

/// `status-set [--application] <status> [message]`
pub fn status_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[APPLICATION], args)?;
    let Some((status, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage(
            "invalid args, require <status> [message]".into(),
        ));
    };
    if !SETTABLE.contains(&status.as_str()) {
        return Err(ToolError::Usage(format!(
            "invalid status {status:?}, expected one of [{}]",
            SETTABLE.join(" ")
        )));
    }
    let (message, rest) = match rest.split_first() {
        Some((m, rest)) => (m.clone(), rest),
        None => (String::new(), &[][..]),
    };
    check_empty(rest)?;
    if parsed.flag("application") {
        if !cx.hook.leader {
            return Err(ToolError::Runtime("this unit is not the leader".into()));
        }
        let since = cx.model.tick();
        if let Some(app) = cx.model.apps.get_mut(&cx.hook.app) {
            let s = Status::new(status, &message, since);
            app.status = Some(s.clone());
            app.status_history.push(s);
        }
    } else {
        cx.model.set_unit_status(&cx.hook.unit, status, &message);
        if let Some(u) = cx.model.units.get_mut(&cx.hook.unit) {
            u.status_set_by_charm = true;
        }
    }
    Ok(Vec::new())
}

fn status_json(s: &Status, include_data: bool) -> Json {
    if include_data {
        json!({"message": s.message, "status": s.status, "status-data": {}})
    } else {
        json!({"status": s.status})
    }
}

/// `status-get [--include-data] [--application]`
pub fn status_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[
            APPLICATION,
            Flag::boolean(&["include-data"]),
            FORMAT,
            OUTPUT,
        ],
        args,
    )?;
    check_format(&parsed)?;
    check_empty(&parsed.positionals)?;
    let include = parsed.flag("include-data");
    let value = if parsed.flag("application") {
        if !cx.hook.leader {
            return Err(ToolError::Runtime(
                "finding application status: this unit is not the leader".into(),
            ));
        }
        let app = cx
            .model
            .apps
            .get(&cx.hook.app)
            .ok_or_else(|| ToolError::Runtime("application not found".into()))?;
        let app_status = app
            .status
            .clone()
            .unwrap_or_else(|| Status::new("unknown", "", 0));
        let mut units = serde_json::Map::new();
        for u in &app.units {
            if let Some(unit) = cx.model.units.get(u) {
                units.insert(u.clone(), status_json(&unit.status, true));
            }
        }
        let mut inner = status_json(&app_status, true);
        if let Json::Object(m) = &mut inner {
            m.insert("units".into(), Json::Object(units));
        }
        json!({ "application-status": inner })
    } else {
        let unit = cx
            .model
            .units
            .get(&cx.hook.unit)
            .ok_or_else(|| ToolError::Runtime("unit not found".into()))?;
        status_json(&unit.status, include)
    };
    emit(cx, &parsed, &value)
}

/// `application-version-set <version>`
pub fn application_version_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[], args)?;
    let Some((version, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("no version specified".into()));
    };
    check_empty(rest)?;
    if let Some(u) = cx.model.units.get_mut(&cx.hook.unit) {
        u.workload_version = version.clone();
    }
    Ok(Vec::new())
}
