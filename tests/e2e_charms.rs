//! End to end: the real slurmctld and slurmd charms, run hook by hook by the Juju simulator, drive
//! Debian's real munged, slurmctld and slurmd on a cluster of namespaced hosts (docs/e2e.md), and
//! Slurm's own tools check the result (issue 6).
//!
//! Hosts (machine N of the model = host `juju-e2e-N` at the simulator's address for machine N):
//!   juju-e2e-0  slurmctld/0
//!   juju-e2e-1  slurmd/0   2 x Tesla T4
//!   juju-e2e-2  slurmd/1   4 x H100 SXM, NVLink between all four
//!   juju-e2e-3  slurmd/2   added later (1 x T4), then removed

mod e2e;

use e2e::{Cluster, Stopwatch, Suite, cpus, env_var, machine};
use juju_sim::{DeploySpec, Hook, Simulator, UnitExtras};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

const REGISTER: Duration = Duration::from_secs(60);
/// How long the job that spans `rotate-key` waits for the test's marker before it gives up.
const ROTATION_JOB_LIMIT: Duration = Duration::from_secs(300);
const T4_2: &str = "gpu:tesla_t4:2";
const T4_3: &str = "gpu:tesla_t4:3";
const H100_4: &str = "gpu:nvidia_h100_80gb_hbm3:4";

/// Which host each unit runs on (the simulator numbers machines in deploy order).
fn unit_hosts() -> BTreeMap<String, String> {
    [
        ("slurmctld/0", 0),
        ("slurmd/0", 1),
        ("slurmd/1", 2),
        ("slurmd/2", 3),
    ]
    .into_iter()
    .map(|(u, m)| (u.to_string(), machine(m).0))
    .collect()
}

fn t4(minor: u32, bus: &str) -> serde_json::Value {
    json!({
        "name": "Tesla T4",
        "uuid": format!("GPU-7e540000-0000-4000-8000-00000000000{minor}"),
        "pci_bus_id": bus,
        "minor": minor,
        "memory_total": 16106127360u64,
        "pci_device_id": 0x1eb810de_u32,
        "cpu_affinity": cpus(),
    })
}

/// 4 x H100 SXM, 6 NVLinks from each GPU to each other one.
fn h100_nvlink() -> serde_json::Value {
    let buses = [
        "00000000:18:00.0",
        "00000000:2A:00.0",
        "00000000:3A:00.0",
        "00000000:5D:00.0",
    ];
    let devices: Vec<_> = buses
        .iter()
        .enumerate()
        .map(|(i, bus)| {
            let links: Vec<&str> = buses
                .iter()
                .filter(|b| *b != bus)
                .flat_map(|b| std::iter::repeat_n(*b, 6))
                .collect();
            json!({
                "name": "NVIDIA H100 80GB HBM3",
                "uuid": format!("GPU-1e0c0000-5d1c-4b3e-9f2a-00000000000{i}"),
                "pci_bus_id": bus,
                "minor": i,
                "memory_total": 85520809984u64,
                "pci_device_id": 0x233010de_u32,
                "cpu_affinity": cpus(),
                "mig": {"current": 0},
                "nvlinks": links,
            })
        })
        .collect();
    json!({ "devices": devices })
}

struct Scenario {
    cluster: Cluster,
    sim: Simulator,
    work: tempfile::TempDir,
    hosts: BTreeMap<String, String>,
    watch: Stopwatch,
}

impl Scenario {
    fn ctl(&self) -> &str {
        &self.hosts["slurmctld/0"]
    }

    fn nvml_config(&self, host: &str) -> PathBuf {
        self.work.path().join("nvml").join(format!("{host}.json"))
    }

    /// Give a host GPUs: the fake NVML's JSON and the device nodes, as a driver would.
    fn set_gpus(&self, host: &str, config: &serde_json::Value) {
        let minors: Vec<u32> = config["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["minor"].as_u64().unwrap() as u32)
            .collect();
        self.cluster.remove_gpus(host, &(0..16).collect::<Vec<_>>());
        self.cluster.add_gpus(host, &minors);
        std::fs::write(
            self.nvml_config(host),
            serde_json::to_vec_pretty(config).unwrap(),
        )
        .unwrap();
    }

    fn status(&self, unit: &str) -> (String, String) {
        let s = self
            .sim
            .unit_status(unit)
            .unwrap_or_else(|| panic!("no unit {unit}"));
        (s.status, s.message)
    }

    #[track_caller]
    fn assert_no_hook_errors(&self) {
        for u in ["slurmctld/0", "slurmd/0", "slurmd/1", "slurmd/2"] {
            if self.sim.unit_status(u).is_some() {
                assert!(
                    !self.sim.is_error(u),
                    "unit {u} is in error: {:?}\n{}",
                    self.sim.unit_status(u),
                    self.hook_log()
                );
            }
        }
    }

    fn hook_log(&self) -> String {
        let mut s = String::new();
        let failed: Vec<_> = self
            .sim
            .records()
            .iter()
            .filter(|r| !r.succeeded())
            .collect();
        let recent: Vec<_> = self.sim.records().iter().rev().take(8).rev().collect();
        for r in failed.into_iter().chain(recent) {
            s.push_str(&format!(
                "--- {} {} -> {:?} ({:.1}s)\n{}{}",
                r.unit,
                r.hook,
                r.code,
                r.duration.as_secs_f64(),
                r.stdout,
                r.stderr
            ));
        }
        s
    }

    fn node_configured(&mut self, unit: &str) {
        let r = self
            .sim
            .run_action(unit, "node-configured", json!({}))
            .unwrap_or_else(|e| panic!("node-configured on {unit}: {e}"));
        assert_eq!(r.status, "completed", "{r:?}");
    }

    /// `srun ARGS env` on the controller; the job's environment (panics with srun's whole
    /// output when the step did not run: srun can exit 0 after `task 0 launch failed`).
    fn srun_env(&self, args: &[&str]) -> String {
        let mut a = args.to_vec();
        a.push("env");
        let r = self.cluster.run(self.ctl(), "srun", &a).ok();
        assert!(
            env_var(&r.stdout, "SLURM_JOB_ID").is_some(),
            "the job step did not run: {r}\n{}",
            self.cluster.logs()
        );
        r.stdout
    }

    fn print(&self, title: &str, program: &str, args: &[&str]) -> String {
        let r = self.cluster.run(self.ctl(), program, args).ok();
        e2e::eprint_block(title, &r.stdout);
        r.stdout
    }

    fn print_file(&self, rel: &str) -> String {
        let p = self.cluster.root(self.ctl()).join(rel);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        e2e::eprint_block(&format!("{}:/{rel}", self.ctl()), &text);
        text
    }
}

fn start(suite: Suite) -> Scenario {
    let mut watch = Stopwatch::new();
    let hosts = unit_hosts();
    let machines: Vec<(String, String)> = (0..4).map(machine).collect();
    let spec: Vec<(&str, &str)> = machines
        .iter()
        .map(|(h, a)| (h.as_str(), a.as_str()))
        .collect();
    let cluster = Cluster::start_on(suite, &spec).unwrap_or_else(|e| panic!("{e}"));
    watch.lap("4 hosts (namespaces, network, mounts)");
    let work = tempfile::Builder::new()
        .prefix("e2e-charms-")
        .tempdir()
        .unwrap();
    let sim = Simulator::new().expect("simulator");
    let s = Scenario {
        cluster,
        sim,
        work,
        hosts,
        watch,
    };
    e2e::install_fake_nvml(s.work.path());
    s.set_gpus("juju-e2e-0", &json!({"devices": []}));
    s.set_gpus(
        "juju-e2e-1",
        &json!({"devices": [t4(0, "00000000:3B:00.0"), t4(1, "00000000:86:00.0")]}),
    );
    s.set_gpus("juju-e2e-2", &h100_nvlink());
    s.set_gpus(
        "juju-e2e-3",
        &json!({"devices": [t4(0, "00000000:3B:00.0")]}),
    );
    s
}

/// Per-unit test extras: run inside the unit's host, with its root, its fake NVML and the
/// systemctl/apt-get stand-ins.
fn extras_for(s: &Scenario) -> impl Fn(&str) -> UnitExtras + Send + Sync + 'static {
    s.cluster
        .unit_extras(&s.work.path().join("nvml"), s.hosts.clone())
}

#[test]
fn e2e_charms_drive_real_slurm_22_05() {
    charms_drive_real_slurm(Suite::Bookworm);
}

#[test]
fn e2e_charms_drive_real_slurm_24_11() {
    charms_drive_real_slurm(Suite::Trixie);
}

#[test]
fn e2e_charms_drive_real_slurm_26_05() {
    charms_drive_real_slurm(Suite::Sid);
}

#[test]
fn e2e_auth_slurm_24_11() {
    auth_slurm_scenario(Suite::Trixie);
}

#[test]
fn e2e_auth_slurm_26_05() {
    auth_slurm_scenario(Suite::Sid);
}

/// `auth-type=slurm` (issue 14): the controller renders auth/slurm + cred/slurm, every host gets
/// `/etc/slurm/slurm.key` from the key secret, the configless slurmd uses it for its first
/// contact; with munged stopped everywhere, nodes stay IDLE and srun works.
fn auth_slurm_scenario(suite: Suite) {
    let name = format!("e2e_auth_slurm on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut s = start(suite);
    deploy_controller_and_two_nodes(&mut s, &[("auth-type", "slurm")]);
    s.sim.integrate("slurmd", "slurmctld").expect("integrate");
    s.assert_no_hook_errors();
    for u in ["slurmd/0", "slurmd/1"] {
        s.node_configured(u);
    }
    s.sim.update_status(None).expect("update-status");
    s.assert_no_hook_errors();
    let (n1, n2) = (machine(1).0, machine(2).0);
    let ctl = s.ctl().to_string();
    let conf = s.print_file("etc/slurm/slurm.conf");
    assert!(
        conf.contains("AuthType=auth/slurm") && conf.contains("CredType=cred/slurm"),
        "{conf}"
    );
    for host in [&ctl, &n1, &n2] {
        let key = std::fs::read(s.cluster.root(host).join("etc/slurm/slurm.key"))
            .unwrap_or_else(|e| panic!("{host}: slurm.key: {e}"));
        assert_eq!(key.len(), 1024, "{host}");
    }
    for host in [&ctl, &n1, &n2] {
        s.cluster.run(host, "systemctl", &["stop", "munge"]).ok();
    }
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    s.cluster.wait_node_idle(&ctl, &n2, H100_4, REGISTER);
    for host in [&n1, &n2] {
        let r = s.cluster.run(&ctl, "srun", &["-w", host, "hostname"]).ok();
        assert_eq!(r.stdout.trim(), host.as_str());
    }
    let env = s.srun_env(&["--gres=gpu:tesla_t4:2", "-w", &n1]);
    assert_eq!(env_var(&env, "CUDA_VISIBLE_DEVICES"), Some("0,1"), "{env}");
    for u in ["slurmctld/0", "slurmd/0", "slurmd/1"] {
        let (st, msg) = s.status(u);
        assert_eq!(st, "active", "{u}: {msg}");
    }
    s.watch
        .lap("auth/slurm: both nodes IDLE, srun works without munged");
    // The rest of the scenario under auth/slurm: add a unit (its host gets slurm.key; munged
    // is stopped there too once it runs), bad data, remove it, a GPU change.
    add_break_remove_and_change_gpus(&mut s);
    for host in [&ctl, &n1, &n2] {
        let r = s.cluster.run(host, "systemctl", &["is-active", "munge"]);
        assert!(!r.success(), "{host}: munged runs again");
    }
    for u in ["slurmctld/0", "slurmd/0", "slurmd/1"] {
        let (st, msg) = s.status(u);
        assert_eq!(st, "active", "{u} after the changes: {msg}");
    }
    // rotate-key is refused under auth/slurm (a running job's slurmstepd keeps the old
    // slurm.key: tried, its completion was refused and the job stayed RUNNING), nothing changes.
    let key_before = std::fs::read(s.cluster.root(&ctl).join("etc/slurm/slurm.key")).unwrap();
    let r = s
        .sim
        .run_action("slurmctld/0", "rotate-key", json!({}))
        .expect("rotate-key");
    assert_eq!(r.status, "failed", "{r:?}");
    assert!(r.message.contains("auth-type=slurm"), "{}", r.message);
    s.assert_no_hook_errors();
    let key_after = std::fs::read(s.cluster.root(&ctl).join("etc/slurm/slurm.key")).unwrap();
    assert!(key_before == key_after, "the key changed");
    // Provoked by the start-up order, not by auth/slurm: the slurmd the package started
    // before the charm wrote slurm.key asks for its config with a munge credential once, and
    // is restarted by the charm right after; the systemctl stand-in creates /run/slurm as root
    // (systemd's RuntimeDirectory would give it to SlurmUser).
    let provoked = [
        "decode_jwt: jwt_decode (with key) failure: Invalid argument",
        "verify_internal: decode_jwt() failed",
        "REQUEST_CONFIG has authentication error",
        "Protocol authentication error",
        "_prepare_run_dir: /run/slurm exists but is owned by root, not SlurmUser",
    ]
    .map(String::from)
    .into_iter()
    .chain(removed_unit_lines())
    .collect::<Vec<_>>();
    let provoked: Vec<&str> = provoked.iter().map(String::as_str).collect();
    let complaints = e2e::daemon_complaints(&s.cluster, &provoked);
    assert!(
        complaints.is_empty(),
        "Slurm {} logged errors, warnings or deprecations with auth/slurm:\n{}",
        suite.slurm(),
        complaints.join("\n")
    );
    let Scenario {
        cluster, mut watch, ..
    } = s;
    drop(cluster);
    watch.lap("teardown");
    e2e::eprint_block(&format!("wall time ({name})"), &watch.report());
}

/// Deploys slurmctld (`default-partition=slurmd` plus `ctl_config`) and two slurmd units on the
/// scenario's hosts, not yet integrated.
fn deploy_controller_and_two_nodes(s: &mut Scenario, ctl_config: &[(&str, &str)]) {
    let ctl_charm = e2e::charm_dir(s.work.path(), "slurmctld");
    let node_charm = e2e::charm_dir(s.work.path(), "slurmd");
    let extras = std::sync::Arc::new(extras_for(s));
    let (e1, e2) = (extras.clone(), extras);
    let mut ctl = DeploySpec::new("slurmctld", &ctl_charm).config("default-partition", "slurmd");
    for (key, value) in ctl_config {
        ctl = ctl.config(key, *value);
    }
    s.sim
        .deploy(ctl.extras_fn(move |u| e1(u)))
        .expect("deploy slurmctld");
    s.sim
        .deploy(
            DeploySpec::new("slurmd", &node_charm)
                .units(2)
                .extras_fn(move |u| e2(u)),
        )
        .expect("deploy slurmd");
}

/// The middle of the scenario, the same under either authentication: a third unit joins and
/// becomes schedulable, then publishes bad data (the controller keeps every other node and
/// itself working), is removed (its node goes, slurmctld keeps running), and a node's GPUs
/// change (update-status converges). Ends with slurmd/0's node at three T4s.
fn add_break_remove_and_change_gpus(s: &mut Scenario) {
    let (n1, n2) = (machine(1).0, machine(2).0);
    let ctl = s.ctl().to_string();
    // A third unit joins, becomes schedulable, then publishes bad data: the controller must
    // keep every other node (and itself) working.
    let added = s.sim.add_unit("slurmd", 1).expect("add-unit");
    assert_eq!(added, ["slurmd/2"]);
    s.node_configured("slurmd/2");
    s.assert_no_hook_errors();
    let n3 = machine(3).0;
    s.cluster
        .wait_node_idle_alive(&ctl, &n3, "gpu:tesla_t4:1", REGISTER);
    s.watch.lap("add-unit slurmd/2: IDLE");

    let rel = s.sim.relation_id("slurmd", "slurmctld").expect("relation");
    // slurmd/2 turns hostile: its hooks no longer run the charm (which would republish its own
    // good record when the controller's verdicts reach it).
    let hostile = juju_sim::UnitExtras {
        command_prefix: vec!["true".into()],
        ..Default::default()
    };
    s.sim
        .set_unit_extras("slurmd/2", hostile)
        .expect("set extras");
    let evil = json!({
        "node_parameters": {
            "NodeName": format!("{n3}\nPartitionName=evil Nodes=ALL"),
            "CPUs": "2 Gres=gpu:x:1",
            "Gres": ["gpu:tesla_t4:1\nNodeName=x"],
        },
        "new_node": false,
        "gres": [{"Name": "gpu", "Type": "tesla_t4", "File": "/etc/passwd"}],
    })
    .to_string();
    s.sim.with_model_mut(|m| {
        m.relations
            .get_mut(&rel)
            .unwrap()
            .unit_bags
            .entry("slurmd/2".into())
            .or_default()
            .insert("node".into(), evil);
    });
    s.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(rel, Some("slurmd/2".into())),
    );
    s.sim.settle().expect("settle");
    s.assert_no_hook_errors();
    let conf = std::fs::read_to_string(s.cluster.root(&ctl).join("etc/slurm/slurm.conf")).unwrap();
    let gres = std::fs::read_to_string(s.cluster.root(&ctl).join("etc/slurm/gres.conf")).unwrap();
    assert!(!conf.contains("evil") && !conf.contains("x:1"), "{conf}");
    assert!(!gres.contains("/etc/passwd"), "{gres}");
    s.cluster
        .run(&ctl, "systemctl", &["is-active", "slurmctld"])
        .ok();
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    s.cluster.wait_node_idle(&ctl, &n2, H100_4, REGISTER);
    let r = s
        .cluster
        .run(
            &ctl,
            "srun",
            &["--gres=gpu:nvidia_h100_80gb_hbm3:2", "hostname"],
        )
        .ok();
    assert_eq!(r.stdout.trim(), n2);
    let (st, msg) = s.status("slurmctld/0");
    eprintln!("slurmctld/0 with bad data from slurmd/2: {st}: {msg}");
    assert!(
        msg.contains("slurmd/2"),
        "slurmctld/0 status should name the bad unit: {st}: {msg}"
    );
    s.watch.lap("bad data from slurmd/2: others schedulable");

    // Removing the unit removes its node; slurmctld keeps running.
    s.sim.remove_unit("slurmd/2").expect("remove-unit");
    s.assert_no_hook_errors();
    // The machine goes away with the unit.
    s.cluster
        .run(&n3, "systemctl", &["stop", "slurmd", "munge"])
        .ok();
    s.cluster.wait_for("node of slurmd/2 gone", REGISTER, || {
        match s.cluster.node(&ctl, &n3) {
            Err(e) if e.contains("not found") => Ok(()),
            Err(e) => Err(e),
            Ok(n) => Err(format!("still there: {:?}", n.get("State"))),
        }
    });
    s.cluster
        .run(&ctl, "systemctl", &["is-active", "slurmctld"])
        .ok();
    s.cluster.run(&ctl, "scontrol", &["ping"]).ok();
    s.cluster.wait_node_idle(&ctl, &n1, T4_2, REGISTER);
    s.cluster.wait_node_idle(&ctl, &n2, H100_4, REGISTER);
    s.watch.lap("remove-unit slurmd/2: node gone, slurmctld up");

    // A node's GPUs change (a third T4 appears): update-status converges without manual steps.
    let n1_started = s.cluster.slurmd_start_time(&ctl, &n1);
    s.set_gpus(
        &n1,
        &json!({"devices": [
            t4(0, "00000000:3B:00.0"),
            t4(1, "00000000:86:00.0"),
            t4(2, "00000000:AF:00.0"),
        ]}),
    );
    s.sim.update_status(None).expect("update-status");
    s.assert_no_hook_errors();
    // slurmctld has the third T4 from its new slurm.conf at once (IDLE from its saved state);
    // the job below needs n1's slurmd, restarted by the charm for the new GPU, to have it too.
    s.cluster
        .wait_node_reregistered(&ctl, &n1, T4_3, &n1_started, REGISTER);
    let env = s.srun_env(&["--gres=gpu:tesla_t4:3", "-w", &n1]);
    assert_eq!(
        env_var(&env, "CUDA_VISIBLE_DEVICES"),
        Some("0,1,2"),
        "{env}"
    );
    s.watch.lap("GPU change on slurmd/0 converged");
}

/// Lines the middle of the scenario provokes on purpose: the removed unit's slurmd talks to
/// the controller until its machine goes away.
fn removed_unit_lines() -> Vec<String> {
    let n3 = machine(3).0;
    vec![
        format!("lookup failure for node \"{n3}\""),
        format!("Node {n3} has vanished from configuration"),
        format!("slurmd registered on unknown node {n3}"),
        format!("_slurm_rpc_node_registration node={n3}: No such file or directory"),
    ]
}

/// The whole scenario (module doc) with every host on `suite`'s Slurm.
fn charms_drive_real_slurm(suite: Suite) {
    let name = format!("e2e_charms_drive_real_slurm on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let mut s = start(suite);

    // Deploy and integrate: install, leader-elected, config-changed, start, relation hooks.
    deploy_controller_and_two_nodes(&mut s, &[]);
    for (unit, host) in &s.hosts {
        if let Some(addr) = s.sim.unit_address(unit) {
            assert_eq!(addr, s.cluster.host(host).addr, "address of {unit}");
        }
    }
    s.sim.integrate("slurmd", "slurmctld").expect("integrate");
    s.assert_no_hook_errors();
    s.watch
        .lap("deploy slurmctld + 2 slurmd, integrate (hooks)");
    for u in ["slurmd/0", "slurmd/1"] {
        s.node_configured(u);
    }
    s.sim.update_status(None).expect("update-status");
    s.assert_no_hook_errors();
    s.watch.lap("node-configured x2, update-status");

    let (n1, n2) = (machine(1).0, machine(2).0);
    let ctl = s.ctl().to_string();
    // No slurmd dies at start, 22.05.8 included (docs/e2e.md, "slurmd dies at start").
    for (n, gres) in [(&n1, T4_2), (&n2, H100_4)] {
        s.cluster.wait_node_idle_alive(&ctl, n, gres, REGISTER);
    }
    s.watch.lap("both nodes IDLE with their Gres");
    s.print_file("etc/slurm/gres.conf");
    s.print_file("etc/slurm/slurm.conf");
    s.print("sinfo", "sinfo", &[]);
    s.print("scontrol show node", "scontrol", &["show", "node"]);
    for u in ["slurmctld/0", "slurmd/0", "slurmd/1"] {
        let (st, msg) = s.status(u);
        assert_eq!(st, "active", "{u}: {msg}");
    }

    // GPUs are schedulable by type, with the device index Slurm assigns.
    let env = s.srun_env(&["--gres=gpu:tesla_t4:1", "-w", &n1]);
    assert_eq!(env_var(&env, "CUDA_VISIBLE_DEVICES"), Some("0"), "{env}");
    let env = s.srun_env(&["--gres=gpu:tesla_t4:2", "-w", &n1]);
    assert_eq!(env_var(&env, "CUDA_VISIBLE_DEVICES"), Some("0,1"), "{env}");
    let env = s.srun_env(&["--gres=gpu:nvidia_h100_80gb_hbm3:1", "-w", &n2]);
    assert_eq!(env_var(&env, "CUDA_VISIBLE_DEVICES"), Some("0"), "{env}");
    let env = s.srun_env(&["--gres=gpu:nvidia_h100_80gb_hbm3:4", "-w", &n2]);
    assert_eq!(
        env_var(&env, "CUDA_VISIBLE_DEVICES"),
        Some("0,1,2,3"),
        "{env}"
    );
    // The charm's cgroup.conf (ConstrainDevices=yes): a job opens only the GPU it was given
    // (the fake nodes have no driver: the granted one answers ENXIO, the other EPERM).
    let r = s
        .cluster
        .run(
            &ctl,
            "srun",
            &[
                "--gres=gpu:nvidia_h100_80gb_hbm3:1",
                "-w",
                &n2,
                "bash",
                "-c",
                "for d in /dev/nvidia0 /dev/nvidia3; do head -c1 $d 2>&1 || true; done",
            ],
        )
        .ok();
    assert!(
        r.stdout
            .contains("/dev/nvidia0' for reading: No such device or address"),
        "{r}"
    );
    assert!(
        r.stdout
            .contains("/dev/nvidia3' for reading: Operation not permitted"),
        "{r}"
    );
    for ask in [
        "--gres=gpu:tesla_t4:3",
        "--gres=gpu:nvidia_h100_80gb_hbm3:5",
        "--gres=gpu:9",
    ] {
        let r = s.cluster.run(&ctl, "srun", &[ask, "true"]).fails();
        assert!(
            r.stderr
                .contains("Requested node configuration is not available"),
            "{r}"
        );
    }
    s.watch.lap("srun checks");

    add_break_remove_and_change_gpus(&mut s);

    // A wrong munge key on one node (munged told to use another key file, which the charm does
    // not manage) is reported in that unit's status.
    let n2_started = s.cluster.slurmd_start_time(&ctl, &n2);
    let n2_root = s.cluster.root(&n2).to_path_buf();
    std::fs::write(n2_root.join("etc/munge/other.key"), [9u8; 1024]).unwrap();
    s.cluster
        .sh(
            &n2,
            "chown munge:munge /etc/munge/other.key && chmod 0400 /etc/munge/other.key && \
             echo 'OPTIONS=\"--key-file=/etc/munge/other.key\"' >/etc/default/munge && \
             systemctl restart munge && systemctl restart --no-block slurmd",
        )
        .ok();
    s.sim.update_status(Some("slurmd")).expect("update-status");
    s.assert_no_hook_errors();
    let (st, msg) = s.status("slurmd/1");
    eprintln!("slurmd/1 with a wrong munge key: {st}: {msg}");
    assert_ne!(
        st, "active",
        "slurmd/1 should report the wrong munge key: {msg}"
    );
    assert!(msg.to_lowercase().contains("munge"), "{st}: {msg}");
    let (st0, msg0) = s.status("slurmd/0");
    assert_eq!(st0, "active", "slurmd/0: {msg0}");
    s.watch.lap("wrong munge key reported");

    // The key fixed by hand: the next update-status brings slurmd back, with no other step.
    s.cluster
        .sh(
            &n2,
            "rm /etc/default/munge /etc/munge/other.key && systemctl restart munge",
        )
        .ok();
    let n2_restarts = || {
        let log = std::fs::read_to_string(n2_root.join("var/log/e2e-systemctl.log")).unwrap();
        log.lines()
            .filter(|l| l.contains("systemctl restart") && l.ends_with(" slurmd"))
            .count()
    };
    let restarts_before = n2_restarts();
    s.sim.update_status(Some("slurmd")).expect("update-status");
    s.assert_no_hook_errors();
    // The charm restarts slurmd itself: on 22.05 it died (`failed`), from 23.11 it still
    // retries every 10 s (`activating`) and would otherwise be back only at its next try.
    assert_eq!(
        n2_restarts(),
        restarts_before + 1,
        "the charm did not restart slurmd on {n2} once the key was fixed"
    );
    // n2 never left IDLE in slurmctld (its slurmd was away for less than SlurmdTimeout): the
    // node is back once the slurmd the charm restarted has registered.
    s.cluster
        .wait_node_reregistered(&ctl, &n2, H100_4, &n2_started, REGISTER);
    let (st, msg) = s.status("slurmd/1");
    assert_eq!(st, "active", "slurmd/1 after the key was fixed: {msg}");
    s.watch.lap("munge key fixed: node back");

    // Key rotation (issue 14): a job submitted before `rotate-key` finishes, every node and the
    // controller move to the new key (the secret's new revision), the old revision is removed,
    // all nodes are IDLE again and srun works.
    rotate_key_keeps_the_cluster_working(&mut s, &[(&n1, T4_3), (&n2, H100_4)]);
    s.watch
        .lap("rotate-key: new key everywhere, job finished, nodes IDLE");

    s.print("sinfo (end)", "sinfo", &["-N", "-o", "%N %T %G %E"]);
    let slow: String = s
        .sim
        .records()
        .iter()
        .filter(|r| r.duration > Duration::from_secs(1))
        .map(|r| {
            let said: Vec<String> = r
                .calls
                .iter()
                .filter(|c| c.tool == "status-set" || c.tool == "juju-log")
                .map(|c| c.args.join(" "))
                .collect();
            format!(
                "  {:>6.2}s  {} {}: {}\n",
                r.duration.as_secs_f64(),
                r.unit,
                r.hook,
                said.join(" | ")
            )
        })
        .collect();
    let total: f64 = s
        .sim
        .records()
        .iter()
        .map(|r| r.duration.as_secs_f64())
        .sum();
    e2e::eprint_block(
        &format!(
            "{} hooks/actions, {total:.1}s in all; those over 1 s",
            s.sim.records().len()
        ),
        &slow,
    );
    // How slurmctld took the node added, the node removed and the GPU added: a restart each
    // before 23.11; from 23.11 `scontrol reconfigure` (it re-executes slurmctld), so the only
    // restart is the one that starts slurmctld for the first nodes (docs/slurm-versions.md).
    let systemctl_log =
        std::fs::read_to_string(s.cluster.root(&ctl).join("var/log/e2e-systemctl.log")).unwrap();
    let restarts = systemctl_log
        .lines()
        .filter(|l| l.ends_with("systemctl restart slurmctld"))
        .count();
    e2e::eprint_block(
        &format!("slurmctld restarts on Slurm {}", suite.slurm()),
        &restarts.to_string(),
    );
    if suite == Suite::Bookworm {
        assert!(restarts >= 4, "22.05 restarts for node changes: {restarts}");
    } else {
        assert_eq!(restarts, 1, "only the first start:\n{systemctl_log}");
    }
    // Lines this scenario provokes on purpose: the removed unit's slurmd talks to the
    // controller until its machine goes away, and host 2's wrong munge key.
    let mut provoked = removed_unit_lines();
    provoked.extend([
        "Munge decode failed: Invalid credential".into(),
        "has authentication error".into(),
        "Protocol authentication error".into(),
        "]: Unspecified error".into(),
        "failed to fetch remote configs: Protocol authentication error".into(),
        // 22.05: the configless slurmd with the wrong key gives up
        "_establish_configuration: failed to load configs".into(),
        "slurmd initialization failed".into(),
    ]);
    let provoked: Vec<&str> = provoked.iter().map(String::as_str).collect();
    let complaints = e2e::daemon_complaints(&s.cluster, &provoked);
    assert!(
        complaints.is_empty(),
        "Slurm {} logged errors, warnings or deprecations (docs/e2e.md, \"Daemon logs\"):\n{}",
        suite.slurm(),
        complaints.join("\n")
    );
    let Scenario {
        cluster, mut watch, ..
    } = s;
    drop(cluster);
    watch.lap("teardown");
    e2e::eprint_block(&format!("wall time ({name})"), &watch.report());
}

/// `rotate-key` on a working cluster: see the call site in [`charms_drive_real_slurm`].
fn rotate_key_keeps_the_cluster_working(s: &mut Scenario, nodes: &[(&str, &str)]) {
    let ctl = s.ctl().to_string();
    let key_path = "etc/munge/munge.key";
    let key = |host: &str| std::fs::read(s.cluster.root(host).join(key_path)).unwrap();
    let old = key(&ctl);
    let (first, _) = nodes[0];
    // The job runs until the test creates `marker`, which it does only after the rotation has
    // finished, so the job spans the whole rotation however long it takes; the job gives up
    // (exit 3) if the marker never comes, so it cannot outlive a failed test. Its output goes to
    // the test's work directory (the hosts share the machine's /tmp, docs/e2e.md).
    let marker = s.work.path().join("rotate-key.marker");
    let output = s.work.path().join("rotate-key.out");
    let script = format!(
        "echo started; n=0; while [ ! -e {m} ]; do n=$((n+1)); \
         if [ $n -ge {polls} ]; then echo no marker; exit 3; fi; sleep 0.1; done; echo marker seen",
        m = marker.display(),
        polls = ROTATION_JOB_LIMIT.as_millis() / 100,
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
                first,
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
        if job_state(s).0 == "RUNNING" && job_output().contains("started") {
            Ok(())
        } else {
            Err(format!("{:?}, output {:?}", job_state(s), job_output()))
        }
    });
    let started: Vec<String> = nodes
        .iter()
        .map(|(host, _)| s.cluster.slurmd_start_time(&ctl, host))
        .collect();
    let r = s
        .sim
        .run_action("slurmctld/0", "rotate-key", json!({}))
        .expect("rotate-key");
    assert_eq!(r.status, "completed", "{r:?}");
    s.assert_no_hook_errors();
    let new = key(&ctl);
    assert_ne!(new, old, "the controller kept the old key");
    for (host, _) in nodes {
        assert!(key(host) == new, "{host} did not switch to the new key");
    }
    let revisions: Vec<Vec<u32>> = s.sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .map(|x| x.revisions.keys().copied().collect())
            .collect()
    });
    assert_eq!(revisions, vec![vec![2]], "the old revision is removed");
    // The job outlived the rotation: still running (a job the rotation killed would read
    // FAILED, NODE_FAIL or CANCELLED here), then finishes well once the marker exists.
    let (state, _) = job_state(s);
    assert_eq!(
        state,
        "RUNNING",
        "the job submitted before the rotation is no longer running after it; output {:?}\n{}",
        job_output(),
        s.cluster.logs()
    );
    std::fs::write(&marker, b"").unwrap();
    s.cluster.wait_for(
        "the job submitted before the rotation to finish",
        REGISTER,
        || match job_state(s) {
            (st, _) if st == "RUNNING" || st == "COMPLETING" => Err(st),
            done => Ok(done),
        },
    );
    assert_eq!(
        job_state(s),
        ("COMPLETED".to_string(), "0:0".to_string()),
        "the job submitted before the rotation; output {:?}",
        job_output()
    );
    assert_eq!(job_output(), "started\nmarker seen\n");
    // Each node's slurmd was restarted with the new key; the nodes never left IDLE in
    // slurmctld, so the srun below waits for each new slurmd's registration first.
    for ((host, gres), before) in nodes.iter().zip(&started) {
        s.cluster
            .wait_node_reregistered(&ctl, host, gres, before, REGISTER);
    }
    for (host, _) in nodes {
        let r = s.cluster.run(&ctl, "srun", &["-w", host, "hostname"]).ok();
        assert_eq!(r.stdout.trim(), *host);
    }
}
