//! The cluster key secret in the controller's reconcile: what a secret event names (observed),
//! the secret changes a hook makes (planned, pure: [`housekeeping`], [`KeySecretPlan`]) and
//! making them ([`ensure`], [`apply_actions`], [`publish`]: hook-tool writes, called by
//! [`super::apply`] only).
//!
//! **The id of a secret that does not exist yet.** A leader without a key secret creates one
//! and names it in `cluster_info`, but Juju makes the id only at `secret-add`, a write. The plan
//! stays pure by not rendering what it cannot know: it says "create the secret with this key"
//! ([`KeySecret::Create`]) and "publish `cluster_info` on these relations and grant the secret
//! to those" ([`ClusterInfoWrite`], everything in it but the id). Apply creates the secret first
//! (before any relation is written), then renders `cluster_info` from the write and the id in one
//! place ([`ClusterInfoWrite::value`]); the cache records that same text as published
//! ([`record`]) when it is persisted, after every hook-tool call succeeded. An existing secret
//! goes the same way, so there is one path: the plan only compares with what was published to
//! choose the relations. A two-phase plan (plan, create, plan again) was not chosen: the second
//! plan would re-render the files for nothing, and the first would already have had to decide
//! everything the second decides.

use super::store::Store;
use crate::charms::error::CharmError;
use crate::interface::{
    AuthKind, CLUSTER_INFO_KEY, ClusterInfo, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL,
    MungeKeyRef,
};
use crate::slurm::types::NodeName;
use juju_runtime::{Bag, Event, RelationId, SecretBackend, SecretContent};
use juju_runtime::{SecretId, SecretOptions, SecretRead, SecretRef};

/// What a secret event names, read from the event before anything is planned, so the plan
/// decides what (if anything) to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSecret {
    /// `secret-changed`: the secret has a new revision.
    Changed(SecretId),
    /// `secret-remove`: no unit tracks `revision` of the secret any more (`None`: Juju named
    /// no revision).
    Remove {
        /// The secret.
        id: SecretId,
        /// The revision nobody tracks.
        revision: Option<u32>,
    },
}

impl EventSecret {
    /// The secret `secret-changed` or `secret-remove` is about (`JUJU_SECRET_ID`, parsed by
    /// the runtime: a malformed id has already failed the hook, naming the variable); `None`
    /// for any other event.
    pub fn observe(event: &Event) -> Result<Option<Self>, CharmError> {
        Ok(match event {
            Event::SecretChanged(s) => Some(EventSecret::Changed(s.id.clone())),
            Event::SecretRemove(s) => Some(EventSecret::Remove {
                id: s.id.clone(),
                revision: s.revision,
            }),
            _ => None,
        })
    }
}

/// A secret change a hook plans besides the key secret's creation, made by apply in the
/// order listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretAction {
    /// `secret-get --refresh`: track the latest revision. A unit that once read the key (a
    /// former leader) moves on in `secret-changed`, so it does not hold the old revision
    /// forever (and Juju can remove it).
    Refresh(SecretId),
    /// `secret-remove --revision`: the leader removes a revision no unit tracks any more
    /// (after a `rotate-key`). Always with a revision: without one Juju removes the secret.
    RemoveRevision {
        /// The secret.
        id: SecretId,
        /// The revision to remove.
        revision: u32,
    },
}

/// The secret housekeeping this unit does for the event (pure): the leader removes the
/// revision `secret-remove` names; another unit refreshes on `secret-changed`. Nothing else.
pub fn housekeeping(event: Option<&EventSecret>, leader: bool) -> Vec<SecretAction> {
    match event {
        Some(EventSecret::Remove {
            id,
            revision: Some(revision),
        }) if leader => vec![SecretAction::RemoveRevision {
            id: id.clone(),
            revision: *revision,
        }],
        Some(EventSecret::Changed(id)) if !leader => vec![SecretAction::Refresh(id.clone())],
        _ => Vec::new(),
    }
}

/// Which key secret `cluster_info` names.
#[derive(Clone, PartialEq, Eq)]
pub enum KeySecret {
    /// The one that exists (published, or found by its label).
    Existing(SecretId),
    /// None exists: apply creates it, holding this key, before anything names it.
    Create {
        /// The munge key (the plan's, [`super::plan::munge_key`]).
        key: Vec<u8>,
    },
}

impl std::fmt::Debug for KeySecret {
    /// Never the key: plans are printed in test failures and debug logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySecret::Existing(id) => f.debug_tuple("Existing").field(id).finish(),
            KeySecret::Create { key } => write!(f, "Create {{ key: <{} bytes> }}", key.len()),
        }
    }
}

/// The key secret a leader hook uses, and where its id is published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySecretPlan {
    /// The secret, or the one to create.
    pub secret: KeySecret,
    /// `cluster_info` naming it, for the relations where it changed; `None` where it goes
    /// nowhere (every relation has it, or the host name cannot be the nodes' `SlurmctldHost`).
    pub cluster_info: Option<ClusterInfoWrite>,
}

/// `cluster_info` to publish, less the key secret's id ([`ClusterInfoWrite::value`] adds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterInfoWrite {
    /// The cluster's authentication.
    pub auth: AuthKind,
    /// This controller's host name (the nodes' `--conf-server`).
    pub slurmctld_host: NodeName,
    /// The relations to publish it on, in cache order.
    pub relations: Vec<RelationId>,
    /// Those of them to grant the secret to: the ones whose published `cluster_info` did not
    /// name it (granted in the hook that publishes the id, so Juju commits both together).
    pub grants: Vec<RelationId>,
}

impl ClusterInfoWrite {
    /// The `cluster_info` value naming `key_secret`: what the plan compares with what was
    /// published, what apply publishes and what the cache records.
    pub fn value(&self, key_secret: &SecretId) -> String {
        ClusterInfo {
            munge_key: MungeKeyRef::Secret(key_secret.clone()),
            auth: self.auth,
            slurmctld_host: self.slurmctld_host.clone(),
            nhc_params: String::new(),
        }
        .to_relation_value()
    }
}

/// Records `value` (the `cluster_info` apply published) as published on the relations of
/// `write` (pure; [`super::apply::save`] calls it before the store is written).
pub fn record(store: &mut Store, write: &ClusterInfoWrite, value: &str) {
    for (id, rel) in store.relations.iter_mut() {
        let id = RelationId::new(crate::interface::SLURMCTLD_ENDPOINT, *id);
        if write.relations.contains(&id) {
            rel.cluster_info_published = Some(value.to_owned());
        }
    }
}

/// The key secret's id: the existing one, or the one `secret-add` makes now (application
/// owned, leader only; Juju commits it with the rest of the hook). The key goes to Juju
/// through a private file, never argv.
pub fn ensure<B: SecretBackend>(backend: &B, secret: &KeySecret) -> Result<SecretId, CharmError> {
    let key = match secret {
        KeySecret::Existing(id) => return Ok(id.clone()),
        KeySecret::Create { key } => key,
    };
    let content = SecretContent::from([(MUNGE_KEY_SECRET_FIELD.to_owned(), key.clone())]);
    let options = SecretOptions {
        label: Some(MUNGE_KEY_SECRET_LABEL.to_owned()),
        description: Some("the Slurm cluster's munge key".to_owned()),
        ..SecretOptions::default()
    };
    let id = backend.secret_add(&content, &options)?;
    tracing::info!("created the cluster key secret {id}");
    Ok(id)
}

/// Makes the planned secret changes, in order.
pub fn apply_actions<B: SecretBackend>(
    backend: &B,
    actions: &[SecretAction],
) -> Result<(), CharmError> {
    for action in actions {
        match action {
            SecretAction::Refresh(id) => {
                let read = SecretRef::Id(id.clone());
                backend.secret_get(&read, &[MUNGE_KEY_SECRET_FIELD], SecretRead::Refresh)?;
            }
            SecretAction::RemoveRevision { id, revision } => {
                backend.secret_remove(id, Some(*revision))?;
                tracing::info!("removed revision {revision} of {id} (no unit uses it)");
            }
        }
    }
    Ok(())
}

/// Grants the secret `id` where planned, then publishes `cluster_info` naming it; returns the
/// value published (the cache records it once the hook's hook-tool calls all succeeded).
pub fn publish<B: SecretBackend>(
    backend: &B,
    id: &SecretId,
    write: &ClusterInfoWrite,
) -> Result<String, CharmError> {
    for relation in &write.grants {
        backend.secret_grant(id, relation, None)?;
    }
    let value = write.value(id);
    let data = Bag::from([(CLUSTER_INFO_KEY.to_string(), value.clone())]);
    for relation in &write.relations {
        backend.relation_set(relation, true, &data)?;
    }
    Ok(value)
}
