//! The one judgement the hooks and the health-check program share: the GPUs' verdict
//! ([`verdict`]) and what it asks of this node in Slurm ([`decide`]).

use super::node_state::{DRAIN_PREFIX, NodeDrain};
use crate::gpu::{
    GpuError, HealthReport, Inventory, KnownGpu, XidEvent, add_xids, assess, assess_unreadable,
};

/// The one verdict of the hook ([`super::health::report`]) and the program: NVML's health
/// judged against the remembered GPUs, plus the held drain-class XIDs.
pub fn verdict(
    inventory: Result<&Inventory, &GpuError>,
    known: &[KnownGpu],
    held: &[XidEvent],
) -> HealthReport {
    let (mut report, now) = match inventory {
        Ok(inv) => (assess(&inv.health, known), inv.health.as_slice()),
        Err(e) => (assess_unreadable(e, known).unwrap_or_default(), &[][..]),
    };
    add_xids(&mut report, held, now, known);
    report
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
