//! `relation-ids`, `relation-list`, `relation-get`, `relation-set`.

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty, parse_key_values, read_settings_file};
use crate::context::BagOwner;
use crate::flags::{FORMAT, Flag, OUTPUT, Parsed, parse};
use crate::model::Bag;
use serde_json::{Value as Json, json};

const RELATION: Flag = Flag::value(&["r", "relation"]);
const APP: Flag = Flag::boolean(&["app"]);
const FILE: Flag = Flag::value(&["file"]);

/// Resolve `-r` (or the hook's relation) to a relation id the unit takes part in.
pub(super) fn relation_id(cx: &ToolCx<'_>, parsed: &Parsed) -> Result<u32, ToolError> {
    let Some(given) = parsed.value("relation") else {
        return cx
            .hook
            .relation
            .as_ref()
            .map(|r| r.id)
            .ok_or_else(|| ToolError::Usage("no relation id specified".into()));
    };
    let not_found = || {
        ToolError::Usage(format!(
            "invalid value {:?} for option {}: relation not found",
            given.value, given.written
        ))
    };
    let (prefix, num) = match given.value.rsplit_once(':') {
        Some((p, n)) => (Some(p), n),
        None => (None, given.value.as_str()),
    };
    let id: u32 = num.parse().map_err(|_| not_found())?;
    let rel = cx.model.relations.get(&id).ok_or_else(not_found)?;
    if !rel.scope.contains_key(&cx.hook.unit) {
        return Err(not_found());
    }
    if let Some(p) = prefix {
        let ours = rel.side_of(&cx.hook.app).map(|s| s.endpoint.as_str());
        if ours != Some(p) {
            return Err(not_found());
        }
    }
    Ok(id)
}

/// `relation-ids [<endpoint>]`
pub fn relation_ids(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let (endpoint, rest) = match parsed.positionals.split_first() {
        Some((ep, rest)) => (ep.clone(), rest),
        None => match &cx.hook.relation {
            Some(r) => (r.endpoint.clone(), &[][..]),
            None => return Err(ToolError::Usage("no endpoint name specified".into())),
        },
    };
    check_empty(rest)?;
    let ids: Vec<Json> = cx
        .model
        .relations_on(&cx.hook.app, &endpoint)
        .into_iter()
        .filter(|id| Some(*id) != cx.hook.broken_relation)
        .filter_map(|id| cx.model.relations.get(&id))
        .filter(|r| {
            r.scope
                .get(&cx.hook.unit)
                .is_some_and(|p| p.entered && !p.broken)
        })
        .map(|r| Json::String(format!("{endpoint}:{}", r.id)))
        .collect();
    emit(cx, &parsed, &Json::Array(ids))
}

/// `relation-list [-r ID] [--app]`
pub fn relation_list(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[RELATION, APP, FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let id = relation_id(cx, &parsed)?;
    check_empty(&parsed.positionals)?;
    let rel = &cx.model.relations[&id];
    let value = if parsed.flag("app") {
        Json::String(rel.remote_app(&cx.hook.app).unwrap_or_default().to_owned())
    } else {
        let members = rel
            .scope
            .get(&cx.hook.unit)
            .map(|p| p.members.iter().map(|m| Json::String(m.clone())).collect())
            .unwrap_or_default();
        Json::Array(members)
    };
    emit(cx, &parsed, &value)
}

fn valid_app_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.ends_with('-')
}

fn valid_unit_name(s: &str) -> bool {
    s.split_once('/').is_some_and(|(app, n)| {
        valid_app_name(app) && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
    })
}

enum Target {
    Unit(String),
    App(String),
}

fn overlay(
    mut bag: Bag,
    pending: Option<&std::collections::BTreeMap<String, Option<String>>>,
) -> Bag {
    for (k, v) in pending.into_iter().flatten() {
        match v {
            Some(v) => {
                bag.insert(k.clone(), v.clone());
            }
            None => {
                bag.remove(k);
            }
        }
    }
    bag
}

/// `relation-get [-r ID] [--app] [<key>|-] [<unit-or-app>]`
pub fn relation_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[RELATION, APP, FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let id = relation_id(cx, &parsed)?;
    let pos = &parsed.positionals;
    if pos.len() > 2 {
        check_empty(&pos[2..])?;
    }
    let key = pos.first().filter(|k| k.as_str() != "-").cloned();
    let app_flag = parsed.flag("app");
    let target = match pos.get(1) {
        Some(name) if app_flag => {
            if valid_unit_name(name) {
                Target::App(name.split('/').next().unwrap_or_default().to_owned())
            } else if valid_app_name(name) {
                Target::App(name.clone())
            } else {
                return Err(ToolError::Usage(format!(
                    "invalid application name {name:?}"
                )));
            }
        }
        Some(name) => {
            if valid_unit_name(name) {
                Target::Unit(name.clone())
            } else if valid_app_name(name) {
                return Err(ToolError::Usage(format!(
                    "expected unit name, got application name {name:?}"
                )));
            } else {
                return Err(ToolError::Usage(format!("invalid unit name {name:?}")));
            }
        }
        None => match &cx.hook.relation {
            Some(r) if !r.remote_unit.is_empty() && !app_flag => {
                Target::Unit(r.remote_unit.clone())
            }
            Some(r) => Target::App(r.remote_app.clone()),
            None => {
                return Err(ToolError::Usage("no unit or application specified".into()));
            }
        },
    };
    let rel = &cx.model.relations[&id];
    let rel_key = rel.key_for(&cx.hook.app);
    let bag: Bag = match target {
        Target::Unit(u) if u == cx.hook.unit => overlay(
            rel.unit_bags.get(&u).cloned().unwrap_or_default(),
            cx.hook.pending_bags.get(&(id, BagOwner::Unit)),
        ),
        Target::Unit(u) => rel.unit_bags.get(&u).cloned().ok_or_else(|| {
            ToolError::Runtime(format!(
                "cannot read settings for unit {u:?} in relation {rel_key:?}: unit {u:?}: settings not found"
            ))
        })?,
        Target::App(a) if a == cx.hook.app => {
            if !rel.is_peer() && !cx.hook.leader {
                return Err(ToolError::Runtime("permission denied".into()));
            }
            overlay(
                rel.app_bags.get(&a).cloned().unwrap_or_default(),
                cx.hook.pending_bags.get(&(id, BagOwner::App)),
            )
        }
        Target::App(a) => rel.app_bags.get(&a).cloned().ok_or_else(|| {
            ToolError::Runtime(format!(
                "cannot read settings for application {a:?} in relation {rel_key:?}: settings not found"
            ))
        })?,
    };
    let value = match key {
        Some(k) => bag
            .get(&k)
            .map(|v| Json::String(v.clone()))
            .unwrap_or(Json::Null),
        None => json!(bag),
    };
    emit(cx, &parsed, &value)
}

/// `relation-set [-r ID] [--app] [--file PATH|-] [key=value ...]`
pub fn relation_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[RELATION, APP, FILE, FORMAT], args)?;
    if parsed.value("format").is_some() {
        cx.warnings
            .extend_from_slice(b"--format flag deprecated for command \"relation-set\"\n");
    }
    let id = relation_id(cx, &parsed)?;
    let from_args = parse_key_values(&parsed.positionals)?;
    let mut settings = match parsed.value("file") {
        Some(f) => read_settings_file(cx, &f.value)?,
        None => Default::default(),
    };
    settings.extend(from_args);
    let owner = if parsed.flag("app") {
        if !cx.hook.leader {
            return Err(ToolError::Runtime("cannot write relation settings".into()));
        }
        BagOwner::App
    } else {
        BagOwner::Unit
    };
    let pending = cx.hook.pending_bags.entry((id, owner)).or_default();
    for (k, v) in settings {
        pending.insert(k, (!v.is_empty()).then_some(v));
    }
    Ok(Vec::new())
}
