//! The controller's `slurmd-relation-changed` at thousands of related units, in one process,
//! for an instruction profile (`tools/bench/callgrind.sh`, which counts the instructions of
//! `slurmctld::handle` per changed hook). Ignored: a profile, not a check.
//!
//! Environment: `N` related units (default 10,000); `ITER` changed hooks after the first one,
//! which builds the cache (default 4); `SCENARIO=bench` (hook-bench's case: no node new, one
//! unit's `RealMemory` toggled, default), `SCENARIO=enlisting` (every node new, another unit's
//! `CPUs` changed on each hook), `SCENARIO=unchanged` (the same value again: the event changes
//! nothing) or `SCENARIO=configuring` (every node new, then one more unit
//! runs `node-configured` on each hook: its node leaves `DownNodes` and is resumed); `DIFFER`
//! set: every node its own `RealMemory` (no two alike).

mod common;
use common::changed;
use common::state::{run, settled_controller};
use juju_runtime_testing::bag;
use slurm_charms::charms::CharmKind;

/// Unit `k`'s `node` value: an 8× H100 server, as hook-bench's nodes.
fn node(k: usize, cpus: u32, memory: u64, new_node: bool) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"slurmd-{k}","CPUs":"{cpus}","Boards":"1","SocketsPerBoard":"2","CoresPerSocket":"56","ThreadsPerCore":"2","RealMemory":"{memory}","Gres":["gpu:nvidia_h100_80gb_hbm3:8"],"MemSpecLimit":"1024"}},"new_node":{new_node},"gres":[{{"Name":"gpu","Type":"nvidia_h100_80gb_hbm3","File":"/dev/nvidia[0-7]","Cores":"0-55,112-167"}}]}}"#
    )
}

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore]
fn controller_changed_hooks_for_a_profile() {
    let n = env_usize("N", 10_000);
    let iters = env_usize("ITER", 4);
    let scenario = std::env::var("SCENARIO").unwrap_or_default();
    let configuring = scenario == "configuring";
    let enlisting = scenario == "enlisting" || configuring;
    let differ = std::env::var_os("DIFFER").is_some();
    let memory = |k: usize| 2_063_937 - if differ { k as u64 } else { 0 };
    let units: Vec<(String, String)> = (0..n)
        .map(|k| (format!("compute/{k}"), node(k, 224, memory(k), enlisting)))
        .collect();
    let (mut st, rel) = settled_controller(&units);
    eprintln!(
        "store {} bytes, slurm.conf {} bytes",
        st.files[slurm_charms::charms::slurmctld::store::STORE_PATH].len(),
        st.files["/etc/slurm/slurm.conf"].len()
    );
    for i in 0..iters {
        let (k, value) = if configuring {
            (1 + i, node(1 + i, 224, memory(1 + i), false))
        } else if enlisting {
            let cpus = if i % 2 == 0 { 112 } else { 96 };
            (1 + i, node(1 + i, cpus, memory(1 + i), true))
        } else if scenario == "unchanged" {
            (7, node(7, 224, memory(7), false))
        } else {
            let toggled = memory(7) - (i % 2 == 0) as u64;
            (7, node(7, 224, toggled, false))
        };
        let unit = format!("compute/{k}");
        st.relations[0]
            .remote_units
            .insert(unit.clone(), bag([("node", value.as_str())]));
        st = run(
            CharmKind::Slurmctld,
            changed(&rel, "compute", Some(&unit)),
            &st,
        )
        .unwrap();
        assert!(
            st.text("/etc/slurm/slurm.conf")
                .contains("NodeName=slurmd-"),
            "hook {i} wrote no nodes"
        );
    }
}
