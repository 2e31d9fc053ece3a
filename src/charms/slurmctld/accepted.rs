//! What slurmctld last accepted, kept apart from the relation cache so that what the host did
//! is recorded at once, not at the end of the hook:
//!
//! * [`APPLIED_PATH`]: the [`AppliedRecord`]: what slurmctld was last brought in line with,
//!   the files it refused (so the same files are not offered again on every hook), and the
//!   change in flight. It is written *before* a restart or reconfigure (a state directory that
//!   cannot be written fails the hook before slurmctld is touched, so retries never restart it
//!   again) and after it succeeded.
//! * [`ACCEPTED_DIR`]: copies of the three files slurmctld last accepted; when it refuses new
//!   ones (`scontrol reconfigure` fails, or a restarted slurmctld does not answer) they are put
//!   back, and slurmctld is never left on a file it has not accepted.

use super::cache::Applied;
use super::grouped::Grouped;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Host path of the applied record.
pub const APPLIED_PATH: &str = "/var/lib/slurm-charms/slurmctld/applied.json";
/// Directory of the last accepted files.
pub const ACCEPTED_DIR: &str = "/var/lib/slurm-charms/slurmctld/accepted";

/// The accepted copy of each live file, in the order the files are written.
pub const ACCEPTED_FILES: [(&str, &str); 3] = [
    (
        CGROUP_CONF,
        "/var/lib/slurm-charms/slurmctld/accepted/cgroup.conf",
    ),
    (
        GRES_CONF,
        "/var/lib/slurm-charms/slurmctld/accepted/gres.conf",
    ),
    (
        SLURM_CONF,
        "/var/lib/slurm-charms/slurmctld/accepted/slurm.conf",
    ),
];

/// Files slurmctld refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// Hash of the refused set ([`Applied::files_hash`]).
    pub files_hash: String,
    /// What slurmctld (or the command) said.
    pub reason: String,
    /// The first line of the refused files that the accepted ones lack: the failing input.
    pub input: String,
    /// The units told of the refusal (unit → relation cache key): those whose node records
    /// changed since the last accepted set ([`super::refusal`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub units: BTreeMap<String, String>,
}

/// The record at [`APPLIED_PATH`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedRecord {
    /// What slurmctld was last brought in line with.
    pub applied: Option<Applied>,
    /// Hash of the files a restart or reconfigure is under way for.
    #[serde(default)]
    pub pending: Option<String>,
    /// The last set slurmctld refused.
    #[serde(default)]
    pub refused: Option<Refusal>,
    /// Node name → fingerprint of its record in the last set slurmctld accepted
    /// ([`super::refusal::fingerprints`]); empty when unknown. Grouped by fingerprint
    /// ([`super::grouped`]).
    #[serde(
        rename = "fingerprint_groups",
        default,
        skip_serializing_if = "Grouped::is_empty"
    )]
    pub fingerprints: Grouped,
}

/// An [`AppliedRecord`] made of borrowed parts, serialized to the same JSON: the plan writes up
/// to three records per hook that share one fingerprint table (a line per node), which is
/// borrowed, never copied.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct AppliedRecordRef<'a> {
    /// [`AppliedRecord::applied`].
    pub applied: Option<&'a Applied>,
    /// [`AppliedRecord::pending`].
    pub pending: Option<&'a str>,
    /// [`AppliedRecord::refused`].
    pub refused: Option<&'a Refusal>,
    /// [`AppliedRecord::fingerprints`].
    #[serde(rename = "fingerprint_groups", skip_serializing_if = "no_nodes")]
    pub fingerprints: &'a Grouped,
}

/// `skip_serializing_if` for a borrowed [`Grouped`].
fn no_nodes(g: &&Grouped) -> bool {
    g.is_empty()
}

impl AppliedRecordRef<'_> {
    /// The record as JSON (what [`AppliedRecord::from_bytes`] reads).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl AppliedRecord {
    /// The record as JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.borrowed().to_bytes()
    }

    /// The record as borrowed parts.
    pub fn borrowed(&self) -> AppliedRecordRef<'_> {
        AppliedRecordRef {
            applied: self.applied.as_ref(),
            pending: self.pending.as_deref(),
            refused: self.refused.as_ref(),
            fingerprints: &self.fingerprints,
        }
    }

    /// Reads a record; `None` when it is not one (the cache's copy is used instead).
    pub fn from_bytes(raw: &[u8]) -> Option<Self> {
        serde_json::from_slice(raw).ok()
    }
}

/// The first line of `new` (slurm.conf, then gres.conf) that `old` lacks, cut short: what
/// changed between the accepted files and the refused ones.
pub fn first_new_line(old: &[Option<Vec<u8>>], new: &[&[u8]]) -> String {
    for (o, n) in old.iter().zip(new).rev() {
        let old_text = String::from_utf8_lossy(o.as_deref().unwrap_or_default()).into_owned();
        let old_lines: std::collections::HashSet<&str> = old_text.lines().collect();
        let new_text = String::from_utf8_lossy(n);
        if let Some(line) = new_text.lines().find(|l| !old_lines.contains(l)) {
            return crate::charms::util::short(line, 120);
        }
    }
    String::new()
}
