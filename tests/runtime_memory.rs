//! The in-memory backend follows the hook tools' permission and visibility rules.

use juju_runtime::{
    BagOwner, HookToolError, LogLevel, ModelBackend, NetworkBackend, NetworkInfo, Port, RelationId,
    Status, StatusKind, StatusScope,
};
use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};
use serde_json::json;
use std::collections::BTreeMap;

fn rel() -> RelationId {
    RelationId::new("slurmd", 1)
}

fn controller(leader: bool) -> MemoryBackend {
    MemoryBackend::new("slurmctld/0").leader(leader).relation(
        MemoryRelation::new("slurmd", 1, "slurmd")
            .remote_unit("slurmd/0", bag([("node", "n0")]))
            .remote_unit("slurmd/1", bag([("node", "n1")]))
            .departed_unit("slurmd/2", bag([("node", "n2")]))
            .remote_app_data(bag([("partition", "gpu")]))
            .local_app_data(bag([("cluster_info", "old")])),
    )
}

fn active(msg: &str) -> Status {
    Status {
        kind: StatusKind::Active,
        message: msg.to_owned(),
    }
}

#[test]
fn relation_reads() {
    let b = controller(false);
    assert_eq!(b.relation_ids("slurmd").unwrap(), vec![rel()]);
    assert!(b.relation_ids("other").unwrap().is_empty());
    assert_eq!(
        b.relation_list(&rel()).unwrap(),
        vec!["slurmd/0", "slurmd/1"]
    );
    assert_eq!(b.relation_remote_app(&rel()).unwrap(), "slurmd");
    let unit = b
        .relation_get(&rel(), &BagOwner::Unit("slurmd/1".into()))
        .unwrap();
    assert_eq!(unit, bag([("node", "n1")]));
    // Departed units are not listed but stay readable.
    let departed = b
        .relation_get(&rel(), &BagOwner::Unit("slurmd/2".into()))
        .unwrap();
    assert_eq!(departed, bag([("node", "n2")]));
    let app = b
        .relation_get(&rel(), &BagOwner::App("slurmd".into()))
        .unwrap();
    assert_eq!(app, bag([("partition", "gpu")]));
    assert_eq!(
        b.calls(),
        vec![
            "relation-ids",
            "relation-ids",
            "relation-list",
            "relation-list",
            "relation-get",
            "relation-get",
            "relation-get"
        ]
    );
}

#[test]
fn unknown_relation_is_relation_not_found() {
    let b = controller(true);
    for id in [RelationId::new("slurmd", 9), RelationId::new("other", 1)] {
        let err = b.relation_list(&id).unwrap_err();
        assert!(
            matches!(err, HookToolError::RelationNotFound { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("relation not found"));
    }
}

#[test]
fn non_leader_cannot_read_own_app_bag() {
    let err = controller(false)
        .relation_get(&rel(), &BagOwner::App("slurmctld".into()))
        .unwrap_err();
    assert!(matches!(err, HookToolError::PermissionDenied { .. }));
    let leader = controller(true)
        .relation_get(&rel(), &BagOwner::App("slurmctld".into()))
        .unwrap();
    assert_eq!(leader, bag([("cluster_info", "old")]));
}

#[test]
fn peers_read_the_shared_app_bag() {
    let b = MemoryBackend::new("slurmd/1").relation(
        MemoryRelation::peer("peers", 4, "slurmd")
            .remote_unit("slurmd/0", bag([]))
            .local_app_data(bag([("k", "v")])),
    );
    let id = RelationId::new("peers", 4);
    assert_eq!(
        b.relation_get(&id, &BagOwner::App("slurmd".into()))
            .unwrap(),
        bag([("k", "v")])
    );
    assert_eq!(b.relation_remote_app(&id).unwrap(), "slurmd");
    assert_eq!(b.relation_list(&id).unwrap(), vec!["slurmd/0"]);
}

#[test]
fn non_leader_app_write_is_refused_unit_write_allowed() {
    let b = controller(false);
    let err = b
        .relation_set(&rel(), true, &bag([("cluster_info", "new")]))
        .unwrap_err();
    assert!(matches!(err, HookToolError::NotLeader { .. }));
    assert!(err.to_string().contains("cannot write relation settings"));
    b.relation_set(&rel(), false, &bag([("a", "1")])).unwrap();
    assert_eq!(b.local_unit_data(&rel()), bag([("a", "1")]));
}

#[test]
fn writes_are_visible_to_own_reads_and_empty_deletes() {
    let b = controller(true);
    b.relation_set(&rel(), true, &bag([("cluster_info", "new"), ("x", "1")]))
        .unwrap();
    b.relation_set(&rel(), true, &bag([("x", "")])).unwrap();
    let own = b
        .relation_get(&rel(), &BagOwner::App("slurmctld".into()))
        .unwrap();
    assert_eq!(own, bag([("cluster_info", "new")]));
    b.relation_set(&rel(), false, &bag([("u", "1")])).unwrap();
    let own_unit = b
        .relation_get(&rel(), &BagOwner::Unit("slurmctld/0".into()))
        .unwrap();
    assert_eq!(own_unit, bag([("u", "1")]));
}

#[test]
fn broken_relation_is_hidden_from_relation_ids() {
    let b = MemoryBackend::new("a/0")
        .relation(MemoryRelation::new("db", 1, "pg").broken())
        .relation(MemoryRelation::new("db", 2, "pg"));
    assert_eq!(
        b.relation_ids("db").unwrap(),
        vec![RelationId::new("db", 2)]
    );
    assert!(
        b.relation_list(&RelationId::new("db", 1))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn status_rules_and_records() {
    let b = controller(false);
    b.status_set(StatusScope::Unit, &active("ready")).unwrap();
    let err = b
        .status_set(StatusScope::Application, &active("x"))
        .unwrap_err();
    assert!(matches!(err, HookToolError::NotLeader { .. }));
    assert_eq!(b.unit_status(), Some(active("ready")));
    assert_eq!(b.app_status(), None);
    let leader = controller(true);
    leader
        .status_set(StatusScope::Application, &active("3 nodes"))
        .unwrap();
    assert_eq!(leader.app_status(), Some(active("3 nodes")));
}

#[test]
fn config_leader_version_logs() {
    let b = MemoryBackend::new("slurmd/0")
        .config_value("partition-config", "MaxTime=10")
        .leader(true);
    assert_eq!(
        b.config_get().unwrap().get("partition-config"),
        Some(&json!("MaxTime=10"))
    );
    assert!(b.is_leader().unwrap());
    b.set_leader(false);
    assert!(!b.is_leader().unwrap());
    b.application_version_set("22.05.8").unwrap();
    assert_eq!(b.workload_version().as_deref(), Some("22.05.8"));
    b.juju_log(LogLevel::Warning, "careful").unwrap();
    assert_eq!(b.logs(), vec![(LogLevel::Warning, "careful".to_owned())]);
    assert_eq!(b.call_count("is-leader"), 2);
}

#[test]
fn action_tools_outside_an_action() {
    let b = MemoryBackend::new("slurmd/0");
    assert!(matches!(
        b.action_get(),
        Err(HookToolError::NotInAction { .. })
    ));
    assert!(matches!(
        b.action_set(&BTreeMap::new()),
        Err(HookToolError::NotInAction { .. })
    ));
    assert!(matches!(
        b.action_fail("x"),
        Err(HookToolError::NotInAction { .. })
    ));
    assert!(matches!(
        b.action_log("x"),
        Err(HookToolError::NotInAction { .. })
    ));
}

#[test]
fn action_results_failure_and_logs() {
    let params = json!({"verbose": true}).as_object().unwrap().clone();
    let b = MemoryBackend::new("slurmd/0").action(params.clone());
    assert_eq!(b.action_get().unwrap(), params);
    let results: BTreeMap<String, String> = [("gpus.count".to_owned(), "2".to_owned())].into();
    b.action_set(&results).unwrap();
    b.action_log("probing").unwrap();
    b.action_fail("no driver").unwrap();
    assert_eq!(b.action_results(), results);
    assert_eq!(b.action_logs(), vec!["probing"]);
    assert_eq!(b.action_failure().as_deref(), Some("no driver"));
    let bad: BTreeMap<String, String> = [("stdout".to_owned(), "x".to_owned())].into();
    assert!(matches!(
        b.action_set(&bad),
        Err(HookToolError::Usage { .. })
    ));
    // juju-reboot is refused inside actions.
    assert!(b.juju_reboot(false).is_err());
}

#[test]
fn state_round_trip_and_limits() {
    let b = MemoryBackend::new("slurmd/0").state_value("k", "v");
    b.state_set(&[("a".to_owned(), "1".to_owned())].into())
        .unwrap();
    b.state_delete("k").unwrap();
    b.state_delete("missing").unwrap();
    assert_eq!(
        b.state_get().unwrap(),
        [("a".to_owned(), "1".to_owned())].into()
    );
    let big: BTreeMap<String, String> = [("big".to_owned(), "x".repeat(65537))].into();
    assert!(b.state_set(&big).is_err());
}

#[test]
fn ports_network_reboot() {
    let info = NetworkInfo {
        ingress_addresses: vec!["10.0.0.5".into()],
        ..NetworkInfo::default()
    };
    let b = MemoryBackend::new("slurmctld/0").network("slurmd", info.clone());
    assert_eq!(b.network_get("slurmd", None).unwrap(), info);
    assert!(b.network_get("nope", None).is_err());
    b.open_port(Port::tcp(6817)).unwrap();
    b.open_port(Port::tcp(6818)).unwrap();
    b.close_port(Port::tcp(6818)).unwrap();
    assert_eq!(b.opened_ports().unwrap(), vec![Port::tcp(6817)]);
    b.juju_reboot(false).unwrap();
    assert_eq!(b.reboot_requested(), Some(false));
}

#[test]
fn port_text_forms() {
    for text in ["80/tcp", "8000-8999/udp", "icmp"] {
        let port: Port = text.parse().unwrap();
        assert_eq!(port.to_string(), text);
    }
    assert_eq!("443".parse::<Port>().unwrap(), Port::tcp(443));
    for bad in ["", "0/tcp", "90-80/tcp", "80/sctp", "x"] {
        assert!(bad.parse::<Port>().is_err(), "{bad}");
    }
}

#[test]
fn goal_state_lists_related_units_and_planned_ones_not_yet_joined() {
    let backend = MemoryBackend::new("slurmctld/0")
        .leader(true)
        .relation(
            MemoryRelation::new("slurmd", 1, "compute").remote_unit("compute/0", bag([("k", "v")])),
        )
        .planned_remote_units("slurmd", &["compute/1", "compute/2"]);
    let goal = backend.goal_state().unwrap();
    assert_eq!(
        goal.expected_remote_units("slurmd"),
        ["compute/0", "compute/1", "compute/2"]
    );
    assert_eq!(goal.relations["slurmd"]["compute"].status, "joined");
    assert_eq!(goal.relations["slurmd"]["compute/1"].status, "waiting");
    assert_eq!(goal.planned_units(), 1);
    assert_eq!(backend.call_count("goal-state"), 1);
}
