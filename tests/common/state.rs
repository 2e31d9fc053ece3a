//! State-in/state-out runs of one hook of these charms, the way `ops.testing` (Scenario) tests
//! charms: a [`State`] value holds everything a hook can see (config, leadership, relation
//! bags, unit state, action parameters, host files, what commands print) and [`run`] returns
//! the `State` after the event, with what the hook changed (bags, unit state, files, status)
//! and did (commands run, action results).
//!
//! The Juju side is `juju_runtime_testing::Context::run`; this adds what only these charms
//! have, their host seam: files under a scratch root and the commands they run.

use super::RecordingRunner;
use juju_runtime::{Event, HookContext, RelationId, SecretId, Status};
use juju_runtime_testing::{Context, MemoryBackend, MemoryRelation, MemorySecret};
use serde_json::{Map, Value};
use slurm_charms::charms::{CharmError, CharmKind, CmdOutput, Host, run_with};
use std::collections::BTreeMap;
use std::path::Path;

/// Everything one hook sees and, after [`run`], everything it left behind.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// The unit running the hook, e.g. `slurmctld/0`.
    pub unit: String,
    /// Leadership.
    pub leader: bool,
    /// `config-get`.
    pub config: Map<String, Value>,
    /// Relations as this unit sees them (the local bags included).
    pub relations: Vec<MemoryRelation>,
    /// The unit's stored state (`state-get`).
    pub unit_state: BTreeMap<String, String>,
    /// `action-get` when the event is an action.
    pub action_params: Option<Map<String, Value>>,
    /// Host files by host path (`/etc/slurm/slurm.conf`), under a scratch `SLURM_CHARMS_ROOT`.
    pub files: BTreeMap<String, Vec<u8>>,
    /// What commands print, by command-line prefix (anything else succeeds silently).
    pub command_outputs: Vec<(String, CmdOutput)>,
    /// Juju secrets this unit owns or was granted (in: as seeded; out: after the hook).
    pub secrets: BTreeMap<SecretId, MemorySecret>,
    /// The unit status: in, the one Juju shows before the event; out, the one the hook set
    /// last, or the same as in when it set none.
    pub status: Option<Status>,
    /// Out: the command lines the hook ran.
    pub commands_run: Vec<String>,
    /// Out: `action-set` results.
    pub action_results: BTreeMap<String, String>,
    /// Out: the `action-fail` message.
    pub action_failure: Option<String>,
    /// Out: the hook tools the hook called, in order.
    pub calls: Vec<String>,
}

impl State {
    /// The state of relation `id`.
    pub fn relation(&self, id: &RelationId) -> &MemoryRelation {
        self.relations
            .iter()
            .find(|r| r.id == *id)
            .expect("relation in the state")
    }

    /// A host file as text.
    pub fn text(&self, path: &str) -> String {
        String::from_utf8_lossy(&self.files[path]).into_owned()
    }

    /// The Juju side of this state, as the runtime's harness takes it.
    fn juju(&self) -> juju_runtime_testing::State {
        juju_runtime_testing::State {
            leader: self.leader,
            config: self.config.clone(),
            relations: self.relations.clone(),
            unit_state: self.unit_state.clone(),
            secrets: self.secrets.clone(),
            action_params: self.action_params.clone(),
            unit_status: self.status.clone(),
            ..juju_runtime_testing::State::default()
        }
    }
}

/// Runs `event` of `kind` against `state` and returns the state afterwards.
pub fn run(kind: CharmKind, event: Event, state: &State) -> Result<State, CharmError> {
    let (result, out) = run_to_end(kind, event, state);
    result.map(|()| out)
}

/// [`run`] for a hook that may fail: the state it left is returned either way (what a failed
/// hook wrote on the host stays there; unlike Juju, the in-memory backend keeps its hook-tool
/// writes too).
pub fn run_to_end(kind: CharmKind, event: Event, state: &State) -> (Result<(), CharmError>, State) {
    let root = tempfile::tempdir().expect("scratch root");
    for (path, bytes) in &state.files {
        let full = root.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("dir");
        std::fs::write(full, bytes).expect("file");
    }
    let runner = RecordingRunner::default();
    for (prefix, out) in &state.command_outputs {
        runner.answer(prefix, out.clone());
    }
    let host = Host::new(root.path(), &runner);
    let charm = |ctx: &HookContext, backend: &MemoryBackend| run_with(kind, ctx, backend, &host);
    let ctx = Context::new(&state.unit, charm).model_name("state-test");
    let (result, juju) = ctx.run_to_end(event, state.juju());
    let out = State {
        unit: state.unit.clone(),
        leader: juju.leader,
        config: juju.config,
        relations: juju.relations,
        unit_state: juju.unit_state,
        action_params: juju.action_params,
        files: read_tree(root.path()),
        command_outputs: state.command_outputs.clone(),
        secrets: juju.secrets,
        status: juju.unit_status,
        commands_run: runner.lines(),
        action_results: juju.action_results,
        action_failure: juju.action_failure,
        calls: juju.calls,
    };
    (result, out)
}

/// Every file under `root`, by host path.
fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let rel = path.strip_prefix(root).expect("under root");
                out.insert(format!("/{}", rel.display()), bytes);
            }
        }
    }
    out
}

/// What `slurmd -C` prints on the small test host `n0` (4 CPUs, 8000 MB).
pub const SLURMD_C_N0: &str = "NodeName=n0 CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8000\n";

/// A command that exits 0 printing `stdout`, as a [`State::command_outputs`] entry.
pub fn prints(command: &str, stdout: &str) -> (String, CmdOutput) {
    let out = CmdOutput {
        code: Some(0),
        stdout: stdout.into(),
        ..Default::default()
    };
    (command.into(), out)
}

/// The leader `slurmctld/0` on host `ctl-0` with Slurm 22.05.8, related on `slurmd:4` to the
/// application `compute` (partition `compute`, `State=UP`), whose units publish the given
/// raw `node` values: the controller most state tests start from.
pub fn controller<S: AsRef<str>>(units: &[(&str, S)]) -> (State, RelationId) {
    let rel = RelationId::new("slurmd", 4);
    let mut relation = MemoryRelation::new("slurmd", 4, "compute").remote_app_data(
        juju_runtime_testing::bag([("partition", r#"{"compute":{"State":"UP"}}"#)]),
    );
    for (unit, raw) in units {
        relation = relation.remote_unit(unit, juju_runtime_testing::bag([("node", raw.as_ref())]));
    }
    let state = State {
        unit: "slurmctld/0".into(),
        leader: true,
        relations: vec![relation],
        files: [("/proc/sys/kernel/hostname".to_string(), b"ctl-0\n".to_vec())].into(),
        command_outputs: vec![prints("slurmctld -V", "slurm-wlm 22.05.8\n")],
        ..State::default()
    };
    (state, rel)
}

/// [`controller`] for units given as owned `(unit, node value)` pairs, after its first
/// `relation-changed` (from the first unit): the relation cache is built and the files written.
pub fn settled_controller(units: &[(String, String)]) -> (State, RelationId) {
    let units: Vec<(&str, &str)> = units
        .iter()
        .map(|(u, v)| (u.as_str(), v.as_str()))
        .collect();
    let (state, rel) = controller(&units);
    let first = units.first().map(|(u, _)| *u);
    let event = super::changed(&rel, "compute", first);
    let state = run(CharmKind::Slurmctld, event, &state).expect("the first controller hook");
    (state, rel)
}

/// A slurmd unit `compute/0` (not leader) on host `n0` ([`SLURMD_C_N0`]) with `config`,
/// related on `slurmctld:1` to a controller whose `cluster_info` names the munge key secret
/// it was granted: a node that can configure itself.
pub fn configured_node(config: Map<String, Value>) -> (State, RelationId) {
    use slurm_charms::interface::{ClusterInfo, MungeKeyRef};
    let rel = RelationId::new("slurmctld", 1);
    let id = SecretId::parse("secret:d0000000000000000001").expect("a secret id");
    let info = ClusterInfo {
        munge_key: MungeKeyRef::Secret(id.clone()),
        slurmctld_host: "ctl.invalid".parse().unwrap(),
        nhc_params: String::new(),
        auth: Default::default(),
    };
    let key = juju_runtime::SecretContent::from([("munge-key".to_owned(), vec![5; 64])]);
    let relation = MemoryRelation::new("slurmctld", 1, "slurmctld").remote_app_data(
        juju_runtime_testing::bag([("cluster_info", info.to_relation_value().as_str())]),
    );
    let state = State {
        unit: "compute/0".into(),
        leader: false,
        config,
        relations: vec![relation],
        secrets: [(id, MemorySecret::consumed(key))].into(),
        command_outputs: vec![prints("slurmd -C", SLURMD_C_N0)],
        ..State::default()
    };
    (state, rel)
}
