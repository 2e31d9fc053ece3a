//! Scale properties CI checks (debug build, small N): a controller relation event costs a
//! constant number of hook-tool calls, whatever the number of related units (the relation
//! cache, `docs/charms.md`). `tests/charm_bench.rs` measures the same at 1,000 units.

#[path = "charm_support.rs"]
mod support;

use juju_sim::{Hook, SimOptions};
use support::{Cluster, TWO_T4};

/// A settled cluster of `n` two-GPU slurmd units integrated with one controller.
fn settled(n: u32) -> Cluster {
    let mut c = Cluster::with_options(SimOptions {
        record_env: false,
        keep_logs: false,
        ..SimOptions::default()
    });
    for i in 0..n {
        c.set_gpus(&format!("slurmd/{i}"), TWO_T4);
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", n);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

/// The hook tools one controller `slurmd-relation-changed` for `slurmd/0` calls.
fn tools_per_changed(c: &mut Cluster) -> Vec<String> {
    let rel = c.sim.relation_id("slurmd", "slurmctld").unwrap();
    c.sim.clear_records();
    c.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(rel, Some("slurmd/0".into())),
    );
    c.sim.settle().unwrap();
    let records = c.sim.records();
    let r = records
        .iter()
        .find(|r| r.unit == "slurmctld/0")
        .expect("the controller ran the hook");
    assert!(r.succeeded(), "{}", r.stderr);
    r.calls.iter().map(|t| t.tool.clone()).collect()
}

#[test]
fn controller_relation_changed_calls_do_not_grow_with_units() {
    let mut small = settled(5);
    let mut large = settled(40);
    assert!(
        large
            .status("slurmctld/0")
            .1
            .starts_with("40 nodes, 80 GPUs")
    );
    let at_5 = tools_per_changed(&mut small);
    let at_40 = tools_per_changed(&mut large);
    assert_eq!(
        at_5.len(),
        at_40.len(),
        "5 units: {at_5:?}; 40 units: {at_40:?}"
    );
    assert!(at_40.len() <= 20, "{at_40:?}");
    assert_eq!(
        at_5.iter().filter(|t| *t == "relation-get").count(),
        1,
        "{at_5:?}"
    );
}
