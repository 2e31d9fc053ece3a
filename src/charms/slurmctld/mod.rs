//! The slurmctld (controller) charm.
//!
//! Leader hooks: observe (config, the relation cache updated with the event's one bag) →
//! munge key and `cluster_info` → desired (both files rendered holistically from every current
//! unit's record) → apply (atomic writes; restart, reconfigure or nothing; resume nodes that
//! left DownNodes) → save the cache → `status-set` once. A relation event costs a constant
//! number of hook-tool calls (see [`cache`]). Non-leaders only report that they stand by.

pub mod actions;
pub mod apply;
pub mod cache;
pub mod decide;
pub mod desired;
pub mod observe;

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
    let mut obs = observe::observe(ctx, backend, host)?;
    let key = apply::ensure_munge_key(host, &obs)?;
    apply::publish_cluster_info(backend, &mut obs, key)?;
    let plan = desired::plan(&obs.settings, &obs.cache);
    let st = apply::plan_status(&obs, &plan);
    apply::apply_files(host, &mut obs, plan)?;
    apply::save_cache(host, &obs)?;
    Ok(backend.status_set(StatusScope::Unit, &st)?)
}
