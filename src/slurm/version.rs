//! The installed Slurm's version, read once from `slurmctld -V` / `slurmd -V`, and the few
//! behaviours the charms choose by it (docs/slurm-versions.md lists each with the test on the
//! real daemons that proves it).

use std::fmt;

/// A Slurm release, `major.minor.micro` (`24.11.5`). Ordered, so decisions read as
/// `version >= SlurmVersion::RECONFIGURE_REEXECS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SlurmVersion {
    /// Year of the release (`24` in 24.11).
    pub major: u16,
    /// Month of the release (`11` in 24.11).
    pub minor: u16,
    /// Maintenance release (`5` in 24.11.5).
    pub micro: u16,
}

/// `slurmd -V` / `slurmctld -V` output that is not `slurm[-wlm] MAJOR.MINOR.MICRO`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read a Slurm version from {source_cmd} output {output:?}: {reason}")]
pub struct VersionError {
    /// The command whose output it was (e.g. `slurmctld -V`).
    pub source_cmd: String,
    /// The output as given (trimmed).
    pub output: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl SlurmVersion {
    /// From 23.11 `scontrol reconfigure` makes slurmctld fork and exec itself with the new
    /// files, so nodes added to or removed from slurm.conf (and their GRES) are taken without
    /// a restart (before, 22.05 and 23.02 needed `systemctl restart slurmctld`).
    pub const RECONFIGURE_REEXECS: SlurmVersion = SlurmVersion::new(23, 11, 0);

    /// The first release with `auth/slurm` and `cred/slurm` (Slurm's authentication.html:
    /// "Beginning with version 23.11, Slurm has its own plugin").
    pub const AUTH_SLURM: SlurmVersion = SlurmVersion::new(23, 11, 0);

    /// A version from its parts.
    pub const fn new(major: u16, minor: u16, micro: u16) -> SlurmVersion {
        SlurmVersion {
            major,
            minor,
            micro,
        }
    }

    /// Parses the output of `slurmd -V` or `slurmctld -V` (`slurm 22.05.8`, `slurm-wlm
    /// 24.11.5`, `slurm 26.05.5-1`); `source_cmd` names the command in the error.
    pub fn parse_v_output(output: &str, source_cmd: &str) -> Result<SlurmVersion, VersionError> {
        let err = |reason| VersionError {
            source_cmd: source_cmd.to_string(),
            output: output.trim().to_string(),
            reason,
        };
        let mut words = output.split_whitespace();
        let name = words.next().ok_or_else(|| err("it is empty"))?;
        if !name.starts_with("slurm") {
            return Err(err("it does not start with `slurm`"));
        }
        let number = words.next().ok_or_else(|| err("no version number"))?;
        if words.next().is_some() {
            return Err(err("more than two words"));
        }
        // Debian or vendor suffixes (`-1`, `+deb12u3`) follow the micro number.
        let core = number.split(['-', '+', '~']).next().unwrap_or_default();
        let parts: Vec<&str> = core.split('.').collect();
        let [major, minor, micro] = parts.as_slice() else {
            return Err(err("the number is not MAJOR.MINOR.MICRO"));
        };
        let num = |s: &str| {
            s.parse::<u16>()
                .map_err(|_| err("a part of the number is not a whole number"))
        };
        Ok(SlurmVersion::new(num(major)?, num(minor)?, num(micro)?))
    }

    /// Whether `scontrol reconfigure` alone takes added or removed nodes and changed GRES
    /// (see [`SlurmVersion::RECONFIGURE_REEXECS`]).
    pub fn reconfigure_takes_node_changes(self) -> bool {
        self >= SlurmVersion::RECONFIGURE_REEXECS
    }
}

impl fmt::Display for SlurmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}.{}", self.major, self.minor, self.micro)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_the_daemons_print() {
        let v = |s| SlurmVersion::parse_v_output(s, "slurmd -V");
        assert_eq!(v("slurm 22.05.8\n"), Ok(SlurmVersion::new(22, 5, 8)));
        assert_eq!(v("slurm-wlm 24.11.5"), Ok(SlurmVersion::new(24, 11, 5)));
        assert_eq!(v("slurm 26.05.5-1"), Ok(SlurmVersion::new(26, 5, 5)));
        assert_eq!(v("slurm 23.11.4+deb"), Ok(SlurmVersion::new(23, 11, 4)));
        assert_eq!(SlurmVersion::new(22, 5, 8).to_string(), "22.05.8");
    }

    #[test]
    fn refuses_anything_else_naming_the_source() {
        for bad in [
            "",
            "slurmd: command not found",
            "slurm 24.11",
            "slurm x.y.z",
            "munge 0.5",
        ] {
            let e = SlurmVersion::parse_v_output(bad, "slurmctld -V").unwrap_err();
            assert!(e.to_string().contains("slurmctld -V"), "{e}");
        }
    }

    #[test]
    fn reconfigure_reexecs_from_23_11() {
        assert!(!SlurmVersion::new(22, 5, 8).reconfigure_takes_node_changes());
        assert!(!SlurmVersion::new(23, 2, 7).reconfigure_takes_node_changes());
        assert!(SlurmVersion::new(23, 11, 0).reconfigure_takes_node_changes());
        assert!(SlurmVersion::new(24, 11, 5).reconfigure_takes_node_changes());
        assert!(SlurmVersion::new(26, 5, 5).reconfigure_takes_node_changes());
    }
}
