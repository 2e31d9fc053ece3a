//! Conformance: `goal-state` as Juju 3.6 prints it (rules and Juju sources: README, goal-state).

mod common;
use common::Probe;
use juju_sim::Hook;
use serde_json::Value as Json;
use std::time::Duration;

/// Run `goal-state --format=json` as an update-status hook on `unit`.
fn goal_state(p: &mut Probe, unit: &str) -> Json {
    p.script("update-status", "run gs goal-state --format=json\n");
    let dispatch = common::probe_charm().join("dispatch");
    p.sim
        .run_hook_command(unit, Hook::UpdateStatus, &[dispatch.to_str().unwrap()])
        .unwrap();
    let _ = std::fs::remove_file(p.dir.path().join("update-status"));
    let (out, err, code) = p.result("gs");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn since_format_ok(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z'
        && s.chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19].contains(&i) || c.is_ascii_digit())
}

#[test]
fn units_of_own_app_with_workload_status_and_since() {
    let mut p = Probe::new();
    p.script("start", "status-set active \"up $JUJU_UNIT_NAME\"\n");
    p.sim.deploy(p.spec("a", 2)).unwrap();
    let gs = goal_state(&mut p, "a/1");
    let units = gs["units"].as_object().unwrap();
    assert_eq!(units.keys().collect::<Vec<_>>(), ["a/0", "a/1"]);
    for u in units.values() {
        assert_eq!(u["status"], "active");
        assert!(since_format_ok(u["since"].as_str().unwrap()), "{u}");
        assert_eq!(
            u.as_object().unwrap().len(),
            2,
            "only status and since: {u}"
        );
    }
}

#[test]
fn since_is_the_workload_status_time_in_utc() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    let now = p.sim.now();
    p.sim.advance_time(Duration::from_secs(3600)).unwrap();
    p.script(
        "update-status",
        "status-set blocked later\nrun gs goal-state --format=json\n",
    );
    p.sim.update_status(Some("a")).unwrap();
    let gs: Json = serde_json::from_str(&p.result("gs").0).unwrap();
    let expect = juju_sim::secrets::clock::goal_state_time(now + 3600);
    assert_eq!(
        gs["units"]["a/0"],
        serde_json::json!({"status": "blocked", "since": expect})
    );
}

#[test]
fn add_unit_shows_every_new_unit_at_once_as_waiting() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.script(
        "install",
        "u=$(echo $JUJU_UNIT_NAME | tr / -)\nrun gs-$u goal-state --format=json\n",
    );
    p.sim.add_unit("a", 3).unwrap();
    let gs: Json = serde_json::from_str(&p.result("gs-a-1").0).unwrap();
    let units = gs["units"].as_object().unwrap();
    assert_eq!(
        units.keys().collect::<Vec<_>>(),
        ["a/0", "a/1", "a/2", "a/3"],
        "all new units visible from the first new unit's install"
    );
    assert_eq!(units["a/2"]["status"], "waiting");
    assert_eq!(units["a/3"]["status"], "waiting");
    assert_eq!(
        units["a/1"]["status"], "maintenance",
        "installing charm software"
    );
}

#[test]
fn relations_by_local_endpoint_with_remote_app_and_units_and_no_peers() {
    let mut p = Probe::new();
    p.script("start", "status-set active\n");
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.sim.deploy(p.spec("b", 2)).unwrap();
    p.sim.integrate("a:db", "b:backend").unwrap();
    let gs = goal_state(&mut p, "a/0");
    let rels = gs["relations"].as_object().unwrap();
    assert_eq!(
        rels.keys().collect::<Vec<_>>(),
        ["db"],
        "peer `cluster` excluded"
    );
    let db = rels["db"].as_object().unwrap();
    assert_eq!(db.keys().collect::<Vec<_>>(), ["b", "b/0", "b/1"]);
    assert_eq!(db["b"]["status"], "joined");
    assert_eq!(db["b/0"]["status"], "active");
    assert!(since_format_ok(db["b"]["since"].as_str().unwrap()));
    let other = goal_state(&mut p, "b/1");
    assert_eq!(
        other["relations"]["backend"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["a", "a/0", "a/1"]
    );
}

/// The relation reads `joining` until a leader of either application enters scope, then
/// `joined`: the other leader need not have entered. Follows Juju 3.6 and 4.0
/// `internal/worker/uniter/relation/statetracker.go` `relationStateTracker.joinRelation`
/// ("Leaders get to set the relation status": after `relationer.Join()` the unit sets
/// `relation.Joined` if it is the leader), which runs when the unit enters scope, before its
/// `relation-created` hook; `goal-state` prints that status
/// (`apiserver/facades/agent/uniter/uniter.go` `goalStateRelations`, `r.Status()`).
#[test]
fn relation_reads_joined_once_either_leader_entered_scope() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.sim.deploy(p.spec("b", 1)).unwrap();
    // a/1 leads a: a/0's relation-created runs before any leader entered scope
    p.sim.set_leader("a/1").unwrap();
    p.script(
        "db-relation-created",
        "run created-$(echo $JUJU_UNIT_NAME | tr / -) goal-state --format=json\n",
    );
    p.sim.integrate("a:db", "b:backend").unwrap();
    let read =
        |p: &Probe, label: &str| -> Json { serde_json::from_str(&p.result(label).0).unwrap() };
    assert_eq!(
        read(&p, "created-a-0")["relations"]["db"]["b"]["status"],
        "joining"
    );
    // a/1 entered scope as a's leader; b's leader b/0 has not entered yet
    let hooks = p.hooks();
    let at = |h: &str| hooks.iter().position(|x| x == h).unwrap();
    assert!(at("a/1 db-relation-created") < at("b/0 backend-relation-created"));
    assert_eq!(
        read(&p, "created-a-1")["relations"]["db"]["b"]["status"],
        "joined"
    );
    assert_eq!(
        goal_state(&mut p, "a/0")["relations"]["db"]["b"]["status"],
        "joined"
    );
}

#[test]
fn dying_units_read_dying_with_their_old_since_then_vanish() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    let before = goal_state(&mut p, "a/0")["units"]["a/1"]["since"].clone();
    p.sim.advance_time(Duration::from_secs(600)).unwrap();
    p.script(
        "cluster-relation-departed",
        "run departed goal-state --format=json\n",
    );
    p.sim.remove_unit("a/1").unwrap();
    let during: Json = serde_json::from_str(&p.result("departed").0).unwrap();
    assert_eq!(during["units"]["a/1"]["status"], "dying");
    assert_eq!(during["units"]["a/1"]["since"], before);
    let after = goal_state(&mut p, "a/0");
    assert_eq!(
        after["units"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["a/0"],
        "dead units are not listed"
    );
}

#[test]
fn a_unit_in_error_reads_error() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.script(
        "update-status",
        "if [ $JUJU_UNIT_NAME = a/1 ]; then exit 1; fi\n",
    );
    p.sim.update_status(Some("a")).unwrap();
    assert!(p.sim.is_error("a/1"));
    assert_eq!(goal_state(&mut p, "a/0")["units"]["a/1"]["status"], "error");
}

#[test]
fn yaml_is_the_default_and_json_is_compact() {
    let mut p = Probe::new();
    p.script("start", "status-set active\n");
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.script(
        "update-status",
        "run yaml goal-state\nrun json goal-state --format=json\nrun extra goal-state x\nrun smart goal-state --format=smart\n",
    );
    p.sim.update_status(None).unwrap();
    let json = p.result("json").0;
    let since: Json = serde_json::from_str::<Json>(&json).unwrap()["units"]["a/0"]["since"].clone();
    let since = since.as_str().unwrap();
    assert_eq!(
        json,
        format!(
            "{{\"units\":{{\"a/0\":{{\"status\":\"active\",\"since\":\"{since}\"}}}},\"relations\":{{}}}}\n"
        )
    );
    assert_eq!(
        p.result("yaml").0,
        format!("units:\n  a/0:\n    status: active\n    since: {since}\nrelations: {{}}\n")
    );
    assert_eq!(
        p.result("extra"),
        (
            String::new(),
            "ERROR unrecognized args: [\"x\"]\n".into(),
            2
        )
    );
    assert_eq!(p.result("smart").2, 2);
}

#[test]
fn planned_units_count_goal_state_units_not_dying() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 3)).unwrap();
    p.script(
        "cluster-relation-departed",
        "if [ $JUJU_UNIT_NAME = a/0 ]; then goal-state --format=json > $OUT/gs.json; fi\n",
    );
    p.sim.remove_unit("a/2").unwrap();
    let gs: Json = serde_json::from_str(&p.read("gs.json")).unwrap();
    let planned = gs["units"]
        .as_object()
        .unwrap()
        .values()
        .filter(|u| u["status"] != "dying")
        .count();
    assert_eq!(planned, 2);
}

#[test]
fn remote_units_added_together_are_listed_before_they_join() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.deploy(p.spec("b", 1)).unwrap();
    p.sim.integrate("a:db", "b:backend").unwrap();
    p.script(
        "db-relation-joined",
        "if [ ! -f $OUT/first.json ]; then goal-state --format=json > $OUT/first.json; fi\n",
    );
    p.sim.add_unit("b", 3).unwrap();
    let gs: Json = serde_json::from_str(&p.read("first.json")).unwrap();
    let db = gs["relations"]["db"].as_object().unwrap();
    assert_eq!(
        db.keys().collect::<Vec<_>>(),
        ["b", "b/0", "b/1", "b/2", "b/3"],
        "a/0's first join already sees every unit of the batch"
    );
    let planned = db.keys().filter(|k| k.starts_with("b/")).count();
    assert_eq!(planned, 4);
}
