//! [`Context`]: runs one event of a charm against a [`State`] and returns the [`State`] after
//! it, the state-in/state-out test of ops' Scenario (`Context(MyCharm).run(event, state)`).
//!
//! A charm here is a function of the hook context and the backend, the same function a charm
//! binary hands to [`juju_runtime::run_hook`]; the context runs it on a fresh
//! [`MemoryBackend`] seeded from the state, so every run starts from exactly the state given
//! and nothing leaks from one run into the next.

use crate::memory::MemoryBackend;
use crate::state::State;
use juju_runtime::{DEFAULT_MAX_LEVEL, Event, HookContext, JujuLogSubscriber};
use std::path::PathBuf;
use tracing::Level;

/// A charm under test, and the unit it runs as: what stays the same across the events of a
/// test. Build it once, then [`Context::run`] each event.
#[derive(Debug, Clone)]
pub struct Context<F> {
    charm: F,
    unit: String,
    model_name: String,
    charm_dir: PathBuf,
    log_level: Level,
}

impl<F> Context<F> {
    /// The charm `charm` running as unit `unit` (`app/N`; the application is the part before
    /// `/`), in model `test-model`, with charm directory `/nonexistent` and `tracing` records
    /// kept up to the level the runtime forwards ([`DEFAULT_MAX_LEVEL`]).
    pub fn new(unit: &str, charm: F) -> Self {
        Context {
            charm,
            unit: unit.to_owned(),
            model_name: "test-model".to_owned(),
            charm_dir: PathBuf::from("/nonexistent"),
            log_level: DEFAULT_MAX_LEVEL,
        }
    }

    /// Sets the model name the hook sees (`JUJU_MODEL_NAME`), for a charm that uses it.
    pub fn model_name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.model_name);
        self
    }

    /// Sets the charm directory the hook sees (`JUJU_CHARM_DIR`), for a charm that reads its
    /// own files (metadata, templates) from there.
    pub fn charm_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.charm_dir = dir.into();
        self
    }

    /// Sets the most verbose `tracing` level kept in [`State::logs`] (e.g. [`Level::DEBUG`] to
    /// see what the runtime would not forward to `juju-log`).
    pub fn log_level(mut self, level: Level) -> Self {
        self.log_level = level;
        self
    }

    /// The hook context the charm gets for `event`: this context's unit, its application,
    /// model and charm directory.
    pub fn hook_context(&self, event: Event) -> HookContext {
        let app_name = self
            .unit
            .split_once('/')
            .map_or(self.unit.as_str(), |(app, _)| app);
        HookContext {
            unit_name: self.unit.clone(),
            app_name: app_name.to_owned(),
            model_name: self.model_name.clone(),
            charm_dir: self.charm_dir.clone(),
            event,
        }
    }

    /// Runs `event` against `state` and returns the state after it, or the charm's error.
    ///
    /// A failed hook's writes are lost in Juju; use [`Context::run_to_end`] to see what it
    /// wrote before it failed. A panic in the charm is not caught: the test fails with it.
    pub fn run<E>(&self, event: Event, state: State) -> Result<State, E>
    where
        F: Fn(&HookContext, &MemoryBackend) -> Result<(), E>,
    {
        let (result, out) = self.run_to_end(event, state);
        result.map(|()| out)
    }

    /// [`Context::run`] for a hook that may fail: the charm's outcome, and the state it left
    /// either way (unlike Juju, which discards a failed hook's writes, so a test can see how
    /// far the hook got).
    pub fn run_to_end<E>(&self, event: Event, state: State) -> (Result<(), E>, State)
    where
        F: Fn(&HookContext, &MemoryBackend) -> Result<(), E>,
    {
        let backend = seed(&self.unit, &state);
        let ctx = self.hook_context(event);
        let (subscriber, log) = JujuLogSubscriber::new(self.log_level);
        let result = tracing::subscriber::with_default(subscriber, || (self.charm)(&ctx, &backend));
        let mut logs = log.take();
        logs.extend(backend.logs());
        let out = State {
            relations: state
                .relations
                .iter()
                .filter_map(|r| backend.relation_view(&r.id))
                .collect(),
            unit_state: backend.state(),
            secrets: backend.secrets(),
            opened_ports: backend.ports(),
            unit_status: backend.unit_status().or(state.unit_status),
            app_status: backend.app_status().or(state.app_status),
            workload_version: backend.workload_version().or(state.workload_version),
            action_results: backend.action_results(),
            action_failure: backend.action_failure(),
            action_logs: backend.action_logs(),
            logs,
            reboot_requested: backend.reboot_requested(),
            calls: backend.calls(),
            leader: state.leader,
            config: state.config,
            networks: state.networks,
            action_params: state.action_params,
        };
        (result, out)
    }
}

/// A fresh backend for `unit` holding what `state` says the hook can see.
fn seed(unit: &str, state: &State) -> MemoryBackend {
    let mut backend = MemoryBackend::new(unit)
        .leader(state.leader)
        .config(state.config.clone());
    for relation in &state.relations {
        backend = backend.relation(relation.clone());
    }
    for (id, secret) in &state.secrets {
        backend = backend.secret(id, secret.clone());
    }
    for (key, value) in &state.unit_state {
        backend = backend.state_value(key, value);
    }
    for (binding, info) in &state.networks {
        backend = backend.network(binding, info.clone());
    }
    for port in &state.opened_ports {
        backend = backend.opened_port(*port);
    }
    if let Some(params) = &state.action_params {
        backend = backend.action(params.clone());
    }
    backend
}
