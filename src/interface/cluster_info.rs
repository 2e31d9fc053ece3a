//! The app-bag `cluster_info` record (slurmctld leader → slurmd):
//! `{"munge_key": "<base64>", "slurmctld_host": "<host>", "nhc_params": "#"}`.
//! `"#"` stands for empty `nhc_params` (relation data cannot hold empty strings).

use super::InterfaceError;
use super::base64;
use super::token::check_host;
use serde_json::{Map, Value};

/// The relation key of the record.
pub const CLUSTER_INFO_KEY: &str = "cluster_info";

/// Smallest munge key munged accepts (bytes).
pub const MIN_MUNGE_KEY_LEN: usize = 32;

/// Largest munge key accepted here (munged's own limit is 1 KiB).
pub const MAX_MUNGE_KEY_LEN: usize = 1024;

/// What slurmd units need from the controller.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterInfo {
    /// The raw munge key bytes.
    pub munge_key: Vec<u8>,
    /// Host name slurmd fetches its configuration from (`<host>:6817`).
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

fn invalid(field: &str, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::Invalid {
        key: CLUSTER_INFO_KEY,
        field: field.into(),
        reason: reason.into(),
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
        check_host(&self.slurmctld_host).map_err(|e| invalid("slurmctld_host", e))
    }

    /// The configless server slurmd uses: `<host>:6817`.
    pub fn conf_server(&self) -> String {
        format!("{}:6817", self.slurmctld_host)
    }

    /// The relation value: compact JSON, sorted keys.
    pub fn to_relation_value(&self) -> String {
        let mut m = Map::new();
        m.insert(
            "munge_key".into(),
            Value::String(base64::encode(&self.munge_key)),
        );
        m.insert(
            "slurmctld_host".into(),
            Value::String(self.slurmctld_host.clone()),
        );
        let nhc = if self.nhc_params.is_empty() {
            "#"
        } else {
            &self.nhc_params
        };
        m.insert("nhc_params".into(), Value::String(nhc.to_string()));
        Value::Object(m).to_string()
    }

    /// Parses and validates a relation value. Unknown keys are ignored (the reference adds
    /// some over time); the three known ones must be strings.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        let v: Value = serde_json::from_str(raw).map_err(|e| InterfaceError::Json {
            key: CLUSTER_INFO_KEY,
            reason: e.to_string(),
        })?;
        let Value::Object(m) = v else {
            return Err(invalid("", "expected a JSON object"));
        };
        let get = |k: &str| -> Result<String, InterfaceError> {
            match m.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                None => Err(invalid(k, "missing")),
                Some(other) => Err(invalid(k, format!("expected a string, got {other}"))),
            }
        };
        let key_b64 = get("munge_key")?;
        let munge_key = base64::decode(&key_b64).map_err(|e| invalid("munge_key", e))?;
        let nhc = match m.get("nhc_params") {
            None => String::new(),
            Some(Value::String(s)) if s == "#" => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(invalid(
                    "nhc_params",
                    format!("expected a string, got {other}"),
                ));
            }
        };
        let info = Self {
            munge_key,
            slurmctld_host: get("slurmctld_host")?,
            nhc_params: nhc,
        };
        info.validate()?;
        Ok(info)
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
