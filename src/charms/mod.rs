//! The two charms, each `observe -> plan -> apply -> status -> persist` (`docs/charms.md`):
//!
//! - [`slurmd`]: compute node; detects GPUs and node facts, publishes the `node` record, runs
//!   slurmd configless against the controller.
//! - [`slurmctld`]: controller; renders slurm.conf and gres.conf from every related unit's data,
//!   restarts or reconfigures slurmctld only when the files change.
//!
//! [`run`] is the entry point `main.rs` calls: it picks the charm from the `name:` in
//! `$JUJU_CHARM_DIR/metadata.yaml` and runs one hook against the real host
//! (`SLURM_CHARMS_ROOT`, commands on `PATH`). [`run_with`] is the same with an explicit charm
//! kind and host, for tests.

pub mod action_failure;
pub mod common;
pub mod cos;
pub mod error;
pub mod host;
pub mod plan;
pub mod slurmctld;
pub mod slurmd;
mod util;

pub use error::{CharmError, MetadataError};
pub use host::{Cmd, CmdOutput, Host, HostError, Owner, Runner, SystemRunner};

use juju_runtime::HookContext;
use juju_runtime::SecretBackend;

/// Which charm this binary is serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharmKind {
    /// The compute-node charm (`name: slurmd`).
    Slurmd,
    /// The controller charm (`name: slurmctld`).
    Slurmctld,
}

impl CharmKind {
    /// Maps a metadata `name:` to a charm.
    pub fn from_name(name: &str) -> Result<Self, CharmError> {
        match name {
            "slurmd" => Ok(Self::Slurmd),
            "slurmctld" => Ok(Self::Slurmctld),
            other => Err(CharmError::UnknownCharm(other.to_string())),
        }
    }

    /// Reads `name:` from `<charm_dir>/metadata.yaml`.
    pub fn from_charm_dir(charm_dir: &std::path::Path) -> Result<Self, CharmError> {
        let path = charm_dir.join("metadata.yaml");
        let name = read_charm_name(&path).map_err(|source| CharmError::Metadata {
            path: path.clone(),
            source,
        })?;
        Self::from_name(&name)
    }
}

fn read_charm_name(path: &std::path::Path) -> Result<String, MetadataError> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        name: Option<String>,
    }
    let text = std::fs::read_to_string(path)?;
    let meta: Metadata = serde_yaml::from_str(&text)?;
    meta.name.ok_or(MetadataError::NoName)
}

/// Runs one hook of whichever charm `ctx.charm_dir` holds, on the real host.
pub fn run<B: SecretBackend + juju_runtime::NetworkBackend + Sync>(
    ctx: &HookContext,
    backend: &B,
) -> Result<(), CharmError> {
    let kind = CharmKind::from_charm_dir(&ctx.charm_dir)?;
    let runner = SystemRunner;
    let host = Host::new(Host::root_from_env(), &runner);
    run_with(kind, ctx, backend, &host)
}

/// Runs one hook of `kind` against `host`.
pub fn run_with<B: SecretBackend + juju_runtime::NetworkBackend + Sync>(
    kind: CharmKind,
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    // A `cos-agent-relation-*` hook sets the cos-agent data and nothing else.
    if cos::own_event(&ctx.event).is_some() {
        cos::publish(kind, ctx, backend, host)?;
        return Ok(());
    }
    match kind {
        CharmKind::Slurmd => slurmd::handle(ctx, backend, host)?,
        CharmKind::Slurmctld => slurmctld::handle(ctx, backend, host)?,
    }
    // upgrade-charm: the new charm's rules and dashboards; any hook: changed scrape jobs.
    cos::publish(kind, ctx, backend, host)?;
    Ok(())
}
