//! A hook that fails after its `relation-set`: Juju discards the hook's relation data, so the
//! controller's local cache must not claim it was published. The simulator injects a one-off
//! `status-set` failure into the leader's first relation hook; after `juju resolve` retries
//! it, the cache and the relation data agree and every node is enlisted. The same holds when the
//! hook fails earlier, at the key secret's `secret-grant` or at the `relation-set` itself.

#[path = "charm_support.rs"]
mod support;

use slurm_charms::charms::slurmctld::store::{STORE_PATH, Store};
use support::*;

/// The cache's record of what was published as `cluster_info` on relation `id`.
fn cached_cluster_info(c: &Cluster, id: u32) -> Option<String> {
    let raw = c.bytes("slurmctld/0", STORE_PATH)?;
    let cache = Store::from_bytes(&raw).expect("a readable cache");
    cache
        .relations
        .get(&id)
        .and_then(|r| r.cluster_info_published.clone())
}

#[test]
fn a_failed_status_set_leaves_cache_and_relation_data_in_step() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 2);
    c.assert_no_errors();
    // The leader's next status-set (in its first relation hook) fails once.
    c.sim.fail_next_tool_call("slurmctld/0", "status-set");
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    assert!(c.sim.is_error("slurmctld/0"), "the hook failed");
    let id = rel(&c);
    // Juju discarded the failed hook's relation-set ...
    assert_eq!(c.sim.app_bag(id, "slurmctld").get("cluster_info"), None);
    // ... and the cache does not claim otherwise.
    assert_eq!(cached_cluster_info(&c, id), None);

    // `juju resolve`: the hook runs again, then the queued ones.
    c.sim.resolve("slurmctld/0").unwrap();
    let units = ["slurmctld/0", "slurmd/0", "slurmd/1"];
    assert!(units.iter().all(|u| !c.sim.is_error(u)), "no unit in error");
    // The error message said what failed and what to do.
    let failed: Vec<_> = c.sim.records().iter().filter(|r| !r.succeeded()).collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].stderr.contains("status-set failed"),
        "{}",
        failed[0].stderr
    );
    assert!(
        failed[0].stderr.contains("juju resolve"),
        "{}",
        failed[0].stderr
    );
    let published = c.sim.app_bag(id, "slurmctld").get("cluster_info").cloned();
    assert!(
        published.is_some(),
        "cluster_info is published after the retry"
    );
    assert_eq!(cached_cluster_info(&c, id), published);
    // Every node is in slurm.conf: the slurmd units got the controller's data.
    let records = c.slurm_records().join("\n");
    assert!(records.contains("NodeName=slurmd-[0-1] "), "{records}");
    assert_eq!(c.status("slurmd/0").0, "active");
}

/// The leader's first relation hook fails at the key secret's grant, or at the `relation-set` of
/// `cluster_info` (apply's hook-tool writes, before the status): Juju discards the hook's
/// writes, and the cache, recorded only once every hook-tool call succeeded, claims nothing;
/// the retry publishes and the two agree.
#[test]
fn a_failed_grant_or_relation_set_leaves_cache_and_relation_data_in_step() {
    for tool in ["secret-grant", "relation-set"] {
        let mut c = Cluster::new();
        c.deploy_slurmctld();
        c.deploy_slurmd("slurmd", 1);
        c.assert_no_errors();
        c.sim.fail_next_tool_call("slurmctld/0", tool);
        c.sim.integrate("slurmd", "slurmctld").unwrap();
        assert!(c.sim.is_error("slurmctld/0"), "{tool}: the hook failed");
        let id = rel(&c);
        assert_eq!(
            c.sim.app_bag(id, "slurmctld").get("cluster_info"),
            None,
            "{tool}"
        );
        assert_eq!(cached_cluster_info(&c, id), None, "{tool}");

        c.sim.resolve("slurmctld/0").unwrap();
        assert!(
            ["slurmctld/0", "slurmd/0"]
                .iter()
                .all(|u| !c.sim.is_error(u)),
            "{tool}: no unit in error"
        );
        let failed: Vec<_> = c.sim.records().iter().filter(|r| !r.succeeded()).collect();
        assert_eq!(failed.len(), 1, "{tool}");
        assert!(
            failed[0].stderr.contains(&format!("{tool} failed")),
            "{}",
            failed[0].stderr
        );
        let published = c.sim.app_bag(id, "slurmctld").get("cluster_info").cloned();
        assert!(published.is_some(), "{tool}: published after the retry");
        assert_eq!(cached_cluster_info(&c, id), published, "{tool}");
        assert_eq!(c.status("slurmd/0").0, "active", "{tool}");
    }
}
