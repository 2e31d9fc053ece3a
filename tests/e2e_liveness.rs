//! End to end on real Slurm (issue 39, items 5 and 10): the real charms, run by the Juju
//! simulator, drive Debian's munged, slurmctld and slurmd (docs/e2e.md).
//!
//! * Jobs share a node by default: two single-GPU jobs submitted without `--mem` run side by
//!   side on a two-GPU node (the controller's `DefMemPerGPU`; without it the first job is given
//!   the whole node's memory and the second waits).
//! * Liveness: slurmctld killed with SIGKILL (as the OOM killer does) is restarted by the
//!   leader's next update-status, whose status says so; the node's update-status says its
//!   controller does not answer meanwhile. One that cannot start (a `clustername` of another
//!   cluster in its StateSaveLocation: `fatal: CLUSTER NAME MISMATCH`) blocks the leader with
//!   its log's last line.
//!
//! Hosts: juju-e2e-0 slurmctld/0; juju-e2e-1 slurmd/0 (2 x T4).

mod e2e;

use e2e::{Cluster, Suite, machine as host, t4};
use juju_sim::{DeploySpec, Simulator, UnitExtras};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const REGISTER: Duration = Duration::from_secs(60);
const T4_2: &str = "gpu:tesla_t4:2";

struct Scenario {
    cluster: Cluster,
    sim: Simulator,
    work: tempfile::TempDir,
}

impl Scenario {
    fn ctl(&self) -> String {
        host(0).0
    }

    fn status(&self, unit: &str) -> (String, String) {
        let s = self.sim.unit_status(unit).unwrap();
        (s.status, s.message)
    }

    #[track_caller]
    fn no_hook_errors(&self) {
        e2e::assert_no_hook_errors(&self.sim, &self.cluster, &["slurmctld/0", "slurmd/0"]);
    }

    #[track_caller]
    fn update_status(&mut self, app: &str) {
        self.sim.update_status(Some(app)).expect("update-status");
        self.no_hook_errors();
    }

    /// Where job `job` writes its output: this test's own work directory.
    fn job_out(&self, job: &str) -> String {
        self.work
            .path()
            .join(format!("job-{job}.out"))
            .display()
            .to_string()
    }

    /// `sbatch --gres=gpu:1 --wrap 'sleep 300'` on the controller, asking for no memory.
    fn sbatch_one_gpu(&self) -> String {
        let out = self.job_out("%j");
        let r = self
            .cluster
            .run(
                &self.ctl(),
                "sbatch",
                &[
                    "--parsable",
                    "--gres=gpu:1",
                    "-o",
                    &out,
                    "--wrap",
                    "sleep 300",
                ],
            )
            .ok();
        r.stdout.trim().to_string()
    }

    /// `squeue`'s state of each job: `id -> STATE` (pending ones with their reason).
    fn states(&self) -> BTreeMap<String, String> {
        let r = self
            .cluster
            .run(&self.ctl(), "squeue", &["-h", "-o", "%i %T%r"])
            .ok();
        r.stdout
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(i, s)| (i.to_string(), s.to_string()))
            .collect()
    }

    /// Kills slurmctld with SIGKILL (as the OOM killer does) and waits until systemd (the
    /// stand-in) no longer counts it as running.
    fn kill_slurmctld(&self) {
        let ctl = self.ctl();
        let pid = self
            .cluster
            .run(
                &ctl,
                "systemctl",
                &["show", "--property=MainPID", "--value", "slurmctld"],
            )
            .ok()
            .stdout
            .trim()
            .to_string();
        assert!(pid.parse::<u32>().is_ok_and(|p| p > 0), "MainPID {pid:?}");
        self.cluster.run(&ctl, "kill", &["-KILL", &pid]).ok();
        self.cluster.wait_for("slurmctld dead", REGISTER, || {
            let r = self
                .cluster
                .run(&ctl, "systemctl", &["is-active", "slurmctld"]);
            if r.success() { Err(r.stdout) } else { Ok(()) }
        });
    }

    /// The last non-empty line of the controller's slurmctld.log.
    fn last_log_line(&self) -> String {
        let p = self
            .cluster
            .root(&self.ctl())
            .join("var/log/slurm/slurmctld.log");
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        text.lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_string()
    }
}

fn start(suite: Suite) -> Scenario {
    let (cluster, work) = e2e::cluster_with_gpus(
        suite,
        "e2e-liveness-",
        &[
            Vec::new(),
            vec![t4(0, "00000000:3B:00.0"), t4(1, "00000000:86:00.0")],
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
        e2e::units_on_machines(&[("slurmctld/0", 0), ("slurmd/0", 1)]),
    )
}

#[test]
fn e2e_single_gpu_jobs_share_a_node_22_05() {
    single_gpu_jobs_share_a_node(Suite::Bookworm);
}

#[test]
fn e2e_single_gpu_jobs_share_a_node_24_11() {
    single_gpu_jobs_share_a_node(Suite::Trixie);
}

#[test]
fn e2e_single_gpu_jobs_share_a_node_26_05() {
    single_gpu_jobs_share_a_node(Suite::Sid);
}

#[test]
fn e2e_slurmctld_liveness_22_05() {
    slurmctld_liveness(Suite::Bookworm);
}

#[test]
fn e2e_slurmctld_liveness_24_11() {
    slurmctld_liveness(Suite::Trixie);
}

#[test]
fn e2e_slurmctld_liveness_26_05() {
    slurmctld_liveness(Suite::Sid);
}

/// Deploys and relates both charms, configures the node and waits until it is IDLE; `None`
/// (after a loud skip message) where the machine cannot run the end-to-end tests.
fn deployed(name: &str, suite: Suite) -> Option<Scenario> {
    if !e2e::should_run_on(name, suite) {
        return None;
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
        .deploy(DeploySpec::new("slurmd", &node_charm).extras_fn(move |u| e2(u)))
        .expect("deploy slurmd");
    s.sim.integrate("slurmd", "slurmctld").expect("integrate");
    let r = s
        .sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    s.sim.update_status(None).expect("update-status");
    s.no_hook_errors();
    let (ctl, n1) = (s.ctl(), host(1).0);
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    Some(s)
}

/// Two single-GPU jobs submitted without `--mem` run at the same time on the two-GPU node.
fn single_gpu_jobs_share_a_node(suite: Suite) {
    let name = format!(
        "e2e_single_gpu_jobs_share_a_node on Slurm {}",
        suite.slurm()
    );
    let Some(s) = deployed(&name, suite) else {
        return;
    };
    let (ctl, n1) = (s.ctl(), host(1).0);
    let conf = std::fs::read_to_string(s.cluster.root(&ctl).join("etc/slurm/slurm.conf")).unwrap();
    e2e::eprint_block(
        "slurm.conf memory defaults",
        &conf
            .lines()
            .filter(|l| l.starts_with("DefMem") || l.starts_with("NodeName="))
            .collect::<Vec<_>>()
            .join("\n"),
    );

    // Two single-GPU jobs without --mem run side by side on the two-GPU node.
    let a = s.sbatch_one_gpu();
    let b = s.sbatch_one_gpu();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let st = s.states();
        if st.get(&a).map(String::as_str) == Some("RUNNINGNone")
            && st.get(&b).map(String::as_str) == Some("RUNNINGNone")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "single-GPU jobs without --mem do not run side by side: {st:?}\n{}",
            s.cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    for job in [&a, &b] {
        let detail = s
            .cluster
            .run(&ctl, "scontrol", &["show", "job", job])
            .ok()
            .stdout;
        let tres = detail
            .lines()
            .filter(|l| l.contains("TRES=") || l.contains("Tres"))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n");
        e2e::eprint_block(&format!("job {job}"), &tres);
        // one GPU, and DefMemPerGPU of memory for it, not the node's
        let per_gpu = conf
            .lines()
            .find_map(|l| l.strip_prefix("DefMemPerGPU="))
            .unwrap_or_default();
        assert!(
            detail.contains(&format!("MemPerTres=gpu:{per_gpu}")),
            "job {job}: {detail}"
        );
        // 22.05 `gres:gpu:1`, 24.11+ `gres/gpu:1`
        assert!(
            detail.contains("TresPerNode=gres:gpu:1") || detail.contains("TresPerNode=gres/gpu:1"),
            "job {job}: {detail}"
        );
    }
    s.cluster
        .run(&ctl, "scancel", &[a.as_str(), b.as_str()])
        .ok();
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    let complaints = e2e::daemon_complaints(&s.cluster, &CANCELLED);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}

/// What the daemons log about the jobs a test cancels (24.11, 26.05 log the step's SIGTERM
/// status, 15).
const CANCELLED: [&str; 3] = [
    "CANCELLED AT",
    "stepd_cleanup: done with step (rc[0xf]",
    "stepd_cleanup: done with step (step_rc: 15,",
];

/// slurmctld killed, then unable to start: restarted by the leader's update-status, reported
/// by the node meanwhile; blocked with its log when it cannot start.
fn slurmctld_liveness(suite: Suite) {
    let name = format!("e2e_slurmctld_liveness on Slurm {}", suite.slurm());
    let Some(mut s) = deployed(&name, suite) else {
        return;
    };
    let (ctl, n1) = (s.ctl(), host(1).0);
    // slurmctld is killed: the node says its controller does not answer, the leader's next
    // update-status restarts it and says so.
    s.update_status("slurmd");
    assert_eq!(
        s.status("slurmd/0").0,
        "active",
        "{:?}",
        s.status("slurmd/0")
    );
    s.kill_slurmctld();
    s.update_status("slurmd");
    let (st, msg) = s.status("slurmd/0");
    assert_eq!(st, "waiting", "{msg}");
    assert!(
        msg.contains(&format!("slurmctld at {ctl}:6817 is not answering")),
        "{msg}"
    );
    s.update_status("slurmctld");
    let (st, msg) = s.status("slurmctld/0");
    eprintln!("slurmctld/0 after the kill: {st}: {msg}");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.ends_with("; slurmctld was not running: restarted it"),
        "{msg}"
    );
    s.cluster.run(&ctl, "scontrol", &["ping"]).ok();
    s.cluster
        .run(&ctl, "systemctl", &["is-active", "slurmctld"])
        .ok();
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    let r = s.cluster.run(&ctl, "srun", &["-w", &n1, "hostname"]).ok();
    assert_eq!(r.stdout.trim(), n1);
    s.update_status("slurmd");
    assert_eq!(
        s.status("slurmd/0").0,
        "active",
        "{:?}",
        s.status("slurmd/0")
    );
    s.update_status("slurmctld");
    let (st, msg) = s.status("slurmctld/0");
    assert_eq!((st.as_str(), msg.as_str()), ("active", "1 node, 2 GPUs"));

    // It cannot start: another cluster's name in its StateSaveLocation. Blocked, with the last
    // line of its log.
    let clustername = s
        .cluster
        .root(&ctl)
        .join("var/lib/slurm/slurmctld/clustername");
    let own = std::fs::read_to_string(&clustername)
        .unwrap_or_else(|e| panic!("{}: {e}", clustername.display()));
    s.kill_slurmctld();
    std::fs::write(&clustername, "another-cluster").unwrap();
    s.update_status("slurmctld");
    let (st, msg) = s.status("slurmctld/0");
    eprintln!("slurmctld/0 when it cannot start: {st}: {msg}");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.starts_with("slurmctld does not start"), "{msg}");
    let last = s.last_log_line();
    let start: String = last.chars().take(100).collect();
    assert!(
        msg.contains(&start),
        "status {msg:?} should end with the log's last line {last:?}"
    );
    let log =
        std::fs::read_to_string(s.cluster.root(&ctl).join("var/log/slurm/slurmctld.log")).unwrap();
    assert!(log.contains("CLUSTER NAME MISMATCH"), "{log}");
    // Fixed by the operator: the next update-status starts it.
    std::fs::write(&clustername, own).unwrap();
    s.update_status("slurmctld");
    let (st, msg) = s.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    s.cluster.run(&ctl, "scontrol", &["ping"]).ok();
    // (the srun job of before may be restored from state saved before its end: the node can be
    // MIXED until slurmctld learns it is gone; a new job runs meanwhile)
    let r = s.cluster.run(&ctl, "srun", &["-w", &n1, "hostname"]).ok();
    assert_eq!(r.stdout.trim(), n1);
    // What the daemons said on the way: the kills and the mismatch this test caused.
    let provoked = [
        "CLUSTER NAME MISMATCH",
        "Running multiple clusters from a shared StateSaveLocation",
        "Remove /var/lib/slurm/slurmctld/clustername",
    ];
    let complaints = e2e::daemon_complaints(&s.cluster, &provoked);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}
