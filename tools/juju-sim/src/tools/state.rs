//! `state-get`, `state-set`, `state-delete` (writes deferred to commit).

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty, parse_key_values, read_settings_file};
use crate::flags::{FORMAT, Flag, OUTPUT, parse};
use crate::model::Bag;
use serde_json::{Value as Json, json};

const MAX_KEY: usize = 256;
const MAX_VALUE: usize = 65536;

fn current(cx: &ToolCx<'_>) -> Bag {
    let mut bag = cx
        .model
        .units
        .get(&cx.hook.unit)
        .map(|u| u.state.clone())
        .unwrap_or_default();
    for (k, v) in &cx.hook.pending_state {
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

/// `state-get [<key>|-] [--strict]`
pub fn state_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::boolean(&["strict"]), FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let (key, rest) = match parsed.positionals.split_first() {
        Some((k, rest)) => (Some(k.clone()).filter(|k| k != "-"), rest),
        None => (None, &[][..]),
    };
    check_empty(rest)?;
    let value = match key {
        None => {
            // Optimisation: no clone of the whole store for a single key.
            json!(current(cx))
        }
        Some(k) => {
            let pending = cx.hook.pending_state.get(&k);
            let v = match pending {
                Some(p) => p.clone(),
                None => cx
                    .model
                    .units
                    .get(&cx.hook.unit)
                    .and_then(|u| u.state.get(&k).cloned()),
            };
            match v {
                Some(v) => Json::String(v),
                None if parsed.flag("strict") => {
                    return Err(ToolError::Runtime(format!("{k:?} not found")));
                }
                None => Json::String(String::new()),
            }
        }
    };
    emit(cx, &parsed, &value)
}

/// `state-set [--file PATH|-] key=value ...`
pub fn state_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::value(&["file"])], args)?;
    let from_args = parse_key_values(&parsed.positionals)?;
    let mut settings = match parsed.value("file") {
        Some(f) => read_settings_file(cx, &f.value)?,
        None => Default::default(),
    };
    settings.extend(from_args);
    for (k, v) in &settings {
        if k.len() > MAX_KEY {
            return Err(ToolError::Runtime(format!(
                "max allowed key length ({MAX_KEY}) exceeded"
            )));
        }
        if v.len() > MAX_VALUE {
            return Err(ToolError::Runtime(format!(
                "max allowed value length ({MAX_VALUE}) exceeded"
            )));
        }
    }
    for (k, v) in settings {
        cx.hook.pending_state.insert(k, Some(v));
    }
    Ok(Vec::new())
}

/// `state-delete <key>`
pub fn state_delete(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[], args)?;
    let Some((key, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("no key specified".into()));
    };
    check_empty(rest)?;
    cx.hook.pending_state.insert(key.clone(), None);
    Ok(Vec::new())
}
