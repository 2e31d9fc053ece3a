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
use super::node::NodeConf;
use super::partition::Partition;
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

/// Parses override text into `(key, value)` pairs, in order. Keys of partition and node
/// overrides come back in their CamelCase spelling; global keys as written. Refuses unknown
/// node/partition keys, charm-owned keys, a key given twice, and any value that is not a
/// valid token for its key.
pub fn parse_overrides(
    text: &str,
    scope: OverrideScope,
) -> Result<Vec<(String, String)>, ParseError> {
    let origin = scope.option();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut seen = HashSet::new();
    let mut scratch_node = NodeConf::new(crate::slurm::types::NodeName::placeholder());
    let mut scratch_part = Partition::new(crate::slurm::types::PartitionName::placeholder());
    for ll in logical_lines(text) {
        let err = |kind: ParseErrorKind| ParseError {
            origin: origin.to_string(),
            line: ll.line,
            kind,
        };
        if include_directive(&ll.text).is_some() {
            return Err(err(ConfigError::OwnedKey {
                key: "Include".to_string(),
                context: origin.to_string(),
            }
            .into()));
        }
        let kv = pairs(&ll.text).map_err(|e| {
            err(ParseErrorKind::Syntax {
                expected: e.expected.to_string(),
                found: e.found,
            })
        })?;
        for (k, v) in kv {
            let key = check_pair(scope, k, v, &mut scratch_node, &mut scratch_part)
                .map_err(|e| err(e.into()))?;
            if !seen.insert(key.to_ascii_lowercase()) {
                return Err(err(ConfigError::DuplicateKey {
                    key,
                    context: origin.to_string(),
                }
                .into()));
            }
            out.push((key, v.to_string()));
        }
    }
    if scope == OverrideScope::SlurmConf {
        super::slurm_conf::check_globals_together(&out).map_err(|e| ParseError {
            origin: origin.to_string(),
            line: 0,
            kind: e.into(),
        })?;
    }
    Ok(out)
}

fn check_pair(
    scope: OverrideScope,
    key: &str,
    value: &str,
    node: &mut NodeConf,
    part: &mut Partition,
) -> Result<String, ConfigError> {
    let context = scope.option();
    validate_key(key, context)?;
    let owned = |key: &str| ConfigError::OwnedKey {
        key: key.to_string(),
        context: context.to_string(),
    };
    match scope {
        OverrideScope::SlurmConf => {
            if let Some(k) = owned_global(key) {
                return Err(owned(k));
            }
            Ok(super::slurm_conf::check_global(key, value)?.to_string())
        }
        OverrideScope::Partition => {
            record_pair(&PARTITION_KEYS, &PARTITION_OWNED, key, owned, || {
                part.set(key, value)
            })
        }
        OverrideScope::Node => {
            record_pair(&NODE_KEYS, &NODE_OWNED, key, owned, || node.set(key, value))
        }
    }
}

/// A record override's key in its CamelCase spelling, after refusing a key the charm owns
/// (`owned_keys`) and checking the pair by the record's own `set`.
fn record_pair(
    keys: &[&'static str],
    owned_keys: &[&'static str],
    key: &str,
    owned: impl Fn(&str) -> ConfigError,
    set: impl FnOnce() -> Result<(), ConfigError>,
) -> Result<String, ConfigError> {
    let canon = canonical(keys, key);
    if let Some(k) = canon.and_then(|k| canonical(owned_keys, k)) {
        return Err(owned(k));
    }
    set()?;
    Ok(canon.unwrap_or(key).to_string())
}
