//! Hook kinds and queue entries.

use crate::secrets::SecretId;

/// A hook Juju can run on a unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hook {
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
    /// `leader-settings-changed` (Juju <= 3.6, non-leaders; opt-in, see `SimOptions`)
    LeaderSettingsChanged,
    /// `<ep>-relation-created`
    RelationCreated(u32),
    /// `<ep>-relation-joined` for a remote unit
    RelationJoined(u32, String),
    /// `<ep>-relation-changed` for a remote unit, or the remote app bag (`None`)
    RelationChanged(u32, Option<String>),
    /// `<ep>-relation-departed`
    RelationDeparted {
        /// Relation id.
        rel: u32,
        /// `JUJU_REMOTE_UNIT`.
        remote: String,
        /// `JUJU_DEPARTING_UNIT`.
        departing: String,
    },
    /// `<ep>-relation-broken`
    RelationBroken(u32),
    /// `secret-changed` on a reader of the secret
    SecretChanged(SecretId),
    /// `secret-remove` on the owner, for an obsolete revision
    SecretRemove(SecretId, u32),
    /// `secret-rotate` on the owner
    SecretRotate(SecretId),
    /// `secret-expired` on the owner, for the expired (latest) revision
    SecretExpired(SecretId, u32),
}

impl Hook {
    /// The secret this hook is about, with `JUJU_SECRET_REVISION` where Juju sets it.
    pub fn secret(&self) -> Option<(&SecretId, Option<u32>)> {
        match self {
            Hook::SecretChanged(id) | Hook::SecretRotate(id) => Some((id, None)),
            Hook::SecretRemove(id, r) | Hook::SecretExpired(id, r) => Some((id, Some(*r))),
            _ => None,
        }
    }

    /// The relation this hook is about.
    pub fn relation(&self) -> Option<u32> {
        match self {
            Hook::RelationCreated(r)
            | Hook::RelationJoined(r, _)
            | Hook::RelationChanged(r, _)
            | Hook::RelationBroken(r)
            | Hook::RelationDeparted { rel: r, .. } => Some(*r),
            _ => None,
        }
    }

    /// The hook name, given the local endpoint name for relation hooks.
    pub fn name(&self, endpoint: &str) -> String {
        match self {
            Hook::Install => "install".into(),
            Hook::Start => "start".into(),
            Hook::Stop => "stop".into(),
            Hook::Remove => "remove".into(),
            Hook::ConfigChanged => "config-changed".into(),
            Hook::UpgradeCharm => "upgrade-charm".into(),
            Hook::UpdateStatus => "update-status".into(),
            Hook::LeaderElected => "leader-elected".into(),
            Hook::LeaderSettingsChanged => "leader-settings-changed".into(),
            Hook::RelationCreated(_) => format!("{endpoint}-relation-created"),
            Hook::RelationJoined(..) => format!("{endpoint}-relation-joined"),
            Hook::RelationChanged(..) => format!("{endpoint}-relation-changed"),
            Hook::RelationDeparted { .. } => format!("{endpoint}-relation-departed"),
            Hook::RelationBroken(_) => format!("{endpoint}-relation-broken"),
            Hook::SecretChanged(_) => "secret-changed".into(),
            Hook::SecretRemove(..) => "secret-remove".into(),
            Hook::SecretRotate(_) => "secret-rotate".into(),
            Hook::SecretExpired(..) => "secret-expired".into(),
        }
    }
}

/// An entry in the simulator's operation queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queued {
    /// Run a hook on a unit.
    Hook {
        /// Unit name.
        unit: String,
        /// The hook.
        hook: Hook,
    },
    /// Drop a removed unit from the model (after its teardown hooks).
    FinalizeUnit(String),
    /// Drop a removed relation from the model (after every unit's broken hook).
    FinalizeRelation(u32),
    /// Drop a removed application (once it has no units left).
    FinalizeApp(String),
}

impl Queued {
    /// The unit this entry belongs to.
    pub fn unit(&self) -> Option<&str> {
        match self {
            Queued::Hook { unit, .. } | Queued::FinalizeUnit(unit) => Some(unit),
            Queued::FinalizeRelation(_) | Queued::FinalizeApp(_) => None,
        }
    }
}
