//! Errors returned by the simulator's library API.

use std::path::PathBuf;

/// Anything that stops a simulator operation (as opposed to a hook failing, which is model state).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A charm file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A charm yaml file is malformed.
    #[error("invalid {path}: {message}")]
    CharmFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An application name is unknown.
    #[error("application {0:?} not found")]
    AppNotFound(String),
    /// An application name is already deployed.
    #[error("application {0:?} already exists")]
    AppExists(String),
    /// A unit name is unknown.
    #[error("unit {0:?} not found")]
    UnitNotFound(String),
    /// A relation could not be created, found or removed.
    #[error("{0}")]
    Relation(String),
    /// A config value was rejected (unknown option or wrong type).
    #[error("{0}")]
    Config(String),
    /// An action was rejected before it ran (like `juju run` validation).
    #[error("{0}")]
    Action(String),
    /// The unit is in an error state; resolve it first.
    #[error("unit {0:?} is in error state; call resolve() first")]
    UnitInError(String),
    /// Starting the hook process or the tool server failed.
    #[error("cannot run {what}: {source}")]
    Spawn {
        /// What was being started.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The `jujuc` executable could not be found or built.
    #[error("{0}")]
    Jujuc(String),
    /// Settling ran more hooks than allowed (charms keep changing relation data).
    #[error("model did not settle after {0} hooks; do the charms keep rewriting relation data?")]
    NotQuiescent(usize),
    /// A scenario file is malformed.
    #[error("scenario: {0}")]
    Scenario(String),
}

/// Result alias for the simulator API.
pub type Result<T, E = SimError> = std::result::Result<T, E>;
