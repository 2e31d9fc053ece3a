//! slurmctld actions: `show-current-config`, `drain`, `resume`, `rotate-key`. Each is shaped like
//! a hook: it reads what it needs (params, config, the key secret's info, files), a pure step
//! turns the request into a [`Decision`] (the change to make and the results, or why the request
//! is refused), [`apply`] makes the change, and the outcome is reported with `action-set`, or
//! `action-fail` when the request is refused or its command fails.
//!
//! # The decision
//!
//! What a slurmctld action decided ([`Decision`], [`ActionChange`]): the change to make and the
//! results to report, or why the request is refused.
//!
//! # `rotate-key`
//!
//! A new random key as a new revision of the key secret. Juju commits it when the action exits 0
//! and sends `secret-changed` to every unit that tracks the secret: each slurmd switches to the
//! new key (and restarts munge and slurmd), the leader too (it tracks the secret as its owner),
//! and once no unit tracks the old revision the leader removes it (`secret-remove`). The key
//! itself is never in the results.
//!
//! Read → decide → apply, like a hook: [`rotate_key_read`] asks Juju one thing at a time and
//! stops at the first refusal (not the leader, auth/slurm, no key secret), so a refused request
//! makes no further hook-tool call; [`new_revision`] is the pure decision; [`rotate_key_apply`]
//! makes the change.

use super::observe::MUNGE_KEY_LEN;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use crate::charms::util::config_str;
use crate::interface::{AuthKind, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL};
use juju_runtime::{SecretBackend, SecretContent, SecretInfo, SecretOptions, SecretRead};
use juju_runtime::{SecretId, SecretRef};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

// ---- The actions ----

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
        "rotate-key" => rotate_key_read(backend, host)?,
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
        ActionChange::NewKeyRevision { id, content } => rotate_key_apply(backend, id, content)?,
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

// ---- The decision ----

/// An action's decision: the change to make and the results to report once it is made, or why
/// the request is refused (then nothing changes).
pub type Decision = Result<(ActionChange, BTreeMap<String, String>), ActionFailure>;

/// What an action changes once decided.
#[derive(Clone, PartialEq, Eq)]
pub enum ActionChange {
    /// Nothing: the action only reads (`show-current-config`).
    Nothing,
    /// A command whose failure is the action's (`action-fail`), not the hook's: `scontrol
    /// update` for `drain` and `resume`.
    Command(Cmd),
    /// `rotate-key`: a new revision of the key secret with this content
    /// ([`rotate_key_apply`]).
    NewKeyRevision {
        /// The key secret.
        id: SecretId,
        /// The new revision's content (the new key).
        content: SecretContent,
    },
}

impl std::fmt::Debug for ActionChange {
    /// Never the key: decisions are printed in test failures.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionChange::Nothing => f.write_str("Nothing"),
            ActionChange::Command(cmd) => f.debug_tuple("Command").field(cmd).finish(),
            ActionChange::NewKeyRevision { id, .. } => {
                write!(f, "NewKeyRevision {{ id: {id:?}, content: <redacted> }}")
            }
        }
    }
}

// ---- `rotate-key` ----

/// Reads what `rotate-key` needs (reads only) and decides: only the leader rotates, never under
/// auth/slurm (slurmd would lose the key it authenticates with), only once the key secret
/// exists.
pub fn rotate_key_read<B: SecretBackend>(
    backend: &B,
    host: &Host<'_>,
) -> Result<Decision, CharmError> {
    if !backend.is_leader()? {
        return Ok(Err(ActionFailure::NotLeader {
            charm: "slurmctld",
            action: "rotate-key",
        }));
    }
    let auth = config_str(&backend.config_get()?, "auth-type");
    if AuthKind::parse(&auth) == Ok(AuthKind::Slurm) {
        return Ok(Err(ActionFailure::RotateUnderAuthSlurm));
    }
    let label = SecretRef::Label(MUNGE_KEY_SECRET_LABEL.to_owned());
    let Some(info) = backend.secret_info_get(&label)? else {
        return Ok(Err(ActionFailure::NoKeySecret));
    };
    let key = host.random_bytes(MUNGE_KEY_LEN)?;
    Ok(Ok(new_revision(&info, key)))
}

/// The rotation (pure): a new revision of `info`'s secret holding `key`, reported by the secret
/// and the revision it becomes (never the key).
pub fn new_revision(info: &SecretInfo, key: Vec<u8>) -> (ActionChange, BTreeMap<String, String>) {
    let results = BTreeMap::from([
        ("secret".to_string(), info.id.uri()),
        ("revision".to_string(), (info.revision + 1).to_string()),
    ]);
    let content = SecretContent::from([(MUNGE_KEY_SECRET_FIELD.to_owned(), key)]);
    let change = ActionChange::NewKeyRevision {
        id: info.id.clone(),
        content,
    };
    (change, results)
}

/// Publishes the new revision: the current revision is tracked first, so the leader is told of
/// the new one as well.
pub fn rotate_key_apply<B: SecretBackend>(
    backend: &B,
    id: &SecretId,
    content: &SecretContent,
) -> Result<(), CharmError> {
    backend.secret_get(
        &SecretRef::Id(id.clone()),
        &[MUNGE_KEY_SECRET_FIELD],
        SecretRead::Refresh,
    )?;
    backend.secret_set(id, content, &SecretOptions::default())?;
    tracing::info!("published a new revision of the cluster key ({id})");
    Ok(())
}
