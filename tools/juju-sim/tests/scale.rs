//! Scaling rules: adding a unit runs a constant number of hooks (Juju only tells the other
//! side), and hook-tool calls do not depend on the model size.

mod common;
use juju_sim::DeploySpec;
use std::path::Path;

fn charm(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/charms")
        .join(name)
}

/// Hooks run (and tool calls made) by adding one node to a cluster of `n` nodes.
fn add_one(n: u32) -> (Vec<String>, usize) {
    let mut sim = common::sim();
    sim.deploy(DeploySpec::new("ctl", charm("demo-ctl")))
        .unwrap();
    sim.deploy(DeploySpec::new("node", charm("demo-node")).units(n))
        .unwrap();
    sim.integrate("node", "ctl").unwrap();
    sim.clear_records();
    sim.add_unit("node", 1).unwrap();
    let hooks = sim
        .records()
        .iter()
        .map(|r| {
            let unit = if r.unit.starts_with("node/") {
                "node/new"
            } else {
                r.unit.as_str()
            };
            let remote = if r.remote_unit.starts_with("node/") {
                " node/new"
            } else {
                ""
            };
            format!("{unit} {}{remote}", r.hook)
        })
        .collect();
    let calls = sim.records().iter().map(|r| r.calls.len()).sum();
    (hooks, calls)
}

#[test]
fn adding_a_unit_costs_the_same_at_any_size() {
    let (small_hooks, small_calls) = add_one(2);
    let (big_hooks, big_calls) = add_one(12);
    assert_eq!(small_hooks, big_hooks);
    assert_eq!(small_calls, big_calls);
    assert_eq!(
        small_hooks,
        [
            "node/new install",
            "node/new controller-relation-created",
            "node/new config-changed",
            "node/new start",
            "node/new controller-relation-changed",
            "node/new controller-relation-joined",
            "node/new controller-relation-changed",
            "ctl/0 nodes-relation-joined node/new",
            "ctl/0 nodes-relation-changed node/new",
        ]
    );
}
