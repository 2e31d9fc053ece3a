//! Bounded everything (issue 11 item 5): every external command runs under a time limit and a
//! command past it is killed with what it started and reported by name and limit; a hanging
//! `slurmd -C` costs a slurmd hook its limit, not its hang; a 1 MiB relation value is refused
//! for its unit alone and logged once, abbreviated, not on every hook.

#[path = "charm_support.rs"]
mod support;

use juju_sim::Hook;
use slurm_charms::charms::host::default_timeout;
use slurm_charms::charms::slurmctld::store::STORE_PATH;
use slurm_charms::charms::{Cmd, HostError, Runner, SystemRunner};
use std::time::{Duration, Instant};
use support::three_nodes;

/// Processes whose command line starts with `prefix` (arguments joined by spaces), polled until
/// none is left or `until` passes: a process group killed with SIGKILL is gone within
/// milliseconds, but a loaded machine may take longer to run the dying processes. `until` must
/// come before the command would have ended by itself, so a survivor is still seen.
fn left_after_kill(prefix: &str, until: Instant) -> Vec<String> {
    loop {
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.starts_with(prefix))
            .collect();
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_command_past_its_limit_is_killed_and_named() {
    let started = Instant::now();
    let cmd = Cmd::new("sh", ["-c", "sleep 7.31; echo late"]).with_timeout(Duration::from_secs(1));
    let e = SystemRunner.run(&cmd).unwrap_err();
    // Killed at its 1 s limit, not after its 7.31 s (the margin is for a loaded machine).
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(e, HostError::Timeout { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("sleep 7.31") && msg.contains("within 1s"),
        "{msg}"
    );
    // Its child went with it (the process group was killed): looked for until 6.5 s after the
    // start, before the 7.31 s sleep would have ended by itself.
    let left = left_after_kill("sleep 7.31", started + Duration::from_millis(6500));
    assert!(left.is_empty(), "{left:?}");
    // A command within its limit answers as before.
    let out = SystemRunner
        .run(&Cmd::new("sh", ["-c", "echo out; echo err >&2; exit 3"]))
        .unwrap();
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(3), "out\n", "err\n")
    );
}

#[test]
fn independent_commands_run_side_by_side_each_within_its_own_limit() {
    let started = Instant::now();
    let cmds = [
        Cmd::new("sh", ["-c", "sleep 2.5; echo one"]),
        Cmd::new("no-such-program-6c1f", Vec::<String>::new()),
        Cmd::new("sh", ["-c", "sleep 2.5; echo two >&2; exit 4"]),
        Cmd::new("sh", ["-c", "sleep 7.32; echo late"]).with_timeout(Duration::from_secs(3)),
    ];
    let out = SystemRunner.run_all(&cmds);
    let took = started.elapsed();
    // One after the other they take 8 s; side by side, the longest (the 3 s limit). The 2.5 s
    // sleeps leave a loaded machine 2.5 s to spawn and reap, and still tell the two apart.
    assert!(took < Duration::from_millis(5500), "{took:?}");
    assert_eq!(out.len(), 4);
    let one = out[0].as_ref().unwrap();
    assert_eq!((one.code, one.stdout.as_str()), (Some(0), "one\n"));
    let missing = out[1].as_ref().unwrap_err();
    assert!(
        matches!(missing, HostError::Spawn { .. })
            && missing.to_string().contains("no-such-program-6c1f"),
        "{missing}"
    );
    let two = out[2].as_ref().unwrap();
    assert_eq!((two.code, two.stderr.as_str()), (Some(4), "two\n"));
    let late = out[3].as_ref().unwrap_err();
    assert!(
        matches!(late, HostError::Timeout { .. }) && late.to_string().contains("sleep 7.32"),
        "{late}"
    );
    // The one past its limit went with its process group (looked for until 6.8 s after the
    // start, before its 7.32 s sleep would have ended by itself).
    let left = left_after_kill("sleep 7.32", started + Duration::from_millis(6800));
    assert!(left.is_empty(), "{left:?}");
    // Through the host, the outcomes keep the order of the commands.
    let host = slurm_charms::charms::Host::new("/", &SystemRunner);
    let [a, b] = host.run_all(&[
        Cmd::new("sh", ["-c", "sleep 0.2; echo a"]),
        Cmd::new("sh", ["-c", "echo b"]),
    ]);
    assert_eq!(
        (a.unwrap().stdout.as_str(), b.unwrap().stdout.as_str()),
        ("a\n", "b\n")
    );
}

#[test]
fn every_command_has_a_default_limit() {
    assert_eq!(
        default_timeout("systemctl", Some("restart")),
        Duration::from_secs(30)
    );
    assert_eq!(
        default_timeout("slurmd", Some("-C")),
        Duration::from_secs(10)
    );
    assert_eq!(
        default_timeout("scontrol", Some("ping")),
        Duration::from_secs(10)
    );
    assert!(default_timeout("anything-else", None) <= Duration::from_secs(60));
    assert_eq!(Cmd::new("slurmd", ["-C"]).limit(), Duration::from_secs(10));
}

#[test]
fn a_hanging_slurmd_c_costs_its_limit_and_is_named() {
    let mut c = three_nodes();
    std::fs::write(c.root("slurmd/2").join("sleep-slurmd"), "25").unwrap();
    let started = Instant::now();
    c.sim.queue_hook("slurmd/2", Hook::UpdateStatus);
    c.sim.settle().unwrap();
    let took = started.elapsed();
    // Its 10 s limit, not the 25 s hang (the rest is margin for a loaded machine).
    assert!(took < Duration::from_secs(21), "the hook took {took:?}");
    c.assert_no_errors();
    let (st, msg) = c.status("slurmd/2");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.contains("slurmd -C") && msg.contains("within 10s"),
        "{msg}"
    );
}

#[test]
fn a_controller_lookup_that_hangs_costs_its_limit_and_leaves_nothing_behind() {
    let mut c = three_nodes();
    // A resolver that does not answer: `getent` (how slurmd looks up the controller's name)
    // hangs on slurmd/0's host, and answers as the real one does elsewhere.
    let getent = c.dir.path().join("fakes/getent");
    std::fs::write(
        &getent,
        "#!/bin/sh\n\
         echo \"getent $*\" >> \"$SLURM_CHARMS_ROOT/commands.log\"\n\
         if [ -f \"$SLURM_CHARMS_ROOT/sleep-getent\" ]; then exec sleep 29.73; fi\n\
         exec /usr/bin/getent \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&getent, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(c.root("slurmd/0").join("sleep-getent"), "").unwrap();
    // No steady record: this update-status runs in full and checks the controller.
    let steady = c
        .root("slurmd/0")
        .join("var/lib/slurm-charms/slurmd/steady.json");
    let _ = std::fs::remove_file(steady);
    c.clear_commands("slurmd/0");
    let started = Instant::now();
    c.sim.queue_hook("slurmd/0", Hook::UpdateStatus);
    c.sim.settle().unwrap();
    let took = started.elapsed();
    c.assert_no_errors();
    // The lookup's 1 s limit, not the 29.73 s hang (the rest is margin for a loaded machine).
    assert!(took < Duration::from_secs(10), "the hook took {took:?}");
    // The lookup ran (the hook asked about the controller) and was killed with its process:
    // nothing of it is left, looked for until well before the hang would have ended.
    let lookups = c.commands("slurmd/0");
    assert!(
        lookups.iter().any(|l| l.starts_with("getent ahosts ")),
        "{lookups:?}"
    );
    let left = left_after_kill("sleep 29.73", started + Duration::from_secs(20));
    assert!(left.is_empty(), "left behind: {left:?}");
    let (st, msg) = c.status("slurmd/0");
    assert_ne!(st, "error", "{msg}");
}

#[test]
fn a_hanging_systemctl_restart_costs_its_limit_and_is_named() {
    let mut c = three_nodes();
    // `systemctl restart` hangs (a unit stuck in its stop or start job); the other systemctl
    // calls answer at once.
    std::fs::write(c.root("slurmctld/0").join("sleep-systemctl-restart"), "600").unwrap();
    c.clear_commands("slurmctld/0");
    let started = Instant::now();
    c.sim.add_unit("slurmd", 1).unwrap();
    let took = started.elapsed();
    eprintln!("add-unit with a hanging restart took {took:?}");
    // The hook fails (Juju: fix the cause, then `juju resolve`), naming the command and limit.
    let failed = c.failed_hooks();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(
        failed[0].starts_with("slurmctld/0 ")
            && failed[0].contains("`systemctl restart slurmctld` did not finish within 30s"),
        "{failed:#?}"
    );
    let restarts = c
        .commands("slurmctld/0")
        .iter()
        .filter(|l| l.starts_with("systemctl restart"))
        .count();
    assert!(restarts >= 1, "the new node needed a restart");
    // Each restart is killed at its 30 s limit, not after the 600 s hang (the rest is margin
    // for the other hooks of the add-unit and a loaded machine).
    assert!(
        took < Duration::from_secs(30 * restarts as u64 + 40),
        "{restarts} restarts, the add-unit took {took:?}"
    );
    assert_eq!(c.status("slurmctld/0").0, "error");
    // Once the service answers again, `juju resolve` retries the hook and the node is enlisted.
    std::fs::remove_file(c.root("slurmctld/0").join("sleep-systemctl-restart")).unwrap();
    c.sim.resolve("slurmctld/0").unwrap();
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        c.slurm_conf().contains("Nodes=slurmd-[0-3]"),
        "{}",
        c.slurm_conf()
    );
}

#[test]
fn a_one_mib_node_name_is_refused_and_logged_once_abbreviated() {
    let mut c = three_nodes();
    // A hostile application: the slurmd charm's metadata, a `dispatch` that does nothing.
    c.deploy_inert("evil", 1);
    let r = c.sim.integrate("evil", "slurmctld").unwrap();
    let huge = format!(
        r#"{{"node_parameters":{{"NodeName":"{}","CPUs":"8","RealMemory":"1000"}},"new_node":true}}"#,
        "n".repeat(1 << 20)
    );
    c.publish(r, "evil", r#"{"evil":{"State":"UP"}}"#, "evil/0", &huge);
    for _ in 0..3 {
        c.sim.update_status(Some("slurmctld")).unwrap();
    }
    c.assert_no_errors();
    let conf = c.slurm_conf();
    assert!(
        !conf.contains("nnnnnnnn") && conf.contains("slurmd-0"),
        "{}",
        conf.len()
    );
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(
        msg.contains("1 rejected (evil/0)") && msg.contains("65536"),
        "{msg}"
    );
    let logs: Vec<String> = c
        .sim
        .logs()
        .into_iter()
        .filter(|l| l.unit == "slurmctld/0" && l.message.contains("left out evil/0"))
        .map(|l| l.message)
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].len() < 1000, "{}", logs[0].len());
    let total: usize = c.sim.logs().iter().map(|l| l.message.len()).sum();
    assert!(total < 200_000, "{total} bytes of juju-log");
    let cache = c.bytes("slurmctld/0", STORE_PATH).unwrap();
    assert!(cache.len() < 64 * 1024, "{}", cache.len());
}

#[test]
fn a_slow_failing_ping_is_bounded_in_all() {
    let mut c = three_nodes();
    // Every `scontrol` takes 4 s and `scontrol ping` fails: before, the wait for a restarted
    // slurmctld was 20 pings of any length (here 20 × 4.5 s, twice with the rollback).
    std::fs::write(c.root("slurmctld/0").join("sleep-scontrol"), "4").unwrap();
    std::fs::write(
        c.root("slurmctld/0").join("fail-scontrol-ping"),
        "no answer",
    )
    .unwrap();
    c.clear_commands("slurmctld/0");
    let started = Instant::now();
    c.sim.add_unit("slurmd", 1).unwrap();
    let took = started.elapsed();
    c.assert_no_errors();
    // Two waits (the new files, then the accepted ones) of at most 20 s plus one ping each:
    // about 49 s here, unloaded. Unbounded, they were 2 x 20 pings of 4.5 s (180 s); the bound
    // sits between, so the other hooks of the add-unit and a loaded machine cannot reach it.
    assert!(took < Duration::from_secs(100), "{took:?}");
    let pings = c
        .commands("slurmctld/0")
        .iter()
        .filter(|l| *l == "scontrol ping")
        .count();
    assert!((2..=14).contains(&pings), "{pings} pings");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.contains("not answering"), "{msg}");
}
