//! Slurm 25.11+'s own OpenMetrics endpoints through the simulator and the real charm binary
//! (issue 41): the controller of a `slurmctld -V` 26.05.5 writes `MetricsType` and publishes
//! the four endpoints as `metrics_scrape_jobs` over `cos-agent`; a `PrivateData` set by the
//! operator withdraws them; on 22.05 neither. The real daemons' side is
//! `tests/slurm_openmetrics.rs`.

#[path = "charm_support.rs"]
mod support;

use serde_json::{Value, json};
use support::*;

const CTL: &str = "slurmctld/0";

/// Controller (Slurm `version`) and one node, the controller related to the subordinate.
fn cluster(version: Option<&str>) -> (Cluster, u32) {
    let mut c = Cluster::new();
    if let Some(v) = version {
        let root = c.root(CTL);
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("slurm-version.txt"), v).unwrap();
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    configure(&mut c, &["slurmd/0"]);
    let cos = relate_cos_agent(&mut c, "slurmctld");
    (c, cos)
}

fn jobs(c: &Cluster, cos: u32) -> Vec<Value> {
    let bag = c.sim.unit_bag(cos, CTL);
    let v: Value = serde_json::from_str(bag.get("config").expect("config published")).unwrap();
    v["metrics_scrape_jobs"].as_array().unwrap().clone()
}

fn metrics_lines(c: &Cluster) -> Vec<String> {
    c.slurm_conf()
        .lines()
        .filter(|l| l.to_ascii_lowercase().starts_with("metrics"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn slurm_26_05_gets_metrics_type_and_the_four_scrape_jobs() {
    let (mut c, cos) = cluster(Some("26.05.5"));
    assert_eq!(metrics_lines(&c), ["MetricsType=metrics/openmetrics"]);
    let want: Vec<Value> = [
        (0, "jobs"),
        (1, "nodes"),
        (2, "partitions"),
        (3, "scheduler"),
    ]
    .iter()
    .map(|(i, n)| {
        json!({
            "job_name": format!("slurmctld_{i}_slurm_{n}"),
            "metrics_path": format!("/metrics/{n}"),
            "static_configs": [{"targets": ["localhost:6817"]}],
        })
    })
    .collect();
    assert_eq!(jobs(&c, cos), want);
    // PrivateData makes the endpoints need a token (26.05) or turns them off (25.11)
    c.sim
        .set_config(
            "slurmctld",
            [(
                "slurm-conf-parameters".to_string(),
                json!("PrivateData=jobs"),
            )]
            .into(),
        )
        .unwrap();
    c.sim.settle().unwrap();
    c.assert_no_errors();
    assert!(c.slurm_conf().contains("\nPrivateData=jobs\n"));
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
}

#[test]
fn slurm_22_05_gets_neither() {
    let (c, cos) = cluster(None);
    assert_eq!(metrics_lines(&c), Vec::<String>::new());
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
}

/// Only the unit that runs slurmctld (the leader) publishes the endpoints; when leadership
/// moves, the new leader publishes them in the hook that starts slurmctld and the former one
/// withdraws them in its next hook (a target left behind would be down: cosl's `HostDown`).
#[test]
fn the_jobs_follow_leadership() {
    const SHARED: &str = "/srv/slurmctld-state";
    let mut c = Cluster::new();
    for u in ["slurmctld/0", "slurmctld/1"] {
        let root = c.root(u);
        std::fs::create_dir_all(root.join(SHARED.trim_start_matches('/'))).unwrap();
        std::fs::write(root.join("slurm-version.txt"), "26.05.5").unwrap();
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.sim
        .set_config(
            "slurmctld",
            [("state-save-location".to_owned(), json!(SHARED))].into(),
        )
        .unwrap();
    c.sim.add_unit("slurmctld", 1).unwrap();
    let cos = relate_cos_agent(&mut c, "slurmctld");
    let published = |c: &Cluster, unit: &str| {
        let bag = c.sim.unit_bag(cos, unit);
        let v: Value = serde_json::from_str(bag.get("config").expect("config")).unwrap();
        v["metrics_scrape_jobs"].as_array().unwrap().len()
    };
    assert_eq!(published(&c, "slurmctld/0"), 4);
    assert_eq!(published(&c, "slurmctld/1"), 0);
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    assert_eq!(published(&c, "slurmctld/1"), 4);
    // Juju 4 tells the former leader nothing; its next hook stops slurmctld and withdraws them
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(!c.root("slurmctld/0").join("running-slurmctld").exists());
    assert_eq!(published(&c, "slurmctld/0"), 0);
    assert_eq!(published(&c, "slurmctld/1"), 4);
}
