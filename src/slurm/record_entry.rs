//! The `Key=Value` pairs a `NodeName` or `PartitionName` line keeps as text (`TmpDisk=100`,
//! `MaxTime=1:00:00`): [`RecordEntry`], built only by `RecordKeys::entry`, which checks
//! the key against the record's table and the value against the key's [`ValueRule`].

use std::marker::PhantomData;

use super::error::ConfigError;
use super::keys::canonical;
use super::types::{ValueRule, check_key_value, rule_for};
use super::validate::{validate_token, validate_value};

/// The `NodeName` line, as the record a [`RecordEntry`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeLine {}

/// The `PartitionName` line, as the record a [`RecordEntry`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionLine {}

/// One checked `Key=Value` of a record line `R` ([`NodeLine`], [`PartitionLine`]): the key is
/// the CamelCase spelling from the record's key table, one the model has no field for, and the
/// value passed the key's [`ValueRule`] and token rule. The fields are private and the only
/// constructor is `RecordKeys::entry`, so the renderer writes entries without checking
/// them again, and a partition's entry cannot be put on a node line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordEntry<R> {
    key: &'static str,
    value: String,
    record: PhantomData<R>,
}

/// A `NodeName` line's entry (`TmpDisk`, `NodeAddr`, ...).
pub type NodeEntry = RecordEntry<NodeLine>;

/// A `PartitionName` line's entry (`MaxTime`, `AllowGroups`, ...).
pub type PartitionEntry = RecordEntry<PartitionLine>;

impl<R> RecordEntry<R> {
    /// The key, in Slurm's CamelCase spelling.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The value, as given (checked).
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// What a record line (`NodeName`, `PartitionName`) accepts for the keys its model keeps as
/// text: one rule for nodes and partitions.
pub(crate) struct RecordKeys<R> {
    /// Every key of the record ([`super::keys::NODE_KEYS`], [`super::keys::PARTITION_KEYS`]).
    pub keys: &'static [&'static str],
    /// The keys the model has a field for (never an entry).
    pub modelled: &'static [&'static str],
    /// Each key's value rule ([`ValueRule::Text`] when not listed).
    pub rules: &'static [(&'static str, ValueRule)],
    /// `node` or `partition`, for messages.
    pub what: &'static str,
    /// The record the entries belong to.
    pub record: PhantomData<R>,
}

impl<R> RecordKeys<R> {
    /// Checks the value of `key` (canonical): a token (no blanks, control characters, `#`,
    /// quotes or `\`) of the key's type. `=` stands only inside a value of `name=value` pairs
    /// (`TRESBillingWeights=CPU=1.0,Mem=0.25G`): Slurm's lexer would take it in any value, but
    /// no other node or partition value can hold one, so it is refused as a typo there.
    fn check_value(&self, key: &'static str, value: &str) -> Result<(), ConfigError> {
        if rule_for(self.rules, key).takes_pairs() {
            validate_value(key, value)?;
        } else {
            validate_token(key, value)?;
        }
        check_key_value(self.rules, key, value)?;
        Ok(())
    }

    /// Checks `key` (a CamelCase key of the record without a model field) and its `value`
    /// into an entry, for [`put_entry`] to set later without checking it again.
    pub fn entry(&self, key: &'static str, value: &str) -> Result<RecordEntry<R>, ConfigError> {
        if canonical(self.keys, key) != Some(key) || self.modelled.contains(&key) {
            return Err(ConfigError::InvalidKey {
                key: key.to_string(),
                context: format!("{} line", self.what),
                reason: format!(
                    "extra keys must be CamelCase Slurm {} keys that the model has no field for",
                    self.what
                ),
            });
        }
        self.check_value(key, value)?;
        Ok(RecordEntry {
            key,
            value: value.to_owned(),
            record: PhantomData,
        })
    }
}

/// Sets a checked `entry` in `extra`, replacing an earlier value of its key in place.
pub(crate) fn put_entry<R>(extra: &mut Vec<RecordEntry<R>>, entry: RecordEntry<R>) {
    match extra.iter_mut().find(|e| e.key == entry.key) {
        Some(slot) => slot.value = entry.value,
        None => extra.push(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::super::keys::NODE_KEYS;
    use super::*;

    const NODES: RecordKeys<NodeLine> = RecordKeys {
        keys: &NODE_KEYS,
        modelled: &["NodeName", "CPUs"],
        rules: super::super::types::NODE_RULES,
        what: "node",
        record: PhantomData,
    };

    fn set(extra: &mut Vec<NodeEntry>, key: &'static str, value: &str) -> Result<(), ConfigError> {
        put_entry(extra, NODES.entry(key, value)?);
        Ok(())
    }

    #[test]
    fn entries_are_checked_keys_and_values() {
        let mut extra = Vec::new();
        set(&mut extra, "TmpDisk", "100").unwrap();
        set(&mut extra, "TmpDisk", "200").unwrap();
        assert_eq!((extra[0].key(), extra[0].value()), ("TmpDisk", "200"));
        assert_eq!(extra.len(), 1);
        for (key, value) in [
            ("TmpDisk", "x"),
            ("NodeHostname", "a b"),
            ("CpuBind", "a=b"),
        ] {
            let e = set(&mut extra, key, value).unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
        // a modelled key, a key of no node line, a key not in its CamelCase spelling
        for key in ["CPUs", "MaxTime", "tmpdisk"] {
            let e = set(&mut extra, key, "1").unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("node line"), "{e}");
        }
    }
}
