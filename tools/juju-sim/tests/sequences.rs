//! Conformance: event sequences (reference §4) and hook environments (§1.3).

mod common;
use common::Probe;
use juju_sim::HookRecord;

/// The latest record of `hook` on `unit`.
fn rec<'a>(p: &'a Probe, unit: &str, hook: &str) -> &'a HookRecord {
    p.sim
        .records()
        .iter()
        .rev()
        .find(|r| r.unit == unit && r.hook == hook)
        .unwrap_or_else(|| panic!("no {hook} on {unit}"))
}

#[test]
fn integrate_runs_created_then_joined_changed_per_remote_unit_both_sides() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.deploy(p.spec("b", 2)).unwrap();
    p.clear();
    p.sim.integrate("a:db", "b:backend").unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 db-relation-created",
            "b/0 backend-relation-created",
            "b/1 backend-relation-created",
            "a/0 db-relation-joined b/0",
            "a/0 db-relation-changed b/0",
            "a/0 db-relation-joined b/1",
            "a/0 db-relation-changed b/1",
            "b/0 backend-relation-joined a/0",
            "b/0 backend-relation-changed a/0",
            "b/1 backend-relation-joined a/0",
            "b/1 backend-relation-changed a/0",
        ]
    );
}

/// A remote application's relation-changed (empty remote unit) runs before that application's
/// units join: when b's leader writes its app bag in relation-created, a/0 sees the app-level
/// relation-changed first, then relation-joined + relation-changed per unit of b. Follows Juju
/// 3.6 and 4.0 `internal/worker/uniter/relation/resolver.go`
/// `relationsResolver.nextHookForRelation`: after a pending changed of a just-joined unit
/// (`ChangedPending`), departures and broken, "trigger all app hooks first" (a
/// `hooks.RelationChanged` with `RemoteUnit: ""` for each application whose
/// `ApplicationMembers` version differs), and only then "If there are any remote units not
/// locally known, join them" (`hooks.RelationJoined`).
#[test]
fn app_relation_changed_runs_before_the_units_join() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.deploy(p.spec("b", 2)).unwrap();
    p.clear();
    p.script(
        "backend-relation-created",
        "[ $(is-leader --format=json) = true ] && relation-set --app k=v || true\n",
    );
    p.script(
        "db-relation-joined",
        "run joined-app-$(echo $JUJU_REMOTE_UNIT | tr / -) relation-get --app - b\n",
    );
    p.sim.integrate("a:db", "b:backend").unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 db-relation-created",
            "b/0 backend-relation-created",
            "b/1 backend-relation-created",
            "a/0 db-relation-changed",
            "a/0 db-relation-joined b/0",
            "a/0 db-relation-changed b/0",
            "a/0 db-relation-joined b/1",
            "a/0 db-relation-changed b/1",
            "b/0 backend-relation-joined a/0",
            "b/0 backend-relation-changed a/0",
            "b/1 backend-relation-joined a/0",
            "b/1 backend-relation-changed a/0",
        ]
    );
    let r = p
        .sim
        .records()
        .iter()
        .find(|r| r.unit == "a/0" && r.hook == "db-relation-changed")
        .unwrap();
    assert_eq!(r.env_var("JUJU_REMOTE_UNIT"), Some(""));
    assert_eq!(r.env_var("JUJU_REMOTE_APP"), Some("b"));
    // the app data was there before the first join
    assert_eq!(p.result("joined-app-b-0").0, "k: v\n");
}

#[test]
fn integrate_errors() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.deploy(p.spec("b", 1)).unwrap();
    let e = p.sim.integrate("a", "b").unwrap_err().to_string();
    assert!(e.contains("ambiguous"), "{e}");
    assert!(p.sim.integrate("a:db", "b:db").is_err());
    assert!(p.sim.integrate("a:db", "zz").is_err());
    p.sim.integrate("a:db", "b:backend").unwrap();
    assert!(
        p.sim
            .integrate("a:db", "b:backend")
            .unwrap_err()
            .to_string()
            .contains("already exists")
    );
}

#[test]
fn common_environment_is_exactly_jujus() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    let r = rec(&p, "a/0", "install");
    for key in [
        "JUJU_CHARM_DIR",
        "CHARM_DIR",
        "JUJU_CONTEXT_ID",
        "JUJU_HOOK_NAME",
        "JUJU_DISPATCH_PATH",
        "JUJU_AGENT_SOCKET_ADDRESS",
        "JUJU_AGENT_SOCKET_NETWORK",
        "JUJU_UNIT_NAME",
        "JUJU_MODEL_UUID",
        "JUJU_MODEL_NAME",
        "JUJU_API_ADDRESSES",
        "JUJU_MACHINE_ID",
        "JUJU_PRINCIPAL_UNIT",
        "JUJU_AVAILABILITY_ZONE",
        "JUJU_VERSION",
        "CLOUD_API_VERSION",
        "JUJU_CHARM_HTTP_PROXY",
        "JUJU_CHARM_HTTPS_PROXY",
        "JUJU_CHARM_FTP_PROXY",
        "JUJU_CHARM_NO_PROXY",
        "PATH",
        "LANG",
    ] {
        assert!(r.env_var(key).is_some(), "{key} missing");
    }
    assert_eq!(r.env_var("JUJU_DISPATCH_PATH"), Some("hooks/install"));
    assert_eq!(r.env_var("JUJU_HOOK_NAME"), Some("install"));
    assert_eq!(r.env_var("JUJU_AGENT_SOCKET_NETWORK"), Some("unix"));
    assert!(
        r.env_var("JUJU_CONTEXT_ID")
            .unwrap()
            .starts_with("a/0-install-")
    );
    assert!(r.env_var("JUJU_RELATION").is_none());
    assert!(r.env_var("JUJU_REMOTE_UNIT").is_none());
    // Replaced entirely: nothing inherited from the test process.
    assert!(r.env_var("HOME").is_none());
    assert!(r.env_var("CARGO_MANIFEST_DIR").is_none());
    let path = r.env_var("PATH").unwrap();
    assert!(path.starts_with(p.sim.tools_dir().to_str().unwrap()));
    assert!(path.ends_with("/usr/sbin:/usr/bin:/sbin:/bin"));
}

#[test]
fn relation_hook_environment() {
    let mut p = Probe::new();
    p.pair(1);
    let created = rec(&p, "a/0", "db-relation-created");
    assert_eq!(created.env_var("JUJU_RELATION"), Some("db"));
    assert_eq!(created.env_var("JUJU_RELATION_ID"), Some("db:2"));
    assert_eq!(created.env_var("JUJU_REMOTE_APP"), Some("b"));
    assert_eq!(created.env_var("JUJU_REMOTE_UNIT"), Some(""));
    let joined = rec(&p, "a/0", "db-relation-joined");
    assert_eq!(joined.env_var("JUJU_REMOTE_UNIT"), Some("b/0"));
    assert_eq!(joined.env_var("JUJU_HOOK_NAME"), Some("db-relation-joined"));
    assert!(joined.env_var("JUJU_DEPARTING_UNIT").is_none());
}

#[test]
fn departed_environment_and_membership() {
    let mut p = Probe::new();
    p.script(
        "db-relation-departed",
        "run list relation-list --format=json\n",
    );
    p.script(
        "backend-relation-departed",
        "[ $JUJU_UNIT_NAME = b/1 ] && run dying-list relation-list --format=json || true\n",
    );
    p.script(
        "backend-relation-broken",
        "run ids relation-ids backend --format=json\nrun blist relation-list -r $JUJU_RELATION_ID --format=json\nrun bget relation-get --format=json\n",
    );
    p.pair(2);
    p.clear();
    p.sim.remove_unit("b/1").unwrap();
    assert_eq!(
        p.hooks(),
        [
            "b/0 cluster-relation-departed b/1",
            "b/1 cluster-relation-departed b/0",
            "a/0 db-relation-departed b/1",
            "b/1 backend-relation-departed a/0",
            "b/1 backend-relation-broken",
            "b/1 stop",
            "b/1 remove",
        ]
    );
    let d = rec(&p, "a/0", "db-relation-departed");
    assert_eq!(d.env_var("JUJU_REMOTE_UNIT"), Some("b/1"));
    assert_eq!(d.env_var("JUJU_DEPARTING_UNIT"), Some("b/1"));
    let own = rec(&p, "b/1", "backend-relation-departed");
    assert_eq!(own.env_var("JUJU_REMOTE_UNIT"), Some("a/0"));
    assert_eq!(own.env_var("JUJU_DEPARTING_UNIT"), Some("b/1"));
    let broken = rec(&p, "b/1", "backend-relation-broken");
    assert_eq!(broken.env_var("JUJU_REMOTE_UNIT"), Some(""));
    // The departing unit is already absent from the remaining unit's list.
    assert_eq!(p.result("list").0, "[\"b/0\"]\n");
    assert_eq!(p.result("dying-list").0, "[]\n");
    // The broken relation is not listed; its (now empty) membership is still addressable.
    assert_eq!(p.result("ids").0, "[]\n");
    assert_eq!(p.result("blist").0, "[]\n");
    assert_eq!(p.result("bget").2, 0);
    assert!(p.sim.units("b") == ["b/0"]);
}

#[test]
fn joined_unit_is_in_relation_list_during_joined() {
    let mut p = Probe::new();
    p.script(
        "db-relation-joined",
        "run j-$(echo $JUJU_REMOTE_UNIT | tr / -) relation-list --format=json\n",
    );
    p.pair(2);
    assert_eq!(p.result("j-b-0").0, "[\"b/0\"]\n");
    assert_eq!(p.result("j-b-1").0, "[\"b/0\",\"b/1\"]\n");
}

#[test]
fn unit_bag_change_notifies_only_the_other_side() {
    let mut p = Probe::new();
    p.pair(2);
    p.clear();
    p.script(
        "update-status",
        "relation-set -r $(relation-ids backend) k=$JUJU_UNIT_NAME\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    assert_eq!(
        p.hooks(),
        [
            "b/0 update-status",
            "b/1 update-status",
            "a/0 db-relation-changed b/0",
            "a/0 db-relation-changed b/1",
        ]
    );
    let r = rec(&p, "a/0", "db-relation-changed");
    assert_eq!(r.env_var("JUJU_REMOTE_UNIT"), Some("b/1"));
}

#[test]
fn unchanged_data_notifies_nobody() {
    let mut p = Probe::new();
    p.script("backend-relation-created", "relation-set k=v\n");
    p.pair(1);
    p.clear();
    p.script(
        "update-status",
        "relation-set -r $(relation-ids backend) k=v\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    assert_eq!(p.hooks(), ["b/0 update-status"]);
}

#[test]
fn app_bag_change_notifies_remote_units_with_empty_remote_unit() {
    let mut p = Probe::new();
    p.pair(2);
    p.clear();
    p.script(
        "update-status",
        "relation-set -r $(relation-ids db) --app k=v\n",
    );
    p.sim.update_status(Some("a")).unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 update-status",
            "b/0 backend-relation-changed",
            "b/1 backend-relation-changed",
        ]
    );
    let r = rec(&p, "b/0", "backend-relation-changed");
    assert_eq!(r.remote_unit, "");
    assert_eq!(r.env_var("JUJU_REMOTE_UNIT"), Some(""));
    assert_eq!(r.env_var("JUJU_REMOTE_APP"), Some("a"));
}

#[test]
fn peer_app_bag_change_skips_the_leader() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 3)).unwrap();
    p.clear();
    p.script(
        "update-status",
        "[ $(is-leader --format=json) = true ] && relation-set -r $(relation-ids cluster) --app k=v || true\n",
    );
    p.sim.update_status(Some("a")).unwrap();
    let changed: Vec<String> = p
        .hooks()
        .into_iter()
        .filter(|h| h.contains("changed"))
        .collect();
    assert_eq!(
        changed,
        [
            "a/1 cluster-relation-changed",
            "a/2 cluster-relation-changed"
        ]
    );
}

#[test]
fn add_unit_sequence() {
    let mut p = Probe::new();
    p.pair(1);
    p.clear();
    assert_eq!(p.sim.add_unit("b", 1).unwrap(), ["b/1"]);
    assert_eq!(
        p.hooks(),
        [
            "b/1 install",
            "b/1 cluster-relation-created",
            "b/1 backend-relation-created",
            "b/1 config-changed",
            "b/1 start",
            "b/1 cluster-relation-joined b/0",
            "b/1 cluster-relation-changed b/0",
            "b/0 cluster-relation-joined b/1",
            "b/0 cluster-relation-changed b/1",
            "b/1 backend-relation-joined a/0",
            "b/1 backend-relation-changed a/0",
            "a/0 db-relation-joined b/1",
            "a/0 db-relation-changed b/1",
        ]
    );
}

#[test]
fn deploy_with_peers_joins_each_other() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    let hooks = p.hooks();
    assert!(hooks.contains(&"a/0 cluster-relation-joined a/1".to_owned()));
    assert!(hooks.contains(&"a/1 cluster-relation-joined a/0".to_owned()));
    assert_eq!(
        hooks
            .iter()
            .filter(|h| h.contains("leader-elected"))
            .count(),
        1
    );
}

#[test]
fn leader_is_reelected_when_removed() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 3)).unwrap();
    assert_eq!(p.sim.leader("a").as_deref(), Some("a/0"));
    p.clear();
    p.sim.remove_unit("a/0").unwrap();
    assert_eq!(p.sim.leader("a").as_deref(), Some("a/1"));
    assert_eq!(p.hooks().last().unwrap(), "a/1 leader-elected");
}

#[test]
fn set_leader_runs_leader_elected_and_changes_is_leader() {
    let mut p = Probe::new();
    p.script(
        "leader-elected",
        "run le-$(echo $JUJU_UNIT_NAME | tr / -) is-leader --format=json\n",
    );
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.sim.set_leader("a/1").unwrap();
    assert_eq!(p.result("le-a-1").0, "true\n");
    assert_eq!(p.sim.leader("a").as_deref(), Some("a/1"));
}

#[test]
fn remove_relation_departs_and_breaks_everywhere() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.clear();
    p.sim.remove_relation("a", "b").unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 db-relation-departed b/0",
            "a/0 db-relation-broken",
            "b/0 backend-relation-departed a/0",
            "b/0 backend-relation-broken",
        ]
    );
    assert!(p.sim.with_model(|m| !m.relations.contains_key(&rel)));
    assert_eq!(p.sim.relation_id("a", "b"), None);
}

#[test]
fn config_change_runs_config_changed_only_when_changed() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.clear();
    p.sim
        .set_config("a", [("count".to_owned(), serde_json::json!(3))].into())
        .unwrap();
    assert!(p.hooks().is_empty(), "default value: no change");
    p.sim
        .set_config("a", [("count".to_owned(), serde_json::json!(4))].into())
        .unwrap();
    assert_eq!(p.hooks(), ["a/0 config-changed", "a/1 config-changed"]);
}

#[test]
fn upgrade_charm_then_config_changed() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.clear();
    p.sim.upgrade_charm("a", None).unwrap();
    assert_eq!(p.hooks(), ["a/0 upgrade-charm", "a/0 config-changed"]);
}

#[test]
fn update_status_on_every_unit() {
    let mut p = Probe::new();
    p.pair(2);
    p.clear();
    p.sim.update_status(None).unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 update-status",
            "b/0 update-status",
            "b/1 update-status"
        ]
    );
}

#[test]
fn changed_for_a_departed_unit_is_dropped() {
    let mut p = Probe::new();
    p.pair(2);
    p.script(
        "update-status",
        "relation-set -r $(relation-ids backend) k=$JUJU_UNIT_NAME\n",
    );
    // Queue the change notification, then remove the writer before it is delivered.
    p.sim.queue_hook("b/1", juju_sim::Hook::UpdateStatus);
    p.clear();
    p.sim.remove_unit("b/1").unwrap();
    assert!(
        !p.hooks()
            .contains(&"a/0 db-relation-changed b/1".to_owned()),
        "{:?}",
        p.hooks()
    );
}

#[test]
fn remove_application_tears_down_units_and_breaks_relations() {
    let mut p = Probe::new();
    p.pair(2);
    p.clear();
    p.sim.remove_application("b").unwrap();
    let hooks = p.hooks();
    let a: Vec<&String> = hooks.iter().filter(|h| h.starts_with("a/0")).collect();
    assert_eq!(
        a,
        [
            "a/0 db-relation-departed b/0",
            "a/0 db-relation-departed b/1",
            "a/0 db-relation-broken"
        ]
    );
    for u in ["b/0", "b/1"] {
        let mine: Vec<&String> = hooks.iter().filter(|h| h.starts_with(u)).collect();
        assert_eq!(mine.last().unwrap().as_str(), format!("{u} remove"));
        assert!(mine.contains(&&format!("{u} backend-relation-broken")));
    }
    assert!(
        p.sim
            .with_model(|m| !m.apps.contains_key("b") && m.relations.len() == 1)
    );
    assert_eq!(p.sim.relation_id("a", "b"), None);
}
