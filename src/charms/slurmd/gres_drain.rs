//! A node Slurm drained because it reports fewer GRES than slurm.conf gives it
//! (`gres/mps count reported lower than configured (0 < 100)`, INVALID_REG) has its slurmd
//! restarted once, and is resumed once it registers right. The case this is for: a new shared GRES name (`gpu-sharing` turned to
//! `shard` or `mps`) changes the cluster's `GresTypes`, and Slurm 22.05's slurmd loads its
//! GRES plugins only when it starts (`gres_reconfig`: "GresPlugins changed ... ignored").
//! The slurmd charm restarts slurmd when its record changes, but that can be before the
//! controller has written the new `GresTypes`, which `scontrol reconfigure` then cannot bring
//! in. Seen by the next full hook (update-status) through the node's state in Slurm.
//!
//! Once per published record (unit state [`GRES_RESTART_STATE`]): a mismatch that a restart
//! does not cure (a GPU really missing) is left drained and the unit blocked with Slurm's
//! reason, not restarted in a loop. Never while a GPU is failing (the health check owns the node then).

use super::keys::GRES_RESTART_STATE;
use super::observe::Observed;
use super::plan_types::{ServiceAction, SlurmdPlan};
use crate::charms::common::digest;
use crate::charms::util::short;
use juju_runtime::{Status, StatusKind};

/// Why slurmd restarts here (the plan's restart reason).
const WHY: &str = "Slurm drained this node for a GRES count mismatch";

/// Whether a drain reason is exactly Slurm's own for a GRES count mismatch at registration
/// ([`crate::slurm::drain_reason`]); an operator's reason that mentions one is not.
pub use crate::slurm::is_gres_mismatch;

/// Adds the restart, or the resume, when this node is drained for a GRES mismatch (module
/// doc). sinfo shows the node `inval` (IDLE+DRAIN+INVALID_REG) while its registration is
/// wrong: slurmd is restarted (once per record). Once a registration is right again Slurm
/// clears INVALID_REG but keeps its drain (`drained` with the same reason): the node is
/// resumed.
pub fn plan_gres_drain(obs: &Observed, plan: &mut SlurmdPlan) {
    let Some(Ok(node)) = &obs.node_drain else {
        return;
    };
    let Some(reason) = node.reason.as_deref().filter(|r| is_gres_mismatch(r)) else {
        return;
    };
    if !super::health::report(obs).is_some_and(|r| r.healthy()) {
        return;
    }
    if node.drained {
        plan.warnings.push(format!(
            "{}: registered with the right GRES again; resuming it ({reason})",
            node.node
        ));
        plan.services.push(ServiceAction::ResumeNode {
            node: node.node.clone(),
            server: node.server.clone(),
            why: "registered with the right GRES again",
        });
        return;
    }
    let Some(record) = &obs.own_node_raw else {
        return;
    };
    let digest = digest(&[record.as_bytes()]);
    let tried = plan
        .state
        .get(GRES_RESTART_STATE)
        .or(obs.gres_restart_raw.as_ref())
        == Some(&digest);
    if tried {
        // Blocked, not active: the steady update-status (which does not ask Slurm) stays off,
        // so the resume is seen once the node registers right.
        let why = format!(
            "Slurm holds {} invalid ({reason}); a slurmd restart did not cure it: check the GPUs \
             (detect-gpus)",
            node.node
        );
        plan.warnings.push(why.clone());
        if plan.status.kind == StatusKind::Active {
            plan.status = Status::new(StatusKind::Blocked, short(&why, 200));
        }
        return;
    }
    plan.warnings
        .push(format!("{}: {reason}; restarting slurmd", node.node));
    if !plan.restarts_slurmd() {
        plan.services.push(ServiceAction::RestartSlurmd(WHY));
    }
    plan.state.insert(GRES_RESTART_STATE.to_string(), digest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_slurms_gres_mismatch_reasons() {
        assert!(is_gres_mismatch(
            "gres/mps count reported lower than configured (0 < 100)"
        ));
        assert!(is_gres_mismatch("gres/gpu:tesla_t4 count too low (0 < 2)"));
        assert!(!is_gres_mismatch(
            "slurmd-charm: gpu 1 (x): uncorrectable ECC errors"
        ));
        assert!(!is_gres_mismatch("disk replacement"));
        // An operator's reason quoting Slurm's is the operator's (issue 39).
        assert!(!is_gres_mismatch(
            "PSU swap, was: gres/gpu count too low (0 < 2)"
        ));
    }
}
