//! Typed hook events and the hook context. Parsing from the environment lives in the runtime
//! (`HookContext::from_env`); these types are the contract charm code matches on.

use crate::backend::RelationId;
use crate::secrets::SecretId;
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
    /// Action name as declared in actions.yaml, e.g. `backup`.
    pub name: String,
    /// Juju's action id (a small integer string in Juju 3.x).
    pub id: String,
}

/// Data a storage hook carries (`JUJU_STORAGE_ID`, `JUJU_STORAGE_LOCATION`, `JUJU_STORAGE_KIND`).
/// Parsed for every charm, so a charm that declares storage gets typed events rather than
/// "unknown hook" failures.
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

/// Data a secret hook carries (`JUJU_SECRET_ID`, `JUJU_SECRET_LABEL`, `JUJU_SECRET_REVISION`),
/// so a charm that keeps something in a secret can tell which secret the hook is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretEvent {
    /// `JUJU_SECRET_ID` parsed (any of Juju's forms, e.g. `secret:cu5t2qvmp25c77fh5ce0`), so
    /// charm code compares ids, never strings; a malformed id fails [`HookContext::from_env`].
    pub id: SecretId,
    /// `JUJU_SECRET_LABEL`; `None` when exported empty.
    pub label: Option<String>,
    /// `JUJU_SECRET_REVISION`; only present for `secret-remove` and `secret-expired`.
    pub revision: Option<u32>,
}

/// The event a hook process was started for: what charm code matches on to decide what to do.
///
/// Non-exhaustive: Juju adds hooks over time (and the runtime will follow), so a charm's
/// `match` keeps a `_` arm and still compiles against a newer runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// `JUJU_UNIT_NAME`, e.g. `mysql/0`.
    pub unit_name: String,
    /// The application part of the unit name, e.g. `mysql`.
    pub app_name: String,
    /// `JUJU_MODEL_NAME`.
    pub model_name: String,
    /// `JUJU_CHARM_DIR`.
    pub charm_dir: PathBuf,
    /// The event this process handles.
    pub event: Event,
}
