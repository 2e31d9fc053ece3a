//! Typed hook events and the hook context. Parsing from the environment lives in the runtime
//! (`HookContext::from_env`); these types are the contract charm code matches on.

use super::backend::RelationId;
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
