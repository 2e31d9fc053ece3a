//! A hook's secret changes, recorded by the tools and applied only when the hook exits 0, in
//! Juju's order (creates, updates, track-latest, grants, revokes, deletes)
//! [worker/uniter/runner/context/secrets.go `secretsChangeRecorder`].

use super::{Content, GrantTarget, RotatePolicy, SecretId, SecretOwner};
use std::collections::{BTreeMap, BTreeSet};

/// Metadata given to `secret-add` / `secret-set` (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Upsert {
    /// New content (replaces, never merges).
    pub content: Option<Content>,
    /// `--label`.
    pub label: Option<String>,
    /// `--description`.
    pub description: Option<String>,
    /// `--rotate`.
    pub rotate: Option<RotatePolicy>,
    /// `--expire` (sim wall-clock seconds).
    pub expire: Option<i64>,
}

impl Upsert {
    /// Merge a later call into this one: fields given later win.
    pub fn merge(&mut self, later: Upsert) {
        if later.content.is_some() {
            self.content = later.content;
        }
        if later.label.is_some() {
            self.label = later.label;
        }
        if later.description.is_some() {
            self.description = later.description;
        }
        if later.rotate.is_some() {
            self.rotate = later.rotate;
        }
        if later.expire.is_some() {
            self.expire = later.expire;
        }
    }

    /// Whether nothing is to change.
    pub fn is_empty(&self) -> bool {
        *self == Upsert::default()
    }
}

/// A `secret-add` whose id is reserved but not yet created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCreate {
    /// The reserved id.
    pub id: SecretId,
    /// Owner.
    pub owner: SecretOwner,
    /// Content and metadata (content always set).
    pub upsert: Upsert,
}

/// A `secret-grant` or `secret-revoke`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessChange {
    /// The secret.
    pub id: SecretId,
    /// The app or unit.
    pub target: GrantTarget,
    /// The relation the grant is scoped to (grants only).
    pub relation: u32,
}

/// A `secret-remove` (`revision: None` removes the whole secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelete {
    /// The secret.
    pub id: SecretId,
    /// The revision, or all.
    pub revision: Option<u32>,
}

/// Every secret change a hook made so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingSecrets {
    /// `secret-add`, in order.
    pub creates: Vec<PendingCreate>,
    /// `secret-set` per secret (coalesced).
    pub updates: BTreeMap<SecretId, Upsert>,
    /// `secret-get --refresh` of a secret with a pending update: move `current` at commit.
    pub track_latest: BTreeSet<SecretId>,
    /// `secret-grant`, in order.
    pub grants: Vec<AccessChange>,
    /// `secret-revoke`, in order.
    pub revokes: Vec<AccessChange>,
    /// `secret-remove`, in order.
    pub deletes: Vec<PendingDelete>,
}

impl PendingSecrets {
    /// Record a `secret-set`: folds into a pending create of the same secret, else
    /// coalesces with earlier sets; cancels a pending remove of the secret.
    pub fn update(&mut self, id: &SecretId, upsert: Upsert) {
        self.deletes.retain(|d| &d.id != id);
        if let Some(c) = self.creates.iter_mut().find(|c| &c.id == id) {
            c.upsert.merge(upsert);
            return;
        }
        self.updates.entry(id.clone()).or_default().merge(upsert);
    }

    /// Record a `secret-remove`: drops the secret's pending set, grants and revokes.
    pub fn remove(&mut self, id: &SecretId, revision: Option<u32>) {
        self.updates.remove(id);
        self.grants.retain(|g| &g.id != id);
        self.revokes.retain(|g| &g.id != id);
        self.deletes.push(PendingDelete {
            id: id.clone(),
            revision,
        });
    }

    /// Whether the whole secret is pending removal.
    pub fn removing(&self, id: &SecretId) -> bool {
        self.deletes
            .iter()
            .any(|d| &d.id == id && d.revision.is_none())
    }

    /// The pending create of `id`, if any.
    pub fn created(&self, id: &SecretId) -> Option<&PendingCreate> {
        self.creates.iter().find(|c| &c.id == id)
    }
}
