//! Errors touching the host (files, commands).

use std::path::PathBuf;

/// A failure touching the host.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Reading a file failed (other than it being absent).
    #[error("cannot read {path}: {source}")]
    Read {
        /// The full path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing, renaming or setting the mode of a file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The full path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file owner could not be set.
    #[error("cannot give {path} to {user}:{group}")]
    Owner {
        /// The full path.
        path: PathBuf,
        /// Wanted user.
        user: String,
        /// Wanted group.
        group: String,
        /// Why not.
        #[source]
        source: OwnerError,
    },
    /// A command could not be started.
    #[error("cannot run `{command}`: {source} (is it installed and on PATH?)")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A command ran past its time limit and was killed.
    #[error(
        "`{command}` did not finish within {}s and was killed (is the service hanging? check its logs)",
        limit.as_secs_f32()
    )]
    Timeout {
        /// The command line.
        command: String,
        /// The limit it ran under.
        limit: std::time::Duration,
    },
    /// A command exited non-zero.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Exit status in words.
        status: String,
        /// The end of its stderr (or stdout when stderr is empty).
        stderr: String,
    },
}

/// Why a file could not be given to its owner.
#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    /// The user or group does not exist (NSS lookup).
    #[error("no such user or group (is the package that creates it installed?)")]
    Unknown,
    /// `chown` failed.
    #[error(transparent)]
    Chown(std::io::Error),
}
