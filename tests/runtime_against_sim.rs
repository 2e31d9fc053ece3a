//! The runtime against the simulator's real hook tools (`jujuc` over the agent socket): the
//! hook process is this test binary itself. Its `dispatch` re-executes the binary with
//! `--exact probe_hook`, which parses the environment with `HookContext::from_env`, talks to the
//! tools found on `PATH` through `HookTools::new()` (exactly as production does), checks what
//! the tools answer, and exits through `runner::run_hook`. Any failed check panics inside the
//! hook, which exits 1 and leaves the unit in error; the outer tests assert that every hook
//! succeeded and inspect the simulator's model (status, bags, state, logs, action results, and
//! the argv of every tool call).

use juju_runtime::{
    BagOwner, Event, HookContext, HookToolError, HookTools, JujuLogSubscriber, ModelBackend,
    NetworkBackend, Port, RelationEvent, RelationId, Status, StatusKind, StatusScope,
    flatten_action_results as flatten, run_hook,
};
use juju_runtime_testing::bag;
use juju_sim::{DeploySpec, HookRecord, Simulator};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const MARKER: &str = "RUNTIME_SIM_PROBE";

// ---------------------------------------------------------------- inside the hook

/// As a hook under the simulator (the marker variable is set per unit by the outer tests) this
/// is the probe charm. Under a plain `cargo test`, outside any hook, it checks that the context
/// parser refuses to run without Juju's environment.
#[test]
fn probe_hook() {
    if std::env::var_os(MARKER).is_none() {
        let err = HookContext::from_env().expect_err("no hook environment under cargo test");
        assert!(
            err.to_string().contains("JUJU_DISPATCH_PATH is not set"),
            "{err}"
        );
        return;
    }
    let (subscriber, log) = JujuLogSubscriber::new(tracing::Level::INFO);
    let _ = tracing::subscriber::set_global_default(subscriber);
    let backend = HookTools::new();
    let ctx = match HookContext::from_env() {
        Ok(ctx) => ctx,
        Err(e) => panic!("the simulator's environment does not parse: {e}"),
    };
    let code = run_hook(&ctx, &backend, &log, handle);
    std::process::exit(i32::from(code));
}

fn status(kind: StatusKind, message: &str) -> Status {
    Status {
        kind,
        message: message.to_owned(),
    }
}

fn handle(ctx: &HookContext, b: &HookTools) -> Result<(), HookToolError> {
    match &ctx.event {
        Event::Install => install(ctx, b),
        Event::LeaderElected => {
            assert!(b.is_leader()?);
            b.status_set(StatusScope::Application, &status(StatusKind::Active, "led"))
        }
        Event::Start => b.status_set(StatusScope::Unit, &status(StatusKind::Active, "ready")),
        Event::UpdateStatus => b.status_set(
            StatusScope::Unit,
            &status(StatusKind::Active, "still ready"),
        ),
        Event::RelationJoined(rel) | Event::RelationChanged(rel) => relation_changed(ctx, b, rel),
        Event::RelationDeparted(rel) => {
            let departing = rel.departing_unit.clone().unwrap_or_default();
            let members = b.relation_list(&rel.relation)?;
            assert!(
                !members.contains(&departing),
                "{departing} still listed: {members:?}"
            );
            if departing != ctx.unit_name {
                // Data of a departed unit stays readable.
                let data = b.relation_get(&rel.relation, &BagOwner::Unit(departing.clone()))?;
                assert_eq!(
                    data.get("hello").map(String::as_str),
                    Some(departing.as_str())
                );
            }
            Ok(())
        }
        Event::RelationBroken(rel) => {
            let ids = b.relation_ids(&rel.relation.endpoint)?;
            assert!(
                !ids.contains(&rel.relation),
                "broken relation listed: {ids:?}"
            );
            Ok(())
        }
        Event::Action(action) => run_action(b, &action.name),
        _ => Ok(()),
    }
}

fn install(ctx: &HookContext, b: &HookTools) -> Result<(), HookToolError> {
    let config = b.config_get()?;
    assert_eq!(config.get("name"), Some(&json!("probe")));
    assert_eq!(config.get("count"), Some(&json!(3)));
    b.status_set(
        StatusScope::Unit,
        &status(StatusKind::Maintenance, "installing"),
    )?;
    b.application_version_set("1.2.3")?;
    b.state_set(&[("installed".to_owned(), ctx.unit_name.clone())].into())?;
    b.state_set(&[("scratch".to_owned(), "x".to_owned())].into())?;
    b.state_delete("scratch")?;
    b.state_delete("never-set")?;
    let state = b.state_get()?;
    assert_eq!(
        state.get("installed"),
        Some(&ctx.unit_name),
        "pending state visible"
    );
    assert!(!state.contains_key("scratch"));
    assert!(matches!(
        b.action_get(),
        Err(HookToolError::NotInAction { .. })
    ));
    let missing = RelationId::new("db", 999);
    assert!(matches!(
        b.relation_list(&missing),
        Err(HookToolError::RelationNotFound { .. })
    ));
    b.open_port(Port::tcp(6817))?;
    assert!(
        b.opened_ports()?.contains(&Port::tcp(6817)),
        "pending port visible"
    );
    let net = b.network_get("db", None)?;
    assert!(!net.ingress_addresses.is_empty(), "{net:?}");
    tracing::info!(unit = %ctx.unit_name, "installed");
    tracing::warn!("a warning");
    tracing::info!("second info line");
    Ok(())
}

fn relation_changed(
    ctx: &HookContext,
    b: &HookTools,
    rel: &RelationEvent,
) -> Result<(), HookToolError> {
    let id = &rel.relation;
    assert!(b.relation_ids(&id.endpoint)?.contains(id));
    assert_eq!(b.relation_remote_app(id)?, rel.remote_app);
    if let Some(remote) = &rel.remote_unit {
        assert!(b.relation_list(id)?.contains(remote));
        let data = b.relation_get(id, &BagOwner::Unit(remote.clone()))?;
        assert!(data.contains_key("private-address"), "{data:?}");
    } else {
        let app = b.relation_get(id, &BagOwner::App(rel.remote_app.clone()))?;
        assert_eq!(
            app.get("leader-data").map(String::as_str),
            Some(format!("from-{}", rel.remote_app).as_str())
        );
    }
    let goal = b.goal_state()?;
    assert!(goal.units.contains_key(&ctx.unit_name), "{goal:?}");
    assert!(goal.planned_units() >= 1, "{goal:?}");
    if let Some(remote) = &rel.remote_unit {
        let expected = goal.expected_remote_units(&id.endpoint);
        // goal-state lists non-peer relations only
        let peer = rel.remote_app == ctx.app_name;
        assert_eq!(expected.contains(&remote.as_str()), !peer, "{goal:?}");
    }
    b.relation_set(id, false, &bag([("hello", ctx.unit_name.as_str())]))?;
    let own = b.relation_get(id, &BagOwner::Unit(ctx.unit_name.clone()))?;
    assert_eq!(
        own.get("hello"),
        Some(&ctx.unit_name),
        "pending unit write visible"
    );
    let own_app = BagOwner::App(ctx.app_name.clone());
    let leader_value = format!("from-{}", ctx.app_name);
    if b.is_leader()? {
        b.relation_set(id, true, &bag([("leader-data", leader_value.as_str())]))?;
        let app = b.relation_get(id, &own_app)?;
        assert_eq!(app.get("leader-data"), Some(&leader_value));
    } else {
        let err = b
            .relation_set(id, true, &bag([("x", "y")]))
            .expect_err("non-leader app write must fail");
        assert!(matches!(err, HookToolError::NotLeader { .. }), "{err}");
        let err = b
            .relation_get(id, &own_app)
            .expect_err("non-leader own app read must fail");
        assert!(
            matches!(err, HookToolError::PermissionDenied { .. }),
            "{err}"
        );
        let err = b
            .status_set(StatusScope::Application, &status(StatusKind::Active, ""))
            .expect_err("non-leader app status must fail");
        assert!(matches!(err, HookToolError::NotLeader { .. }), "{err}");
    }
    Ok(())
}

fn run_action(b: &HookTools, name: &str) -> Result<(), HookToolError> {
    let params = b.action_get()?;
    assert_eq!(name, "report");
    assert_eq!(
        params.get("depth"),
        Some(&json!(2)),
        "default filled: {params:?}"
    );
    let nested = json!({"gpus": {"count": 2, "model": "H100 80GB = fast"}, "ok": true});
    let flat = flatten(nested.as_object().expect("object")).map_err(|e| {
        HookToolError::InvalidArgument {
            tool: "action-set".into(),
            reason: e.to_string(),
        }
    })?;
    b.action_set(&flat)?;
    b.action_log("probing")?;
    if params.get("fail") == Some(&json!(true)) {
        b.action_fail("asked to fail")?;
    }
    Ok(())
}

// ---------------------------------------------------------------- outside: the tests

struct Setup {
    sim: Simulator,
    _charm: tempfile::TempDir,
    charm_dir: std::path::PathBuf,
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A charm dir whose dispatch re-runs this test binary as the hook.
fn setup() -> Setup {
    let charm = tempfile::tempdir().unwrap();
    let dir = charm.path().to_owned();
    write(
        &dir,
        "metadata.yaml",
        "name: rtprobe\nsummary: runtime probe\ndescription: runtime probe\n\
         provides:\n  db:\n    interface: rtprobe\nrequires:\n  backend:\n    interface: rtprobe\n",
    );
    write(
        &dir,
        "config.yaml",
        "options:\n  name:\n    type: string\n    default: probe\n    description: a string\n  \
         count:\n    type: int\n    default: 3\n    description: an int\n",
    );
    write(
        &dir,
        "actions.yaml",
        "report:\n  description: report\n  params:\n    depth:\n      type: integer\n      default: 2\n    \
         fail:\n      type: boolean\n      default: false\n",
    );
    let exe = std::env::current_exe().unwrap();
    write(
        &dir,
        "dispatch",
        &format!(
            "#!/bin/sh\nexec '{}' --exact probe_hook --nocapture --test-threads=1 -q\n",
            exe.display()
        ),
    );
    std::fs::set_permissions(dir.join("dispatch"), std::fs::Permissions::from_mode(0o755)).unwrap();
    Setup {
        sim: Simulator::new().unwrap(),
        charm_dir: dir,
        _charm: charm,
    }
}

fn spec(s: &Setup, app: &str, units: u32) -> DeploySpec {
    DeploySpec::new(app, &s.charm_dir)
        .units(units)
        .env(MARKER, "1")
}

fn assert_all_succeeded(sim: &Simulator) {
    let failed: Vec<&HookRecord> = sim.records().iter().filter(|r| !r.succeeded()).collect();
    assert!(
        failed.is_empty(),
        "hooks failed:\n{}",
        failed
            .iter()
            .map(|r| format!("{} {} ({:?}):\n{}", r.unit, r.hook, r.code, r.stderr))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn tool_argv(record: &HookRecord) -> Vec<String> {
    record
        .calls
        .iter()
        .map(|c| format!("{} {}", c.tool, c.args.join(" ")))
        .collect()
}

#[test]
fn lifecycle_relations_and_permissions_under_the_simulator() {
    let mut s = setup();
    s.sim.deploy(spec(&s, "ctl", 1)).unwrap();
    s.sim.deploy(spec(&s, "node", 2)).unwrap();
    s.sim.integrate("ctl:db", "node:backend").unwrap();
    s.sim.settle().unwrap();
    assert_all_succeeded(&s.sim);

    let status = s.sim.unit_status("ctl/0").unwrap();
    assert_eq!(
        (status.status.as_str(), status.message.as_str()),
        ("active", "ready")
    );
    assert_eq!(s.sim.app_status("ctl").unwrap().message, "led");
    assert_eq!(s.sim.workload_version("ctl/0"), "1.2.3");
    assert_eq!(
        s.sim
            .unit_state("node/1")
            .get("installed")
            .map(String::as_str),
        Some("node/1")
    );
    assert!(s.sim.opened_ports("ctl/0").contains(&"6817/tcp".to_owned()));

    let rel = s.sim.relation_id("ctl", "node").unwrap();
    assert_eq!(
        s.sim
            .unit_bag(rel, "node/1")
            .get("hello")
            .map(String::as_str),
        Some("node/1")
    );
    assert_eq!(
        s.sim
            .app_bag(rel, "ctl")
            .get("leader-data")
            .map(String::as_str),
        Some("from-ctl")
    );

    // The interesting branches ran: an app-bag relation-changed, and a refused non-leader write.
    assert!(
        s.sim
            .records()
            .iter()
            .any(|r| r.hook == "backend-relation-changed" && r.remote_unit.is_empty()),
        "no app-bag relation-changed ran"
    );
    assert!(
        s.sim.records().iter().any(|r| r.unit == "node/1"
            && r.calls.iter().any(|c| c.tool == "relation-set"
                && c.args.contains(&"--app".to_owned())
                && c.code == 1)),
        "node/1 never tried (and failed) an app-bag write"
    );

    // Logs: one juju-log call per level, batched at the end of the hook.
    let install = s
        .sim
        .records()
        .iter()
        .find(|r| r.unit == "ctl/0" && r.hook == "install")
        .unwrap();
    let juju_logs: Vec<String> = tool_argv(install)
        .into_iter()
        .filter(|c| c.starts_with("juju-log"))
        .collect();
    assert_eq!(
        juju_logs,
        vec![
            "juju-log --log-level INFO -- installed unit=ctl/0\nsecond info line",
            "juju-log --log-level WARNING -- a warning"
        ]
    );
    let logged: Vec<(String, String)> = s
        .sim
        .logs()
        .into_iter()
        .filter(|l| l.unit == "ctl/0" && l.hook == "install")
        .map(|l| (l.level, l.message))
        .collect();
    assert!(
        logged.contains(&("WARNING".to_owned(), "a warning".to_owned())),
        "{logged:?}"
    );

    // goal-state was asked with the argv Juju's jujuc takes, and answered what the probe
    // checked (a failed check would have left the unit in error).
    assert!(
        s.sim
            .records()
            .iter()
            .any(|r| r.hook == "db-relation-changed"
                && tool_argv(r).contains(&"goal-state --format=json".to_owned())),
        "no goal-state call in the controller's relation-changed"
    );

    // A status-only hook costs exactly one hook-tool process.
    s.sim.clear_records();
    s.sim.update_status(Some("node")).unwrap();
    assert_all_succeeded(&s.sim);
    for record in s.sim.records() {
        assert_eq!(
            tool_argv(record),
            vec!["status-set --application=False active -- still ready"],
            "{}",
            record.unit
        );
    }

    // Departure and breaking.
    s.sim.remove_unit("node/1").unwrap();
    s.sim.remove_relation("ctl:db", "node:backend").unwrap();
    s.sim.settle().unwrap();
    assert_all_succeeded(&s.sim);
    assert!(
        s.sim
            .records()
            .iter()
            .any(|r| r.hook == "db-relation-departed"),
        "no departed hook ran"
    );
    assert!(
        s.sim
            .records()
            .iter()
            .any(|r| r.hook == "db-relation-broken")
    );
}

#[test]
fn actions_under_the_simulator() {
    let mut s = setup();
    s.sim.deploy(spec(&s, "ctl", 1)).unwrap();
    let done = s.sim.run_action("ctl/0", "report", json!({})).unwrap();
    assert_all_succeeded(&s.sim);
    assert_eq!(done.status, "completed", "{done:?}");
    assert_eq!(
        done.results,
        json!({"gpus": {"count": "2", "model": "H100 80GB = fast"}, "ok": "true"})
    );
    assert_eq!(done.logs, vec!["probing"]);

    let failed = s
        .sim
        .run_action("ctl/0", "report", json!({"fail": true}))
        .unwrap();
    assert_eq!(failed.status, "failed");
    assert_eq!(failed.message, "asked to fail");
    assert_eq!(failed.return_code, 0);
}
