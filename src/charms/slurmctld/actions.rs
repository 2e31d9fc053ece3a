//! slurmctld actions: `show-current-config`, `drain`, `resume`, `rotate-key`. Each reads what it needs
//! (params, files), turns the request into a checked command or results (a pure step), runs
//! the command, and reports with `action-set`, or `action-fail` when the request is refused.

use super::plan::MUNGE_KEY_LEN;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use crate::interface::{AuthKind, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL};
use juju_runtime::{SecretBackend, SecretContent, SecretOptions, SecretRead, SecretRef};
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
    let outcome = match name {
        "show-current-config" => show_current_config(host),
        "drain" | "resume" => {
            let params = backend.action_get()?;
            node_state_command(&params, name == "drain").and_then(|(cmd, message)| {
                host.run_ok(&cmd)?;
                Ok(BTreeMap::from([("message".to_string(), message)]))
            })
        }
        "rotate-key" => rotate_key(backend, host)?,
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

/// `rotate-key`: a new random key as a new revision of the key secret. Juju commits it when the
/// action exits 0 and sends `secret-changed` to every unit that tracks the secret: each slurmd
/// switches to the new key (and restarts munge and slurmd), the leader too (it tracks the secret
/// as its owner), and once no unit tracks the old revision the leader removes it
/// (`secret-remove`). The key itself is never in the results.
fn rotate_key<B: SecretBackend>(
    backend: &B,
    host: &Host<'_>,
) -> Result<Result<BTreeMap<String, String>, ActionFailure>, CharmError> {
    if !backend.is_leader()? {
        return Ok(Err(ActionFailure::NotLeader {
            charm: "slurmctld",
            action: "rotate-key",
        }));
    }
    let auth = crate::charms::util::config_str(&backend.config_get()?, "auth-type");
    if AuthKind::parse(&auth) == Ok(AuthKind::Slurm) {
        return Ok(Err(ActionFailure::RotateUnderAuthSlurm));
    }
    let label = SecretRef::Label(MUNGE_KEY_SECRET_LABEL.to_owned());
    let Some(info) = backend.secret_info_get(&label)? else {
        return Ok(Err(ActionFailure::NoKeySecret));
    };
    // Track the current revision first, so the leader is told of the new one as well.
    backend.secret_get(
        &SecretRef::Id(info.id.clone()),
        &[MUNGE_KEY_SECRET_FIELD],
        SecretRead::Refresh,
    )?;
    let key = host.random_bytes(MUNGE_KEY_LEN)?;
    let content = SecretContent::from([(MUNGE_KEY_SECRET_FIELD.to_owned(), key)]);
    backend.secret_set(&info.id, &content, &SecretOptions::default())?;
    tracing::info!("published a new revision of the cluster key ({})", info.id);
    Ok(Ok(BTreeMap::from([
        ("secret".to_string(), info.id.uri()),
        ("revision".to_string(), (info.revision + 1).to_string()),
    ])))
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
