//! GPU health in the slurmd charm: a failing GPU drains this node in Slurm and blocks the unit;
//! a healthy one resumes the node, but only from a drain the charm set itself (its reason starts
//! with [`super::node_state::DRAIN_PREFIX`]). A drain an operator set is never lifted.
//!
//! Observed: the remembered GPUs (unit state [`KNOWN_GPUS_STATE`]) and this node's state and
//! reason in Slurm (`sinfo -h -N -n <node> -o '%T|%E'`, asked only while the controller
//! answers). Planned here, purely; [`super::apply`] runs the `scontrol update` commands.

use super::health_verdict::{Decision, decide};
use super::keys::KNOWN_GPUS_STATE;
use super::plan_types::{ServiceAction, SlurmdPlan};
use crate::charms::util::short;
use crate::gpu::{HealthReport, encode_known, parse_known};
use juju_runtime::{Status, StatusKind};
use serde_json::{Map, Value};

use super::observe::Observed;

/// The health report of this hook: from the inventory when it was read; when NVML fails as a
/// whole, every remembered GPU is failing ([`crate::gpu::assess_unreadable`]); plus the
/// drain-class XIDs the health-check program holds in this boot ([`crate::gpu::add_xids`]).
/// Judged by [`super::health_verdict::verdict`], as the program judges: one verdict.
pub fn report(obs: &Observed) -> Option<HealthReport> {
    let known = match parse_known(obs.known_gpus_raw.as_deref()) {
        Ok(_) if missing_accepted(obs) => Vec::new(),
        Ok(k) => k,
        Err(e) => {
            tracing::warn!("stored {KNOWN_GPUS_STATE} is unreadable ({e}); starting afresh");
            Vec::new()
        }
    };
    let held = held_xids(obs);
    // NVML unreadable, nothing remembered, nothing held: nothing to report
    if obs.inventory.is_err() && known.is_empty() && held.is_empty() {
        return None;
    }
    let inventory = obs.inventory.as_ref().map_err(|e| &**e);
    Some(super::health_verdict::verdict(inventory, &known, &held))
}

/// True in `detect-gpus accept-missing=true`: GPUs NVML no longer lists are forgotten (a card
/// removed on purpose), so only the GPUs seen now are remembered.
fn missing_accepted(obs: &Observed) -> bool {
    matches!(
        &obs.action,
        Some((name, params)) if name == "detect-gpus" && accepts_missing(params)
    )
}

/// True for `detect-gpus accept-missing=true`: GPUs NVML no longer lists are forgotten (a card
/// removed on purpose), so the action changes what the unit remembers.
pub fn accepts_missing(params: &Map<String, Value>) -> bool {
    matches!(params.get("accept-missing"), Some(Value::Bool(true)))
}

/// The held drain-class XIDs of this boot not cleared by the operator, from the health-check
/// program's state file.
fn held_xids(obs: &Observed) -> Vec<crate::gpu::XidEvent> {
    let cleared = super::health_check_plan::xids_cleared_through(obs);
    obs.health_state
        .as_ref()
        .map(|s| s.held_in(&obs.boot_id, cleared))
        .unwrap_or_default()
}

/// Adds the health check's part to `plan`: the remembered GPUs, the blocked status, and the
/// drain or resume.
pub fn plan_health(obs: &Observed, plan: &mut SlurmdPlan) {
    let Some(report) = report(obs) else {
        return;
    };
    let known = encode_known(&report.known);
    if obs.known_gpus_raw.as_deref() != Some(known.as_str()) {
        plan.state.insert(KNOWN_GPUS_STATE.to_string(), known);
    }
    let node = match &obs.node_drain {
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => {
            plan.warnings
                .push(format!("cannot read this node's state in Slurm: {e}"));
            None
        }
        None => None,
    };
    if !report.healthy() {
        plan.status = Status::new(StatusKind::Blocked, short(&report.summary(), 200));
    }
    match decide(&report, node) {
        Decision::Keep => {}
        Decision::Drain { reason } => {
            if let Some(n) = node {
                plan.services.push(ServiceAction::DrainNode {
                    node: n.node.clone(),
                    reason,
                    server: n.server.clone(),
                });
            }
        }
        Decision::Resume => {
            if let Some(n) = node {
                plan.services.push(ServiceAction::ResumeNode {
                    node: n.node.clone(),
                    server: n.server.clone(),
                    why: "GPUs healthy again",
                });
            }
        }
        Decision::LeaveOperators { reason } => {
            if let Some(n) = node {
                plan.warnings.push(format!(
                    "{} is drained by an operator ({}); the charm leaves that drain alone",
                    n.node,
                    reason.as_deref().unwrap_or("no reason")
                ));
            }
        }
    }
}
