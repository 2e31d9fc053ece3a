//! The slurmctld (controller) charm.
//!
//! Leader hooks: [`observe`] (config, the relation cache updated in memory with the event's one
//! bag, the munge key, the key secret if one exists and Slurm files on disk, the secret the
//! event names; reads only) → [`plan::plan`] (pure: the secret changes (the key secret to create,
//! a revision to remove), munge key, the files rendered holistically from every current unit's
//! record, what slurmctld needs, `cluster_info` where it changed, the status, the cache to
//! persist) → [`apply`] (writes only, fixed order, the quick index's head first; a key secret
//! created there gets its id into `cluster_info`, see [`key_secret`]) → `status-set` once → the
//! cache persisted last, so a hook that fails anywhere (a hook tool included) leaves the cache in
//! step with what Juju committed. A relation event costs a constant number of hook-tool calls
//! (see [`cache`]). Non-leaders plan only their secret housekeeping (a refresh on
//! `secret-changed`) and report that they stand by ([`plan::standby`]).

pub mod accepted;
pub mod accepted_nodes;
pub mod actions;
pub mod apply;
pub mod cache;
pub mod decide;
pub mod desired;
pub mod first_reads;
pub mod group_plan;
pub mod grouped;
pub mod index;
pub mod key_secret;
pub mod node_groups;
pub mod observe;
pub mod owners;
pub mod plan;
pub mod refusal;
pub mod rotate_key;
pub mod status_record;
pub mod unit_name;
pub mod unit_table;

use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::charms::slurmd::{install, set_version};

use juju_runtime::{Event, HookContext, SecretBackend};
use key_secret::EventSecret;

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
#[inline(never)] // its own frame: tools/bench/callgrind.sh counts the instructions under it
pub fn handle<B: SecretBackend + Sync>(
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
    let first = first_reads::first_reads(ctx, backend)?;
    let event_secret = EventSecret::observe(&ctx.event)?;
    if !first.leader {
        return apply::standby(ctx, backend, host, &plan::standby(event_secret.as_ref()));
    }
    let obs = observe::observe(ctx, backend, host, first.prefetched)?;
    let plan = plan::plan(obs, event_secret.as_ref());
    let outcome = apply::apply(backend, host, &plan)?;
    // `Some`: slurmctld refused the new files and the accepted ones were put back.
    status_record::set_unit_status(
        ctx,
        backend,
        host,
        outcome.refused.as_ref().unwrap_or(&plan.status),
    )?;
    let mut plan = plan;
    // written: their text goes (munmapped) before the cache is serialised beside the rest
    drop(std::mem::take(&mut plan.files));
    // The log so far goes to `juju-log` while the cache is written (a file write needs no hook
    // tool; Juju runs one tool at a time, so the status set above stays first either way): at
    // 10,000 units the cache's serialisation and that round trip overlap instead of adding up.
    let persisted =
        juju_runtime::flush_log_during(backend, || apply::persist(host, &mut plan, &outcome));
    host.release(plan);
    persisted
}
