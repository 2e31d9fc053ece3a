//! The app-bag `partition` record (slurmd leader → slurmctld): `{"<app>": {"State": "UP", …}}`.
//! The one key is the partition name (the slurmd application's name); the values are
//! `PartitionName=` line parameters from the slurmd charm's `partition-config`.

use super::InterfaceError;
use super::token::{check_node_name, check_token};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The relation key of the record.
pub const PARTITION_KEY: &str = "partition";

/// Partition keys the controller owns; a record that sets one is refused.
pub const OWNED_PARTITION_KEYS: &[&str] = &["PartitionName", "Nodes", "Default"];

/// One partition as a slurmd application describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionRecord {
    /// Partition name (the slurmd application's name).
    pub name: String,
    /// Other parameters (`State`, `MaxTime`, …), validated tokens.
    pub params: BTreeMap<String, String>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::Invalid {
        key: PARTITION_KEY,
        field: field.into(),
        reason: reason.into(),
    }
}

/// Checks one partition parameter: a Slurm-style key and a token value, not a key the
/// controller owns.
pub fn check_partition_parameter(key: &str, value: &str) -> Result<(), String> {
    let key_ok = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && key.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if !key_ok {
        return Err(format!("{key:?} is not a partition parameter name"));
    }
    if OWNED_PARTITION_KEYS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(key))
    {
        return Err(format!(
            "{key} is set by the slurmctld charm and cannot be given"
        ));
    }
    check_token(value).map_err(|e| format!("{key}: {e}"))
}

impl PartitionRecord {
    /// The default record for an application: `State=UP` plus `extra`.
    pub fn new(app: &str, extra: &BTreeMap<String, String>) -> Self {
        let mut params = BTreeMap::from([("State".to_string(), "UP".to_string())]);
        params.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        Self {
            name: app.to_string(),
            params,
        }
    }

    /// Checks the name and every parameter.
    pub fn validate(&self) -> Result<(), InterfaceError> {
        check_node_name(&self.name).map_err(|e| invalid("<name>", e))?;
        for (k, v) in &self.params {
            check_partition_parameter(k, v)
                .map_err(|e| invalid(format!("{}.{k}", self.name), e))?;
        }
        Ok(())
    }

    /// The relation value: compact JSON with sorted keys.
    pub fn to_relation_value(&self) -> String {
        let inner: Map<String, Value> = self
            .params
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut m = Map::new();
        m.insert(self.name.clone(), Value::Object(inner));
        Value::Object(m).to_string()
    }

    /// Parses and validates a relation value (exactly one partition).
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        let v: Value = serde_json::from_str(raw).map_err(|e| InterfaceError::Json {
            key: PARTITION_KEY,
            reason: e.to_string(),
        })?;
        let Value::Object(top) = v else {
            return Err(invalid("", "expected a JSON object"));
        };
        let mut it = top.into_iter();
        let (Some((name, inner)), None) = (it.next(), it.next()) else {
            return Err(invalid("", "expected exactly one partition"));
        };
        let Value::Object(inner) = inner else {
            return Err(invalid(name, "expected an object of parameters"));
        };
        let mut params = BTreeMap::new();
        for (k, v) in inner {
            let Value::String(s) = v else {
                return Err(invalid(
                    format!("{name}.{k}"),
                    format!("expected a string, got {v}"),
                ));
            };
            params.insert(k, s);
        }
        let rec = Self { name, params };
        rec.validate()?;
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let extra = BTreeMap::from([("MaxTime".to_string(), "1:00:00".to_string())]);
        let rec = PartitionRecord::new("slurmd", &extra);
        let raw = rec.to_relation_value();
        assert_eq!(raw, r#"{"slurmd":{"MaxTime":"1:00:00","State":"UP"}}"#);
        assert_eq!(PartitionRecord::from_relation_value(&raw).unwrap(), rec);
    }

    #[test]
    fn refuses_bad_records() {
        let bad = [
            (r#"{"a":{"State":"UP"},"b":{}}"#, "exactly one"),
            (r#"{"a":{"State":1}}"#, "expected a string"),
            (r#"{"a":{"Nodes":"ALL"}}"#, "set by the slurmctld charm"),
            (r#"{"a":{"State":"UP\nSlurmctldProlog=/x"}}"#, "State"),
            (r#"{"a b":{}}"#, "not a host name"),
            (r#"nope"#, "not valid JSON"),
        ];
        for (raw, want) in bad {
            let e = PartitionRecord::from_relation_value(raw)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{raw}: {e}");
        }
    }
}
