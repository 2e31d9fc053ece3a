//! Smoke test: deploy, integrate, data flows both ways.

mod common;
use common::Probe;

#[test]
fn deploy_runs_install_leader_config_start() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    assert_eq!(
        p.hooks(),
        [
            "a/0 install",
            "a/0 cluster-relation-created",
            "a/0 leader-elected",
            "a/0 config-changed",
            "a/0 start"
        ]
    );
}

#[test]
fn relation_data_flows() {
    let mut p = Probe::new();
    p.script(
        "db-relation-joined",
        "relation-set greeting=hello-from-$JUJU_UNIT_NAME\n",
    );
    p.script(
        "backend-relation-changed",
        "relation-get --format=json > $OUT/got-$(echo $JUJU_UNIT_NAME | tr / -)\n",
    );
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.deploy(p.spec("b", 2)).unwrap();
    p.sim.integrate("a:db", "b:backend").unwrap();
    let got = p.read("got-b-1");
    assert!(got.contains("\"greeting\":\"hello-from-a/0\""), "{got}");
    assert!(got.contains("\"private-address\""), "{got}");
}
