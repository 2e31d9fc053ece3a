//! Issue 41: the charms write their metrics for node-exporter's textfile collector, through the
//! simulator, the real charm binary, the fake NVML and recording stand-ins: slurmd's GPU health
//! (a fault shows up as `slurm_node_gpu_fault`), slurmctld's cluster metrics at update-status
//! (`slurm_scheduler_up` 0 when scontrol fails); nothing is written where no node-exporter
//! textfile directory exists.

#[path = "charm_support.rs"]
mod support;

use serde_json::{Value, json};
use slurm_charms::charms::cos::{CONTROLLER_TEXTFILE, GPU_TEXTFILE, TEXTFILE_DIR};
use support::*;

fn textfile_dir(c: &Cluster, unit: &str) -> std::path::PathBuf {
    c.root(unit).join(TEXTFILE_DIR.trim_start_matches('/'))
}

fn read(c: &Cluster, unit: &str, name: &str) -> Option<String> {
    std::fs::read_to_string(textfile_dir(c, unit).join(name)).ok()
}

fn fault(c: &Cluster, device: usize, value: Value) {
    let path = c.root("slurmd/0").join("nvml.json");
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    cfg["devices"][device]["health"] = value;
    std::fs::write(&path, cfg.to_string()).unwrap();
}

/// One slurmd unit with two T4s related to a controller; `with_dirs`: both units have the
/// node-exporter textfile directory (a COS subordinate is there).
fn cluster(with_dirs: bool) -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.set_gpus("slurmd/0", TWO_T4);
    if with_dirs {
        for unit in ["slurmd/0", "slurmctld/0"] {
            std::fs::create_dir_all(textfile_dir(&c, unit)).unwrap();
        }
    }
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    std::fs::write(c.root("slurmd/0").join("sinfo.txt"), "idle|none\n").unwrap();
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    c
}

#[test]
fn gpu_health_reaches_the_textfile() {
    let mut c = cluster(true);
    let text = read(&c, "slurmd/0", GPU_TEXTFILE).expect("slurm-gpu.prom written");
    assert!(
        text.lines()
            .any(|l| l.starts_with("slurm_node_gpus{node=\"slurmd-0\"} 2")),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("slurm_node_gpu_healthy{") && l.ends_with(" 1"))
            .count(),
        2,
        "{text}"
    );
    assert!(!text.contains("slurm_node_gpu_fault{"), "{text}");

    fault(&c, 1, json!({"ecc_uncorrected": 3}));
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    let text = read(&c, "slurmd/0", GPU_TEXTFILE).unwrap();
    assert!(
        text.lines().any(|l| l
            == "slurm_node_gpu_fault{node=\"slurmd-0\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\",fault=\"uncorrectable_ecc\"} 1"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l
            == "slurm_node_gpu_healthy{node=\"slurmd-0\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\"} 0"),
        "{text}"
    );

    // The fault clears: healthy again.
    fault(&c, 1, json!({}));
    c.sim.update_status(Some("slurmd")).unwrap();
    let text = read(&c, "slurmd/0", GPU_TEXTFILE).unwrap();
    assert!(!text.contains("slurm_node_gpu_fault{"), "{text}");
}

#[test]
fn controller_writes_scheduler_health_at_update_status() {
    let mut c = cluster(true);
    let text = read(&c, "slurmctld/0", CONTROLLER_TEXTFILE).expect("slurmctld.prom written");
    assert!(text.lines().any(|l| l == "slurm_scheduler_up 1"), "{text}");
    assert!(
        c.commands("slurmctld/0")
            .iter()
            .any(|l| l == "scontrol -o show nodes"),
        "{:?}",
        c.commands("slurmctld/0")
    );

    // slurmctld stops answering.
    std::fs::write(c.root("slurmctld/0").join("fail-scontrol--o"), "down").unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    let text = read(&c, "slurmctld/0", CONTROLLER_TEXTFILE).unwrap();
    assert!(text.lines().any(|l| l == "slurm_scheduler_up 0"), "{text}");
}

#[test]
fn no_textfile_directory_no_metrics_and_no_commands() {
    let c = cluster(false);
    assert!(read(&c, "slurmd/0", GPU_TEXTFILE).is_none());
    assert!(read(&c, "slurmctld/0", CONTROLLER_TEXTFILE).is_none());
    assert!(
        !c.commands("slurmctld/0")
            .iter()
            .any(|l| l.starts_with("scontrol -o show")),
        "{:?}",
        c.commands("slurmctld/0")
    );
}
