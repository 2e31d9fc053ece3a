//! The vocabulary: one validated type for every value that crosses from outside (relation
//! data, NVML, `slurmd -C`, config, action parameters) into Slurm's files or commands.
//!
//! Each type's only constructor parses (`TryFrom<String>`, `TryFrom<&str>`, `FromStr`; serde
//! uses `try_from = "String"`), so a value of the type is valid by construction: it is built
//! once at the boundary and carried unchanged through `gpu` → `interface` → `slurm` → render,
//! and nothing downstream checks it again. The rules are Slurm's (tried against the real
//! Slurm 22.05 daemons where Slurm is more lenient than the documentation; see
//! `docs/slurm-config.md`, "What a value may contain").
//!
//! One file per type family:
//! - [`NodeName`], [`Hostlist`]: node names and lists of them.
//! - [`PartitionName`]: partition names; [`NodeSetName`] and [`NodeRef`] (a `Nodes=` entry:
//!   node, NodeSet or `ALL`); [`Feature`]: node features.
//! - [`Reason`]: a node's free-text `Reason=`.
//! - [`GresName`], [`GresType`]: the two halves of `gpu:tesla_t4`.
//! - [`DevicePath`], [`DeviceFiles`], [`MultipleFiles`], [`GresDevices`]: gres.conf files.
//! - [`CoreList`]: gres.conf `Cores=`.
//! - [`LinksRow`]: gres.conf `Links=`.
//! - [`GresFlags`] ([`GresFlag`]): gres.conf `Flags=`.
//! - [`GresCount`]: a GRES count with Slurm's `K`/`M`/`G` suffixes.
//! - [`SlurmDuration`]: time limits; [`SlurmInt`]/[`IntWidth`]: integers with Slurm's limits;
//!   `flags`: booleans and enumerated settings; [`ValueRule`]: which of those each key takes
//!   (node, partition and global tables); [`PluginKind`]: plugin names, log levels and port
//!   ranges Slurm resolves at start; [`FlagList`]: flag words (`DebugFlags`, `PrologFlags`),
//!   with exit-code and license lists.

#[macro_use]
mod newtype;
mod closest;
mod cores;
mod devices;
mod duration;
mod error;
mod feature;
mod flag_list;
mod flags;
mod global_keys;
mod gres_flags;
mod gres_name;
mod integer;
mod links;
mod node_name;
mod node_ref;
mod partition_name;
mod plugin;
mod reason;
mod rule;

pub use closest::closest;
pub use cores::{CoreList, MAX_CORES};
pub use devices::{DeviceFiles, DevicePath, GresDevices, MAX_DEVICE_FILES, MultipleFiles};
pub use duration::SlurmDuration;
pub use error::{MAX_SHOWN, VocabError, shown};
pub use feature::Feature;
pub use flag_list::{FlagList, MAX_EXIT_VAL};
pub use flags::{
    PreemptScope, check_over_time_limit, check_oversubscribe, check_partition_cr_type,
    check_preempt_mode, check_suspend_time, parse_bool,
};
pub use global_keys::{DEFAULT_MAX_JOB_ID, GLOBAL_KEYS, MAX_JOB_ID, global_rule};
pub use gres_flags::{GresFlag, GresFlags};
pub use gres_name::{GresCount, GresName, GresType, MAX_SHARES_PER_GPU};
pub use integer::{IntWidth, SlurmInt};
pub use links::LinksRow;
pub use node_name::{Hostlist, NodeName};
pub use node_ref::{NodeRef, NodeSetName};
pub use partition_name::PartitionName;
pub use plugin::{LOG_LEVELS, PluginKind};
pub use reason::{MAX_REASON_LEN, Reason};
pub use rule::{NODE_RULES, PARTITION_RULES, ValueRule, check_key_value, rule_for};
