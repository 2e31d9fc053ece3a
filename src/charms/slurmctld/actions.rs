//! slurmctld actions: `show-current-config`, `drain`, `resume`, `rotate-key`. Each is shaped like
//! a hook: it reads what it needs (params, config, the key secret's info, files), a pure step
//! turns the request into a [`Decision`] (the change to make and the results, or why the request
//! is refused), [`apply`] makes the change, and the outcome is reported with `action-set`, or
//! `action-fail` when the request is refused or its command fails.

use super::action_change::{ActionChange, Decision};
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF, rotate_key};
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use juju_runtime::SecretBackend;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Largest file content returned inline by `show-current-config` (one argv string is limited
/// to 128 KiB on Linux).
pub const MAX_INLINE: usize = 100 * 1024;

/// Runs the action `name`; problems with the request are reported with `action-fail`.
pub fn run_action<B: SecretBackend>(
    name: &str,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    let decision = match name {
        "show-current-config" => show_current_config(host).map(|r| (ActionChange::Nothing, r)),
        "drain" | "resume" => {
            let params = backend.action_get()?;
            node_state_command(&params, name == "drain").map(|(cmd, message)| {
                let results = BTreeMap::from([("message".to_string(), message)]);
                (ActionChange::Command(cmd), results)
            })
        }
        "rotate-key" => rotate_key::read(backend, host)?,
        other => Err(ActionFailure::Unknown {
            charm: "slurmctld",
            name: other.to_owned(),
        }),
    };
    match apply(backend, host, decision)? {
        Ok(results) => backend.action_set(&results)?,
        Err(failure) => {
            let message = juju_runtime::error_chain(&failure);
            tracing::warn!("action {name} failed: {message}");
            backend.action_fail(&message)?;
        }
    }
    Ok(())
}

/// Makes the decided change and returns what to report: the results, or why the action failed
/// (a refused request, or a command that failed). A hook-tool failure fails the hook.
pub fn apply<B: SecretBackend>(
    backend: &B,
    host: &Host<'_>,
    decision: Decision,
) -> Result<Result<BTreeMap<String, String>, ActionFailure>, CharmError> {
    let (change, results) = match decision {
        Ok(decided) => decided,
        Err(refused) => return Ok(Err(refused)),
    };
    match &change {
        ActionChange::Nothing => {}
        ActionChange::Command(cmd) => {
            if let Err(e) = host.run_ok(cmd) {
                return Ok(Err(e.into()));
            }
        }
        ActionChange::NewKeyRevision { id, content } => rotate_key::apply(backend, id, content)?,
    }
    Ok(Ok(results))
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
