//! `rotate-key`: a new random key as a new revision of the key secret. Juju commits it when the
//! action exits 0 and sends `secret-changed` to every unit that tracks the secret: each slurmd
//! switches to the new key (and restarts munge and slurmd), the leader too (it tracks the secret
//! as its owner), and once no unit tracks the old revision the leader removes it
//! (`secret-remove`). The key itself is never in the results.
//!
//! Read → decide → apply, like a hook: [`decide`] is pure and says what it still needs to know
//! ([`Step::Read`]) or what to do ([`Step::Decided`]); [`read`] asks for exactly that, so a
//! request refused early (not the leader, auth/slurm) makes no further hook-tool call; [`apply`]
//! makes the secret change.

use super::actions::{ActionChange, Decision};
use super::plan::MUNGE_KEY_LEN;
use crate::charms::action_failure::ActionFailure;
use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::charms::util::config_str;
use crate::interface::{AuthKind, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL};
use juju_runtime::{SecretBackend, SecretContent, SecretInfo, SecretOptions, SecretRead};
use juju_runtime::{SecretId, SecretRef};
use std::collections::BTreeMap;

/// What `rotate-key` has read so far; `None`: not read (not needed yet, or not at all).
#[derive(Default, Clone, PartialEq, Eq)]
pub struct Facts {
    /// `is-leader`.
    pub leader: Option<bool>,
    /// The `auth-type` config value.
    pub auth_type: Option<String>,
    /// The key secret by its label (`secret-info-get`); `Some(None)`: there is none.
    pub key_secret: Option<Option<SecretInfo>>,
    /// Random bytes for the new key.
    pub fresh_key: Option<Vec<u8>>,
}

impl std::fmt::Debug for Facts {
    /// Never the key: facts are printed in test failures.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facts")
            .field("leader", &self.leader)
            .field("auth_type", &self.auth_type)
            .field("key_secret", &self.key_secret)
            .field("fresh_key", &self.fresh_key.as_ref().map(Vec::len))
            .finish()
    }
}

/// One fact [`decide`] needs before it can decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fact {
    /// [`Facts::leader`].
    Leader,
    /// [`Facts::auth_type`].
    AuthType,
    /// [`Facts::key_secret`].
    KeySecret,
    /// [`Facts::fresh_key`].
    FreshKey,
}

/// What [`decide`] says.
#[derive(Debug)]
pub enum Step {
    /// Read this, then ask again.
    Read(Fact),
    /// The request is refused, or this is the change and its results.
    Decided(Decision),
}

/// Decides `rotate-key` from what was read (pure): only the leader rotates, never under
/// auth/slurm (slurmd would lose the key it authenticates with), only once the key secret
/// exists; then a new revision with the fresh key, reported by the secret and the revision it
/// becomes.
pub fn decide(facts: &Facts) -> Step {
    let Some(leader) = facts.leader else {
        return Step::Read(Fact::Leader);
    };
    if !leader {
        return Step::Decided(Err(ActionFailure::NotLeader {
            charm: "slurmctld",
            action: "rotate-key",
        }));
    }
    let Some(auth) = &facts.auth_type else {
        return Step::Read(Fact::AuthType);
    };
    if AuthKind::parse(auth) == Ok(AuthKind::Slurm) {
        return Step::Decided(Err(ActionFailure::RotateUnderAuthSlurm));
    }
    let Some(info) = &facts.key_secret else {
        return Step::Read(Fact::KeySecret);
    };
    let Some(info) = info else {
        return Step::Decided(Err(ActionFailure::NoKeySecret));
    };
    let Some(key) = &facts.fresh_key else {
        return Step::Read(Fact::FreshKey);
    };
    let results = BTreeMap::from([
        ("secret".to_string(), info.id.uri()),
        ("revision".to_string(), (info.revision + 1).to_string()),
    ]);
    let content = SecretContent::from([(MUNGE_KEY_SECRET_FIELD.to_owned(), key.clone())]);
    let change = ActionChange::NewKeyRevision {
        id: info.id.clone(),
        content,
    };
    Step::Decided(Ok((change, results)))
}

/// Reads what [`decide`] asks for until it decides (reads only).
pub fn read<B: SecretBackend>(backend: &B, host: &Host<'_>) -> Result<Decision, CharmError> {
    let mut facts = Facts::default();
    loop {
        match decide(&facts) {
            Step::Decided(decision) => return Ok(decision),
            Step::Read(Fact::Leader) => facts.leader = Some(backend.is_leader()?),
            Step::Read(Fact::AuthType) => {
                facts.auth_type = Some(config_str(&backend.config_get()?, "auth-type"));
            }
            Step::Read(Fact::KeySecret) => {
                let label = SecretRef::Label(MUNGE_KEY_SECRET_LABEL.to_owned());
                facts.key_secret = Some(backend.secret_info_get(&label)?);
            }
            Step::Read(Fact::FreshKey) => {
                facts.fresh_key = Some(host.random_bytes(MUNGE_KEY_LEN)?);
            }
        }
    }
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
