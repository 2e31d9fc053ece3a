//! End to end on real Slurm (issue 40): slurmd itself runs the charm's health-check program
//! from slurm.conf (`HealthCheckProgram`, every `HealthCheckInterval`), with no Juju hook in
//! between. An XID 79 in the kernel log on one GPU drains the node within one interval with
//! the XID in the reason, while a job on the other GPU runs on and finishes; an application
//! XID (13) drains nothing; clearing the XID after the GPU reset (`detect-gpus
//! clear-xids=true`) resumes the node; an operator's drain survives every phase.
//!
//! The kernel log is the host's `/dev/kmsg`, a plain file in the host's private `/dev`
//! (`<root>/dev/kmsg`) holding `/dev/kmsg` records; the GPUs are the fake NVML's.
//!
//! Hosts: juju-e2e-0 slurmctld/0; juju-e2e-1 slurmd/0 (2 x T4).

mod e2e;

use e2e::{Cluster, Suite, machine as host};
use juju_sim::{DeploySpec, Simulator, UnitExtras};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const REGISTER: Duration = Duration::from_secs(60);
/// `health-check-interval` in this test (the default is 60 s).
const INTERVAL: u64 = 5;
const BUS1: &str = "00000000:86:00.0";
const REASON: &str = "slurmd-charm: gpu 1 (00000000:86:00.0, serial 1324520012345): XID 79 (GPU has fallen off the bus)";
const STATE: &str = "var/lib/slurm/slurmd-charm/health-state.json";
/// How long the job on GPU 0 waits for the test's marker before it gives up.
const JOB_LIMIT: Duration = Duration::from_secs(300);

fn t4(minor: u32, bus: &str) -> Value {
    let cpus: Vec<u32> =
        (0..std::thread::available_parallelism().map_or(1, |n| n.get()) as u32).collect();
    json!({
        "name": "Tesla T4",
        "uuid": format!("GPU-7e54aaaa-0000-4000-8000-00000000000{minor}"),
        "pci_bus_id": bus,
        "minor": minor,
        "memory_total": 16106127360u64,
        "cpu_affinity": cpus,
        "serial": format!("132452001234{}", 4 + minor),
    })
}

struct Scenario {
    cluster: Cluster,
    sim: Simulator,
    work: tempfile::TempDir,
    kmsg_seq: u64,
}

impl Scenario {
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

    /// Appends one XID record to the node's kernel log, as the NVIDIA driver logs it.
    fn xid(&mut self, node: &str, bus: &str, xid: u32, text: &str) {
        self.kmsg_seq += 1;
        let line = format!(
            "4,{},{},-;NVRM: Xid (PCI:{bus}): {xid}, pid=4242, name=python3, {text}\n",
            self.kmsg_seq,
            self.kmsg_seq * 1_000_000
        );
        let path = self.cluster.root(node).join("dev/kmsg");
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(&line);
        std::fs::write(&path, old).unwrap();
    }

    /// The program's state file on `node` (`Value::Null` until it ran with settings).
    fn state(&self, node: &str) -> Value {
        std::fs::read(self.cluster.root(node).join(STATE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null)
    }

    /// Waits until the program has read kernel log record `seq` (slurmd ran it since).
    fn wait_program_read(&self, node: &str, seq: u64) {
        self.cluster.wait_for(
            &format!("the health check on {node} to read kernel log record {seq}"),
            Duration::from_secs(INTERVAL * 6),
            || match self.state(node)["kmsg_seq"].as_u64() {
                Some(s) if s >= seq => Ok(()),
                other => Err(format!("kmsg_seq {other:?}")),
            },
        );
    }
}

#[test]
fn e2e_xid_drains_and_resumes_22_05() {
    xid_scenario(Suite::Bookworm);
}

#[test]
fn e2e_xid_drains_and_resumes_24_11() {
    xid_scenario(Suite::Trixie);
}

#[test]
fn e2e_xid_drains_and_resumes_26_05() {
    xid_scenario(Suite::Sid);
}

fn xid_scenario(suite: Suite) {
    let name = format!("e2e_xid on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let (cluster, work) = e2e::cluster_with_gpus(
        suite,
        "e2e-xid-",
        &[Vec::new(), vec![t4(0, "00000000:3B:00.0"), t4(1, BUS1)]],
    );
    let mut s = Scenario {
        cluster,
        sim: Simulator::new().expect("simulator"),
        work,
        kmsg_seq: 100,
    };
    let (ctl, n1) = (host(0).0, host(1).0);
    // a kernel log that already holds this boot's first records (no XID)
    s.cluster.write(
        &n1,
        "dev/kmsg",
        b"6,1,0,-;Linux version 6.1.0 (debian-kernel@lists.debian.org)\n \
          SUBSYSTEM=cpu\n6,100,5000000,-;nvidia: loading out-of-tree module taints kernel.\n",
    );
    let units = [("slurmctld/0", 0), ("slurmd/0", 1)]
        .into_iter()
        .map(|(u, n)| (u.to_string(), host(n).0))
        .collect();
    let extras: std::sync::Arc<dyn Fn(&str) -> UnitExtras + Send + Sync> =
        std::sync::Arc::new(s.cluster.unit_extras(&s.work.path().join("nvml"), units));
    let (e1, e2) = (extras.clone(), extras.clone());
    let ctl_charm = e2e::charm_dir(s.work.path(), "slurmctld");
    let node_charm = e2e::charm_dir(s.work.path(), "slurmd");
    s.sim
        .deploy(
            DeploySpec::new("slurmctld", &ctl_charm)
                .config("default-partition", "slurmd")
                .config("health-check-interval", INTERVAL)
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
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);

    // slurm.conf names the program; slurmd runs it (its state file appears) with no hook.
    let config = s
        .cluster
        .run(&ctl, "scontrol", &["show", "config"])
        .ok()
        .stdout;
    let health: Vec<&str> = config
        .lines()
        .filter(|l| l.starts_with("HealthCheck"))
        .collect();
    e2e::eprint_block(
        "scontrol show config | grep HealthCheck",
        &health.join("\n"),
    );
    assert!(
        health.iter().any(|l| l.contains(
            "HealthCheckProgram      = /var/lib/slurm/slurmd-charm/slurmd-charm-health-check"
        )),
        "{health:?}"
    );
    assert!(
        health
            .iter()
            .any(|l| l.contains(&format!("= {INTERVAL} sec"))),
        "{health:?}"
    );
    assert!(health.iter().any(|l| l.ends_with("= ANY")), "{health:?}");
    if suite == Suite::Sid {
        // 26.05 wants HealthCheckTimeout below the interval (else it logs an error)
        assert!(
            health
                .iter()
                .any(|l| l.starts_with("HealthCheckTimeout") && l.contains("= 4")),
            "{health:?}"
        );
    }
    s.wait_program_read(&n1, 100);
    assert_eq!(s.state(&n1)["verdict"], "healthy", "{}", s.state(&n1));

    // A job on GPU 0 that runs until the test's marker exists.
    let marker = s.work.path().join("job.marker");
    let output = s.work.path().join("job.out");
    let script = format!(
        "echo started $CUDA_VISIBLE_DEVICES; n=0; while [ ! -e {m} ]; do n=$((n+1)); \
         if [ $n -ge {polls} ]; then echo no marker; exit 3; fi; sleep 0.1; done; echo marker seen",
        m = marker.display(),
        polls = JOB_LIMIT.as_millis() / 100,
    );
    let job = s
        .cluster
        .run(
            &ctl,
            "sbatch",
            &[
                "--parsable",
                "-o",
                &output.display().to_string(),
                "-w",
                &n1,
                "--gres=gpu:tesla_t4:1",
                "--wrap",
                &script,
            ],
        )
        .ok()
        .stdout
        .trim()
        .to_string();
    let job_state = |s: &Scenario| {
        let r = s.cluster.run(&ctl, "scontrol", &["show", "job", &job]);
        let info = e2e::NodeInfo::parse(&r.stdout);
        (
            info.get("JobState").unwrap_or("?").to_string(),
            info.get("ExitCode").unwrap_or("?").to_string(),
        )
    };
    let job_output = || std::fs::read_to_string(&output).unwrap_or_default();
    s.cluster.wait_for("the job to start", REGISTER, || {
        if job_state(&s).0 == "RUNNING" && job_output().contains("started") {
            Ok(())
        } else {
            Err(format!("{:?}, output {:?}", job_state(&s), job_output()))
        }
    });
    let detail = s
        .cluster
        .run(&ctl, "scontrol", &["show", "job", "-d", &job])
        .ok()
        .stdout;
    assert!(detail.contains("gpu:tesla_t4:1(IDX:0)"), "{detail}");
    let mut phases = vec![format!("job {job} running on GPU 0: {}", s.sinfo(&n1))];

    // XID 13 (the application's own fault) on GPU 1: counted, never a drain.
    s.xid(
        &n1,
        "0000:86:00",
        13,
        "Graphics Exception: ESR 0x404600=0x80000002",
    );
    let seq13 = s.kmsg_seq;
    s.wait_program_read(&n1, seq13);
    assert_eq!(s.state(&n1)["counts"]["13"], 1, "{}", s.state(&n1));
    let after13 = s.sinfo(&n1);
    assert!(!after13.contains("drain"), "{after13}");
    phases.push(format!("XID 13 on GPU 1: {after13}"));

    // XID 79 on GPU 1: drained within one interval, the XID in the reason, by slurmd's run of
    // the program: the simulator runs hooks only when the test asks, and it asks for none here.
    s.xid(&n1, "0000:86:00", 79, "GPU has fallen off the bus.");
    let t0 = Instant::now();
    let drained = s.cluster.wait_for(
        "the XID 79 drain",
        Duration::from_secs(INTERVAL * 6),
        || {
            let line = s.sinfo(&n1);
            if line.contains("drain") {
                Ok(line)
            } else {
                Err(line)
            }
        },
    );
    let took = t0.elapsed();
    assert_eq!(
        drained,
        format!("draining|{REASON}"),
        "running job: draining"
    );
    phases.push(format!("XID 79 on GPU 1 after {took:.1?}: {drained}"));
    // Within one interval of slurmctld's health-check cycle (plus the machine's load).
    assert!(
        took < Duration::from_secs(INTERVAL * 3),
        "drained after {took:?} (interval {INTERVAL} s)"
    );
    // The job on GPU 0 runs on and finishes well.
    assert_eq!(job_state(&s).0, "RUNNING");
    std::fs::write(&marker, b"").unwrap();
    s.cluster
        .wait_for("the job to finish", REGISTER, || match job_state(&s) {
            (st, _) if st == "RUNNING" || st == "COMPLETING" => Err(st),
            done => Ok(done),
        });
    assert_eq!(
        job_state(&s),
        ("COMPLETED".into(), "0:0".into()),
        "{}",
        job_output()
    );
    assert_eq!(job_output(), "started 0\nmarker seen\n");
    s.cluster.wait_for("drained", REGISTER, || {
        let line = s.sinfo(&n1);
        (line == format!("drained|{REASON}"))
            .then_some(())
            .ok_or(line)
    });
    phases.push(format!("job finished: {}", s.sinfo(&n1)));
    // The next hook agrees: blocked with the same words, and detect-gpus lists the XIDs.
    s.sim.update_status(Some("slurmd")).expect("update-status");
    let st = s.sim.unit_status("slurmd/0").unwrap();
    assert_eq!(
        (st.status.as_str(), st.message.as_str()),
        ("blocked", REASON.trim_start_matches("slurmd-charm: "))
    );
    assert_eq!(s.sinfo(&n1), format!("drained|{REASON}"));
    let r = s
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    e2e::eprint_block("detect-gpus xids", &r.results["xids"].to_string());
    assert_eq!(
        r.results["xids"]["recent"]["1"]["xid"], "79",
        "{}",
        r.results["xids"]
    );

    // The heal: the GPU was reset; the operator clears the XID; the node is resumed.
    let r = s
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({"clear-xids": true}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    s.cluster
        .wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);
    // and the program agrees at its next run (the node stays idle)
    s.xid(&n1, "0000:3b:00", 13, "Graphics Exception");
    s.wait_program_read(&n1, s.kmsg_seq);
    assert_eq!(s.state(&n1)["verdict"], "healthy", "{}", s.state(&n1));
    // (24.11 keeps the last reason on a resumed node: `idle|slurmd-charm: …`)
    let healed = s.sinfo(&n1);
    assert!(healed.starts_with("idle|"), "{healed}");
    phases.push(format!("cleared after the GPU reset: {healed}"));

    // An operator's drain survives a new XID 79 and its clearing.
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
    s.xid(&n1, "0000:86:00", 79, "GPU has fallen off the bus.");
    s.wait_program_read(&n1, s.kmsg_seq);
    assert_eq!(s.sinfo(&n1), operator);
    phases.push(format!("operator's drain + XID 79: {}", s.sinfo(&n1)));
    let r = s
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({"clear-xids": true}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    s.xid(&n1, "0000:3b:00", 13, "Graphics Exception");
    s.wait_program_read(&n1, s.kmsg_seq);
    assert_eq!(s.sinfo(&n1), operator);
    phases.push(format!("operator's drain, XID cleared: {}", s.sinfo(&n1)));
    e2e::eprint_block("phases", &phases.join("\n"));
    let complaints = e2e::daemon_complaints(&s.cluster, &["reason set to: slurmd-charm: "]);
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}
