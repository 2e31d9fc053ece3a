//! Operator overrides: `slurm-conf-parameters` (`Key=Value` pairs, several per line allowed as
//! Slurm's `s_p_parse_line` reads them), `partition-config`
//! and `node-config` (space-separated `Key=Value`). They go through the same lexer as the
//! files and may not set keys the charm owns (see `docs/slurm-config.md`).

use std::collections::HashSet;

use super::error::{ConfigError, ParseError, ParseErrorKind};
use super::keys::{
    NODE_KEYS, NODE_OWNED, PARTITION_KEYS, PARTITION_OWNED, canonical, owned_global,
};
use super::lexer::{include_directive, logical_lines, pairs};
use super::node::{NodeConf, NodeSetting};
use super::partition::{Partition, PartitionSetting};
use super::types::Feature;
use super::validate::validate_key;

/// Which override option the text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideScope {
    /// slurmctld `slurm-conf-parameters`: global `Key=Value` pairs (blank- or line-separated).
    SlurmConf,
    /// slurmd `partition-config`: partition keys.
    Partition,
    /// slurmd `node-config`: node keys.
    Node,
}

impl OverrideScope {
    /// The option name, used as the error origin.
    pub fn option(self) -> &'static str {
        match self {
            OverrideScope::SlurmConf => "slurm-conf-parameters",
            OverrideScope::Partition => "partition-config",
            OverrideScope::Node => "node-config",
        }
    }
}

/// One checked override: the key in its CamelCase spelling, the value as written and the
/// typed `setting` the model takes ([`NodeSetting`], [`PartitionSetting`], [`GlobalPair`]).
/// Fields are private and the only constructors are the `parse_*_overrides` functions,
/// [`node_override`] and [`Override::features`], so the model is built from it
/// ([`NodeConf::apply`], [`Partition::apply`], [`super::SlurmConf::set_override`]) without
/// checking the value again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override<S> {
    key: &'static str,
    value: String,
    setting: S,
}

impl<S> Override<S> {
    /// The key, in Slurm's CamelCase spelling.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The value, as written (checked).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The checked value, typed for the model.
    pub fn setting(&self) -> &S {
        &self.setting
    }

    /// The checked value, typed for the model.
    pub fn into_setting(self) -> S {
        self.setting
    }
}

/// A `slurm-conf-parameters` pair: the model keeps global keys it does not own as text, so the
/// checked key and value are the whole setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalPair;

/// A checked `node-config` pair.
pub type NodeOverride = Override<NodeSetting>;

/// A checked `partition-config` pair.
pub type PartitionOverride = Override<PartitionSetting>;

/// A checked `slurm-conf-parameters` pair.
pub type GlobalOverride = Override<GlobalPair>;

impl Override<NodeSetting> {
    /// A `Features` override made of features already checked (the operator's with the GPU
    /// features merged in, [`crate::gpu::merge_features`]), so they are not written out and
    /// parsed again. Its value is their comma list, which reads back as the same list (a
    /// [`Feature`] holds no `,`), so it can be stored like a parsed one. `None` for no
    /// features: `Features=` needs at least one.
    pub fn features(features: Vec<Feature>) -> Option<NodeOverride> {
        if features.is_empty() {
            return None;
        }
        let value = features
            .iter()
            .map(Feature::as_str)
            .collect::<Vec<&str>>()
            .join(",");
        Some(Override {
            key: "Features",
            value,
            setting: NodeSetting::Features(features),
        })
    }
}

/// Checks one `node-config` pair: the rules of [`parse_node_overrides`] for a pair given on
/// its own (the charm's stored overrides, read back in a later hook), so the pairs the action
/// parsed and the ones stored are held to the same rules, written once.
pub fn node_override(key: &str, value: &str) -> Result<NodeOverride, ConfigError> {
    checked(key, value, OverrideScope::Node, check_node)
}

/// A node key not owned by the charm, and its typed value.
fn check_node(key: &str, value: &str) -> Result<(&'static str, NodeSetting), ConfigError> {
    record_key(&NODE_KEYS, &NODE_OWNED, key, OverrideScope::Node)?;
    NodeConf::check(key, value)
}

/// Parses `node-config` text into checked node overrides, in order (see [`parse_overrides`]
/// for what is refused).
pub fn parse_node_overrides(text: &str) -> Result<Vec<NodeOverride>, ParseError> {
    parse_with(text, OverrideScope::Node, check_node)
}

/// Parses `partition-config` text into checked partition overrides, in order (see
/// [`parse_overrides`] for what is refused).
pub fn parse_partition_overrides(text: &str) -> Result<Vec<PartitionOverride>, ParseError> {
    parse_with(text, OverrideScope::Partition, |key, value| {
        record_key(
            &PARTITION_KEYS,
            &PARTITION_OWNED,
            key,
            OverrideScope::Partition,
        )?;
        Partition::check(key, value)
    })
}

/// Parses `slurm-conf-parameters` text into checked global pairs, in order, and checks them
/// together ([`super::global_check::check_globals_together`]; see [`parse_overrides`] for what
/// is refused).
pub fn parse_global_overrides(text: &str) -> Result<Vec<GlobalOverride>, ParseError> {
    let scope = OverrideScope::SlurmConf;
    let out = parse_with(text, scope, |key, value| {
        if let Some(k) = owned_global(key) {
            return Err(owned(scope, k));
        }
        Ok((super::global_check::check_global(key, value)?, GlobalPair))
    })?;
    let pairs: Vec<(&str, &str)> = out.iter().map(|o| (o.key, o.value())).collect();
    super::global_check::check_globals_together(&pairs).map_err(|e| ParseError {
        origin: scope.option().to_string(),
        line: 0,
        kind: e.into(),
    })?;
    Ok(out)
}

/// Parses override text into `(key, value)` pairs, in order: the text of the checked
/// overrides ([`parse_node_overrides`], [`parse_partition_overrides`],
/// [`parse_global_overrides`]). Keys come back in their CamelCase spelling. Refuses unknown
/// keys, charm-owned keys, a key given twice, and any value that is not a valid token for
/// its key.
pub fn parse_overrides(
    text: &str,
    scope: OverrideScope,
) -> Result<Vec<(String, String)>, ParseError> {
    fn as_text<S>(overrides: Vec<Override<S>>) -> Vec<(String, String)> {
        overrides
            .into_iter()
            .map(|o| (o.key.to_string(), o.value))
            .collect()
    }
    Ok(match scope {
        OverrideScope::SlurmConf => as_text(parse_global_overrides(text)?),
        OverrideScope::Partition => as_text(parse_partition_overrides(text)?),
        OverrideScope::Node => as_text(parse_node_overrides(text)?),
    })
}

/// The lexing and the rules every option shares: no `Include`, `Key=Value` pairs by Slurm's
/// lexer, well-formed keys, no key twice; `check` refuses owned keys and types the value.
fn parse_with<S>(
    text: &str,
    scope: OverrideScope,
    mut check: impl FnMut(&str, &str) -> Result<(&'static str, S), ConfigError>,
) -> Result<Vec<Override<S>>, ParseError> {
    let origin = scope.option();
    let mut out: Vec<Override<S>> = Vec::new();
    let mut seen = HashSet::new();
    for ll in logical_lines(text) {
        let err = |kind: ParseErrorKind| ParseError {
            origin: origin.to_string(),
            line: ll.line,
            kind,
        };
        if include_directive(&ll.text).is_some() {
            return Err(err(owned(scope, "Include").into()));
        }
        let kv = pairs(&ll.text).map_err(|e| {
            err(ParseErrorKind::Syntax {
                expected: e.expected.to_string(),
                found: e.found,
            })
        })?;
        for (k, v) in kv {
            let o = checked(k, v, scope, &mut check).map_err(|e| err(e.into()))?;
            if !seen.insert(o.key.to_ascii_lowercase()) {
                return Err(err(ConfigError::DuplicateKey {
                    key: o.key.to_string(),
                    context: origin.to_string(),
                }
                .into()));
            }
            out.push(o);
        }
    }
    Ok(out)
}

/// One pair by the rules every option shares (a well-formed key) and `check`'s.
fn checked<S>(
    key: &str,
    value: &str,
    scope: OverrideScope,
    check: impl FnOnce(&str, &str) -> Result<(&'static str, S), ConfigError>,
) -> Result<Override<S>, ConfigError> {
    validate_key(key, scope.option())?;
    let (key, setting) = check(key, value)?;
    Ok(Override {
        key,
        value: value.to_string(),
        setting,
    })
}

/// The error for a key the charm owns.
fn owned(scope: OverrideScope, key: &str) -> ConfigError {
    ConfigError::OwnedKey {
        key: key.to_string(),
        context: scope.option().to_string(),
    }
}

/// Refuses a record key the charm owns (`owned_keys`), by its CamelCase spelling.
fn record_key(
    keys: &[&'static str],
    owned_keys: &[&'static str],
    key: &str,
    scope: OverrideScope,
) -> Result<(), ConfigError> {
    match canonical(keys, key).and_then(|k| canonical(owned_keys, k)) {
        Some(k) => Err(owned(scope, k)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{NodeState, PartitionState, SlurmConf};
    use super::*;

    #[test]
    fn the_typed_value_is_what_reaches_the_model() {
        let o = parse_node_overrides("cpus=4 state=drain tmpdisk=100").unwrap();
        assert_eq!(o[0].setting(), &NodeSetting::Cpus(4));
        assert_eq!(o[1].setting(), &NodeSetting::State(NodeState::Drain));
        assert_eq!((o[2].key(), o[2].value()), ("TmpDisk", "100"));
        let mut node = NodeConf::new(crate::slurm::types::NodeName::placeholder());
        for x in o {
            node.apply(x.into_setting());
        }
        assert_eq!((node.cpus, node.state), (Some(4), Some(NodeState::Drain)));
        let p = parse_partition_overrides("state=down").unwrap();
        assert_eq!(
            p[0].setting(),
            &PartitionSetting::State(PartitionState::Down)
        );
        let mut conf = SlurmConf::new("c", "h");
        for g in parse_global_overrides("maxjobcount=10\nMaxJobCount=20").unwrap_or_default() {
            conf.set_override(&g);
        }
        assert!(conf.extra.is_empty(), "a key twice is refused");
        for g in parse_global_overrides("maxjobcount=10").unwrap() {
            conf.set_override(&g);
        }
        assert_eq!(conf.extra, [("MaxJobCount".to_string(), "10".to_string())]);
    }

    #[test]
    fn a_pair_on_its_own_is_held_to_the_texts_rules() {
        let parsed = parse_node_overrides("weight=5 Features=ib,a").unwrap();
        assert_eq!(node_override("weight", "5").as_ref(), Ok(&parsed[0]));
        assert_eq!(node_override("Features", "ib,a").as_ref(), Ok(&parsed[1]));
        for (key, value) in [
            ("NodeName", "x"),
            ("Gres", "gpu:t4:1"),
            ("Nope", "1"),
            ("CPUs", "70000"),
        ] {
            let text = format!("{key}={value}");
            let from_text = parse_node_overrides(&text).map(drop).unwrap_err().kind;
            let alone = node_override(key, value).unwrap_err();
            assert_eq!(from_text, alone.into(), "{text}");
        }
        // Keys the lexer would not take as keys at all.
        for key in ["a b", "a-b", ""] {
            let e = node_override(key, "1").unwrap_err();
            assert!(matches!(e, ConfigError::InvalidKey { .. }), "{key:?}: {e}");
        }
    }

    #[test]
    fn features_made_typed_read_back_the_same() {
        let list = Feature::parse_list("ib,tesla_t4,cuda12").unwrap();
        let o = NodeOverride::features(list.clone()).unwrap();
        assert_eq!((o.key(), o.value()), ("Features", "ib,tesla_t4,cuda12"));
        assert_eq!(o.setting(), &NodeSetting::Features(list));
        assert_eq!(node_override(o.key(), o.value()), Ok(o));
        assert_eq!(NodeOverride::features(Vec::new()), None);
    }
}
