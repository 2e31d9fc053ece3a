//! [`NodeGroup`]: nodes that share every field of their line but the name.

use std::sync::Arc;

use super::node::NodeConf;
use super::types::NodeName;

/// Nodes whose slurm.conf lines are equal but for `NodeName` (the controller's nodes of one
/// hardware shape): the line's fields are held once, shared (`Arc`), with the names. A model of
/// 10,000 alike nodes then holds one [`NodeConf`] instead of 10,000 copies, and the checks and
/// the renderer look at the shared fields once per group rather than once per node. Rendered
/// exactly as the same nodes listed one by one in [`super::SlurmConf::nodes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGroup {
    /// The shared fields; its `name` is not used (each node's name is in `names`).
    pub node: Arc<NodeConf>,
    /// The nodes' names, in natural order (errors about the shared fields name the first).
    pub names: Vec<NodeName>,
}

impl NodeGroup {
    /// The nodes of this group, one [`NodeConf`] each (copies: for tests and the normal form).
    pub fn expand(&self) -> impl Iterator<Item = NodeConf> + '_ {
        self.names.iter().map(|name| NodeConf {
            name: name.clone(),
            ..NodeConf::clone(&self.node)
        })
    }
}
