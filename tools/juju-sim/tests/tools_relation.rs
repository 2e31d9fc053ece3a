//! Conformance: relation-get/set/ids/list — JSON shapes, defaults, errors, permissions.

mod common;
use common::Probe;

/// Deploy a(1) + b(nb), relate, then run `script` in update-status on every b unit.
fn in_b(nb: u32, setup: &[(&str, &str)], script: &str) -> Probe {
    let mut p = Probe::new();
    for (hook, body) in setup {
        p.script(hook, body);
    }
    p.pair(nb);
    p.script("update-status", script);
    p.sim.update_status(Some("b")).unwrap();
    p
}

#[test]
fn get_all_keys_is_a_json_object() {
    let p = in_b(
        1,
        &[],
        "run all relation-get -r $(relation-ids backend) --format=json - a/0\n",
    );
    let (out, err, code) = p.result("all");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["private-address"], "10.0.0.1");
    assert!(out.ends_with("}\n"));
}

#[test]
fn get_missing_key_is_null_and_present_key_a_string() {
    let p = in_b(
        1,
        &[("db-relation-created", "relation-set k=v\n")],
        "rid=$(relation-ids backend)\nrun missing relation-get -r $rid --format=json nokey a/0\nrun k relation-get -r $rid --format=json k a/0\n",
    );
    assert_eq!(p.result("missing"), ("null\n".into(), String::new(), 0));
    assert_eq!(p.result("k"), ("\"v\"\n".into(), String::new(), 0));
}

#[test]
fn get_defaults_to_remote_unit_then_remote_app() {
    let p = in_b(
        1,
        &[
            (
                "db-relation-created",
                "relation-set --app appkey=appval\nrelation-set unitkey=unitval\n",
            ),
            (
                "backend-relation-changed",
                "[ -n \"$JUJU_REMOTE_UNIT\" ] && run changed relation-get --format=json || true\n",
            ),
            (
                "backend-relation-created",
                "run created relation-get --format=json\n",
            ),
        ],
        "",
    );
    let (created, _, _) = p.result("created");
    assert_eq!(created, "{\"appkey\":\"appval\"}\n");
    let (changed, _, _) = p.result("changed");
    assert!(changed.contains("\"unitkey\":\"unitval\""), "{changed}");
}

#[test]
fn get_outside_relation_hook_needs_a_target() {
    let p = in_b(
        1,
        &[],
        "run x relation-get -r $(relation-ids backend) --format=json\n",
    );
    assert_eq!(
        p.result("x"),
        (
            String::new(),
            "ERROR no unit or application specified\n".into(),
            2
        )
    );
}

#[test]
fn get_rejects_app_name_without_app_flag_and_bad_unit_names() {
    let p = in_b(
        1,
        &[],
        "rid=$(relation-ids backend)\nrun app relation-get -r $rid - a\nrun bad relation-get -r $rid - 'A/x'\n",
    );
    assert_eq!(
        p.result("app").1,
        "ERROR expected unit name, got application name \"a\"\n"
    );
    assert_eq!(p.result("app").2, 2);
    assert_eq!(
        p.result("bad"),
        (String::new(), "ERROR invalid unit name \"A/x\"\n".into(), 2)
    );
}

#[test]
fn non_leader_cannot_read_own_app_bag_leader_can() {
    let p = in_b(
        2,
        &[],
        "run own-$(echo $JUJU_UNIT_NAME | tr / -) relation-get -r $(relation-ids backend) --app --format=json - b\n",
    );
    assert_eq!(p.result("own-b-0"), ("{}\n".into(), String::new(), 0));
    assert_eq!(
        p.result("own-b-1"),
        (String::new(), "ERROR permission denied\n".into(), 1)
    );
}

#[test]
fn peer_app_bag_is_readable_by_non_leaders() {
    let mut p = Probe::new();
    p.script(
        "leader-elected",
        "relation-set -r $(relation-ids cluster) --app shared=yes\n",
    );
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.script(
        "update-status",
        "[ $JUJU_UNIT_NAME = a/1 ] && run peer relation-get -r $(relation-ids cluster) --app --format=json - a || true\n",
    );
    p.sim.update_status(None).unwrap();
    assert_eq!(
        p.result("peer"),
        ("{\"shared\":\"yes\"}\n".into(), String::new(), 0)
    );
}

#[test]
fn non_leader_cannot_write_app_bag() {
    let p = in_b(
        2,
        &[],
        "run set-$(echo $JUJU_UNIT_NAME | tr / -) relation-set -r $(relation-ids backend) --app k=v\n",
    );
    assert_eq!(p.result("set-b-0").2, 0);
    assert_eq!(
        p.result("set-b-1"),
        (
            String::new(),
            "ERROR cannot write relation settings\n".into(),
            1
        )
    );
}

#[test]
fn empty_value_deletes_and_other_keys_are_kept() {
    let mut p = Probe::new();
    p.script("backend-relation-created", "relation-set a=1 b=2\n");
    let rel = p.pair(1);
    p.script(
        "update-status",
        "relation-set -r $(relation-ids backend) a=\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    let bag = p.sim.unit_bag(rel, "b/0");
    assert_eq!(bag.get("a"), None);
    assert_eq!(bag.get("b").map(String::as_str), Some("2"));
}

#[test]
fn set_from_stdin_json_and_yaml_file_with_args_overriding() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.script(
        "update-status",
        "rid=$(relation-ids backend)\necho '{\"j\": \"json\", \"n\": 5}' | relation-set -r $rid --file -\nprintf 'y: yaml\\no: file\\n' > $OUT/s.yaml\nrelation-set -r $rid --file $OUT/s.yaml o=arg\necho 'd: devstdin' | relation-set -r $rid --file /dev/stdin\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    let bag = p.sim.unit_bag(rel, "b/0");
    assert_eq!(bag["j"], "json");
    assert_eq!(bag["n"], "5");
    assert_eq!(bag["y"], "yaml");
    assert_eq!(bag["o"], "arg");
    assert_eq!(bag["d"], "devstdin");
}

#[test]
fn key_value_errors() {
    let p = in_b(
        1,
        &[],
        "rid=$(relation-ids backend)\nrun empty relation-set -r $rid =x\nrun dup relation-set -r $rid a=1 a=2\n",
    );
    assert_eq!(
        p.result("empty"),
        (
            String::new(),
            "ERROR expected \"key=value\", got \"=x\"\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("dup"),
        (
            String::new(),
            "ERROR key \"a\" specified more than once\n".into(),
            2
        )
    );
}

#[test]
fn relation_ids_shapes_and_errors() {
    let p = in_b(
        1,
        &[(
            "backend-relation-changed",
            "run default relation-ids --format=json\n",
        )],
        "run ids relation-ids backend --format=json\nrun unknown relation-ids nosuch --format=json\nrun none relation-ids\nrun smart relation-ids backend\n",
    );
    assert_eq!(
        p.result("ids"),
        ("[\"backend:2\"]\n".into(), String::new(), 0)
    );
    assert_eq!(p.result("default").0, "[\"backend:2\"]\n");
    assert_eq!(p.result("unknown"), ("[]\n".into(), String::new(), 0));
    assert_eq!(
        p.result("none"),
        (
            String::new(),
            "ERROR no endpoint name specified\n".into(),
            2
        )
    );
    assert_eq!(p.result("smart").0, "backend:2\n");
}

#[test]
fn relation_list_shapes() {
    let p = in_b(
        2,
        &[],
        "[ $JUJU_UNIT_NAME = b/0 ] || exit 0\nrid=$(relation-ids backend)\nrun list relation-list -r $rid --format=json\nrun app relation-list -r $rid --app --format=json\nrun noapp relation-list -r $rid --app=false --format=json\nrun peers relation-list -r $(relation-ids cluster) --format=json\n",
    );
    assert_eq!(p.result("list").0, "[\"a/0\"]\n");
    assert_eq!(p.result("app").0, "\"a\"\n");
    assert_eq!(p.result("noapp").0, "[\"a/0\"]\n");
    assert_eq!(p.result("peers").0, "[\"b/1\"]\n");
}

#[test]
fn unknown_relation_id_is_a_flag_error() {
    let p = in_b(
        1,
        &[],
        "run num relation-get -r 99 - a/0\nrun long relation-list --relation=backend:99\nrun wrongep relation-list -r db:2\nrun nonnum relation-list -r x\n",
    );
    assert_eq!(
        p.result("num"),
        (
            String::new(),
            "ERROR invalid value \"99\" for option -r: relation not found\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("long").1,
        "ERROR invalid value \"backend:99\" for option --relation: relation not found\n"
    );
    assert_eq!(p.result("wrongep").2, 2);
    assert_eq!(p.result("nonnum").2, 2);
}

#[test]
fn all_relation_flag_forms_work() {
    let p = in_b(
        1,
        &[],
        "run f1 relation-list -r 2\nrun f2 relation-list -r2\nrun f3 relation-list -r=2\nrun f4 relation-list --relation 2\nrun f5 relation-list --relation=2\nrun f6 relation-list -r backend:2\nrun f7 relation-list --format json -r 2\n",
    );
    for l in ["f1", "f2", "f3", "f4", "f5", "f6"] {
        assert_eq!(p.result(l), ("a/0\n".into(), String::new(), 0), "{l}");
    }
    assert_eq!(p.result("f7").0, "[\"a/0\"]\n");
}

#[test]
fn option_errors_and_extra_args() {
    let p = in_b(
        1,
        &[],
        "rid=$(relation-ids backend)\nrun bogus relation-list -r $rid --bogus\nrun extra relation-list -r $rid x\nrun needs relation-list -r\nrun fmt relation-list -r $rid --format=xml\n",
    );
    assert_eq!(
        p.result("bogus"),
        (
            String::new(),
            "ERROR option provided but not defined: --bogus\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("extra"),
        (
            String::new(),
            "ERROR unrecognized args: [\"x\"]\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("needs"),
        (
            String::new(),
            "ERROR option needs an argument: -r\n".into(),
            2
        )
    );
    assert_eq!(p.result("fmt").2, 2);
}

#[test]
fn departed_unit_data_stays_readable() {
    let mut p = Probe::new();
    p.script(
        "backend-relation-joined",
        "relation-set mark=$JUJU_UNIT_NAME\n",
    );
    p.script(
        "db-relation-departed",
        "run gone relation-get --format=json mark $JUJU_DEPARTING_UNIT\nrun list relation-list --format=json\n",
    );
    p.pair(2);
    p.sim.remove_unit("b/1").unwrap();
    assert_eq!(p.result("gone"), ("\"b/1\"\n".into(), String::new(), 0));
    assert_eq!(p.result("list").0, "[\"b/0\"]\n");
}
