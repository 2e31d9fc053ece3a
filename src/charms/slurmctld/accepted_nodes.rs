//! The nodes a render accepted, in the order they were accepted ([`AcceptedNodes`]).
//!
//! A changed hook at 10,000 units used to collect them into a map by name: a sort of 10,000
//! names by bytes and a tree build on every hook, for consumers that only iterate (the status's
//! counts, the fingerprints, which group by value) or look a few names up (the units a refusal
//! tells). They are kept as accepted instead; the few lookups pay for themselves
//! ([`AcceptedNodes::index`]).

use super::desired::AcceptedNode;
use crate::slurm::types::NodeName;
use rustc_hash::FxHashMap;

/// Lookups up to this many names scan the list; more build a map once ([`AcceptedNodes::index`]).
const SCAN_LOOKUPS: usize = 8;

/// Node name → the node a render accepted, in acceptance order (each name once: the render
/// refuses a second claim).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AcceptedNodes(Vec<(NodeName, AcceptedNode)>);

impl AcceptedNodes {
    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No node was accepted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// (name, node) in acceptance order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AcceptedNode)> {
        self.0.iter().map(|(name, n)| (name.as_str(), n))
    }

    /// The names, in acceptance order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| name.as_str())
    }

    /// The nodes, in acceptance order.
    pub fn values(&self) -> impl Iterator<Item = &AcceptedNode> {
        self.0.iter().map(|(_, n)| n)
    }

    /// The node named `name` (a scan: for one-off lookups; see [`AcceptedNodes::index`]).
    pub fn get(&self, name: &str) -> Option<&AcceptedNode> {
        self.0
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, n)| n)
    }

    /// A lookup for `wanted` names: a scan per name for a few, one map for more.
    pub fn index<'a>(&'a self, wanted: usize) -> impl Fn(&str) -> Option<&'a AcceptedNode> + 'a {
        let map: Option<FxHashMap<&str, &AcceptedNode>> = (wanted > SCAN_LOOKUPS)
            .then(|| self.0.iter().map(|(name, n)| (name.as_str(), n)).collect());
        move |name| match &map {
            Some(map) => map.get(name).copied(),
            None => self.get(name),
        }
    }
}

impl FromIterator<(NodeName, AcceptedNode)> for AcceptedNodes {
    fn from_iter<I: IntoIterator<Item = (NodeName, AcceptedNode)>>(iter: I) -> Self {
        AcceptedNodes(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::NodeConf;
    use std::sync::Arc;

    fn node(unit: &str) -> AcceptedNode {
        AcceptedNode {
            unit: super::super::unit_name::UnitName::new(unit, "a"),
            app: Arc::from("a"),
            new_node: false,
            node: Arc::new(NodeConf::new(crate::slurm::types::NodeName::placeholder())),
            shape_digest: 0,
        }
    }

    #[test]
    fn lookups_by_scan_and_by_map_agree() {
        let nodes: AcceptedNodes = (0..20)
            .map(|i| {
                let name = NodeName::try_from(format!("n{i}").as_str()).unwrap();
                (name, node(&format!("a/{i}")))
            })
            .collect();
        for wanted in [1, SCAN_LOOKUPS + 1] {
            let find = nodes.index(wanted);
            assert_eq!(find("n7").map(|n| n.unit_name()), Some("a/7".to_owned()));
            assert_eq!(find("n70").map(|n| n.unit_name()), None);
        }
        assert_eq!(
            nodes.get("n19").map(|n| n.unit_name()),
            Some("a/19".to_owned())
        );
        assert_eq!(nodes.names().next(), Some("n0"), "acceptance order kept");
        assert_eq!(nodes.len(), 20);
    }
}
