//! `state-save-location`: where slurmctld keeps its state (running and queued jobs, the next job
//! id, reservations), and so whether another slurmctld unit can take over when Juju moves
//! leadership.
//!
//! Only the leader runs slurmctld ([`super::standby`]). With the default (empty) the state is on
//! the leader's own disk, `/var/lib/slurm/slurmctld`: a new leader would start from nothing, so
//! every other unit blocks and says so. Set to a directory on shared storage (NFS, CephFS, …)
//! mounted at that path on every slurmctld unit, the new leader's slurmctld starts from the state
//! the former one saved there.

use super::store::{RELOAD_PENDING, STORE_PATH};
use crate::slurm::GlobalKey;

/// The state directory when `state-save-location` is empty: the leader's own disk (Debian's).
pub fn local() -> &'static str {
    GlobalKey::StateSaveLocation.default_value()
}

/// The config option's name.
pub const OPTION: &str = "state-save-location";

/// `state-save-location`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateSave {
    /// Empty: the leader's local disk ([`local`]); no other unit can take over.
    Local,
    /// A directory on shared storage, mounted at this absolute path on every slurmctld unit.
    Shared(String),
}

impl StateSave {
    /// Parses the option's value: empty (or spaces) is [`StateSave::Local`]; anything else must be
    /// an absolute path Slurm reads as one token (no spaces, quotes, `#` or `=`), without `.` or
    /// `..` components, not `/` itself. A trailing `/` is dropped.
    pub fn parse(value: &str) -> Result<StateSave, StateSaveError> {
        let v = value.trim();
        if v.is_empty() {
            return Ok(StateSave::Local);
        }
        let invalid = |why: &'static str| StateSaveError::Invalid {
            value: crate::charms::util::short(v, 100),
            why,
        };
        if !v.starts_with('/') {
            return Err(invalid("not an absolute path"));
        }
        if v.len() > 1024 {
            return Err(invalid("longer than 1024 bytes"));
        }
        if v.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '#' | '=' | '\\')
        }) {
            return Err(invalid(
                "spaces, quotes, `#`, `=` and backslashes cannot be in a slurm.conf path",
            ));
        }
        let path = v.trim_end_matches('/');
        if path.is_empty() {
            return Err(invalid("`/` itself cannot hold slurmctld's state"));
        }
        if path.split('/').any(|c| c == "." || c == "..") {
            return Err(invalid("`.` and `..` components are not allowed"));
        }
        Ok(StateSave::Shared(path.to_owned()))
    }

    /// The directory slurm.conf names in `StateSaveLocation`.
    pub fn path(&self) -> &str {
        match self {
            StateSave::Local => local(),
            StateSave::Shared(p) => p,
        }
    }
}

/// Why `state-save-location` cannot be used here: the leader blocks with it and writes no files
/// (slurmctld is not started on a state it would not find again after a leader change); a
/// standby blocks with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateSaveError {
    /// The value is not a usable path.
    #[error(
        "config option `state-save-location` {value:?}: {why} (give an absolute path to a directory on shared storage mounted on every slurmctld unit, or leave it empty)"
    )]
    Invalid {
        /// The value given (trimmed, cut short).
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The path is fine but there is no directory there on this machine.
    #[error(
        "state-save-location {path} is not a directory on this machine: mount the shared storage there (on every slurmctld unit), writable by the slurm user"
    )]
    Missing {
        /// The path.
        path: String,
    },
}

/// Parses `value` and checks that a shared directory exists on this machine (`is_dir`: the path
/// under the charm's root). The local default is Debian's and always there.
pub fn observe(value: &str, is_dir: impl Fn(&str) -> bool) -> Result<StateSave, StateSaveError> {
    let state = StateSave::parse(value)?;
    match &state {
        StateSave::Shared(path) if !is_dir(path) => {
            Err(StateSaveError::Missing { path: path.clone() })
        }
        _ => Ok(state),
    }
}

/// Files only a unit that ran slurmctld as the leader has: the store and the reload marker.
pub const LEADER_FILES: [&str; 2] = [STORE_PATH, RELOAD_PENDING];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_local_and_a_path_is_shared() {
        assert_eq!(StateSave::parse(""), Ok(StateSave::Local));
        assert_eq!(StateSave::parse("  "), Ok(StateSave::Local));
        assert_eq!(StateSave::Local.path(), "/var/lib/slurm/slurmctld");
        assert_eq!(
            StateSave::parse("/srv/slurm/state/"),
            Ok(StateSave::Shared("/srv/slurm/state".into()))
        );
    }

    #[test]
    fn paths_slurm_cannot_read_or_that_escape_are_refused() {
        for bad in [
            "srv/state",
            "/",
            "//",
            "/srv/my state",
            "/srv/a#b",
            "/srv/a=b",
            "/srv/\"x\"",
            "/srv/../etc",
            "/srv/./x",
        ] {
            let e = StateSave::parse(bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("config option `state-save-location`"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_shared_directory_must_exist_here() {
        let e = observe("/srv/state", |_| false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "state-save-location /srv/state is not a directory on this machine: mount the shared \
             storage there (on every slurmctld unit), writable by the slurm user"
        );
        assert_eq!(
            observe("/srv/state", |p| p == "/srv/state"),
            Ok(StateSave::Shared("/srv/state".into()))
        );
        assert_eq!(observe("", |_| false), Ok(StateSave::Local));
    }
}
