//! A slurmctld unit that is not the leader: it never runs slurmctld. Exactly one primary runs,
//! the leader's; with two, both would schedule the same queue and write the same state.
//!
//! Juju moves leadership without a hook on the unit that lost it (Juju 4; Juju 3.x may send it
//! `leader-settings-changed`), so every hook of a non-leader checks: a unit that ran slurmctld as
//! the leader (its store, its reload marker or a slurm.conf the charm wrote is here) stops it
//! (`systemctl stop slurmctld`), then removes the slurm.conf it wrote (Debian's unit starts
//! slurmctld only where `/etc/slurm/slurm.conf` exists, so it does not come back at the next
//! boot) and its store (were it elected again, it rebuilds from Juju and restarts slurmctld on
//! fresh files), and tells the new leader through its peer bag, which then takes over at once
//! ([`super::peers::STOPPED_KEY`]). A unit that never led has none of those and runs no command.
//!
//! The status says what it waits for: leadership, with the state it would take over
//! (`state-save-location` on shared storage, [`super::state_save`]); blocked when it could not
//! take over without losing every job (the state on the leader's own disk) or when the shared
//! directory is not mounted here.

use super::key_secret::{EventSecret, SecretAction, housekeeping};
use super::state_save::{self, LEADER_FILES, StateSave, StateSaveError};
use super::{GRES_CONF, SLURM_CONF};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use crate::charms::util::{config_str, short};
use crate::slurm::render::HEADER;
use juju_runtime::{HookContext, SecretBackend, Status, StatusKind};
use serde_json::{Map, Value};

/// What a non-leader looks at (reads only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyObserved {
    /// `state-save-location`, checked on this machine.
    pub state_save: Result<StateSave, StateSaveError>,
    /// The leader-only files present here ([`LEADER_FILES`]).
    pub leader_files: Vec<&'static str>,
    /// The charm's slurm.conf and gres.conf present here (written when this unit led).
    pub charm_files: Vec<&'static str>,
}

/// What a non-leader does in a hook (the plan, pure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyPlan {
    /// The secret housekeeping the event asks for.
    pub secrets: Vec<SecretAction>,
    /// `systemctl stop slurmctld`: this unit ran it as the leader.
    pub stop_slurmctld: bool,
    /// Files to remove once slurmctld is stopped (the charm's own only).
    pub remove: Vec<&'static str>,
    /// The one status to set.
    pub status: Status,
}

/// Reads the config option and which of the leader's files are here.
pub fn observe(config: &Map<String, Value>, host: &Host<'_>) -> StandbyObserved {
    let state_save = state_save::observe(&config_str(config, state_save::OPTION), |path| {
        host.path(path).is_dir()
    });
    let leader_files = LEADER_FILES
        .into_iter()
        .filter(|p| host.exists(p))
        .collect();
    StandbyObserved {
        state_save,
        leader_files,
        charm_files: charm_files(host),
    }
}

/// slurm.conf and gres.conf where the charm wrote them (its header): an operator's file is not
/// ours to remove.
fn charm_files(host: &Host<'_>) -> Vec<&'static str> {
    [SLURM_CONF, GRES_CONF]
        .into_iter()
        .filter(|p| {
            host.read(p)
                .ok()
                .flatten()
                .is_some_and(|b| b.starts_with(HEADER.as_bytes()))
        })
        .collect()
}

/// Plans a non-leader's hook (pure).
pub fn plan(obs: StandbyObserved, event: Option<&EventSecret>) -> StandbyPlan {
    let led = !obs.leader_files.is_empty() || !obs.charm_files.is_empty();
    let mut remove = obs.charm_files;
    remove.extend(obs.leader_files);
    StandbyPlan {
        secrets: housekeeping(event, false),
        stop_slurmctld: led,
        remove,
        status: status(&obs.state_save),
    }
}

/// The standby status: what the unit waits for, or why it could not take over.
pub fn status(state_save: &Result<StateSave, StateSaveError>) -> Status {
    let (kind, message) = match state_save {
        Ok(StateSave::Shared(path)) => (
            StatusKind::Active,
            format!(
                "standby: waiting for leadership (slurmctld runs on the leader only; if elected, \
                 this unit takes over the state in {path})"
            ),
        ),
        Ok(StateSave::Local) => (
            StatusKind::Blocked,
            format!(
                "standby cannot take over: slurmctld's state is on the leader's disk ({}), so a \
                 leader change would lose every job; set state-save-location to shared storage \
                 mounted on every slurmctld unit, or remove this unit",
                state_save::local()
            ),
        ),
        Err(e) => (
            StatusKind::Blocked,
            format!("standby cannot take over: {e}"),
        ),
    };
    Status::new(kind, short(&message, 400))
}

/// Carries out a standby plan: secret housekeeping, slurmctld stopped, the leader's files
/// removed (after the stop: a failed stop fails the hook with them still there, so the retry
/// stops it again), then the status.
pub fn apply<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    plan: &StandbyPlan,
) -> Result<(), CharmError> {
    super::key_secret::apply_actions(backend, &plan.secrets)?;
    if plan.stop_slurmctld {
        tracing::info!("not the leader: stopping slurmctld (only the leader runs it)");
        host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))?;
    }
    for path in &plan.remove {
        host.remove(path)?;
    }
    if plan.stop_slurmctld {
        // the new leader may be waiting for this slurmctld to stop (super::takeover)
        super::peers::announce_stopped(backend)?;
    }
    super::status_record::set_unit_status(ctx, backend, host, &plan.status)?;
    Ok(())
}

/// The `stop` hook (the unit is being removed): slurmctld stopped and the leader's files
/// removed when this unit ran it, as a standby does; no status (the unit is going away).
pub fn stop(host: &Host<'_>) -> Result<(), CharmError> {
    let leader_files = LEADER_FILES
        .into_iter()
        .filter(|p| host.exists(p))
        .collect();
    let charm_files = charm_files(host);
    let led = |files: &Vec<&'static str>| !files.is_empty();
    if !led(&leader_files) && !led(&charm_files) {
        return Ok(());
    }
    tracing::info!("unit stopping: stopping slurmctld");
    host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))?;
    for path in charm_files.iter().chain(&leader_files) {
        host.remove(path)?;
    }
    Ok(())
}

/// A non-leader's hook: observe, plan, apply. `config`: the config when
/// [`super::first_reads`] asked for it already.
pub fn run<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    config: Option<Result<Map<String, Value>, juju_runtime::HookToolError>>,
    event: Option<&EventSecret>,
) -> Result<(), CharmError> {
    let config = match config {
        Some(config) => config?,
        None => backend.config_get()?,
    };
    let obs = observe(&config, host);
    apply(ctx, backend, host, &plan(obs, event))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(state_save: Result<StateSave, StateSaveError>) -> StandbyObserved {
        StandbyObserved {
            state_save,
            leader_files: Vec::new(),
            charm_files: Vec::new(),
        }
    }

    #[test]
    fn a_unit_that_never_led_runs_nothing() {
        let p = plan(observed(Ok(StateSave::Shared("/srv/state".into()))), None);
        assert!(!p.stop_slurmctld);
        assert!(p.remove.is_empty());
        assert_eq!(p.status.kind, StatusKind::Active);
        assert!(
            p.status
                .message
                .starts_with("standby: waiting for leadership")
        );
        assert!(
            p.status
                .message
                .ends_with("takes over the state in /srv/state)")
        );
    }

    #[test]
    fn a_former_leader_stops_slurmctld_and_removes_what_it_wrote() {
        let mut obs = observed(Ok(StateSave::Local));
        obs.leader_files = vec![super::super::store::STORE_PATH];
        obs.charm_files = vec![SLURM_CONF];
        let p = plan(obs, None);
        assert!(p.stop_slurmctld);
        assert_eq!(p.remove, vec![SLURM_CONF, super::super::store::STORE_PATH]);
        assert_eq!(p.status.kind, StatusKind::Blocked);
        assert!(
            p.status
                .message
                .contains("set state-save-location to shared storage"),
            "{}",
            p.status.message
        );
    }

    #[test]
    fn a_standby_without_the_shared_directory_says_so() {
        let p = plan(
            observed(Err(StateSaveError::Missing {
                path: "/srv/state".into(),
            })),
            None,
        );
        assert_eq!(p.status.kind, StatusKind::Blocked);
        assert!(
            p.status.message.starts_with(
                "standby cannot take over: state-save-location /srv/state is not a directory"
            ),
            "{}",
            p.status.message
        );
    }
}
