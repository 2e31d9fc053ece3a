//! slurmctld actions: `show-current-config`, `drain`, `resume`. Each reads what it needs
//! (params, files), turns the request into a checked command or results (a pure step), runs
//! the command, and reports with `action-set`, or `action-fail` when the request is refused.

use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use juju_runtime::ModelBackend;
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
    let outcome = match name {
        "show-current-config" => show_current_config(host),
        "drain" | "resume" => {
            let params = backend.action_get()?;
            node_state_command(&params, name == "drain").and_then(|(cmd, message)| {
                host.run_ok(&cmd)?;
                Ok(BTreeMap::from([("message".to_string(), message)]))
            })
        }
        other => Err(ActionFailure::Unknown {
            charm: "slurmctld",
            name: other.to_owned(),
        }),
    };
    match outcome {
        Ok(results) => backend.action_set(&results)?,
        Err(failure) => {
            let message = juju_runtime::error_chain(&failure);
            tracing::warn!("action {name} failed: {message}");
            backend.action_fail(&message)?;
        }
    }
    Ok(())
}

fn show_current_config(host: &Host<'_>) -> Result<BTreeMap<String, String>, ActionFailure> {
    let mut out = BTreeMap::new();
    for (key, path) in [
        ("slurm-conf", SLURM_CONF),
        ("gres-conf", GRES_CONF),
        ("cgroup-conf", CGROUP_CONF),
    ] {
        let text = match host.read(path)? {
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
pub fn check_nodename(value: &str) -> Result<(), ActionFailure> {
    crate::slurm::types::Hostlist::try_from(value)
        .map(drop)
        .map_err(ActionFailure::NodeName)
}

/// The `scontrol update` command for `drain` (or `resume`) and the message to return: pure.
pub fn node_state_command(
    params: &Map<String, Value>,
    drain: bool,
) -> Result<(Cmd, String), ActionFailure> {
    let nodename = match params.get("nodename") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(ActionFailure::Missing {
                param: "nodename",
                hint: "nodename=juju-abc-[1-3]",
            });
        }
    };
    check_nodename(&nodename)?;
    let node_arg = format!("nodename={nodename}");
    let cmd = if drain {
        let reason = match params.get("reason") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            _ => {
                return Err(ActionFailure::Missing {
                    param: "reason",
                    hint: "reason=\"disk replacement\" (why the node is drained)",
                });
            }
        };
        if reason.chars().any(|c| c.is_control() || c == '"') {
            return Err(ActionFailure::Invalid {
                param: "reason",
                reason: "must be one line without double quotes".into(),
            });
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
    let verb = if drain { "drained" } else { "resumed" };
    Ok((cmd, format!("{nodename} {verb}")))
}
