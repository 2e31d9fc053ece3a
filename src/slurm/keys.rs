//! Key tables: the charm-owned global keys, the keys each record accepts, and the keys each
//! operator override may not set. Keys are case-insensitive in Slurm; lookups here are too, and
//! every known key is rendered in its CamelCase spelling.

use super::error::ConfigError;

/// A global slurm.conf key the charm owns (renders from the model; operators cannot override).
/// `ClusterName` and `SlurmctldHost` are fields of [`super::SlurmConf`]; these are the rest,
/// in render order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GlobalKey {
    /// `SlurmctldParameters` (the charm needs `enable_configless`).
    SlurmctldParameters,
    /// `AuthType` (`auth/munge`).
    AuthType,
    /// `CredType` (`cred/munge`).
    CredType,
    /// `SlurmUser`.
    SlurmUser,
    /// `SlurmctldPort` (slurmd fetches its config from `<host>:6817`).
    SlurmctldPort,
    /// `SlurmdPort`.
    SlurmdPort,
    /// `StateSaveLocation`.
    StateSaveLocation,
    /// `SlurmdSpoolDir`.
    SlurmdSpoolDir,
    /// `SlurmctldPidFile`.
    SlurmctldPidFile,
    /// `SlurmdPidFile`.
    SlurmdPidFile,
    /// `SlurmctldLogFile`.
    SlurmctldLogFile,
    /// `SlurmdLogFile`.
    SlurmdLogFile,
    /// `GresTypes` (always includes `gpu`).
    GresTypes,
    /// `SelectType` (`select/cons_tres`).
    SelectType,
    /// `SelectTypeParameters` (`CR_CPU_Memory`).
    SelectTypeParameters,
    /// `ProctrackType` (`proctrack/cgroup`).
    ProctrackType,
    /// `TaskPlugin` (`task/cgroup,task/affinity`).
    TaskPlugin,
    /// `HealthCheckProgram`: the slurmd charm's GPU health check (XIDs, ECC, lost GPUs).
    HealthCheckProgram,
    /// `HealthCheckInterval` in seconds (the slurmctld option `health-check-interval`).
    HealthCheckInterval,
    /// `HealthCheckNodeState` (the slurmctld option `health-check-node-state`).
    HealthCheckNodeState,
    /// `HealthCheckTimeout` (Slurm 26.05+ only: no default, written only when set).
    HealthCheckTimeout,
    /// `MetricsType` (Slurm 25.11+ only: `metrics/openmetrics`, written only there;
    /// [`super::openmetrics`]).
    MetricsType,
}

impl GlobalKey {
    /// Every owned global key, in render order.
    pub const ALL: [GlobalKey; 22] = [
        GlobalKey::SlurmctldParameters,
        GlobalKey::AuthType,
        GlobalKey::CredType,
        GlobalKey::SlurmUser,
        GlobalKey::SlurmctldPort,
        GlobalKey::SlurmdPort,
        GlobalKey::StateSaveLocation,
        GlobalKey::SlurmdSpoolDir,
        GlobalKey::SlurmctldPidFile,
        GlobalKey::SlurmdPidFile,
        GlobalKey::SlurmctldLogFile,
        GlobalKey::SlurmdLogFile,
        GlobalKey::GresTypes,
        GlobalKey::SelectType,
        GlobalKey::SelectTypeParameters,
        GlobalKey::ProctrackType,
        GlobalKey::TaskPlugin,
        GlobalKey::HealthCheckProgram,
        GlobalKey::HealthCheckInterval,
        GlobalKey::HealthCheckNodeState,
        GlobalKey::HealthCheckTimeout,
        GlobalKey::MetricsType,
    ];

    /// The CamelCase key as written in slurm.conf.
    pub fn as_str(self) -> &'static str {
        match self {
            GlobalKey::SlurmctldParameters => "SlurmctldParameters",
            GlobalKey::AuthType => "AuthType",
            GlobalKey::CredType => "CredType",
            GlobalKey::SlurmUser => "SlurmUser",
            GlobalKey::SlurmctldPort => "SlurmctldPort",
            GlobalKey::SlurmdPort => "SlurmdPort",
            GlobalKey::StateSaveLocation => "StateSaveLocation",
            GlobalKey::SlurmdSpoolDir => "SlurmdSpoolDir",
            GlobalKey::SlurmctldPidFile => "SlurmctldPidFile",
            GlobalKey::SlurmdPidFile => "SlurmdPidFile",
            GlobalKey::SlurmctldLogFile => "SlurmctldLogFile",
            GlobalKey::SlurmdLogFile => "SlurmdLogFile",
            GlobalKey::GresTypes => "GresTypes",
            GlobalKey::SelectType => "SelectType",
            GlobalKey::SelectTypeParameters => "SelectTypeParameters",
            GlobalKey::ProctrackType => "ProctrackType",
            GlobalKey::TaskPlugin => "TaskPlugin",
            GlobalKey::HealthCheckProgram => "HealthCheckProgram",
            GlobalKey::HealthCheckInterval => "HealthCheckInterval",
            GlobalKey::HealthCheckNodeState => "HealthCheckNodeState",
            GlobalKey::HealthCheckTimeout => "HealthCheckTimeout",
            GlobalKey::MetricsType => "MetricsType",
        }
    }

    /// The charm's default value for this key (empty: none, the key is written only when set).
    pub fn default_value(self) -> &'static str {
        match self {
            GlobalKey::SlurmctldParameters => "enable_configless",
            GlobalKey::AuthType => "auth/munge",
            GlobalKey::CredType => "cred/munge",
            GlobalKey::SlurmUser => "slurm",
            GlobalKey::SlurmctldPort => "6817",
            GlobalKey::SlurmdPort => "6818",
            GlobalKey::StateSaveLocation => "/var/lib/slurm/slurmctld",
            GlobalKey::SlurmdSpoolDir => "/var/lib/slurm/slurmd",
            GlobalKey::SlurmctldPidFile => "/run/slurmctld.pid",
            GlobalKey::SlurmdPidFile => "/run/slurmd.pid",
            GlobalKey::SlurmctldLogFile => "/var/log/slurm/slurmctld.log",
            GlobalKey::SlurmdLogFile => "/var/log/slurm/slurmd.log",
            GlobalKey::GresTypes => "gpu",
            GlobalKey::SelectType => "select/cons_tres",
            GlobalKey::SelectTypeParameters => "CR_CPU_Memory",
            GlobalKey::ProctrackType => "proctrack/cgroup",
            GlobalKey::TaskPlugin => "task/cgroup,task/affinity",
            // the path the slurmd charm links its binary to (charms::slurmd::health_check)
            GlobalKey::HealthCheckProgram => {
                "/var/lib/slurm/slurmd-charm/slurmd-charm-health-check"
            }
            GlobalKey::HealthCheckInterval => "60",
            GlobalKey::HealthCheckNodeState => "ANY",
            // version-dependent: no default line ([`super::SlurmConf::new`] leaves it out)
            GlobalKey::HealthCheckTimeout => "",
            GlobalKey::MetricsType => "",
        }
    }

    /// Looks a key up case-insensitively.
    pub fn from_key(key: &str) -> Option<GlobalKey> {
        GlobalKey::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(key))
    }
}

/// Keys that start a record line in slurm.conf (everything after them belongs to the record).
pub const SLURM_RECORD_KEYS: [&str; 5] = [
    "NodeName",
    "PartitionName",
    "DownNodes",
    "NodeSet",
    "FrontendName",
];

/// The node's hardware as `slurmd -C` reports it, in slurm.conf order: the node keys taken from
/// the host. Every other list of node keys that holds them is built from this one.
pub const NODE_HARDWARE_KEYS: [&str; 6] = [
    "CPUs",
    "Boards",
    "SocketsPerBoard",
    "CoresPerSocket",
    "ThreadsPerCore",
    "RealMemory",
];

/// `a` followed by `b`: a key list built from shared parts (`N` must be their total length).
pub const fn concat_keys<const N: usize>(
    a: &[&'static str],
    b: &[&'static str],
) -> [&'static str; N] {
    assert!(a.len() + b.len() == N, "N is the length of both lists");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// Node keys Slurm 22.05 accepts on a `NodeName` line (slurm.conf.5, NODE CONFIGURATION).
pub const NODE_KEYS: [&str; 24] = [
    "NodeName",
    "BcastAddr",
    "Boards",
    "CoreSpecCount",
    "CoresPerSocket",
    "CpuBind",
    "CPUs",
    "CpuSpecList",
    "Feature",
    "Features",
    "Gres",
    "MemSpecLimit",
    "NodeAddr",
    "NodeHostname",
    "Port",
    "Procs",
    "RealMemory",
    "Reason",
    "Sockets",
    "SocketsPerBoard",
    "State",
    "ThreadsPerCore",
    "TmpDisk",
    "Weight",
];

/// Partition keys Slurm 22.05 accepts (slurm.conf.5, PARTITION CONFIGURATION).
pub const PARTITION_KEYS: [&str; 42] = [
    "PartitionName",
    "AllocNodes",
    "AllowAccounts",
    "AllowGroups",
    "AllowQos",
    "Alternate",
    "CpuBind",
    "DefCpuPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "Default",
    "DefaultTime",
    "DenyAccounts",
    "DenyQos",
    "DisableRootJobs",
    "ExclusiveUser",
    "GraceTime",
    "Hidden",
    "LLN",
    "MaxCPUsPerNode",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodes",
    "MaxTime",
    "MinNodes",
    "Nodes",
    "OverSubscribe",
    "OverTimeLimit",
    "PreemptMode",
    "PriorityJobFactor",
    "PriorityTier",
    "QOS",
    "ReqResv",
    "ResumeTimeout",
    "RootOnly",
    "SelectTypeParameters",
    "Shared",
    "State",
    "SuspendTime",
    "SuspendTimeout",
    "TRESBillingWeights",
];

/// Returns the canonical spelling of `key` from `table` (case-insensitive), if present.
pub fn canonical(table: &[&'static str], key: &str) -> Option<&'static str> {
    table.iter().copied().find(|k| k.eq_ignore_ascii_case(key))
}

/// The canonical spelling of a key given on a record line (`context`, e.g. `NodeName line`):
/// the key must be well formed and one of `table`, else an error naming it and saying it is not
/// a Slurm 22.05 `what` key (an unknown key would stop slurmctld).
pub fn record_key(
    table: &[&'static str],
    key: &str,
    context: &str,
    what: &str,
) -> Result<&'static str, ConfigError> {
    super::validate::validate_key(key, context)?;
    canonical(table, key).ok_or_else(|| ConfigError::InvalidKey {
        key: key.to_string(),
        context: context.to_string(),
        reason: match super::types::closest(table.iter().copied(), key) {
            Some(k) => format!("not a Slurm {what} key; did you mean {k}?"),
            None => format!("not a Slurm {what} key"),
        },
    })
}

/// Keys an operator may not set in `slurm-conf-parameters`: the owned global keys, plus
/// `ClusterName`, `SlurmctldHost`, `SlurmctldAddr`, `ControlMachine`, `BackupController`,
/// `Include` and every record key.
pub fn owned_global(key: &str) -> Option<&'static str> {
    const OTHERS: [&str; 6] = [
        "ClusterName",
        "SlurmctldHost",
        "SlurmctldAddr",
        "ControlMachine",
        "BackupController",
        "Include",
    ];
    GlobalKey::from_key(key)
        .map(GlobalKey::as_str)
        .or_else(|| canonical(&OTHERS, key))
        .or_else(|| canonical(&SLURM_RECORD_KEYS, key))
}

/// Keys an operator may not set in `partition-config`: the charm names the partition, lists
/// its nodes and decides which partition is the default (`default-partition`).
pub const PARTITION_OWNED: [&str; 3] = ["PartitionName", "Nodes", "Default"];

/// Keys an operator may not set in `node-config`: the node name and its detected GRES
/// (an override replaced the detected list in the reference charm, 6.1 #4), and the
/// addressing keys that must stay per-node.
pub const NODE_OWNED: [&str; 4] = ["NodeName", "Gres", "NodeAddr", "NodeHostname"];

#[cfg(test)]
mod tests {
    use super::super::{NodeConf, Partition};
    use super::*;

    #[test]
    fn nodes_and_partitions_keep_extras_by_one_rule() {
        let mut node = NodeConf::new(crate::slurm::types::NodeName::placeholder());
        let mut part = Partition::new("p".parse().unwrap());
        // `=` only inside a list of pairs
        part.set("TRESBillingWeights", "CPU=1.0,Mem=0.25G").unwrap();
        assert!(part.set("AllowGroups", "a=b").is_err());
        assert!(node.set("CpuBind", "a=b").is_err());
        // a token of the key's type, the same for both records
        for bad in ["a b", "a#b", "a\"b", "a\\b", ""] {
            assert!(part.set("AllowGroups", bad).is_err(), "{bad:?}");
            assert!(node.set("NodeHostname", bad).is_err(), "{bad:?}");
        }
        assert!(node.set("TmpDisk", "x").is_err());
        assert!(part.set("MaxNodes", "x").is_err());
        // set twice: replaced in place
        part.set("AllowGroups", "a").unwrap();
        part.set("allowgroups", "b").unwrap();
        node.set("TmpDisk", "1").unwrap();
        node.set("TMPDISK", "2").unwrap();
        assert_eq!(
            (part.extra[1].key(), part.extra[1].value()),
            ("AllowGroups", "b")
        );
        assert_eq!(
            (node.extra[0].key(), node.extra[0].value()),
            ("TmpDisk", "2")
        );
        assert_eq!(node.extra.len(), 1);
    }

    #[test]
    fn key_lists_share_the_hardware_keys() {
        let carried = crate::interface::node::NODE_PARAMETER_KEYS;
        assert_eq!(carried[..6], NODE_HARDWARE_KEYS);
        assert!(NODE_HARDWARE_KEYS.iter().all(|k| NODE_KEYS.contains(k)));
        assert!(carried.iter().all(|k| NODE_KEYS.contains(k)));
    }
}
