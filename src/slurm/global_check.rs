//! Checks of operator `slurm-conf-parameters` pairs by Slurm's rules: each key and value on
//! its own, and the rules between keys that stop slurmctld.

use super::error::ConfigError;
use super::validate::validate_value;

/// Checks a pass-through global `key=value` by Slurm's rules: the key must be one Slurm
/// 22.05, 24.11 and 26.05 all know ([`crate::slurm::types::GLOBAL_KEYS`]; otherwise the
/// error suggests the closest known key) and the value must be a token of the key's type.
/// Returns the key in Slurm's spelling.
pub fn check_global(key: &str, value: &str) -> Result<&'static str, ConfigError> {
    use crate::slurm::types::{GLOBAL_KEYS, closest, global_rule};
    let Some((canon, rule)) = global_rule(key) else {
        let hint = closest(GLOBAL_KEYS.iter().map(|(k, _)| *k), key)
            .map(|k| format!("; did you mean {k}?"))
            .unwrap_or_default();
        return Err(ConfigError::InvalidKey {
            key: key.to_string(),
            context: "slurm-conf-parameters".to_string(),
            reason: format!(
                "not a slurm.conf key of Slurm 22.05, 24.11 and 26.05 (slurmctld would stop on it){hint}"
            ),
        });
    };
    validate_value(canon, value)?;
    rule.check(value)
        .map_err(|e| crate::slurm::types::VocabError { what: canon, ..e })?;
    Ok(canon)
}

/// The rules between global keys that `_validate_and_set_defaults` enforces (each a fatal
/// error): `FirstJobId` ≤ `MaxJobId` (defaults 1 and `0x03ff0000`), and a non-zero
/// `SlurmSchedLogLevel` needs `SlurmSchedLogFile`; `PriorityDecayHalfLife=0` needs
/// `PriorityUsageResetPeriod` (`read_config.c` 4695/4922/4799); `PreemptMode` must fit
/// `PreemptType` ("PreemptType and PreemptMode values incompatible", 22.05 l.4562-4577). `pairs` are canonical keys.
pub fn check_globals_together(pairs: &[(&str, &str)]) -> Result<(), ConfigError> {
    use crate::slurm::types::DEFAULT_MAX_JOB_ID;
    let get = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let num = |key: &str, default: u64| get(key).and_then(|v| v.parse().ok()).unwrap_or(default);
    if num("FirstJobId", 1) > num("MaxJobId", DEFAULT_MAX_JOB_ID) {
        return Err(ConfigError::invalid(
            "FirstJobId",
            get("FirstJobId").unwrap_or("1"),
            format!(
                "larger than MaxJobId ({}); Slurm stops on FirstJobId > MaxJobId",
                num("MaxJobId", DEFAULT_MAX_JOB_ID)
            ),
        ));
    }
    let decay_zero = get("PriorityDecayHalfLife")
        .and_then(|v| crate::slurm::types::SlurmDuration::try_from(v).ok())
        .is_some_and(|d| d.minutes() == Some(0));
    if decay_zero && get("PriorityUsageResetPeriod").is_none() {
        return Err(ConfigError::invalid(
            "PriorityDecayHalfLife",
            get("PriorityDecayHalfLife").unwrap_or_default(),
            "0 needs PriorityUsageResetPeriod (Slurm stops: usage would roll over)",
        ));
    }
    if get("PreemptMode").is_some() || get("PreemptType").is_some() {
        let mode = get("PreemptMode").unwrap_or("OFF");
        let words: Vec<String> = mode.split(',').map(str::to_ascii_uppercase).collect();
        let off = !words
            .iter()
            .any(|w| ["CANCEL", "REQUEUE", "SUSPEND", "ON"].contains(&w.as_str()));
        let within = words.iter().any(|w| w == "WITHIN");
        let preempt_type = get("PreemptType").unwrap_or("preempt/none");
        let bad = match preempt_type {
            "preempt/none" => !off || within,
            "preempt/qos" | "preempt/partition_prio" => off,
            _ => false,
        };
        if bad {
            return Err(ConfigError::invalid(
                "PreemptMode",
                mode,
                format!(
                    "incompatible with PreemptType={preempt_type} (preempt/none takes only OFF or GANG; \
                     preempt/qos and preempt/partition_prio need CANCEL, REQUEUE or SUSPEND): Slurm stops"
                ),
            ));
        }
    }
    if num("SlurmSchedLogLevel", 0) != 0 && get("SlurmSchedLogFile").is_none() {
        return Err(ConfigError::invalid(
            "SlurmSchedLogLevel",
            get("SlurmSchedLogLevel").unwrap_or_default(),
            "needs SlurmSchedLogFile (Slurm stops without it)",
        ));
    }
    Ok(())
}
