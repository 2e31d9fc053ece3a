//! Conformance: config-get, is-leader, status-*, application-version-set, juju-log, state-*,
//! network-get, unit-get, ports, juju-reboot, action tools outside actions, context checks.

mod common;
use common::Probe;

/// Deploy `a` with `n` units and run `script` in update-status on each.
fn in_a(n: u32, script: &str) -> Probe {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", n)).unwrap();
    p.script("update-status", script);
    p.sim.update_status(None).unwrap();
    p
}

#[test]
fn config_get_forms() {
    let p = in_a(
        1,
        "run all config-get --format=json\nrun key config-get count --format=json\nrun unknown config-get nope --format=json\nrun everything config-get --all --format=json\nrun both config-get -a count\nrun smart config-get name\n",
    );
    assert_eq!(
        p.result("all").0,
        "{\"count\":3,\"enabled\":true,\"name\":\"probe\",\"ratio\":0.5}\n"
    );
    assert_eq!(p.result("key").0, "3\n");
    assert_eq!(p.result("unknown"), ("null\n".into(), String::new(), 0));
    assert!(p.result("everything").0.contains("\"unset\":null"));
    assert_eq!(p.result("both").2, 2);
    assert_eq!(p.result("smart").0, "probe\n");
}

#[test]
fn config_get_sees_set_config() {
    let mut p = Probe::new();
    p.script("config-changed", "run cfg config-get --format=json count\n");
    p.sim.deploy(p.spec("a", 1).config("count", 7)).unwrap();
    assert_eq!(p.result("cfg").0, "7\n");
    p.sim
        .set_config("a", [("count".to_owned(), serde_json::json!(9))].into())
        .unwrap();
    assert_eq!(p.result("cfg").0, "9\n");
    assert!(
        p.sim
            .set_config("a", [("count".to_owned(), serde_json::json!("x"))].into())
            .is_err()
    );
    assert!(
        p.sim
            .set_config("a", [("nope".to_owned(), serde_json::json!(1))].into())
            .is_err()
    );
}

#[test]
fn is_leader_json_and_smart() {
    let p = in_a(
        2,
        "u=$(echo $JUJU_UNIT_NAME | tr / -)\nrun json-$u is-leader --format=json\nrun smart-$u is-leader\n",
    );
    assert_eq!(p.result("json-a-0").0, "true\n");
    assert_eq!(p.result("json-a-1").0, "false\n");
    assert_eq!(p.result("smart-a-0").0, "True\n");
    assert_eq!(p.result("smart-a-1").0, "False\n");
}

#[test]
fn status_set_rules() {
    let p = in_a(
        2,
        "u=$(echo $JUJU_UNIT_NAME | tr / -)\nrun bad-$u status-set foo\nrun none-$u status-set\nrun app-$u status-set --application active appmsg\nrun ok-$u status-set blocked 'needs x'\nrun many-$u status-set active a b\n",
    );
    assert_eq!(
        p.result("bad-a-0"),
        (
            String::new(),
            "ERROR invalid status \"foo\", expected one of [maintenance blocked waiting active]\n"
                .into(),
            2
        )
    );
    assert_eq!(
        p.result("none-a-0"),
        (
            String::new(),
            "ERROR invalid args, require <status> [message]\n".into(),
            2
        )
    );
    assert_eq!(p.result("app-a-0").2, 0);
    assert_eq!(
        p.result("app-a-1"),
        (
            String::new(),
            "ERROR this unit is not the leader\n".into(),
            1
        )
    );
    assert_eq!(p.result("many-a-0").2, 2);
    let s = p.sim.unit_status("a/1").unwrap();
    assert_eq!(
        (s.status.as_str(), s.message.as_str()),
        ("blocked", "needs x")
    );
    assert_eq!(p.sim.app_status("a").unwrap().message, "appmsg");
}

#[test]
fn status_get_shapes() {
    let p = in_a(
        2,
        "u=$(echo $JUJU_UNIT_NAME | tr / -)\nstatus-set active hi\nrun plain-$u status-get --format=json\nrun data-$u status-get --include-data --format=json\nrun app-$u status-get --application --format=json\n",
    );
    assert_eq!(p.result("plain-a-0").0, "{\"status\":\"active\"}\n");
    assert_eq!(
        p.result("data-a-0").0,
        "{\"message\":\"hi\",\"status\":\"active\",\"status-data\":{}}\n"
    );
    let app: serde_json::Value = serde_json::from_str(&p.result("app-a-0").0).unwrap();
    assert_eq!(
        app["application-status"]["units"]["a/0"]["status"],
        "active"
    );
    assert_eq!(
        p.result("app-a-1"),
        (
            String::new(),
            "ERROR finding application status: this unit is not the leader\n".into(),
            1
        )
    );
}

#[test]
fn application_version_set() {
    let p = in_a(
        1,
        "run v application-version-set 1.2.3\nrun none application-version-set\n",
    );
    assert_eq!(p.result("v").2, 0);
    assert_eq!(p.sim.workload_version("a/0"), "1.2.3");
    assert_eq!(
        p.result("none"),
        (String::new(), "ERROR no version specified\n".into(), 2)
    );
}

#[test]
fn juju_log_levels_prefix_and_errors() {
    let mut p = Probe::new();
    p.script("update-status", "juju-log --log-level WARNING careful now\njuju-log --debug dbg\nrun none juju-log\njuju-log -- -r not-a-flag\n");
    p.script("backend-relation-joined", "juju-log in relation\n");
    p.pair(1);
    p.sim.update_status(Some("b")).unwrap();
    let logs = p.sim.logs();
    let find = |m: &str| logs.iter().find(|l| l.message == m).cloned();
    assert_eq!(find("careful now").unwrap().level, "WARNING");
    assert_eq!(find("dbg").unwrap().level, "DEBUG");
    assert!(find("-r not-a-flag").is_some());
    assert!(find("backend:2: in relation").is_some(), "{logs:?}");
    assert_eq!(
        p.result("none"),
        (String::new(), "ERROR no message specified\n".into(), 2)
    );
}

#[test]
fn state_get_set_delete() {
    let p = in_a(
        1,
        "state-set a=1 b=2\nrun pending state-get --format=json\nstate-delete a\nrun key state-get b --format=json\nrun missing state-get zz --format=json\nrun strict state-get zz --strict\necho '{\"c\": \"3\"}' | state-set --file -\n",
    );
    assert_eq!(p.result("pending").0, "{\"a\":\"1\",\"b\":\"2\"}\n");
    assert_eq!(p.result("key").0, "\"2\"\n");
    assert_eq!(p.result("missing").0, "\"\"\n");
    assert_eq!(
        p.result("strict"),
        (String::new(), "ERROR \"zz\" not found\n".into(), 1)
    );
    let state = p.sim.unit_state("a/0");
    assert_eq!(state.get("a"), None);
    assert_eq!(state["b"], "2");
    assert_eq!(state["c"], "3");
}

#[test]
fn state_get_empty_is_object() {
    let p = in_a(1, "run empty state-get --format=json\n");
    assert_eq!(p.result("empty").0, "{}\n");
}

#[test]
fn network_get_and_unit_get() {
    let p = in_a(
        1,
        "run full network-get db --format=json\nrun ing network-get db --ingress-address --format=json\nrun two network-get db --ingress-address --bind-address --format=json\nrun bad network-get nope\nrun none network-get\nrun extra network-get public --format=json\nrun ug unit-get private-address\nrun ugbad unit-get foo\n",
    );
    let full: serde_json::Value = serde_json::from_str(&p.result("full").0).unwrap();
    assert_eq!(full["ingress-addresses"][0], "10.0.0.1");
    assert_eq!(
        full["bind-addresses"][0]["addresses"][0]["value"],
        "10.0.0.1"
    );
    assert_eq!(full["egress-subnets"][0], "10.0.0.1/32");
    assert_eq!(p.result("ing").0, "\"10.0.0.1\"\n");
    assert_eq!(
        p.result("two").0,
        "{\"bind-address\":\"10.0.0.1\",\"ingress-address\":\"10.0.0.1\"}\n"
    );
    assert_eq!(p.result("bad").2, 1);
    assert_eq!(
        p.result("none"),
        (String::new(), "ERROR no arguments specified\n".into(), 2)
    );
    assert_eq!(p.result("extra").2, 0);
    assert_eq!(p.result("ug").0, "10.0.0.1\n");
    assert_eq!(
        p.result("ugbad"),
        (String::new(), "ERROR unknown setting \"foo\"\n".into(), 2)
    );
}

#[test]
fn ports_open_close_pending_and_conflicts() {
    let p = in_a(
        1,
        "open-port 80\nopen-port 8000-8100/UDP\nopen-port icmp\nrun pending opened-ports --format=json\nrun conflict open-port 80-90/tcp\nopen-port 443\nclose-port 443\nrun eps opened-ports --endpoints --format=json\nrun none open-port\nrun bad open-port 80/sctp\n",
    );
    assert_eq!(
        p.result("pending").0,
        "[\"icmp\",\"80/tcp\",\"8000-8100/udp\"]\n"
    );
    assert_eq!(
        p.result("conflict"),
        (
            String::new(),
            "ERROR cannot open 80-90/tcp (unit \"a/0\"): port range conflicts with 80/tcp (unit \"a/0\") requested earlier\n".into(),
            1
        )
    );
    assert!(p.result("eps").0.contains("\"80/tcp (*)\""));
    assert_eq!(
        p.result("none"),
        (
            String::new(),
            "ERROR no port or range specified\n".into(),
            2
        )
    );
    assert_eq!(p.result("bad").2, 2);
    assert_eq!(
        p.sim.opened_ports("a/0"),
        ["icmp", "80/tcp", "8000-8100/udp"]
    );
}

#[test]
fn action_tools_outside_an_action() {
    let p = in_a(
        1,
        "run get action-get\nrun set action-set a=b\nrun fail action-fail\nrun log action-log hi\nrun badkey action-set A=b\n",
    );
    for l in ["get", "set", "fail", "log"] {
        assert_eq!(
            p.result(l),
            (String::new(), "ERROR not running an action\n".into(), 1),
            "{l}"
        );
    }
    // Argument errors come first (exit 2), as in Juju's Init.
    assert_eq!(p.result("badkey").2, 2);
}

#[test]
fn juju_reboot_commits_with_the_hook() {
    let p = in_a(1, "run r juju-reboot\n");
    assert_eq!(p.result("r").2, 0);
    assert_eq!(p.sim.with_model(|m| m.units["a/0"].reboots), 1);
}

#[test]
fn wrong_context_id_is_refused() {
    let p = in_a(1, "JUJU_CONTEXT_ID=bogus run wrong is-leader\n");
    let (_, err, code) = p.result("wrong");
    assert_eq!(code, 1);
    assert!(
        err.starts_with("ERROR bad request: wrong context ID"),
        "{err}"
    );
}

#[test]
fn help_exits_zero() {
    let p = in_a(1, "run help relation-get --help\n");
    assert_eq!(p.result("help").2, 0);
}

#[test]
fn tool_calls_are_recorded_with_exit_codes() {
    let p = in_a(
        1,
        "is-leader --format=json >/dev/null\nstatus-set bogus || true\n",
    );
    let rec = p
        .sim
        .records()
        .iter()
        .rev()
        .find(|r| r.hook == "update-status")
        .unwrap();
    let calls: Vec<(&str, i32)> = rec
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), c.code))
        .collect();
    assert_eq!(calls, [("is-leader", 0), ("status-set", 2)]);
}
