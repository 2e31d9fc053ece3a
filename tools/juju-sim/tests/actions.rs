//! Conformance: actions — validation, defaults, results, failure modes, environment.

mod common;
use common::Probe;
use serde_json::json;

fn deployed() -> Probe {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p
}

#[test]
fn results_are_nested_and_params_have_defaults() {
    let mut p = deployed();
    p.script(
        "do",
        "action-set out.mode=\"$(action-get mode)\" out.depth=\"$(action-get nested.depth)\" top=1\naction-log working\nrun params action-get --format=json\n",
    );
    let r = p
        .sim
        .run_action("a/0", "do", json!({"count": 2, "nested": {}}))
        .unwrap();
    assert_eq!(r.status, "completed");
    assert_eq!(
        r.results,
        json!({"out": {"mode": "fast", "depth": "2"}, "top": "1"})
    );
    assert_eq!(r.logs, ["working"]);
    assert_eq!(
        p.result("params").0,
        "{\"count\":2,\"mode\":\"fast\",\"nested\":{\"depth\":2}}\n"
    );
}

#[test]
fn action_environment() {
    let mut p = deployed();
    p.sim.run_action("a/1", "other", json!({})).unwrap();
    let r = p.sim.records().last().unwrap();
    assert!(r.action);
    assert_eq!(r.env_var("JUJU_HOOK_NAME"), Some(""));
    assert_eq!(r.env_var("JUJU_DISPATCH_PATH"), Some("actions/other"));
    assert_eq!(r.env_var("JUJU_ACTION_NAME"), Some("other"));
    assert_eq!(r.env_var("JUJU_ACTION_UUID"), Some("1"));
    assert_eq!(r.env_var("JUJU_ACTION_TAG"), Some("action-1"));
}

#[test]
fn validation_rejects_unknown_action_param_type_and_missing() {
    let mut p = deployed();
    let e = p
        .sim
        .run_action("a/0", "nope", json!({}))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "action \"nope\" not defined on unit \"a/0\"");
    let e = p
        .sim
        .run_action("a/0", "do", json!({"zz": 1}))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("validation failed") && e.contains("\"zz\""),
        "{e}"
    );
    let e = p
        .sim
        .run_action("a/0", "do", json!({"count": "x"}))
        .unwrap_err()
        .to_string();
    assert!(e.contains("invalid type"), "{e}");
    assert!(p.sim.run_action("a/0", "other", json!({"x": 1})).is_err());
    // Nothing ran.
    assert!(p.sim.records().iter().all(|r| !r.action));
}

#[test]
fn action_fail_fails_but_commits() {
    let mut p = deployed();
    p.script("do", "state-set done=yes\naction-fail 'no luck'\n");
    let r = p.sim.run_action("a/0", "do", json!({})).unwrap();
    assert_eq!(
        (r.status.as_str(), r.message.as_str()),
        ("failed", "no luck")
    );
    assert_eq!(p.sim.unit_state("a/0")["done"], "yes");
    assert!(!p.sim.is_error("a/0"));
}

#[test]
fn action_fail_default_message() {
    let mut p = deployed();
    p.script("do", "action-fail\n");
    let r = p.sim.run_action("a/0", "do", json!({})).unwrap();
    assert_eq!(
        r.message,
        "action failed without reason given, check action for errors"
    );
}

#[test]
fn non_zero_exit_fails_without_commit_and_keeps_unit_healthy() {
    let mut p = deployed();
    p.script("do", "state-set done=yes\necho oops >&2\nexit 4\n");
    let r = p.sim.run_action("a/0", "do", json!({})).unwrap();
    assert_eq!(
        (r.status.as_str(), r.message.as_str()),
        ("failed", "exit status 4")
    );
    assert_eq!(r.return_code, 4);
    assert_eq!(r.stderr, "oops\n");
    assert!(p.sim.unit_state("a/0").is_empty());
    assert!(!p.sim.is_error("a/0"));
}

#[test]
fn action_set_key_rules() {
    let mut p = deployed();
    p.script(
        "do",
        "run upper action-set Key=v\nrun reserved action-set stdout=v\nrun nested-reserved action-set a.stderr=v\nrun noeq action-set novalue\nrun dash action-set -- -a=v\n",
    );
    p.sim.run_action("a/0", "do", json!({})).unwrap();
    assert_eq!(
        p.result("upper"),
        (
            String::new(),
            "ERROR key \"Key\" must start and end with lowercase alphanumeric, and contain only lowercase alphanumeric, hyphens and periods\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("reserved"),
        (
            String::new(),
            "ERROR cannot set reserved action key \"stdout\"\n".into(),
            2
        )
    );
    assert_eq!(p.result("nested-reserved").2, 2);
    assert_eq!(
        p.result("noeq"),
        (
            String::new(),
            "ERROR argument \"novalue\" must be of the form key...=value\n".into(),
            2
        )
    );
    assert_eq!(p.result("dash").2, 2);
}

#[test]
fn leader_alias_and_juju_reboot_refused_in_actions() {
    let mut p = deployed();
    p.script("do", "run reboot juju-reboot\n");
    let r = p.sim.run_action("a/leader", "do", json!({})).unwrap();
    assert_eq!(r.unit, "a/0");
    assert_eq!(
        p.result("reboot"),
        (
            String::new(),
            "ERROR juju-reboot is not supported when running an action.\n".into(),
            1
        )
    );
}

#[test]
fn action_relation_writes_trigger_relation_changed() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.script(
        "do",
        "relation-set -r $(relation-ids backend) from=action\n",
    );
    p.clear();
    p.sim.run_action("b/0", "do", json!({})).unwrap();
    assert_eq!(p.sim.unit_bag(rel, "b/0")["from"], "action");
    assert!(
        p.hooks()
            .contains(&"a/0 db-relation-changed b/0".to_owned())
    );
}

#[test]
fn unit_in_error_refuses_actions() {
    let mut p = Probe::new();
    p.script("install", "exit 1\n");
    p.sim.deploy(p.spec("a", 1)).unwrap();
    assert!(matches!(
        p.sim.run_action("a/0", "other", json!({})),
        Err(juju_sim::SimError::UnitInError(_))
    ));
}
