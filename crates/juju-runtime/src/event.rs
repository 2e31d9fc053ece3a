//! Typed hook events and the hook context. Parsing from the environment lives in the runtime
//! (`HookContext::from_env`); these types are the contract charm code matches on.

use crate::backend::RelationId;
use std::path::PathBuf;

/// Data every relation hook carries (`JUJU_RELATION*`, `JUJU_REMOTE_*`, `JUJU_DEPARTING_UNIT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationEvent {
    /// The relation (`JUJU_RELATION_ID`), endpoint included.
    pub relation: RelationId,
    /// `JUJU_REMOTE_APP`.
    pub remote_app: String,
    /// `JUJU_REMOTE_UNIT`; `None` where Juju exports it empty (created, broken, app-bag changed).
    pub remote_unit: Option<String>,
    /// `JUJU_DEPARTING_UNIT` (relation-departed only).
    pub departing_unit: Option<String>,
}

/// An action invocation (`JUJU_ACTION_NAME`, `JUJU_ACTION_UUID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionEvent {
    /// Action name as declared in actions.yaml, e.g. `detect-gpus`.
    pub name: String,
    /// Juju's action id (a small integer string in Juju 3.x).
    pub id: String,
}

/// Data a storage hook carries (`JUJU_STORAGE_ID`, `JUJU_STORAGE_LOCATION`, `JUJU_STORAGE_KIND`).
/// The charms declare no storage today; the runtime still parses these hooks so a future storage
/// declaration does not turn into "unknown hook" failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageEvent {
    /// Storage name, the part of `JUJU_STORAGE_ID` before `/` (equals the hook's prefix).
    pub name: String,
    /// The full storage id, e.g. `data/0`.
    pub id: String,
    /// `JUJU_STORAGE_LOCATION` (mount point or device path); may be empty.
    pub location: String,
    /// `JUJU_STORAGE_KIND` (`filesystem` or `block`); may be empty.
    pub kind: String,
}

/// Data a secret hook carries (`JUJU_SECRET_ID`, `JUJU_SECRET_LABEL`, `JUJU_SECRET_REVISION`).
/// The slurmctld and slurmd charms keep the cluster key in a secret and follow these hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretEvent {
    /// `JUJU_SECRET_ID`, e.g. `secret:cu5t2qvmp25c77fh5ce0`.
    pub id: String,
    /// `JUJU_SECRET_LABEL`; `None` when exported empty.
    pub label: Option<String>,
    /// `JUJU_SECRET_REVISION`; only present for `secret-remove` and `secret-expired`.
    pub revision: Option<u32>,
}

/// The event a hook process was started for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// `install`
    Install,
    /// `start`
    Start,
    /// `stop`
    Stop,
    /// `remove`
    Remove,
    /// `config-changed`
    ConfigChanged,
    /// `upgrade-charm`
    UpgradeCharm,
    /// `update-status`
    UpdateStatus,
    /// `leader-elected`
    LeaderElected,
    /// `<endpoint>-relation-created`
    RelationCreated(RelationEvent),
    /// `<endpoint>-relation-joined`
    RelationJoined(RelationEvent),
    /// `<endpoint>-relation-changed`
    RelationChanged(RelationEvent),
    /// `<endpoint>-relation-departed`
    RelationDeparted(RelationEvent),
    /// `<endpoint>-relation-broken`
    RelationBroken(RelationEvent),
    /// `actions/<name>`
    Action(ActionEvent),
    /// `leader-settings-changed` (Juju <= 3.6, non-leaders only; removed in Juju 4). Charms that do
    /// not use `leader-set` can treat it like any other reconcile trigger.
    LeaderSettingsChanged,
    /// `pre-series-upgrade` (Juju <= 3.6); carries `JUJU_TARGET_BASE` when Juju exports it.
    PreSeriesUpgrade {
        /// `JUJU_TARGET_BASE`, e.g. `ubuntu@24.04`; `None` when unset or empty.
        target_base: Option<String>,
    },
    /// `post-series-upgrade` (Juju <= 3.6).
    PostSeriesUpgrade,
    /// `<storage>-storage-attached`
    StorageAttached(StorageEvent),
    /// `<storage>-storage-detaching`
    StorageDetaching(StorageEvent),
    /// `secret-changed`
    SecretChanged(SecretEvent),
    /// `secret-rotate`
    SecretRotate(SecretEvent),
    /// `secret-remove`
    SecretRemove(SecretEvent),
    /// `secret-expired`
    SecretExpired(SecretEvent),
}

/// Who and where the hook runs: the parts of Juju's environment charm code needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookContext {
    /// `JUJU_UNIT_NAME`, e.g. `slurmd/0`.
    pub unit_name: String,
    /// The application part of the unit name, e.g. `slurmd`.
    pub app_name: String,
    /// `JUJU_MODEL_NAME`.
    pub model_name: String,
    /// `JUJU_CHARM_DIR`.
    pub charm_dir: PathBuf,
    /// The event this process handles.
    pub event: Event,
}
