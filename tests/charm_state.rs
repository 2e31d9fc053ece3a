//! The charms' reconcile as state in → event → state out: one `State` value (config,
//! leadership, relation bags, unit state, host files, command outputs) goes in, the state after
//! the hook comes out, host state included (files written or removed, commands run).

mod common;

use common::state::{State, run};
use common::{FIRST_CONFIGURE, changed};
use juju_runtime::{ActionEvent, Event, RelationEvent, RelationId, StatusKind};
use serde_json::Map;
use slurm_charms::charms::{CharmKind, CmdOutput};
use slurm_charms::interface::{ClusterInfo, MungeKeyRef, NodeRecord};

const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
const CACHE: &str = slurm_charms::charms::slurmctld::store::STORE_PATH;

fn node_json(name: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"8000","MemSpecLimit":"1024"}},"new_node":true}}"#
    )
}

fn controller() -> (State, RelationId) {
    common::state::controller(&[
        ("compute/0", node_json("c0")),
        ("compute/1", node_json("c1")),
    ])
}

#[test]
fn controller_converges_then_a_repeat_changes_nothing() {
    let (state, rel) = controller();
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &state,
    )
    .unwrap();
    // Host state: the three Slurm files, the munge key, the cache.
    let conf = out.text(SLURM_CONF);
    assert!(conf.contains("SlurmctldHost=ctl-0"), "{conf}");
    assert!(conf.contains("NodeName=c[0-1] CPUs=4 "), "{conf}");
    assert!(conf.contains("DownNodes=c[0-1] State=DOWN"), "{conf}");
    for f in ["/etc/slurm/gres.conf", "/etc/slurm/cgroup.conf", CACHE] {
        assert!(out.files.contains_key(f), "{f} written");
    }
    // The slurmctld version is remembered, so later hooks do not ask `slurmctld -V` again.
    let store =
        slurm_charms::charms::slurmctld::store::Store::from_bytes(&out.files[CACHE]).unwrap();
    assert_eq!(store.slurm_version.as_deref(), Some("slurm 22.05.8"));
    let key = &out.files["/etc/munge/munge.key"];
    assert_eq!(key.len(), 1024);
    // Juju state: the key is in an application secret granted to the relation, cluster_info
    // names that secret and this host, never the key.
    let raw = &out.relation(&rel).local_app_data["cluster_info"];
    let info = ClusterInfo::from_relation_value(raw).unwrap();
    let MungeKeyRef::Secret(id) = &info.munge_key else {
        panic!("cluster_info carries the key inline: {info:?}");
    };
    assert_eq!(info.slurmctld_host, "ctl-0");
    let secret = &out.secrets[id];
    assert_eq!(secret.revisions[&1]["munge-key"], *key);
    assert_eq!(secret.label.as_deref(), Some("cluster-key"));
    assert_eq!(secret.grants, vec![(rel.clone(), None)]);
    assert!(!raw.contains("munge_key\""), "{raw}");
    assert_eq!(
        without_liveness(&out.commands_run),
        [
            "slurmctld -V",
            "systemctl restart munge",
            "systemctl restart slurmctld",
            "scontrol ping",
            "scontrol reconfigure"
        ]
    );
    let st = out.status.clone().unwrap();
    assert_eq!(st.kind, StatusKind::Active);
    assert_eq!(
        st.message,
        "2 nodes, 0 GPUs, 2 new (run node-configured on the slurmd unit)"
    );

    // The state out is the next hook's state in: nothing to do, nothing rewritten.
    let again = run(CharmKind::Slurmctld, Event::UpdateStatus, &out).unwrap();
    assert!(
        without_liveness(&again.commands_run).is_empty(),
        "{:?}",
        again.commands_run
    );
    assert_eq!(again.files, out.files);
    assert_eq!(again.relations, out.relations);
    assert_eq!(again.status, out.status);
}

#[test]
fn controller_drops_a_departed_unit() {
    let (state, rel) = controller();
    let first = run(CharmKind::Slurmctld, Event::LeaderElected, &state).unwrap();
    let mut next = first.clone();
    next.relations[0].remote_units.remove("compute/1");
    let departed = Event::RelationDeparted(RelationEvent {
        relation: rel.clone(),
        remote_app: "compute".into(),
        remote_unit: Some("compute/1".into()),
        departing_unit: Some("compute/1".into()),
    });
    let out = run(CharmKind::Slurmctld, departed, &next).unwrap();
    let conf = out.text(SLURM_CONF);
    assert!(
        conf.contains("NodeName=c0 ") && !conf.contains("c1"),
        "{conf}"
    );
    assert_eq!(
        without_liveness(&out.commands_run),
        [
            "systemctl restart slurmctld",
            "scontrol ping",
            "scontrol reconfigure"
        ]
    );
    assert_eq!(
        out.files["/etc/munge/munge.key"],
        first.files["/etc/munge/munge.key"]
    );
}

fn configured_node() -> (State, RelationId) {
    common::state::configured_node(Map::new())
}

#[test]
fn node_configures_itself_from_cluster_info() {
    let (state, rel) = configured_node();
    let out = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    assert_eq!(out.files["/etc/munge/munge.key"], vec![5; 64]);
    assert!(
        out.text("/etc/default/slurmd")
            .contains("--conf-server ctl.invalid:6817")
    );
    let node =
        NodeRecord::from_relation_value(&out.relation(&rel).local_unit_data["node"]).unwrap();
    assert!(node.new_node());
    // slurmd runs here (every command succeeds, `is-active` included: as the slurmd 24.11's
    // package starts): a new node's slurmd is stopped, not restarted, until node-configured
    // (docs/slurm-versions.md, "slurmd dies at start")
    let mut want = FIRST_CONFIGURE[..FIRST_CONFIGURE.len() - 1].to_vec();
    want.push("systemctl stop slurmd");
    assert_eq!(out.commands_run, want);
    let status = out.status.unwrap();
    assert_eq!(status.kind, StatusKind::Active);
    assert!(
        status
            .message
            .ends_with("; new node: slurmd starts with node-configured"),
        "{}",
        status.message
    );
}

#[test]
fn node_configured_action_contributes_to_the_same_hook() {
    let (state, rel) = configured_node();
    let first = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    let mut input = first.clone();
    input.action_params = Some(Map::new());
    input.command_outputs.push((
        "systemctl is-active".into(),
        CmdOutput {
            code: Some(0),
            ..Default::default()
        },
    ));
    let action = Event::Action(ActionEvent {
        name: "node-configured".into(),
        id: "1".into(),
    });
    let out = run(CharmKind::Slurmd, action, &input).unwrap();
    // The action's effect is in this hook's output: unit state, the published record, results.
    assert_eq!(out.unit_state["new-node"], "false");
    let node =
        NodeRecord::from_relation_value(&out.relation(&rel).local_unit_data["node"]).unwrap();
    assert!(!node.new_node());
    assert_eq!(
        out.action_results["message"],
        "n0 leaves DownNodes; slurmctld resumes it"
    );
    assert_eq!(out.action_failure, None);
    // Nothing on the host needed to change (the steady update-status record aside: an action
    // runs in full and forgets it).
    let mut before = first.files.clone();
    before.remove(slurm_charms::charms::slurmd::keys::STEADY_PATH);
    assert_eq!(out.files, before);
    assert!(
        !out.commands_run.iter().any(|c| c.contains("restart")),
        "{:?}",
        out.commands_run
    );
}

#[test]
fn a_refused_action_changes_no_state() {
    let (state, rel) = configured_node();
    let first = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    let mut input = first.clone();
    input.action_params = Some(
        serde_json::json!({"parameters": "NodeName=evil"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let action = Event::Action(ActionEvent {
        name: "node-config".into(),
        id: "2".into(),
    });
    let out = run(CharmKind::Slurmd, action, &input).unwrap();
    let failure = out.action_failure.clone().unwrap();
    assert!(failure.contains("NodeName"), "{failure}");
    assert_eq!(out.unit_state, first.unit_state);
    assert_eq!(out.relations, first.relations);
}

#[test]
fn node_leaving_the_controller_stops_slurmd_and_removes_its_config() {
    let (state, rel) = configured_node();
    let first = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    assert!(first.files.contains_key("/etc/default/slurmd"));
    let mut input = first.clone();
    input.relations[0].broken = true;
    let broken = Event::RelationBroken(RelationEvent {
        relation: rel,
        remote_app: "slurmctld".into(),
        remote_unit: None,
        departing_unit: None,
    });
    let out = run(CharmKind::Slurmd, broken, &input).unwrap();
    assert!(!out.files.contains_key("/etc/default/slurmd"));
    assert!(
        out.commands_run
            .contains(&"systemctl stop slurmd".to_string())
    );
    let st = out.status.unwrap();
    assert_eq!(
        (st.kind, st.message.as_str()),
        (StatusKind::Blocked, "Need relation: slurmctld")
    );
}

/// A command that exits `code` printing `stdout`.
fn exits(command: &str, code: i32, stdout: &str) -> (String, CmdOutput) {
    let out = CmdOutput {
        code: Some(code),
        stdout: stdout.into(),
        ..Default::default()
    };
    (command.into(), out)
}

/// The `systemctl restart [--no-block] slurmd` lines a hook ran.
fn slurmd_restarts(out: &common::state::State) -> usize {
    out.commands_run
        .iter()
        .filter(|c| c.starts_with("systemctl restart") && c.ends_with(" slurmd"))
        .count()
}

#[test]
fn a_slurmd_left_retrying_is_restarted_once_when_the_controller_answers_again() {
    use slurm_charms::charms::slurmd::keys::CONTROLLER_FAILING_STATE;
    // A configured node (past node-configured) whose controller check is refused (a wrong
    // munge key: the port answers, `scontrol ping` fails): the failure is remembered.
    let (mut state, rel) = configured_node();
    state.unit_state.insert("new-node".into(), "false".into());
    let first = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    let mut input = first.clone();
    input.command_outputs.push(exits(
        "scontrol ping",
        1,
        "Slurmctld(primary) at ctl is DOWN",
    ));
    input
        .command_outputs
        .push(exits("systemctl is-active", 3, "activating\n"));
    let refused = run(CharmKind::Slurmd, Event::UpdateStatus, &input).unwrap();
    assert_eq!(refused.unit_state[CONTROLLER_FAILING_STATE], "true");
    assert_ne!(refused.status.as_ref().unwrap().kind, StatusKind::Active);
    assert_eq!(slurmd_restarts(&refused), 0, "{:?}", refused.commands_run);

    // The key fixed: the controller answers while slurmd still retries (`activating`, up to
    // 10 s before its next try): restarted now, and the failure forgotten.
    let mut input = refused.clone();
    input.command_outputs.retain(|(c, _)| c != "scontrol ping");
    let back = run(CharmKind::Slurmd, Event::UpdateStatus, &input).unwrap();
    assert_eq!(slurmd_restarts(&back), 1, "{:?}", back.commands_run);
    assert_eq!(back.unit_state[CONTROLLER_FAILING_STATE], "false");
    assert_eq!(back.status.as_ref().unwrap().kind, StatusKind::Active);

    // Once: a slurmd still `activating` at the next hook is left alone.
    let again = run(CharmKind::Slurmd, Event::UpdateStatus, &back).unwrap();
    assert_eq!(slurmd_restarts(&again), 0, "{:?}", again.commands_run);

    // Without a failed check before, an `activating` slurmd is starting normally: left alone.
    let mut fresh = back.clone();
    fresh.unit_state.remove(CONTROLLER_FAILING_STATE);
    let out = run(CharmKind::Slurmd, Event::UpdateStatus, &fresh).unwrap();
    assert_eq!(slurmd_restarts(&out), 0, "{:?}", out.commands_run);
    assert!(!out.unit_state.contains_key(CONTROLLER_FAILING_STATE));
}

/// The commands without the liveness check every controller leader hook makes (`systemctl
/// is-active slurmctld`, a read: `src/charms/slurmctld/liveness.rs`).
fn without_liveness(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| *l != "systemctl is-active slurmctld")
        .cloned()
        .collect()
}
