//! The names a `Nodes=` list may hold: nodes, NodeSets and `ALL`.

use std::collections::BTreeSet;

use super::error::VocabError;
use super::node_name::NodeName;
use super::partition_name::check_name;
use crate::slurm::hostlist;
use serde::{Deserialize, Serialize};

/// A NodeSet name (`NodeSet=<name>`): a name by [`super::PartitionName`]'s rule (no blanks,
/// `#`, `=`, quotes, `\`, `,`, `:`, brackets or parentheses, not `ALL`/`DEFAULT`). A partition
/// may list it in `Nodes=` for the nodes of the set.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct NodeSetName(String);

fn check_node_set_name(value: &str) -> Result<(), VocabError> {
    check_name("NodeSet", value)
}

string_newtype!(NodeSetName, check_node_set_name);

/// One name of a partition's or NodeSet's `Nodes=` list. Slurm takes a node name, a NodeSet
/// name or `ALL` there and resolves them once every line is read, so a name that is a valid
/// node name is kept as one ([`NodeRef::Node`]) whether it names a node or a NodeSet; the
/// renderer's reference check accepts either.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeRef {
    /// `ALL`: every node (written in upper case, as Slurm requires).
    All,
    /// A node (or a NodeSet whose name is a valid node name).
    Node(NodeName),
    /// A NodeSet whose name no node can have (`gpu+ib`, `a@b`).
    NodeSet(NodeSetName),
}

impl NodeRef {
    /// The name as written in `Nodes=`.
    pub fn as_str(&self) -> &str {
        match self {
            NodeRef::All => "ALL",
            NodeRef::Node(n) => n.as_str(),
            NodeRef::NodeSet(s) => s.as_str(),
        }
    }

    /// The names of a `Nodes=` hostlist value (`gpu-[1-4],login,ALL`), each checked; `key`
    /// (`Nodes`, `DownNodes`) names the value in errors.
    pub fn list(key: &'static str, value: &str) -> Result<BTreeSet<NodeRef>, VocabError> {
        let names =
            hostlist::expand(value).map_err(|e| VocabError::new(key, value, e.to_string()))?;
        names
            .into_iter()
            .map(|n| NodeRef::try_from(n.as_str()).map_err(|e| VocabError { what: key, ..e }))
            .collect()
    }
}

impl TryFrom<&str> for NodeRef {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        if value == "ALL" {
            return Ok(NodeRef::All);
        }
        if let Ok(n) = NodeName::try_from(value) {
            return Ok(NodeRef::Node(n));
        }
        NodeSetName::try_from(value)
            .map(NodeRef::NodeSet)
            .map_err(|e| VocabError {
                what: "Nodes",
                reason: format!("not a node name, NodeSet name or ALL: {}", e.reason),
                ..e
            })
    }
}

parsed_newtype!(NodeRef);

impl From<NodeName> for NodeRef {
    fn from(name: NodeName) -> Self {
        NodeRef::Node(name)
    }
}

impl AsRef<str> for NodeRef {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for NodeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_node_sets_and_all() {
        assert_eq!(NodeRef::try_from("ALL").unwrap(), NodeRef::All);
        assert!(matches!(
            NodeRef::try_from("gpu-1").unwrap(),
            NodeRef::Node(_)
        ));
        assert!(matches!(
            NodeRef::try_from("gpu+ib").unwrap(),
            NodeRef::NodeSet(_)
        ));
        let l = NodeRef::list("Nodes", "gpu-[1-3],login,ALL").unwrap();
        assert_eq!(l.len(), 5);
        assert_eq!(NodeRef::All.to_string(), "ALL");
    }

    #[test]
    fn near_misses_are_refused_naming_the_list() {
        for no in [
            "all", "Default", "a b", "a=b", "a#b", "a:b", "(a)", "a\"b", "",
        ] {
            let e = NodeRef::try_from(no).unwrap_err().to_string();
            assert!(e.contains("Nodes"), "{no:?}: {e}");
        }
        let e = NodeRef::list("Nodes", "gpu-[3-1]").unwrap_err().to_string();
        assert!(e.contains("Nodes"), "{e}");
        let e = NodeRef::list("Nodes", "ok,a:b").unwrap_err().to_string();
        assert!(e.contains("Nodes") && e.contains("a:b"), "{e}");
        assert!(NodeSetName::try_from("ALL").is_err());
    }
}
