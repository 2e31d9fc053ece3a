//! Fast tests of the charms' hook logic with the in-memory backend, a scratch host root and a
//! recording command runner (no processes, no simulator).

mod common;

use common::{FIRST_CONFIGURE, RecordingRunner, changed};
use juju_runtime::{Event, HookContext, RelationEvent, RelationId, StatusKind};
use juju_runtime::{SecretContent, SecretId, SecretOwner};
use juju_runtime_testing::MemorySecret;
use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};
use slurm_charms::charms::{CharmKind, CmdOutput, Host, run_with};
use slurm_charms::interface::{ClusterInfo, MungeKey, MungeKeyRef, NodeRecord};

/// The controller's key secret as a slurmd unit sees it: granted, revision 1 holds `key`.
fn granted_key(key: Vec<u8>) -> (SecretId, MemorySecret) {
    let id = SecretId::parse("d0000000000000000009").unwrap();
    let content = SecretContent::from([("munge-key".to_owned(), key)]);
    (id, MemorySecret::consumed(content))
}
use std::path::PathBuf;

fn ctx(unit: &str, event: Event) -> HookContext {
    HookContext {
        unit_name: unit.into(),
        app_name: unit.split('/').next().unwrap().into(),
        model_name: "m".into(),
        charm_dir: PathBuf::from("/nonexistent"),
        event,
    }
}

fn node_json(name: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"8000","MemSpecLimit":"1024"}},"new_node":false}}"#
    )
}

fn controller(units: usize) -> (MemoryBackend, RelationId) {
    let rel = RelationId::new("slurmd", 3);
    let mut r = MemoryRelation::new("slurmd", 3, "compute")
        .remote_app_data(bag([("partition", r#"{"compute":{"State":"UP"}}"#)]));
    for i in 0..units {
        r = r.remote_unit(
            &format!("compute/{i}"),
            bag([("node", node_json(&format!("c{i}")).as_str())]),
        );
    }
    let be = MemoryBackend::new("slurmctld/0")
        .leader(true)
        .config_value("cluster-name", "osd-cluster")
        .relation(r);
    (be, rel)
}

#[test]
fn controller_relation_changed_is_o1_once_the_cache_exists() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let (be, rel) = controller(50);
    // First hook: no cache → rebuilt in full (reads every unit).
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    // + the application's own bag, read first by the takeover check (no store yet: was another
    // unit's slurmctld the controller? src/charms/slurmctld/leadership.rs)
    assert_eq!(be.call_count("relation-get"), 50 + 3);
    let conf = std::fs::read_to_string(dir.path().join("etc/slurm/slurm.conf")).unwrap();
    assert!(
        conf.contains("PartitionName=compute Nodes=c[0-49] Default=YES State=UP"),
        "{conf}"
    );
    assert_eq!(
        without_liveness(&runner.lines()),
        [
            "slurmctld -V",
            "systemctl restart munge",
            "systemctl restart slurmctld",
            "scontrol ping",
            "scontrol reconfigure"
        ]
    );
    let info = be.local_app_data(&rel)["cluster_info"].clone();
    assert!(ClusterInfo::from_relation_value(&info).is_ok());

    // Second hook: one unit's bag changed → exactly one relation-get, a restart (node renamed).
    let (be2, _) = controller(50);
    let view = be2.relation_view(&rel).unwrap();
    let be2 =
        be2.relation(view.remote_unit("compute/7", bag([("node", node_json("renamed").as_str())])));
    runner.clear();
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/7"))),
        &be2,
        &host,
    )
    .unwrap();
    // is-leader and relation-get (asked at once), no status-set: the status stays, and no
    // config-get: the store keeps the config the first hook read
    let calls = be2.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(be2.call_count("status-set"), 0);
    assert_eq!(be2.call_count("config-get"), 0);
    assert_eq!(be2.call_count("relation-get"), 1);
    assert_eq!(
        be2.call_count("relation-set"),
        0,
        "cluster_info already published (cache)"
    );
    let conf = std::fs::read_to_string(dir.path().join("etc/slurm/slurm.conf")).unwrap();
    assert!(
        conf.contains("NodeName=c[0-6,8-49],renamed CPUs=4 "),
        "{conf}"
    );
    assert!(!conf.contains("c7"));
    // the version is unreadable here (the recording runner prints nothing): restart
    assert_eq!(
        without_liveness(&runner.lines()),
        [
            "slurmctld -V",
            "systemctl restart slurmctld",
            "scontrol ping",
            "scontrol reconfigure"
        ]
    );
    // the status Juju shows is still the first hook's, which this one would have set again
    assert_eq!(be2.unit_status(), None);
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Active);
    assert_eq!(st.message, "50 nodes, 0 GPUs");
}

/// `slurmd-relation-joined`/`-changed` render with the config the store kept; any other hook
/// asks `config-get` and the store keeps its answer. Juju runs `config-changed` before any
/// relation hook once it has seen a change, so a relation hook that raced a change renders
/// the config slurm.conf has, and the `config-changed` after it renders the new one.
#[test]
fn relation_events_render_the_kept_config_and_config_changed_renders_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let conf = || std::fs::read_to_string(dir.path().join("etc/slurm/slurm.conf")).unwrap();
    // one backend throughout (the key secret the first hook creates stays in it); each hook's
    // `config-get` calls counted
    let hook = |be: &MemoryBackend, event: Event| {
        let before = be.call_count("config-get");
        run_with(CharmKind::Slurmctld, &ctx("slurmctld/0", event), be, &host).unwrap();
        be.call_count("config-get") - before
    };
    let node = |be: MemoryBackend, rel: &RelationId, name: &str| {
        let view = be.relation_view(rel).unwrap();
        be.relation(view.remote_unit("compute/1", bag([("node", node_json(name).as_str())])))
    };
    let (be, rel) = controller(3);
    let be = be.config_value("cluster-name", "alpha");
    // no store yet: the config is asked and kept
    assert_eq!(hook(&be, changed(&rel, "compute", Some("compute/0"))), 1);
    assert!(conf().contains("ClusterName=alpha\n"), "{}", conf());

    // the operator set cluster-name=beta, and a node changed before config-changed ran
    let be = node(be.config_value("cluster-name", "beta"), &rel, "renamed");
    assert_eq!(hook(&be, changed(&rel, "compute", Some("compute/1"))), 0);
    assert!(conf().contains("ClusterName=alpha\n"), "{}", conf());
    assert!(
        conf().contains("renamed"),
        "the node change is rendered: {}",
        conf()
    );

    // config-changed asks, renders the new config and keeps it
    assert_eq!(hook(&be, Event::ConfigChanged), 1);
    assert!(conf().contains("ClusterName=beta\n"), "{}", conf());
    let be = node(be, &rel, "again");
    assert_eq!(hook(&be, changed(&rel, "compute", Some("compute/1"))), 0);
    assert!(conf().contains("ClusterName=beta\n"), "{}", conf());
    assert!(conf().contains("again"), "{}", conf());

    // a lost store is rebuilt from Juju, the config with it
    let store = dir.path().join("var/lib/slurm-charms/slurmctld/store.bin");
    std::fs::remove_file(store).unwrap();
    let be = node(be, &rel, "once-more");
    assert_eq!(hook(&be, changed(&rel, "compute", Some("compute/1"))), 1);
    assert!(conf().contains("ClusterName=beta\n"), "{}", conf());
    assert!(conf().contains("once-more"), "{}", conf());
}

#[test]
fn a_slurmctld_that_dies_is_reported_with_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let failed = CmdOutput {
        code: Some(3),
        ..Default::default()
    };
    runner.answer("scontrol ping", failed.clone());
    runner.answer("systemctl is-active", failed);
    let log = dir.path().join("var/log/slurm");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::write(
        log.join("slurmctld.log"),
        "started\nfatal: Invalid GRES data for gpu\n",
    )
    .unwrap();
    let host = Host::new(dir.path(), &runner);
    let (be, rel) = controller(2);
    // slurmctld refused the files: the hook reports it (with its log) instead of failing, so
    // retries do not restart it again onto the same files.
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Blocked, "{}", st.message);
    assert!(
        st.message.contains("slurmctld is not answering"),
        "{}",
        st.message
    );
    assert!(
        st.message.contains("fatal: Invalid GRES data for gpu"),
        "{}",
        st.message
    );
    assert!(!runner.lines().contains(&"scontrol reconfigure".to_string()));
    // The refusal is recorded: the next hook does not offer the same files again.
    runner.clear();
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", Event::UpdateStatus),
        &be,
        &host,
    )
    .unwrap();
    assert!(
        !runner
            .lines()
            .iter()
            .any(|l| l.contains("restart slurmctld")),
        "{:?}",
        runner.lines()
    );
    assert_eq!(be.unit_status().unwrap().kind, StatusKind::Blocked);
}

#[test]
fn a_standby_controller_only_reports() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let (be, rel) = controller(3);
    let be = be.leader(false);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/1", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    // the first reads (asked at once with is-leader, unused by a standby unit) and its status
    let mut calls = be.calls();
    calls.sort();
    assert_eq!(
        calls,
        ["config-get", "is-leader", "relation-get", "status-set"],
        "{calls:?}"
    );
    assert!(runner.lines().is_empty());
    assert!(!dir.path().join("etc/slurm/slurm.conf").exists());
    // the next relation event finds the standby status set already: reads only
    let (again, _) = controller(3);
    let again = again.leader(false);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/1", changed(&rel, "compute", Some("compute/1"))),
        &again,
        &host,
    )
    .unwrap();
    assert_eq!(again.call_count("status-set"), 0, "{:?}", again.calls());
    assert_eq!(again.calls().len(), 3, "{:?}", again.calls());
}

fn slurmd_runner() -> RecordingRunner {
    let runner = RecordingRunner::default();
    runner.answer(
        "slurmd -C",
        CmdOutput {
            code: Some(0),
            stdout: "NodeName=n1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1500\nUpTime=0-00:01:00\n".into(),
            ..Default::default()
        },
    );
    runner.answer(
        "systemctl is-active",
        CmdOutput {
            code: Some(3),
            ..Default::default()
        },
    );
    runner
}

#[test]
fn slurmd_publishes_its_node_and_follows_the_controller() {
    let dir = tempfile::tempdir().unwrap();
    let runner = slurmd_runner();
    let host = Host::new(dir.path(), &runner);
    let rel = RelationId::new("slurmctld", 1);
    let (id, secret) = granted_key(vec![9; 64]);
    let info = ClusterInfo {
        munge_key: MungeKeyRef::Secret(id.clone()),
        slurmctld_host: "ctl".parse().unwrap(),
        nhc_params: String::new(),
        auth: Default::default(),
    };
    let be = MemoryBackend::new("slurmd/0")
        .leader(true)
        .secret(&id, secret)
        .relation(
            MemoryRelation::new("slurmctld", 1, "slurmctld")
                .remote_app_data(bag([("cluster_info", info.to_relation_value().as_str())])),
        );
    run_with(
        CharmKind::Slurmd,
        &ctx("slurmd/0", changed(&rel, "slurmctld", None)),
        &be,
        &host,
    )
    .unwrap();
    let node = NodeRecord::from_relation_value(&be.local_unit_data(&rel)["node"]).unwrap();
    assert_eq!(node.node_name(), "n1");
    // `slurmd -C` says 1500 MB: 2% headroom (30) leaves 1470, rounded down to 8 MB steps.
    assert_eq!(node.node().real_memory, Some(1464));
    assert_eq!(node.node().mem_spec_limit, Some(732));
    assert!(node.new_node());
    assert_eq!(
        be.local_app_data(&rel)["partition"],
        r#"{"slurmd":{"State":"UP"}}"#
    );
    assert_eq!(
        std::fs::read(dir.path().join("etc/munge/munge.key")).unwrap(),
        vec![9; 64]
    );
    let defaults = std::fs::read_to_string(dir.path().join("etc/default/slurmd")).unwrap();
    assert!(defaults.contains("SLURMD_OPTIONS=\"--conf-server ctl:6817\""));
    // a new node whose slurmd is not running: everything but starting slurmd, which waits for
    // node-configured (docs/slurm-versions.md, "slurmd dies at start")
    let lines = runner.lines();
    assert_eq!(lines, FIRST_CONFIGURE[..FIRST_CONFIGURE.len() - 1]);
    let st = be.unit_status().unwrap();
    assert_eq!(
        (st.kind, st.message.as_str()),
        (
            StatusKind::Active,
            "no GPUs; new node: slurmd starts with node-configured"
        )
    );
}

#[test]
fn slurmd_refuses_bad_controller_data() {
    let dir = tempfile::tempdir().unwrap();
    let runner = slurmd_runner();
    let host = Host::new(dir.path(), &runner);
    let rel = RelationId::new("slurmctld", 1);
    let be = MemoryBackend::new("slurmd/0").relation(
        MemoryRelation::new("slurmctld", 1, "slurmctld").remote_app_data(bag([(
            "cluster_info",
            r#"{"munge_key":"AAAA","slurmctld_host":"ctl; rm -rf /"}"#,
        )])),
    );
    run_with(
        CharmKind::Slurmd,
        &ctx("slurmd/0", changed(&rel, "slurmctld", None)),
        &be,
        &host,
    )
    .unwrap();
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Blocked);
    assert!(
        st.message.contains("slurmctld sent bad data"),
        "{}",
        st.message
    );
    assert!(!dir.path().join("etc/munge/munge.key").exists());
    assert!(!dir.path().join("etc/default/slurmd").exists());
    // The node is still published (the controller's problem is not the node's).
    assert!(be.local_unit_data(&rel).contains_key("node"));
}

#[test]
fn slurmd_without_node_facts_is_blocked_and_publishes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    runner.answer(
        "slurmd -C",
        CmdOutput {
            code: Some(1),
            stderr: "slurmd: error: cannot read /proc".into(),
            ..Default::default()
        },
    );
    let host = Host::new(dir.path(), &runner);
    let rel = RelationId::new("slurmctld", 1);
    let be =
        MemoryBackend::new("slurmd/0").relation(MemoryRelation::new("slurmctld", 1, "slurmctld"));
    run_with(
        CharmKind::Slurmd,
        &ctx("slurmd/0", Event::UpdateStatus),
        &be,
        &host,
    )
    .unwrap();
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Blocked);
    assert!(
        st.message.contains("cannot read node facts"),
        "{}",
        st.message
    );
    assert!(!be.local_unit_data(&rel).contains_key("node"));
}

#[test]
fn the_charm_is_picked_from_metadata() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata.yaml"), "name: slurmctld\n").unwrap();
    assert_eq!(
        CharmKind::from_charm_dir(dir.path()).unwrap(),
        CharmKind::Slurmctld
    );
    std::fs::write(dir.path().join("metadata.yaml"), "name: mysql\n").unwrap();
    let e = CharmKind::from_charm_dir(dir.path()).unwrap_err();
    assert!(e.to_string().contains("mysql"), "{e}");
    assert!(CharmKind::from_charm_dir(&dir.path().join("nope")).is_err());
}

/// Upgrade from charms that sent the key inline: the leader moves the shared key into a secret,
/// grants it, and publishes only its id; munge on the controller keeps the same key.
#[test]
fn a_new_leader_keeps_the_shared_munge_key() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    // The package generated a different key on this unit.
    std::fs::create_dir_all(dir.path().join("etc/munge")).unwrap();
    std::fs::write(dir.path().join("etc/munge/munge.key"), vec![1u8; 1024]).unwrap();
    let shared = ClusterInfo {
        munge_key: MungeKeyRef::Inline(MungeKey::new(vec![7; 1024], "test").unwrap()),
        slurmctld_host: "slurmctld-0".parse().unwrap(),
        nhc_params: String::new(),
        auth: Default::default(),
    };
    let (be, rel) = controller(2);
    let view = be.relation_view(&rel).unwrap();
    let mut view = view;
    view.local_app_data
        .insert("cluster_info".into(), shared.to_relation_value());
    let be = be.relation(view);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/1", Event::LeaderElected),
        &be,
        &host,
    )
    .unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("etc/munge/munge.key")).unwrap(),
        vec![7; 1024]
    );
    assert_eq!(
        without_liveness(&runner.lines())[..2],
        ["slurmctld -V", "systemctl restart munge"]
    );
    let raw = &be.local_app_data(&rel)["cluster_info"];
    let info = ClusterInfo::from_relation_value(raw).unwrap();
    let MungeKeyRef::Secret(id) = &info.munge_key else {
        panic!("still inline: {raw}");
    };
    assert!(
        !raw.contains("\"munge_key\""),
        "the old key left relation data: {raw}"
    );
    let secret = be.secret_view(id).unwrap();
    assert_eq!(secret.owner, Some(SecretOwner::Application));
    assert_eq!(secret.revisions[&1]["munge-key"], vec![7; 1024]);
    assert_eq!(secret.grants, vec![(rel.clone(), None)]);
    assert_eq!(info.slurmctld_host.as_str(), host.hostname().unwrap());
}

/// `cluster_info`'s host is a `NodeName`: a controller whose host name Slurm refuses publishes
/// no record every node would refuse, and says why instead (blocked, nothing written).
#[test]
fn a_controller_whose_host_name_slurm_refuses_publishes_no_cluster_info() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
    std::fs::write(dir.path().join("proc/sys/kernel/hostname"), "default\n").unwrap();
    let (be, rel) = controller(2);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    assert_eq!(be.local_app_data(&rel).get("cluster_info"), None);
    assert!(!dir.path().join("etc/slurm/slurm.conf").exists());
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Blocked, "{}", st.message);
    assert!(
        st.message.contains("host name") && st.message.contains("DEFAULT are reserved"),
        "{}",
        st.message
    );
}

#[test]
fn relation_created_reads_a_partition_published_before() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    // A first hook without relations writes the cache.
    let be = MemoryBackend::new("slurmctld/0").leader(true);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", Event::Start),
        &be,
        &host,
    )
    .unwrap();
    // The slurmd leader had published its partition before this unit saw the relation.
    let (be, rel) = controller(0);
    let created = Event::RelationCreated(RelationEvent {
        relation: rel.clone(),
        remote_app: "compute".into(),
        remote_unit: None,
        departing_unit: None,
    });
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", created),
        &be,
        &host,
    )
    .unwrap();
    assert_eq!(be.call_count("relation-get"), 1, "{:?}", be.calls());
    // The first unit's relation-changed then enlists the node without waiting.
    let (be, _) = controller(1);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    let conf = std::fs::read_to_string(dir.path().join("etc/slurm/slurm.conf")).unwrap();
    assert!(
        conf.contains("PartitionName=compute Nodes=c0 Default=YES State=UP"),
        "{conf}"
    );
}

fn configured_slurmd(host_name: &str) -> (MemoryBackend, RelationId) {
    let (id, secret) = granted_key(vec![9; 64]);
    let info = ClusterInfo {
        munge_key: MungeKeyRef::Secret(id.clone()),
        slurmctld_host: host_name.parse().unwrap(),
        nhc_params: String::new(),
        auth: Default::default(),
    };
    let be = MemoryBackend::new("slurmd/0").secret(&id, secret).relation(
        MemoryRelation::new("slurmctld", 1, "slurmctld")
            .remote_app_data(bag([("cluster_info", info.to_relation_value().as_str())])),
    );
    (be, RelationId::new("slurmctld", 1))
}

#[test]
fn a_node_that_cannot_authenticate_says_munge() {
    use slurm_charms::charms::slurmd::probe::probe_controller;
    let check_controller =
        |host: &Host<'_>, server: &str| probe_controller(host, server).problem(server);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = listener.local_addr().unwrap().to_string();
    let runner = RecordingRunner::default();
    runner.answer(
        "scontrol ping",
        CmdOutput {
            code: Some(1),
            stdout: "Slurmctld(primary) at 127.0.0.1 is DOWN".into(),
            ..Default::default()
        },
    );
    let host = Host::new("/nonexistent", &runner);
    let st = check_controller(&host, &server).unwrap();
    assert_eq!(st.kind, StatusKind::Blocked);
    assert!(st.message.contains("munge key mismatch"), "{}", st.message);
    assert!(st.message.contains("is DOWN"), "{}", st.message);
    // A good answer: nothing to report.
    let ok = RecordingRunner::default();
    assert!(check_controller(&Host::new("/nonexistent", &ok), &server).is_none());
    assert_eq!(ok.lines(), ["scontrol ping"]);
    // A closed port: waiting, without a (slow) ping.
    drop(listener);
    let closed = RecordingRunner::default();
    let st = check_controller(&Host::new("/nonexistent", &closed), &server).unwrap();
    assert_eq!(st.kind, StatusKind::Waiting);
    assert!(st.message.contains("port closed"), "{}", st.message);
    assert!(closed.lines().is_empty());
}

#[test]
fn an_unreachable_controller_is_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let runner = slurmd_runner();
    runner.answer(
        "scontrol ping",
        CmdOutput {
            code: Some(1),
            stderr: "Unable to contact slurm controller (connect failure)".into(),
            ..Default::default()
        },
    );
    let host = Host::new(dir.path(), &runner);
    // A name that never resolves (RFC 6761 .invalid).
    let (be, _) = configured_slurmd("ctl.invalid");
    // The first hook installs the cluster's key and asks nothing (a ping with another key
    // cannot authenticate); the second asks the controller.
    for _ in 0..2 {
        run_with(
            CharmKind::Slurmd,
            &ctx("slurmd/0", Event::UpdateStatus),
            &be,
            &host,
        )
        .unwrap();
    }
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Waiting);
    assert!(
        st.message.contains("ctl.invalid:6817 is not answering"),
        "{}",
        st.message
    );
}

/// `goal-state --format=json` as Juju 3.6 prints it on a controller whose `slurmd` endpoint is
/// related to a local slurmd application (`compute`, two units) and to a cross-model one. Juju
/// 3.6 keys the cross-model application by its offer URL and lists none of its units
/// [apiserver/facades/agent/uniter/uniter.go `goalStateRelations`: `key, ok =
/// remoteApplication.URL()`; units only for local applications].
const GOAL_STATE_3_6_WITH_OFFER: &str = r#"{"units":{"slurmctld/0":{"status":"active","since":"2025-03-01 10:00:05Z"}},"relations":{"slurmd":{"admin/gpu-site.slurmd":{"status":"joined","since":"2025-03-01 10:02:11Z"},"compute":{"status":"joined","since":"2025-03-01 10:01:02Z"},"compute/0":{"status":"active","since":"2025-03-01 10:01:40Z"},"compute/1":{"status":"active","since":"2025-03-01 10:01:41Z"}}}}"#;

/// Issue 39, item 7: an offer URL holds a `/` but is not a unit (`application/number`), so the
/// controller does not wait for it to enlist: the reload is not held back until update-status.
#[test]
fn a_cross_model_application_in_goal_state_holds_no_reload_back() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    // compute/0 enlisted first; then compute/1 joins, new to the cache: goal-state is asked
    // whether more units are on their way
    let (be, rel) = controller(1);
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/0"))),
        &be,
        &host,
    )
    .unwrap();
    let (be, _) = controller(2);
    let be = be.goal_state_output(GOAL_STATE_3_6_WITH_OFFER);
    runner.clear();
    run_with(
        CharmKind::Slurmctld,
        &ctx("slurmctld/0", changed(&rel, "compute", Some("compute/1"))),
        &be,
        &host,
    )
    .unwrap();
    assert_eq!(be.call_count("goal-state"), 1, "{:?}", be.calls());
    assert!(
        runner
            .lines()
            .contains(&"systemctl restart slurmctld".to_owned()),
        "{:?}",
        runner.lines()
    );
    let st = be.unit_status().unwrap();
    assert_eq!(st.kind, StatusKind::Active, "{}", st.message);
    assert_eq!(st.message, "2 nodes, 0 GPUs");
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

/// Runs everything as [`RecordingRunner`] does, except `systemctl is-active` once `broken` is
/// set: then it cannot be started (as when systemd is missing).
#[derive(Default)]
struct BreakableSystemctl {
    runner: RecordingRunner,
    broken: std::sync::atomic::AtomicBool,
}

impl slurm_charms::charms::Runner for BreakableSystemctl {
    fn run(
        &self,
        cmd: &slurm_charms::charms::Cmd,
    ) -> Result<CmdOutput, slurm_charms::charms::HostError> {
        let broken = self.broken.load(std::sync::atomic::Ordering::SeqCst);
        if broken && cmd.to_string().starts_with("systemctl is-active") {
            return Err(slurm_charms::charms::HostError::Spawn {
                command: cmd.to_string(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        self.runner.run(cmd)
    }
}

/// A `systemctl` that cannot be run is no evidence of a death: nothing is restarted, and the
/// leader's log says it cannot tell, although the question is asked from a second thread while
/// the store is read.
#[test]
fn a_systemctl_that_cannot_run_is_logged_and_restarts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let runner = BreakableSystemctl::default();
    let host = Host::new(dir.path(), &runner);
    let (be, rel) = controller(2);
    let hook = |event: Event| {
        let (subscriber, log) = juju_runtime::JujuLogSubscriber::new(tracing::Level::INFO);
        tracing::subscriber::with_default(subscriber, || {
            run_with(CharmKind::Slurmctld, &ctx("slurmctld/0", event), &be, &host)
        })
        .unwrap();
        log.take()
    };
    // the first hook starts slurmctld on the first files
    hook(changed(&rel, "compute", Some("compute/0")));
    assert_eq!(be.unit_status().unwrap().kind, StatusKind::Active);
    runner.runner.clear();
    runner
        .broken
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let lines = hook(Event::UpdateStatus);
    let cannot_tell =
        "cannot tell whether slurmctld runs: cannot run `systemctl is-active slurmctld`";
    assert!(
        lines.iter().any(|(_, line)| line.starts_with(cannot_tell)),
        "{lines:?}"
    );
    assert_eq!(be.unit_status().unwrap().kind, StatusKind::Active);
    let commands = runner.runner.lines();
    assert!(
        !commands.iter().any(|l| l.contains("restart slurmctld")),
        "{commands:?}"
    );
}
