//! Comma lists of flag words (`DebugFlags=Backfill,Gres`), exit-code lists
//! (`RequeueExit=1,5-9`) and license lists (`Licenses=fluent:4,matlab`): global keys whose
//! value Slurm splits on `,` and reads word by word. Each [`FlagList`] holds the words that
//! Slurm 22.05, 24.11 **and** 26.05 all read (the `xstrcasecmp` chains of the named function
//! at tags slurm-22-05-8-1, slurm-24-11-5-1 and slurm-26-05-3-1), so a value never breaks on
//! upgrade; a word only newer versions know (`DebugFlags=AuditRPCs`, `PrologFlags=RunInJob`)
//! is refused.

use super::VocabError;
use super::closest::closest;

/// The words one key takes, as Slurm's parser for it reads them.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FlagList {
    /// The Slurm function (or `read_config.c` block) that reads the key, for messages.
    pub parser: &'static str,
    /// The words every supported version accepts, in Slurm's spelling.
    pub words: &'static [&'static str],
    /// Groups of words of which at most one may be given (`TaskPluginParam`'s binding unit).
    pub exclusive: &'static [&'static [&'static str]],
    /// Words that must stand alone (`PropagateResourceLimits=ALL`).
    pub alone: &'static [&'static str],
    /// Whether only one word is taken (no comma list).
    pub single: bool,
    /// Whether Slurm compares case-sensitively (`parse_rlimits` uses `xstrcmp`).
    pub case_sensitive: bool,
    /// Why words Slurm also knows are refused, when it is more than a typo (added to errors).
    pub note: &'static str,
}

impl FlagList {
    fn same(&self, a: &str, b: &str) -> bool {
        if self.case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(b)
        }
    }

    fn bad(&self, value: &str, why: String) -> VocabError {
        VocabError::new("flag list", value, format!("{why}{}", self.note))
    }

    /// Checks a value: one word (`single`) or a comma list of known words, each at most once,
    /// no empty item, at most one word of each exclusive group, `alone` words alone. The
    /// error names the unknown word, the closest known one and the accepted words.
    pub fn check(&self, value: &str) -> Result<(), VocabError> {
        let items: Vec<&str> = value.split(',').collect();
        if self.single && items.len() > 1 {
            return Err(self.bad(
                value,
                format!(
                    "expected one word of {} ({})",
                    self.words.join(", "),
                    self.parser
                ),
            ));
        }
        for (i, item) in items.iter().enumerate() {
            if !self.words.iter().any(|w| self.same(w, item)) {
                let hint = closest(self.words.iter().copied(), item)
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                let what = if item.is_empty() {
                    "an empty item".to_string()
                } else {
                    format!("{item:?}")
                };
                return Err(self.bad(
                    value,
                    format!(
                        "{what} is not a word Slurm 22.05, 24.11 and 26.05 all read ({}); {hint}expected {}{}",
                        self.parser,
                        if self.single { "one of " } else { "a comma list of " },
                        self.words.join(", ")
                    ),
                ));
            }
            if items[..i].iter().any(|prev| self.same(prev, item)) {
                return Err(self.bad(value, format!("{item:?} is given twice")));
            }
            if items.len() > 1 && self.alone.iter().any(|w| self.same(w, item)) {
                return Err(self.bad(value, format!("{item} must stand alone")));
            }
        }
        for group in self.exclusive {
            let given: Vec<&str> = items
                .iter()
                .copied()
                .filter(|item| group.iter().any(|w| self.same(w, item)))
                .collect();
            if given.len() > 1 {
                return Err(self.bad(
                    value,
                    format!(
                        "{} cannot be combined (at most one of {}; Slurm stops)",
                        given.join(" and "),
                        group.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A list without groups or lone words, compared case-insensitively.
const fn list(parser: &'static str, words: &'static [&'static str]) -> FlagList {
    FlagList {
        parser,
        words,
        exclusive: &[],
        alone: &[],
        single: false,
        case_sensitive: false,
        note: "",
    }
}

/// One word of `words`, any case.
const fn word(parser: &'static str, words: &'static [&'static str]) -> FlagList {
    FlagList {
        single: true,
        ..list(parser, words)
    }
}

/// `DebugFlags` (`debug_str2flags`, `read_config.c`; "DebugFlags invalid", fatal). `Task` is
/// left out: 24.11 and 26.05 log "DebugFlag Task has been removed"; `FrontEnd`, `ExtSensors`,
/// `TimeCray`, `AuditRPCs`, `ConMgr`, `TLS`, ... exist in some versions only.
pub const DEBUG_FLAGS: FlagList = list(
    "debug_str2flags",
    &[
        "Accrue",
        "Agent",
        "Backfill",
        "BackfillMap",
        "BurstBuffer",
        "Cgroup",
        "CPU_Bind",
        "CpuFrequency",
        "Data",
        "DB_Archive",
        "DB_Assoc",
        "DB_Event",
        "DB_Job",
        "DB_QOS",
        "DB_Query",
        "DB_Reservation",
        "DB_Resource",
        "DB_Step",
        "DB_TRES",
        "DB_Usage",
        "DB_WCKey",
        "Dependency",
        "Elasticsearch",
        "Energy",
        "Federation",
        "Gang",
        "Gres",
        "Hetjob",
        "Interconnect",
        "JAG",
        "JobAccountGather",
        "JobContainer",
        "License",
        "MPI",
        "Net",
        "NetRaw",
        "Network",
        "NetworkRaw",
        "NO_CONF_HASH",
        "NodeFeatures",
        "Power",
        "PowerSave",
        "Priority",
        "Profile",
        "Protocol",
        "Reservation",
        "Route",
        "Script",
        "SelectType",
        "Steps",
        "Switch",
        "TraceJobs",
        "Trigger",
        "Triggers",
        "WorkQ",
        "WorkQueue",
    ],
);

/// `PrologFlags` (`prolog_str2flags`; "PrologFlags invalid", fatal; `NoHold` with `Contain`:
/// "invalid combination", fatal). `X11` is left out: it needs Slurm built with X11 forwarding
/// and stops slurmctld with `proctrack/linuxproc`; `RunInJob` and `ForceRequeueOnFail` are
/// 24.11+.
pub const PROLOG_FLAGS: FlagList = FlagList {
    exclusive: &[&["NoHold", "Contain"]],
    ..list(
        "prolog_str2flags",
        &["Alloc", "Contain", "DeferBatch", "NoHold", "Serial"],
    )
};

/// `ReconfigFlags` (`reconfig_str2flags`: an unknown word logs "Invalid ReconfigFlag" and
/// returns `NO_VAL16`, which `read_config.c` does not catch (it tests `0xffff`), so slurmctld
/// runs with every flag bit set). `KeepPowerSaveSettings` is 24.11+.
pub const RECONFIG_FLAGS: FlagList = list("reconfig_str2flags", &["KeepPartInfo", "KeepPartState"]);

/// `HealthCheckNodeState` (`_health_node_state`: an unknown word is "ignored" with an error,
/// so the health check would run in states the operator did not ask for). `NONDRAINED_IDLE`
/// is 24.11+, `START_ONLY`/`REBOOT_ONLY` 26.05.
pub const HEALTH_CHECK_NODE_STATE: FlagList = list(
    "_health_node_state",
    &["ALLOC", "ANY", "CYCLE", "IDLE", "MIXED"],
);

/// `AccountingStorageEnforce` (`_validate_accounting_storage_enforce`; "AccountingStorageEnforce
/// invalid", fatal). Without slurmdbd (the charm accepts only `accounting_storage/none`)
/// slurmctld logs "You can not have AccountingStorageEnforce set" and ignores it.
pub const ACCOUNTING_STORAGE_ENFORCE: FlagList = list(
    "_validate_accounting_storage_enforce",
    &[
        "associations",
        "limits",
        "qos",
        "safe",
        "wckeys",
        "all",
        "nojobs",
        "nosteps",
    ],
);

/// `AccountingStoreFlags` (`read_config.c` reads it with `xstrcasestr`: another word is
/// silently ignored). `job_extra` and `no_stdio` are 24.11+.
pub const ACCOUNTING_STORE_FLAGS: FlagList = list(
    "_validate_and_set_defaults",
    &["job_comment", "job_env", "job_script"],
);

/// `PriorityFlags` (`read_config.c` reads it with `xstrcasestr`: another word is silently
/// ignored). `MAX_TRES_GRES` is 26.05 only. `DEPTH_OBLIVIOUS` and `NO_FAIR_TREE` (which turn
/// fair tree off) are left out: slurmctld 24.11.5 exits right after "Running as primary
/// controller" with either (found by `tests/slurm_value_proptest.rs`).
pub const PRIORITY_FLAGS: FlagList = list(
    "_validate_and_set_defaults",
    &[
        "ACCRUE_ALWAYS",
        "CALCULATE_RUNNING",
        "INCR_ONLY",
        "MAX_TRES",
        "NO_NORMAL_ALL",
        "NO_NORMAL_ASSOC",
        "NO_NORMAL_PART",
        "NO_NORMAL_QOS",
        "NO_NORMAL_TRES",
        "SMALL_RELATIVE_TO_TIME",
    ],
);

/// `PrivateData` (`read_config.c` reads it with `xstrcasestr`: another word is silently
/// ignored, so data meant private stays visible). `cloud` is 22.05 only.
pub const PRIVATE_DATA: FlagList = list(
    "_validate_and_set_defaults",
    &[
        "accounts",
        "events",
        "jobs",
        "nodes",
        "partitions",
        "reservations",
        "usage",
        "users",
        "all",
    ],
);

/// `PropagateResourceLimits` and `...Except` (`parse_rlimits`, `slurm_rlimits_info.c`:
/// case-sensitive, "Bad PropagateResourceLimits", fatal): `ALL`, `NONE` or a list of rlimit
/// names, each optionally `RLIMIT_`-prefixed.
pub const RLIMITS: FlagList = FlagList {
    alone: &["ALL", "NONE"],
    case_sensitive: true,
    ..list(
        "parse_rlimits",
        &[
            "ALL",
            "NONE",
            "AS",
            "CORE",
            "CPU",
            "DATA",
            "FSIZE",
            "MEMLOCK",
            "NOFILE",
            "NPROC",
            "RSS",
            "STACK",
            "RLIMIT_AS",
            "RLIMIT_CORE",
            "RLIMIT_CPU",
            "RLIMIT_DATA",
            "RLIMIT_FSIZE",
            "RLIMIT_MEMLOCK",
            "RLIMIT_NOFILE",
            "RLIMIT_NPROC",
            "RLIMIT_RSS",
            "RLIMIT_STACK",
        ],
    )
};

/// `TaskPluginParam` (`read_config.c`: "Bad TaskPluginParam", fatal): at most one binding
/// unit and one `autobind=`. `OOMKillStep` (24.11+) and `SlurmdSpecOverride` (26.05) are left
/// out.
pub const TASK_PLUGIN_PARAM: FlagList = FlagList {
    exclusive: &[
        &["none", "sockets", "cores", "threads"],
        &[
            "autobind=none",
            "autobind=sockets",
            "autobind=cores",
            "autobind=threads",
        ],
    ],
    ..list(
        "_validate_and_set_defaults",
        &[
            "none",
            "sockets",
            "cores",
            "threads",
            "verbose",
            "autobind=none",
            "autobind=sockets",
            "autobind=cores",
            "autobind=threads",
            "SlurmdOffSpec",
        ],
    )
};

/// `CpuFreqGovernors` (`cpu_freq_verify_govlist`, `cpu_frequency.c`: a bad list is "ignored"
/// with an error and the default used).
pub const CPU_FREQ_GOVERNORS: FlagList = list(
    "cpu_freq_verify_govlist",
    &[
        "Conservative",
        "OnDemand",
        "Performance",
        "PowerSave",
        "SchedUtil",
        "UserSpace",
    ],
);

/// `CpuFreqDef` (`cpu_freq_verify_def`: one governor, not `UserSpace`; another value is
/// "ignored" with an error).
pub const CPU_FREQ_DEF: FlagList = word(
    "cpu_freq_verify_def",
    &[
        "Conservative",
        "OnDemand",
        "Performance",
        "PowerSave",
        "SchedUtil",
    ],
);

/// `EnforcePartLimits` (`parse_part_enforce_type`; "Bad EnforcePartLimits", fatal).
pub const ENFORCE_PART_LIMITS: FlagList = word(
    "parse_part_enforce_type",
    &[
        "ALL", "ANY", "NO", "YES", "TRUE", "FALSE", "UP", "DOWN", "0", "1",
    ],
);

/// `LogTimeFormat` (`read_config.c` reads it with `xstrcasestr`: another word silently keeps
/// the default). `rfc3339` and `format_stderr` are 24.11+.
pub const LOG_TIME_FORMAT: FlagList = word(
    "_validate_and_set_defaults",
    &[
        "iso8601_ms",
        "iso8601",
        "rfc5424_ms",
        "rfc5424",
        "clock",
        "short",
        "thread_id",
    ],
);

/// Slurm's `MAX_EXIT_VAL`: the largest exit code `RequeueExit` may name.
pub const MAX_EXIT_VAL: u32 = 255;

/// `RequeueExit`, `RequeueExitHold` (`_make_requeue_array`, `job_mgr.c`): a comma list of exit
/// codes and `a-b` ranges, 0..=255. Slurm logs "exit values" errors and drops a bad entry,
/// so a job would not be requeued as asked: refused here.
pub fn check_exit_codes(value: &str) -> Result<(), VocabError> {
    let code = |s: &str| -> Option<u32> {
        let digits = !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
        let no_octal = s.len() == 1 || !s.starts_with('0');
        (digits && no_octal)
            .then(|| s.parse().ok())
            .flatten()
            .filter(|n| *n <= MAX_EXIT_VAL)
    };
    let item_ok = |item: &str| match item.split_once('-') {
        Some((a, b)) => matches!((code(a), code(b)), (Some(a), Some(b)) if a <= b),
        None => code(item).is_some(),
    };
    if value.split(',').all(item_ok) {
        return Ok(());
    }
    Err(VocabError::new(
        "exit codes",
        value,
        format!(
            "expected a comma list of exit codes 0..={MAX_EXIT_VAL} or ranges a-b (e.g. 1,5-9)"
        ),
    ))
}

/// `Licenses` (`_build_license_list`, `licenses.c`: "Invalid configured licenses", fatal): a
/// comma list of `name` or `name:count`, each name once, the count 0..=999999999.
pub fn check_licenses(value: &str) -> Result<(), VocabError> {
    let mut names: Vec<&str> = Vec::new();
    for item in value.split(',') {
        let (name, count) = item.split_once(':').unwrap_or((item, "1"));
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name.as_bytes()[0].is_ascii_alphabetic()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        let count_ok = !count.is_empty()
            && count.len() <= 9
            && count.bytes().all(|b| b.is_ascii_digit())
            && (count.len() == 1 || !count.starts_with('0'));
        if !(name_ok && count_ok) {
            return Err(VocabError::new(
                "licenses",
                value,
                "expected a comma list of name or name:count (a name of letters, digits, '_', '-', '.'; a count 0..=999999999), e.g. fluent:4,matlab",
            ));
        }
        if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return Err(VocabError::new(
                "licenses",
                value,
                format!("license {name} is listed twice"),
            ));
        }
        names.push(name);
    }
    Ok(())
}

/// `MpiDefault`: a bare name (`mpi/<name>` is loaded; "Couldn't load specified plugin" when
/// missing). `pmix` is left out: it needs the PMIx library, and Debian's 26.05 packages do
/// not ship `mpi_pmix.so` with slurmctld.
pub const MPI_DEFAULT: FlagList = word("mpi plugin", &["none", "pmi2", "cray_shasta"]);
