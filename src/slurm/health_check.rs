//! slurm.conf's health-check keys as the controller writes them: `HealthCheckInterval` and
//! `HealthCheckNodeState`, parsed once from the slurmctld options `health-check-interval` and
//! `health-check-node-state` by Slurm's rules (slurm.conf.5). `HealthCheckProgram` is fixed
//! ([`super::GlobalKey::HealthCheckProgram`]): the slurmd charm installs the program there.

use super::version::SlurmVersion;

/// The default interval: a GPU fault drains its node within a minute, at the cost of one short
/// run of the program (NVML plus the kernel log; tens of milliseconds) per node per minute.
pub const DEFAULT_INTERVAL: u32 = 60;
/// The default node states: every node, drained ones included, so the program can also
/// resume a node it drained and checks nodes that run jobs.
pub const DEFAULT_NODE_STATE: &str = "ANY";

/// Node-state words of `HealthCheckNodeState` on every supported version (the same list as
/// [`super::types::global_rule`]'s, `_health_node_state`).
const STATES: [&str; 5] = ["ALLOC", "ANY", "CYCLE", "IDLE", "MIXED"];
/// Words only newer Slurm reads, with the first version that does (`NONDRAINED_IDLE` 24.11;
/// `START_ONLY` 25.11 per the issue, `REBOOT_ONLY` 26.05, both in 26.05's slurm.conf.5).
const NEWER_STATES: [(&str, SlurmVersion); 3] = [
    ("NONDRAINED_IDLE", SlurmVersion::new(24, 11, 0)),
    ("START_ONLY", SlurmVersion::new(25, 11, 0)),
    ("REBOOT_ONLY", SlurmVersion::new(26, 5, 0)),
];
/// The first version here with `HealthCheckTimeout` (default 60 s, and an error logged unless
/// it is below `HealthCheckInterval`): 26.05's slurm.conf.5 has it, 24.11's has not.
pub const TIMEOUT_SINCE: SlurmVersion = SlurmVersion::new(26, 5, 0);
/// The most `HealthCheckTimeout` the charm writes: the program ends within about 35 s
/// (15 s NVML deadline, 10 s each for `sinfo` and `scontrol`).
pub const MAX_TIMEOUT: u32 = 45;

/// The checked health-check settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    /// `HealthCheckInterval` (seconds; 0 turns the periodic check off).
    pub interval: u32,
    /// `HealthCheckNodeState`, upper-case, comma-separated.
    pub node_state: String,
    /// `HealthCheckTimeout` (Slurm [`TIMEOUT_SINCE`] and newer, periodic checks only):
    /// below the interval, at most [`MAX_TIMEOUT`].
    pub timeout: Option<u32>,
}

impl Default for HealthCheck {
    fn default() -> Self {
        HealthCheck {
            interval: DEFAULT_INTERVAL,
            node_state: DEFAULT_NODE_STATE.to_owned(),
            timeout: None,
        }
    }
}

/// Why a health-check option cannot be written to slurm.conf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HealthCheckError {
    /// The interval is not a whole number of seconds Slurm takes.
    #[error(
        "config option `health-check-interval`: {value} is not a number of seconds from 0 to \
         65535 (0 turns the check off; default {DEFAULT_INTERVAL})"
    )]
    Interval {
        /// The value given.
        value: String,
    },
    /// A node state Slurm does not know.
    #[error(
        "config option `health-check-node-state`: {word:?} is not one of ANY, ALLOC, IDLE, \
         MIXED, CYCLE (comma-separated; NONDRAINED_IDLE from Slurm 24.11, START_ONLY from \
         25.11, REBOOT_ONLY from 26.05)"
    )]
    NodeState {
        /// The word refused.
        word: String,
    },
    /// An interval of 1 s on a Slurm with `HealthCheckTimeout`, which must be below it.
    #[error(
        "config option `health-check-interval`: 1 s leaves no HealthCheckTimeout below it on \
         Slurm {installed}; use 0 (off) or 2 or more"
    )]
    IntervalTooShort {
        /// The installed version.
        installed: SlurmVersion,
    },
    /// A node state the installed Slurm is too old for.
    #[error(
        "config option `health-check-node-state`: {word} needs Slurm {since} or newer \
         (installed: {installed}); use ANY"
    )]
    TooOld {
        /// The word.
        word: &'static str,
        /// The first version that reads it.
        since: SlurmVersion,
        /// The installed version.
        installed: SlurmVersion,
    },
}

impl HealthCheck {
    /// Parses the two options (`interval` as Juju gives an `int` option; `None`: unset, the
    /// default) for the installed Slurm (`None`: unknown, `START_ONLY` is let through).
    pub fn parse(
        interval: Option<i64>,
        node_state: &str,
        version: Option<SlurmVersion>,
    ) -> Result<HealthCheck, HealthCheckError> {
        let interval = match interval {
            None => DEFAULT_INTERVAL,
            Some(v) => u32::try_from(v)
                .ok()
                .filter(|v| *v <= u32::from(u16::MAX))
                .ok_or(HealthCheckError::Interval {
                    value: v.to_string(),
                })?,
        };
        let node_state = node_state.trim();
        let node_state = if node_state.is_empty() {
            DEFAULT_NODE_STATE.to_owned()
        } else {
            node_state.to_ascii_uppercase()
        };
        for word in node_state.split(',') {
            if let Some((word, since)) = NEWER_STATES.iter().find(|(w, _)| *w == word) {
                if let Some(installed) = version.filter(|v| v < since) {
                    return Err(HealthCheckError::TooOld {
                        word,
                        since: *since,
                        installed,
                    });
                }
            } else if !STATES.contains(&word) {
                return Err(HealthCheckError::NodeState {
                    word: word.to_owned(),
                });
            }
        }
        let timeout = match version.filter(|v| *v >= TIMEOUT_SINCE) {
            Some(installed) if interval == 1 => {
                return Err(HealthCheckError::IntervalTooShort { installed });
            }
            Some(_) if interval >= 2 => Some((interval - 1).min(MAX_TIMEOUT)),
            _ => None,
        };
        Ok(HealthCheck {
            interval,
            node_state,
            timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_refusals() {
        assert_eq!(
            HealthCheck::parse(None, "", None),
            Ok(HealthCheck::default())
        );
        let hc = HealthCheck::parse(Some(10), "idle,cycle", None).unwrap();
        assert_eq!((hc.interval, hc.node_state.as_str()), (10, "IDLE,CYCLE"));
        for bad in [-1, 65_536] {
            assert!(matches!(
                HealthCheck::parse(Some(bad), "ANY", None),
                Err(HealthCheckError::Interval { .. })
            ));
        }
        assert!(matches!(
            HealthCheck::parse(None, "ANY,BUSY", None),
            Err(HealthCheckError::NodeState { word }) if word == "BUSY"
        ));
        let old = SlurmVersion::new(24, 11, 0);
        assert!(HealthCheck::parse(None, "NONDRAINED_IDLE", Some(old)).is_ok());
        assert!(matches!(
            HealthCheck::parse(None, "NONDRAINED_IDLE", Some(SlurmVersion::new(22, 5, 8))),
            Err(HealthCheckError::TooOld { .. })
        ));
        assert!(matches!(
            HealthCheck::parse(None, "START_ONLY", Some(old)),
            Err(HealthCheckError::TooOld {
                word: "START_ONLY",
                ..
            })
        ));
        let new = SlurmVersion::new(26, 5, 0);
        assert!(HealthCheck::parse(None, "START_ONLY", Some(new)).is_ok());
        // HealthCheckTimeout below the interval, only where Slurm knows it
        assert_eq!(
            HealthCheck::parse(None, "", Some(new)).unwrap().timeout,
            Some(45)
        );
        assert_eq!(
            HealthCheck::parse(Some(5), "", Some(new)).unwrap().timeout,
            Some(4)
        );
        assert_eq!(
            HealthCheck::parse(Some(0), "", Some(new)).unwrap().timeout,
            None
        );
        assert_eq!(
            HealthCheck::parse(None, "", Some(old)).unwrap().timeout,
            None
        );
        assert!(matches!(
            HealthCheck::parse(Some(1), "", Some(new)),
            Err(HealthCheckError::IntervalTooShort { .. })
        ));
    }
}
