//! Scale properties CI checks (debug build, small N): a controller relation event costs a
//! constant number of hook-tool calls, whatever the number of related units (the relation
//! cache, `docs/charms.md`). `tests/charm_bench.rs` measures the same at 1,000 units.

#[path = "charm_support.rs"]
mod support;

use juju_sim::{Hook, SimOptions};
use support::{Cluster, TWO_T4, configure};

/// A settled cluster of `n` two-GPU slurmd units integrated with one controller.
fn settled(n: u32) -> Cluster {
    let mut c = Cluster::with_options(SimOptions {
        record_env: false,
        keep_logs: false,
        ..SimOptions::default()
    });
    for i in 0..n {
        c.set_gpus(&format!("slurmd/{i}"), TWO_T4);
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", n);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

/// The hook tools one controller `slurmd-relation-changed` for `slurmd/0` calls.
fn tools_per_changed(c: &mut Cluster) -> Vec<String> {
    let rel = c.sim.relation_id("slurmd", "slurmctld").unwrap();
    c.sim.clear_records();
    c.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(rel, Some("slurmd/0".into())),
    );
    c.sim.settle().unwrap();
    let records = c.sim.records();
    let r = records
        .iter()
        .find(|r| r.unit == "slurmctld/0")
        .expect("the controller ran the hook");
    assert!(r.succeeded(), "{}", r.stderr);
    r.calls.iter().map(|t| t.tool.clone()).collect()
}

#[test]
fn controller_relation_changed_calls_do_not_grow_with_units() {
    let mut small = settled(5);
    let mut large = settled(40);
    assert!(
        large
            .status("slurmctld/0")
            .1
            .starts_with("40 nodes, 80 GPUs")
    );
    let at_5 = tools_per_changed(&mut small);
    let at_40 = tools_per_changed(&mut large);
    assert_eq!(
        at_5.len(),
        at_40.len(),
        "5 units: {at_5:?}; 40 units: {at_40:?}"
    );
    assert!(at_40.len() <= 20, "{at_40:?}");
    assert_eq!(
        at_5.iter().filter(|t| *t == "relation-get").count(),
        1,
        "{at_5:?}"
    );
}

/// slurmctld restarts and reconfigures (in the controller's command log) while `n` slurmd
/// units join with one `add-unit -n n`, and the controller's statuses on the way.
fn reloads_while_enlisting(n: u32) -> Enlisted {
    let mut c = settled(1);
    for i in 1..=n {
        c.set_gpus(&format!("slurmd/{i}"), TWO_T4);
    }
    c.clear_commands("slurmctld/0");
    c.sim.clear_records();
    c.sim.add_unit("slurmd", n).unwrap();
    c.assert_no_errors();
    let max_calls = c
        .sim
        .records()
        .iter()
        .filter(|r| r.unit == "slurmctld/0")
        .map(|r| r.calls.len())
        .max()
        .unwrap_or(0);
    let cmds = c.commands("slurmctld/0");
    let restarts = cmds
        .iter()
        .filter(|l| l.contains("systemctl restart slurmctld"))
        .count();
    let reconfigures = cmds.iter().filter(|l| l.contains("reconfigure")).count();
    let statuses = c
        .sim
        .unit_status_history("slurmctld/0")
        .into_iter()
        .map(|s| s.message)
        .collect();
    let total = n + 1;
    assert!(
        c.status("slurmctld/0")
            .1
            .starts_with(&format!("{total} nodes")),
        "{:?}",
        c.status("slurmctld/0")
    );
    Enlisted {
        restarts,
        reconfigures,
        statuses,
        max_calls,
    }
}

/// What [`reloads_while_enlisting`] saw.
struct Enlisted {
    restarts: usize,
    reconfigures: usize,
    statuses: Vec<String>,
    /// The most hook-tool calls any one controller hook made.
    max_calls: usize,
}

#[test]
fn one_restart_per_enlistment_batch_whatever_its_size() {
    let small = reloads_while_enlisting(10);
    let large = reloads_while_enlisting(40);
    let counts = |e: &Enlisted| (e.restarts, e.reconfigures, e.max_calls);
    eprintln!(
        "add-unit -n 10: {:?}; -n 40: {:?} (restarts, reconfigures, most tool calls in one controller hook)",
        counts(&small),
        counts(&large)
    );
    assert_eq!(counts(&small), counts(&large), "10 units vs 40 units");
    assert!(
        large.restarts + large.reconfigures <= 2,
        "{:?}",
        counts(&large)
    );
    for (n, e) in [(10, &small), (40, &large)] {
        assert!(
            e.statuses
                .iter()
                .any(|m| m.starts_with(&format!("enlisting 2 of {} nodes", n + 1))),
            "{:?}",
            e.statuses
        );
    }
}

/// Bench, not CI: the same for larger batches. `ENLIST_N=100,1000 cargo test --release --test
/// charm_scale -- --ignored --nocapture enlistment_batch_bench`.
#[test]
#[ignore]
fn enlistment_batch_bench() {
    let sizes = std::env::var("ENLIST_N").unwrap_or_else(|_| "100".into());
    for n in sizes
        .split(',')
        .map(|v| v.trim().parse::<u32>().expect("ENLIST_N: numbers"))
    {
        let started = std::time::Instant::now();
        let e = reloads_while_enlisting(n);
        println!(
            "add-unit -n {n}: {} slurmctld restarts, {} scontrol reconfigure, at most {} hook-tool calls in one controller hook, {:.1} s",
            e.restarts,
            e.reconfigures,
            e.max_calls,
            started.elapsed().as_secs_f64()
        );
        assert!(e.restarts + e.reconfigures <= 2);
    }
}

#[test]
fn a_unit_that_never_joins_holds_the_batch_back_only_until_update_status() {
    let mut c = settled(1);
    for i in 1..=4 {
        c.set_gpus(&format!("slurmd/{i}"), TWO_T4);
    }
    // slurmd/4 cannot publish its record: its hook fails and it stays in error
    c.sim.fail_next_tool_call("slurmd/4", "relation-set");
    c.clear_commands("slurmctld/0");
    c.sim.add_unit("slurmd", 4).unwrap();
    assert!(c.sim.is_error("slurmd/4"));
    let (kind, msg) = c.status("slurmctld/0");
    assert_eq!(kind, "waiting", "{msg}");
    assert!(msg.starts_with("enlisting 4 of 5 nodes"), "{msg}");
    assert!(
        super_restarts(&c).is_empty(),
        "{:?}",
        c.commands("slurmctld/0")
    );
    // the files are written already; only the reload waits
    assert!(
        c.slurm_conf().contains("NodeName=slurmd-[0-3] "),
        "{}",
        c.slurm_conf()
    );
    c.sim.update_status(Some("slurmctld")).unwrap();
    assert_eq!(
        super_restarts(&c),
        ["systemctl restart slurmctld"],
        "{:?}",
        c.commands("slurmctld/0")
    );
    assert!(
        c.status("slurmctld/0").1.starts_with("4 nodes"),
        "{:?}",
        c.status("slurmctld/0")
    );
}

fn super_restarts(c: &Cluster) -> Vec<String> {
    c.commands("slurmctld/0")
        .into_iter()
        .filter(|l| l.contains("systemctl restart slurmctld"))
        .collect()
}

/// Tools and commands of one update-status on `unit`.
fn update_status_cost(c: &mut Cluster, unit: &str) -> (Vec<String>, Vec<String>) {
    c.sim.clear_records();
    c.clear_commands(unit);
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    let r = c
        .sim
        .records()
        .iter()
        .find(|r| r.unit == unit)
        .expect("update-status ran")
        .clone();
    (
        r.calls.iter().map(|t| t.tool.clone()).collect(),
        c.commands(unit),
    )
}

#[test]
fn slurmd_update_status_with_unchanged_facts_is_two_tool_calls_and_no_controller_check() {
    let mut c = settled(2);
    // configured nodes: their slurmd runs (a new node's waits for node-configured)
    configure(&mut c, &["slurmd/0", "slurmd/1"]);
    // the first update-status after the hooks of the enlistment may run in full (slurmd was
    // started after the last check); from then on it is steady
    update_status_cost(&mut c, "slurmd/1");
    let (tools, cmds) = update_status_cost(&mut c, "slurmd/1");
    assert!(tools.len() <= 2, "{tools:?}");
    assert!(!cmds.iter().any(|l| l.contains("ping")), "{cmds:?}");
    assert_eq!(c.status("slurmd/1").0, "active");

    // a GPU more: the hook runs in full, publishes it, and checks the controller again
    c.set_gpus(
        "slurmd/1",
        &[
            ("Tesla T4", 0, "00000000:3B:00.0"),
            ("Tesla T4", 1, "00000000:D8:00.0"),
            ("Tesla T4", 2, "00000000:AF:00.0"),
        ],
    );
    let (tools, cmds) = update_status_cost(&mut c, "slurmd/1");
    assert!(tools.contains(&"relation-set".to_string()), "{tools:?}");
    assert!(cmds.iter().any(|l| l.contains("scontrol ping")), "{cmds:?}");
    // that hook restarted slurmd for its new GRES: the next one checks the controller again
    let (_, cmds) = update_status_cost(&mut c, "slurmd/1");
    assert!(cmds.iter().any(|l| l.contains("scontrol ping")), "{cmds:?}");
    let (tools, _) = update_status_cost(&mut c, "slurmd/1");
    assert!(tools.len() <= 2, "steady again: {tools:?}");

    // a failed check is not trusted: every update-status checks until it answers
    std::fs::write(c.root("slurmd/1").join("fail-scontrol"), "").unwrap();
    c.sim.queue_hook("slurmd/1", Hook::ConfigChanged);
    c.sim.settle().unwrap();
    for _ in 0..2 {
        let (_, cmds) = update_status_cost(&mut c, "slurmd/1");
        assert!(cmds.iter().any(|l| l.contains("scontrol ping")), "{cmds:?}");
    }
    std::fs::remove_file(c.root("slurmd/1").join("fail-scontrol")).unwrap();
    update_status_cost(&mut c, "slurmd/1");
    let (tools, cmds) = update_status_cost(&mut c, "slurmd/1");
    assert!(
        tools.len() <= 2 && !cmds.iter().any(|l| l.contains("ping")),
        "{tools:?} {cmds:?}"
    );
}

/// The steady check reads slurmd's state and both main PIDs from one `systemctl show`: slurmd
/// stopped, or munged restarted, behind the charm's back runs the next update-status in full.
#[test]
fn a_daemon_stopped_or_restarted_behind_the_charm_runs_update_status_in_full() {
    let mut c = settled(1);
    configure(&mut c, &["slurmd/0"]);
    let steady = |c: &mut Cluster| {
        update_status_cost(c, "slurmd/0");
        let (tools, cmds) = update_status_cost(c, "slurmd/0");
        assert!(tools.len() <= 2, "steady: {tools:?}");
        assert!(!cmds.iter().any(|l| l.contains("ping")), "{cmds:?}");
        assert!(
            cmds.iter()
                .any(|l| l == "systemctl show --property=ActiveState,MainPID slurmd munge"),
            "one systemctl show: {cmds:?}"
        );
        assert!(!cmds.iter().any(|l| l.contains("is-active")), "{cmds:?}");
    };
    steady(&mut c);
    // slurmd died: the hook runs in full and starts it again
    std::fs::remove_file(c.root("slurmd/0").join("running-slurmd")).unwrap();
    let (_, cmds) = update_status_cost(&mut c, "slurmd/0");
    assert!(
        cmds.iter()
            .any(|l| l == "systemctl restart --no-block slurmd"),
        "{cmds:?}"
    );
    steady(&mut c);
    // munged restarted by someone else: a new main PID, so the controller is checked again
    std::fs::write(c.root("slurmd/0").join("running-munge"), "999999").unwrap();
    let (_, cmds) = update_status_cost(&mut c, "slurmd/0");
    assert!(cmds.iter().any(|l| l.contains("scontrol ping")), "{cmds:?}");
    steady(&mut c);
}

/// `detect-gpus` reports the hardware, so that is all its steady check compares: a slurmd
/// stopped behind the charm's back leaves the action read-only (`slurmd -C` and NVML; no
/// `systemctl`, no controller port, no restart), and the next update-status, which checks the
/// daemons, finds it and starts it again.
#[test]
fn detect_gpus_checks_the_hardware_not_the_daemons() {
    let mut c = settled(1);
    configure(&mut c, &["slurmd/0"]);
    update_status_cost(&mut c, "slurmd/0");
    let (tools, _) = update_status_cost(&mut c, "slurmd/0");
    assert!(tools.len() <= 2, "steady: {tools:?}");
    let (steady, _) = detect_gpus(&mut c, "slurmd/0");
    std::fs::remove_file(c.root("slurmd/0").join("running-slurmd")).unwrap();
    c.clear_commands("slurmd/0");
    let (results, tools) = detect_gpus(&mut c, "slurmd/0");
    assert_eq!(tools, ["action-get", "action-set"], "read-only");
    assert_eq!(c.commands("slurmd/0"), ["slurmd -C"]);
    assert_eq!(results, steady);
    assert!(!c.root("slurmd/0").join("running-slurmd").exists());
    let (_, cmds) = update_status_cost(&mut c, "slurmd/0");
    assert!(
        cmds.iter()
            .any(|l| l == "systemctl restart --no-block slurmd"),
        "{cmds:?}"
    );
}

/// What the health-check program recorded is part of `detect-gpus`'s answer on a steady host
/// too (`xids`, as in full), and `clear-xids=true` changes what the program remembers, so it
/// runs in full and clears: XIDs that hold no drain (an application's fault) leave the host
/// steady, and the operator's clear must not be answered read-only and forgotten.
#[test]
fn detect_gpus_on_a_steady_host_reports_and_clears_the_recorded_xids() {
    let mut c = settled(1);
    configure(&mut c, &["slurmd/0"]);
    let state = c
        .root("slurmd/0")
        .join("var/lib/slurm/slurmd-charm/health-state.json");
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::write(
        &state,
        serde_json::to_vec(&serde_json::json!({
            "kmsg_seq": 42,
            "recent": [{"seq": 41, "pci_bus_id": "00000000:3B:00.0", "xid": 13,
                        "class": "application", "meaning": "graphics engine exception"}],
            "counts": {"13": 1},
            "verdict": "healthy"
        }))
        .unwrap(),
    )
    .unwrap();
    update_status_cost(&mut c, "slurmd/0");
    let (tools, _) = update_status_cost(&mut c, "slurmd/0");
    assert!(
        tools.len() <= 2,
        "an application's XID leaves the host steady: {tools:?}"
    );
    let (steady, tools) = detect_gpus(&mut c, "slurmd/0");
    assert_eq!(tools, ["action-get", "action-set"], "read-only");
    assert_eq!(steady["xids"]["count"]["13"], "1", "{steady}");
    // the same action in full says the same
    std::fs::remove_file(
        c.root("slurmd/0")
            .join("var/lib/slurm-charms/slurmd/steady.json"),
    )
    .unwrap();
    assert_eq!(detect_gpus(&mut c, "slurmd/0").0, steady);
    // clear-xids=true: in full, and the program is told to forget what it read so far
    update_status_cost(&mut c, "slurmd/0");
    update_status_cost(&mut c, "slurmd/0");
    c.sim.clear_records();
    let r = c
        .sim
        .run_action(
            "slurmd/0",
            "detect-gpus",
            serde_json::json!({"clear-xids": true}),
        )
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    let settings: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            c.root("slurmd/0")
                .join("var/lib/slurm/slurmd-charm/health-check.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(settings["xids_cleared_through"], 42, "{settings}");
}

#[test]
fn a_controller_event_whose_data_equals_the_cache_builds_renders_and_reads_nothing() {
    let mut c = settled(3);
    let tools = tools_per_changed(&mut c);
    assert!(!tools.contains(&"goal-state".to_string()), "{tools:?}");
    let status = c.status("slurmctld/0");
    assert!(status.1.starts_with("3 nodes, 6 GPUs"), "{status:?}");
    // the files are not read (nor rewritten): one removed behind the charm's back stays removed
    let conf = c.root("slurmctld/0").join("etc/slurm/slurm.conf");
    std::fs::remove_file(&conf).unwrap();
    c.clear_commands("slurmctld/0");
    tools_per_changed(&mut c);
    assert!(!conf.exists());
    assert_eq!(c.status("slurmctld/0"), status, "the cached status again");
    // the one command, once: a leader hook that reconfigures nothing asks whether slurmctld
    // runs (src/charms/slurmctld/liveness.rs)
    assert_eq!(
        c.commands("slurmctld/0"),
        ["systemctl is-active slurmctld"],
        "{:?}",
        c.commands("slurmctld/0")
    );
    // a changed record renders again (and writes the whole file): a card removed for good (a
    // lost GPU keeps the published record until the operator forgets it, issue 39 item 2)
    c.set_gpus("slurmd/0", &TWO_T4[..1]);
    c.clear_commands("slurmctld/0");
    c.sim
        .run_action(
            "slurmd/0",
            "detect-gpus",
            serde_json::json!({"accept-missing": true}),
        )
        .unwrap();
    c.assert_no_errors();
    assert!(
        c.slurm_conf().contains("Gres=gpu:tesla_t4:1"),
        "{}",
        c.slurm_conf()
    );
    assert!(c.status("slurmctld/0").1.starts_with("3 nodes, 5 GPUs"));
    // a restart (a node's GRES changed, Slurm 22.05): systemd is asked first, once
    let cmds = c.commands("slurmctld/0");
    assert_eq!(
        cmds.iter()
            .filter(|l| *l == "systemctl is-active slurmctld")
            .count(),
        1,
        "{cmds:?}"
    );
    assert_eq!(cmds[0], "systemctl is-active slurmctld", "{cmds:?}");
}

/// `detect-gpus` on `unit`: (its results, the hook tools it called).
fn detect_gpus(c: &mut Cluster, unit: &str) -> (serde_json::Value, Vec<String>) {
    c.sim.clear_records();
    let r = c
        .sim
        .run_action(unit, "detect-gpus", serde_json::json!({}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    let rec = c
        .sim
        .records()
        .iter()
        .find(|h| h.unit == unit)
        .expect("the action ran")
        .clone();
    (
        r.results,
        rec.calls.iter().map(|t| t.tool.clone()).collect(),
    )
}

#[test]
fn detect_gpus_on_an_unchanged_host_answers_with_two_tool_calls_and_the_same_results() {
    let mut c = settled(2);
    // with no steady record (a full hook just ran with an action) the action runs in full
    update_status_cost(&mut c, "slurmd/1");
    update_status_cost(&mut c, "slurmd/1");
    let (steady, tools) = detect_gpus(&mut c, "slurmd/1");
    // the sharing the last full hook ran with is in the steady record: no `config-get`
    assert_eq!(tools, ["action-get", "action-set"], "steady detect-gpus");
    // a record of an older charm has no sharing: the action asks for the config, and says
    // the same
    let record = c
        .root("slurmd/1")
        .join("var/lib/slurm-charms/slurmd/steady.json");
    let mut old: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert!(old.remove("gpu_sharing").is_some(), "{old:?}");
    std::fs::write(&record, serde_json::to_vec(&old).unwrap()).unwrap();
    let (older, tools) = detect_gpus(&mut c, "slurmd/1");
    assert_eq!(tools, ["action-get", "config-get", "action-set"]);
    assert_eq!(older, steady);
    // the same action in full (the steady record removed): the very same results
    std::fs::remove_file(
        c.root("slurmd/1")
            .join("var/lib/slurm-charms/slurmd/steady.json"),
    )
    .unwrap();
    let (full, tools) = detect_gpus(&mut c, "slurmd/1");
    assert!(tools.len() > 2, "{tools:?}");
    // the parameters and the config read beside the host check are not asked again
    for read in ["action-get", "config-get"] {
        assert_eq!(tools.iter().filter(|t| *t == read).count(), 1, "{tools:?}");
    }
    assert_eq!(steady, full);
    assert_eq!(steady["health"]["status"], "healthy", "{steady}");
    // shared GPUs: the steady answer reads the option and shows the shared records too
    c.sim
        .set_config(
            "slurmd",
            [("gpu-sharing".to_string(), serde_json::json!("shard:4"))].into(),
        )
        .unwrap();
    c.sim.settle().unwrap();
    update_status_cost(&mut c, "slurmd/1");
    update_status_cost(&mut c, "slurmd/1");
    let (steady, tools) = detect_gpus(&mut c, "slurmd/1");
    assert_eq!(tools, ["action-get", "action-set"], "{tools:?}");
    assert_eq!(
        steady["gpu-sharing"], "shard:4 (shard:4 per GPU)",
        "{steady}"
    );
    std::fs::remove_file(
        c.root("slurmd/1")
            .join("var/lib/slurm-charms/slurmd/steady.json"),
    )
    .unwrap();
    assert_eq!(steady, detect_gpus(&mut c, "slurmd/1").0);
    // a GPU more: the host changed, so the action runs in full and reports it
    update_status_cost(&mut c, "slurmd/1");
    update_status_cost(&mut c, "slurmd/1");
    c.set_gpus(
        "slurmd/1",
        &[
            ("Tesla T4", 0, "00000000:3B:00.0"),
            ("Tesla T4", 1, "00000000:D8:00.0"),
            ("Tesla T4", 2, "00000000:AF:00.0"),
        ],
    );
    let (changed, tools) = detect_gpus(&mut c, "slurmd/1");
    assert!(tools.len() > 2, "{tools:?}");
    assert_ne!(changed, full, "the third GPU is reported");
}
