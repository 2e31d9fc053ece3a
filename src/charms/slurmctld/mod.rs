//! The slurmctld (controller) charm.
//!
//! Leader hooks: [`observe`] (config, the relation cache updated in memory with the event's one
//! bag, the munge key and Slurm files on disk; reads only) → [`plan::plan`] (pure: munge key,
//! the files rendered holistically from every current unit's record, what slurmctld needs,
//! `cluster_info` where it changed, the status, the cache to persist) → [`apply`] (writes only,
//! fixed order) → `status-set` once → the cache persisted last, so a hook that fails anywhere
//! (a hook tool included) leaves the cache in step with what Juju committed. A relation event
//! costs a constant number of hook-tool calls (see [`cache`]). Non-leaders only report that
//! they stand by.

pub mod accepted;
pub mod actions;
pub mod apply;
pub mod cache;
pub mod decide;
pub mod desired;
pub mod observe;
pub mod owners;
pub mod plan;

use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::charms::slurmd::{install, set_version};

use juju_runtime::{Event, HookContext};
use juju_runtime::{ModelBackend, Status, StatusKind, StatusScope};

/// slurm.conf.
pub const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
/// gres.conf (beside slurm.conf; served to slurmd by configless).
pub const GRES_CONF: &str = "/etc/slurm/gres.conf";
/// cgroup.conf (served to slurmd by configless; `proctrack/cgroup` fails every job step
/// without one).
pub const CGROUP_CONF: &str = "/etc/slurm/cgroup.conf";
/// Packages the install hook installs.
pub const PACKAGES: &[&str] = &["slurmctld", "munge", "slurm-client"];

/// Runs one slurmctld hook or action.
pub fn handle<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    match &ctx.event {
        Event::Install => install(backend, host, PACKAGES, "slurmctld")?,
        Event::UpgradeCharm => set_version(backend, host, "slurmctld"),
        Event::Action(a) => return actions::run_action(&a.name, backend, host),
        Event::Stop | Event::Remove => return Ok(()),
        _ => {}
    }
    if !backend.is_leader()? {
        let st = Status::new(
            StatusKind::Active,
            "standby (the leader manages slurm.conf)",
        );
        return Ok(backend.status_set(StatusScope::Unit, &st)?);
    }
    let obs = observe::observe(ctx, backend, host)?;
    let plan = plan::plan(&obs);
    // `Some`: slurmctld refused the new files and the accepted ones were put back.
    let refused = apply::apply(backend, host, &plan)?;
    backend.status_set(StatusScope::Unit, refused.as_ref().unwrap_or(&plan.status))?;
    apply::persist(host, &plan)
}
