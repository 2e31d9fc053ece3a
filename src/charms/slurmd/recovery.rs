//! A slurmd left retrying: from Slurm 23.11 a configless slurmd that cannot fetch its config (a
//! wrong munge key, a controller that is away) stays `activating` and tries again every 10 s.
//! When the controller answers this node again after a check that failed, a slurmd still
//! `activating` is restarted once, so the node is back now rather than at the next retry (up to
//! 10 s later).
//!
//! Remembered: whether the last full hook's controller check failed (unit state
//! [`CONTROLLER_FAILING_STATE`]), set by a hook whose check failed and cleared by the first
//! one whose check answers; so the restart happens once per recovery. Planned here, purely.

use super::keys::CONTROLLER_FAILING_STATE;
use super::observe::Observed;
use super::plan_types::{ServiceAction, SlurmdPlan};
use super::probe::ControllerProbe;

/// Why the plan restarts slurmd.
pub const WHY: &str = "slurmd was retrying the controller, which answers again";

/// Adds the recovery's part to `plan`: the remembered check, and the restart of a slurmd still
/// `activating` once the controller answers again. Nothing is restarted when the plan already
/// restarts or stops slurmd, or holds it (GPU device files missing).
pub fn plan_recovery(obs: &Observed, plan: &mut SlurmdPlan) {
    let failing = match &obs.controller {
        Some(ControllerProbe::Answering) => false,
        Some(ControllerProbe::Refused(_) | ControllerProbe::NotAnswering(_)) => true,
        Some(ControllerProbe::NoScontrol(_)) | None => return,
    };
    if failing == obs.controller_failed_before {
        return;
    }
    plan.state
        .insert(CONTROLLER_FAILING_STATE.to_string(), failing.to_string());
    let handled = plan.services.iter().any(|s| {
        matches!(
            s,
            ServiceAction::RestartSlurmd(_)
                | ServiceAction::StopSlurmd(_)
                | ServiceAction::CreateDeviceFiles(_)
        )
    });
    let configured = matches!(obs.munge_key, Some(Ok(_))) && !plan.files.is_empty();
    if !failing && obs.slurmd_activating && configured && !handled {
        plan.services.push(ServiceAction::RestartSlurmd(WHY));
    }
}
