//! The slurmctld (controller) charm. A leader hook runs one path:
//!
//! [`observe`] (config, whether slurmctld runs ([`liveness`]), the store with the event
//! applied to it, and, when that changed something, the munge key, the key secret and the
//! Slurm files on disk; reads only) →
//! [`plan::plan`] (pure: admit first-come → fold into hostlists → render ([`desired`]) →
//! decide what slurmctld needs ([`decide`]); "nothing changed" is an `if` there) → [`apply`]
//! (writes only, fixed order) → `status-set` once → the store saved last ([`apply::save`]), so a
//! hook that fails anywhere leaves the store in step with what Juju committed. A relation event
//! costs a constant number of hook-tool calls (see [`store`]). Only the leader runs slurmctld:
//! a non-leader stops one it ran as a former leader and reports that it stands by; a new
//! leader waits while the former leader's slurmctld still answers; the state a new leader takes
//! over is on shared storage ([`leadership`]). When slurmctld refuses new files the last
//! accepted ones are put back and the units whose change did not reach Slurm are told
//! ([`refusal`]). Actions run apart ([`actions`]).

pub mod actions;
pub mod apply;
pub mod decide;
pub mod desired;
pub mod key_secret;
pub mod leadership;
pub mod liveness;
pub mod observe;
pub mod plan;
pub mod refusal;
pub mod status_record;
pub mod store;
pub mod store_file;

use crate::charms::common::{install, set_version};
use crate::charms::error::CharmError;
use crate::charms::host::Host;

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
pub fn handle<B: SecretBackend + Sync>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    match &ctx.event {
        Event::Install => install(backend, host, PACKAGES, "slurmctld")?,
        Event::UpgradeCharm => set_version(backend, host, "slurmctld"),
        Event::Action(a) => return actions::run_action(&a.name, backend, host),
        // a unit going away (leader or not) leaves no slurmctld behind for a new leader to wait on
        Event::Stop => return leadership::stop(host),
        Event::Remove => return Ok(()),
        _ => {}
    }
    let first = observe::first_reads(ctx, backend, host)?;
    leadership::peers_publish(ctx, backend, host)?;
    let event_secret = EventSecret::observe(&ctx.event)?;
    if !first.leader {
        let config = first.prefetched.config;
        return leadership::standby_run(ctx, backend, host, config, event_secret.as_ref());
    }
    if let Some(status) = leadership::takeover_wait(ctx, backend, host)? {
        let secrets = key_secret::housekeeping(event_secret.as_ref(), true);
        key_secret::apply_actions(backend, &secrets)?;
        status_record::set_unit_status(ctx, backend, host, &status)?;
        return Ok(());
    }
    let hostname = host.hostname()?;
    let peers = leadership::peers_observe(ctx, backend, host, &hostname)?;
    let plan_and_apply = |prefetched| -> Result<_, CharmError> {
        let mut obs = observe::observe(ctx, backend, host, prefetched, &hostname)?;
        obs.settings.controllers.others = peers.names.clone();
        let plan = plan::plan(obs, event_secret.as_ref());
        let outcome = apply::apply(backend, host, &plan)?;
        Ok((plan, outcome))
    };
    let (mut plan, mut outcome) = plan_and_apply(first.prefetched)?;
    if outcome.found_not_running {
        // the plan took slurmctld to run and it does not: once more, asking first (liveness.rs)
        tracing::info!("slurmctld is not running: observing again");
        let asked = observe::Prefetched {
            liveness: Some(liveness::Liveness::observe(host)),
            ..observe::Prefetched::default()
        };
        (plan, outcome) = plan_and_apply(asked)?;
    }
    // `Some`: a restarted slurmctld did not answer (liveness), or slurmctld refused the new
    // files and the accepted ones were put back.
    let status = match (&outcome.dead, &outcome.refused) {
        (Some(status), _) | (None, Some((status, _))) => status,
        (None, None) => &plan.status,
    };
    status_record::set_unit_status(ctx, backend, host, status)?;
    crate::charms::cos::write_cluster_metrics(ctx, host);
    apply::save(host, &mut plan, &outcome)?;
    leadership::peers_save(host, &peers)
}
