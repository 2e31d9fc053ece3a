//! The charms through the simulator: every flow of issue 5 §4, asserting on the exact files,
//! the relation data, the statuses and the commands the charms ran (recorded by fakes).

#[path = "charm_support.rs"]
mod support;

use support::{Cluster, TWO_T4};

#[test]
fn smoke_print() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 2);
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.settle().unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.sim.settle().unwrap();
    for r in c.sim.records() {
        if !r.succeeded() { println!("FAILED {} {} {}", r.unit, r.hook, r.stderr); }
    }
    println!("{}", c.slurm_conf());
    println!("{}", c.gres_conf());
    println!("{:?} {:?} {:?}", c.status("slurmctld/0"), c.status("slurmd/0"), c.status("slurmd/1"));
    println!("{:#?}", c.commands("slurmctld/0"));
    println!("{:#?}", c.commands("slurmd/0"));
    c.assert_no_errors();
}
