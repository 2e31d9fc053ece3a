//! One relation as the in-memory backend sees it from the unit under test: the remote side's
//! units and bags plus this unit's own bags. A small builder so charm tests read like the
//! situation they set up.

use juju_runtime::{Bag, RelationId};
use std::collections::BTreeMap;

/// Builds a [`Bag`] from literal pairs: `bag([("hostname", "node1")])`.
pub fn bag<const N: usize>(pairs: [(&str, &str); N]) -> Bag {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// A relation seen from the local unit. Fields are public so tests can inspect the result of a
/// hook; build one with [`MemoryRelation::new`] or [`MemoryRelation::peer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRelation {
    /// `endpoint:id`.
    pub id: RelationId,
    /// The remote application (the own application for a peer relation).
    pub remote_app: String,
    /// Peer relation: the application bag is shared and readable by every unit.
    pub is_peer: bool,
    /// Remote units currently in the relation (what `relation-list` prints), with their bags.
    pub remote_units: BTreeMap<String, Bag>,
    /// Remote units that have left but whose data is still readable (Juju keeps it).
    pub departed_units: BTreeMap<String, Bag>,
    /// The remote application's bag (unused for peers, where `local_app_data` is the shared bag).
    pub remote_app_data: Bag,
    /// The local unit's bag (includes what the hook wrote).
    pub local_unit_data: Bag,
    /// The local application's bag (includes what the hook wrote).
    pub local_app_data: Bag,
    /// The relation is being broken: absent from `relation-ids`, still readable.
    pub broken: bool,
}

impl MemoryRelation {
    /// A regular relation on `endpoint` with id `id` to application `remote_app`.
    pub fn new(endpoint: &str, id: u32, remote_app: &str) -> Self {
        MemoryRelation {
            id: RelationId::new(endpoint, id),
            remote_app: remote_app.to_owned(),
            is_peer: false,
            remote_units: BTreeMap::new(),
            departed_units: BTreeMap::new(),
            remote_app_data: Bag::new(),
            local_unit_data: Bag::new(),
            local_app_data: Bag::new(),
            broken: false,
        }
    }

    /// A peer relation of application `own_app` (peers are the other units of the same app).
    pub fn peer(endpoint: &str, id: u32, own_app: &str) -> Self {
        MemoryRelation {
            is_peer: true,
            ..Self::new(endpoint, id, own_app)
        }
    }

    /// Adds a remote unit with its bag.
    pub fn remote_unit(mut self, unit: &str, data: Bag) -> Self {
        self.remote_units.insert(unit.to_owned(), data);
        self
    }

    /// Adds a unit that has departed: not listed, data still readable.
    pub fn departed_unit(mut self, unit: &str, data: Bag) -> Self {
        self.departed_units.insert(unit.to_owned(), data);
        self
    }

    /// Sets the remote application's bag.
    pub fn remote_app_data(mut self, data: Bag) -> Self {
        self.remote_app_data = data;
        self
    }

    /// Sets the local unit's bag as it was before the hook.
    pub fn local_unit_data(mut self, data: Bag) -> Self {
        self.local_unit_data = data;
        self
    }

    /// Sets the local application's bag as it was before the hook.
    pub fn local_app_data(mut self, data: Bag) -> Self {
        self.local_app_data = data;
        self
    }

    /// Marks the relation as being broken (excluded from `relation-ids`).
    pub fn broken(mut self) -> Self {
        self.broken = true;
        self
    }
}
