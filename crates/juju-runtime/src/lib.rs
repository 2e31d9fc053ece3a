/*!
A charm runtime for Juju machine charms written in Rust: what the Python `ops` library gives a
charm, for a charm that is one native binary started by Juju's `dispatch` script.

No maintained Rust charm runtime exists, so this crate is kept free of any one charm's logic
and names: a charm depends on it like on any other library, and passes in what only it knows
(its program name, its handler).

# Brief overview

- [`HookContext::from_env`] turns the environment Juju gives a hook process
  (`JUJU_DISPATCH_PATH`, `JUJU_RELATION_ID`, …) into a typed [`Event`], cross-checking every
  variable so a mis-driven hook fails loudly ([`ContextError`] names the variable). Values are
  parsed at this boundary: a relation hook carries a [`RelationId`], a secret hook a
  [`SecretId`]. [`Event`] is `#[non_exhaustive]`, so charms keep a `_` arm for hooks Juju adds.
- [`ModelBackend`] is the seam charm code talks to Juju through: relation data, config,
  leadership, status, unit state, actions, `juju-log`, `goal-state`. [`HookTools`] implements it by running
  Juju's hook tools (one process per call, data on stdin, `config-get` and `is-leader` cached
  per hook). [`NetworkBackend`] adds `network-get`, ports and `juju-reboot`;
  [`SecretBackend`] adds Juju secrets (content through `0600` files, never argv; bytes both ways).
- Every hook-tool failure is a typed [`HookToolError`] (relation gone, not the leader, not in
  an action, bad output, …), so charm code can match on what happened.
- [`install_logging`] routes `tracing` records to `juju-log`, batched: one `juju-log` process
  per level per batch, not one per line, sent by [`run_hook`] from a thread beside the hook
  while it runs (the first record starts it; the hook waits for it before it exits). The
  runtime keeps the handle it installed
  ([`installed_log_handle`]); it never asks `tracing` which subscriber is in use.
- [`run_hook`] is the error policy: it runs a handler, turns its error (or panic) into one
  report (`juju-log` ERROR plus stderr, the whole [`error_chain`]) and the exit code Juju
  understands ([`EXIT_OK`] commits the hook's relation and state changes; [`EXIT_HOOK_ERROR`]
  discards them and retries the hook).

Test support lives in the separate `juju-runtime-testing` crate, to be used as a
dev-dependency only, the way `ops` ships `ops[testing]` (Scenario): an in-memory `ModelBackend`
that enforces Juju's rules, and a state-in/state-out harness (`Context::run(event, State)`).
A charm binary built on this crate holds no test code.

# Example

A whole charm binary: set the unit's status on every event.

```no_run
use juju_runtime::{
    HookContext, HookToolError, HookTools, ModelBackend, Status, StatusKind, StatusScope,
    fail_before_hook, install_logging, program_name, run_hook,
};

fn main() -> std::process::ExitCode {
    let log = install_logging().unwrap_or_default();
    let backend = HookTools::new();
    let code = match HookContext::from_env() {
        Ok(ctx) => run_hook(&ctx, &backend, &log, |ctx, backend| -> Result<(), HookToolError> {
            tracing::info!("handling {}", ctx.event.name());
            let status = Status::new(StatusKind::Active, "ready");
            backend.status_set(StatusScope::Unit, &status)
        }),
        Err(e) => fail_before_hook(&program_name(), &backend, &log, &e.to_string()),
    };
    std::process::ExitCode::from(code)
}
```

The hook tools and environment variables this crate relies on are summarised in the
repository's `docs/juju-hook-tools.md`.
*/
#![deny(missing_docs)]

pub use crate::{
    action_results::{ActionResultError, flatten_action_results, validate_action_result_key},
    backend::{Bag, BagOwner, LogLevel, ModelBackend, RelationId, Status, StatusKind, StatusScope},
    context_error::ContextError,
    event::{ActionEvent, Event, HookContext, RelationEvent, SecretEvent, StorageEvent},
    goal_state::{Goal, GoalState, is_unit_name},
    hook_tools::HookTools,
    logging::{
        BUFFER_CAP_BYTES, DEFAULT_MAX_LEVEL, JujuLogSubscriber, LogHandle, LogInstallError,
        SendLog, group_by_level, install_logging, installed_log_handle,
    },
    network::{
        BindAddress, InterfaceAddress, NetworkBackend, NetworkInfo, Port, PortParseError, Protocol,
    },
    relation_id::RelationIdError,
    runner::{EXIT_HOOK_ERROR, EXIT_OK, error_chain, fail_before_hook, program_name, run_hook},
    secrets::{
        RotatePolicy, SecretBackend, SecretContent, SecretId, SecretIdError, SecretInfo,
        SecretOptions, SecretOwner, SecretRead, SecretRef, check_secret_content, valid_secret_key,
    },
    tool_error::HookToolError,
    tool_runner::{MAX_ARG_BYTES, MAX_ARGV_TOTAL_BYTES},
};

mod action_results;
mod backend;
mod context;
mod context_error;
mod event;
mod event_name;
mod goal_state;
mod hook_tools;
mod logging;
mod network;
mod relation_id;
mod runner;
mod secrets;
mod secrets_hook_tools;
mod tool_error;
mod tool_runner;
