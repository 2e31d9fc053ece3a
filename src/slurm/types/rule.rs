//! What each slurm.conf key's value must be: [`ValueRule`], the one check used by
//! `NodeConf::set`, `Partition::set` and the global overrides, so every boundary (relation
//! data, `node-config`, `partition-config`, `slurm-conf-parameters`, `slurmd -C`) applies
//! Slurm's rules without checks of its own.

use super::VocabError;
use super::duration::SlurmDuration;
use super::flag_list::{self, FlagList};
use super::flags;
use super::integer::{IntWidth, SlurmInt};
use super::plugin::{self, PluginKind};

/// The kind of value a key takes, after Slurm's parser (`read_config.c`'s option tables and
/// the checks that follow them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueRule {
    /// `S_P_STRING` without a checked format: any token (checked by `validate_value`).
    Text,
    /// A time limit ([`SlurmDuration`]).
    Duration,
    /// A finite time limit of at least one minute (`PriorityCalcPeriod`: Slurm stops on
    /// `calc_period < 1`, UNLIMITED included).
    PositiveDuration,
    /// An integer of this width; `true` when `UNLIMITED`/`INFINITE` is meaningful.
    Int(IntWidth, bool),
    /// `S_P_BOOLEAN` (`YES`/`NO`).
    Bool,
    /// Partition `OverSubscribe` / `Shared`.
    OverSubscribe,
    /// The global `PreemptMode`.
    PreemptMode,
    /// A partition's `PreemptMode`.
    PartitionPreemptMode,
    /// Partition `SelectTypeParameters`.
    PartitionCrType,
    /// Partition `OverTimeLimit`.
    OverTimeLimit,
    /// Partition `SuspendTime`.
    SuspendTime,
    /// Partition `QOS`, `AllowQos`, `DenyQos` (no accounting database).
    Qos(&'static str),
    /// Partition `TRESBillingWeights`.
    TresWeights,
    /// A decimal integer in `min..=max` (keys whose value `_validate_and_set_defaults` bounds
    /// further, e.g. `MaxJobCount` ≥ 1, `PropagatePrioProcess` ≤ 2).
    Range(u64, u64),
    /// A key Slurm still parses but stops on (`fatal: ... has been removed`).
    Removed,
    /// A host name or IP address (a node's `BcastAddr`; Slurm reads it as a hostlist and
    /// stops on one it cannot parse).
    HostAddr,
    /// One of these words, any case (`PriorityUsageResetPeriod`: `read_config.c` 4687/4914/4791,
    /// fatal on another word).
    Word(&'static [&'static str]),
    /// A node's `Port`: 1..=65535 (`node_conf.c`: `Invalid Port`, fatal).
    Port,
    /// A plugin of this kind, by a name every supported version ships ([`PluginKind`]).
    Plugin(&'static PluginKind),
    /// `SlurmctldDebug` and friends (`plugin::check_log_level`).
    LogLevel,
    /// `SrunPortRange` (`plugin::check_port_range`).
    PortRange,
    /// A comma list of plugins of this kind (`TaskPlugin`, `JobSubmitPlugins`), each a name
    /// every supported version ships ([`PluginKind::check_list`]).
    PluginList(&'static PluginKind),
    /// A comma list of flag words, or one word, as Slurm's parser for the key reads them
    /// ([`FlagList`]: `DebugFlags`, `PrologFlags`, `EnforcePartLimits`, ...).
    Flags(&'static FlagList),
    /// `RequeueExit`, `RequeueExitHold` (`flag_list::check_exit_codes`).
    ExitCodes,
    /// `Licenses` (`flag_list::check_licenses`).
    Licenses,
    /// `PriorityWeightTRES`: `<TRES>=<weight>` for the TRES Slurm always configures
    /// (`flags::check_priority_tres_weights`).
    PriorityTresWeights,
}

impl ValueRule {
    /// Checks `value` by this rule. `Text` values pass here (their characters are checked by
    /// the caller's token rule).
    pub fn check(self, value: &str) -> Result<(), VocabError> {
        match self {
            ValueRule::Text => Ok(()),
            ValueRule::Duration => SlurmDuration::try_from(value).map(|_| ()),
            ValueRule::PositiveDuration => match SlurmDuration::try_from(value)?.minutes() {
                Some(1..) => Ok(()),
                _ => Err(VocabError::new(
                    "time limit",
                    value,
                    "expected a finite period of at least one minute",
                )),
            },
            ValueRule::Int(width, unlimited) => {
                SlurmInt::parse(value, width, unlimited).map(|_| ())
            }
            ValueRule::Bool => flags::parse_bool(value).map(|_| ()),
            ValueRule::OverSubscribe => flags::check_oversubscribe(value),
            ValueRule::PreemptMode => {
                flags::check_preempt_mode(value, flags::PreemptScope::Cluster)
            }
            ValueRule::PartitionPreemptMode => {
                flags::check_preempt_mode(value, flags::PreemptScope::Partition)
            }
            ValueRule::PartitionCrType => flags::check_partition_cr_type(value),
            ValueRule::OverTimeLimit => flags::check_over_time_limit(value),
            ValueRule::SuspendTime => flags::check_suspend_time(value),
            ValueRule::Range(min, max) => match SlurmInt::parse(value, IntWidth::U64, false) {
                Ok(SlurmInt::Value(n)) if (min..=max).contains(&n) => Ok(()),
                _ => Err(VocabError::new(
                    "number",
                    value,
                    format!("expected a decimal number {min}..={max}"),
                )),
            },
            ValueRule::Removed => Err(VocabError::new(
                "value",
                value,
                "Slurm removed this key and stops on it (fatal: ... has been removed)",
            )),
            ValueRule::HostAddr => {
                let ok = !value.is_empty()
                    && value.len() <= 253
                    && !value.starts_with('-')
                    && value
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
                ok.then_some(()).ok_or_else(|| {
                    VocabError::new(
                        "host address",
                        value,
                        "expected one host name or IP address (letters, digits, '.', '-', ':')",
                    )
                })
            }
            ValueRule::Word(words) => words
                .iter()
                .any(|w| w.eq_ignore_ascii_case(value))
                .then_some(())
                .ok_or_else(|| {
                    VocabError::new(
                        "word",
                        value,
                        format!("expected one of {}", words.join(", ")),
                    )
                }),
            ValueRule::Qos(key) => flags::check_qos(key, value),
            ValueRule::TresWeights => flags::check_tres_weights(value),
            ValueRule::Port => match SlurmInt::parse(value, IntWidth::U16, false) {
                Ok(SlurmInt::Value(1..)) => Ok(()),
                Ok(_) => Err(VocabError::new("port", value, "expected 1..=65533")),
                Err(e) => Err(VocabError { what: "port", ..e }),
            },
            ValueRule::Plugin(kind) => kind.check(value),
            ValueRule::LogLevel => plugin::check_log_level(value),
            ValueRule::PortRange => plugin::check_port_range(value),
            ValueRule::PluginList(kind) => kind.check_list(value),
            ValueRule::Flags(list) => list.check(value),
            ValueRule::ExitCodes => flag_list::check_exit_codes(value),
            ValueRule::Licenses => flag_list::check_licenses(value),
            ValueRule::PriorityTresWeights => flags::check_priority_tres_weights(value),
        }
    }

    /// Whether a value of this rule is a list of `name=value` pairs, so `=` may stand inside
    /// it (`TRESBillingWeights`); record values of any other rule refuse `=`.
    pub fn takes_pairs(self) -> bool {
        matches!(
            self,
            ValueRule::TresWeights | ValueRule::PriorityTresWeights
        )
    }

    /// A short description for docs and messages.
    pub fn describe(self) -> &'static str {
        match self {
            ValueRule::Text => "text token",
            ValueRule::Duration => "time limit (parse_time.c formats)",
            ValueRule::PositiveDuration => "finite time limit >= 1 minute",
            ValueRule::Int(IntWidth::U16, _) => "uint16 0..=65533",
            ValueRule::Int(IntWidth::U32, false) => "uint32 0..=4294967293",
            ValueRule::Int(IntWidth::U32, true) => "uint32 0..=4294967293 or UNLIMITED",
            ValueRule::Int(IntWidth::U64, false) => "uint64 0..=2^64-3",
            ValueRule::Int(IntWidth::U64, true) => "uint64 0..=2^64-3 or UNLIMITED",
            ValueRule::Bool => "YES/NO",
            ValueRule::OverSubscribe => "NO|EXCLUSIVE|YES[:n]|FORCE[:n]",
            ValueRule::PreemptMode => {
                "OFF|CANCEL|REQUEUE|SUSPEND (+,GANG or ,WITHIN); SUSPEND needs GANG"
            }
            ValueRule::PartitionPreemptMode => "OFF|CANCEL|REQUEUE|SUSPEND[,WITHIN]",
            ValueRule::PartitionCrType => "CR_Core[_Memory]|CR_Socket[_Memory]",
            ValueRule::OverTimeLimit => "minutes 0..=65534 or UNLIMITED",
            ValueRule::SuspendTime => "seconds (uint32) or INFINITE/-1",
            ValueRule::Port => "port 1..=65533",
            ValueRule::Qos(_) => "refused (no accounting); AllowQos=ALL",
            ValueRule::Range(..) => "bounded integer",
            ValueRule::HostAddr => "host name or IP address",
            ValueRule::Word(_) => "one of a list of words",
            ValueRule::Removed => "refused (removed from Slurm)",
            ValueRule::TresWeights => "<TRES>=<weight>[,...]",
            ValueRule::Plugin(_) => "<kind>/<plugin> every supported Slurm ships",
            ValueRule::LogLevel => "quiet..debug5 or 0..=9",
            ValueRule::PortRange => "first-last ports",
            ValueRule::PluginList(_) => "<kind>/<plugin>[,...] every supported Slurm ships",
            ValueRule::Flags(list) if list.single => "one of a list of words",
            ValueRule::Flags(_) => "comma list of flag words",
            ValueRule::ExitCodes => "exit codes 0..=255 and ranges, comma list",
            ValueRule::Licenses => "name[:count][,...]",
            ValueRule::PriorityTresWeights => "<default TRES>=<weight>[,...]",
        }
    }
}

const U16: ValueRule = ValueRule::Int(IntWidth::U16, false);
/// A topology count: 1..=65533 (Slurm resets 0 to 1 with an error: "... is invalid, reset").
const COUNT16: ValueRule = ValueRule::Range(1, u16::MAX as u64 - 2);
const U32: ValueRule = ValueRule::Int(IntWidth::U32, false);
const U32_UNLIMITED: ValueRule = ValueRule::Int(IntWidth::U32, true);
const U64: ValueRule = ValueRule::Int(IntWidth::U64, false);
const U64_UNLIMITED: ValueRule = ValueRule::Int(IntWidth::U64, true);

/// Node keys and their rules (`read_config.c` `_parse_nodename`, `_nodename_options`).
pub const NODE_RULES: &[(&str, ValueRule)] = &[
    ("BcastAddr", ValueRule::HostAddr),
    ("Boards", COUNT16),
    ("CoreSpecCount", U16),
    ("CoresPerSocket", COUNT16),
    ("CPUs", COUNT16),
    ("MemSpecLimit", U64),
    ("Port", ValueRule::Port),
    ("Procs", COUNT16),
    ("RealMemory", U64),
    ("Sockets", COUNT16),
    ("SocketsPerBoard", COUNT16),
    ("ThreadsPerCore", COUNT16),
    ("TmpDisk", U32),
    ("Weight", U32),
];

/// Partition keys and their rules (`read_config.c` `_parse_partitionname`).
pub const PARTITION_RULES: &[(&str, ValueRule)] = &[
    ("DefCpuPerGPU", U64),
    ("DefMemPerCPU", U64),
    ("DefMemPerGPU", U64),
    ("DefMemPerNode", U64),
    ("Default", ValueRule::Bool),
    ("DefaultTime", ValueRule::Duration),
    ("DisableRootJobs", ValueRule::Bool),
    ("DenyQos", ValueRule::Qos("DenyQos")),
    ("AllowQos", ValueRule::Qos("AllowQos")),
    ("ExclusiveUser", ValueRule::Bool),
    ("GraceTime", U32),
    ("Hidden", ValueRule::Bool),
    ("LLN", ValueRule::Bool),
    ("MaxCPUsPerNode", U32_UNLIMITED),
    ("MaxMemPerCPU", U64_UNLIMITED),
    ("MaxMemPerNode", U64_UNLIMITED),
    ("MaxNodes", U32_UNLIMITED),
    ("MaxTime", ValueRule::Duration),
    ("MinNodes", U32),
    ("OverSubscribe", ValueRule::OverSubscribe),
    ("OverTimeLimit", ValueRule::OverTimeLimit),
    ("PreemptMode", ValueRule::PartitionPreemptMode),
    ("PriorityJobFactor", U16),
    ("PriorityTier", U16),
    ("QOS", ValueRule::Qos("QOS")),
    ("TRESBillingWeights", ValueRule::TresWeights),
    ("ReqResv", ValueRule::Bool),
    ("ResumeTimeout", U16),
    ("RootOnly", ValueRule::Bool),
    ("SelectTypeParameters", ValueRule::PartitionCrType),
    ("Shared", ValueRule::OverSubscribe),
    ("SuspendTime", ValueRule::SuspendTime),
    ("SuspendTimeout", U16),
];

/// The rule for `key` in `table` (case-insensitive); [`ValueRule::Text`] when not listed.
pub fn rule_for(table: &[(&str, ValueRule)], key: &str) -> ValueRule {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map_or(ValueRule::Text, |(_, r)| *r)
}

/// Checks `value` for `key` by `table`'s rule; the error names the key.
pub fn check_key_value(
    table: &[(&str, ValueRule)],
    key: &'static str,
    value: &str,
) -> Result<(), VocabError> {
    rule_for(table, key)
        .check(value)
        .map_err(|e| VocabError { what: key, ..e })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::types::{closest, global_rule};

    #[test]
    fn tables_name_real_keys_and_suggest() {
        assert_eq!(rule_for(NODE_RULES, "cpus"), COUNT16);
        assert_eq!(rule_for(PARTITION_RULES, "maxtime"), ValueRule::Duration);
        assert_eq!(rule_for(PARTITION_RULES, "AllowGroups"), ValueRule::Text);
        assert_eq!(global_rule("minjobage"), Some(("MinJobAge", U32)));
        assert_eq!(global_rule("MaxJobCont"), None);
        let keys = super::super::global_keys::GLOBAL_KEYS
            .iter()
            .map(|(k, _)| *k);
        assert_eq!(closest(keys, "MaxJobCont"), Some("MaxJobCount"));
        let keys = super::super::global_keys::GLOBAL_KEYS
            .iter()
            .map(|(k, _)| *k);
        assert_eq!(closest(keys, "zzzzzzzz"), None);
        let e = check_key_value(PARTITION_RULES, "MaxTime", "1hour").unwrap_err();
        assert!(e.to_string().contains("MaxTime"), "{e}");
    }
}
