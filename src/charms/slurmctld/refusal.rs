//! What happens when slurmctld refuses new files: the last accepted copies are put back, and the
//! units whose change did not reach Slurm are told.
//!
//! # The last accepted files
//!
//! The last files slurmctld accepted, kept beside the live ones ([`ACCEPTED_FILES`]): when it
//! refuses new ones (`scontrol reconfigure` fails, or a restarted slurmctld does not answer) they
//! are put back, and slurmctld is never left on a file it has not accepted. What slurmctld runs
//! and what it refused are in the store ([`super::store::Store::applied`],
//! [`super::store::Store::refused`]).
//!
//! # Who is told
//!
//! When slurmctld refuses new files, the units whose `node` values changed since the last set it
//! accepted are the ones whose change did not reach Slurm
//! ([`super::store::Store::changed_since`]). Each gets a verdict with the daemon's reason,
//! abbreviated (its unit status then says its node was not enlisted and why), and the
//! controller's status names them.

use super::store::Refusal;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::util::short;
use crate::interface::Verdicts;
use std::collections::BTreeMap;

// ---- The last accepted files ----

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

// ---- Who is told ----

/// Longest part of the daemon's reason quoted in a unit's verdict (characters).
pub const MAX_REASON_IN_VERDICT: usize = 120;

/// Most unit names the controller's status lists; the rest are counted.
const MAX_NAMED: usize = 5;

/// A told unit's verdict: the daemon's reason, abbreviated.
pub fn verdict(reason: &str) -> String {
    format!(
        "slurmctld refused the files with this node's new record ({}); it runs on the last \
         accepted files",
        short(reason, MAX_REASON_IN_VERDICT)
    )
}

/// Adds the verdict of each unit `refusal` tells to `verdicts` (per relation id); a unit
/// already left out for its own reason keeps that reason.
pub fn tell(verdicts: &mut BTreeMap<u32, Verdicts>, refusal: &Refusal) {
    for (unit, relation) in &refusal.units {
        verdicts
            .entry(*relation)
            .or_default()
            .0
            .entry(unit.clone())
            .or_insert_with(|| verdict(&refusal.reason));
    }
}

/// The part of the controller's status naming the told units: ` (not enlisted: a/0, a/1)`.
pub fn named(refusal: &Refusal) -> String {
    if refusal.units.is_empty() {
        return String::new();
    }
    let mut names: Vec<&str> = refusal
        .units
        .keys()
        .map(String::as_str)
        .take(MAX_NAMED)
        .collect();
    let more = refusal.units.len().saturating_sub(MAX_NAMED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    names.sort_unstable();
    format!(" (not enlisted: {}{more})", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_units_keep_their_own_reason_and_are_named() {
        let refusal = Refusal {
            units: BTreeMap::from([("a/0".to_owned(), 1), ("a/1".to_owned(), 1)]),
            reason: "bad".into(),
            ..Refusal::default()
        };
        let mut verdicts = BTreeMap::from([(
            1,
            Verdicts(BTreeMap::from([("a/1".to_owned(), "own".to_owned())])),
        )]);
        tell(&mut verdicts, &refusal);
        assert_eq!(verdicts[&1].0["a/1"], "own");
        assert!(verdicts[&1].0["a/0"].contains("(bad)"));
        assert_eq!(named(&refusal), " (not enlisted: a/0, a/1)");
    }
}
