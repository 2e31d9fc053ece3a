//! Names are owned first-come (issue 11 item 3), through both charms in the simulator: a node
//! or partition name belongs to whoever had it first, whatever the relation ids sort like as
//! strings (`"slurmd:10"` < `"slurmd:2"`); the newcomer alone is refused, named in the
//! controller's status, and told through `verdicts` (its unit blocks: node not enlisted). The
//! default partition does not move to a new application whose name sorts first.

#[path = "charm_support.rs"]
mod support;

use support::{Cluster, FACTS, NEW_NODE_NOTE, TWO_T4};

/// Plants `slurmd -C` output naming `node` for `unit`.
fn host_name(c: &Cluster, unit: &str, node: &str) {
    let root = c.root(unit);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("slurmd-C.txt"),
        format!("NodeName={node} {FACTS}\nUpTime=0-00:08:47\n"),
    )
    .unwrap();
}

/// Controller and application `compute` (one unit, node `gpu-node-0`, 2 GPUs) related on a
/// low relation id; the next relation gets id 10 (sorts first as a string).
fn owner_cluster() -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    host_name(&c, "compute/0", "gpu-node-0");
    c.deploy_slurmd("compute", 1);
    c.set_gpus("compute/0", TWO_T4);
    // The owner's relation id sorts after "10" as a string ("slurmd:2" > "slurmd:10").
    c.sim
        .with_model_mut(|m| m.next_relation_id = m.next_relation_id.max(2));
    let id = c.sim.integrate("compute", "slurmctld").unwrap();
    assert!((2..10).contains(&id), "{id}");
    c.assert_no_errors();
    c.sim
        .with_model_mut(|m| m.next_relation_id = m.next_relation_id.max(10));
    c
}

#[test]
fn a_newcomer_on_a_later_relation_cannot_take_a_node_name() {
    let mut c = owner_cluster();
    let before = c.slurm_conf();
    assert!(before.contains("NodeName=gpu-node-0 "), "{before}");
    host_name(&c, "evil/0", "gpu-node-0");
    c.deploy_slurmd("evil", 1);
    let id = c.sim.integrate("evil", "slurmctld").unwrap();
    assert!(id >= 10);
    c.assert_no_errors();
    // The owner keeps its node, in its own partition; slurm.conf names it once.
    let conf = c.slurm_conf();
    let nodes: Vec<&str> = conf
        .lines()
        .filter(|l| l.starts_with("NodeName="))
        .collect();
    assert_eq!(nodes.len(), 1, "{conf}");
    assert!(nodes[0].contains("Gres=gpu:tesla_t4:2"), "{conf}");
    assert!(
        conf.lines()
            .any(|l| l.starts_with("PartitionName=compute ") && l.contains("Nodes=gpu-node-0")),
        "{conf}"
    );
    assert!(!conf.contains("PartitionName=evil "), "{conf}");
    // The controller names the newcomer; the newcomer's unit says it was not enlisted.
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.contains("1 rejected (evil/0)") && msg.contains("compute/0"),
        "{msg}"
    );
    let (st, msg) = c.status("evil/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.starts_with("node not enlisted:") && msg.contains("gpu-node-0"),
        "{msg}"
    );
    let (st, msg) = c.status("compute/0");
    assert_eq!(
        (st.as_str(), msg.as_str()),
        (
            "active",
            format!("2 GPUs: gpu:tesla_t4:2{NEW_NODE_NOTE}").as_str()
        )
    );
    // Later hooks (a full rebuild included) keep the owner.
    c.sim.set_leader("slurmctld/0").unwrap();
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    assert!(c.slurm_conf().contains("Nodes=gpu-node-0"));
    assert_eq!(c.status("evil/0").0, "blocked");
    // Once the owner leaves, the name is free and the newcomer gets it.
    c.sim.remove_relation("compute", "slurmctld").unwrap();
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    let conf = c.slurm_conf();
    assert!(
        conf.lines()
            .any(|l| l.starts_with("PartitionName=evil ") && l.contains("Nodes=gpu-node-0")),
        "{conf}"
    );
    let (st, msg) = c.status("evil/0");
    assert_eq!(st, "active", "{msg}");
}

#[test]
fn a_newcomer_cannot_take_a_partition_name() {
    let mut c = owner_cluster();
    c.deploy_inert("evil", 1);
    let id = c.sim.integrate("evil", "slurmctld").unwrap();
    assert!(id >= 10);
    c.assert_no_errors();
    let node = r#"{"node_parameters":{"NodeName":"evil-0","CPUs":"8","RealMemory":"31848"},"new_node":false}"#;
    // The newcomer publishes a partition with the owner's name.
    c.publish(id, "evil", r#"{"compute":{"State":"UP"}}"#, "evil/0", node);
    c.assert_no_errors();
    let conf = c.slurm_conf();
    let parts: Vec<&str> = conf
        .lines()
        .filter(|l| l.starts_with("PartitionName="))
        .collect();
    assert_eq!(parts.len(), 1, "{conf}");
    assert!(parts[0].contains("Nodes=gpu-node-0"), "{conf}");
    assert!(!conf.contains("evil-0"), "{conf}");
    let (_, msg) = c.status("slurmctld/0");
    assert!(
        msg.contains("rejected (evil)") && msg.contains("already published by application compute"),
        "{msg}"
    );
    // The verdict for its unit is published on its relation only.
    let verdicts = c
        .sim
        .app_bag(id, "slurmctld")
        .get("verdicts")
        .cloned()
        .unwrap_or_default();
    assert!(
        verdicts.contains("evil/0") && verdicts.contains("partition compute"),
        "{verdicts}"
    );
    let owner_rel = c.sim.relation_id("compute", "slurmctld").unwrap();
    assert_eq!(c.sim.app_bag(owner_rel, "slurmctld").get("verdicts"), None);
    assert_eq!(c.status("compute/0").0, "active");
}

#[test]
fn the_default_partition_stays_and_a_missing_one_is_a_warning() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("zeta", 1);
    c.sim.integrate("zeta", "slurmctld").unwrap();
    c.deploy_slurmd("alpha", 1);
    c.sim.integrate("alpha", "slurmctld").unwrap();
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    let conf = c.slurm_conf();
    let default: Vec<&str> = conf.lines().filter(|l| l.contains("Default=YES")).collect();
    assert_eq!(default.len(), 1, "{conf}");
    assert!(default[0].starts_with("PartitionName=zeta "), "{conf}");
    // Naming a partition that does not exist is a warning in the status.
    let cfg = [("default-partition".to_string(), serde_json::json!("nosuch"))].into();
    c.sim.set_config("slurmctld", cfg).unwrap();
    c.assert_no_errors();
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.contains("default-partition nosuch names no partition"),
        "{msg}"
    );
}

/// Ownership is remembered, not recomputed from arrival order: a unit that comes first in that
/// order (a lower unit number) and later publishes a name another unit already has does not
/// take it, on the hook of its change or on any later one.
#[test]
fn an_owned_node_name_stays_with_its_owner_whatever_the_claim_order() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_inert("evil", 2);
    let id = c.sim.integrate("evil", "slurmctld").unwrap();
    c.assert_no_errors();
    let publish = |c: &mut Cluster, unit: &str, name: &str, cpus: u32| {
        let node = format!(
            r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"{cpus}","RealMemory":"31848"}},"new_node":false}}"#
        );
        c.publish(id, "evil", r#"{"evil":{"State":"UP"}}"#, unit, &node);
        c.assert_no_errors();
    };
    publish(&mut c, "evil/1", "shared-0", 8);
    publish(&mut c, "evil/0", "other-0", 8);
    assert!(
        c.slurm_conf().contains("Nodes=other-0,shared-0"),
        "{}",
        c.slurm_conf()
    );
    // evil/0 comes first by unit number, but evil/1 owns the name
    publish(&mut c, "evil/0", "shared-0", 8);
    for round in 0..5 {
        if round == 2 {
            // the owner changes its record but not its name: it keeps the name
            publish(&mut c, "evil/1", "shared-0", 16);
            assert!(c.slurm_conf().contains("CPUs=16"), "{}", c.slurm_conf());
        }
        if round == 3 {
            // a full rebuild of the relation cache (charm upgraded) keeps who came first
            c.sim.upgrade_charm("slurmctld", None).unwrap();
            c.assert_no_errors();
        }
        if round == 4 {
            // so does the one a leader election makes
            c.sim.set_leader("slurmctld/0").unwrap();
            c.assert_no_errors();
        }
        let conf = c.slurm_conf();
        assert!(conf.contains("Nodes=shared-0"), "{conf}");
        let (_, msg) = c.status("slurmctld/0");
        assert!(
            msg.contains("1 rejected (evil/0)") && msg.contains("already used by evil/1"),
            "{msg}"
        );
        c.sim.update_status(None).unwrap();
        c.assert_no_errors();
    }
}
