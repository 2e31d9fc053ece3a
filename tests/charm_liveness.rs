//! slurmctld liveness (issue 39, item 5) and the memory defaults (item 10), in the simulator:
//! a slurmctld killed between hooks is restarted by the leader's next hook, which says so; one
//! that dies again, or does not start, blocks the leader with its log; the nodes' status says
//! when the controller's port no longer opens, steady update-status included. The controller's
//! "port" is a real TCP listener on a loopback address the fake `getent` resolves its name to.

#[path = "charm_support.rs"]
mod support;

use juju_sim::Hook;
use std::net::TcpListener;
use support::*;

/// A loopback address of its own for this test's controller (all of 127/8 is local on Linux).
fn loopback(salt: u8) -> String {
    let pid = std::process::id();
    format!(
        "127.{}.{}.{}",
        100 + (pid % 100),
        (pid / 100) % 250 + 1,
        salt
    )
}

/// Resolves `slurmctld-0` (the controller's host name in the simulator) to `addr`, as
/// `getent ahosts` prints it, on every unit.
fn resolve_controller(c: &Cluster, addr: &str) {
    let getent = c.dir.path().join("fakes/getent");
    std::fs::write(
        &getent,
        format!(
            "#!/bin/sh\n\
             echo \"getent $*\" >> \"$SLURM_CHARMS_ROOT/commands.log\"\n\
             [ \"$2\" = slurmctld-0 ] || exit 2\n\
             echo \"{addr}      STREAM slurmctld-0\"\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&getent, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The controller's port: listening while the value is held.
fn listen(addr: &str) -> TcpListener {
    TcpListener::bind(format!("{addr}:6817")).unwrap_or_else(|e| panic!("bind {addr}:6817: {e}"))
}

fn config(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, serde_json::Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect()
}

fn update_status(c: &mut Cluster, unit: &str) {
    c.sim.queue_hook(unit, Hook::UpdateStatus);
    c.sim.settle().unwrap();
    c.assert_no_errors();
}

/// Controller, one slurmd unit with two T4s, configured, its controller "listening".
fn cluster(addr: &str) -> (Cluster, TcpListener) {
    let mut c = Cluster::new();
    resolve_controller(&c, addr);
    let port = listen(addr);
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    configure(&mut c, &["slurmd/0"]);
    for _ in 0..3 {
        update_status(&mut c, "slurmd/0");
    }
    update_status(&mut c, "slurmctld/0");
    (c, port)
}

/// slurmctld dies behind the charm's back (the fake systemctl's running marker goes).
fn kill_slurmctld(c: &Cluster) {
    std::fs::remove_file(c.root("slurmctld/0").join("running-slurmctld")).unwrap();
}

fn write_log(c: &Cluster, text: &str) {
    let log = c.root("slurmctld/0").join("var/log/slurm");
    std::fs::create_dir_all(&log).unwrap();
    std::fs::write(log.join("slurmctld.log"), text).unwrap();
}

#[test]
fn a_killed_slurmctld_is_restarted_and_the_nodes_say_it_was_gone() {
    let addr = loopback(11);
    let (mut c, port) = cluster(&addr);
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!((st.as_str(), msg.as_str()), ("active", "1 node, 2 GPUs"));
    assert_eq!(
        c.status("slurmd/0").0,
        "active",
        "{:?}",
        c.status("slurmd/0")
    );

    // slurmctld is killed (OOM): its port closes
    write_log(&c, "[t] slurmctld version 22.05.8 started\n[t] Killed\n");
    kill_slurmctld(&c);
    drop(port);
    // the node's next update-status, steady until now, says so
    update_status(&mut c, "slurmd/0");
    let (st, msg) = c.status("slurmd/0");
    assert_eq!(st, "waiting", "{msg}");
    assert!(
        msg.contains("slurmctld at slurmctld-0:6817 is not answering (port closed)"),
        "{msg}"
    );

    // the leader's update-status restarts it, once, and says so; its saved state predates the
    // node's node-configured (the node is down as new again): resumed, as the charm had
    std::fs::write(
        c.root("slurmctld/0").join("sinfo.txt"),
        "slurmd-0|down*|New node.\n",
    )
    .unwrap();
    c.clear_commands("slurmctld/0");
    update_status(&mut c, "slurmctld/0");
    assert!(
        c.commands("slurmctld/0")
            .contains(&"scontrol update nodename=slurmd-0 state=resume".to_string()),
        "{:?}",
        c.commands("slurmctld/0")
    );
    std::fs::remove_file(c.root("slurmctld/0").join("sinfo.txt")).unwrap();
    let cmds = c.commands("slurmctld/0");
    let restarts: Vec<&String> = cmds
        .iter()
        .filter(|l| *l == "systemctl restart slurmctld")
        .collect();
    assert_eq!(restarts.len(), 1, "{cmds:?}");
    assert!(
        !cmds.iter().any(|l| l.contains("reconfigure")),
        "the files did not change: no reconfigure: {cmds:?}"
    );
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert_eq!(
        msg,
        "1 node, 2 GPUs; slurmctld was not running: restarted it"
    );
    assert!(c.root("slurmctld/0").join("running-slurmctld").exists());

    // it answers again: the node's status clears, and the leader's next hook is as before
    let _port = listen(&addr);
    update_status(&mut c, "slurmd/0");
    assert_eq!(
        c.status("slurmd/0").0,
        "active",
        "{:?}",
        c.status("slurmd/0")
    );
    c.clear_commands("slurmctld/0");
    update_status(&mut c, "slurmctld/0");
    assert_eq!(c.status("slurmctld/0").1, "1 node, 2 GPUs");
    assert!(
        !c.commands("slurmctld/0")
            .iter()
            .any(|l| l.contains("restart")),
        "{:?}",
        c.commands("slurmctld/0")
    );

    // a relation event that changes nothing checks too
    kill_slurmctld(&c);
    c.clear_commands("slurmctld/0");
    c.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(rel(&c), Some("slurmd/0".into())),
    );
    c.sim.settle().unwrap();
    c.assert_no_errors();
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl restart slurmctld".to_string()),
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert!(c.status("slurmctld/0").1.ends_with("restarted it"));
}

/// A node's changed record is a reconfigure, and slurmctld answering it is the proof it runs:
/// systemd is not asked. Dead, the reconfigure gets no answer, systemd says it is not running,
/// and the same hook observes again, asking first, and restarts it on the new files.
#[test]
fn a_changed_node_is_reconfigured_without_asking_systemd_and_a_dead_slurmctld_is_restarted() {
    let addr = loopback(13);
    let (mut c, _port) = cluster(&addr);
    // the node's record changes (its RealMemory, from `memory-headroom`): the controller's
    // commands, and whether slurm.conf took the new RealMemory
    let change = |c: &mut Cluster, headroom: &str| {
        let memory = |c: &Cluster| {
            let conf = c.slurm_conf();
            let line = conf
                .lines()
                .find(|l| l.starts_with("NodeName=slurmd-0"))
                .unwrap_or("")
                .to_owned();
            line.split(' ')
                .find(|w| w.starts_with("RealMemory="))
                .unwrap_or("")
                .to_owned()
        };
        let before = memory(c);
        c.clear_commands("slurmctld/0");
        c.sim
            .set_config("slurmd", config(&[("memory-headroom", headroom)]))
            .unwrap();
        c.assert_no_errors();
        (c.commands("slurmctld/0"), memory(c) != before)
    };
    let (cmds, rendered) = change(&mut c, "10%");
    assert_eq!(cmds, ["scontrol reconfigure"], "{cmds:?}");
    assert!(rendered);

    // killed; the next change finds out from the reconfigure, in the same hook
    write_log(&c, "[t] slurmctld version 22.05.8 started\n[t] Killed\n");
    kill_slurmctld(&c);
    let (cmds, rendered) = change(&mut c, "20%");
    assert_eq!(
        cmds,
        [
            "scontrol reconfigure",
            "systemctl is-active slurmctld",
            "systemctl is-active slurmctld",
            "systemctl restart slurmctld",
            "scontrol ping",
            "scontrol reconfigure",
            // its saved state may predate a new node's resume (liveness.rs)
            "sinfo --noheader --Node --format=%N|%T|%E",
        ],
        "{cmds:?}"
    );
    assert!(rendered, "restarted on the new files");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.ends_with("slurmctld was not running: restarted it"),
        "{msg}"
    );
    assert!(c.root("slurmctld/0").join("running-slurmctld").exists());
}

#[test]
fn a_slurmctld_that_dies_again_or_does_not_start_blocks_with_its_log() {
    let addr = loopback(12);
    let (mut c, _port) = cluster(&addr);
    // found dead, restarted: a warning
    kill_slurmctld(&c);
    update_status(&mut c, "slurmctld/0");
    assert_eq!(c.status("slurmctld/0").0, "active");
    // dead again at the next hook, with no hook finding it running in between: blocked with
    // the last line of its log, restarted once more
    write_log(&c, "[t] started\n[t] fatal: Unable to allocate memory\n");
    kill_slurmctld(&c);
    c.clear_commands("slurmctld/0");
    update_status(&mut c, "slurmctld/0");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.starts_with("slurmctld stopped again after the charm restarted it"),
        "{msg}"
    );
    assert!(
        msg.ends_with("[t] fatal: Unable to allocate memory"),
        "{msg}"
    );
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl restart slurmctld".to_string())
    );
    // found running: the usual status again
    update_status(&mut c, "slurmctld/0");
    assert_eq!(
        c.status("slurmctld/0"),
        ("active".to_string(), "1 node, 2 GPUs".to_string())
    );

    // it cannot start: the restart does not answer and systemd says it failed
    write_log(&c, "[t] fatal: CLUSTER NAME MISMATCH.\n");
    kill_slurmctld(&c);
    let root = c.root("slurmctld/0");
    std::fs::write(root.join("fail-scontrol-ping"), "").unwrap();
    std::fs::write(root.join("fail-systemctl-is-active"), "").unwrap();
    update_status(&mut c, "slurmctld/0");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.starts_with("slurmctld does not start"), "{msg}");
    assert!(msg.ends_with("[t] fatal: CLUSTER NAME MISMATCH."), "{msg}");
    // not a refusal of the files: nothing rolled back, none refused
    assert!(!msg.contains("refused"), "{msg}");
    // fixed: the next hook starts it and clears the status
    std::fs::remove_file(root.join("fail-scontrol-ping")).unwrap();
    std::fs::remove_file(root.join("fail-systemctl-is-active")).unwrap();
    update_status(&mut c, "slurmctld/0");
    update_status(&mut c, "slurmctld/0");
    assert_eq!(
        c.status("slurmctld/0"),
        ("active".to_string(), "1 node, 2 GPUs".to_string())
    );
}

#[test]
fn a_controller_without_nodes_is_left_stopped() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    // nodes are new until node-configured, but they are in slurm.conf: remove the unit
    c.sim.remove_unit("slurmd/0").unwrap();
    c.assert_no_errors();
    c.clear_commands("slurmctld/0");
    update_status(&mut c, "slurmctld/0");
    let cmds = c.commands("slurmctld/0");
    assert!(
        !cmds.iter().any(|l| l.contains("restart slurmctld")),
        "no nodes: slurmctld stays stopped: {cmds:?}"
    );
}

#[test]
fn jobs_get_a_share_of_the_memory_by_default() {
    let mut c = three_nodes();
    // every node: CPUs=8, RealMemory=31104, MemSpecLimit=1024 → 30080 MB for jobs; GPUs: 2 on
    // slurmd-0, 3 on slurmd-1
    let conf = c.slurm_conf();
    assert!(
        conf.contains("\nDefMemPerCPU=3760\nDefMemPerGPU=10026\n"),
        "{conf}"
    );
    // the options: a number, or off
    c.sim
        .set_config(
            "slurmctld",
            config(&[
                ("default-mem-per-gpu", "4096"),
                ("default-mem-per-cpu", "off"),
            ]),
        )
        .unwrap();
    c.assert_no_errors();
    let conf = c.slurm_conf();
    assert!(conf.contains("\nDefMemPerGPU=4096\n"), "{conf}");
    assert!(!conf.contains("DefMemPerCPU"), "{conf}");
    // the operator's own key in slurm-conf-parameters turns both off
    c.sim
        .set_config(
            "slurmctld",
            config(&[("slurm-conf-parameters", "DefMemPerNode=2048")]),
        )
        .unwrap();
    c.assert_no_errors();
    let conf = c.slurm_conf();
    assert!(conf.contains("\nDefMemPerNode=2048\n"), "{conf}");
    assert!(
        !conf.contains("DefMemPerGPU") && !conf.contains("DefMemPerCPU"),
        "{conf}"
    );
    // a bad value blocks the leader, naming the option; the files stay
    c.sim
        .set_config("slurmctld", config(&[("default-mem-per-gpu", "lots")]))
        .unwrap();
    c.assert_no_errors();
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.contains("`default-mem-per-gpu`: \"lots\""), "{msg}");
    assert_eq!(c.slurm_conf(), conf);
}
