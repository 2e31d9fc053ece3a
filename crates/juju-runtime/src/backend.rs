//! The seam between charm logic and Juju: every read and write of the Juju model goes through
//! [`ModelBackend`]. Production uses the hook-tool client (real executables on `PATH`); unit tests
//! of pure charm logic use an in-memory backend. Integration tests run the real binary under the
//! simulator, so the hook-tool client itself is exercised against real executables.
//!
//! Every method fails with the runtime's [`HookToolError`], whichever backend implements it, so
//! charm code matches on the same variants in production and in tests.

use crate::goal_state::GoalState;
use crate::tool_error::HookToolError;
use std::collections::BTreeMap;

/// A relation bag's contents: Juju stores string keys and string values only.
pub type Bag = BTreeMap<String, String>;

/// A relation id as Juju prints it (`endpoint:N`), kept whole so `-r` gets exactly what Juju gave.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelationId {
    /// Endpoint name, e.g. `db`.
    pub endpoint: String,
    /// The integer after the last `:`.
    pub id: u32,
}

impl std::fmt::Display for RelationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.endpoint, self.id)
    }
}

/// Whose bag to read: a unit's (`app/0`) or an application's (`app`, `--app`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BagOwner {
    /// A unit bag, by unit name.
    Unit(String),
    /// An application bag, by application name.
    App(String),
}

/// The four workload statuses a charm may set (`status-set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    /// Work in progress that needs no operator action.
    Maintenance,
    /// The operator must act; the message says what to do.
    Blocked,
    /// Waiting for something outside the operator's hands (e.g. another application).
    Waiting,
    /// Ready.
    Active,
}

impl StatusKind {
    /// Every settable status, as `status-set` spells them.
    pub const ALL: [StatusKind; 4] = [
        StatusKind::Maintenance,
        StatusKind::Blocked,
        StatusKind::Waiting,
        StatusKind::Active,
    ];

    /// The word `status-set` takes and `status-get` prints (`active`, `blocked`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StatusKind::Maintenance => "maintenance",
            StatusKind::Blocked => "blocked",
            StatusKind::Waiting => "waiting",
            StatusKind::Active => "active",
        }
    }

    /// The status a word names ([`StatusKind::as_str`]); `None` for any other word.
    pub fn from_word(word: &str) -> Option<StatusKind> {
        StatusKind::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

/// A workload status with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Which of the four settable statuses.
    pub kind: StatusKind,
    /// Operator-facing message; may be empty.
    pub message: String,
}

impl Status {
    /// A status of `kind` with `message`.
    pub fn new(kind: StatusKind, message: impl Into<String>) -> Self {
        Status {
            kind,
            message: message.into(),
        }
    }
}

/// `status-set` targets the unit, or with `--application` (leader only) the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusScope {
    /// The running unit.
    Unit,
    /// The running unit's application (leader only).
    Application,
}

/// `juju-log` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// `DEBUG`
    Debug,
    /// `INFO`
    Info,
    /// `WARNING`
    Warning,
    /// `ERROR`
    Error,
}

/// Everything charm code may ask of Juju. Errors are the runtime's typed hook-tool errors.
pub trait ModelBackend {
    /// `relation-ids <endpoint>`: live (non-broken) relations of an endpoint, sorted.
    fn relation_ids(&self, endpoint: &str) -> Result<Vec<RelationId>, HookToolError>;
    /// `relation-list -r ID`: remote units currently in the relation, sorted.
    fn relation_list(&self, rel: &RelationId) -> Result<Vec<String>, HookToolError>;
    /// `relation-list -r ID --app`: the remote application's name.
    fn relation_remote_app(&self, rel: &RelationId) -> Result<String, HookToolError>;
    /// `relation-get -r ID - <unit>` or `--app - <app>`: the whole bag.
    fn relation_get(&self, rel: &RelationId, owner: &BagOwner) -> Result<Bag, HookToolError>;
    /// `relation-set -r ID [--app] --file -`: merge `data` into the local unit's (or, leader
    /// only, the local application's) bag; an empty value deletes the key.
    fn relation_set(&self, rel: &RelationId, app: bool, data: &Bag) -> Result<(), HookToolError>;
    /// `config-get --format=json`: all set options with their JSON types.
    fn config_get(&self) -> Result<serde_json::Map<String, serde_json::Value>, HookToolError>;
    /// `is-leader --format=json`.
    fn is_leader(&self) -> Result<bool, HookToolError>;
    /// `status-set [--application] <status> <message>`.
    fn status_set(&self, scope: StatusScope, status: &Status) -> Result<(), HookToolError>;
    /// `application-version-set <version>`.
    fn application_version_set(&self, version: &str) -> Result<(), HookToolError>;
    /// `juju-log --log-level <LEVEL> -- <message>`.
    fn juju_log(&self, level: LogLevel, message: &str) -> Result<(), HookToolError>;
    /// A [`ModelBackend::juju_log`] another thread may call for the rest of the hook: the
    /// runtime sends the log from beside the hook with it ([`crate::LogHandle::send_in_background`]).
    /// `None` (the default): the log is sent when the hook ends.
    fn juju_log_sender(&self) -> Option<crate::logging::SendLog> {
        None
    }
    /// `action-get --format=json`: the action's params (validated, defaults filled by Juju).
    fn action_get(&self) -> Result<serde_json::Map<String, serde_json::Value>, HookToolError>;
    /// `action-set k=v ...` with already-flattened, validated dotted keys.
    fn action_set(&self, results: &BTreeMap<String, String>) -> Result<(), HookToolError>;
    /// `action-fail <message>`.
    fn action_fail(&self, message: &str) -> Result<(), HookToolError>;
    /// `action-log <message>`.
    fn action_log(&self, message: &str) -> Result<(), HookToolError>;
    /// `state-get --format=json`: the unit's whole persistent key/value store.
    fn state_get(&self) -> Result<BTreeMap<String, String>, HookToolError>;
    /// `state-set --file -`: merge into the unit's store (committed only if the hook exits 0).
    fn state_set(&self, data: &BTreeMap<String, String>) -> Result<(), HookToolError>;
    /// `state-delete <key>`.
    fn state_delete(&self, key: &str) -> Result<(), HookToolError>;
    /// `goal-state --format=json`: the units Juju means this application and each related one
    /// to have (units of an `add-unit -n N` are listed at once, before they join).
    fn goal_state(&self) -> Result<GoalState, HookToolError>;
}

#[cfg(test)]
mod tests {
    use super::StatusKind;

    #[test]
    fn status_words_round_trip_and_unknown_words_are_none() {
        let words: Vec<&str> = StatusKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(words, ["maintenance", "blocked", "waiting", "active"]);
        for k in StatusKind::ALL {
            assert_eq!(StatusKind::from_word(k.as_str()), Some(k));
        }
        for bad in ["Active", "error", "unknown", ""] {
            assert_eq!(StatusKind::from_word(bad), None, "{bad}");
        }
    }
}
