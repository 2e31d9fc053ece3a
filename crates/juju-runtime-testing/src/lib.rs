/*!
Test support for [`juju_runtime`], kept out of the runtime crate so a charm binary holds no
test code (as `ops` ships its test harness as `ops[testing]`). Use it as a dev-dependency only.

# State in, state out

A charm test reads like ops' Scenario: build the [`State`] before the event, [`Context::run`]
the event, assert on the [`State`] after it. The charm is the function a charm binary hands to
[`juju_runtime::run_hook`]; [`Context`] runs it on an in-memory backend seeded from the state
and reads everything back (relation bags, stored state, secrets, ports, status, action results,
logs, the hook tools it called). Nothing but the state goes in, so a test says all it depends
on.

```
use juju_runtime::{
    Event, HookContext, HookToolError, ModelBackend, Status, StatusKind, StatusScope,
};
use juju_runtime_testing::{Context, State};

/// The charm: active with the configured greeting, blocked without one.
fn charm<B: ModelBackend>(_ctx: &HookContext, backend: &B) -> Result<(), HookToolError> {
    let config = backend.config_get()?;
    let status = match config.get("greeting").and_then(|v| v.as_str()) {
        Some(greeting) if !greeting.is_empty() => Status::new(StatusKind::Active, greeting),
        _ => Status::new(StatusKind::Blocked, "set the greeting option"),
    };
    backend.status_set(StatusScope::Unit, &status)
}

let ctx = Context::new("hello/0", charm);
let state_in = State {
    config: serde_json::json!({"greeting": "hi"}).as_object().cloned().unwrap_or_default(),
    ..State::default()
};
let state_out = ctx.run(Event::ConfigChanged, state_in)?;
assert_eq!(state_out.unit_status, Some(Status::new(StatusKind::Active, "hi")));
assert_eq!(state_out.calls, ["config-get", "status-set"]);
# Ok::<(), HookToolError>(())
```

A longer example, with a relation, leadership and an action, is `examples/greeter.rs`
(`cargo run -p juju-runtime-testing --example greeter`).

# The backend underneath

[`MemoryBackend`] is the in-memory [`juju_runtime::ModelBackend`] (and
[`juju_runtime::NetworkBackend`], [`juju_runtime::SecretBackend`]) [`Context`] runs charms on.
It enforces the same rules Juju's hook tools do and fails with the same
[`juju_runtime::HookToolError`] variants; [`MemoryRelation`] and [`bag`] set up relations the
way a test reads. Use it directly for tests of code below a whole hook:

```
use juju_runtime::{ModelBackend, RelationId, Status, StatusKind, StatusScope};
use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};

let backend = MemoryBackend::new("db/0")
    .leader(true)
    .relation(MemoryRelation::new("clients", 1, "web").remote_unit("web/0", bag([("k", "v")])));
let rel = RelationId::new("clients", 1);
assert_eq!(backend.relation_list(&rel).unwrap(), ["web/0"]);
backend.status_set(StatusScope::Unit, &Status::new(StatusKind::Active, "ready")).unwrap();
assert_eq!(backend.unit_status().unwrap().kind, StatusKind::Active);
```
*/
#![deny(missing_docs)]

pub use crate::{
    context::Context,
    memory::MemoryBackend,
    memory_relation::{MemoryRelation, bag},
    memory_secrets::MemorySecret,
    state::State,
};

mod context;
mod memory;
mod memory_relation;
mod memory_secrets;
mod state;
