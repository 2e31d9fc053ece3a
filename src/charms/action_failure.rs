//! Why an action could not do what the operator asked. The action reports it with
//! `action-fail` and the hook itself succeeds (the unit is fine; the request was not). Each
//! message says what to change in the request or on the unit.

use super::host::HostError;
use super::slurmd::errors::{FactsError, StoredStateError};
use crate::gpu::GpuError;
use crate::interface::InterfaceError;
use crate::slurm::ParseError;
use crate::slurm::types::VocabError;
use std::sync::Arc;

/// A failed action request.
#[derive(Debug, thiserror::Error)]
pub enum ActionFailure {
    /// The charm has no such action (actions.yaml and the code disagree).
    #[error("the {charm} charm has no action {name:?} (see `juju actions {charm}`)")]
    Unknown {
        /// The charm.
        charm: &'static str,
        /// The action asked for.
        name: String,
    },
    /// A required parameter is missing or has the wrong type.
    #[error("parameter `{param}` is required: {hint}")]
    Missing {
        /// The parameter.
        param: &'static str,
        /// An example of a good value.
        hint: &'static str,
    },
    /// A parameter has a value the action refuses.
    #[error("parameter `{param}`: {reason}")]
    Invalid {
        /// The parameter.
        param: &'static str,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// `nodename` is not a hostlist of node names Slurm accepts.
    #[error(
        "parameter `nodename` is not a hostlist of node names Slurm accepts (e.g. juju-abc-[1-3])"
    )]
    NodeName(#[source] VocabError),
    /// `Key=Value` text that does not parse by Slurm's rules.
    #[error("parameter `parameters` is not Key=Value text Slurm accepts")]
    Overrides(#[from] ParseError),
    /// The overrides do not fit this node's record.
    #[error("these parameters do not fit this node (fix or `node-config reset=true`)")]
    NodeRecord(#[source] InterfaceError),
    /// The `memory-headroom` option is not valid (the message names the value and the fix).
    #[error(transparent)]
    MemoryHeadroom(crate::charms::slurmd::memory::HeadroomError),
    /// This node's facts (`slurmd -C`) could not be read.
    #[error("cannot read this node's facts (`slurmd -C`; is slurmd installed?)")]
    Facts(#[source] FactsError),
    /// The GPUs could not be read.
    #[error("cannot read the GPUs")]
    Gpu(#[source] Arc<GpuError>),
    /// The stored `node-config` overrides cannot be read back (the message names the
    /// unit-state key, what is wrong and the fix).
    #[error(transparent)]
    StoredState(StoredStateError),
    /// An action only the leader can run was run on another unit.
    #[error("run {action} on the {charm} leader (`juju run {charm}/leader {action}`)")]
    NotLeader {
        /// The charm.
        charm: &'static str,
        /// The action.
        action: &'static str,
    },
    /// `rotate-key` under `auth-type=slurm`: a running job's slurmstepd keeps the slurm.key it
    /// started with, so its completion would be refused by a slurmctld on the new key (seen on
    /// 24.11 and 26.05); a safe rotation needs Slurm's multi-key `slurm.jwks`, not done yet.
    #[error(
        "rotate-key is not available with auth-type=slurm: running jobs keep the old slurm.key \
         and could not complete (a rotation needs Slurm's multi-key slurm.jwks, not supported \
         yet); rotate with auth-type=munge"
    )]
    RotateUnderAuthSlurm,
    /// `rotate-key` before the leader created the key secret.
    #[error("the cluster key secret does not exist yet (the leader creates it in its first hook)")]
    NoKeySecret,
    /// A command or file on the unit failed.
    #[error("the unit could not carry out the request")]
    Host(#[from] HostError),
}
