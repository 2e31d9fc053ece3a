//! The `slurmd` relation protocol, "phase A" of the reference charms (`docs/CONTRACTS.md`):
//! typed records built with serde derive into the slurm vocabulary ([`crate::slurm::types`]).
//! Relation data is untrusted input: deserialising a record parses every value that can reach
//! slurm.conf or gres.conf, once, and errors say which field is wrong and why (the caller adds
//! which unit sent it).
//!
//! | bag | key | direction | type |
//! | --- | --- | --- | --- |
//! | slurmd unit | `node` | slurmd → slurmctld | [`NodeRecord`] |
//! | slurmd app | `partition` | slurmd leader → slurmctld | [`PartitionRecord`] |
//! | slurmctld app | `cluster_info` | slurmctld leader → slurmd | [`ClusterInfo`] |
//! | slurmctld app | `verdicts` | slurmctld leader → slurmd | [`Verdicts`] |
//! | slurmctld app | `gres_types` | slurmctld leader → slurmd | [`GresTypes`] |

pub mod cluster_info;
pub mod gres_types;
pub mod node;
mod node_sharing;
pub mod partition;
pub mod verdicts;

pub use cluster_info::{
    AuthKind, CLUSTER_INFO_KEY, ClusterInfo, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL,
    MungeKey, MungeKeyRef,
};
pub use gres_types::{GRES_TYPES_KEY, GresTypes};
pub use node::{NodeRecord, RecordsMemo, join_shape_parts};
pub use partition::{PARTITION_KEY, PartitionRecord};
pub use verdicts::{VERDICTS_KEY, Verdicts};

/// Endpoint of the slurmd charm (towards the controller).
pub const SLURMD_ENDPOINT: &str = "slurmctld";

/// Endpoint of the slurmctld charm (towards compute nodes).
pub const SLURMCTLD_ENDPOINT: &str = "slurmd";

/// The relation key of the `node` record ([`NodeRecord`]).
pub const NODE_KEY: &str = "node";

/// The largest `node` or `partition` value, in bytes, that a slurmd unit publishes and the
/// controller accepts (the one limit both sides use). The controller refuses a larger value
/// for its unit or application alone; the slurmd charm refuses, where it comes in (the
/// `node-config` action, a config change), anything that would make its own value larger, and
/// keeps the value it published. A real record is a few hundred bytes; Juju allows far more.
pub const MAX_RECORD_LEN: usize = 64 * 1024;

/// Checks that the relation value `raw` of `key` fits [`MAX_RECORD_LEN`]: the slurmd side
/// runs this on what it is about to publish, so the controller never leaves the node out for
/// its size. The error says which setting to shorten.
pub fn check_record_len(key: &'static str, raw: &str) -> Result<(), InterfaceError> {
    if raw.len() > MAX_RECORD_LEN {
        return Err(InterfaceError::TooLarge {
            key,
            len: raw.len(),
        });
    }
    Ok(())
}

/// The setting an operator shortens when the value of `key` is too large.
fn shorten_hint(key: &str) -> &'static str {
    match key {
        "partition" => "shorten partition-config",
        _ => "shorten the node-config overrides, e.g. Features",
    }
}

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
    /// The value would be larger than the controller accepts ([`MAX_RECORD_LEN`]).
    #[error(
        "`{key}` would be {len} bytes, over the {MAX_RECORD_LEN}-byte limit the controller \
         accepts ({})",
        shorten_hint(key)
    )]
    TooLarge {
        /// Relation key (`node`, `partition`).
        key: &'static str,
        /// The value's size in bytes.
        len: usize,
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

impl InterfaceError {
    /// [`InterfaceError::Invalid`] for `field` of the record under `key` (a field path over
    /// 80 bytes is cut: it holds keys the sender chose).
    pub fn invalid(key: &'static str, field: impl Into<String>, reason: impl Into<String>) -> Self {
        InterfaceError::Invalid {
            key,
            field: short_path(field.into()),
            reason: printable(reason.into()),
        }
    }
}

/// Longest field path quoted whole in an error (bytes): the path holds the keys the sender
/// chose (a partition name), and a 64 KiB key must not push the reason out of the message.
const MAX_FIELD_PATH: usize = 80;

/// `text` with its control characters escaped (`\n`): field paths and serde's reasons quote
/// keys the sender chose, and a newline in one must not start a line of the sender's choosing
/// in the status or the log.
pub(crate) fn printable(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    escaped
}

/// `path`, printable ([`printable`]), cut to [`MAX_FIELD_PATH`] bytes (at a character
/// boundary) with its size when longer.
fn short_path(path: String) -> String {
    let path = printable(path);
    if path.len() <= MAX_FIELD_PATH {
        return path;
    }
    let mut end = MAX_FIELD_PATH;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &path[..end], path.len())
}

/// Deserialises a relation value: bad JSON syntax is [`InterfaceError::Json`], a well-formed
/// value that is not a valid record (wrong shape, a refused value) is [`InterfaceError::Invalid`]
/// naming the field's path (`gres[1].Type`).
pub(crate) fn from_relation_json<T: serde::de::DeserializeOwned>(
    key: &'static str,
    raw: &str,
) -> Result<T, InterfaceError> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = match e.path().to_string() {
            p if p == "." => "value".to_string(),
            p => short_path(p),
        };
        let inner = e.into_inner();
        if inner.is_data() {
            InterfaceError::Invalid {
                key,
                field,
                reason: printable(inner.to_string()),
            }
        } else {
            InterfaceError::Json {
                key,
                reason: printable(inner.to_string()),
            }
        }
    })?;
    de.end().map_err(|e| InterfaceError::Json {
        key,
        reason: printable(e.to_string()),
    })?;
    Ok(value)
}
