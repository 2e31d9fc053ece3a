//! Errors of the charms. Every variant keeps its typed source (the hook-tool error, the host
//! error, …); the text an operator reads is produced once, by the runtime's error policy
//! (`juju_runtime::run_hook`, which walks the source chain), and each message ends with what
//! to do about it. A hook that fails exits non-zero, so Juju discards its relation and state
//! changes and retries it.

use super::host::HostError;
use juju_runtime::{ActionResultError, HookToolError};
use std::path::PathBuf;

/// Why a hook or action could not finish.
#[derive(Debug, thiserror::Error)]
pub enum CharmError {
    /// The charm directory's metadata names a charm this binary does not serve.
    #[error(
        "this binary serves the slurmd and slurmctld charms, not {0:?} (check metadata.yaml `name:`)"
    )]
    UnknownCharm(String),
    /// metadata.yaml could not be read.
    #[error("cannot read the charm metadata {path} (the charm archive is damaged: redeploy it)")]
    Metadata {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: MetadataError,
    },
    /// A hook tool failed; Juju retries the hook, which usually clears a transient failure.
    #[error("a Juju hook tool failed; Juju retries the hook (`juju resolve` if it persists)")]
    HookTool(#[from] HookToolError),
    /// The new revision of the cluster key could not be read in that secret's
    /// `secret-changed` (slurmd): the hook fails so Juju keeps the event and retries it. A hook
    /// that exits 0 consumes it, and no later hook would move the node to the new key (nor let
    /// the old revision be removed).
    #[error(
        "cannot move to the new revision of the cluster key; Juju retries secret-changed (`juju resolve` if it persists)"
    )]
    KeyRefresh(#[source] crate::charms::slurmd::errors::MungeKeyError),
    /// A host file or command failed.
    #[error("a host file or command failed (fix the cause, then `juju resolve` the unit)")]
    Host(#[from] HostError),
    /// The cos-agent data could not be built (a defect of the charm build).
    #[error("cannot build the cos-agent relation data (please report this charm bug)")]
    CosAgent(#[from] super::cos::error::CosAgentError),
    /// An action produced results Juju would refuse (a bug in the charm).
    #[error("the action's results cannot be returned to Juju (please report this charm bug)")]
    ActionResults(#[from] ActionResultError),
}

/// Why metadata.yaml gave no charm name.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// The file could not be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// The file is not YAML.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// The YAML has no string `name:`.
    #[error("it has no `name:`")]
    NoName,
}
