//! End to end on real Slurm (issue 15 item 2): the real charms, run by the Juju simulator,
//! drive Debian's munged, slurmctld and slurmd (docs/e2e.md) with the slurmd `gpu-sharing`
//! option. `shard:2` on a one-GPU node: two jobs asking `--gres=shard:1` run at the same time
//! on that GPU, each holding one shard, and both see it. Then `mps:100`: a job asking
//! `--gres=mps:50` gets `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50` (gres/mps: request * 100 /
//! the GPU's count). A bad value blocks the unit and leaves the running cluster alone.
//!
//! Hosts: juju-e2e-0 slurmctld/0; juju-e2e-1 slurmd/0 (1 x T4).

mod e2e;

use e2e::{Cluster, Suite, machine as host};
use juju_sim::{DeploySpec, Simulator, UnitExtras};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const REGISTER: Duration = Duration::from_secs(60);

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

    fn no_hook_errors(&self) {
        e2e::assert_no_hook_errors(&self.sim, &self.cluster, &["slurmctld/0", "slurmd/0"]);
    }

    /// Each hook run so far with what it logged (juju-log), for failure messages.
    fn hook_log(&self) -> String {
        let mut out = String::new();
        for r in self.sim.records() {
            out.push_str(&format!("{} {}\n", r.unit, r.hook));
            for c in r.calls.iter().filter(|c| c.tool == "juju-log") {
                out.push_str(&format!("    {}\n", c.args.join(" ")));
            }
        }
        out
    }

    fn set_sharing(&mut self, value: &str) {
        self.sim
            .set_config("slurmd", [("gpu-sharing".to_string(), json!(value))].into())
            .expect("set gpu-sharing");
        self.sim.settle().expect("settle");
        self.no_hook_errors();
    }

    fn update_status(&mut self) {
        self.sim.update_status(None).expect("update-status");
        self.no_hook_errors();
    }

    /// Waits, with no hook in between, until the node is idle with `gres` (issue 39 item 9: a
    /// GRES change settles in the hooks it causes, not at the next `update-status`). The node's
    /// slurmd restarts for a new GRES name only once slurmctld runs it
    /// (`src/charms/slurmd/gres_order.rs`), so Slurm never drains it for a count mismatch:
    /// a drain seen on the way fails the test.
    ///
    /// slurmctld shows the new `Gres=` from its own files at once, before the node's slurmd
    /// has loaded them: the node counts as converged once a slurmd started after `before`
    /// ([`e2e::Cluster::slurmd_start_time`], read before the change) has registered.
    fn converge(&mut self, gres: &str, before: &str) {
        let (ctl, n1) = (self.ctl(), host(1).0);
        let deadline = Instant::now() + REGISTER;
        loop {
            let n = self.cluster.node(&ctl, &n1);
            if let Ok(n) = &n {
                let state = n.get("State").unwrap_or_default();
                assert!(
                    !state.contains("DRAIN"),
                    "{n1} drained after the gpu-sharing change: {state} {:?}\n{}\n{}",
                    n.get("Reason"),
                    self.hook_log(),
                    self.cluster.logs()
                );
                if (state == "IDLE" || state == "MIXED")
                    && n.get("Gres").map(e2e::strip_sockets) == Some(gres.to_string())
                    && n.get("SlurmdStartTime").is_some_and(|t| t != before)
                {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{n1} not back with {gres} after the gpu-sharing change: {n:?}\n{}",
                self.cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Where job `job` writes its output: in this test's own work directory. The hosts see the
    /// machine's /tmp, and job ids start at 1 in every cluster, so a fixed `/tmp/job-%j.out`
    /// would be shared by the three versions' clusters running at once.
    fn job_out(&self, job: &str) -> String {
        self.work
            .path()
            .join(format!("job-{job}.out"))
            .display()
            .to_string()
    }

    /// `sbatch --gres=<gres> --wrap <script>` on the controller; the job id.
    fn sbatch(&self, gres: &str, script: &str) -> String {
        let out = self.job_out("%j");
        let r = self
            .cluster
            .run(
                &self.ctl(),
                "sbatch",
                &[
                    "--parsable",
                    // a slice of memory each (CR_CPU_Memory gives a job the whole node otherwise)
                    "--mem=64",
                    &format!("--gres={gres}"),
                    "-o",
                    &out,
                    "--wrap",
                    script,
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
}

/// The cluster with `gpus` T4s on the node (minors 0..gpus).
fn start(suite: Suite, gpus: u32) -> Scenario {
    let devices: Vec<Value> = (0..gpus)
        .map(|m| e2e::t4(m, &format!("00000000:{:02X}:00.0", 0x3B + m)))
        .collect();
    let (cluster, work) = e2e::cluster_with_gpus(suite, "e2e-gpu-sharing-", &[Vec::new(), devices]);
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
fn e2e_gpu_sharing_shard_and_mps_22_05() {
    gpu_sharing(Suite::Bookworm);
}

#[test]
fn e2e_gpu_sharing_shard_and_mps_24_11() {
    gpu_sharing(Suite::Trixie);
}

#[test]
fn e2e_gpu_sharing_shard_and_mps_26_05() {
    gpu_sharing(Suite::Sid);
}

/// Deploys the controller and one slurmd unit with `gpu-sharing` = `sharing`, relates them,
/// runs `node-configured` and one update-status.
fn deploy(s: &mut Scenario, sharing: &str) {
    let extras = std::sync::Arc::new(extras_for(s));
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
                .config("gpu-sharing", sharing)
                .extras_fn(move |u| e2(u)),
        )
        .expect("deploy slurmd");
    s.sim.integrate("slurmd", "slurmctld").expect("integrate");
    let r = s
        .sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    s.update_status();
}

fn gpu_sharing(suite: Suite) {
    let name = format!("e2e_gpu_sharing on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut s = start(suite, 1);
    deploy(&mut s, "shard:2");
    let (ctl, n1) = (s.ctl(), host(1).0);
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:1,shard:tesla_t4:2", REGISTER);
    let conf = std::fs::read_to_string(s.cluster.root(&ctl).join("etc/slurm/gres.conf")).unwrap();
    e2e::eprint_block("gres.conf with shard:2", &conf);
    assert!(
        conf.contains(&format!(
            "NodeName={n1} Name=shard File=/dev/nvidia0 Count=2\n"
        )),
        "{conf}"
    );
    assert_eq!(
        s.status("slurmd/0"),
        (
            "active".into(),
            "1 GPU: gpu:tesla_t4:1,shard:2 (shard:2 per GPU)".into()
        )
    );

    // Two shard jobs run at once on the one GPU, and both see it.
    let script =
        "echo GPU=$CUDA_VISIBLE_DEVICES; test -c /dev/nvidia0 && echo SEES_NVIDIA0; sleep 300";
    let a = s.sbatch("shard:1", script);
    let b = s.sbatch("shard:1", script);
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
            "shard jobs not running together: {st:?}\n{}",
            s.cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let st = s.states();
    e2e::eprint_block("squeue with the two shard jobs", &format!("{st:?}"));
    // Each job holds one shard of the GPU (gpu index 0), none holds the GPU itself.
    for job in [&a, &b] {
        let detail = s
            .cluster
            .run(&ctl, "scontrol", &["show", "job", "-d", job])
            .ok()
            .stdout;
        let gres_line = detail
            .lines()
            .find(|l| l.contains("Nodes=") && l.contains(" GRES="))
            .unwrap_or_default()
            .trim()
            .to_string();
        e2e::eprint_block(
            &format!("job {job}: scontrol show job -d (GRES)"),
            &gres_line,
        );
        let gres = gres_line.split(" GRES=").nth(1).unwrap_or_default();
        // 22.05: `shard:1(IDX:0)` (GPU 0); 24.11+: `shard:1(1/2)` (1 of the GPU's 2 shards)
        assert!(
            gres.starts_with("shard:")
                && (gres.ends_with(":1(IDX:0)") || gres.ends_with(":1(1/2)")),
            "job {job}: {detail}"
        );
        assert!(!gres_line.contains("gpu:"), "job {job}: {detail}");
    }
    let used = s
        .cluster
        .run(&ctl, "scontrol", &["show", "node", &n1, "-d"])
        .ok()
        .stdout;
    e2e::eprint_block("scontrol show node -d (two shards in use)", &used);
    for job in [&a, &b] {
        let deadline = Instant::now() + Duration::from_secs(60);
        let out = loop {
            let r = s.cluster.run(&n1, "cat", &[&s.job_out(job)]);
            if r.success() && r.stdout.contains("SEES_NVIDIA0") {
                break r.stdout;
            }
            assert!(Instant::now() < deadline, "job {job} output: {r}");
            std::thread::sleep(Duration::from_millis(300));
        };
        assert!(out.contains("GPU=0\n"), "job {job}: {out}");
    }
    // Nothing in any daemon log about the shard setup.
    let complaints = e2e::daemon_complaints(&s.cluster, &[]);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
    s.cluster
        .run(&ctl, "scancel", &[a.as_str(), b.as_str()])
        .ok();

    // MPS: a job asking 50 of the GPU's 100 gets 50 percent of its threads.
    let started = s.cluster.slurmd_start_time(&ctl, &n1);
    s.set_sharing("mps:100");
    s.converge("gpu:tesla_t4:1,mps:tesla_t4:100", &started);
    let env = s
        .cluster
        .run(&ctl, "srun", &["--gres=mps:50", "env"])
        .ok()
        .stdout;
    e2e::eprint_block(
        "srun --gres=mps:50 env (CUDA_*)",
        &env.lines()
            .filter(|l| l.starts_with("CUDA"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert_eq!(
        e2e::env_var(&env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        Some("50"),
        "{env}"
    );
    assert_eq!(
        e2e::env_var(&env, "CUDA_VISIBLE_DEVICES"),
        Some("0"),
        "{env}"
    );
    let conf = std::fs::read_to_string(s.cluster.root(&ctl).join("etc/slurm/slurm.conf")).unwrap();
    assert!(conf.contains("\nGresTypes=gpu,mps\n"), "{conf}");

    // A bad value: blocked, naming the option and the rule; the cluster keeps running as is.
    s.set_sharing("shard:0");
    s.update_status();
    let (kind, msg) = s.status("slurmd/0");
    assert_eq!(kind, "blocked", "{msg}");
    assert!(
        msg.starts_with("config option `gpu-sharing` \"shard:0\": N is a whole number from 1 to"),
        "{msg}"
    );
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:1,mps:tesla_t4:100", REGISTER);
    let env = s
        .cluster
        .run(&ctl, "srun", &["--gres=mps:25", "env"])
        .ok()
        .stdout;
    assert_eq!(
        e2e::env_var(&env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        Some("25"),
        "{env}"
    );
    // Switching shard -> mps changes GresTypes; what the daemons say on the way, and nothing
    // else. 22.05's slurmd keeps its GRES plugins over a reconfigure until the charm restarts
    // it; slurmctld's saved state still holds the shard GRES of the node and of the jobs.
    let transition = [
        // the two shard jobs this test cancels (24.11, 26.05 log the step's SIGTERM status, 15)
        "CANCELLED AT",
        "stepd_cleanup: done with step (rc[0xf]",
        "stepd_cleanup: done with step (step_rc: 15,",
        "no plugin configured to unpack data type",
        // 24.11+: the same unpack, worded per node, when a slurmd still holding its shard
        // GRES registers with the slurmctld that already runs GresTypes=gpu,mps (seen on a
        // loaded machine: the registration lands between the two daemons' reconfigures)
        "No plugin configured to process GRES data from node",
        "GresPlugins changed from gpu,shard to gpu,mps ignored",
        "Restart the slurmctld daemon to change GresPlugins",
        "Invalid GRES configured on node",
        "Ignoring gres.conf record, invalid name: mps",
        "count reported lower than configured (0 < 100)",
        "_slurm_rpc_node_registration node=",
    ];
    let complaints = e2e::daemon_complaints(&s.cluster, &transition);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}

/// Issue 39 item 9: `gpu-sharing` from `none` to `shard:2` on a node running a job settles in
/// the hooks the change causes. When `settle` returns (the change's last hook ran), with no
/// `update-status` after it: the node is never drained, it comes back with the shards, the
/// running job finishes, and a shard job runs on the other GPU.
fn gres_change_while_a_job_runs(suite: Suite) {
    let name = format!("e2e_gres_change_settles on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut s = start(suite, 2);
    deploy(&mut s, "none");
    let (ctl, n1) = (s.ctl(), host(1).0);
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);

    let job = s.sbatch("gpu:1", "sleep 20; echo FINISHED");
    let deadline = Instant::now() + Duration::from_secs(60);
    while s.states().get(&job).map(String::as_str) != Some("RUNNINGNone") {
        assert!(
            Instant::now() < deadline,
            "job {job} not running: {:?}\n{}",
            s.states(),
            s.cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let started = s.cluster.slurmd_start_time(&ctl, &n1);
    s.set_sharing("shard:2");
    // The change's hooks have all run: from here on no hook runs.
    s.converge("gpu:tesla_t4:2,shard:tesla_t4:4", &started);
    let shard = s.sbatch("shard:1", "echo SHARD_RAN");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = s.cluster.run(&n1, "cat", &[&s.job_out(&shard)]);
        if out.success() && out.stdout.contains("SHARD_RAN") {
            break;
        }
        let n = s.cluster.node(&ctl, &n1);
        assert!(
            Instant::now() < deadline,
            "shard job {shard} did not run: {:?} {n:?}\n{}",
            s.states(),
            s.cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = s.cluster.run(&n1, "cat", &[&s.job_out(&job)]);
        if out.success() && out.stdout.contains("FINISHED") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "job {job} running during the change did not finish: {:?}\n{}",
            s.states(),
            s.cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let n = s.cluster.node(&ctl, &n1).unwrap();
    assert!(
        !n.get("State").unwrap_or_default().contains("DRAIN"),
        "{n:?}"
    );
    assert_eq!(s.status("slurmd/0").0, "active");
}

#[test]
fn e2e_gres_change_settles_22_05() {
    gres_change_while_a_job_runs(Suite::Bookworm);
}

#[test]
fn e2e_gres_change_settles_24_11() {
    gres_change_while_a_job_runs(Suite::Trixie);
}

#[test]
fn e2e_gres_change_settles_26_05() {
    gres_change_while_a_job_runs(Suite::Sid);
}
