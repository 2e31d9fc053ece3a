//! NVIDIA's DCGM exporter behind the slurmd option `dcgm-exporter` (issue 41), through the
//! simulator, the real charm binary and a recording `snap` stand-in (`tests/charm_support.rs`'s
//! fake: `fail-snap-<subcommand>` makes one subcommand fail): off (the default) runs no `snap`
//! command and publishes no scrape job; on installs the `dcgm` snap, starts its services and
//! publishes the exporter's job over `cos-agent`; off again undoes what the charm did; an
//! install that cannot happen (it fails, no GPU, no `snap`) is a note in the unit's status and
//! changes nothing else (the node record, slurm.conf, no job).

#[path = "charm_support.rs"]
mod support;

#[allow(clippy::duplicate_mod)]
#[path = "common/required.rs"]
mod required;

use serde_json::{Value, json};
use std::path::Path;
use support::*;

const UNIT: &str = "slurmd/0";

/// A configured slurmd node (2 x T4 when `gpus`) related to the controller and to the
/// subordinate over `cos-agent`; a `snap` stand-in when `snap`. Returns the `cos-agent`
/// relation id.
fn cluster(gpus: bool, snap: bool) -> (Cluster, u32) {
    let mut c = Cluster::new();
    if snap {
        let fakes = c.dir.path().join("fakes");
        std::os::unix::fs::symlink(fakes.join("fake-command"), fakes.join("snap")).unwrap();
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    if gpus {
        c.set_gpus(UNIT, TWO_T4);
    }
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    configure(&mut c, &[UNIT]);
    let cos = relate_cos_agent(&mut c, "slurmd");
    (c, cos)
}

fn set_option(c: &mut Cluster, on: bool) {
    c.sim
        .set_config("slurmd", [("dcgm-exporter".to_string(), json!(on))].into())
        .unwrap();
    c.sim.settle().unwrap();
    c.assert_no_errors();
}

/// The unit's published `metrics_scrape_jobs`.
fn jobs(c: &Cluster, cos: u32) -> Vec<Value> {
    let bag = c.sim.unit_bag(cos, UNIT);
    let raw = bag.get("config").expect("cos-agent config published");
    let v: Value = serde_json::from_str(raw).unwrap();
    v["metrics_scrape_jobs"].as_array().unwrap().clone()
}

fn snap_commands(c: &Cluster) -> Vec<String> {
    c.commands(UNIT)
        .into_iter()
        .filter(|l| l.starts_with("snap "))
        .collect()
}

/// What the rest of the cluster sees of this node: its published record and slurm.conf.
fn cluster_view(c: &Cluster) -> (Option<String>, String) {
    (
        c.sim.unit_bag(rel(c), UNIT).get("node").cloned(),
        c.slurm_conf(),
    )
}

fn dcgm_job() -> Value {
    json!({
        "job_name": "slurmd_0_dcgm_exporter",
        "metrics_path": "/metrics",
        "static_configs": [{"targets": ["localhost:9400"]}],
    })
}

#[test]
fn off_by_default_nothing_installed_no_scrape_job() {
    let (mut c, cos) = cluster(true, true);
    c.sim.update_status(None).unwrap();
    assert_eq!(snap_commands(&c), Vec::<String>::new());
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
    let (kind, msg) = c.status(UNIT);
    assert_eq!(kind, "active", "{msg}");
    assert!(!msg.contains("dcgm"), "{msg}");
    // turning it off when it is off does nothing either
    set_option(&mut c, false);
    assert_eq!(snap_commands(&c), Vec::<String>::new());
}

#[test]
fn on_installs_starts_and_publishes_off_undoes() {
    let (mut c, cos) = cluster(true, true);
    // the snap is not there yet
    std::fs::write(
        c.root(UNIT).join("fail-snap-list"),
        "error: no matching snaps",
    )
    .unwrap();
    let before = cluster_view(&c);
    let status_before = c.status(UNIT);
    c.clear_commands(UNIT);
    set_option(&mut c, true);
    assert_eq!(
        snap_commands(&c),
        [
            "snap list dcgm",
            "snap install dcgm",
            "snap start --enable dcgm.nv-hostengine dcgm.dcgm-exporter",
        ]
    );
    assert_eq!(jobs(&c, cos), [dcgm_job()]);
    assert_eq!(c.status(UNIT), status_before);
    assert_eq!(cluster_view(&c), before);
    // later hooks install nothing again
    c.clear_commands(UNIT);
    c.sim.update_status(None).unwrap();
    set_option(&mut c, true);
    assert_eq!(snap_commands(&c), Vec::<String>::new());
    assert_eq!(jobs(&c, cos), [dcgm_job()]);

    set_option(&mut c, false);
    assert_eq!(
        snap_commands(&c),
        ["snap stop --disable dcgm.dcgm-exporter", "snap remove dcgm"]
    );
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
    assert_eq!(c.status(UNIT), status_before);
    assert_eq!(cluster_view(&c), before);
}

#[test]
fn a_snap_the_operator_installed_is_started_and_kept() {
    let (mut c, cos) = cluster(true, true);
    // `snap list dcgm` succeeds: the snap is there already
    set_option(&mut c, true);
    assert_eq!(
        snap_commands(&c),
        [
            "snap list dcgm",
            "snap start --enable dcgm.nv-hostengine dcgm.dcgm-exporter",
        ]
    );
    assert_eq!(jobs(&c, cos), [dcgm_job()]);
    c.clear_commands(UNIT);
    set_option(&mut c, false);
    assert_eq!(
        snap_commands(&c),
        ["snap stop --disable dcgm.dcgm-exporter"]
    );
}

#[test]
fn a_failed_install_is_a_status_note_and_changes_nothing_else() {
    let (mut c, cos) = cluster(true, true);
    let root = c.root(UNIT);
    std::fs::write(root.join("fail-snap-list"), "error: no matching snaps").unwrap();
    std::fs::write(root.join("fail-snap-install"), "cannot reach the store").unwrap();
    let before = cluster_view(&c);
    let (kind_before, msg_before) = c.status(UNIT);
    set_option(&mut c, true);
    let (kind, msg) = c.status(UNIT);
    assert_eq!(kind, kind_before, "{msg}");
    assert!(
        msg.starts_with(&format!(
            "{msg_before}; dcgm-exporter: not installed: `snap install dcgm` failed"
        )),
        "{msg}"
    );
    assert!(msg.contains("cannot reach the store"), "{msg}");
    assert!(
        !snap_commands(&c)
            .iter()
            .any(|l| l.starts_with("snap start")),
        "{:?}",
        snap_commands(&c)
    );
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
    assert_eq!(cluster_view(&c), before);
    // the note stays through later hooks
    c.sim.update_status(None).unwrap();
    assert_eq!(c.status(UNIT).1, msg);
    // fixed, the next config change installs it and the note goes
    std::fs::remove_file(root.join("fail-snap-install")).unwrap();
    set_option(&mut c, false);
    set_option(&mut c, true);
    assert_eq!(c.status(UNIT), (kind_before, msg_before));
    assert_eq!(jobs(&c, cos), [dcgm_job()]);
}

#[test]
fn no_gpu_installs_nothing_and_says_so() {
    let (mut c, cos) = cluster(false, true);
    let before = cluster_view(&c);
    set_option(&mut c, true);
    assert_eq!(snap_commands(&c), Vec::<String>::new());
    let (_, msg) = c.status(UNIT);
    assert!(
        msg.ends_with("; dcgm-exporter: not installed: no NVIDIA GPU on this node"),
        "{msg}"
    );
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
    assert_eq!(cluster_view(&c), before);
}

#[test]
fn no_snap_command_says_so() {
    // The hooks' PATH ends with the system directories: where snapd is installed the real
    // `snap` would run, so this case needs a machine without it.
    let real = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .find(|d| Path::new(d).join("snap").exists());
    if let Some(d) = real {
        required::skip(
            "no_snap_command_says_so",
            &format!("a machine without snapd ({d}/snap exists)"),
            "run on a machine without snapd",
        );
        return;
    }
    let (mut c, cos) = cluster(true, false);
    let before = cluster_view(&c);
    set_option(&mut c, true);
    let (kind, msg) = c.status(UNIT);
    assert_eq!(kind, "active", "{msg}");
    assert!(
        msg.ends_with("; dcgm-exporter: not installed: no `snap` command (install snapd, or set dcgm-exporter=false)"),
        "{msg}"
    );
    assert_eq!(jobs(&c, cos), Vec::<Value>::new());
    assert_eq!(cluster_view(&c), before);
}
