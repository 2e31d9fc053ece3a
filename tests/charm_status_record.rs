//! The controller skips a `status-set` that would repeat the status it last set, on relation
//! events only (`src/charms/slurmctld/status_record.rs`): every other hook sets its status
//! whatever the record says, and a missing or different record means a `status-set`.

mod common;

use common::changed;
use common::state::{State, controller, run};
use juju_runtime::{Event, Status, StatusKind};
use slurm_charms::charms::CharmKind;

const RECORD: &str = "/var/cache/slurm-charms/slurmctld/unit-status";

fn node(name: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"8000"}},"new_node":false}}"#
    )
}

fn status_sets(state: &State) -> usize {
    state.calls.iter().filter(|c| *c == "status-set").count()
}

/// A leader with two nodes after its first hook.
fn settled() -> (State, juju_runtime::RelationId) {
    let (n0, n1) = (node("c0"), node("c1"));
    let (state, rel) = controller(&[("compute/0", &n0), ("compute/1", &n1)]);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    assert_eq!(status_sets(&out), 1, "{:?}", out.calls);
    assert_eq!(out.text(RECORD), "active\n2 nodes, 0 GPUs");
    (out, rel)
}

#[test]
fn a_relation_event_that_keeps_the_status_does_not_set_it_again() {
    let (state, rel) = settled();
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &state,
    )
    .unwrap();
    assert_eq!(status_sets(&out), 0, "{:?}", out.calls);
    assert_eq!(
        out.status, state.status,
        "Juju still shows the status set before"
    );
}

#[test]
fn a_status_that_changes_is_set_and_recorded() {
    let (mut state, rel) = settled();
    state.relations[0].remote_units.remove("compute/1");
    let departed = Event::RelationDeparted(juju_runtime::RelationEvent {
        relation: rel.clone(),
        remote_app: "compute".into(),
        remote_unit: Some("compute/1".into()),
        departing_unit: Some("compute/1".into()),
    });
    let out = run(CharmKind::Slurmctld, departed, &state).unwrap();
    assert_eq!(status_sets(&out), 1, "{:?}", out.calls);
    assert_eq!(
        out.status,
        Some(Status::new(StatusKind::Active, "1 node, 0 GPUs"))
    );
    assert_eq!(out.text(RECORD), "active\n1 node, 0 GPUs");
}

#[test]
fn other_hooks_set_the_status_whatever_the_record_says() {
    let (state, _) = settled();
    for event in [
        Event::UpdateStatus,
        Event::ConfigChanged,
        Event::LeaderElected,
    ] {
        let out = run(CharmKind::Slurmctld, event.clone(), &state).unwrap();
        assert_eq!(status_sets(&out), 1, "{event:?}: {:?}", out.calls);
    }
}

#[test]
fn a_missing_or_different_record_means_a_status_set() {
    let (state, rel) = settled();
    for record in [None, Some("active\nsomething else"), Some("")] {
        let mut s = state.clone();
        match record {
            None => drop(s.files.remove(RECORD)),
            Some(r) => drop(s.files.insert(RECORD.into(), r.as_bytes().to_vec())),
        }
        let out = run(
            CharmKind::Slurmctld,
            changed(&rel, "compute", Some("compute/1")),
            &s,
        )
        .unwrap();
        assert_eq!(status_sets(&out), 1, "{record:?}: {:?}", out.calls);
        assert_eq!(out.text(RECORD), "active\n2 nodes, 0 GPUs", "{record:?}");
    }
}

#[test]
fn a_standby_unit_records_its_status_and_a_new_leader_sets_its_own() {
    let (mut state, rel) = settled();
    state.leader = false;
    let standby = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &state,
    )
    .unwrap();
    assert_eq!(status_sets(&standby), 1);
    // without state-save-location it could not take over the jobs: blocked, saying why
    assert!(
        standby
            .text(RECORD)
            .starts_with("blocked\nstandby cannot take over"),
        "{}",
        standby.text(RECORD)
    );
    // leadership back, and the next event is a relation event: the record says standby, so the
    // leader's status is set
    let mut back = standby.clone();
    back.leader = true;
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &back,
    )
    .unwrap();
    assert_eq!(status_sets(&out), 1, "{:?}", out.calls);
    assert_eq!(
        out.status,
        Some(Status::new(StatusKind::Active, "2 nodes, 0 GPUs"))
    );
}
