//! Carries out the slurmd plan (writes only, in a fixed order): the steady record removed first,
//! then files, service actions, relation data, unit state, then the action's results. The
//! caller sets the status after it, and writes the steady record this hook earns last.

use super::keys::PROGRAM_PATH;
use super::node_state::service_with_timeout;
use super::plan_types::{ServiceAction, SlurmdPlan};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host, default_timeout};
use juju_runtime::{ModelBackend, NetworkBackend, error_chain, flatten_action_results};

/// Applies everything in `plan` except the status. Returns a status that replaces the planned
/// one when a step's outcome decides it (the driver install: failed, or rebooting).
pub fn apply<B: ModelBackend + NetworkBackend>(
    backend: &B,
    host: &Host<'_>,
    plan: &SlurmdPlan,
) -> Result<Option<juju_runtime::Status>, CharmError> {
    if plan.forget_steady {
        // first: a hook that fails from here on leaves no record behind
        super::steady::forget(host)?;
    }
    let mut status = None;
    for w in &plan.warnings {
        tracing::warn!("{w}");
    }
    for f in &plan.files {
        host.write(f.path, &f.bytes, f.mode, f.owner)?;
    }
    for path in &plan.remove {
        host.remove(path)?;
    }
    for action in &plan.services {
        match action {
            ServiceAction::InstallDriver { source, boot_id } => {
                status = super::driver::install_driver(backend, host, source, boot_id)?;
            }
            other => service(host, other)?,
        }
    }
    for w in &plan.relation_data {
        tracing::info!("publishing {:?}", w.data.keys().collect::<Vec<_>>());
        backend.relation_set(&w.relation, w.app, &w.data)?;
    }
    if !plan.state.is_empty() {
        backend.state_set(&plan.state)?;
    }
    if let Some(action) = &plan.action {
        match &action.outcome {
            Ok(results) => backend.action_set(&flatten_action_results(results)?)?,
            Err(failure) => {
                let message = error_chain(failure);
                tracing::warn!("action failed: {message}");
                backend.action_fail(&message)?;
            }
        }
    }
    Ok(status)
}

fn service(host: &Host<'_>, action: &ServiceAction) -> Result<(), CharmError> {
    match action {
        ServiceAction::RestartMunge => {
            tracing::info!("munge key changed: restarting munge");
            host.run_ok(&Cmd::new("systemctl", ["restart", "munge"]))?;
        }
        ServiceAction::DaemonReload => {
            host.run_ok(&Cmd::new("systemctl", ["daemon-reload"]))?;
        }
        ServiceAction::CreateDeviceFiles(files) => {
            for minor in files.iter().filter_map(|f| f.strip_prefix("/dev/nvidia")) {
                // nvidia-modprobe may be absent; the next hook sees whether the file appeared.
                if let Err(e) = host.run(&Cmd::new("nvidia-modprobe", ["-c", minor])) {
                    tracing::debug!("{e}");
                }
            }
        }
        ServiceAction::RestartSlurmd(why) => {
            tracing::info!("restarting slurmd: {why}");
            // `--no-block`: from Slurm 23.11 the unit is Type=notify and a configless slurmd is
            // ready only once the controller serves it a config, which may be later (a new
            // node, a wrong munge key): a blocking restart would hold the hook for systemd's
            // 90 s start timeout and fail it (docs/slurm-versions.md). The next hook's
            // observation reports what became of it.
            host.run_ok(&Cmd::new("systemctl", ["restart", "--no-block", "slurmd"]))?;
        }
        ServiceAction::DrainNode { .. } | ServiceAction::ResumeNode { .. } => {
            service_with_timeout(host, action, default_timeout("scontrol", Some("update")))?;
        }
        ServiceAction::ResumeGresMismatch { node, server } => {
            super::gres_order::resume_once_registered(host, node, server);
        }
        ServiceAction::LinkHealthCheck(target) => {
            tracing::info!(
                "linking the health-check program {} to {}",
                PROGRAM_PATH,
                target.display()
            );
            host.symlink(PROGRAM_PATH, target)?;
        }
        ServiceAction::InstallDriver { .. } => {
            // Needs the backend (unit state, status, juju-reboot): run by `apply` itself.
        }
        ServiceAction::StopSlurmd(why) => {
            tracing::info!("{why}: stopping slurmd");
            host.run_ok(&Cmd::new("systemctl", ["stop", "slurmd"]))?;
        }
    }
    Ok(())
}
