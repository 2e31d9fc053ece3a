//! Names of events as Juju writes them, for log lines and error messages (`hooks/install`,
//! `hooks/db-relation-changed`, `actions/backup`). The inverse of `HookContext::from_env`.

use crate::event::{Event, HookContext};

impl Event {
    /// The hook name as in `JUJU_HOOK_NAME` (`db-relation-joined`), or the action name.
    pub fn name(&self) -> String {
        let relation = |kind: &str, endpoint: &str| format!("{endpoint}-relation-{kind}");
        match self {
            Event::Install => "install".to_owned(),
            Event::Start => "start".to_owned(),
            Event::Stop => "stop".to_owned(),
            Event::Remove => "remove".to_owned(),
            Event::ConfigChanged => "config-changed".to_owned(),
            Event::UpgradeCharm => "upgrade-charm".to_owned(),
            Event::UpdateStatus => "update-status".to_owned(),
            Event::LeaderElected => "leader-elected".to_owned(),
            Event::LeaderSettingsChanged => "leader-settings-changed".to_owned(),
            Event::PreSeriesUpgrade { .. } => "pre-series-upgrade".to_owned(),
            Event::PostSeriesUpgrade => "post-series-upgrade".to_owned(),
            Event::RelationCreated(r) => relation("created", &r.relation.endpoint),
            Event::RelationJoined(r) => relation("joined", &r.relation.endpoint),
            Event::RelationChanged(r) => relation("changed", &r.relation.endpoint),
            Event::RelationDeparted(r) => relation("departed", &r.relation.endpoint),
            Event::RelationBroken(r) => relation("broken", &r.relation.endpoint),
            Event::StorageAttached(s) => format!("{}-storage-attached", s.name),
            Event::StorageDetaching(s) => format!("{}-storage-detaching", s.name),
            Event::SecretChanged(_) => "secret-changed".to_owned(),
            Event::SecretRotate(_) => "secret-rotate".to_owned(),
            Event::SecretRemove(_) => "secret-remove".to_owned(),
            Event::SecretExpired(_) => "secret-expired".to_owned(),
            Event::Action(a) => a.name.clone(),
        }
    }

    /// The event as `JUJU_DISPATCH_PATH` names it: `hooks/<name>` or `actions/<name>`.
    pub fn dispatch_path(&self) -> String {
        match self {
            Event::Action(a) => format!("actions/{}", a.name),
            other => format!("hooks/{}", other.name()),
        }
    }
}

impl HookContext {
    /// Short label for logs: `mysql/0 hooks/install`.
    pub fn label(&self) -> String {
        format!("{} {}", self.unit_name, self.event.dispatch_path())
    }
}
