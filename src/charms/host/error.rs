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
    #[error("cannot give {path} to {user}:{group}: {reason}")]
    Owner {
        /// The full path.
        path: PathBuf,
        /// Wanted user.
        user: String,
        /// Wanted group.
        group: String,
        /// Why not.
        reason: String,
    },
    /// A command could not be started.
    #[error("cannot run `{command}`: {source} (is it installed and on PATH?)")]
    Spawn {
        /// The command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
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
