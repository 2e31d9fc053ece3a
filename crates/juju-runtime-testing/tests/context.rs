//! `Context::run(event, State) -> State`: what goes in is all the hook sees, and what comes out
//! is everything it wrote or did.

use juju_runtime::{
    ActionEvent, Bag, Event, HookContext, HookToolError, LogLevel, ModelBackend, NetworkBackend,
    Port, RelationId, SecretBackend, SecretContent, SecretId, SecretRead, SecretRef, Status,
    StatusKind, StatusScope,
};
use juju_runtime_testing::{Context, MemoryBackend, MemoryRelation, MemorySecret, State, bag};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

fn rel() -> RelationId {
    RelationId::new("db", 2)
}

fn db_state(leader: bool) -> State {
    State {
        leader,
        relations: vec![
            MemoryRelation::new("db", 2, "web")
                .remote_unit("web/0", bag([("want", "yes")]))
                .local_unit_data(bag([("old", "1")])),
        ],
        unit_status: Some(Status::new(StatusKind::Waiting, "before")),
        ..State::default()
    }
}

/// Publishes on `db:2`: the unit bag always, the application bag when leader.
fn publisher(_: &HookContext, b: &MemoryBackend) -> Result<(), HookToolError> {
    let rel = RelationId::new("db", 2);
    let unit = Bag::from([
        ("host".to_owned(), "10.0.0.1".to_owned()),
        ("old".to_owned(), String::new()),
    ]);
    b.relation_set(&rel, false, &unit)?;
    if b.is_leader()? {
        b.relation_set(&rel, true, &bag([("ready", "true")]))?;
    }
    Ok(())
}

#[test]
fn the_state_out_holds_the_hooks_writes_and_the_rest_unchanged() {
    let ctx = Context::new("db/0", publisher);
    let state_in = db_state(true);
    let out = ctx.run(Event::UpdateStatus, state_in.clone()).unwrap();
    let relation = out.relation(&rel()).unwrap();
    assert_eq!(
        relation.local_unit_data,
        bag([("host", "10.0.0.1")]),
        "set and deleted"
    );
    assert_eq!(relation.local_app_data, bag([("ready", "true")]));
    assert_eq!(relation.remote_units, state_in.relations[0].remote_units);
    // no status set: the one shown before stays
    assert_eq!(out.unit_status, state_in.unit_status);
    assert_eq!(out.calls, ["relation-set", "is-leader", "relation-set"]);
    // the input is unchanged and a second run from it gives the same state: nothing leaks
    assert_eq!(ctx.run(Event::UpdateStatus, state_in).unwrap(), out);
}

#[test]
fn a_failed_hook_returns_its_error_and_run_to_end_what_it_wrote() {
    let ctx = Context::new("db/1", |_: &HookContext, b: &MemoryBackend| {
        b.relation_set(&RelationId::new("db", 2), false, &bag([("host", "h")]))?;
        b.relation_set(&RelationId::new("db", 2), true, &bag([("ready", "true")]))
    });
    let err = ctx.run(Event::UpdateStatus, db_state(false)).unwrap_err();
    assert!(matches!(err, HookToolError::NotLeader { .. }), "{err:?}");
    let (result, out) = ctx.run_to_end(Event::UpdateStatus, db_state(false));
    assert!(result.is_err());
    let relation = out.relation(&rel()).unwrap();
    assert_eq!(
        relation.local_unit_data.get("host").map(String::as_str),
        Some("h")
    );
    assert!(relation.local_app_data.is_empty());
}

#[test]
fn the_charm_sees_the_context_unit_app_model_and_event() {
    let ctx = Context::new("my-app/7", |ctx: &HookContext, b: &MemoryBackend| {
        let text = format!(
            "{} {} {} {} {}",
            ctx.unit_name,
            ctx.app_name,
            ctx.model_name,
            ctx.charm_dir.display(),
            ctx.event.name()
        );
        b.status_set(StatusScope::Unit, &Status::new(StatusKind::Active, text))
    })
    .model_name("prod")
    .charm_dir("/var/lib/juju/charm");
    let out = ctx.run(Event::Install, State::default()).unwrap();
    assert_eq!(
        out.unit_status.unwrap().message,
        "my-app/7 my-app prod /var/lib/juju/charm install"
    );
}

#[test]
fn config_leadership_and_stored_state_go_in_and_stored_state_comes_out() {
    let ctx = Context::new("app/0", |_: &HookContext, b: &MemoryBackend| {
        let config = b.config_get()?;
        let n = config.get("n").and_then(Value::as_u64).unwrap_or(0);
        let seen = b.state_get()?.get("seen").cloned().unwrap_or_default();
        let leader = b.is_leader()?;
        let data = BTreeMap::from([("seen".to_owned(), format!("{seen}{n}{leader}"))]);
        b.state_set(&data)?;
        b.state_delete("gone")
    });
    let state = State {
        leader: true,
        config: Map::from_iter([("n".to_owned(), Value::from(4))]),
        unit_state: BTreeMap::from([
            ("seen".to_owned(), "x".to_owned()),
            ("gone".to_owned(), "y".to_owned()),
        ]),
        ..State::default()
    };
    let out = ctx.run(Event::ConfigChanged, state).unwrap();
    assert_eq!(
        out.unit_state,
        BTreeMap::from([("seen".to_owned(), "x4true".to_owned())])
    );
    assert_eq!(out.config.get("n"), Some(&Value::from(4)));
}

#[test]
fn an_action_gets_its_params_and_leaves_results_failure_and_logs() {
    let ctx = Context::new("app/0", |_: &HookContext, b: &MemoryBackend| {
        let params = b.action_get()?;
        b.action_log("working")?;
        let who = params
            .get("who")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        b.action_set(&BTreeMap::from([("out.who".to_owned(), who)]))?;
        b.action_fail("half done")
    });
    let event = Event::Action(ActionEvent {
        name: "do-it".to_owned(),
        id: "5".to_owned(),
    });
    let state = State {
        action_params: Some(Map::from_iter([("who".to_owned(), Value::from("me"))])),
        ..State::default()
    };
    let out = ctx.run(event.clone(), state).unwrap();
    assert_eq!(out.action_results["out.who"], "me");
    assert_eq!(out.action_failure.as_deref(), Some("half done"));
    assert_eq!(out.action_logs, ["working"]);
    // the same charm outside an action: the action tools refuse, as Juju's do
    let err = ctx.run(event, State::default()).unwrap_err();
    assert!(matches!(err, HookToolError::NotInAction { .. }), "{err:?}");
}

#[test]
fn logs_keep_tracing_records_up_to_the_level_then_juju_log_calls() {
    let charm = |_: &HookContext, b: &MemoryBackend| {
        tracing::info!(unit = "app/0", "one");
        tracing::debug!("two");
        tracing::warn!("three");
        b.juju_log(LogLevel::Error, "direct")
    };
    let out = Context::new("app/0", charm)
        .run(Event::Start, State::default())
        .unwrap();
    assert_eq!(
        out.logs,
        [
            (LogLevel::Info, "one unit=\"app/0\"".to_owned()),
            (LogLevel::Warning, "three".to_owned()),
            (LogLevel::Error, "direct".to_owned()),
        ]
    );
    let out = Context::new("app/0", charm)
        .log_level(tracing::Level::DEBUG)
        .run(Event::Start, State::default())
        .unwrap();
    assert_eq!(out.logs[1], (LogLevel::Debug, "two".to_owned()));
}

#[test]
fn secrets_go_in_and_come_out_with_the_hooks_reads() {
    let id = SecretId::parse("secret:d0000000000000000009").unwrap();
    let content = |v: u8| SecretContent::from([("api-key".to_owned(), vec![v; 4])]);
    let mut secret = MemorySecret::consumed(content(1));
    secret.revisions.insert(2, content(2));
    secret.latest = 2;
    secret.tracked = Some(1);
    let ctx = Context::new("app/0", |ctx: &HookContext, b: &MemoryBackend| {
        let Event::SecretChanged(s) = &ctx.event else {
            return Ok(());
        };
        let got = b.secret_get(
            &SecretRef::Id(s.id.clone()),
            &["api-key"],
            SecretRead::Refresh,
        )?;
        let text = format!("{:?}", got["api-key"]);
        b.status_set(StatusScope::Unit, &Status::new(StatusKind::Active, text))
    });
    let event = Event::SecretChanged(juju_runtime::SecretEvent {
        id: id.clone(),
        label: None,
        revision: None,
    });
    let state = State {
        secrets: BTreeMap::from([(id.clone(), secret)]),
        ..State::default()
    };
    let out = ctx.run(event, state).unwrap();
    assert_eq!(out.secret(&id).unwrap().tracked, Some(2), "refreshed");
    assert_eq!(out.unit_status.unwrap().message, "[2, 2, 2, 2]");
}

#[test]
fn ports_networks_statuses_version_and_reboot_come_out() {
    let ctx = Context::new("app/0", |_: &HookContext, b: &MemoryBackend| {
        let info = b.network_get("db", None)?;
        let port = Port::tcp(8080);
        b.close_port(Port::tcp(80))?;
        b.open_port(port)?;
        b.status_set(
            StatusScope::Application,
            &Status::new(StatusKind::Active, "app"),
        )?;
        b.application_version_set(&format!("{}", info.bind_addresses.len()))?;
        b.juju_reboot(false)
    });
    let state = State {
        leader: true,
        networks: BTreeMap::from([("db".to_owned(), juju_runtime::NetworkInfo::default())]),
        opened_ports: [Port::tcp(80)].into(),
        ..State::default()
    };
    let out = ctx.run(Event::Start, state).unwrap();
    assert_eq!(out.opened_ports, [Port::tcp(8080)].into());
    assert_eq!(out.app_status.unwrap().message, "app");
    assert_eq!(out.unit_status, None, "none before, none set");
    assert_eq!(out.workload_version.as_deref(), Some("0"));
    assert_eq!(out.reboot_requested, Some(false));
    assert!(out.networks.contains_key("db"));
}
