//! What both charms share and neither owns: the key files, installing packages and recording
//! the workload version, the one hash the charms use for integrity, and what counts as a
//! running daemon in systemd's words. Imports neither charm.

use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use juju_runtime::{ModelBackend, Status, StatusKind, StatusScope};

/// The munge key file.
pub const MUNGE_KEY: &str = "/etc/munge/munge.key";
/// auth/slurm's key file (the same key as munge's, from the key secret; 0600 slurm:slurm).
pub const SLURM_KEY: &str = "/etc/slurm/slurm.key";

/// XXH3-64 of `parts` in order, as 16 hex digits: the one hash family the charms use, for
/// integrity only (a stored file's checksum, whether a record or a host's facts are what a
/// charm last saw); stable across builds and versions.
pub fn digest(parts: &[&[u8]]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p);
    }
    format!("{:016x}", h.digest())
}

/// Whether a unit in systemd's `ActiveState` `state` runs: `active`, or `activating` (started,
/// not ready yet: a notify daemon still starting) or `reloading` (a re-exec under way); neither
/// is a death. The one reading both charms apply to `systemctl is-active` and `show`.
pub fn systemd_state_runs(state: &str) -> bool {
    matches!(state.trim(), "active" | "activating" | "reloading")
}

/// Installs `packages` with apt-get (idempotent; `apt-get update` and one retry on failure)
/// with maintenance statuses, then records the workload version from `<daemon> -V`.
pub fn install<B: ModelBackend>(
    backend: &B,
    host: &Host<'_>,
    packages: &[&str],
    daemon: &str,
) -> Result<(), CharmError> {
    let msg = format!("installing {}", packages.join(", "));
    backend.status_set(
        StatusScope::Unit,
        &Status::new(StatusKind::Maintenance, msg),
    )?;
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend_from_slice(packages);
    let cmd = Cmd::new("apt-get", args);
    if let Err(first) = host.run_ok(&cmd) {
        tracing::warn!("{first}; refreshing the package lists and trying again");
        host.run_ok(&Cmd::new("apt-get", ["update"]))?;
        host.run_ok(&cmd)?;
    }
    set_version(backend, host, daemon);
    Ok(())
}

/// Sets the workload version from `<daemon> -V` (`slurm-wlm 22.05.8` → `22.05.8`); a failure
/// is logged, not fatal.
pub fn set_version<B: ModelBackend>(backend: &B, host: &Host<'_>, daemon: &str) {
    let version = host
        .run_ok(&Cmd::new(daemon, ["-V"]))
        .ok()
        .and_then(|o| o.stdout.split_whitespace().last().map(str::to_string));
    match version {
        Some(v) => {
            if let Err(e) = backend.application_version_set(&v) {
                tracing::warn!("cannot set the workload version: {e}");
            }
        }
        None => tracing::warn!("cannot read the {daemon} version (`{daemon} -V`)"),
    }
}

/// Builds XXH3 hashers seeded once per process: what the controller's maps keyed by node names
/// (thousands per hook) hash with. The project's one hash family, about four times faster than
/// std's SipHash on short names; the per-process random seed keeps names another application
/// chooses from being made to collide.
#[derive(Debug, Clone, Copy)]
pub struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        NameHasher(*SEED.get_or_init(|| {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        }))
    }
}

impl std::hash::BuildHasher for NameHasher {
    type Hasher = NameHash;

    fn build_hasher(&self) -> Self::Hasher {
        NameHash(self.0)
    }
}

/// One key's hash under [`NameHasher`]: each piece the key writes (a name's bytes, then its
/// end mark) is hashed by one-shot XXH3 seeded with the hash so far. The streaming `Xxh3`
/// state derives a 192-byte secret from the seed for every key: at 10,000 names per map that
/// was most of what hashing them cost (docs/BENCHMARKS.md, issue 38 third pass).
#[derive(Debug, Clone, Copy)]
pub struct NameHash(u64);

impl std::hash::Hasher for NameHash {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed by names, hashed with [`NameHasher`].
pub type NameMap<K, V> = std::collections::HashMap<K, V, NameHasher>;

#[cfg(test)]
mod tests {
    #[test]
    fn a_daemon_starting_or_reloading_runs_one_stopped_or_failed_does_not() {
        for state in ["active", "activating", "reloading", "active\n"] {
            assert!(super::systemd_state_runs(state), "{state:?}");
        }
        for state in ["inactive", "failed", "deactivating", "unknown", ""] {
            assert!(!super::systemd_state_runs(state), "{state:?}");
        }
    }
}
