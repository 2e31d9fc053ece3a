//! [`State`]: everything one hook can see of the Juju model, and after [`Context::run`]
//! everything it left behind, as one plain value (ops' Scenario `State`). A test builds the
//! state before the event, runs the event, and asserts on the state after it; it never drives
//! the in-memory backend by hand.
//!
//! [`Context::run`]: crate::Context::run

use crate::memory_relation::MemoryRelation;
use crate::memory_secrets::MemorySecret;
use juju_runtime::{LogLevel, NetworkInfo, Port, RelationId, SecretId, Status};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The Juju model as the unit under test sees it, before (in) or after (out) one event.
///
/// In: every field above "Out only" is what the hook reads. Out: the same fields with the
/// hook's writes applied (relation bags, stored state, secrets, ports, status), plus what the
/// hook did that Juju would show or log (the "out only" fields; ignored on the way in).
/// Fields are public and the type is `Default`, so a test sets only what it needs:
///
/// ```
/// use juju_runtime_testing::State;
///
/// let state = State {
///     leader: true,
///     config: serde_json::json!({"port": 8080}).as_object().cloned().unwrap_or_default(),
///     ..State::default()
/// };
/// assert!(state.relations.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Leadership (`is-leader`).
    pub leader: bool,
    /// What `config-get` returns: set options and defaults.
    pub config: Map<String, Value>,
    /// Relations as this unit sees them, its own bags included (out: with the hook's writes).
    pub relations: Vec<MemoryRelation>,
    /// The unit's stored state (`state-get`; out: after `state-set` and `state-delete`).
    pub unit_state: BTreeMap<String, String>,
    /// Juju secrets this unit owns or was granted (out: with the hook's adds, grants, reads).
    pub secrets: BTreeMap<SecretId, MemorySecret>,
    /// What `network-get <binding>` returns, by binding.
    pub networks: BTreeMap<String, NetworkInfo>,
    /// Ports the unit has open (out: after `open-port` and `close-port`).
    pub opened_ports: BTreeSet<Port>,
    /// `action-get` when the event is an action (`None`: not in an action, as Juju says to
    /// the action tools).
    pub action_params: Option<Map<String, Value>>,
    /// The unit status: in, the one Juju shows before the event; out, the one the hook set
    /// last, or the same as in when it set none.
    pub unit_status: Option<Status>,
    /// The application status, as [`State::unit_status`] (only a leader may set it).
    pub app_status: Option<Status>,
    /// The workload version (`application-version-set`), as [`State::unit_status`].
    pub workload_version: Option<String>,

    // Out only.
    /// Out only: `action-set` results, merged, by dotted key.
    pub action_results: BTreeMap<String, String>,
    /// Out only: the `action-fail` message.
    pub action_failure: Option<String>,
    /// Out only: every `action-log` message, oldest first.
    pub action_logs: Vec<String>,
    /// Out only: what the hook logged: each `tracing` record up to the context's level
    /// ([`crate::Context::log_level`]), oldest first, then each `juju-log` call the hook made
    /// itself. Records are kept one by one, not batched as the runtime sends them.
    pub logs: Vec<(LogLevel, String)>,
    /// Out only: `Some(now)` when the hook called `juju-reboot`.
    pub reboot_requested: Option<bool>,
    /// Out only: the hook tools the hook called, by name, in order (`["is-leader",
    /// "status-set"]`), to assert what a code path costs.
    pub calls: Vec<String>,
}

impl State {
    /// The relation with id `id`, if the state has it: how a test reads the bags a hook wrote.
    pub fn relation(&self, id: &RelationId) -> Option<&MemoryRelation> {
        self.relations.iter().find(|r| r.id == *id)
    }

    /// The secret `id`, if this unit knows it: how a test reads what a hook did to a secret.
    pub fn secret(&self, id: &SecretId) -> Option<&MemorySecret> {
        self.secrets.get(id)
    }
}
