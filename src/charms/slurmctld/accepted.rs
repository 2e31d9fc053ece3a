//! The last files slurmctld accepted, kept beside the live ones: when it refuses new ones
//! (`scontrol reconfigure` fails, or a restarted slurmctld does not answer) they are put back,
//! and slurmctld is never left on a file it has not accepted. What slurmctld runs and what it
//! refused are in the store ([`super::store::Store::applied`], [`super::store::Store::refused`]).

use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};

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
