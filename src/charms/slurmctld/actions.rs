//! slurmctld actions: `show-current-config`, `drain`, `resume`.

use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::error::{CharmError, JujuResult};
use crate::charms::host::{Cmd, Host};
use crate::juju::backend::ModelBackend;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Largest file content returned inline by `show-current-config` (one argv string is limited
/// to 128 KiB on Linux).
pub const MAX_INLINE: usize = 100 * 1024;

/// Runs the action `name`; problems with the request are reported with `action-fail`.
pub fn run_action<B: ModelBackend>(
    name: &str,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    let params = match name {
        "drain" | "resume" => backend.action_get().juju()?,
        _ => Map::new(),
    };
    let outcome = match name {
        "show-current-config" => show_current_config(host),
        "drain" => node_state(host, &params, true),
        "resume" => node_state(host, &params, false),
        other => Err(format!("the slurmctld charm has no action {other:?}")),
    };
    match outcome {
        Ok(results) => backend.action_set(&results).juju(),
        Err(reason) => {
            tracing::warn!("action {name} failed: {reason}");
            backend.action_fail(&reason).juju()
        }
    }
}

fn show_current_config(host: &Host<'_>) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (key, path) in [
        ("slurm-conf", SLURM_CONF),
        ("gres-conf", GRES_CONF),
        ("cgroup-conf", CGROUP_CONF),
    ] {
        let text = match host.read(path).map_err(|e| e.to_string())? {
            None => format!("({path} has not been written yet)"),
            Some(b) if b.len() > MAX_INLINE => format!(
                "({path} is {} bytes, too large to show here; read it on the unit)",
                b.len()
            ),
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
        };
        out.insert(key.to_string(), text);
    }
    Ok(out)
}

/// A `nodename` parameter: a hostlist of valid node names.
pub fn check_nodename(value: &str) -> Result<(), String> {
    crate::slurm::types::Hostlist::try_from(value)
        .map(drop)
        .map_err(|e| format!("nodename: {e}"))
}

fn node_state(
    host: &Host<'_>,
    params: &Map<String, Value>,
    drain: bool,
) -> Result<BTreeMap<String, String>, String> {
    let nodename = match params.get("nodename") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err("nodename is required (e.g. nodename=juju-abc-[1-3])".into()),
    };
    check_nodename(&nodename)?;
    let node_arg = format!("nodename={nodename}");
    let cmd = if drain {
        let reason = match params.get("reason") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            _ => return Err("reason is required to drain a node".into()),
        };
        if reason.chars().any(|c| c.is_control() || c == '"') {
            return Err("reason must be one line without double quotes".into());
        }
        Cmd::new(
            "scontrol",
            [
                "update".to_string(),
                node_arg,
                "state=drain".into(),
                format!("reason={reason}"),
            ],
        )
    } else {
        Cmd::new(
            "scontrol",
            ["update".to_string(), node_arg, "state=resume".into()],
        )
    };
    host.run_ok(&cmd).map_err(|e| e.to_string())?;
    let verb = if drain { "drained" } else { "resumed" };
    Ok(BTreeMap::from([(
        "message".to_string(),
        format!("{nodename} {verb}"),
    )]))
}
