//! GPU health in the slurmd charm: a failing GPU drains this node in Slurm and blocks the unit;
//! a healthy one resumes the node, but only from a drain the charm set itself (its reason starts
//! with [`DRAIN_PREFIX`]). A drain an operator set is never lifted.
//!
//! Observed: the remembered GPUs (unit state [`KNOWN_GPUS_STATE`]) and this node's state and
//! reason in Slurm (`sinfo -h -N -n <node> -o '%T|%E'`, asked only while the controller
//! answers). Planned here, purely; [`super::apply`] runs the `scontrol update` commands.

use super::errors::SinfoError;
use super::plan::{ServiceAction, SlurmdPlan};
use crate::charms::util::short;
use crate::gpu::{HealthReport, encode_known, parse_known};
use juju_runtime::{Status, StatusKind};

use super::observe::Observed;

/// Unit-state key: the GPUs seen so far (JSON list of [`crate::gpu::KnownGpu`]).
pub const KNOWN_GPUS_STATE: &str = "known-gpus";
/// Start of every drain reason the charm sets: how it recognises its own drains.
pub const DRAIN_PREFIX: &str = "slurmd-charm: ";

/// This node as Slurm sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDrain {
    /// Slurm's node name.
    pub node: String,
    /// The config server it was asked at (`host:port`).
    pub server: String,
    /// The node is drained or draining.
    pub drained: bool,
    /// The reason Slurm holds (`None` when it has none).
    pub reason: Option<String>,
}

impl NodeDrain {
    /// True when the node is drained with a reason the charm set.
    pub fn drained_by_charm(&self) -> bool {
        self.drained
            && self
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(DRAIN_PREFIX))
    }
}

/// Parses `sinfo -h -N -n <node> -o '%T|%E'` (one line per partition; the first is used):
/// `drained|slurmd-charm: gpu 1 …`, `idle|none`. `Err` names what was wrong with the output.
pub fn parse_sinfo(node: &str, server: &str, out: &str) -> Result<NodeDrain, SinfoError> {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| SinfoError::Empty {
            node: node.to_owned(),
        })?;
    let (state, reason) = line
        .split_once('|')
        .ok_or_else(|| SinfoError::NotStateReason {
            node: node.to_owned(),
            line: line.to_owned(),
        })?;
    let reason = reason.trim();
    Ok(NodeDrain {
        node: node.to_string(),
        server: server.to_string(),
        drained: state.to_ascii_lowercase().contains("drain"),
        reason: (!reason.is_empty() && reason != "none").then(|| reason.to_string()),
    })
}

/// The health report of this hook: from the inventory when it was read; when NVML fails as a
/// whole, every remembered GPU is failing ([`crate::gpu::assess_unreadable`]); plus the
/// drain-class XIDs the health-check program holds in this boot ([`crate::gpu::add_xids`]).
/// Judged by [`super::health_check::verdict`], as the program judges: one verdict.
pub fn report(obs: &Observed) -> Option<HealthReport> {
    let known = match parse_known(obs.known_gpus_raw.as_deref()) {
        Ok(_) if accepts_missing(obs) => Vec::new(),
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
    Some(super::health_check::verdict(inventory, &known, &held))
}

/// True in `detect-gpus accept-missing=true`: GPUs NVML no longer lists are forgotten (a card
/// removed on purpose), so only the GPUs seen now are remembered.
fn accepts_missing(obs: &Observed) -> bool {
    matches!(
        &obs.action,
        Some((name, params)) if name == "detect-gpus" && super::actions::accepts_missing(params)
    )
}

/// What the health verdict asks of this node in Slurm: the one decision the hook and the
/// health-check program share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to change (healthy and not drained by the charm, or already drained with this
    /// reason, or the node's state is unknown).
    Keep,
    /// Drain the node with this reason (it starts with [`DRAIN_PREFIX`]).
    Drain {
        /// The reason.
        reason: String,
    },
    /// Resume the node: healthy again, and drained by the charm.
    Resume,
    /// Failing, but an operator drained the node: their drain stays as it is.
    LeaveOperators {
        /// The operator's reason (`None`: they gave none).
        reason: Option<String>,
    },
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Keep => write!(f, "no change"),
            Decision::Drain { .. } => write!(f, "drained"),
            Decision::Resume => write!(f, "resumed"),
            Decision::LeaveOperators { reason } => write!(
                f,
                "left the operator's drain ({})",
                reason.as_deref().unwrap_or("no reason")
            ),
        }
    }
}

/// The decision for `report` on `node` (`None`: the node's state in Slurm is unknown, so
/// nothing is changed).
pub fn decide(report: &HealthReport, node: Option<&NodeDrain>) -> Decision {
    let Some(n) = node else {
        return Decision::Keep;
    };
    if report.healthy() {
        return if n.drained_by_charm() {
            Decision::Resume
        } else {
            Decision::Keep
        };
    }
    let reason = format!("{DRAIN_PREFIX}{}", report.summary());
    if n.drained && !n.drained_by_charm() {
        Decision::LeaveOperators {
            reason: n.reason.clone(),
        }
    } else if n.drained && n.reason.as_deref() == Some(reason.as_str()) {
        Decision::Keep
    } else {
        Decision::Drain { reason }
    }
}

/// The held drain-class XIDs of this boot not cleared by the operator, from the health-check
/// program's state file.
fn held_xids(obs: &Observed) -> Vec<crate::gpu::XidEvent> {
    let cleared = super::health_check::xids_cleared_through(obs);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinfo_lines() {
        let n = parse_sinfo("n1", "c:6817", "drained|slurmd-charm: gpu 1 (x): y\n").unwrap();
        assert!(n.drained_by_charm());
        let n = parse_sinfo("n1", "c:6817", "draining|maintenance\nidle|none\n").unwrap();
        assert!(n.drained && !n.drained_by_charm());
        let n = parse_sinfo("n1", "c:6817", "idle|none").unwrap();
        assert!(!n.drained && n.reason.is_none());
        assert_eq!(
            parse_sinfo("n1", "c:6817", ""),
            Err(SinfoError::Empty { node: "n1".into() })
        );
        assert!(matches!(
            parse_sinfo("n1", "c:6817", "idle"),
            Err(SinfoError::NotStateReason { line, .. }) if line == "idle"
        ));
    }
}
