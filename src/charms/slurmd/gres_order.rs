//! slurmd restarts for a new GRES name only once slurmctld runs that name (issue 39 item 9).
//!
//! A configless slurmd takes its files from slurmctld when it starts, and Slurm 22.05's slurmd
//! loads its GRES plugins only then (a reconfigure logs "GresPlugins changed ... ignored"). When
//! `gpu-sharing` turns to `shard` or `mps`, the node's new record reaches the controller in the
//! same round of hooks in which the node would restart slurmd. Restarted first, slurmd comes up
//! from the old files without the new plugin; once the controller's files are in force, Slurm
//! drains the node, `gres/shard count reported lower than configured (0 < 4)`, until a hook
//! restarts slurmd again (the next `update-status`, up to 5 minutes later under Juju).
//!
//! So the order is the controller first: it publishes the GRES names slurmctld runs
//! ([`crate::interface::gres_types`]) after every reload, and
//! - while slurmctld does not run every GRES name of this node's record, a running slurmd is
//!   not restarted (it keeps serving jobs with what it has; the status says what it waits
//!   for; unit state [`HELD_STATE`]);
//! - once it does, the publication gives the node a hook, and the held restart is released:
//!   before 23.11 slurmd is restarted (it loads GRES plugins only at start); from 23.11 the
//!   controller's `scontrol reconfigure` has re-executed slurmd already, and a second restart
//!   would only race that one.
//!
//! Slurm may drain the node for the count mismatch in between (22.05: the running slurmd lacks
//! the plugin when slurmctld's new files arrive; 23.11+: the old slurmd registers once more
//! before the reconfigure re-executes it). So the releasing hook waits, bounded by
//! [`REGISTER_WAIT`], until slurmd registers right, and resumes the node from that drain,
//! recognised by Slurm's exact reason ([`crate::slurm::is_gres_mismatch`]; an operator's drain
//! is never lifted). The change settles in the hooks it causes, not at the next
//! `update-status`. A drain seen at hook time is also [`super::gres_drain`]'s to act on.
//!
//! A controller that publishes no `gres_types` (an older one) changes nothing here.

use super::keys::HELD_STATE;
use super::node_state::read_node_drain;
use super::observe::Observed;
use super::plan_types::{ServiceAction, SlurmdPlan};
use crate::charms::host::Host;
use crate::interface::GresTypes;
use crate::slurm::is_gres_mismatch;
use juju_runtime::StatusKind;
use std::time::{Duration, Instant};

/// Why slurmd restarts when a held restart is released.
const WHY: &str = "slurmctld now runs this node's GRES names";

/// How long the hook that restarted slurmd waits for it to register: a configless slurmd
/// fetches its files and registers within seconds; past this the next full hook's
/// [`super::gres_drain`] resumes the node instead.
pub const REGISTER_WAIT: Duration = Duration::from_secs(10);

/// Holds the slurmd restart while slurmctld lacks a GRES name of `needed` (the record this unit
/// stands for), releases a held one once it runs them all, and follows a restart or release
/// with the wait-and-resume (module doc).
pub fn plan_gres_order(obs: &Observed, needed: Option<&GresTypes>, plan: &mut SlurmdPlan) {
    let in_force = match &obs.controller_gres_types {
        Some(Ok(types)) => types,
        Some(Err(e)) => {
            plan.warnings
                .push(format!("slurmctld sent bad data, ignored: {e}"));
            return;
        }
        None => return,
    };
    let Some(needed) = needed else {
        return;
    };
    if !obs.slurmd_active {
        return;
    }
    let lacking = in_force.missing(needed);
    if !lacking.is_empty() {
        if !plan.restarts_slurmd() || obs.new_node {
            return;
        }
        plan.drop_slurmd_restarts();
        plan.warnings.push(format!(
            "slurmd restart held: slurmctld does not run gres/{lacking} yet"
        ));
        plan.state.insert(HELD_STATE.to_string(), lacking.clone());
        if plan.status.kind == StatusKind::Active {
            plan.status.message = format!(
                "{}; slurmd restarts once slurmctld runs gres/{lacking}",
                plan.status.message
            );
        }
        return;
    }
    if obs.gres_restart_held {
        plan.state.insert(HELD_STATE.to_string(), String::new());
        let reexecuted = obs
            .slurmd_version
            .is_some_and(|v| v.reconfigure_takes_node_changes());
        if !reexecuted && !plan.restarts_slurmd() {
            plan.services.push(ServiceAction::RestartSlurmd(WHY));
        }
    } else if !plan.restarts_slurmd() {
        return;
    }
    if let (Ok(facts), Some(Ok(info))) = (&obs.facts, &obs.cluster_info) {
        plan.services.push(ServiceAction::ResumeGresMismatch {
            node: facts.node.name.as_ref().to_owned(),
            server: info.conf_server(),
        });
    }
}

/// Waits (at most [`REGISTER_WAIT`]) until Slurm holds `node` registered right after the
/// restart (no longer `inval`), then resumes it if it is drained with Slurm's own GRES-mismatch
/// reason. Anything else (another reason, no drain, sinfo failing, the wait running out) is
/// left to the next hook and logged: this never fails the hook.
pub fn resume_once_registered(host: &Host<'_>, node: &str, server: &str) {
    let deadline = Instant::now() + REGISTER_WAIT;
    loop {
        let drain = match read_node_drain(host, node, server) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!("cannot tell whether {node} registered after the restart: {e}");
                return;
            }
        };
        let Some(reason) = drain.reason.as_deref().filter(|r| is_gres_mismatch(r)) else {
            return;
        };
        if drain.drained {
            tracing::info!("{node} registered with its GRES: resuming it ({reason})");
            let resume = ServiceAction::ResumeNode {
                node: node.to_owned(),
                server: server.to_owned(),
                why: "registered with its GRES",
            };
            let limit = crate::charms::host::default_timeout("scontrol", Some("update"));
            if let Err(e) = super::node_state::service_with_timeout(host, &resume, limit) {
                tracing::warn!("resuming {node}: {e}");
            }
            return;
        }
        if Instant::now() >= deadline {
            tracing::warn!(
                "{node} not registered right {}s after the slurmd restart ({reason}): the next \
                 hook resumes it",
                REGISTER_WAIT.as_secs()
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}
