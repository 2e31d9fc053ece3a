//! The `slurmd` relation protocol, "phase A" of the reference charms (`reference/slurm-gres.md`
//! §5): typed records, strict (de)serialisation and validation. Relation data is untrusted
//! input: every value that can reach slurm.conf or gres.conf is checked here, and errors say
//! which field is wrong and why (the caller adds which unit sent it).
//!
//! | bag | key | direction | type |
//! | --- | --- | --- | --- |
//! | slurmd unit | `node` | slurmd → slurmctld | [`NodeRecord`] |
//! | slurmd app | `partition` | slurmd leader → slurmctld | [`PartitionRecord`] |
//! | slurmctld app | `cluster_info` | slurmctld leader → slurmd | [`ClusterInfo`] |

pub mod base64;
pub mod cluster_info;
pub mod node;
pub mod partition;
pub mod token;

pub use cluster_info::{CLUSTER_INFO_KEY, ClusterInfo};
pub use node::{GresEntry, GresSpec, NODE_KEY, NodeParameters, NodeRecord};
pub use partition::{PARTITION_KEY, PartitionRecord};

/// Endpoint of the slurmd charm (towards the controller).
pub const SLURMD_ENDPOINT: &str = "slurmctld";

/// Endpoint of the slurmctld charm (towards compute nodes).
pub const SLURMCTLD_ENDPOINT: &str = "slurmd";

/// Why a relation value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterfaceError {
    /// The value is not JSON at all.
    #[error("`{key}` is not valid JSON: {reason}")]
    Json {
        /// Relation key (`node`, `partition`, `cluster_info`).
        key: &'static str,
        /// The parser's message.
        reason: String,
    },
    /// A field is missing, of the wrong type, or not a safe value.
    #[error("`{key}` field {field}: {reason}")]
    Invalid {
        /// Relation key.
        key: &'static str,
        /// Dotted path of the field inside the value.
        field: String,
        /// What is wrong, for an operator.
        reason: String,
    },
}
