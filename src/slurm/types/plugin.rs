//! Values Slurm resolves by name at start: plugin names (`SchedulerType=sched/backfill`),
//! log levels (`SlurmctldDebug=debug2`) and port ranges (`SrunPortRange=60001-63000`).
//!
//! A plugin value is `<kind>/<name>`; slurmctld turns it into `<kind>_<name>.so` in its
//! `PluginDir` and stops (`fatal`) when that cannot be loaded, so a misspelt name (`sched/bakfill`)
//! or the wrong kind (`SchedulerType=select/linear`) kills the controller. The names accepted
//! here are the plugins that **every** supported Slurm's source tree ships
//! (`src/plugins/<kind>/` at tags slurm-22-05-8-1, slurm-23-11-1-1, slurm-24-11-5-1 and
//! slurm-26-05-3-1), plus `<kind>/none` where all three real daemons in CI accept it
//! (`tests/slurm_plugin_values.rs`). A name shipped only by some versions (`select/cons_res`,
//! `topology/3d_torus`, `topology/flat`) is refused, so a value never breaks on upgrade. A plugin
//! Debian packages separately (e.g. `jobcomp/elasticsearch`, `acct_gather_profile/hdf5`) is
//! accepted here; if its package is missing, slurmctld refuses the reconfigure and the charm
//! restores the last accepted files.

use super::VocabError;
use super::closest::closest;

/// The plugins of one kind that a key may name.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PluginKind {
    /// The directory under `src/plugins/` and the value's prefix (`sched`).
    pub kind: &'static str,
    /// The names every supported version ships, `none` included where accepted.
    pub names: &'static [&'static str],
    /// Why other names of this kind are refused, when it is more than a typo (added to the
    /// error).
    pub note: &'static str,
}

impl PluginKind {
    /// Checks one `<kind>/<name>` value; the error suggests the closest known plugin.
    pub fn check(&self, value: &str) -> Result<(), VocabError> {
        let known = value
            .strip_prefix(self.kind)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| self.names.contains(&name));
        if known {
            return Ok(());
        }
        let full: Vec<String> = self
            .names
            .iter()
            .map(|n| format!("{}/{n}", self.kind))
            .collect();
        let hint = closest(full.iter().map(String::as_str), value)
            .map(|s| format!("; did you mean {s}?"))
            .unwrap_or_default();
        let expected = if full.is_empty() {
            format!("no {} plugin is accepted", self.kind)
        } else {
            format!(
                "expected one of {} (plugins every supported Slurm ships)",
                full.join(", ")
            )
        };
        Err(VocabError::new(
            "plugin",
            value,
            format!("{expected}{}{hint}", self.note),
        ))
    }
}

impl PluginKind {
    /// Checks a comma list of `<kind>/<name>` values (`TaskPlugin=task/cgroup,task/affinity`),
    /// each by [`PluginKind::check`] and each at most once.
    pub fn check_list(&self, value: &str) -> Result<(), VocabError> {
        let items: Vec<&str> = value.split(',').collect();
        for (i, item) in items.iter().enumerate() {
            self.check(item).map_err(|e| VocabError {
                shown: super::error::shown(value),
                ..e
            })?;
            if items[..i].contains(item) {
                return Err(VocabError::new(
                    "plugin list",
                    value,
                    format!("{item} is listed twice"),
                ));
            }
        }
        Ok(())
    }
}

/// `SchedulerType`.
pub const SCHED: PluginKind = PluginKind {
    kind: "sched",
    names: &["backfill", "builtin"],
    note: "",
};
/// `PriorityType`.
pub const PRIORITY: PluginKind = PluginKind {
    kind: "priority",
    names: &["basic", "multifactor"],
    note: "",
};
/// `PreemptType` (`preempt/none` is read as "no preemption" by `read_config.c` itself).
pub const PREEMPT: PluginKind = PluginKind {
    kind: "preempt",
    names: &["none", "partition_prio", "qos"],
    note: "",
};
/// `JobAcctGatherType`.
pub const JOBACCT_GATHER: PluginKind = PluginKind {
    kind: "jobacct_gather",
    names: &["cgroup", "linux", "none"],
    note: "",
};
/// `JobCompType`: `filetxt` and `none`. `lua` (a jobcomp.lua script), `script` and
/// `elasticsearch` (`JobCompLoc`) and `mysql` (a database) stop slurmctld 24.11+ without what
/// they need, which this charm does not provide.
pub const JOBCOMP: PluginKind = PluginKind {
    kind: "jobcomp",
    names: &["filetxt", "none"],
    note: "; lua, script, elasticsearch and mysql need a script, JobCompLoc or a database this charm does not provide",
};
/// `AccountingStorageType`: only `none`. `slurmdbd` stops a first-starting slurmctld when no
/// slurmdbd answers ("we have no TRES from it"), and this charm relates to no slurmdbd;
/// `mysql` is slurmdbd's own plugin.
pub const ACCOUNTING_STORAGE: PluginKind = PluginKind {
    kind: "accounting_storage",
    names: &["none"],
    note: "; accounting_storage/slurmdbd needs a slurmdbd, which this charm does not relate to",
};
/// `AcctGatherEnergyType` (`acct_gather_energy/gpu` is left out: slurmctld 22.05 cannot load
/// it, `undefined symbol: conf`, and stops).
pub const ACCT_GATHER_ENERGY: PluginKind = PluginKind {
    kind: "acct_gather_energy",
    names: &["ibmaem", "ipmi", "none", "pm_counters", "rapl", "xcc"],
    note: "",
};
/// `AcctGatherProfileType` (`hdf5` and `influxdb` stop slurmctld without their settings in
/// acct_gather.conf, which this charm does not write).
pub const ACCT_GATHER_PROFILE: PluginKind = PluginKind {
    kind: "acct_gather_profile",
    names: &["none"],
    note: "; hdf5 and influxdb need acct_gather.conf, which this charm does not write",
};
/// `AcctGatherInterconnectType`.
pub const ACCT_GATHER_INTERCONNECT: PluginKind = PluginKind {
    kind: "acct_gather_interconnect",
    names: &["none", "ofed", "sysfs"],
    note: "",
};
/// `AcctGatherFilesystemType`.
pub const ACCT_GATHER_FILESYSTEM: PluginKind = PluginKind {
    kind: "acct_gather_filesystem",
    names: &["lustre", "none"],
    note: "",
};
/// `MCSPlugin` (`mcs/group` stops slurmctld without `MCSParameters`: left out).
pub const MCS: PluginKind = PluginKind {
    kind: "mcs",
    names: &["account", "none", "user"],
    note: "; mcs/group needs MCSParameters naming the groups (which the charm does not derive)",
};
/// `TopologyPlugin`: none accepted. `topology/tree` and `block` wait for topology.conf,
/// which this charm does not write (slurmctld retries for 60 s, then stops), and the flat
/// default is `topology/none` on 22.05, `topology/default` on 23.11–25.11 and `topology/flat`
/// on 26.05, so no name works on every supported version.
pub const TOPOLOGY: PluginKind = PluginKind {
    kind: "topology",
    names: &[],
    note: "; tree and block need topology.conf, which this charm does not write, and the default's name differs between Slurm versions (leave TopologyPlugin unset)",
};

/// `SelectType` (owned by the charm: `select/cons_tres`). `cons_res` is gone in 23.11+.
pub const SELECT: PluginKind = PluginKind {
    kind: "select",
    names: &["cons_tres", "linear"],
    note: "",
};
/// `ProctrackType` (owned by the charm: `proctrack/cgroup`).
pub const PROCTRACK: PluginKind = PluginKind {
    kind: "proctrack",
    names: &["cgroup", "linuxproc", "pgid"],
    note: "",
};
/// `TaskPlugin`, a list (owned by the charm: `task/cgroup,task/affinity`); `task/none` is
/// accepted by all three real daemons.
pub const TASK: PluginKind = PluginKind {
    kind: "task",
    names: &["affinity", "cgroup", "none"],
    note: "",
};
/// `AuthType` (owned by the charm: `auth/munge`). `auth/slurm` is 23.11+, `auth/jwt` only an
/// alternative type.
pub const AUTH: PluginKind = PluginKind {
    kind: "auth",
    names: &["munge", "none"],
    note: "",
};
/// `CredType` (owned by the charm: `cred/munge`).
pub const CRED: PluginKind = PluginKind {
    kind: "cred",
    names: &["munge", "none"],
    note: "",
};
/// `AuthAltTypes`: none accepted. `auth/jwt`, the only alternative every version ships,
/// stops slurmctld without a `jwt_key` file (`AuthAltParameters`), which this charm does not
/// provide.
pub const AUTH_ALT: PluginKind = PluginKind {
    kind: "auth",
    names: &[],
    note: "; auth/jwt needs a jwt_key file (AuthAltParameters) this charm does not provide",
};
/// `SwitchType`: `switch/none` (every real daemon accepts it). `hpe_slingshot` is not in
/// Debian's packages (slurmctld 24.11/26.05: "Can't find plugin", fatal); `nvidia_imex` is
/// 24.11+.
pub const SWITCH: PluginKind = PluginKind {
    kind: "switch",
    names: &["none"],
    note: "; hpe_slingshot is not packaged by Debian and nvidia_imex is 24.11+",
};
/// `LaunchType`: `launch/slurm`, the only launch plugin (24.11+ ignore the key).
pub const LAUNCH: PluginKind = PluginKind {
    kind: "launch",
    names: &["slurm"],
    note: "",
};
/// `JobContainerType`: `job_container/none`. `tmpfs` needs `PrologFlags=Contain` and
/// job_container.conf (fatal without), and 26.05 replaced the key with `NamespaceType`.
pub const JOB_CONTAINER: PluginKind = PluginKind {
    kind: "job_container",
    names: &["none"],
    note: "; job_container/tmpfs needs PrologFlags=Contain and job_container.conf, which this charm does not write",
};
/// `PrioritySiteFactorPlugin`: `site_factor/none` (22.05 ships only `none`, 23.11+ only
/// `example`).
pub const SITE_FACTOR: PluginKind = PluginKind {
    kind: "site_factor",
    names: &["none"],
    note: "",
};
/// `RoutePlugin`: `route/default`. 24.11+ read the key only for `tree` (`RouteTree`), so
/// `route/topology` would change meaning on upgrade.
pub const ROUTE: PluginKind = PluginKind {
    kind: "route",
    names: &["default"],
    note: "; route/topology is read differently by 24.11+ (TopologyParam=RouteTree)",
};
/// `JobSubmitPlugins`, a list (`job_submit/<name>`; Slurm also takes the bare name). `lua`
/// stops slurmctld without job_submit.lua ("Unable to stat", fatal on 24.11+).
pub const JOB_SUBMIT: PluginKind = PluginKind {
    kind: "job_submit",
    names: &[
        "all_partitions",
        "defaults",
        "logging",
        "partition",
        "pbs",
        "require_timelimit",
        "throttle",
    ],
    note: "; job_submit/lua needs job_submit.lua, which this charm does not write",
};
/// `NodeFeaturesPlugins`: none accepted. `node_features/helpers`, the only one every version
/// ships, waits for helpers.conf (60 s, then fatal).
pub const NODE_FEATURES: PluginKind = PluginKind {
    kind: "node_features",
    names: &[],
    note: "; node_features/helpers needs helpers.conf, which this charm does not write",
};
/// `CliFilterPlugins`, a list (loaded by the client commands, not slurmctld). `lua` needs
/// cli_filter.lua on every client.
pub const CLI_FILTER: PluginKind = PluginKind {
    kind: "cli_filter",
    names: &["syslog", "user_defaults"],
    note: "; cli_filter/lua needs cli_filter.lua, which this charm does not write",
};
/// `PrEpPlugins`, a list.
pub const PREP: PluginKind = PluginKind {
    kind: "prep",
    names: &["script"],
    note: "",
};
/// `BurstBufferType`: none accepted. `lua` stops slurmctld 24.11+ without burst_buffer.lua;
/// `datawarp` needs Cray's `dw_wlm_cli`.
pub const BURST_BUFFER: PluginKind = PluginKind {
    kind: "burst_buffer",
    names: &[],
    note: "; lua needs burst_buffer.lua and datawarp Cray DataWarp, which this deployment has not",
};
/// `CoreSpecPlugin`: none accepted; defunct in 24.11+ ("The option ... is defunct").
pub const CORE_SPEC: PluginKind = PluginKind {
    kind: "core_spec",
    names: &[],
    note: "; CoreSpecPlugin is defunct since Slurm 24.11 (leave it unset)",
};
/// `ExtSensorsType`: none accepted; defunct in 24.11+.
pub const EXT_SENSORS: PluginKind = PluginKind {
    kind: "ext_sensors",
    names: &[],
    note: "; ExtSensorsType is defunct since Slurm 24.11 (leave it unset)",
};
/// `PowerPlugin`: none accepted; defunct in 24.11+.
pub const POWER: PluginKind = PluginKind {
    kind: "power",
    names: &[],
    note: "; PowerPlugin is defunct since Slurm 24.11 (leave it unset)",
};
/// `AcctGatherInfinibandType`: none accepted; the old name of `AcctGatherInterconnectType`
/// (24.11+ rewrite `infiniband` to `interconnect`).
pub const ACCT_GATHER_INFINIBAND: PluginKind = PluginKind {
    kind: "acct_gather_infiniband",
    names: &[],
    note: "; this is the old name of AcctGatherInterconnectType: set that instead",
};
/// `CryptoType`: none accepted; the old name of `CredType`, which the charm owns (Slurm reads
/// it only when `CredType` is unset, which it never is).
pub const CRYPTO: PluginKind = PluginKind {
    kind: "crypto",
    names: &[],
    note: "; this is the old name of CredType, which the charm sets (cred/munge)",
};

/// The log levels of `log_string2num` (`slurm_protocol_defs.c`), lowest first.
pub const LOG_LEVELS: [&str; 10] = [
    "quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5",
];

/// `SlurmctldDebug` and friends: a word of [`LOG_LEVELS`] (any case) or its number 0..=9.
/// Slurm stops on anything else (`Invalid SlurmctldDebug`); it would also take `5abc` (it
/// `atoi`s a leading digit), which is refused here.
pub fn check_log_level(value: &str) -> Result<(), VocabError> {
    let word = LOG_LEVELS.iter().any(|w| w.eq_ignore_ascii_case(value));
    let number = value.len() == 1 && value.as_bytes()[0].is_ascii_digit();
    (word || number).then_some(()).ok_or_else(|| {
        let hint = closest(LOG_LEVELS, value)
            .map(|s| format!("; did you mean {s}?"))
            .unwrap_or_default();
        VocabError::new(
            "log level",
            value,
            format!("expected 0..=9 or one of {}{hint}", LOG_LEVELS.join(", ")),
        )
    })
}

/// `SrunPortRange`: `first-last`, both ports (1..=65535) and `first < last`
/// (`_parse_srun_ports`; Slurm ignores a bad range silently, so srun would fall back to
/// ephemeral ports a firewall blocks).
pub fn check_port_range(value: &str) -> Result<(), VocabError> {
    let port = |s: &str| -> Option<u16> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok().filter(|p| *p > 0)
    };
    let range = value
        .split_once('-')
        .and_then(|(a, b)| Some((port(a)?, port(b)?)));
    match range {
        Some((first, last)) if first < last => Ok(()),
        _ => Err(VocabError::new(
            "port range",
            value,
            "expected first-last with 1 <= first < last <= 65535 (e.g. 60001-63000)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names_kinds_and_suggestions() {
        assert!(SCHED.check("sched/backfill").is_ok());
        let e = SCHED.check("sched/bakfill").unwrap_err().to_string();
        assert!(e.contains("did you mean sched/backfill"), "{e}");
        assert!(SCHED.check("select/linear").is_err());
        assert!(SCHED.check("backfill").is_err());
        assert!(SCHED.check("sched/Backfill").is_err());
        assert!(SCHED.check("sched/").is_err());
        assert!(TOPOLOGY.check("topology/3d_torus").is_err());
        let e = TOPOLOGY.check("topology/tree").unwrap_err().to_string();
        assert!(
            e.contains("no topology plugin") && e.contains("topology.conf"),
            "{e}"
        );
        assert!(PREEMPT.check("preempt/none").is_ok());
    }

    #[test]
    fn log_levels_as_log_string2num_reads_them() {
        for ok in ["quiet", "DEBUG2", "info", "0", "9"] {
            assert!(check_log_level(ok).is_ok(), "{ok}");
        }
        for bad in ["", "10", "5abc", "-1", "debug6", "infos", " info"] {
            assert!(check_log_level(bad).is_err(), "{bad}");
        }
        let e = check_log_level("verbos").unwrap_err().to_string();
        assert!(e.contains("did you mean verbose"), "{e}");
    }

    #[test]
    fn port_ranges() {
        assert!(check_port_range("60001-63000").is_ok());
        for bad in [
            "60001",
            "63000-60001",
            "5-5",
            "0-10",
            "1-65536",
            "a-b",
            "-",
            "1--2",
        ] {
            assert!(check_port_range(bad).is_err(), "{bad}");
        }
    }
}
