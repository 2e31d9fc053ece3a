//! slurm.conf and gres.conf: model, parser (Slurm's lexical rules), renderer and hostlists.
//!
//! The charm builds a [`SlurmConf`] and a [`GresConf`] from relation data and config, then
//! calls [`render_files`] (or [`render_slurm_conf`] / [`GresConf::render`]). Rendering refuses
//! every configuration Slurm treats as fatal and every value that could inject a directive, so
//! a file that Slurm would reject is never written. Output is deterministic: the same model
//! gives byte-identical files. See `docs/slurm-config.md`.

pub mod check;
pub mod drain_reason;
pub mod error;
pub mod global_check;
pub mod gres_conf;
mod gres_types;
mod gres_wire;
pub mod health_check;
pub mod hostlist;
pub mod job_memory;
pub mod keys;
pub mod lexer;
pub mod node;
pub mod node_group;
pub mod node_lines;
pub mod openmetrics;
pub mod overrides;
pub mod parse;
pub mod partition;
pub mod record_entry;
pub mod render;
pub mod slurm_conf;
mod text;
pub mod types;
pub mod validate;
pub mod version;

pub use check::{
    check_consistency, check_gres_conf, check_max_node_count, check_record, check_slurm_conf,
};
pub use drain_reason::is_gres_mismatch;
pub use error::{ConfigError, HostlistError, ParseError, ParseErrorKind};
pub use gres_conf::{AutoDetect, GresConf, GresGroup, GresLine, NodeRecords};
pub use health_check::{HealthCheck, HealthCheckError};
pub use job_memory::{DefaultMemory, DefaultMemoryError, NodeMemory};
pub use keys::GlobalKey;
pub use node::{GresSpec, NodeConf, NodeSetting, NodeState};
pub use node_group::NodeGroup;
pub use overrides::{
    GlobalOverride, GlobalPair, NodeOverride, Override, OverrideScope, PartitionOverride,
    node_override, parse_global_overrides, parse_node_overrides, parse_overrides,
    parse_partition_overrides,
};
pub use parse::{parse_gres_conf, parse_slurm_conf};
pub use partition::{DownNodes, NodeSet, Partition, PartitionSetting, PartitionState};
pub use record_entry::{NodeEntry, PartitionEntry, RecordEntry};
pub use render::{RenderedFiles, render_files, render_gres_conf, render_slurm_conf};
pub use slurm_conf::SlurmConf;
pub use validate::validate_token;
pub use version::{SlurmVersion, VersionError};
