//! `slurmd -C` output Slurm would refuse (issue 11: `CPUs=70000`, 32-bit overflows), through
//! both charms in the simulator: the slurmd unit whose facts overflow Slurm's fields is
//! blocked, naming `slurmd -C`, the key and the rule, and publishes nothing; the controller
//! renders the other node and never the bad value.

#[path = "charm_support.rs"]
mod support;

use support::{Cluster, TWO_T4};

#[test]
fn slurmd_c_values_slurm_refuses_block_that_unit_alone() {
    for (line, key) in [
        ("CPUs=70000 RealMemory=31848", "CPUs"),
        ("CPUs=4294967295 RealMemory=31848", "CPUs"),
        (
            "CPUs=8 CoresPerSocket=70000 RealMemory=31848",
            "CoresPerSocket",
        ),
        ("CPUs=8 Boards=70000 RealMemory=31848", "Boards"),
        ("CPUs=8 RealMemory=-1", "RealMemory"),
    ] {
        let mut c = Cluster::new();
        let root = c.root("slurmd/1");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join("slurmd-C.txt"),
            format!("NodeName=slurmd-1 {line}\nUpTime=0-00:08:47\n"),
        )
        .unwrap();
        c.deploy_slurmctld();
        c.deploy_slurmd("slurmd", 2);
        c.set_gpus("slurmd/0", TWO_T4);
        c.sim.integrate("slurmd", "slurmctld").unwrap();
        c.assert_no_errors();
        let (st, msg) = c.status("slurmd/1");
        assert_eq!(st, "blocked", "{line}: {msg}");
        assert!(
            msg.contains("slurmd -C") && msg.contains(key),
            "{line}: {msg}"
        );
        let conf = c.slurm_conf();
        assert!(conf.contains("NodeName=slurmd-0 "), "{line}: {conf}");
        assert!(!conf.contains("slurmd-1"), "{line}: {conf}");
        assert_eq!(c.status("slurmd/0").0, "active", "{line}");
    }
}
