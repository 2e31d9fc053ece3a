//! The simulator: the model, the hook queue, and the unit agent that runs `dispatch`.

mod action;
mod bench;
mod commit;
mod deploy;
mod exec;
pub mod hooks;
mod ops;
mod process;
mod queue;
mod secrets;

pub use action::ActionResult;
pub use bench::BenchResult;
pub use deploy::DeploySpec;
pub use hooks::{Hook, Queued};

use crate::context::ToolCall;
use crate::error::{Result, SimError};
use crate::model::{Bag, LogEntry, Model, PortRange, Status, UnitExtras};
use crate::server::{Server, Shared, lock};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Produces a unit's test-only extras from its name (e.g. a per-unit `SLURM_CHARMS_ROOT`).
pub type ExtrasFn = Arc<dyn Fn(&str) -> UnitExtras + Send + Sync>;

/// One hook or action run, as recorded by the simulator.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookRecord {
    /// Unit name.
    pub unit: String,
    /// Hook name (`install`, `db-relation-changed`) or action name.
    pub hook: String,
    /// Whether this was an action.
    pub action: bool,
    /// `JUJU_REMOTE_UNIT` for relation hooks (empty otherwise).
    pub remote_unit: String,
    /// The full environment (empty when env recording is off).
    pub env: Vec<(String, String)>,
    /// Tool calls made, in order.
    pub calls: Vec<ToolCall>,
    /// Exit code (`None`: no handler, hook skipped; `Some(-1)`: killed by a signal).
    pub code: Option<i32>,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Wall time of the process.
    pub duration: Duration,
    /// Why committing the hook's changes failed after it exited 0 (e.g. a secret change the
    /// unit may not make); the unit is then in error.
    pub commit_error: Option<String>,
}

impl HookRecord {
    /// Whether the hook exited 0 (or was skipped for lack of a handler) and its changes
    /// committed.
    pub fn succeeded(&self) -> bool {
        matches!(self.code, None | Some(0)) && self.commit_error.is_none()
    }
    /// The value of one environment variable, if recorded.
    pub fn env_var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Options for a new simulator.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Model name (`JUJU_MODEL_NAME`).
    pub model_name: String,
    /// The `jujuc` executable (default: [`crate::jujuc_path`]).
    pub jujuc: Option<PathBuf>,
    /// Record every hook's environment (default true; turn off for large benchmarks).
    pub record_env: bool,
    /// Keep juju-log and hook output lines (default true).
    pub keep_logs: bool,
    /// Upper bound on hooks run by one settle (guards against ping-pong charms).
    pub max_hooks_per_settle: usize,
    /// How many hooks may run at once on different units (default 1: fully serial and
    /// deterministic). Each unit still runs one hook at a time, in queue order; a batch's
    /// changes are committed in queue order after the whole batch finished.
    pub parallelism: usize,
    /// Kill a hook or action that runs longer than this (default: no limit, like Juju).
    pub hook_timeout: Option<Duration>,
    /// Juju <= 3.6 behaviour: run `leader-settings-changed` on each non-leader unit after
    /// install (where the leader gets `leader-elected`). Default false (Juju 4 never sends it).
    pub leader_settings_changed: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            model_name: "sim".into(),
            jujuc: None,
            record_env: true,
            keep_logs: true,
            max_hooks_per_settle: 1_000_000,
            parallelism: 1,
            hook_timeout: None,
            leader_settings_changed: false,
        }
    }
}

/// A simulated Juju model with its unit agents.
pub struct Simulator {
    shared: Arc<Mutex<Shared>>,
    server: Server,
    _dir: tempfile::TempDir,
    tools_dir: PathBuf,
    queue: VecDeque<Queued>,
    queued_changed: HashSet<(String, u32, Option<String>)>,
    failed: BTreeMap<String, Queued>,
    records: Vec<HookRecord>,
    opts: SimOptions,
    next_action: u32,
    ctx_counter: u64,
    app_templates: BTreeMap<String, (UnitExtras, Option<ExtrasFn>)>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("socket", &self.server.path())
            .field("queue", &self.queue.len())
            .finish()
    }
}

impl Simulator {
    /// A simulator with default options.
    pub fn new() -> Result<Self> {
        Self::with_options(SimOptions::default())
    }

    /// A simulator with the given options: creates a private temp dir holding the agent socket
    /// and the tools dir (symlinks to `jujuc`), and starts the tool server.
    pub fn with_options(opts: SimOptions) -> Result<Self> {
        let jujuc = match &opts.jujuc {
            Some(p) => p.clone(),
            None => crate::jujuc::jujuc_path().map_err(SimError::Jujuc)?,
        };
        let dir = tempfile::Builder::new()
            .prefix("juju-sim-")
            .tempdir()
            .map_err(|source| SimError::Spawn {
                what: "temp dir".into(),
                source,
            })?;
        let tools_dir = dir.path().join("tools");
        std::fs::create_dir(&tools_dir).map_err(|source| SimError::Io {
            path: tools_dir.clone(),
            source,
        })?;
        for name in crate::tools::TOOL_NAMES {
            let link = tools_dir.join(name);
            std::os::unix::fs::symlink(&jujuc, &link)
                .map_err(|source| SimError::Io { path: link, source })?;
        }
        let model = Model {
            name: opts.model_name.clone(),
            uuid: "d6b2b8f3-5c1e-4c8e-9a3b-6a7f0e1c2d3e".into(),
            keep_logs: opts.keep_logs,
            now: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
            ..Model::default()
        };
        let shared = Arc::new(Mutex::new(Shared {
            model,
            contexts: Default::default(),
        }));
        let socket = dir.path().join("agent.socket");
        let server = Server::start(&socket, shared.clone()).map_err(|source| SimError::Spawn {
            what: "hook-tool server".into(),
            source,
        })?;
        Ok(Simulator {
            shared,
            server,
            _dir: dir,
            tools_dir,
            queue: VecDeque::new(),
            queued_changed: HashSet::new(),
            failed: BTreeMap::new(),
            records: Vec::new(),
            opts,
            next_action: 1,
            ctx_counter: 0,
            app_templates: BTreeMap::new(),
        })
    }

    /// The directory holding the hook-tool symlinks.
    pub fn tools_dir(&self) -> &Path {
        &self.tools_dir
    }

    /// Read the model under the lock.
    pub fn with_model<R>(&self, f: impl FnOnce(&Model) -> R) -> R {
        f(&lock(&self.shared).model)
    }

    /// Change the model under the lock (for tests that need a state the API does not offer).
    pub fn with_model_mut<R>(&self, f: impl FnOnce(&mut Model) -> R) -> R {
        f(&mut lock(&self.shared).model)
    }

    /// Not Juju (test-only): makes the next call of hook tool `tool` by `unit` fail once with
    /// exit 1 and `ERROR <tool> failed (failure injected by the simulator)`, as a transient
    /// agent error would. The hook's handler then sees a failing tool; if it exits non-zero,
    /// the hook's deferred changes are discarded like any failed hook's.
    pub fn fail_next_tool_call(&self, unit: &str, tool: &str) {
        self.with_model_mut(|m| {
            m.injected_failures.push((unit.to_owned(), tool.to_owned()));
        });
    }

    /// Every hook and action run so far.
    pub fn records(&self) -> &[HookRecord] {
        &self.records
    }

    /// Forget the recorded hooks (e.g. between benchmark phases).
    pub fn clear_records(&mut self) {
        self.records.clear();
    }

    /// All log lines (juju-log, hook stdout at DEBUG and stderr at WARNING).
    pub fn logs(&self) -> Vec<LogEntry> {
        self.with_model(|m| m.logs.clone())
    }

    /// A unit's displayed workload status: `error` with `hook failed: "<hook>"` while in error.
    pub fn unit_status(&self, unit: &str) -> Option<Status> {
        self.with_model(|m| {
            m.units.get(unit).map(|u| match &u.error {
                Some(e) => Status::new("error", e, u.status.since),
                None => u.status.clone(),
            })
        })
    }

    /// A unit's workload status history.
    pub fn unit_status_history(&self, unit: &str) -> Vec<Status> {
        self.with_model(|m| {
            m.units
                .get(unit)
                .map(|u| u.status_history.clone())
                .unwrap_or_default()
        })
    }

    /// An application's status as set by its leader.
    pub fn app_status(&self, app: &str) -> Option<Status> {
        self.with_model(|m| m.apps.get(app).and_then(|a| a.status.clone()))
    }

    /// Whether a unit is in error (a hook failed and was not resolved).
    pub fn is_error(&self, unit: &str) -> bool {
        self.with_model(|m| m.units.get(unit).is_some_and(|u| u.error.is_some()))
    }

    /// The leader of an application.
    pub fn leader(&self, app: &str) -> Option<String> {
        self.with_model(|m| m.apps.get(app).and_then(|a| a.leader.clone()))
    }

    /// Unit names of an application, sorted by unit number.
    pub fn units(&self, app: &str) -> Vec<String> {
        self.with_model(|m| {
            let mut v: Vec<String> = m
                .apps
                .get(app)
                .map(|a| a.units.iter().cloned().collect())
                .unwrap_or_default();
            v.sort_by_key(|u| unit_number(u));
            v
        })
    }

    /// The id of the (first) relation between two applications.
    pub fn relation_id(&self, a: &str, b: &str) -> Option<u32> {
        self.with_model(|m| {
            m.relations
                .values()
                .find(|r| {
                    let apps = [r.sides[0].app.as_str(), r.sides[1].app.as_str()];
                    apps == [a, b] || apps == [b, a]
                })
                .map(|r| r.id)
        })
    }

    /// A unit's committed bag in a relation.
    pub fn unit_bag(&self, rel: u32, unit: &str) -> Bag {
        self.with_model(|m| {
            m.relations
                .get(&rel)
                .and_then(|r| r.unit_bags.get(unit).cloned())
                .unwrap_or_default()
        })
    }

    /// An application's committed bag in a relation.
    pub fn app_bag(&self, rel: u32, app: &str) -> Bag {
        self.with_model(|m| {
            m.relations
                .get(&rel)
                .and_then(|r| r.app_bags.get(app).cloned())
                .unwrap_or_default()
        })
    }

    /// A unit's committed state store (`state-set`).
    pub fn unit_state(&self, unit: &str) -> Bag {
        self.with_model(|m| {
            m.units
                .get(unit)
                .map(|u| u.state.clone())
                .unwrap_or_default()
        })
    }

    /// A unit's opened ports, as `opened-ports` prints them.
    pub fn opened_ports(&self, unit: &str) -> Vec<String> {
        self.with_model(|m| {
            m.units
                .get(unit)
                .map(|u| u.ports.keys().map(PortRange::to_string).collect())
                .unwrap_or_default()
        })
    }

    /// A unit's workload version.
    pub fn workload_version(&self, unit: &str) -> String {
        self.with_model(|m| {
            m.units
                .get(unit)
                .map(|u| u.workload_version.clone())
                .unwrap_or_default()
        })
    }

    /// A unit's address (also its `private-address` in relation bags).
    pub fn unit_address(&self, unit: &str) -> Option<String> {
        self.with_model(|m| m.units.get(unit).map(|u| u.address.clone()))
    }

    /// Number of queued operations.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Set a unit's test-only extras (env, PATH dirs, command prefix) for its next hooks.
    pub fn set_unit_extras(&mut self, unit: &str, extras: UnitExtras) -> Result<()> {
        self.with_model_mut(|m| match m.units.get_mut(unit) {
            Some(u) => {
                u.extras = extras;
                Ok(())
            }
            None => Err(SimError::UnitNotFound(unit.to_owned())),
        })
    }
}

/// The number after `/` in a unit name (0 when malformed).
pub fn unit_number(unit: &str) -> u32 {
    unit.rsplit('/')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
