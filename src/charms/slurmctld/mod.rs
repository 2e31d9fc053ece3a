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
pub mod first_reads;
pub mod grouped;
pub mod index;
pub mod observe;
pub mod owners;
pub mod plan;
pub mod refusal;
pub mod status_record;
pub mod unit_table;

use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::charms::slurmd::{install, set_version};

use crate::interface::MUNGE_KEY_SECRET_FIELD;
use juju_runtime::{Event, HookContext};
use juju_runtime::{SecretBackend, SecretId, SecretRead, SecretRef};
use juju_runtime::{Status, StatusKind};

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
        Event::Stop | Event::Remove => return Ok(()),
        _ => {}
    }
    let first = first_reads::first_reads(ctx, backend)?;
    let leader = first.leader;
    secret_housekeeping(ctx, backend, leader)?;
    if !leader {
        let st = Status::new(
            StatusKind::Active,
            "standby (the leader manages slurm.conf)",
        );
        // a former leader's quick index must not outlive its leadership
        index::invalidate(host)?;
        status_record::set_unit_status(ctx, backend, host, &st)?;
        return Ok(());
    }
    let obs = observe::observe(ctx, backend, host, first.prefetched)?;
    let key = plan::munge_key(&obs);
    let key_secret = match &obs.key_secret {
        Some(id) => id.clone(),
        None => apply::create_key_secret(backend, &key)?,
    };
    let quick = obs.quick;
    let plan = plan::plan(obs, &key, &key_secret);
    if !quick {
        // a hook that fails from here on leaves the quick path off
        index::invalidate(host)?;
    }
    // `Some`: slurmctld refused the new files and the accepted ones were put back.
    let refused = apply::apply(backend, host, &plan)?;
    status_record::set_unit_status(ctx, backend, host, refused.as_ref().unwrap_or(&plan.status))?;
    let mut plan = plan;
    // written: their text goes (munmapped) before the cache is serialised beside the rest
    drop(std::mem::take(&mut plan.files));
    let persisted = apply::persist(host, &mut plan, refused.is_some());
    host.release(plan);
    persisted
}

/// Secret hooks every slurmctld unit answers before its usual work: the leader removes a key
/// revision no unit tracks any more (`secret-remove`, after a rotation); a unit that once read
/// the key (a former leader) moves to the new revision on `secret-changed`, so it does not hold
/// the old one forever.
fn secret_housekeeping<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    leader: bool,
) -> Result<(), CharmError> {
    let id = |raw: &str| {
        SecretId::parse(raw).map_err(|e| juju_runtime::HookToolError::BadOutput {
            tool: "JUJU_SECRET_ID".to_owned(),
            output: raw.chars().take(80).collect(),
            source: e.into(),
        })
    };
    match &ctx.event {
        // Without a revision Juju would remove the whole secret: never do that here.
        Event::SecretRemove(s) if leader => {
            if let Some(revision) = s.revision {
                backend.secret_remove(&id(&s.id)?, Some(revision))?;
                tracing::info!("removed revision {revision} of {} (no unit uses it)", s.id);
            }
        }
        Event::SecretChanged(s) if !leader => {
            let read = SecretRef::Id(id(&s.id)?);
            backend.secret_get(&read, &[MUNGE_KEY_SECRET_FIELD], SecretRead::Refresh)?;
        }
        _ => {}
    }
    Ok(())
}
