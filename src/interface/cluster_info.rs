//! The app-bag `cluster_info` record (slurmctld leader → slurmd):
//! `{"munge_key": "<base64>", "slurmctld_host": "<host>", "nhc_params": "#"}`.
//! `"#"` stands for empty `nhc_params` (relation data cannot hold empty strings).

use super::InterfaceError;
use crate::slurm::types::NodeName;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// The relation key of the record.
pub const CLUSTER_INFO_KEY: &str = "cluster_info";

/// Smallest munge key munged accepts (bytes).
pub const MIN_MUNGE_KEY_LEN: usize = 32;

/// Largest munge key accepted here (munged's own limit is 1 KiB).
pub const MAX_MUNGE_KEY_LEN: usize = 1024;

/// What slurmd units need from the controller.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ClusterInfoWire", into = "ClusterInfoWire")]
pub struct ClusterInfo {
    /// The raw munge key bytes.
    pub munge_key: Vec<u8>,
    /// Host name slurmd fetches its configuration from (`<host>:6817`); the [`NodeName`] rule.
    pub slurmctld_host: String,
    /// Node health check parameters; empty means none.
    pub nhc_params: String,
}

impl std::fmt::Debug for ClusterInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterInfo")
            .field(
                "munge_key",
                &format_args!("<{} bytes>", self.munge_key.len()),
            )
            .field("slurmctld_host", &self.slurmctld_host)
            .field("nhc_params", &self.nhc_params)
            .finish()
    }
}

/// The JSON layout: the key as base64, `"#"` for empty `nhc_params`; unknown keys ignored (the
/// reference adds some over time).
#[derive(Serialize, Deserialize)]
struct ClusterInfoWire {
    munge_key: String,
    slurmctld_host: String,
    #[serde(default)]
    nhc_params: Option<String>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::invalid(CLUSTER_INFO_KEY, field, reason)
}

impl TryFrom<ClusterInfoWire> for ClusterInfo {
    type Error = InterfaceError;
    fn try_from(w: ClusterInfoWire) -> Result<Self, InterfaceError> {
        let munge_key = STANDARD
            .decode(w.munge_key.split_ascii_whitespace().collect::<String>())
            .map_err(|e| invalid("munge_key", format!("not base64: {e}")))?;
        let info = Self {
            munge_key,
            slurmctld_host: w.slurmctld_host,
            nhc_params: w.nhc_params.filter(|s| s != "#").unwrap_or_default(),
        };
        info.validate()?;
        Ok(info)
    }
}

impl From<ClusterInfo> for ClusterInfoWire {
    fn from(c: ClusterInfo) -> Self {
        ClusterInfoWire {
            munge_key: STANDARD.encode(&c.munge_key),
            slurmctld_host: c.slurmctld_host,
            nhc_params: Some(if c.nhc_params.is_empty() {
                "#".to_string()
            } else {
                c.nhc_params
            }),
        }
    }
}

impl ClusterInfo {
    /// Checks the key length and the host name.
    pub fn validate(&self) -> Result<(), InterfaceError> {
        let n = self.munge_key.len();
        if !(MIN_MUNGE_KEY_LEN..=MAX_MUNGE_KEY_LEN).contains(&n) {
            return Err(invalid(
                "munge_key",
                format!("is {n} bytes; munge needs {MIN_MUNGE_KEY_LEN} to {MAX_MUNGE_KEY_LEN}"),
            ));
        }
        NodeName::try_from(self.slurmctld_host.as_str())
            .map(drop)
            .map_err(|e| invalid("slurmctld_host", e.to_string()))
    }

    /// The configless server slurmd uses: `<host>:6817`.
    pub fn conf_server(&self) -> String {
        format!("{}:6817", self.slurmctld_host)
    }

    /// The relation value: compact JSON.
    pub fn to_relation_value(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses and validates a relation value.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        super::from_relation_json(CLUSTER_INFO_KEY, raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> ClusterInfo {
        ClusterInfo {
            munge_key: vec![7; 1024],
            slurmctld_host: "ctl-0".into(),
            nhc_params: String::new(),
        }
    }

    #[test]
    fn round_trip_and_hash_for_empty_nhc() {
        let raw = info().to_relation_value();
        assert!(raw.contains(r##""nhc_params":"#""##));
        assert_eq!(ClusterInfo::from_relation_value(&raw).unwrap(), info());
        assert_eq!(info().conf_server(), "ctl-0:6817");
        assert!(!format!("{:?}", info()).contains("7, 7"));
    }

    #[test]
    fn refuses_bad_records() {
        let short = ClusterInfo {
            munge_key: vec![1; 4],
            ..info()
        }
        .to_relation_value();
        assert!(
            ClusterInfo::from_relation_value(&short)
                .unwrap_err()
                .to_string()
                .contains("munge_key")
        );
        let host = ClusterInfo {
            slurmctld_host: "ctl 0\nx".into(),
            ..info()
        }
        .to_relation_value();
        assert!(
            ClusterInfo::from_relation_value(&host)
                .unwrap_err()
                .to_string()
                .contains("slurmctld_host")
        );
        let e = ClusterInfo::from_relation_value(r#"{"munge_key":"***","slurmctld_host":"h"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("base64"), "{e}");
        assert!(ClusterInfo::from_relation_value(r#"{"slurmctld_host":"h"}"#).is_err());
    }
}
