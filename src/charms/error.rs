//! Errors of the charms. Each message says what failed and, where there is one, what the
//! operator can do about it; `main.rs` logs it and exits non-zero so Juju retries the hook.

use super::host::HostError;
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
    #[error("cannot read the charm metadata {path}: {reason}")]
    Metadata {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A hook tool failed.
    #[error("Juju hook tool failed: {0}")]
    Juju(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A host file or command failed.
    #[error(transparent)]
    Host(#[from] HostError),
    /// A config option has a value the charm cannot use.
    #[error("config option `{option}`: {reason}")]
    Config {
        /// Option name.
        option: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An action parameter is unusable.
    #[error("action parameter `{param}`: {reason}")]
    ActionParam {
        /// Parameter name.
        param: String,
        /// What is wrong.
        reason: String,
    },
    /// GPU detection failed in a way that is not "no GPUs".
    #[error("GPU detection failed: {0}")]
    Gpu(#[from] crate::gpu::GpuError),
    /// The node facts (`slurmd -C`) could not be read.
    #[error("cannot read this node's facts: {0}")]
    Facts(String),
    /// slurm.conf or gres.conf could not be rendered.
    #[error("cannot render the Slurm configuration: {0}")]
    Render(String),
}

/// Turns a backend error into [`CharmError::Juju`].
pub trait JujuResult<T> {
    /// Maps the error.
    fn juju(self) -> Result<T, CharmError>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> JujuResult<T> for Result<T, E> {
    fn juju(self) -> Result<T, CharmError> {
        self.map_err(|e| CharmError::Juju(Box::new(e)))
    }
}
