//! The `RealMemory` a node publishes: `slurmd -C`'s value less the `memory-headroom` config
//! option, rounded down so that machines of one model publish the same number.
//!
//! Why below `slurmd -C`: slurmctld drains a node that registers with less memory than
//! slurm.conf gives it (`Low RealMemory (reported:… < 100.00% of configured:…)`, from
//! `validate_node_specs` in Slurm's `src/slurmctld/node_mgr.c`; the tolerance,
//! `node_reg_mem_percent`, is 100% for all but cloud nodes). A kernel or firmware update that
//! takes 1 MB more would drain the node until the charm republishes, and identical machines
//! that differ by a few MB would never share a node line. SchedMD's advice is to under-specify
//! `RealMemory` (cgroup.conf(5): "RealMemory should be defined with less than the actual amount
//! of memory for a node"; SchedMD bug 3415, as quoted by stackhpc/ansible-role-openhpc#92).
//!
//! The default, [`DEFAULT_HEADROOM`] (2%), is small because the charm already keeps
//! `MemSpecLimit` (up to 1 GiB) for the system: the headroom only has to absorb drift (a new
//! kernel's or firmware's reservations: megabytes to a few hundred MB) and the differences
//! between machines of one model. Rounding then takes at most 1/128 (0.8%) more.

/// `memory-headroom` when the option is empty: 2% of `slurmd -C`'s `RealMemory`.
pub const DEFAULT_HEADROOM: MemoryHeadroom = MemoryHeadroom::Percent(2);

/// The largest percentage `memory-headroom` accepts (more would hide half the node).
pub const MAX_PERCENT: u8 = 50;

/// How much below `slurmd -C`'s `RealMemory` the node is published (`memory-headroom`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryHeadroom {
    /// A percentage of `RealMemory` (`"2%"`), rounded up to whole MB.
    Percent(u8),
    /// A fixed amount in MB (`"4096"`).
    Mb(u64),
}

impl Default for MemoryHeadroom {
    fn default() -> Self {
        DEFAULT_HEADROOM
    }
}

/// A `memory-headroom` value the charm does not accept. The unit blocks with it and keeps the
/// record it published; `node-config` refuses with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadroomError {
    /// Not `<N>%` or `<N>` (MB).
    #[error(
        "memory-headroom {0:?} is not a percentage (e.g. \"2%\") or a number of MB (e.g. \"4096\"); \
         fix it with `juju config <app> memory-headroom=2%`"
    )]
    Syntax(String),
    /// A percentage over [`MAX_PERCENT`].
    #[error(
        "memory-headroom {0}% is over {MAX_PERCENT}%; set a smaller share with `juju config <app> memory-headroom=2%`"
    )]
    TooManyPercent(u64),
    /// A fixed amount that leaves nothing of this node's memory.
    #[error(
        "memory-headroom {headroom} MB is not below this node's RealMemory ({real} MB from \
         `slurmd -C`); lower it, e.g. `juju config <app> memory-headroom=2%`"
    )]
    AboveRealMemory {
        /// The headroom, MB.
        headroom: u64,
        /// `slurmd -C`'s `RealMemory`, MB.
        real: u64,
    },
}

impl MemoryHeadroom {
    /// Parses the option: `<N>%` (0 to [`MAX_PERCENT`]) or `<N>` MB; surrounding blanks are
    /// ignored and an empty value is [`DEFAULT_HEADROOM`].
    pub fn parse(text: &str) -> Result<Self, HeadroomError> {
        let t = text.trim();
        if t.is_empty() {
            return Ok(DEFAULT_HEADROOM);
        }
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten()
                .ok_or_else(|| HeadroomError::Syntax(text.to_owned()))
        };
        match t.strip_suffix('%') {
            Some(p) => {
                let p = number(p.trim_end())?;
                match u8::try_from(p) {
                    Ok(p) if p <= MAX_PERCENT => Ok(MemoryHeadroom::Percent(p)),
                    _ => Err(HeadroomError::TooManyPercent(p)),
                }
            }
            None => Ok(MemoryHeadroom::Mb(number(t)?)),
        }
    }

    /// The headroom in MB for a node of `real` MB.
    pub fn mb(self, real: u64) -> u64 {
        match self {
            MemoryHeadroom::Percent(p) => real.saturating_mul(u64::from(p)).div_ceil(100),
            MemoryHeadroom::Mb(mb) => mb,
        }
    }

    /// The `RealMemory` to publish for `real` MB from `slurmd -C`: `real` less the headroom,
    /// rounded down to a multiple of [`granularity`]. Always at least 1 and at most `real`;
    /// machines whose `real` differ by a few MB publish the same value unless a multiple of
    /// the granularity falls between them.
    pub fn published(self, real: u64) -> Result<u64, HeadroomError> {
        let headroom = self.mb(real);
        let left = real
            .checked_sub(headroom)
            .filter(|l| *l > 0)
            .ok_or(HeadroomError::AboveRealMemory { headroom, real })?;
        let g = granularity(left);
        Ok(left / g * g)
    }
}

/// The rounding step for `mb` of memory: the largest power of two not above `mb / 128` (1 when
/// that is 0), so rounding down takes less than 1/128 of the memory: 2048 MB at 500 GB,
/// 128 MB at 31 GB, 1 MB below 256 MB.
pub fn granularity(mb: u64) -> u64 {
    match mb / 128 {
        0 => 1,
        q => 1 << q.ilog2(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_of_one_model_fold() {
        let h = MemoryHeadroom::default();
        let a = h.published(515_000).unwrap();
        let b = h.published(514_998).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, 503_808);
        // A later kernel taking 1 MB more still publishes the same (no republish, no drain).
        assert_eq!(h.published(514_999).unwrap(), a);
        assert!(a <= 515_000 - 10_300);
    }

    #[test]
    fn published_stays_between_one_and_real_less_headroom() {
        for h in [
            MemoryHeadroom::Percent(0),
            MemoryHeadroom::Percent(2),
            MemoryHeadroom::Percent(50),
            MemoryHeadroom::Mb(1024),
        ] {
            for real in [
                2_000,
                8_000,
                24_105,
                31_848,
                128_887,
                2_063_937,
                u64::MAX / 200,
            ] {
                let p = h.published(real).unwrap();
                let left = real - h.mb(real);
                assert!(p >= 1 && p <= left, "{h:?} {real} -> {p}");
                assert!(
                    p > left - left / 128 - 1,
                    "{h:?} {real} -> {p}: rounded too far"
                );
            }
        }
        assert_eq!(MemoryHeadroom::Percent(2).published(31_848), Ok(31_104));
        assert_eq!(MemoryHeadroom::Percent(0).published(1), Ok(1));
        assert_eq!(MemoryHeadroom::Percent(2).published(100), Ok(98));
    }

    #[test]
    fn option_values() {
        assert_eq!(MemoryHeadroom::parse(""), Ok(DEFAULT_HEADROOM));
        assert_eq!(
            MemoryHeadroom::parse(" 5% "),
            Ok(MemoryHeadroom::Percent(5))
        );
        assert_eq!(MemoryHeadroom::parse("0"), Ok(MemoryHeadroom::Mb(0)));
        assert_eq!(MemoryHeadroom::parse("4096"), Ok(MemoryHeadroom::Mb(4096)));
        for bad in ["2.5%", "-1", "%", "2 MB", "x", "99999999999999999999999"] {
            let e = MemoryHeadroom::parse(bad).unwrap_err();
            assert!(matches!(e, HeadroomError::Syntax(_)), "{bad}: {e}");
            assert!(e.to_string().contains("juju config"), "{e}");
        }
        assert_eq!(
            MemoryHeadroom::parse("51%"),
            Err(HeadroomError::TooManyPercent(51))
        );
        let e = MemoryHeadroom::Mb(8000).published(8000).unwrap_err();
        assert!(e.to_string().contains("8000 MB"), "{e}");
    }

    #[test]
    fn granularity_is_a_power_of_two_under_a_128th() {
        assert_eq!(granularity(0), 1);
        assert_eq!(granularity(255), 1);
        assert_eq!(granularity(256), 2);
        assert_eq!(granularity(504_700), 2048);
        assert_eq!(granularity(31_211), 128);
    }
}
