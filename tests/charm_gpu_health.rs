//! GPU health in the slurmd charm, through the simulator, the real charm binary, the fake NVML
//! and recording stand-ins: a failing GPU drains the node with a reason naming the GPU and the
//! fault (and blocks the unit with the same words), a healed GPU resumes the charm's own drain,
//! an operator's drain is never lifted, and `detect-gpus` shows the health.

#[path = "charm_support.rs"]
mod support;

use serde_json::{Value, json};
use support::*;

const NODE: &str = "slurmd-0";
const ECC: &str = "gpu 1 (00000000:D8:00.0): uncorrectable ECC errors";

/// One slurmd unit with two T4s, related to a controller, `node-configured` run.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    c.set_sinfo("idle|none");
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    assert_eq!(c.status("slurmd/0").0, "active");
    c
}

trait Health {
    fn fault(&self, device: usize, key: &str, value: Value);
    fn set_sinfo(&self, line: &str);
    fn hook(&mut self) -> Vec<String>;
}

impl Health for Cluster {
    /// Changes one field of the fake NVML's device `device` on slurmd/0.
    fn fault(&self, device: usize, key: &str, value: Value) {
        let path = self.root("slurmd/0").join("nvml.json");
        let mut cfg: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        cfg["devices"][device][key] = value;
        std::fs::write(&path, cfg.to_string()).unwrap();
    }

    /// What `sinfo -o '%T|%E'` says about the node.
    fn set_sinfo(&self, line: &str) {
        std::fs::write(self.root("slurmd/0").join("sinfo.txt"), format!("{line}\n")).unwrap();
    }

    /// Runs update-status on slurmd/0; the node-state commands it ran.
    fn hook(&mut self) -> Vec<String> {
        self.clear_commands("slurmd/0");
        self.sim.update_status(Some("slurmd")).unwrap();
        self.assert_no_errors();
        self.commands("slurmd/0")
            .into_iter()
            .filter(|l| l.starts_with("scontrol update"))
            .collect()
    }
}

fn drain(reason: &str) -> String {
    format!("scontrol update nodename={NODE} state=drain reason=slurmd-charm: {reason}")
}

const RESUME: &str = "scontrol update nodename=slurmd-0 state=resume";

#[test]
fn ecc_errors_drain_then_resume_after_the_fault_clears() {
    let mut c = cluster();
    c.fault(1, "health", json!({"ecc_uncorrected": 3}));
    assert_eq!(c.hook(), [drain(ECC)]);
    assert_eq!(c.status("slurmd/0"), ("blocked".into(), ECC.into()));
    let r = c
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    eprintln!("detect-gpus: {:?}", r.results);
    assert_eq!(r.results["health"]["status"], "failing", "{r:?}");
    assert_eq!(r.results["health"]["problems"]["0"], ECC, "{r:?}");

    // Slurm shows the charm's drain: nothing more to do while the fault lasts.
    c.set_sinfo(&format!("drained|slurmd-charm: {ECC}"));
    assert!(c.hook().is_empty());
    assert_eq!(c.status("slurmd/0").0, "blocked");

    // The fault clears (driver reload resets the volatile counter): resumed, active again.
    c.fault(1, "health", json!({}));
    assert_eq!(c.hook(), [RESUME]);
    assert_eq!(c.status("slurmd/0").0, "active");
    let r = c
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    assert_eq!(r.results["health"]["status"], "healthy", "{r:?}");
}

#[test]
fn an_operators_drain_is_never_lifted_or_rewritten() {
    let mut c = cluster();
    c.set_sinfo("drained|disk replacement");
    assert!(
        c.hook().is_empty(),
        "healthy GPUs never resume a foreign drain"
    );
    c.fault(1, "health", json!({"retired_pages_pending": true}));
    assert!(
        c.hook().is_empty(),
        "a GPU fault does not overwrite the operator's reason"
    );
    assert_eq!(
        c.status("slurmd/0"),
        (
            "blocked".into(),
            "gpu 1 (00000000:D8:00.0): retired pages pending (GPU reset needed)".into()
        )
    );
    c.fault(1, "health", json!({}));
    assert!(c.hook().is_empty());
    assert_eq!(c.status("slurmd/0").0, "active");
}

#[test]
fn each_fault_drains_with_its_own_words() {
    let mut c = cluster();
    for (key, value, words) in [
        (
            "health",
            json!({"row_remap_failure": true}),
            "row remapping failed",
        ),
        (
            "errors",
            json!({"nvmlDeviceGetTotalEccErrors": 15}),
            "GPU is lost (fallen off the bus)",
        ),
        (
            "health",
            json!({"retired_pages_pending": true}),
            "retired pages pending (GPU reset needed)",
        ),
        (
            "errors",
            json!({"nvmlDeviceGetHandleByIndex_v2": 999}),
            "NVML cannot open it (an internal driver error occurred)",
        ),
    ] {
        c.set_sinfo("idle|none");
        c.fault(1, key, value);
        let reason = format!("gpu 1 (00000000:D8:00.0): {words}");
        assert_eq!(c.hook(), [drain(&reason)], "{words}");
        c.fault(1, key, json!({}));
        c.set_sinfo(&format!("drained|slurmd-charm: {reason}"));
        assert_eq!(c.hook(), [RESUME], "{words}");
    }
}

#[test]
fn a_gpu_that_disappears_drains_until_it_returns() {
    let mut c = cluster();
    c.set_gpus("slurmd/0", &TWO_T4[..1]);
    let reason = "gpu 1 (00000000:D8:00.0): disappeared since the last check";
    assert_eq!(c.hook(), [drain(reason)]);
    c.set_sinfo(&format!("drained|slurmd-charm: {reason}"));
    // Still gone on the next hook: still a problem, nothing new to do.
    assert!(c.hook().is_empty());
    assert_eq!(c.status("slurmd/0"), ("blocked".into(), reason.into()));
    c.set_gpus("slurmd/0", TWO_T4);
    assert_eq!(c.hook(), [RESUME]);
}

#[test]
fn a_new_fault_replaces_the_charms_older_reason() {
    let mut c = cluster();
    c.set_sinfo(&format!("drained|slurmd-charm: {ECC}"));
    c.fault(0, "health", json!({"row_remap_failure": true}));
    assert_eq!(
        c.hook(),
        [drain("gpu 0 (00000000:3B:00.0): row remapping failed")]
    );
}

/// Sets (or, with `null`, clears) a top-level `errors` entry of the fake NVML on slurmd/0: a
/// failure of every call of that name, for NVML as a whole.
fn nvml_error(c: &Cluster, call: &str, code: Value) {
    let path = c.root("slurmd/0").join("nvml.json");
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    cfg["errors"][call] = code;
    if let Some(errors) = cfg["errors"].as_object_mut() {
        errors.retain(|_, v| !v.is_null());
    }
    std::fs::write(&path, cfg.to_string()).unwrap();
}

/// NVML failing as a whole (it cannot count the GPUs, or cannot start) drains the node with
/// every remembered GPU named, keeps the published record (the controller keeps this node's
/// GPUs), and resumes once NVML answers again.
#[test]
fn nvml_failing_as_a_whole_drains_and_keeps_the_published_node() {
    let mut c = cluster();
    let published = |c: &Cluster| c.sim.unit_bag(rel(c), "slurmd/0")["node"].clone();
    let before = published(&c);
    let gres_before = c.gres_conf();
    for (call, code, words) in [
        (
            "nvmlDeviceGetCount_v2",
            15,
            "GPU is lost (fallen off the bus)",
        ),
        (
            "nvmlInit_v2",
            999,
            "NVML cannot read it (an internal driver error occurred)",
        ),
    ] {
        c.set_sinfo("idle|none");
        nvml_error(&c, call, json!(code));
        let reason =
            format!("gpu 0 (00000000:3B:00.0): {words}; gpu 1 (00000000:D8:00.0): {words}");
        assert_eq!(c.hook(), [drain(&reason)], "{call}");
        let (kind, message) = c.status("slurmd/0");
        assert_eq!(kind, "blocked", "{call}");
        assert!(
            message.starts_with("gpu 0 (00000000:3B:00.0): "),
            "{message}"
        );
        assert_eq!(published(&c), before, "{call}: the published node is kept");
        assert_eq!(
            c.gres_conf(),
            gres_before,
            "{call}: the controller keeps the GPUs"
        );
        nvml_error(&c, call, Value::Null);
        c.set_sinfo(&format!("drained|slurmd-charm: {reason}"));
        assert_eq!(c.hook(), [RESUME], "{call}");
        assert_eq!(c.status("slurmd/0").0, "active", "{call}");
    }
}

/// Issue 39 item 2: a GPU that disappears drains the node and changes nothing else: the
/// published record, slurm.conf and gres.conf stay as they are and slurmctld is neither
/// restarted nor reconfigured, while it is gone and when it returns. A GPU gone for good is
/// forgotten with `detect-gpus accept-missing=true`, which republishes the record without it.
#[test]
fn a_lost_gpu_drains_and_changes_nothing_else() {
    let mut c = cluster();
    let published = |c: &Cluster| c.sim.unit_bag(rel(c), "slurmd/0")["node"].clone();
    let before = published(&c);
    let (conf, gres) = (c.slurm_conf(), c.gres_conf());
    let reloads = |c: &Cluster| -> Vec<String> {
        c.commands("slurmctld/0")
            .into_iter()
            .filter(|l| l.contains("restart slurmctld") || l.contains("reconfigure"))
            .collect()
    };
    c.clear_commands("slurmctld/0");
    c.set_gpus("slurmd/0", &TWO_T4[..1]);
    let reason = "gpu 1 (00000000:D8:00.0): disappeared since the last check";
    assert_eq!(c.hook(), [drain(reason)]);
    c.sim.settle().unwrap();
    c.set_sinfo(&format!("drained|slurmd-charm: {reason}"));
    assert!(c.hook().is_empty());
    c.sim.settle().unwrap();
    assert_eq!(
        published(&c),
        before,
        "the record is kept while the GPU is gone"
    );
    assert_eq!(c.slurm_conf(), conf);
    assert_eq!(c.gres_conf(), gres);
    assert_eq!(reloads(&c), Vec::<String>::new());

    // It comes back: resumed, nothing else changed.
    c.set_gpus("slurmd/0", TWO_T4);
    assert_eq!(c.hook(), [RESUME]);
    c.sim.settle().unwrap();
    assert_eq!(published(&c), before);
    assert_eq!(c.slurm_conf(), conf);
    assert_eq!(reloads(&c), Vec::<String>::new());
    c.set_sinfo("idle|none");

    // Gone for good: the operator says so, and the node is republished with one GPU.
    c.set_gpus("slurmd/0", &TWO_T4[..1]);
    assert_eq!(c.hook(), [drain(reason)]);
    c.set_sinfo(&format!("drained|slurmd-charm: {reason}"));
    let r = c
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({"accept-missing": true}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    c.sim.settle().unwrap();
    c.assert_no_errors();
    assert_ne!(published(&c), before);
    let conf = c.slurm_conf();
    assert!(
        conf.lines()
            .any(|l| l.starts_with(&format!("NodeName={NODE} "))
                && l.contains("Gres=gpu:tesla_t4:1 ")),
        "{conf}"
    );
}
