//! slurm.conf `PartitionName`, `DownNodes` and `NodeSet` records.

use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;

use super::error::ConfigError;
use super::hostlist;
use super::keys::{PARTITION_KEYS, record_key};
use super::node::NodeState;
use super::record_entry::{PartitionEntry, PartitionLine, RecordKeys, put_entry};
use super::types::{
    Feature, NodeName, NodeRef, NodeSetName, PARTITION_RULES, PartitionName, Reason,
};

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

/// Expands a `DownNodes` hostlist into a set of node names, each checked once here.
pub(crate) fn node_set(key: &str, value: &str) -> Result<BTreeSet<NodeName>, ConfigError> {
    let names =
        hostlist::expand(value).map_err(|e| ConfigError::invalid(key, value, e.to_string()))?;
    let mut out = BTreeSet::new();
    for n in names {
        out.insert(NodeName::try_from(n)?);
    }
    Ok(out)
}

/// What a `PartitionName` line keeps as text.
const PARTITION_RECORD: RecordKeys<PartitionLine> = RecordKeys {
    keys: &PARTITION_KEYS,
    modelled: &["PartitionName", "Nodes", "Default", "State"],
    rules: PARTITION_RULES,
    what: "partition",
    record: PhantomData,
};

/// One `PartitionName` line. Every field is a vocabulary type, built where the value enters
/// ([`Partition::set`]: the parser, `partition-config`, the `partition` relation record; the
/// controller adds its nodes' names), so the renderer writes it without checking it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Partition name.
    pub name: PartitionName,
    /// `Nodes`: node names, NodeSet names or `ALL` (written as a compressed hostlist).
    pub nodes: BTreeSet<NodeRef>,
    /// More `Nodes`, by node name: rendered and checked as if each were a [`NodeRef::Node`] in
    /// `nodes` (duplicates count once). The controller's partitions hold thousands of nodes:
    /// it gives their names here, in the order of its node groups, so no set of references is
    /// built per hook, and the check that each is defined walks them alongside the groups
    /// rather than looking each one up.
    pub node_names: Vec<NodeName>,
    /// `Default=YES` when true (nothing written when false).
    pub default: bool,
    /// `State`.
    pub state: Option<PartitionState>,
    /// Other partition keys (`MaxTime`, ...), CamelCase, in order.
    pub extra: Vec<PartitionEntry>,
}

impl Partition {
    /// A partition with only its name set.
    pub fn new(name: PartitionName) -> Partition {
        Partition {
            name,
            nodes: BTreeSet::new(),
            node_names: Vec::new(),
            default: false,
            state: None,
            extra: Vec::new(),
        }
    }

    /// Whether the partition lists any node (in `nodes` or `node_names`): one without is
    /// written without `Nodes=` (the controller leaves such a partition out).
    pub fn has_nodes(&self) -> bool {
        !self.nodes.is_empty() || !self.node_names.is_empty()
    }

    /// Sets one key (case-insensitive), validating the value. An unknown key is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        self.apply(Partition::check(key, value)?.1);
        Ok(())
    }

    /// Checks one key (case-insensitive) and its text value as [`Partition::set`] does,
    /// without a partition: the key's CamelCase spelling and the typed value, which
    /// [`Partition::apply`] then sets without checking it again.
    pub fn check(key: &str, value: &str) -> Result<(&'static str, PartitionSetting), ConfigError> {
        let key = record_key(&PARTITION_KEYS, key, "PartitionName line", "partition")?;
        let setting = match key {
            "PartitionName" => PartitionSetting::Name(PartitionName::try_from(value)?),
            "Nodes" => PartitionSetting::Nodes(NodeRef::list("Nodes", value)?),
            "Default" => PartitionSetting::Default(match value.to_ascii_uppercase().as_str() {
                "YES" => true,
                "NO" => false,
                _ => return Err(ConfigError::invalid(key, value, "expected YES or NO")),
            }),
            "State" => PartitionSetting::State(PartitionState::parse(value)?),
            other => PartitionSetting::Extra(PARTITION_RECORD.entry(other, value)?),
        };
        Ok((key, setting))
    }

    /// Sets a value [`Partition::check`] made, replacing the key's earlier value.
    pub fn apply(&mut self, setting: PartitionSetting) {
        match setting {
            PartitionSetting::Name(v) => self.name = v,
            PartitionSetting::Nodes(v) => {
                self.nodes = v;
                self.node_names.clear();
            }
            PartitionSetting::Default(v) => self.default = v,
            PartitionSetting::State(v) => self.state = Some(v),
            PartitionSetting::Extra(e) => put_entry(&mut self.extra, e),
        }
    }
}

/// One `PartitionName` key's checked value ([`Partition::check`]), set by
/// [`Partition::apply`]: a field of [`Partition`] or an entry of its `extra`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionSetting {
    /// `PartitionName`.
    Name(PartitionName),
    /// `Nodes`.
    Nodes(BTreeSet<NodeRef>),
    /// `Default` (`YES` is true).
    Default(bool),
    /// `State`.
    State(PartitionState),
    /// A key the model keeps as text (`MaxTime`, ...).
    Extra(PartitionEntry),
}

/// One `DownNodes` line: nodes marked down (or drained, ...) every time slurm.conf is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DownNodes {
    /// Node names (written as a compressed hostlist; valid by their type).
    pub nodes: BTreeSet<NodeName>,
    /// `State` (Slurm's default is DOWN).
    pub state: Option<NodeState>,
    /// `Reason` (free text, written quoted).
    pub reason: Option<Reason>,
}

impl DownNodes {
    /// Checks the state (the node names and the reason are valid by their types).
    pub fn validate(&self) -> Result<(), ConfigError> {
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSet {
    /// NodeSet name.
    pub name: NodeSetName,
    /// `Feature`: nodes with this feature belong to the set.
    pub feature: Option<Feature>,
    /// `Nodes`: explicit members (written as a compressed hostlist).
    pub nodes: BTreeSet<NodeRef>,
}

impl NodeSet {
    /// A set of nodes by `Feature` or `Nodes`: one of them is required (the name and members
    /// are valid by their types).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.feature.is_none() && self.nodes.is_empty() {
            return Err(ConfigError::Missing {
                key: "Feature or Nodes".to_string(),
                context: format!("NodeSet {}", self.name),
            });
        }
        Ok(())
    }
}
