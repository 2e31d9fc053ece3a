//! The app-bag `partition` record (slurmd leader → slurmctld): `{"<app>": {"State": "UP", …}}`.
//! The one key is the partition name (the slurmd application's name); the values are
//! `PartitionName=` line parameters from the slurmd charm's `partition-config`.

use super::InterfaceError;
use crate::slurm::types::PartitionName;
use crate::slurm::{Partition, PartitionOverride, PartitionState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The relation key of the record.
pub const PARTITION_KEY: &str = "partition";

/// Partition keys the controller owns; a record that sets one is refused.
pub const OWNED_PARTITION_KEYS: &[&str] = &["PartitionName", "Nodes", "Default"];

/// One partition as a slurmd application describes it. Built only by [`PartitionRecord::new`],
/// [`PartitionRecord::from_overrides`] (from checked overrides) or deserialisation, which check every parameter with the slurm.conf parser's own rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Wire", into = "Wire")]
pub struct PartitionRecord {
    name: PartitionName,
    partition: Partition,
    params: BTreeMap<String, String>,
}

/// The JSON layout: one partition name → its parameters.
type Wire = BTreeMap<PartitionName, BTreeMap<String, String>>;

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::invalid(PARTITION_KEY, field, reason)
}

impl TryFrom<Wire> for PartitionRecord {
    type Error = InterfaceError;
    fn try_from(wire: Wire) -> Result<Self, InterfaceError> {
        let mut it = wire.into_iter();
        let (Some((name, params)), None) = (it.next(), it.next()) else {
            return Err(invalid("", "expected exactly one partition"));
        };
        Self::with_params(name, params)
    }
}

impl From<PartitionRecord> for Wire {
    fn from(r: PartitionRecord) -> Self {
        BTreeMap::from([(r.name, r.params)])
    }
}

impl PartitionRecord {
    /// The record for an application: `State=UP` plus `extra` (which may replace it).
    pub fn new(
        app: PartitionName,
        extra: &BTreeMap<String, String>,
    ) -> Result<Self, InterfaceError> {
        let mut params = BTreeMap::from([("State".to_string(), "UP".to_string())]);
        params.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        Self::with_params(app, params)
    }

    /// The record for an application from its checked `partition-config`
    /// ([`crate::slurm::parse_partition_overrides`], which refuses the keys the controller
    /// owns): what [`PartitionRecord::new`] makes of the same text, without checking it again.
    pub fn from_overrides(app: PartitionName, overrides: Vec<PartitionOverride>) -> Self {
        let mut params = BTreeMap::from([("State".to_string(), "UP".to_string())]);
        let mut partition = Partition::new(app.clone());
        partition.state = Some(PartitionState::Up);
        // In key order, as `with_params` sets them (the order `extra` is written in).
        let by_key: BTreeMap<&'static str, PartitionOverride> =
            overrides.into_iter().map(|o| (o.key(), o)).collect();
        for (key, o) in by_key {
            params.insert(key.to_string(), o.value().to_string());
            partition.apply(o.into_setting());
        }
        Self {
            name: app,
            partition,
            params,
        }
    }

    fn with_params(
        name: PartitionName,
        params: BTreeMap<String, String>,
    ) -> Result<Self, InterfaceError> {
        let mut partition = Partition::new(name.clone());
        for (k, v) in &params {
            let field = || format!("{name}.{k}");
            if OWNED_PARTITION_KEYS
                .iter()
                .any(|o| o.eq_ignore_ascii_case(k))
            {
                return Err(invalid(
                    field(),
                    format!("{k} is set by the slurmctld charm and cannot be given"),
                ));
            }
            partition
                .set(k, v)
                .map_err(|e| invalid(field(), e.to_string()))?;
        }
        Ok(Self {
            name,
            partition,
            params,
        })
    }

    /// The partition name.
    pub fn name(&self) -> &PartitionName {
        &self.name
    }

    /// The parameters as given (`State`, `MaxTime`, …).
    pub fn params(&self) -> &BTreeMap<String, String> {
        &self.params
    }

    /// The slurm.conf partition these parameters make (without nodes).
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The relation value: compact JSON with sorted keys.
    pub fn to_relation_value(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses and validates a relation value (exactly one partition).
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        // the layout first, then the checks: a refused parameter's error reaches the caller
        // typed, not as text serde wraps in a second `partition` prefix
        let wire: Wire = super::from_relation_json(PARTITION_KEY, raw)?;
        Self::try_from(wire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_overrides_make_the_record_new_makes() {
        for text in [
            "",
            "MaxTime=60",
            "state=DOWN maxtime=1:00:00 AllowGroups=a,b",
        ] {
            let name: PartitionName = "p".parse().unwrap();
            let typed = crate::slurm::parse_partition_overrides(text).unwrap();
            let pairs = crate::slurm::parse_overrides(text, crate::slurm::OverrideScope::Partition)
                .unwrap();
            let from_text = PartitionRecord::new(name.clone(), &pairs.into_iter().collect());
            assert_eq!(
                PartitionRecord::from_overrides(name, typed),
                from_text.unwrap()
            );
        }
    }

    #[test]
    fn round_trip() {
        let extra = BTreeMap::from([("MaxTime".to_string(), "1:00:00".to_string())]);
        let rec = PartitionRecord::new("slurmd".parse().unwrap(), &extra).unwrap();
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
            (r#"{"a":{"Bogus":"1"}}"#, "Bogus"),
            (r#"{"a b":{}}"#, "PartitionName"),
            (r#"nope"#, "not valid JSON"),
        ];
        for (raw, want) in bad {
            let e = PartitionRecord::from_relation_value(raw)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{raw}: {e}");
        }
    }

    #[test]
    fn a_refused_parameter_is_named_once() {
        let e = PartitionRecord::from_relation_value(r#"{"gpu": {"Nodes": "x"}}"#).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("`partition` field "), "{text}");
        assert_eq!(text.matches("`partition`").count(), 1, "{text}");
        assert!(text.contains("Nodes"), "{text}");
    }
}
