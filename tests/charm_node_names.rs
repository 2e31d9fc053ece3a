//! Node names end to end through both charms in the simulator: a host whose name Slurm
//! accepts (`gpu_node_2`, see docs/slurm-config.md) is enlisted; one Slurm refuses blocks
//! that slurmd unit alone, saying why, and the rest of the cluster is written.

#[path = "charm_support.rs"]
mod support;

use slurm_charms::slurm::{parse_gres_conf, parse_slurm_conf};
use support::{Cluster, FACTS, TWO_T4};

/// Controller plus two slurmd units; `slurmd/1`'s `slurmd -C` reports `name`.
fn cluster_with_host_name(name: &str) -> Cluster {
    let mut c = Cluster::new();
    let root = c.root("slurmd/1");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("slurmd-C.txt"),
        format!("NodeName={name} {FACTS}\nUpTime=0-00:08:47\n"),
    )
    .unwrap();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 2);
    c.set_gpus("slurmd/1", TWO_T4);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

#[test]
fn gpu_node_2_is_enlisted_end_to_end() {
    let c = cluster_with_host_name("gpu_node_2");
    let conf = parse_slurm_conf(&c.slurm_conf(), "slurm.conf").unwrap();
    let names: Vec<String> = conf.nodes.iter().map(|n| n.name.to_string()).collect();
    assert_eq!(names, ["gpu_node_2", "slurmd-0"], "{}", c.slurm_conf());
    let node = &conf.nodes[0];
    assert_eq!(node.gres[0].to_string(), "gpu:tesla_t4:2");
    let gres = parse_gres_conf(&c.gres_conf(), "gres.conf").unwrap();
    let devices: u64 = gres.nodes["gpu_node_2"]
        .iter()
        .map(|l| l.device_count())
        .sum();
    assert_eq!(devices, 2);
    assert!(c.slurm_conf().contains("gpu_node_2"));
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.starts_with("2 nodes, 2 GPUs") && !msg.contains("rejected"),
        "{msg}"
    );
    let (st, msg) = c.status("slurmd/1");
    assert_eq!(st, "active", "{msg}");
    assert!(msg.contains("2 GPUs"), "{msg}");
}

#[test]
fn a_name_slurm_refuses_blocks_that_unit_alone() {
    // slurmctld 22.05: "fatal: 'all' is a reserved word disallowed for use with NodeName".
    let c = cluster_with_host_name("all");
    let (st, msg) = c.status("slurmd/1");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.contains("NodeName") && msg.contains("reserved"),
        "{msg}"
    );
    let rel = support::rel(&c);
    assert!(!c.sim.unit_bag(rel, "slurmd/1").contains_key("node"));
    let conf = parse_slurm_conf(&c.slurm_conf(), "slurm.conf").unwrap();
    let names: Vec<String> = conf.nodes.iter().map(|n| n.name.to_string()).collect();
    assert_eq!(names, ["slurmd-0"]);
    assert_eq!(c.status("slurmctld/0").0, "active");
    assert_eq!(c.status("slurmd/0").0, "active");
}
