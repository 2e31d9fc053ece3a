//! In-memory [`ModelBackend`] for unit tests of pure charm logic: no processes, no simulator.
//!
//! It enforces the same rules the hook tools do and fails with the same [`HookToolError`]
//! variants (and Juju's message texts), so charm code sees identical behaviour:
//! - unknown relation (or `endpoint:id` whose endpoint does not match) → `RelationNotFound`;
//! - `relation-set --app` by a non-leader → `NotLeader` (`cannot write relation settings`);
//! - a non-leader reading its own application bag on a non-peer relation → `PermissionDenied`;
//! - `status-set --application` by a non-leader → `NotLeader` (`this unit is not the leader`);
//! - action tools outside an action → `NotInAction`; bad `action-set` keys → `Usage`;
//! - writes (relation bags, state, ports) are visible to the unit's own later reads.
//!
//! Unlike the simulator it has no commit step: what a hook wrote is simply there to inspect
//! (getters below). Every call is recorded by tool name ([`MemoryBackend::calls`]) so tests can
//! assert how many hook-tool calls a code path makes.

use crate::memory_relation::MemoryRelation;
use juju_runtime::{
    Bag, BagOwner, Goal, GoalState, HookToolError, LogLevel, ModelBackend, NetworkBackend,
    NetworkInfo, Port, RelationId, Status, StatusScope, validate_action_result_key,
};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

/// Juju's per-key and per-value limits for `state-set` (core/quota).
const STATE_MAX_KEY: usize = 256;
const STATE_MAX_VALUE: usize = 64 * 1024;

/// The model as the unit under test sees it, plus everything the hook did.
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub(crate) unit: String,
    pub(crate) app: String,
    pub(crate) leader: bool,
    config: Map<String, Value>,
    action_params: Option<Map<String, Value>>,
    pub(crate) relations: BTreeMap<RelationId, MemoryRelation>,
    state: BTreeMap<String, String>,
    networks: BTreeMap<String, NetworkInfo>,
    ports: BTreeSet<Port>,
    reboot: Option<bool>,
    unit_status: Vec<Status>,
    app_status: Vec<Status>,
    workload_version: Option<String>,
    logs: Vec<(LogLevel, String)>,
    action_results: BTreeMap<String, String>,
    action_failure: Option<String>,
    action_logs: Vec<String>,
    calls: Vec<String>,
    pub(crate) secrets: crate::memory_secrets::MemorySecrets,
    planned_remote: BTreeMap<String, Vec<String>>,
    goal_state_output: Option<Vec<u8>>,
}

/// The in-memory backend. Configure it with the consuming builder methods, hand `&backend` to
/// charm code, then inspect it with the getters.
#[derive(Debug)]
pub struct MemoryBackend {
    model: Mutex<Model>,
}

fn err_not_in_action(tool: &str) -> HookToolError {
    HookToolError::NotInAction {
        tool: tool.to_owned(),
        stderr: "not running an action".to_owned(),
    }
}

impl MemoryBackend {
    /// A backend for unit `unit` (`app/N`), not leader, empty config, no relations, not in an action.
    pub fn new(unit: &str) -> Self {
        let app = unit.split_once('/').map_or(unit, |(app, _)| app).to_owned();
        MemoryBackend {
            model: Mutex::new(Model {
                unit: unit.to_owned(),
                app,
                ..Model::default()
            }),
        }
    }

    pub(crate) fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn with(self, f: impl FnOnce(&mut Model)) -> Self {
        f(&mut self.model());
        self
    }

    /// Sets leadership.
    pub fn leader(self, leader: bool) -> Self {
        self.with(|m| m.leader = leader)
    }

    /// Sets the whole config (what `config-get` returns: set options and defaults).
    pub fn config(self, config: Map<String, Value>) -> Self {
        self.with(|m| m.config = config)
    }

    /// Sets one config option.
    pub fn config_value(self, key: &str, value: impl Into<Value>) -> Self {
        let value = value.into();
        self.with(|m| {
            m.config.insert(key.to_owned(), value);
        })
    }

    /// Adds a relation (replacing one with the same id).
    pub fn relation(self, relation: MemoryRelation) -> Self {
        self.with(|m| {
            m.relations.insert(relation.id.clone(), relation);
        })
    }

    /// Runs "inside an action" with these params (as `action-get` returns them).
    pub fn action(self, params: Map<String, Value>) -> Self {
        self.with(|m| m.action_params = Some(params))
    }

    /// Seeds one key of the unit's persistent state.
    pub fn state_value(self, key: &str, value: &str) -> Self {
        self.with(|m| {
            m.state.insert(key.to_owned(), value.to_owned());
        })
    }

    /// Sets what `network-get <binding>` returns.
    pub fn network(self, binding: &str, info: NetworkInfo) -> Self {
        self.with(|m| {
            m.networks.insert(binding.to_owned(), info);
        })
    }

    /// Seeds a port the unit opened in an earlier hook (what `opened-ports` lists before this
    /// one), so a test can start from a unit that already serves.
    pub fn opened_port(self, port: Port) -> Self {
        self.with(|m| {
            m.ports.insert(port);
        })
    }

    /// Adds units Juju means to have on `endpoint` that are not in any relation yet (as
    /// `goal-state` lists the units of an `add-unit -n N` before they join), with status
    /// `waiting`.
    pub fn planned_remote_units(self, endpoint: &str, units: &[&str]) -> Self {
        self.with(|m| {
            m.planned_remote
                .entry(endpoint.to_owned())
                .or_default()
                .extend(units.iter().map(|u| (*u).to_owned()));
        })
    }

    /// Makes `goal-state --format=json` print exactly `json` (e.g. a real Juju 3.6 output with
    /// a cross-model application keyed by its offer URL), parsed as the hook tool's output is,
    /// instead of the goal state derived from the model.
    pub fn goal_state_output(self, json: &str) -> Self {
        self.with(|m| m.goal_state_output = Some(json.as_bytes().to_vec()))
    }

    /// Changes leadership between hooks of a multi-hook test.
    pub fn set_leader(&self, leader: bool) {
        self.model().leader = leader;
    }

    /// The last unit status set, if any.
    pub fn unit_status(&self) -> Option<Status> {
        self.model().unit_status.last().cloned()
    }

    /// Every unit status set, oldest first.
    pub fn unit_status_history(&self) -> Vec<Status> {
        self.model().unit_status.clone()
    }

    /// The last application status set, if any.
    pub fn app_status(&self) -> Option<Status> {
        self.model().app_status.last().cloned()
    }

    /// The workload version set, if any.
    pub fn workload_version(&self) -> Option<String> {
        self.model().workload_version.clone()
    }

    /// Every `juju-log` record, oldest first.
    pub fn logs(&self) -> Vec<(LogLevel, String)> {
        self.model().logs.clone()
    }

    /// The merged `action-set` results (dotted keys).
    pub fn action_results(&self) -> BTreeMap<String, String> {
        self.model().action_results.clone()
    }

    /// The `action-fail` message, if the action failed.
    pub fn action_failure(&self) -> Option<String> {
        self.model().action_failure.clone()
    }

    /// Every `action-log` message, oldest first.
    pub fn action_logs(&self) -> Vec<String> {
        self.model().action_logs.clone()
    }

    /// A relation's current view (including the hook's writes).
    pub fn relation_view(&self, id: &RelationId) -> Option<MemoryRelation> {
        self.model().relations.get(id).cloned()
    }

    /// The local unit's bag in a relation (empty if the relation is unknown).
    pub fn local_unit_data(&self, id: &RelationId) -> Bag {
        self.relation_view(id)
            .map(|r| r.local_unit_data)
            .unwrap_or_default()
    }

    /// The local application's bag in a relation (empty if the relation is unknown).
    pub fn local_app_data(&self, id: &RelationId) -> Bag {
        self.relation_view(id)
            .map(|r| r.local_app_data)
            .unwrap_or_default()
    }

    /// The unit's persistent state.
    pub fn state(&self) -> BTreeMap<String, String> {
        self.model().state.clone()
    }

    /// Ports currently open.
    pub fn ports(&self) -> BTreeSet<Port> {
        self.model().ports.clone()
    }

    /// `Some(now)` if `juju-reboot` was called.
    pub fn reboot_requested(&self) -> Option<bool> {
        self.model().reboot
    }

    /// Tool names of every call made, in order (e.g. `["is-leader", "status-set"]`).
    pub fn calls(&self) -> Vec<String> {
        self.model().calls.clone()
    }

    /// How many calls of one tool were made.
    pub fn call_count(&self, tool: &str) -> usize {
        self.model().calls.iter().filter(|c| *c == tool).count()
    }

    /// Records a call and returns the locked model.
    pub(crate) fn call(&self, tool: &str) -> MutexGuard<'_, Model> {
        let mut model = self.model();
        model.calls.push(tool.to_owned());
        model
    }
}

impl Model {
    /// The relation for `-r endpoint:id`; a mismatched endpoint is "not found" like a strict Juju.
    fn relation(
        &mut self,
        tool: &str,
        id: &RelationId,
    ) -> Result<&mut MemoryRelation, HookToolError> {
        self.relations
            .get_mut(id)
            .ok_or_else(|| HookToolError::RelationNotFound {
                tool: tool.to_owned(),
                stderr: format!("invalid value \"{id}\" for option -r: relation not found"),
            })
    }
}

impl ModelBackend for MemoryBackend {
    fn relation_ids(&self, endpoint: &str) -> Result<Vec<RelationId>, HookToolError> {
        let model = self.call("relation-ids");
        Ok(model
            .relations
            .values()
            .filter(|r| r.id.endpoint == endpoint && !r.broken)
            .map(|r| r.id.clone())
            .collect())
    }

    fn relation_list(&self, rel: &RelationId) -> Result<Vec<String>, HookToolError> {
        let mut model = self.call("relation-list");
        let unit = model.unit.clone();
        let relation = model.relation("relation-list", rel)?;
        if relation.broken {
            return Ok(Vec::new());
        }
        Ok(relation
            .remote_units
            .keys()
            .filter(|u| **u != unit)
            .cloned()
            .collect())
    }

    fn relation_remote_app(&self, rel: &RelationId) -> Result<String, HookToolError> {
        let mut model = self.call("relation-list");
        Ok(model.relation("relation-list", rel)?.remote_app.clone())
    }

    fn relation_get(&self, rel: &RelationId, owner: &BagOwner) -> Result<Bag, HookToolError> {
        let tool = "relation-get";
        let mut model = self.call(tool);
        let (unit, app, leader) = (model.unit.clone(), model.app.clone(), model.leader);
        let relation = model.relation(tool, rel)?;
        match owner {
            BagOwner::Unit(name) if *name == unit => Ok(relation.local_unit_data.clone()),
            BagOwner::Unit(name) => relation
                .remote_units
                .get(name)
                .or_else(|| relation.departed_units.get(name))
                .cloned()
                .ok_or_else(|| HookToolError::Other {
                    tool: tool.to_owned(),
                    status: "exit code 1".to_owned(),
                    stderr: format!(
                        "cannot read settings for unit \"{name}\" in relation \"{rel}\": unit not found"
                    ),
                }),
            BagOwner::App(name) if *name == app => {
                if relation.is_peer || leader {
                    Ok(relation.local_app_data.clone())
                } else {
                    Err(HookToolError::PermissionDenied {
                        tool: tool.to_owned(),
                        stderr: "permission denied".to_owned(),
                    })
                }
            }
            BagOwner::App(name) if *name == relation.remote_app => {
                Ok(relation.remote_app_data.clone())
            }
            BagOwner::App(name) => Err(HookToolError::Other {
                tool: tool.to_owned(),
                status: "exit code 1".to_owned(),
                stderr: format!("application \"{name}\" is not part of relation \"{rel}\""),
            }),
        }
    }

    fn relation_set(&self, rel: &RelationId, app: bool, data: &Bag) -> Result<(), HookToolError> {
        let tool = "relation-set";
        let mut model = self.call(tool);
        let leader = model.leader;
        let relation = model.relation(tool, rel)?;
        if app && !leader {
            return Err(HookToolError::NotLeader {
                tool: tool.to_owned(),
                stderr: "cannot write relation settings".to_owned(),
            });
        }
        let bag = if app {
            &mut relation.local_app_data
        } else {
            &mut relation.local_unit_data
        };
        for (key, value) in data {
            if value.is_empty() {
                bag.remove(key);
            } else {
                bag.insert(key.clone(), value.clone());
            }
        }
        Ok(())
    }

    fn config_get(&self) -> Result<Map<String, Value>, HookToolError> {
        Ok(self.call("config-get").config.clone())
    }

    fn is_leader(&self) -> Result<bool, HookToolError> {
        Ok(self.call("is-leader").leader)
    }

    fn status_set(&self, scope: StatusScope, status: &Status) -> Result<(), HookToolError> {
        let mut model = self.call("status-set");
        match scope {
            StatusScope::Unit => model.unit_status.push(status.clone()),
            StatusScope::Application if model.leader => model.app_status.push(status.clone()),
            StatusScope::Application => {
                return Err(HookToolError::NotLeader {
                    tool: "status-set".to_owned(),
                    stderr: "this unit is not the leader".to_owned(),
                });
            }
        }
        Ok(())
    }

    fn application_version_set(&self, version: &str) -> Result<(), HookToolError> {
        self.call("application-version-set").workload_version = Some(version.to_owned());
        Ok(())
    }

    fn juju_log(&self, level: LogLevel, message: &str) -> Result<(), HookToolError> {
        self.call("juju-log").logs.push((level, message.to_owned()));
        Ok(())
    }

    fn action_get(&self) -> Result<Map<String, Value>, HookToolError> {
        let model = self.call("action-get");
        model
            .action_params
            .clone()
            .ok_or_else(|| err_not_in_action("action-get"))
    }

    fn action_set(&self, results: &BTreeMap<String, String>) -> Result<(), HookToolError> {
        let mut model = self.call("action-set");
        if model.action_params.is_none() {
            return Err(err_not_in_action("action-set"));
        }
        for key in results.keys() {
            validate_action_result_key(key).map_err(|e| HookToolError::Usage {
                tool: "action-set".to_owned(),
                stderr: e.to_string(),
            })?;
        }
        model
            .action_results
            .extend(results.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(())
    }

    fn action_fail(&self, message: &str) -> Result<(), HookToolError> {
        let mut model = self.call("action-fail");
        if model.action_params.is_none() {
            return Err(err_not_in_action("action-fail"));
        }
        model.action_failure = Some(message.to_owned());
        Ok(())
    }

    fn action_log(&self, message: &str) -> Result<(), HookToolError> {
        let mut model = self.call("action-log");
        if model.action_params.is_none() {
            return Err(err_not_in_action("action-log"));
        }
        model.action_logs.push(message.to_owned());
        Ok(())
    }

    fn state_get(&self) -> Result<BTreeMap<String, String>, HookToolError> {
        Ok(self.call("state-get").state.clone())
    }

    fn state_set(&self, data: &BTreeMap<String, String>) -> Result<(), HookToolError> {
        let mut model = self.call("state-set");
        for (key, value) in data {
            if key.len() > STATE_MAX_KEY || value.len() > STATE_MAX_VALUE {
                return Err(HookToolError::Other {
                    tool: "state-set".to_owned(),
                    status: "exit code 1".to_owned(),
                    stderr: format!(
                        "max allowed key length ({STATE_MAX_KEY}) or value length ({STATE_MAX_VALUE}) exceeded for key {key:?}"
                    ),
                });
            }
        }
        model
            .state
            .extend(data.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(())
    }

    fn state_delete(&self, key: &str) -> Result<(), HookToolError> {
        self.call("state-delete").state.remove(key);
        Ok(())
    }

    /// The output set by [`MemoryBackend::goal_state_output`], else derived from the model as
    /// Juju does: this unit (its last status, else `unknown`);
    /// per endpoint of each live non-peer relation the remote application (`joined`) and its
    /// units in the relation (`active`), plus the planned units not yet in it (`waiting`).
    fn goal_state(&self) -> Result<GoalState, HookToolError> {
        let m = self.call("goal-state");
        if let Some(out) = &m.goal_state_output {
            return GoalState::from_json("goal-state", out);
        }
        let goal = |status: &str| Goal {
            status: status.to_owned(),
            since: "2025-03-01 10:00:00Z".to_owned(),
        };
        let own = m.unit_status.last().map_or("unknown", |s| s.kind.as_str());
        let mut state = GoalState::default();
        state.units.insert(m.unit.clone(), goal(own));
        for rel in m.relations.values().filter(|r| !r.is_peer && !r.broken) {
            let entry = state.relations.entry(rel.id.endpoint.clone()).or_default();
            entry.insert(rel.remote_app.clone(), goal("joined"));
            for unit in rel.remote_units.keys() {
                entry.insert(unit.clone(), goal("active"));
            }
        }
        for (endpoint, units) in &m.planned_remote {
            let entry = state.relations.entry(endpoint.clone()).or_default();
            for unit in units {
                entry.entry(unit.clone()).or_insert_with(|| goal("waiting"));
            }
        }
        Ok(state)
    }
}

impl NetworkBackend for MemoryBackend {
    fn network_get(
        &self,
        binding: &str,
        relation: Option<&RelationId>,
    ) -> Result<NetworkInfo, HookToolError> {
        let mut model = self.call("network-get");
        if let Some(rel) = relation {
            model.relation("network-get", rel)?;
        }
        model
            .networks
            .get(binding)
            .cloned()
            .ok_or_else(|| HookToolError::Other {
                tool: "network-get".to_owned(),
                status: "exit code 1".to_owned(),
                stderr: format!("undefined for unit charm: endpoint \"{binding}\" not valid"),
            })
    }

    fn open_port(&self, port: Port) -> Result<(), HookToolError> {
        self.call("open-port").ports.insert(port);
        Ok(())
    }

    fn close_port(&self, port: Port) -> Result<(), HookToolError> {
        self.call("close-port").ports.remove(&port);
        Ok(())
    }

    fn opened_ports(&self) -> Result<Vec<Port>, HookToolError> {
        Ok(self.call("opened-ports").ports.iter().copied().collect())
    }

    fn juju_reboot(&self, now: bool) -> Result<(), HookToolError> {
        let mut model = self.call("juju-reboot");
        if model.action_params.is_some() {
            return Err(HookToolError::Other {
                tool: "juju-reboot".to_owned(),
                status: "exit code 1".to_owned(),
                stderr: "juju-reboot is not supported when running an action.".to_owned(),
            });
        }
        model.reboot = Some(now);
        Ok(())
    }
}
