//! End to end on real Slurm (issue 15 item 1): the real charms, run by the Juju simulator,
//! drive Debian's munged, slurmctld and slurmd (docs/e2e.md); the fake NVML injects GPU faults.
//! A failing GPU drains its node with the exact reason, jobs stop landing there, the node is
//! resumed once the fault clears, and an operator's drain is left alone. Also (item 3): the node
//! Features derived from the GPUs make `srun --constraint=<GPU type>` land on the right node.
//!
//! Hosts: juju-e2e-0 slurmctld/0; juju-e2e-1 slurmd/0 (2 x T4, the one that fails);
//! juju-e2e-2 slurmd/1 (1 x L4, where jobs go meanwhile).

mod e2e;

use e2e::{Cluster, Suite, machine as host};
use juju_sim::{DeploySpec, Simulator, UnitExtras};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

const REGISTER: Duration = Duration::from_secs(60);
const ECC: &str = "gpu 1 (00000000:86:00.0): uncorrectable ECC errors";

fn t4(minor: u32, bus: &str) -> Value {
    gpu("Tesla T4", minor, bus)
}

fn gpu(name: &str, minor: u32, bus: &str) -> Value {
    let cpus: Vec<u32> =
        (0..std::thread::available_parallelism().map_or(1, |n| n.get()) as u32).collect();
    json!({
        "name": name,
        "uuid": format!("GPU-7e54{:04x}-0000-4000-8000-00000000000{minor}", name.len()),
        "pci_bus_id": bus,
        "minor": minor,
        "memory_total": 16106127360u64,
        "cpu_affinity": cpus,
    })
}

struct Scenario {
    cluster: Cluster,
    sim: Simulator,
    work: tempfile::TempDir,
}

impl Scenario {
    fn nvml(&self, host: &str) -> PathBuf {
        self.work.path().join("nvml").join(format!("{host}.json"))
    }

    /// `sinfo` on the controller: `STATE|REASON` of `node`.
    fn sinfo(&self, node: &str) -> String {
        let r = self
            .cluster
            .run(
                &host(0).0,
                "sinfo",
                &["-h", "-N", "-n", node, "-o", "%T|%E"],
            )
            .ok();
        r.stdout
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    fn update_status(&mut self) {
        self.sim
            .update_status(Some("slurmd"))
            .expect("update-status");
        for u in ["slurmctld/0", "slurmd/0", "slurmd/1"] {
            assert!(!self.sim.is_error(u), "{u} in error");
        }
    }

    fn status(&self, unit: &str) -> (String, String) {
        let s = self.sim.unit_status(unit).unwrap();
        (s.status, s.message)
    }

    /// Where `srun -N1 --gres=gpu:1 hostname` runs, `n` times.
    fn job_hosts(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                let r = self
                    .cluster
                    .run(&host(0).0, "srun", &["-N1", "--gres=gpu:1", "hostname"])
                    .ok();
                r.stdout.trim().to_string()
            })
            .collect()
    }
}

fn start(suite: Suite) -> Scenario {
    let (cluster, work) = e2e::cluster_with_gpus(
        suite,
        "e2e-gpu-health-",
        &[
            Vec::new(),
            vec![t4(0, "00000000:3B:00.0"), t4(1, "00000000:86:00.0")],
            vec![gpu("NVIDIA L4", 0, "00000000:3B:00.0")],
        ],
    );
    Scenario {
        cluster,
        sim: Simulator::new().expect("simulator"),
        work,
    }
}

fn extras_for(s: &Scenario) -> impl Fn(&str) -> UnitExtras + Send + Sync + 'static {
    s.cluster.unit_extras(
        &s.work.path().join("nvml"),
        e2e::units_on_machines(&[("slurmctld/0", 0), ("slurmd/0", 1), ("slurmd/1", 2)]),
    )
}

#[test]
fn e2e_gpu_health_drains_and_resumes_22_05() {
    gpu_health(Suite::Bookworm);
}

#[test]
fn e2e_gpu_health_drains_and_resumes_24_11() {
    gpu_health(Suite::Trixie);
}

#[test]
fn e2e_gpu_health_drains_and_resumes_26_05() {
    gpu_health(Suite::Sid);
}

/// One line for the closing record: slurmd/0's status and its node's `STATE|REASON`.
fn phase(s: &Scenario, node: &str, what: &str) -> String {
    let (st, msg) = s.status("slurmd/0");
    format!(
        "{what:<36} slurmd/0 {st}: {msg:<56} sinfo: {}",
        s.sinfo(node)
    )
}

fn gpu_health(suite: Suite) {
    let name = format!("e2e_gpu_health on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut s = start(suite);
    let extras = std::sync::Arc::new(extras_for(&s));
    let (e1, e2) = (extras.clone(), extras.clone());
    let ctl_charm = e2e::charm_dir(s.work.path(), "slurmctld");
    let node_charm = e2e::charm_dir(s.work.path(), "slurmd");
    s.sim
        .deploy(
            DeploySpec::new("slurmctld", &ctl_charm)
                .config("default-partition", "slurmd")
                .extras_fn(move |u| e1(u)),
        )
        .expect("deploy slurmctld");
    s.sim
        .deploy(
            DeploySpec::new("slurmd", &node_charm)
                .units(2)
                .extras_fn(move |u| e2(u)),
        )
        .expect("deploy slurmd");
    s.sim.integrate("slurmd", "slurmctld").expect("integrate");
    for u in ["slurmd/0", "slurmd/1"] {
        let r = s.sim.run_action(u, "node-configured", json!({})).unwrap();
        assert_eq!(r.status, "completed", "{r:?}");
    }
    s.update_status();
    let (ctl, n1, n2) = (host(0).0, host(1).0, host(2).0);
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);
    s.cluster
        .wait_node_idle(&ctl, &n2, "gpu:nvidia_l4:1", REGISTER);
    s.update_status();

    // Item 3: Features from the GPUs; --constraint picks the node by GPU type.
    let features = s
        .cluster
        .run(&ctl, "sinfo", &["-h", "-N", "-o", "%N %f"])
        .ok()
        .stdout;
    e2e::eprint_block("sinfo -N -o '%N %f'", &features);
    assert!(
        features.contains(&format!("{n1} tesla_t4,cuda12")),
        "{features}"
    );
    assert!(
        features.contains(&format!("{n2} nvidia_l4,cuda12")),
        "{features}"
    );
    for (constraint, expected) in [("tesla_t4", &n1), ("nvidia_l4", &n2)] {
        for _ in 0..2 {
            let r = s
                .cluster
                .run(
                    &ctl,
                    "srun",
                    &[&format!("--constraint={constraint}"), "hostname"],
                )
                .ok();
            assert_eq!(
                r.stdout.trim(),
                expected.as_str(),
                "--constraint={constraint}"
            );
        }
    }
    let r = s
        .cluster
        .run(&ctl, "srun", &["--constraint=nvidia_l4&cuda12", "hostname"])
        .ok();
    assert_eq!(r.stdout.trim(), n2);
    let r = s
        .cluster
        .run(
            &ctl,
            "srun",
            &["--constraint=nvidia_h100_80gb_hbm3", "true"],
        )
        .fails();
    e2e::eprint_block("srun --constraint=<a type no node has>", &r.stderr);
    assert_eq!(
        s.status("slurmd/0").0,
        "active",
        "{:?}",
        s.status("slurmd/0")
    );

    // The jobs above have left n1 (no COMPLETING flag): sinfo says `drained`, not
    // `draining`, right after the charm's drain only on a node that holds no job.
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);

    let mut phases = vec![phase(&s, &n1, "healthy")];
    // GPU 1 of n1 reports uncorrectable ECC errors: drained with the exact reason, blocked.
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(s.nvml(&n1)).unwrap()).unwrap();
    cfg["devices"][1]["health"] = json!({"ecc_uncorrected": 4});
    std::fs::write(s.nvml(&n1), cfg.to_string()).unwrap();
    s.update_status();
    let state = s.sinfo(&n1);
    e2e::eprint_block("sinfo after the ECC fault", &state);
    assert_eq!(state, format!("drained|slurmd-charm: {ECC}"));
    assert_eq!(s.status("slurmd/0"), ("blocked".into(), ECC.into()));
    phases.push(phase(&s, &n1, "ECC fault on GPU 1"));
    let r = s
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    e2e::eprint_block("detect-gpus health", &format!("{}", r.results["health"]));
    assert_eq!(r.results["health"]["problems"]["0"], ECC);
    // Jobs no longer land there.
    assert_eq!(s.job_hosts(3), vec![n2.clone(); 3]);
    let r = s
        .cluster
        .run(&ctl, "srun", &["-w", &n1, "--immediate=3", "true"])
        .fails();
    e2e::eprint_block("srun -w on the drained node", &r.stderr);
    // The next hook changes nothing while the fault lasts.
    s.update_status();
    assert_eq!(s.sinfo(&n1), format!("drained|slurmd-charm: {ECC}"));

    // The fault clears: the charm resumes its own drain.
    cfg["devices"][1]["health"] = json!({});
    std::fs::write(s.nvml(&n1), cfg.to_string()).unwrap();
    s.update_status();
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);
    assert_eq!(s.status("slurmd/0").0, "active");
    phases.push(phase(&s, &n1, "fault cleared"));
    let r = s
        .cluster
        .run(
            &ctl,
            "srun",
            &["-w", &n1, "--gres=gpu:tesla_t4:2", "hostname"],
        )
        .ok();
    assert_eq!(r.stdout.trim(), n1);
    // srun returns before slurmctld has seen the job's end on n1 (COMPLETING): drained on a
    // node still completing that job would read `draining` below.
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);

    // An operator's drain: never lifted, never rewritten, fault or no fault.
    s.cluster
        .run(
            &ctl,
            "scontrol",
            &[
                "update",
                &format!("nodename={n1}"),
                "state=drain",
                "reason=disk replacement",
            ],
        )
        .ok();
    let operator = "drained|disk replacement".to_string();
    s.update_status();
    assert_eq!(s.sinfo(&n1), operator);
    phases.push(phase(&s, &n1, "operator's drain"));
    cfg["devices"][1]["health"] = json!({"row_remap_failure": true});
    std::fs::write(s.nvml(&n1), cfg.to_string()).unwrap();
    s.update_status();
    assert_eq!(s.sinfo(&n1), operator);
    assert_eq!(s.status("slurmd/0").0, "blocked");
    phases.push(phase(&s, &n1, "operator's drain + row-remap fault"));
    cfg["devices"][1]["health"] = json!({});
    std::fs::write(s.nvml(&n1), cfg.to_string()).unwrap();
    s.update_status();
    assert_eq!(s.sinfo(&n1), operator);
    assert_eq!(s.status("slurmd/0").0, "active");
    phases.push(phase(&s, &n1, "operator's drain, fault cleared"));
    e2e::eprint_block("slurmd/0 status and the node in Slurm", &phases.join("\n"));
    // The drain reason is logged at info level, but it contains the word "errors".
    let complaints = e2e::daemon_complaints(&s.cluster, &["reason set to: slurmd-charm: "]);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}
