//! slurm.conf `PartitionName`, `DownNodes` and `NodeSet` records.

use std::collections::BTreeSet;
use std::fmt;

use super::error::ConfigError;
use super::hostlist;
use super::keys::{PARTITION_KEYS, RecordKeys, record_key};
use super::node::NodeState;
use super::types::{NodeName, PARTITION_RULES};
use super::validate::{validate_name, validate_text};

/// A partition state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartitionState {
    /// `UP`.
    Up,
    /// `DOWN`.
    Down,
    /// `DRAIN`.
    Drain,
    /// `INACTIVE`.
    Inactive,
}

impl PartitionState {
    /// Upper-case spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionState::Up => "UP",
            PartitionState::Down => "DOWN",
            PartitionState::Drain => "DRAIN",
            PartitionState::Inactive => "INACTIVE",
        }
    }

    /// Parses a state (case-insensitive).
    pub fn parse(value: &str) -> Result<PartitionState, ConfigError> {
        [
            PartitionState::Up,
            PartitionState::Down,
            PartitionState::Drain,
            PartitionState::Inactive,
        ]
        .into_iter()
        .find(|s| s.as_str().eq_ignore_ascii_case(value))
        .ok_or_else(|| ConfigError::invalid("State", value, "expected UP, DOWN, DRAIN or INACTIVE"))
    }
}

impl fmt::Display for PartitionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Validates a member of a node list (a node name, a NodeSet name or `ALL`).
fn validate_member(key: &str, value: &str) -> Result<(), ConfigError> {
    if value == "ALL" {
        return Ok(());
    }
    if NodeName::check(value).is_ok() {
        return Ok(());
    }
    validate_name(key, value)
}

/// Expands a hostlist value into a set of names, validating each.
pub(crate) fn node_set(key: &str, value: &str) -> Result<BTreeSet<String>, ConfigError> {
    let names =
        hostlist::expand(value).map_err(|e| ConfigError::invalid(key, value, e.to_string()))?;
    let mut out = BTreeSet::new();
    for n in names {
        validate_member(key, &n)?;
        out.insert(n);
    }
    Ok(out)
}

/// What a `PartitionName` line keeps as text.
const PARTITION_RECORD: RecordKeys = RecordKeys {
    keys: &PARTITION_KEYS,
    modelled: &["PartitionName", "Nodes", "Default", "State"],
    rules: PARTITION_RULES,
    what: "partition",
};

/// One `PartitionName` line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Partition {
    /// Partition name.
    pub name: String,
    /// `Nodes`: node names, NodeSet names or `ALL` (written as a compressed hostlist).
    pub nodes: BTreeSet<String>,
    /// `Default=YES` when true (nothing written when false).
    pub default: bool,
    /// `State`.
    pub state: Option<PartitionState>,
    /// Other partition keys (`MaxTime`, ...), CamelCase, in order.
    pub extra: Vec<(String, String)>,
}

impl Partition {
    /// A partition with only its name set.
    pub fn new(name: &str) -> Partition {
        Partition {
            name: name.to_string(),
            ..Partition::default()
        }
    }

    /// Sets one key (case-insensitive), validating the value. An unknown key is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let key = record_key(&PARTITION_KEYS, key, "PartitionName line", "partition")?;
        match key {
            "PartitionName" => {
                validate_name(key, value)?;
                self.name = value.to_string();
            }
            "Nodes" => self.nodes = node_set(key, value)?,
            "Default" => {
                self.default = match value.to_ascii_uppercase().as_str() {
                    "YES" => true,
                    "NO" => false,
                    _ => return Err(ConfigError::invalid(key, value, "expected YES or NO")),
                }
            }
            "State" => self.state = Some(PartitionState::parse(value)?),
            other => PARTITION_RECORD.set_extra(&mut self.extra, other, value)?,
        }
        Ok(())
    }

    /// Checks every field as [`Partition::set`] would.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_name("PartitionName", &self.name)?;
        for n in &self.nodes {
            validate_member("Nodes", n)?;
        }
        PARTITION_RECORD.check_extra(&self.extra, || format!("partition {}", self.name))
    }
}

/// One `DownNodes` line: nodes marked down (or drained, ...) every time slurm.conf is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DownNodes {
    /// Node names (written as a compressed hostlist).
    pub nodes: BTreeSet<String>,
    /// `State` (Slurm's default is DOWN).
    pub state: Option<NodeState>,
    /// `Reason` (free text, written quoted).
    pub reason: Option<String>,
}

impl DownNodes {
    /// Checks the node names and reason.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for n in &self.nodes {
            NodeName::check(n)?;
        }
        if let Some(r) = &self.reason {
            validate_text("Reason", r)?;
        }
        if let Some(s @ (NodeState::Cloud | NodeState::Unknown)) = self.state {
            return Err(ConfigError::invalid(
                "State",
                s.as_str(),
                "DownNodes accepts DOWN, DRAIN, FAIL, FAILING or FUTURE",
            ));
        }
        Ok(())
    }
}

/// One `NodeSet` line: a named group of nodes, by feature or by list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSet {
    /// NodeSet name.
    pub name: String,
    /// `Feature`: nodes with this feature belong to the set.
    pub feature: Option<String>,
    /// `Nodes`: explicit members (written as a compressed hostlist).
    pub nodes: BTreeSet<String>,
}

impl NodeSet {
    /// Checks the name, feature and members.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_name("NodeSet", &self.name)?;
        if let Some(f) = &self.feature {
            validate_name("Feature", f)?;
        }
        for n in &self.nodes {
            validate_member("Nodes", n)?;
        }
        if self.feature.is_none() && self.nodes.is_empty() {
            return Err(ConfigError::Missing {
                key: "Feature or Nodes".to_string(),
                context: format!("NodeSet {}", self.name),
            });
        }
        Ok(())
    }
}
