//! The in-memory Juju model: applications, units, relations and their data.

use crate::charm::{Charm, Role};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// A string-to-string data bag (relation data, unit state).
pub type Bag = BTreeMap<String, String>;

/// A workload status value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    /// `active`, `blocked`, `maintenance`, `waiting`, `unknown`, `error`, `terminated`.
    pub status: String,
    /// Free-form message.
    pub message: String,
    /// Logical time of the change (simulator clock tick).
    pub since: u64,
}

impl Status {
    /// A status with a message at logical time `since`.
    pub fn new(status: &str, message: &str, since: u64) -> Self {
        Status {
            status: status.to_owned(),
            message: message.to_owned(),
            since,
        }
    }
}

/// A deployed application.
#[derive(Debug, Clone)]
pub struct Application {
    /// Application name.
    pub name: String,
    /// Its charm.
    pub charm: Charm,
    /// Values set with `set_config` (defaults are in the charm).
    pub config: BTreeMap<String, Json>,
    /// Next unit number.
    pub next_unit: u32,
    /// Current leader, if any.
    pub leader: Option<String>,
    /// Application status set by the leader (`status-set --application`).
    pub status: Option<Status>,
    /// Application status history.
    pub status_history: Vec<Status>,
    /// Unit names, sorted.
    pub units: BTreeSet<String>,
}

impl Application {
    /// Effective config: defaults overlaid with set values (null values omitted).
    pub fn effective_config(&self) -> BTreeMap<String, Json> {
        let mut out = BTreeMap::new();
        for (k, opt) in &self.charm.options {
            if let Some(d) = &opt.default {
                out.insert(k.clone(), d.clone());
            }
        }
        for (k, v) in &self.config {
            if v.is_null() {
                out.remove(k);
            } else {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

/// Life cycle of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Running normally.
    Alive,
    /// `remove-unit` issued; teardown hooks queued.
    Dying,
}

/// Test-only extensions of a unit's hook execution (not Juju behaviour).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnitExtras {
    /// Extra environment variables for every hook of this unit.
    pub env: BTreeMap<String, String>,
    /// Extra PATH directories, placed right after the tools dir.
    pub path: Vec<PathBuf>,
    /// argv to put before `dispatch` (e.g. `nsenter --net=/run/netns/x --`).
    pub command_prefix: Vec<String>,
}

/// One open port range (or ICMP).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortRange {
    /// First port (0 for icmp).
    pub from: u16,
    /// Last port (0 for icmp).
    pub to: u16,
    /// `tcp`, `udp` or `icmp`.
    pub protocol: String,
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.protocol == "icmp" {
            write!(f, "icmp")
        } else if self.from == self.to {
            write!(f, "{}/{}", self.from, self.protocol)
        } else {
            write!(f, "{}-{}/{}", self.from, self.to, self.protocol)
        }
    }
}

/// A unit.
#[derive(Debug, Clone)]
pub struct Unit {
    /// `app/n`.
    pub name: String,
    /// Application name.
    pub app: String,
    /// Machine id.
    pub machine: String,
    /// The unit's address (private, ingress, bind).
    pub address: String,
    /// Workload status.
    pub status: Status,
    /// Whether the charm ever called `status-set` for the unit.
    pub status_set_by_charm: bool,
    /// Workload status history (every change, including Juju's own).
    pub status_history: Vec<Status>,
    /// Wall-clock time (seconds) of the last workload status change (`goal-state` `since`).
    pub status_at: i64,
    /// Set when a hook failed: `hook failed: "<hook>"`.
    pub error: Option<String>,
    /// Workload version (`application-version-set`).
    pub workload_version: String,
    /// Unit state (`state-set`).
    pub state: Bag,
    /// Opened ports (with their endpoints; empty set = all endpoints).
    pub ports: BTreeMap<PortRange, BTreeSet<String>>,
    /// Life.
    pub life: Life,
    /// Whether `start` ran.
    pub started: bool,
    /// Reboots requested with `juju-reboot` and committed.
    pub reboots: u32,
    /// Test-only extensions.
    pub extras: UnitExtras,
}

/// What a unit knows of one relation it takes part in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Participation {
    /// `relation-created` has been queued for this unit.
    pub created: bool,
    /// `relation-created` has started for this unit (the relation shows in `relation-ids`).
    pub entered: bool,
    /// `relation-broken` ran (or is running) for this unit.
    pub broken: bool,
    /// Remote units in this unit's `relation-list` (joined and not departed).
    pub members: BTreeSet<String>,
    /// Remote units for which `relation-joined` is queued but has not run yet.
    pub joining: BTreeSet<String>,
}

/// One side of a relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationSide {
    /// Application.
    pub app: String,
    /// Endpoint name on that application.
    pub endpoint: String,
}

/// A relation between two applications (or a peer relation of one).
#[derive(Debug, Clone)]
pub struct Relation {
    /// Relation id.
    pub id: u32,
    /// Interface.
    pub interface: String,
    /// The two sides (equal for a peer relation).
    pub sides: [RelationSide; 2],
    /// Application bags by app name.
    pub app_bags: BTreeMap<String, Bag>,
    /// How often each app bag was changed (0 = never written).
    pub app_bag_versions: BTreeMap<String, u64>,
    /// Unit bags by unit name (kept after the unit departs).
    pub unit_bags: BTreeMap<String, Bag>,
    /// Units in scope and what they know.
    pub scope: BTreeMap<String, Participation>,
    /// `remove_relation` was issued.
    pub dying: bool,
    /// Wall-clock time (seconds) of the relation's status (`joining`, then `joined`).
    pub status_at: i64,
    /// A leader of either application has entered scope (`goal-state` shows `joined`).
    pub joined: bool,
}

impl Relation {
    /// Whether this is a peer relation.
    pub fn is_peer(&self) -> bool {
        self.sides[0] == self.sides[1]
    }

    /// The side of `app`, if it takes part.
    pub fn side_of(&self, app: &str) -> Option<&RelationSide> {
        self.sides.iter().find(|s| s.app == app)
    }

    /// The application on the other side from `app` (own app for peers).
    pub fn remote_app(&self, app: &str) -> Option<&str> {
        if self.sides[0].app == app {
            Some(&self.sides[1].app)
        } else if self.sides[1].app == app {
            Some(&self.sides[0].app)
        } else {
            None
        }
    }

    /// `<endpoint>:<id>` as seen from `app`.
    pub fn key_for(&self, app: &str) -> String {
        let ep = self.side_of(app).map(|s| s.endpoint.as_str()).unwrap_or("");
        format!("{ep}:{}", self.id)
    }
}

/// One `juju-log` or hook-output line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogEntry {
    /// Unit.
    pub unit: String,
    /// Hook or action name.
    pub hook: String,
    /// `DEBUG`, `INFO`, `WARNING`, `ERROR`, `TRACE`.
    pub level: String,
    /// The message (relation hooks: prefixed `<endpoint>:<id>: ` as Juju does).
    pub message: String,
}

/// The whole model.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Model name.
    pub name: String,
    /// Model UUID.
    pub uuid: String,
    /// Applications by name.
    pub apps: BTreeMap<String, Application>,
    /// Units by name.
    pub units: BTreeMap<String, Unit>,
    /// Relations by id.
    pub relations: BTreeMap<u32, Relation>,
    /// Relation ids per unit (for O(1)-ish lookups of a unit's relations).
    pub next_relation_id: u32,
    /// Next machine number.
    pub next_machine: u32,
    /// Logical clock.
    pub clock: u64,
    /// All log lines.
    pub logs: Vec<LogEntry>,
    /// Keep hook-output and juju-log lines in `logs` (default true).
    pub keep_logs: bool,
    /// Wall clock, seconds since the Unix epoch: the real time when the simulator started,
    /// moved on only by `advance_time` (so runs are repeatable).
    pub now: i64,
    /// Secrets, their readers and the secret hooks to queue.
    pub secrets: crate::secrets::SecretStore,
    /// Not Juju (test-only): one-off hook-tool failures still to inject, as (unit, tool). The
    /// next call of `tool` by `unit` fails with exit 1 instead of running; see
    /// `Simulator::fail_next_tool_call`.
    pub injected_failures: Vec<(String, String)>,
}

impl Model {
    /// Advance the logical clock.
    pub fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Whether `unit` is its application's leader.
    pub fn is_leader(&self, unit: &str) -> bool {
        self.units
            .get(unit)
            .and_then(|u| self.apps.get(&u.app))
            .is_some_and(|a| a.leader.as_deref() == Some(unit))
    }

    /// Set a unit's workload status (records history).
    pub fn set_unit_status(&mut self, unit: &str, status: &str, message: &str) {
        let since = self.tick();
        let now = self.now;
        if let Some(u) = self.units.get_mut(unit) {
            let s = Status::new(status, message, since);
            u.status_at = now;
            u.status = s.clone();
            u.status_history.push(s);
        }
    }

    /// The unit that handles a secret's owner hooks: the unit, or the app's leader.
    pub fn secret_owner_unit(&self, owner: &crate::secrets::SecretOwner) -> Option<String> {
        match owner {
            crate::secrets::SecretOwner::App(a) => self.apps.get(a).and_then(|a| a.leader.clone()),
            crate::secrets::SecretOwner::Unit(u) => self.units.contains_key(u).then(|| u.clone()),
        }
    }

    /// The units of an application.
    pub fn units_of_app(&self, app: &str) -> Vec<String> {
        self.apps
            .get(app)
            .map(|a| a.units.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The application of a unit.
    pub fn app_of(&self, unit: &str) -> Option<String> {
        self.units.get(unit).map(|u| u.app.clone())
    }

    /// Relations of `app` on `endpoint`, sorted by id.
    pub fn relations_on(&self, app: &str, endpoint: &str) -> Vec<u32> {
        self.relations
            .values()
            .filter(|r| {
                r.sides
                    .iter()
                    .any(|s| s.app == app && s.endpoint == endpoint)
            })
            .map(|r| r.id)
            .collect()
    }

    /// Relation ids a unit takes part in.
    pub fn relations_of_unit(&self, unit: &str) -> Vec<u32> {
        self.relations
            .values()
            .filter(|r| r.scope.contains_key(unit))
            .map(|r| r.id)
            .collect()
    }

    /// Endpoints of `app` with the given role.
    pub fn endpoints_with_role(&self, app: &str, role: Role) -> Vec<String> {
        self.apps
            .get(app)
            .map(|a| {
                a.charm
                    .endpoints
                    .values()
                    .filter(|e| e.role == role)
                    .map(|e| e.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}
