//! End to end (issue 39 item 4): Juju moves leadership from slurmctld/0 to slurmctld/1 while a
//! job runs and another is held, on Debian's real slurmctld, slurmd and munged. Only the leader
//! runs slurmctld; the state is on "shared storage" (`state-save-location`, a directory both
//! controller hosts mount at the same path); the new leader waits until the former leader's
//! slurmctld has stopped, then takes over: the running job finishes, the held job is still
//! there and runs once released, and job ids go on from where they were.
//!
//! Hosts (the simulator numbers machines in deploy order):
//!   juju-e2e-0  slurmctld/0 (leader first)
//!   juju-e2e-1  slurmd/0    1 x Tesla T4
//!   juju-e2e-2  slurmctld/1 (added to the running cluster)

mod e2e;

use e2e::{Cluster, Stopwatch, Suite, machine};
use juju_sim::{DeploySpec, Hook, Simulator};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const REGISTER: Duration = Duration::from_secs(60);
/// How long the job spanning the leader change waits for the test's marker before giving up.
const JOB_LIMIT: Duration = Duration::from_secs(300);
const T4_1: &str = "gpu:tesla_t4:1";
/// Where both controllers see the shared state (a link in each host's own /var/lib/slurm to
/// one directory of the cluster, as an NFS mount would be).
const STATE: &str = "/var/lib/slurm/shared-state";

fn cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    (0..n).collect()
}

#[test]
fn e2e_leader_change_keeps_jobs_22_05() {
    leader_change_keeps_jobs(Suite::Bookworm);
}

#[test]
fn e2e_leader_change_keeps_jobs_24_11() {
    leader_change_keeps_jobs(Suite::Trixie);
}

#[test]
fn e2e_leader_change_keeps_jobs_26_05() {
    leader_change_keeps_jobs(Suite::Sid);
}

struct Job<'a> {
    cluster: &'a Cluster,
    id: String,
}

impl Job<'_> {
    /// `(JobState, Reason, ExitCode)` as the controller on `from` has it.
    fn state(&self, from: &str) -> (String, String, String) {
        let r = self
            .cluster
            .run(from, "scontrol", &["show", "job", &self.id]);
        let info = e2e::NodeInfo::parse(&r.stdout);
        let get = |k: &str| info.get(k).unwrap_or("?").to_string();
        (get("JobState"), get("Reason"), get("ExitCode"))
    }
}

fn sbatch(cluster: &Cluster, from: &str, args: &[&str]) -> String {
    let mut a = vec!["--parsable"];
    a.extend_from_slice(args);
    cluster
        .run(from, "sbatch", &a)
        .ok()
        .stdout
        .trim()
        .to_string()
}

fn leader_change_keeps_jobs(suite: Suite) {
    let name = format!("e2e_leader_change_keeps_jobs on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut watch = Stopwatch::new();
    let machines: Vec<(String, String)> = (0..3).map(machine).collect();
    let spec: Vec<(&str, &str)> = machines
        .iter()
        .map(|(h, a)| (h.as_str(), a.as_str()))
        .collect();
    let cluster = Cluster::start_on(suite, &spec).unwrap_or_else(|e| panic!("{e}"));
    let (ctl0, node, ctl1) = (machine(0).0, machine(1).0, machine(2).0);
    let hosts: BTreeMap<String, String> = [
        ("slurmctld/0", &ctl0),
        ("slurmctld/1", &ctl1),
        ("slurmd/0", &node),
    ]
    .into_iter()
    .map(|(u, h)| (u.to_string(), h.to_string()))
    .collect();
    let work = tempfile::Builder::new()
        .prefix("e2e-leadership-")
        .tempdir()
        .unwrap();
    let nvml = work.path().join("nvml");
    e2e::install_fake_nvml(work.path());
    for (host, devices) in [
        (&ctl0, json!([])),
        (&ctl1, json!([])),
        (
            &node,
            json!([{
                "name": "Tesla T4",
                "uuid": "GPU-7e540000-0000-4000-8000-000000000000",
                "pci_bus_id": "00000000:3B:00.0",
                "minor": 0,
                "memory_total": 16106127360u64,
                "pci_device_id": 0x1eb810de_u32,
                "cpu_affinity": cpus(),
            }]),
        ),
    ] {
        std::fs::write(
            nvml.join(format!("{host}.json")),
            json!({ "devices": devices }).to_string(),
        )
        .unwrap();
    }
    cluster.add_gpus(&node, &[0]);
    // The shared storage: one directory of the cluster, owned by slurm, linked at STATE in both
    // controller hosts (the charm checks it is a directory where it looks, and so does
    // slurmctld).
    let shared = cluster.dir().join("shared-state");
    std::fs::create_dir_all(&shared).unwrap();
    for host in [&ctl0, &ctl1] {
        let link = cluster.root(host).join(STATE.trim_start_matches('/'));
        std::os::unix::fs::symlink(&shared, &link).unwrap();
    }
    cluster
        .sh(&ctl0, &format!("chown slurm:slurm {}", shared.display()))
        .ok();
    watch.lap("3 hosts, shared state directory");

    let mut sim = Simulator::new().expect("simulator");
    let extras = std::sync::Arc::new(cluster.unit_extras(&nvml, hosts.clone()));
    let (e1, e2) = (extras.clone(), extras);
    sim.deploy(
        DeploySpec::new("slurmctld", e2e::charm_dir(work.path(), "slurmctld"))
            .config("default-partition", "slurmd")
            .config("state-save-location", STATE)
            .extras_fn(move |u| e1(u)),
    )
    .expect("deploy slurmctld");
    sim.deploy(
        DeploySpec::new("slurmd", e2e::charm_dir(work.path(), "slurmd")).extras_fn(move |u| e2(u)),
    )
    .expect("deploy slurmd");
    sim.integrate("slurmd", "slurmctld").expect("integrate");
    let r = sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .expect("node-configured");
    assert_eq!(r.status, "completed", "{r:?}");
    sim.update_status(None).expect("update-status");
    let hook_errors = |sim: &Simulator| -> Vec<String> {
        sim.records()
            .iter()
            .filter(|r| !r.succeeded())
            .map(|r| format!("{} {}: {}{}", r.unit, r.hook, r.stdout, r.stderr))
            .collect()
    };
    assert!(hook_errors(&sim).is_empty(), "{:#?}", hook_errors(&sim));
    assert_eq!(sim.leader("slurmctld").as_deref(), Some("slurmctld/0"));
    let status = |sim: &Simulator, unit: &str| {
        let s = sim.unit_status(unit).unwrap();
        (s.status, s.message)
    };
    let active = |host: &str| {
        cluster
            .run(host, "systemctl", &["is-active", "slurmctld"])
            .stdout
            .trim()
            .to_string()
    };
    cluster.wait_node_idle_alive(&ctl0, &node, T4_1, REGISTER);
    let first = sbatch(&cluster, &ctl0, &["--wrap", "true"]);
    watch.lap("deploy slurmctld + slurmd, node IDLE, a first job");

    // A second controller unit joins the running cluster: it stands by, runs no slurmctld, and
    // the leader names it in slurm.conf after itself (slurmctld takes that by reconfigure).
    sim.add_unit("slurmctld", 1).expect("add-unit slurmctld");
    assert!(hook_errors(&sim).is_empty(), "{:#?}", hook_errors(&sim));
    let (st, msg) = status(&sim, "slurmctld/1");
    assert_eq!(st, "active", "{msg}");
    assert!(msg.starts_with("standby: waiting for leadership"), "{msg}");
    assert_eq!(active(&ctl1), "inactive", "a standby runs no slurmctld");
    // Both units are in slurm.conf, the leader first: a job's slurmstepd, which keeps the conf
    // it started with, reaches the next leader through the second line.
    let conf = std::fs::read_to_string(cluster.root(&ctl0).join("etc/slurm/slurm.conf")).unwrap();
    let ctl_lines: Vec<&str> = conf
        .lines()
        .filter(|l| l.starts_with("SlurmctldHost="))
        .collect();
    assert_eq!(
        ctl_lines,
        [
            format!("SlurmctldHost={ctl0}"),
            format!("SlurmctldHost={ctl1}")
        ]
    );
    assert!(
        conf.contains(&format!("StateSaveLocation={STATE}\n")),
        "{conf}"
    );
    let ping = cluster.run(&ctl0, "scontrol", &["ping"]).ok().stdout;
    assert!(
        ping.contains(&format!("at {ctl0} is UP")) && ping.contains(&format!("at {ctl1} is DOWN")),
        "{ping}"
    );
    cluster.wait_node_idle_alive(&ctl0, &node, T4_1, REGISTER);
    watch.lap("add-unit slurmctld: standby, two SlurmctldHost lines");

    // A job running across the leader change (it waits for the test's marker), a held one, and
    // the job ids so far.
    let marker = work.path().join("leader-change.marker");
    let output = work.path().join("running.out");
    let script = format!(
        "echo started; n=0; while [ ! -e {m} ]; do n=$((n+1)); \
         if [ $n -ge {polls} ]; then echo no marker; exit 3; fi; sleep 0.1; done; echo marker seen",
        m = marker.display(),
        polls = JOB_LIMIT.as_millis() / 100,
    );
    let out_arg = output.display().to_string();
    let running = Job {
        cluster: &cluster,
        id: sbatch(&cluster, &ctl0, &["-o", &out_arg, "--wrap", &script]),
    };
    let held_out = work.path().join("held.out").display().to_string();
    let held = Job {
        cluster: &cluster,
        id: sbatch(
            &cluster,
            &ctl0,
            &["--hold", "-o", &held_out, "--wrap", "echo held ran"],
        ),
    };
    let job_output = || std::fs::read_to_string(&output).unwrap_or_default();
    cluster.wait_for("the job to start", REGISTER, || {
        let st = running.state(&ctl0);
        if st.0 == "RUNNING" && job_output().contains("started") {
            Ok(())
        } else {
            Err(format!("{st:?}, output {:?}", job_output()))
        }
    });
    assert_eq!(held.state(&ctl0).0, "PENDING");
    watch.lap("a job running, a job held");

    // Juju moves leadership (the former leader's agent stopped renewing its lease; Juju 4 tells
    // only the new leader). slurmctld still runs on juju-e2e-0: the new leader waits.
    sim.set_leader("slurmctld/1").expect("set-leader");
    assert!(hook_errors(&sim).is_empty(), "{:#?}", hook_errors(&sim));
    let (st, msg) = status(&sim, "slurmctld/1");
    assert_eq!(st, "waiting", "{msg}");
    assert!(
        msg.starts_with(&format!("taking over from {ctl0}")),
        "{msg}"
    );
    assert_eq!(active(&ctl1), "inactive", "two primaries");
    // The former leader's next hook (its update-status; no hook on the new leader): it stops its
    // slurmctld and says so in its peer bag; the new leader's peer relation-changed then starts
    // slurmctld on the shared state, and the node follows it.
    let before = sim.records().len();
    sim.queue_hook("slurmctld/0", Hook::UpdateStatus);
    sim.settle().expect("settle");
    let took_over = sim.records()[before..]
        .iter()
        .any(|r| r.unit == "slurmctld/1" && r.hook == "slurmctld-peers-relation-changed");
    assert!(took_over, "the new leader was not told");
    assert!(hook_errors(&sim).is_empty(), "{:#?}", hook_errors(&sim));
    assert_ne!(
        active(&ctl0),
        "active",
        "the former leader still runs slurmctld"
    );
    assert_eq!(active(&ctl1), "active");
    let (st, msg) = status(&sim, "slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(msg.starts_with("standby: waiting for leadership"), "{msg}");
    assert_eq!(
        status(&sim, "slurmctld/1").0,
        "active",
        "{:?}",
        status(&sim, "slurmctld/1")
    );
    let default_slurmd =
        std::fs::read_to_string(cluster.root(&node).join("etc/default/slurmd")).unwrap_or_default();
    assert!(
        default_slurmd.contains(&format!("--conf-server {ctl1}:6817")),
        "{default_slurmd}"
    );
    watch.lap("leader change: old slurmctld stopped, new one started");

    // The new controller knows both jobs.
    cluster.wait_for("the new controller to answer", REGISTER, || {
        let st = running.state(&ctl1);
        if st.0 == "RUNNING" {
            Ok(())
        } else {
            Err(format!("{st:?}"))
        }
    });
    let (st, reason, _) = held.state(&ctl1);
    assert_eq!(
        (st.as_str(), reason.as_str()),
        ("PENDING", "JobHeldUser"),
        "the held job"
    );
    // The running job finishes well.
    std::fs::write(&marker, b"").unwrap();
    cluster.wait_for(
        "the job that spanned the leader change to finish",
        Duration::from_secs(120),
        || match running.state(&ctl1) {
            st if st.0 == "RUNNING" || st.0 == "COMPLETING" => Err(format!("{st:?}")),
            st => Ok(st),
        },
    );
    assert_eq!(
        running.state(&ctl1),
        ("COMPLETED".into(), "None".into(), "0:0".into()),
        "output {:?}\n{}",
        job_output(),
        cluster.logs()
    );
    assert_eq!(job_output(), "started\nmarker seen\n");
    watch.lap("the running job finished");
    // The held job runs once released.
    cluster.run(&ctl1, "scontrol", &["release", &held.id]).ok();
    cluster.wait_for("the released job to finish", REGISTER, || {
        match held.state(&ctl1) {
            st if st.0 == "COMPLETED" => Ok(()),
            st => Err(format!("{st:?}")),
        }
    });
    assert_eq!(
        std::fs::read_to_string(Path::new(&held_out)).unwrap_or_default(),
        "held ran\n"
    );
    // Job ids go on.
    let next = sbatch(&cluster, &ctl1, &["--wrap", "true"]);
    let id = |s: &str| {
        s.parse::<u64>()
            .unwrap_or_else(|e| panic!("job id {s:?}: {e}"))
    };
    assert!(
        id(&next) > id(&held.id) && id(&held.id) > id(&running.id) && id(&running.id) > id(&first),
        "job ids restarted: {first} {} {} then {next}",
        running.id,
        held.id
    );
    watch.lap("held job released and ran; job ids go on");
    assert_ne!(active(&ctl0), "active", "two primaries at the end");
    // The one line a leader's slurmctld logs for the other units, which Slurm takes for backup
    // controllers: at its start it asks them to hand over control, and they run nothing.
    let complaints = e2e::daemon_complaints(&cluster, &["_shutdown_bu_thread:send/recv"]);
    assert!(
        complaints.is_empty(),
        "Slurm {} logged errors, warnings or deprecations (docs/e2e.md, \"Daemon logs\"):\n{}",
        suite.slurm(),
        complaints.join("\n")
    );
    let _: PathBuf = shared;
    drop(cluster);
    watch.lap("teardown");
    e2e::eprint_block(&format!("wall time ({name})"), &watch.report());
}
