//! `rotate-key`: a new random key as a new revision of the key secret. Juju commits it when the
//! action exits 0 and sends `secret-changed` to every unit that tracks the secret: each slurmd
//! switches to the new key (and restarts munge and slurmd), the leader too (it tracks the secret
//! as its owner), and once no unit tracks the old revision the leader removes it
//! (`secret-remove`). The key itself is never in the results.
//!
//! Read → decide → apply, like a hook: [`read`] asks Juju one thing at a time and stops at the
//! first refusal (not the leader, auth/slurm, no key secret), so a refused request makes no
//! further hook-tool call; [`new_revision`] is the pure decision; [`apply`] makes the change.

use super::action_change::{ActionChange, Decision};
use super::observe::MUNGE_KEY_LEN;
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::charms::util::config_str;
use crate::interface::{AuthKind, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL};
use juju_runtime::{SecretBackend, SecretContent, SecretInfo, SecretOptions, SecretRead};
use juju_runtime::{SecretId, SecretRef};
use std::collections::BTreeMap;

/// Reads what `rotate-key` needs (reads only) and decides: only the leader rotates, never under
/// auth/slurm (slurmd would lose the key it authenticates with), only once the key secret
/// exists.
pub fn read<B: SecretBackend>(backend: &B, host: &Host<'_>) -> Result<Decision, CharmError> {
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
pub fn apply<B: SecretBackend>(
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
