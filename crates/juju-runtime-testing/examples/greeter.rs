//! A whole charm tested state-in/state-out, as a charm author would: `greeter` greets the units
//! related on its `visitors` endpoint.
//!
//! - Every hook: the unit's status says the configured greeting and how many visitors there
//!   are (blocked without a greeting).
//! - The leader publishes the greeting in its application bag on every `visitors` relation.
//! - The action `greet` answers `"<greeting>, <name>!"` for its `name` parameter.
//!
//! Run it with `cargo run -p juju-runtime-testing --example greeter`: it runs four events and
//! prints what each left behind; an expectation that does not hold ends it with an error.

use juju_runtime::{
    ActionEvent, Bag, Event, HookContext, HookToolError, ModelBackend, RelationEvent, RelationId,
    Status, StatusKind, StatusScope,
};
use juju_runtime_testing::{Context, MemoryRelation, State, bag};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The charm: one function of the hook context and the backend, as `run_hook` takes it.
fn greeter<B: ModelBackend>(ctx: &HookContext, backend: &B) -> Result<(), HookToolError> {
    let config = backend.config_get()?;
    let greeting = config.get("greeting").and_then(Value::as_str).unwrap_or("");
    if let Event::Action(action) = &ctx.event {
        if action.name == "greet" {
            let params = backend.action_get()?;
            let name = params.get("name").and_then(Value::as_str).unwrap_or("you");
            let message = format!("{greeting}, {name}!");
            backend.action_set(&BTreeMap::from([("message".to_owned(), message)]))?;
        }
        return Ok(());
    }
    if greeting.is_empty() {
        let status = Status::new(StatusKind::Blocked, "set the greeting option");
        return backend.status_set(StatusScope::Unit, &status);
    }
    let mut visitors = 0;
    for rel in backend.relation_ids("visitors")? {
        visitors += backend.relation_list(&rel)?.len();
        if backend.is_leader()? {
            let data = Bag::from([("greeting".to_owned(), greeting.to_owned())]);
            backend.relation_set(&rel, true, &data)?;
        }
    }
    tracing::info!(visitors, "greeting");
    let status = Status::new(
        StatusKind::Active,
        format!("{greeting} ({visitors} visitors)"),
    );
    backend.status_set(StatusScope::Unit, &status)
}

/// An expectation of the example that did not hold.
#[derive(Debug, thiserror::Error)]
enum ExampleError {
    /// The charm failed where it should not have.
    #[error("the charm failed: {0}")]
    Charm(#[from] HookToolError),
    /// A state after an event is not the one expected.
    #[error("{0}")]
    Unexpected(String),
}

/// Fails with `what` unless `ok`.
fn expect(ok: bool, what: &str) -> Result<(), ExampleError> {
    if ok {
        Ok(())
    } else {
        Err(ExampleError::Unexpected(what.to_owned()))
    }
}

fn config(greeting: &str) -> Map<String, Value> {
    Map::from_iter([("greeting".to_owned(), Value::from(greeting))])
}

fn main() -> Result<(), ExampleError> {
    let ctx = Context::new("greeter/0", greeter);
    let rel = RelationId::new("visitors", 3);

    // 1. No greeting configured: blocked, nothing published.
    let out = ctx.run(Event::ConfigChanged, State::default())?;
    println!("config-changed without a greeting: {:?}", out.unit_status);
    expect(
        out.unit_status.as_ref().map(|s| s.kind) == Some(StatusKind::Blocked),
        "blocked without a greeting",
    )?;

    // 2. The leader with two visitors publishes the greeting and counts them.
    let visitors = MemoryRelation::new("visitors", 3, "guests")
        .remote_unit("guests/0", bag([("name", "ada")]))
        .remote_unit("guests/1", bag([("name", "bob")]));
    let state = State {
        leader: true,
        config: config("hello"),
        relations: vec![visitors],
        ..State::default()
    };
    let event = Event::RelationChanged(RelationEvent {
        relation: rel.clone(),
        remote_app: "guests".to_owned(),
        remote_unit: Some("guests/1".to_owned()),
        departing_unit: None,
    });
    let out = ctx.run(event.clone(), state.clone())?;
    let published = out.relation(&rel).map(|r| r.local_app_data.clone());
    println!(
        "visitors-relation-changed as leader: {:?}, published {published:?}",
        out.unit_status
    );
    expect(
        published == Some(bag([("greeting", "hello")])),
        "the leader publishes the greeting",
    )?;
    expect(
        out.unit_status == Some(Status::new(StatusKind::Active, "hello (2 visitors)")),
        "active, counting the visitors",
    )?;
    expect(
        out.logs
            .iter()
            .any(|(_, line)| line == "greeting visitors=2"),
        "the charm's log line is kept",
    )?;

    // 3. The same event on a non-leader: nothing published, same status.
    let out = ctx.run(
        event,
        State {
            leader: false,
            ..state
        },
    )?;
    expect(
        out.relation(&rel)
            .is_some_and(|r| r.local_app_data.is_empty()),
        "a non-leader publishes nothing",
    )?;

    // 4. The action answers with the greeting.
    let state = State {
        config: config("hello"),
        action_params: Some(Map::from_iter([("name".to_owned(), Value::from("eve"))])),
        ..State::default()
    };
    let event = Event::Action(ActionEvent {
        name: "greet".to_owned(),
        id: "1".to_owned(),
    });
    let out = ctx.run(event, state)?;
    println!("actions/greet: {:?}", out.action_results);
    expect(
        out.action_results.get("message").map(String::as_str) == Some("hello, eve!"),
        "the action greets by name",
    )?;
    println!("all expectations held");
    Ok(())
}

/// `cargo test` runs the example, so what the crate docs point to keeps working.
#[test]
fn the_examples_expectations_hold() {
    let outcome = main();
    assert!(outcome.is_ok(), "{outcome:?}");
}
