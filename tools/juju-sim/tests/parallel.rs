//! Parallel hook execution on different units (SimOptions::parallelism) and run_hook_command.

mod common;
use common::Probe;
use juju_sim::{Hook, SimOptions, Simulator};
use std::path::PathBuf;
use std::time::Instant;

fn parallel_probe(n: usize) -> Probe {
    Probe {
        dir: tempfile::tempdir().unwrap(),
        sim: Simulator::with_options(SimOptions {
            jujuc: Some(PathBuf::from(env!("CARGO_BIN_EXE_jujuc"))),
            parallelism: n,
            ..SimOptions::default()
        })
        .unwrap(),
    }
}

fn per_unit(hooks: &[String], unit: &str) -> Vec<String> {
    hooks
        .iter()
        .filter(|h| h.starts_with(&format!("{unit} ")))
        .cloned()
        .collect()
}

#[test]
fn hooks_of_different_units_overlap_but_each_unit_stays_serial() {
    let mut p = parallel_probe(4);
    // Each install waits until all four units are in their install at once (a barrier), which
    // only hooks that run side by side can pass; one that waits 30 s alone fails, whatever the
    // machine's load (a wall-time bound on sleeping installs could not tell load from serial).
    p.script(
        "install",
        "mkdir -p \"$OUT/in-install\"\n\
         : >\"$OUT/in-install/$(echo \"$JUJU_UNIT_NAME\" | tr / -)\"\n\
         i=0\n\
         while [ \"$(ls \"$OUT/in-install\" | wc -l)\" -lt 4 ]; do\n\
           i=$((i + 1))\n\
           if [ $i -gt 300 ]; then echo \"$JUJU_UNIT_NAME: alone in install for 30 s\" >&2; exit 1; fi\n\
           sleep 0.1\n\
         done\n",
    );
    let start = Instant::now();
    p.sim.deploy(p.spec("a", 4)).unwrap();
    let took = start.elapsed();
    for u in ["a/0", "a/1", "a/2", "a/3"] {
        assert!(
            !p.sim.is_error(u),
            "{u}: the installs did not run side by side ({took:?}): {:?}",
            p.sim
                .records()
                .iter()
                .filter(|r| !r.succeeded())
                .map(|r| format!("{} {}: {}", r.unit, r.hook, r.stderr))
                .collect::<Vec<_>>()
        );
    }
    let hooks = p.hooks();
    for u in ["a/0", "a/1", "a/2", "a/3"] {
        let mine = per_unit(&hooks, u);
        assert_eq!(mine[0], format!("{u} install"));
        assert_eq!(mine[1], format!("{u} cluster-relation-created"));
        assert!(mine.contains(&format!("{u} start")));
    }
}

#[test]
fn parallel_and_serial_reach_the_same_model() {
    let run = |n: usize| {
        let mut p = parallel_probe(n);
        p.script(
            "backend-relation-joined",
            "relation-set seen=$JUJU_REMOTE_UNIT\n",
        );
        p.script(
            "db-relation-changed",
            "state-set count=$(relation-list --format=json | tr ',' '\\n' | grep -c / || true)\n",
        );
        let rel = p.pair(5);
        let bags: Vec<_> = (0..5)
            .map(|i| p.sim.unit_bag(rel, &format!("b/{i}")))
            .collect();
        (bags, p.sim.unit_state("a/0"))
    };
    assert_eq!(run(1), run(4));
}

#[test]
fn run_hook_command_uses_the_hook_context() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    let rec = p
        .sim
        .run_hook_command(
            "b/0",
            Hook::RelationChanged(rel, Some("a/0".into())),
            &[
                "/bin/sh",
                "-c",
                "relation-set via=command && relation-get - a/0 --format=json",
            ],
        )
        .unwrap();
    assert_eq!(rec.code, Some(0));
    assert!(rec.stdout.contains("private-address"), "{}", rec.stdout);
    assert_eq!(rec.env_var("JUJU_REMOTE_UNIT"), Some("a/0"));
    assert_eq!(p.sim.unit_bag(rel, "b/0")["via"], "command");
    // The commit told the other side.
    assert!(
        p.hooks()
            .contains(&"a/0 db-relation-changed b/0".to_owned())
    );
}

#[test]
fn bench_hook_reports_times_and_tool_calls() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.script("update-status", "status-set active ok\n");
    let hook = p.sim.hook_named("a/0", "update-status", None).unwrap();
    let r = p.sim.bench_hook("a/0", hook, 5).unwrap();
    assert_eq!(r.runs, 5);
    assert_eq!(r.tool_calls_median, 1);
    assert_eq!(r.tool_calls["status-set"], 5);
    assert!(r.min <= r.median && r.median <= r.max);
    assert!(
        r.to_string()
            .contains("1 hook-tool processes per run (status-set x1)"),
        "{r}"
    );
}

#[test]
fn hook_named_resolves_relation_hooks() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    assert_eq!(
        p.sim
            .hook_named("a/0", "db-relation-changed", Some("b/0"))
            .unwrap(),
        Hook::RelationChanged(rel, Some("b/0".into()))
    );
    assert_eq!(
        p.sim
            .hook_named("a/0", "db-relation-changed", Some("b"))
            .unwrap(),
        Hook::RelationChanged(rel, None)
    );
    assert!(
        p.sim
            .hook_named("a/0", "nope-relation-changed", None)
            .is_err()
    );
    assert!(p.sim.hook_named("a/0", "bogus", None).is_err());
}

#[test]
fn leader_settings_changed_is_opt_in_for_non_leaders() {
    let mut p = Probe {
        dir: tempfile::tempdir().unwrap(),
        sim: Simulator::with_options(SimOptions {
            jujuc: Some(PathBuf::from(env!("CARGO_BIN_EXE_jujuc"))),
            leader_settings_changed: true,
            ..SimOptions::default()
        })
        .unwrap(),
    };
    p.sim.deploy(p.spec("a", 2)).unwrap();
    let hooks = p.hooks();
    assert!(hooks.contains(&"a/1 leader-settings-changed".to_owned()));
    assert!(!hooks.contains(&"a/0 leader-settings-changed".to_owned()));
    let mut q = Probe::new();
    q.sim.deploy(q.spec("a", 2)).unwrap();
    assert!(
        !q.hooks()
            .iter()
            .any(|h| h.contains("leader-settings-changed"))
    );
}

#[test]
fn a_leadership_move_tells_the_new_minions_when_juju_sends_leader_settings_changed() {
    let mut p = Probe {
        dir: tempfile::tempdir().unwrap(),
        sim: Simulator::with_options(SimOptions {
            jujuc: Some(PathBuf::from(env!("CARGO_BIN_EXE_jujuc"))),
            leader_settings_changed: true,
            ..SimOptions::default()
        })
        .unwrap(),
    };
    p.script(
        "leader-settings-changed",
        "run lsc-$(echo $JUJU_UNIT_NAME | tr / -) is-leader --format=json\n",
    );
    p.sim.deploy(p.spec("a", 3)).unwrap();
    p.clear();
    p.sim.set_leader("a/1").unwrap();
    let mut hooks = p.hooks();
    hooks.sort();
    assert_eq!(
        hooks,
        [
            "a/0 leader-settings-changed",
            "a/1 leader-elected",
            "a/2 leader-settings-changed",
        ]
    );
    // the former leader learns it is not the leader any more
    assert_eq!(p.result("lsc-a-0").0, "false\n");
    // Juju 4: only the new leader hears of it
    let mut q = Probe::new();
    q.sim.deploy(q.spec("a", 3)).unwrap();
    q.clear();
    q.sim.set_leader("a/1").unwrap();
    assert_eq!(q.hooks(), ["a/1 leader-elected"]);
}
