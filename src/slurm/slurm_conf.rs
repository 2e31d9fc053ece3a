//! The slurm.conf model: charm-owned globals, pass-through keys, includes and records.

use std::collections::{BTreeMap, BTreeSet};

use super::error::ConfigError;
use super::global_check::check_global;
use super::hostlist::{natural_cmp, natural_key};
use super::keys::{GlobalKey, owned_global};
use super::node::NodeConf;
use super::node_group::NodeGroup;
use super::overrides::GlobalOverride;
use super::partition::{DownNodes, NodeSet, Partition};
use super::types::{NodeRef, Reason};
use super::validate::{validate_key, validate_name, validate_token};

/// slurm.conf as the charm owns it. Equality is on the normalised form
/// ([`SlurmConf::normalized`]): `parse(render(x)) == x.normalized()`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlurmConf {
    /// `ClusterName` (required to render).
    pub cluster_name: String,
    /// `SlurmctldHost` lines, primary first (at least one to render).
    pub slurmctld_hosts: Vec<String>,
    /// Charm-owned global keys ([`GlobalKey`]), written in [`GlobalKey::ALL`] order.
    pub owned: BTreeMap<GlobalKey, String>,
    /// Other global keys (operator `slurm-conf-parameters`), as written, in order.
    pub extra: Vec<(String, String)>,
    /// `Include` files, in order.
    pub includes: Vec<String>,
    /// Nodes, one per node (the renderer folds identical ones into hostlist lines).
    pub nodes: Vec<NodeConf>,
    /// More nodes, grouped by shared fields ([`NodeGroup`]); rendered as if listed in `nodes`.
    pub node_groups: Vec<NodeGroup>,
    /// NodeSets.
    pub node_sets: Vec<NodeSet>,
    /// Partitions.
    pub partitions: Vec<Partition>,
    /// DownNodes lines.
    pub down_nodes: Vec<DownNodes>,
}

impl SlurmConf {
    /// A configuration with the charm's defaults for every [`GlobalKey`] and no nodes.
    pub fn new(cluster_name: &str, slurmctld_host: &str) -> SlurmConf {
        SlurmConf {
            cluster_name: cluster_name.to_string(),
            slurmctld_hosts: vec![slurmctld_host.to_string()],
            owned: GlobalKey::ALL
                .into_iter()
                .filter(|k| !k.default_value().is_empty())
                .map(|k| (k, k.default_value().to_string()))
                .collect(),
            ..SlurmConf::default()
        }
    }

    /// Sets an owned global key, validating the value as a token.
    pub fn set_owned(&mut self, key: GlobalKey, value: &str) -> Result<(), ConfigError> {
        validate_token(key.as_str(), value)?;
        self.owned.insert(key, value.to_string());
        Ok(())
    }

    /// Sets any global key (case-insensitive): `ClusterName`, `SlurmctldHost` (appends),
    /// an owned key, or a pass-through key (replaced in place when already present).
    /// Record keys (`NodeName`, ...) and `Include` are refused here.
    pub fn set_global(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        validate_key(key, "slurm.conf")?;
        if key.eq_ignore_ascii_case("ClusterName") {
            validate_name("ClusterName", value)?;
            self.cluster_name = value.to_string();
        } else if key.eq_ignore_ascii_case("SlurmctldHost") {
            validate_token("SlurmctldHost", value)?;
            self.slurmctld_hosts.push(value.to_string());
        } else if let Some(k) = GlobalKey::from_key(key) {
            self.set_owned(k, value)?;
        } else if let Some(owned) = owned_global(key) {
            return Err(ConfigError::InvalidKey {
                key: key.to_string(),
                context: "slurm.conf globals".to_string(),
                reason: format!("{owned} is not a global key of this model"),
            });
        } else {
            self.put_extra(check_global(key, value)?, value);
        }
        Ok(())
    }

    /// Sets a checked `slurm-conf-parameters` pair ([`super::parse_global_overrides`]: never
    /// a key the model owns) without checking it again, replacing an earlier value in place.
    pub fn set_override(&mut self, pair: &GlobalOverride) {
        self.put_extra(pair.key(), pair.value());
    }

    /// Sets a pass-through key (canonical, checked), replacing an earlier value in place.
    fn put_extra(&mut self, key: &str, value: &str) {
        if let Some(slot) = self
            .extra
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        {
            value.clone_into(&mut slot.1);
        } else {
            self.extra.push((key.to_string(), value.to_string()));
        }
    }

    /// How many nodes the model defines (listed and grouped).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
            + self
                .node_groups
                .iter()
                .map(|g| g.names.len())
                .sum::<usize>()
    }

    /// Every node's shared fields with its names: each listed node alone, then each group.
    pub(crate) fn node_lines(&self) -> impl Iterator<Item = (&NodeConf, NodeNames<'_>)> {
        let listed = self
            .nodes
            .iter()
            .map(|n| (n, NodeNames::One(n.name.as_str())));
        let grouped = self
            .node_groups
            .iter()
            .filter(|g| !g.names.is_empty())
            .map(|g| (&*g.node, NodeNames::Many(&g.names)));
        listed.chain(grouped)
    }

    /// The names listed in `GresTypes` (lower-cased).
    pub fn gres_types(&self) -> BTreeSet<String> {
        self.owned
            .get(&GlobalKey::GresTypes)
            .map(|v| v.split(',').map(str::to_ascii_lowercase).collect())
            .unwrap_or_default()
    }

    /// The normal form: nodes, node sets and partitions in natural name order; GRES lists,
    /// features and `extra` keep their order; DownNodes lines with the same state and reason
    /// merged, sorted by (state, reason).
    pub fn normalized(&self) -> SlurmConf {
        let mut out = self.clone();
        out.normalize();
        out
    }

    /// Puts this model in normal form in place (see [`SlurmConf::normalized`]); grouped nodes
    /// are listed one by one, and partitions' `node_names` put in their `nodes` (as the parser
    /// reads them back).
    pub fn normalize(&mut self) {
        for g in std::mem::take(&mut self.node_groups) {
            self.nodes.extend(g.expand());
        }
        for p in &mut self.partitions {
            let names = std::mem::take(&mut p.node_names);
            p.nodes.extend(names.into_iter().map(NodeRef::Node));
        }
        self.nodes
            .sort_by(|a, b| natural_key(&a.name).cmp(&natural_key(&b.name)));
        self.node_sets.sort_by(|a, b| natural_cmp(&a.name, &b.name));
        self.partitions
            .sort_by(|a, b| natural_cmp(&a.name, &b.name));
        self.down_nodes = merge_down_nodes(&self.down_nodes);
    }
}

/// Merges DownNodes lines with the same (state, reason), sorted by (state, reason); empty
/// lines are dropped.
pub fn merge_down_nodes(lines: &[DownNodes]) -> Vec<DownNodes> {
    let mut merged: BTreeMap<(Option<super::NodeState>, Option<Reason>), DownNodes> =
        BTreeMap::new();
    for d in lines {
        let entry = merged
            .entry((d.state, d.reason.clone()))
            .or_insert_with(|| DownNodes {
                nodes: BTreeSet::new(),
                state: d.state,
                reason: d.reason.clone(),
            });
        entry.nodes.extend(d.nodes.iter().cloned());
    }
    merged
        .into_values()
        .filter(|d| !d.nodes.is_empty())
        .collect()
}

/// The names of the nodes that share one line's fields ([`SlurmConf::node_lines`]).
#[derive(Clone, Copy)]
pub(crate) enum NodeNames<'a> {
    /// A listed node.
    One(&'a str),
    /// A group's names (never empty).
    Many(&'a [super::types::NodeName]),
}

impl<'a> NodeNames<'a> {
    /// The first name (the one errors about the shared fields name).
    pub(crate) fn first(self) -> &'a str {
        match self {
            NodeNames::One(n) => n,
            NodeNames::Many(names) => names.first().map_or("", |n| n.as_str()),
        }
    }

    /// Every name.
    pub(crate) fn iter(self) -> impl Iterator<Item = &'a str> {
        let (one, many): (Option<&'a str>, &'a [super::types::NodeName]) = match self {
            NodeNames::One(n) => (Some(n), &[]),
            NodeNames::Many(names) => (None, names),
        };
        one.into_iter().chain(many.iter().map(|n| n.as_str()))
    }
}
