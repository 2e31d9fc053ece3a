//! Exactly one slurmctld runs, the leader's (issue 39 item 4), through the simulator: a unit that
//! loses leadership stops the slurmctld it ran in its first hook after (Juju 4 sends it none of
//! its own; Juju 3.x sends leader-settings-changed) and stands by, saying what it waits for; a
//! second unit without shared state is refused with a clear status; a new leader waits while
//! the former leader's slurmctld still answers; the shared `state-save-location` is what
//! slurm.conf names. The real daemons are in `tests/e2e_leadership.rs`.

#[path = "charm_support.rs"]
mod support;

use juju_sim::SimOptions;
use serde_json::json;
use support::*;

const SHARED: &str = "/srv/slurmctld-state";
const STORE: &str = "/var/lib/slurm-charms/slurmctld/store.bin";
const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
/// node-exporter's textfile collector directory (the COS subordinate's).
const TEXTFILE_DIR: &str = "/var/snap/node-exporter/common/textfile-collector.d";

fn running(c: &Cluster, unit: &str) -> bool {
    c.root(unit).join("running-slurmctld").exists()
}

/// Three nodes, two slurmctld units, `state-save-location` on "shared storage" (a directory at
/// the same path in both units' roots). slurmctld/0 leads.
fn two_controllers(opts: SimOptions) -> Cluster {
    let mut c = Cluster::with_options(opts);
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 3);
    c.set_gpus("slurmd/0", TWO_T4);
    c.set_gpus("slurmd/1", MIXED);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    for u in ["slurmctld/0", "slurmctld/1"] {
        std::fs::create_dir_all(c.root(u).join(SHARED.trim_start_matches('/'))).unwrap();
    }
    c.sim
        .set_config(
            "slurmctld",
            [("state-save-location".to_owned(), json!(SHARED))].into(),
        )
        .unwrap();
    c.sim.add_unit("slurmctld", 1).unwrap();
    c.assert_no_errors();
    assert!(running(&c, "slurmctld/0"));
    assert!(!running(&c, "slurmctld/1"));
    assert!(
        c.slurm_conf()
            .contains("SlurmctldHost=slurmctld-0\nSlurmctldHost=slurmctld-1\n"),
        "{}\n{:?}",
        c.slurm_conf(),
        c.status("slurmctld/0")
    );
    assert!(
        c.slurm_conf()
            .lines()
            .any(|l| l == format!("StateSaveLocation={SHARED}")),
        "{}",
        c.slurm_conf()
    );
    c
}

#[track_caller]
fn assert_standby(c: &Cluster, unit: &str) {
    assert_eq!(
        c.status(unit),
        (
            "active".to_owned(),
            format!(
                "standby: waiting for leadership (slurmctld runs on the leader only; if elected, \
                 this unit takes over the state in {SHARED})"
            )
        )
    );
}

#[test]
fn a_former_leader_stops_slurmctld_in_its_next_hook_and_stands_by() {
    let mut c = two_controllers(SimOptions::default());
    assert_standby(&c, "slurmctld/1");
    // a unit that never led never starts, stops or asks slurmctld anything
    assert!(
        !c.commands("slurmctld/1")
            .iter()
            .any(|l| l.starts_with("systemctl") || l.starts_with("scontrol")),
        "{:?}",
        c.commands("slurmctld/1")
    );
    // the leader writes the cluster's metrics for node-exporter's textfile collector
    let metrics = c
        .root("slurmctld/0")
        .join(TEXTFILE_DIR.trim_start_matches('/'));
    std::fs::create_dir_all(&metrics).unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(metrics.join("slurmctld.prom").exists());
    c.clear_commands("slurmctld/0");
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    // The new leader took over (the former host's name does not resolve in the simulator: a
    // machine that is gone) with the shared state.
    assert!(running(&c, "slurmctld/1"));
    let conf = c.file("slurmctld/1", SLURM_CONF);
    // the leader first, then the other unit (tests/e2e_leadership.rs: how a running job's
    // slurmstepd reaches the new leader)
    assert!(
        conf.contains("SlurmctldHost=slurmctld-1\nSlurmctldHost=slurmctld-0\n"),
        "{conf}"
    );
    assert!(
        conf.contains(&format!("StateSaveLocation={SHARED}\n")),
        "{conf}"
    );
    assert_eq!(
        c.status("slurmctld/1").1,
        "3 nodes, 5 GPUs, 3 new (run node-configured on the slurmd unit)"
    );
    // Juju 4 told the former leader nothing yet; its next hook stops slurmctld.
    assert!(c.commands("slurmctld/0").is_empty());
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl stop slurmctld".to_owned()),
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert!(!running(&c, "slurmctld/0"), "two primaries");
    // its metrics would be scraped frozen at the hand-over, beside the new leader's
    assert!(
        !metrics.join("slurmctld.prom").exists(),
        "a standby's stale cluster metrics"
    );
    assert!(running(&c, "slurmctld/1"));
    assert_standby(&c, "slurmctld/0");
    // What it wrote as the leader is gone: Debian's unit does not start slurmctld at the next
    // boot without slurm.conf, and a later election rebuilds from Juju.
    assert_eq!(c.file("slurmctld/0", SLURM_CONF), "");
    assert!(
        !c.root("slurmctld/0")
            .join(STORE.trim_start_matches('/'))
            .exists()
    );
    // Its later hooks run nothing for slurmctld.
    c.clear_commands("slurmctld/0");
    c.sim.update_status(Some("slurmctld")).unwrap();
    assert!(
        c.commands("slurmctld/0").is_empty(),
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert_standby(&c, "slurmctld/0");

    // Elected again, slurmctld/0 starts slurmctld on fresh files; slurmctld/1 stops its own.
    c.clear_commands("slurmctld/0");
    c.sim.set_leader("slurmctld/0").unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl restart slurmctld".to_owned()),
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert!(running(&c, "slurmctld/0"));
    assert!(!running(&c, "slurmctld/1"), "two primaries");
    assert_standby(&c, "slurmctld/1");
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert!(
            c.file(u, "/etc/default/slurmd")
                .contains("--conf-server slurmctld-0:6817"),
            "{u}"
        );
    }
}

#[test]
fn with_juju_3_leader_settings_changed_the_former_leader_stops_at_once() {
    let mut c = two_controllers(SimOptions {
        leader_settings_changed: true,
        ..SimOptions::default()
    });
    c.clear_commands("slurmctld/0");
    let before = c.sim.records().len();
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    let hooks: Vec<String> = c.sim.records()[before..]
        .iter()
        .map(|r| format!("{} {}", r.unit, r.hook))
        .collect();
    assert!(
        !running(&c, "slurmctld/0"),
        "two primaries: {hooks:?} {:?}",
        c.commands("slurmctld/0")
    );
    assert!(running(&c, "slurmctld/1"));
    assert_standby(&c, "slurmctld/0");
}

#[test]
fn a_second_unit_without_shared_state_is_refused() {
    let mut c = three_nodes();
    c.sim.add_unit("slurmctld", 1).unwrap();
    c.assert_no_errors();
    assert_eq!(
        c.status("slurmctld/1"),
        (
            "blocked".to_owned(),
            "standby cannot take over: slurmctld's state is on the leader's disk \
             (/var/lib/slurm/slurmctld), so a leader change would lose every job; set \
             state-save-location to shared storage mounted on every slurmctld unit, or remove \
             this unit"
                .to_owned()
        )
    );
    assert!(!running(&c, "slurmctld/1"));
    assert!(
        c.slurm_conf()
            .contains("StateSaveLocation=/var/lib/slurm/slurmctld\n")
    );
    // Without the directory mounted, the leader writes nothing and restarts nothing.
    let before = c.slurm_conf();
    c.clear_commands("slurmctld/0");
    c.sim
        .set_config(
            "slurmctld",
            [("state-save-location".to_owned(), json!("/srv/not-mounted"))].into(),
        )
        .unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), before);
    assert!(restarts(&c.commands("slurmctld/0")).is_empty());
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked");
    assert_eq!(
        msg,
        "config not written: state-save-location /srv/not-mounted is not a directory on this \
         machine: mount the shared storage there (on every slurmctld unit), writable by the \
         slurm user"
    );
    let (st, msg) = c.status("slurmctld/1");
    assert_eq!(st, "blocked");
    assert!(
        msg.starts_with("standby cannot take over: state-save-location /srv/not-mounted"),
        "{msg}"
    );
}

#[test]
fn a_new_leader_waits_while_the_former_slurmctld_answers() {
    // The former leader's host is `localhost` here, so its "slurmctld port" is one this test
    // holds open.
    let listener = std::net::TcpListener::bind("127.0.0.1:6817").unwrap_or_else(|e| {
        panic!("this test needs 127.0.0.1:6817 free (a slurmctld running on this machine?): {e}")
    });
    let mut c = two_controllers(SimOptions::default());
    std::fs::write(
        c.root("slurmctld/0").join("proc/sys/kernel/hostname"),
        "localhost",
    )
    .unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(c.slurm_conf().contains("SlurmctldHost=localhost\n"));
    // the new leader's machine has a munge key of its own (the package makes one)
    let key = c.bytes("slurmctld/0", "/etc/munge/munge.key").unwrap();
    std::fs::create_dir_all(c.root("slurmctld/1").join("etc/munge")).unwrap();
    std::fs::write(
        c.root("slurmctld/1").join("etc/munge/munge.key"),
        [7u8; 1024],
    )
    .unwrap();
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    assert_eq!(
        c.status("slurmctld/1"),
        (
            "waiting".to_owned(),
            "taking over from localhost: its slurmctld still answers at localhost:6817; this \
             unit starts slurmctld once it has stopped (the former leader stops it in its next \
             hook)"
                .to_owned()
        )
    );
    assert!(!running(&c, "slurmctld/1"));
    assert_eq!(c.file("slurmctld/1", SLURM_CONF), "");
    // The nodes keep the controller that answers them.
    assert!(
        c.file("slurmd/0", "/etc/default/slurmd")
            .contains("--conf-server localhost:6817")
    );
    // The former leader's next hook stops its slurmctld and says so in its peer bag: the new
    // leader's peer relation-changed asks again (the test's port still answers: it waits on).
    let before = c.sim.records().len();
    c.sim
        .queue_hook("slurmctld/0", juju_sim::Hook::UpdateStatus);
    c.sim.settle().unwrap();
    assert!(!running(&c, "slurmctld/0"));
    assert!(
        c.sim.records()[before..]
            .iter()
            .any(|r| r.unit == "slurmctld/1" && r.hook == "slurmctld-peers-relation-changed"),
        "the new leader was not told"
    );
    assert_eq!(c.status("slurmctld/1").0, "waiting");
    // the port closes; the new leader's next hook takes over
    drop(listener);
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(running(&c, "slurmctld/1"));
    assert!(
        c.file("slurmd/0", "/etc/default/slurmd")
            .contains("--conf-server slurmctld-1:6817")
    );
    // it took over with the cluster's key (from the secret), not its machine's own, although
    // the hook that took over was an update-status
    assert_eq!(
        c.bytes("slurmctld/1", "/etc/munge/munge.key"),
        Some(key),
        "the new leader kept its machine's munge key"
    );
}

#[test]
fn a_removed_leader_stops_slurmctld_and_the_next_one_takes_over() {
    let mut c = two_controllers(SimOptions::default());
    c.sim.remove_unit("slurmctld/0").unwrap();
    c.assert_no_errors();
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl stop slurmctld".to_owned()),
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert!(!running(&c, "slurmctld/0"));
    assert_eq!(c.sim.leader("slurmctld").as_deref(), Some("slurmctld/1"));
    assert!(running(&c, "slurmctld/1"));
    let conf = c.file("slurmctld/1", SLURM_CONF);
    assert!(conf.contains("SlurmctldHost=slurmctld-1\n"), "{conf}");
    assert!(
        !conf.contains("SlurmctldHost=slurmctld-0"),
        "the removed unit stays listed: {conf}"
    );
}
