//! Conformance: the commit model — deferred changes only on exit 0, immediate status/logs,
//! pending values visible within the hook, error state and resolve.

mod common;
use common::Probe;

#[test]
fn failed_hook_commits_nothing_deferred() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.script(
        "update-status",
        "rid=$(relation-ids backend)\nrelation-set -r $rid k=v\nrelation-set -r $rid --app ak=av\nstate-set s=1\nopen-port 80\nexit 1\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    assert_eq!(p.sim.unit_bag(rel, "b/0").get("k"), None);
    assert!(p.sim.app_bag(rel, "b").is_empty());
    assert!(p.sim.unit_state("b/0").is_empty());
    assert!(p.sim.opened_ports("b/0").is_empty());
}

#[test]
fn successful_hook_commits_everything() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.script(
        "update-status",
        "rid=$(relation-ids backend)\nrelation-set -r $rid k=v\nrelation-set -r $rid --app ak=av\nstate-set s=1\nopen-port 80\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    assert_eq!(p.sim.unit_bag(rel, "b/0")["k"], "v");
    assert_eq!(p.sim.app_bag(rel, "b")["ak"], "av");
    assert_eq!(p.sim.unit_state("b/0")["s"], "1");
    assert_eq!(p.sim.opened_ports("b/0"), ["80/tcp"]);
}

#[test]
fn status_logs_and_version_are_immediate_even_on_failure() {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.script(
        "update-status",
        "status-set blocked 'before failing'\njuju-log logged before failing\napplication-version-set 9\nexit 3\n",
    );
    p.sim.update_status(None).unwrap();
    let hist = p.sim.unit_status_history("a/0");
    assert!(hist.iter().any(|s| s.message == "before failing"));
    assert!(
        p.sim
            .logs()
            .iter()
            .any(|l| l.message == "logged before failing")
    );
    assert_eq!(p.sim.workload_version("a/0"), "9");
}

#[test]
fn reads_see_pending_values() {
    let mut p = Probe::new();
    p.pair(1);
    p.script(
        "update-status",
        "rid=$(relation-ids backend)\nrelation-set -r $rid k=v\nrelation-set -r $rid --app ak=av\nrun own relation-get -r $rid k $JUJU_UNIT_NAME\nrun ownapp relation-get -r $rid --app ak b\nstate-set s=1\nrun state state-get s\n",
    );
    p.sim.update_status(Some("b")).unwrap();
    assert_eq!(p.result("own").0, "v\n");
    assert_eq!(p.result("ownapp").0, "av\n");
    assert_eq!(p.result("state").0, "1\n");
}

#[test]
fn failed_hook_puts_unit_in_error_until_resolved() {
    let mut p = Probe::new();
    p.script(
        "install",
        "if [ ! -f $OUT/fixed ]; then exit 1; fi\nstate-set installed=yes\n",
    );
    p.sim.deploy(p.spec("a", 1)).unwrap();
    let s = p.sim.unit_status("a/0").unwrap();
    assert_eq!(
        (s.status.as_str(), s.message.as_str()),
        ("error", "hook failed: \"install\"")
    );
    assert!(p.sim.is_error("a/0"));
    // Later hooks wait for the unit.
    assert_eq!(p.hooks(), ["a/0 install"]);
    std::fs::write(p.dir.path().join("fixed"), "").unwrap();
    p.sim.resolve("a/0").unwrap();
    assert!(!p.sim.is_error("a/0"));
    assert_eq!(p.sim.unit_state("a/0")["installed"], "yes");
    assert_eq!(
        p.hooks(),
        [
            "a/0 install",
            "a/0 install",
            "a/0 cluster-relation-created",
            "a/0 leader-elected",
            "a/0 config-changed",
            "a/0 start"
        ]
    );
}

#[test]
fn resolve_without_retry_skips_the_hook() {
    let mut p = Probe::new();
    p.script("install", "exit 1\n");
    p.sim.deploy(p.spec("a", 1)).unwrap();
    p.sim.resolve_with("a/0", false).unwrap();
    assert_eq!(p.hooks().iter().filter(|h| *h == "a/0 install").count(), 1);
    assert!(p.hooks().contains(&"a/0 start".to_owned()));
}

#[test]
fn error_in_one_unit_does_not_block_others() {
    let mut p = Probe::new();
    p.script("install", "[ $JUJU_UNIT_NAME = a/0 ] && exit 1 || true\n");
    p.sim.deploy(p.spec("a", 2)).unwrap();
    assert!(p.sim.is_error("a/0"));
    assert!(p.hooks().contains(&"a/1 start".to_owned()));
    assert!(p.sim.queue_len() > 0);
}

#[test]
fn juju_sets_status_around_lifecycle_hooks() {
    let mut p = Probe::new();
    p.script(
        "install",
        "run st status-get --include-data --format=json\n",
    );
    p.sim.deploy(p.spec("a", 1)).unwrap();
    assert_eq!(
        p.result("st").0,
        "{\"message\":\"installing charm software\",\"status\":\"maintenance\",\"status-data\":{}}\n"
    );
    // Never set by the charm: unknown after start.
    assert_eq!(p.sim.unit_status("a/0").unwrap().status, "unknown");
}

#[test]
fn no_dispatch_means_hook_skipped_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("metadata.yaml"),
        "name: empty\nsummary: x\ndescription: x\n",
    )
    .unwrap();
    let mut sim = common::sim();
    sim.deploy(juju_sim::DeploySpec::new("e", dir.path()))
        .unwrap();
    assert!(!sim.is_error("e/0"));
    assert!(sim.records().iter().all(|r| r.code.is_none()));
}

#[test]
fn daemon_holding_the_output_pipe_does_not_hang_the_hook() {
    let mut p = Probe::new();
    p.script("install", "echo before\nsleep 30 &\necho after\n");
    let start = std::time::Instant::now();
    p.sim.deploy(p.spec("a", 1)).unwrap();
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    let rec = p
        .sim
        .records()
        .iter()
        .find(|r| r.hook == "install")
        .unwrap();
    assert!(
        rec.stderr.contains("output pipe still held open"),
        "{}",
        rec.stderr
    );
    assert!(!p.sim.is_error("a/0"));
}

#[test]
fn hook_timeout_kills_and_fails_the_hook() {
    let mut p = Probe {
        dir: tempfile::tempdir().unwrap(),
        sim: juju_sim::Simulator::with_options(juju_sim::SimOptions {
            jujuc: Some(env!("CARGO_BIN_EXE_jujuc").into()),
            hook_timeout: Some(std::time::Duration::from_millis(300)),
            ..Default::default()
        })
        .unwrap(),
    };
    p.script("install", "exec sleep 10\n");
    p.sim.deploy(p.spec("a", 1)).unwrap();
    assert!(p.sim.is_error("a/0"));
    let rec = p
        .sim
        .records()
        .iter()
        .find(|r| r.hook == "install")
        .unwrap();
    assert_eq!(rec.code, Some(-1));
    assert!(
        rec.stderr.contains("killed after the timeout"),
        "{}",
        rec.stderr
    );
}

#[test]
fn an_injected_tool_failure_happens_once_and_discards_the_hook() {
    let mut p = Probe::new();
    let rel = p.pair(1);
    p.script(
        "update-status",
        "rid=$(relation-ids backend)\nrelation-set -r $rid k=v\nstatus-set active ok || exit 1\n",
    );
    p.sim.fail_next_tool_call("b/0", "status-set");
    p.sim.update_status(Some("b")).unwrap();
    assert!(p.sim.is_error("b/0"));
    assert_eq!(p.sim.unit_bag(rel, "b/0").get("k"), None);
    // The retry runs the same hook; the failure was one-off.
    p.sim.resolve("b/0").unwrap();
    assert!(!p.sim.is_error("b/0"));
    assert_eq!(p.sim.unit_bag(rel, "b/0")["k"], "v");
}
