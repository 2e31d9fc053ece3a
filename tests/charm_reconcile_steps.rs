//! The steps that used to run around the plan, now planned and applied (issue 10, item 3), as
//! state in → event → state out, with the pure decisions checked on their own:
//! - the controller's secret housekeeping: `secret-remove` on the leader removes the revision
//!   and changes nothing else; `secret-changed` on a unit that is not the leader refreshes;
//! - a leader without a key secret creates it (before anything names it) and the `cluster_info`
//!   it publishes, and the cache records, name the new id;
//! - `rotate-key`: a pure decision that asks for each fact it needs, so a refused request makes
//!   no further hook-tool call;
//! - slurmd: a hook that fails after its first write, or while observing, leaves no steady
//!   record behind.

mod common;

use common::changed;
use common::state::{State, configured_node, controller, run, run_to_end};
use juju_runtime::{ActionEvent, Event, SecretEvent, SecretId, SecretInfo, SecretOwner};
use juju_runtime_testing::MemorySecret;
use serde_json::Map;
use slurm_charms::charms::slurmctld::actions::ActionChange;
use slurm_charms::charms::slurmctld::actions::new_revision;
use slurm_charms::charms::slurmctld::key_secret::{
    ClusterInfoWrite, EventSecret, SecretAction, housekeeping, record,
};
use slurm_charms::charms::slurmctld::store::{STORE_PATH, Store};
use slurm_charms::charms::slurmd::keys::STEADY_PATH;
use slurm_charms::charms::{CharmKind, CmdOutput};
use slurm_charms::interface::{AuthKind, ClusterInfo, MungeKeyRef};

fn node_json(name: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"8000","MemSpecLimit":"1024"}},"new_node":true}}"#
    )
}

/// The leader after its first relation hook: key secret created, `cluster_info` published.
fn converged_controller() -> (State, juju_runtime::RelationId) {
    let (state, rel) = controller(&[("compute/0", node_json("c0"))]);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .expect("the first relation hook");
    (out, rel)
}

fn secret_id() -> SecretId {
    SecretId::parse("secret:d0000000000000000009").expect("a secret id")
}

fn position(calls: &[String], tool: &str) -> usize {
    calls
        .iter()
        .position(|c| c == tool)
        .unwrap_or_else(|| panic!("no {tool} in {calls:?}"))
}

#[test]
fn housekeeping_is_a_revision_removal_on_the_leader_and_a_refresh_elsewhere() {
    let id = secret_id();
    let remove = EventSecret::Remove {
        id: id.clone(),
        revision: Some(3),
    };
    assert_eq!(
        housekeeping(Some(&remove), true),
        vec![SecretAction::RemoveRevision {
            id: id.clone(),
            revision: 3
        }]
    );
    // never the whole secret, never by a unit that does not own it
    let whole = EventSecret::Remove {
        id: id.clone(),
        revision: None,
    };
    assert_eq!(housekeeping(Some(&whole), true), vec![]);
    assert_eq!(housekeeping(Some(&remove), false), vec![]);
    let changed = EventSecret::Changed(id.clone());
    assert_eq!(
        housekeeping(Some(&changed), false),
        vec![SecretAction::Refresh(id)]
    );
    // the leader reads the new revision in observe, with the key (`must_read_key`)
    assert_eq!(housekeeping(Some(&changed), true), vec![]);
    assert_eq!(housekeeping(None, true), vec![]);
}

#[test]
fn secret_remove_on_the_leader_removes_the_revision_and_nothing_else() {
    let (first, _) = converged_controller();
    let (id, _) = first.secrets.iter().next().expect("the key secret");
    let id = id.clone();
    // a rotation made revision 2, which every unit now tracks
    let mut input = first.clone();
    let secret = input.secrets.get_mut(&id).expect("the key secret");
    let rev1 = secret.revisions[&1].clone();
    secret.revisions.insert(2, rev1);
    secret.latest = 2;
    secret.tracked = Some(2);
    let event = Event::SecretRemove(SecretEvent {
        id: id.clone(),
        label: None,
        revision: Some(1),
    });
    let out = run(CharmKind::Slurmctld, event, &input).unwrap();
    let revisions: Vec<u32> = out.secrets[&id].revisions.keys().copied().collect();
    assert_eq!(revisions, vec![2]);
    // nothing else: no other secret change, no relation data, the same files and status, no
    // daemon touched
    let writes = ["secret-add", "secret-grant", "secret-set", "relation-set"];
    assert!(
        !out.calls.iter().any(|c| writes.contains(&c.as_str())),
        "{:?}",
        out.calls
    );
    assert_eq!(
        out.calls.iter().filter(|c| *c == "secret-remove").count(),
        1
    );
    assert_eq!(out.relations, first.relations);
    assert_eq!(out.files, first.files);
    assert_eq!(out.status, first.status);
    assert!(
        !out.commands_run
            .iter()
            // (every leader hook asks whether slurmctld runs: a read)
            .filter(|c| *c != "systemctl is-active slurmctld")
            .any(|c| c.starts_with("systemctl") || c.starts_with("scontrol")),
        "{:?}",
        out.commands_run
    );
}

#[test]
fn secret_changed_on_a_unit_that_is_not_the_leader_refreshes_and_stands_by() {
    let id = secret_id();
    let content = juju_runtime::SecretContent::from([("munge-key".to_owned(), vec![5; 64])]);
    let mut secret = MemorySecret::consumed(content.clone());
    secret.owner = Some(SecretOwner::Application);
    secret.revisions.insert(2, content);
    secret.latest = 2;
    secret.tracked = Some(1);
    let state = State {
        unit: "slurmctld/1".into(),
        leader: false,
        secrets: [(id.clone(), secret)].into(),
        ..State::default()
    };
    let event = Event::SecretChanged(SecretEvent {
        id: id.clone(),
        label: None,
        revision: None,
    });
    let out = run(CharmKind::Slurmctld, event, &state).unwrap();
    assert_eq!(
        out.secrets[&id].tracked,
        Some(2),
        "moved to the new revision"
    );
    // config-get: the standby status says whether it could take over (state-save-location)
    assert_eq!(
        out.calls,
        ["is-leader", "config-get", "secret-get", "status-set"]
    );
    let status = out.status.expect("a status");
    assert!(
        status
            .message
            .starts_with("standby cannot take over: slurmctld's state is on the leader's disk"),
        "{}",
        status.message
    );
    // no file but the record of the status set
    assert_eq!(
        out.files.keys().collect::<Vec<_>>(),
        ["/var/cache/slurm-charms/slurmctld/unit-status"]
    );
    assert!(out.commands_run.is_empty(), "{:?}", out.commands_run);
}

#[test]
fn a_leader_without_a_key_secret_creates_it_first_and_publishes_its_id() {
    let (state, rel) = controller(&[("compute/0", node_json("c0"))]);
    assert!(state.secrets.is_empty());
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    assert_eq!(out.secrets.len(), 1, "one secret created");
    let (id, secret) = out.secrets.iter().next().expect("the key secret");
    assert_eq!(secret.label.as_deref(), Some("cluster-key"));
    assert_eq!(
        secret.revisions[&1]["munge-key"],
        out.files["/etc/munge/munge.key"]
    );
    // created before anything names it, granted before cluster_info names it
    let calls = &out.calls;
    assert!(position(calls, "secret-add") < position(calls, "secret-grant"));
    assert!(position(calls, "secret-grant") < position(calls, "relation-set"));
    assert_eq!(calls.iter().filter(|c| *c == "secret-add").count(), 1);
    // the published cluster_info names it, and the cache records exactly what was published
    let published = &out.relation(&rel).local_app_data["cluster_info"];
    let info = ClusterInfo::from_relation_value(published).unwrap();
    assert_eq!(info.munge_key, MungeKeyRef::Secret(id.clone()));
    let cache = Store::from_bytes(&out.files[STORE_PATH]).expect("a readable cache");
    let cached = cache.relations[&rel.id].cluster_info_published.clone();
    assert_eq!(cached.as_ref(), Some(published));
}

#[test]
fn the_cluster_info_apply_publishes_names_the_id_and_is_recorded_where_written() {
    let (first, rel) = converged_controller();
    let mut cache = Store::from_bytes(&first.files[STORE_PATH]).expect("a readable cache");
    let id = secret_id();
    let write = ClusterInfoWrite {
        auth: AuthKind::Munge,
        slurmctld_host: "ctl-0".parse().unwrap(),
        relations: vec![rel.clone()],
        grants: vec![rel.clone()],
    };
    let value = write.value(&id);
    let info = ClusterInfo::from_relation_value(&value).unwrap();
    assert_eq!(info.munge_key, MungeKeyRef::Secret(id));
    record(&mut cache, &write, &value);
    let key = rel.id;
    assert_eq!(
        cache.relations[&key].cluster_info_published.as_deref(),
        Some(value.as_str())
    );
    // a relation the write does not list keeps what it had
    let untouched = ClusterInfoWrite {
        relations: Vec::new(),
        ..write
    };
    let before = cache.relations[&key].cluster_info_published.clone();
    record(&mut cache, &untouched, "other");
    assert_eq!(cache.relations[&key].cluster_info_published, before);
}

#[test]
fn rotate_key_decides_a_new_revision_from_what_it_read() {
    let id = secret_id();
    let info = SecretInfo {
        id: id.clone(),
        revision: 4,
        label: Some("cluster-key".into()),
        owner: "application".into(),
        description: None,
        rotation: None,
        expiry: None,
    };
    let (change, results) = new_revision(&info, vec![7; 1024]);
    let ActionChange::NewKeyRevision {
        id: changed,
        content,
    } = &change
    else {
        panic!("a new revision: {change:?}");
    };
    assert_eq!(*changed, id);
    assert_eq!(content["munge-key"], vec![7; 1024]);
    assert_eq!(results["secret"], id.uri());
    assert_eq!(results["revision"], "5");
    assert!(
        !format!("{change:?}").contains("7, 7"),
        "the key is never printed"
    );
}

fn rotate_key() -> Event {
    Event::Action(ActionEvent {
        name: "rotate-key".into(),
        id: "1".into(),
    })
}

#[test]
fn rotate_key_makes_the_same_hook_tool_calls_as_before() {
    let (first, _) = converged_controller();
    let mut input = first.clone();
    input.action_params = Some(Map::new());
    let out = run(CharmKind::Slurmctld, rotate_key(), &input).unwrap();
    assert_eq!(
        out.calls,
        [
            "is-leader",
            "config-get",
            "secret-info-get",
            "secret-get",
            "secret-set",
            "action-set"
        ]
    );
    let (id, secret) = out.secrets.iter().next().expect("the key secret");
    assert_eq!(secret.latest, 2);
    assert_eq!(out.action_results["secret"], id.uri());
    assert_eq!(out.action_results["revision"], "2");

    // refused early: no further hook-tool call
    let mut standby = input.clone();
    standby.leader = false;
    let out = run(CharmKind::Slurmctld, rotate_key(), &standby).unwrap();
    assert_eq!(out.calls, ["is-leader", "action-fail"]);
    let mut slurm = input.clone();
    slurm.config.insert("auth-type".into(), "slurm".into());
    let out = run(CharmKind::Slurmctld, rotate_key(), &slurm).unwrap();
    assert_eq!(out.calls, ["is-leader", "config-get", "action-fail"]);
    let mut no_secret = input;
    no_secret.secrets.clear();
    let out = run(CharmKind::Slurmctld, rotate_key(), &no_secret).unwrap();
    assert_eq!(
        out.calls,
        ["is-leader", "config-get", "secret-info-get", "action-fail"]
    );
    assert!(
        out.action_failure
            .as_deref()
            .unwrap_or("")
            .contains("secret"),
        "{:?}",
        out.action_failure
    );
}

/// A steady record as a full hook leaves it (its content does not matter here).
const STEADY: &[u8] = br#"{"fingerprint":"0","message":"ready"}"#;

#[test]
fn a_slurmd_hook_that_fails_after_its_first_write_leaves_no_steady_record() {
    let (mut state, rel) = configured_node(Map::new());
    state.files.insert(STEADY_PATH.into(), STEADY.to_vec());
    // the munge key is written, then munge does not restart: the hook fails half-way
    state.command_outputs.push((
        "systemctl restart munge".into(),
        CmdOutput {
            code: Some(1),
            stderr: "Job for munge.service failed".into(),
            ..Default::default()
        },
    ));
    let (result, out) = run_to_end(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state);
    assert!(result.is_err(), "the hook fails");
    assert_eq!(
        out.commands_run.last().map(String::as_str),
        Some("systemctl restart munge")
    );
    assert!(out.files.contains_key("/etc/munge/munge.key"), "half-way");
    assert!(
        !out.files.contains_key(STEADY_PATH),
        "no steady record left"
    );
}

#[test]
fn a_slurmd_hook_whose_observe_fails_leaves_no_steady_record() {
    let (mut state, rel) = configured_node(Map::new());
    state.files.insert(STEADY_PATH.into(), STEADY.to_vec());
    // a directory where the munge key belongs: reading it fails in observe
    state
        .files
        .insert("/etc/munge/munge.key/stray".into(), Vec::new());
    let (result, out) = run_to_end(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state);
    assert!(result.is_err(), "the hook fails");
    assert!(
        !out.files.contains_key(STEADY_PATH),
        "no steady record left"
    );
    assert!(
        !out.calls
            .iter()
            .any(|c| c == "relation-set" || c == "status-set"),
        "nothing applied: {:?}",
        out.calls
    );
}
