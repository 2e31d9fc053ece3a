//! The slurm.conf model: charm-owned globals, pass-through keys, includes and records.

use std::collections::{BTreeMap, BTreeSet};

use super::error::ConfigError;
use super::hostlist::{natural_cmp, natural_key};
use super::keys::{GlobalKey, owned_global};
use super::node::NodeConf;
use super::node_group::NodeGroup;
use super::overrides::GlobalOverride;
use super::partition::{DownNodes, NodeSet, Partition};
use super::types::{NodeRef, Reason};
use super::validate::{validate_key, validate_name, validate_token, validate_value};

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

/// Checks a pass-through global `key=value` by Slurm's rules: the key must be one Slurm
/// 22.05, 24.11 and 26.05 all know ([`crate::slurm::types::GLOBAL_KEYS`]; otherwise the
/// error suggests the closest known key) and the value must be a token of the key's type.
/// Returns the key in Slurm's spelling.
pub fn check_global(key: &str, value: &str) -> Result<&'static str, ConfigError> {
    use crate::slurm::types::{GLOBAL_KEYS, closest, global_rule};
    let Some((canon, rule)) = global_rule(key) else {
        let hint = closest(GLOBAL_KEYS.iter().map(|(k, _)| *k), key)
            .map(|k| format!("; did you mean {k}?"))
            .unwrap_or_default();
        return Err(ConfigError::InvalidKey {
            key: key.to_string(),
            context: "slurm-conf-parameters".to_string(),
            reason: format!(
                "not a slurm.conf key of Slurm 22.05, 24.11 and 26.05 (slurmctld would stop on it){hint}"
            ),
        });
    };
    validate_value(canon, value)?;
    rule.check(value)
        .map_err(|e| crate::slurm::types::VocabError { what: canon, ..e })?;
    Ok(canon)
}

/// The rules between global keys that `_validate_and_set_defaults` enforces (each a fatal
/// error): `FirstJobId` ≤ `MaxJobId` (defaults 1 and `0x03ff0000`), and a non-zero
/// `SlurmSchedLogLevel` needs `SlurmSchedLogFile`; `PriorityDecayHalfLife=0` needs
/// `PriorityUsageResetPeriod` (`read_config.c` 4695/4922/4799); `PreemptMode` must fit
/// `PreemptType` ("PreemptType and PreemptMode values incompatible", 22.05 l.4562-4577). `pairs` are canonical keys.
pub fn check_globals_together(pairs: &[(&str, &str)]) -> Result<(), ConfigError> {
    use crate::slurm::types::DEFAULT_MAX_JOB_ID;
    let get = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let num = |key: &str, default: u64| get(key).and_then(|v| v.parse().ok()).unwrap_or(default);
    if num("FirstJobId", 1) > num("MaxJobId", DEFAULT_MAX_JOB_ID) {
        return Err(ConfigError::invalid(
            "FirstJobId",
            get("FirstJobId").unwrap_or("1"),
            format!(
                "larger than MaxJobId ({}); Slurm stops on FirstJobId > MaxJobId",
                num("MaxJobId", DEFAULT_MAX_JOB_ID)
            ),
        ));
    }
    let decay_zero = get("PriorityDecayHalfLife")
        .and_then(|v| crate::slurm::types::SlurmDuration::try_from(v).ok())
        .is_some_and(|d| d.minutes() == Some(0));
    if decay_zero && get("PriorityUsageResetPeriod").is_none() {
        return Err(ConfigError::invalid(
            "PriorityDecayHalfLife",
            get("PriorityDecayHalfLife").unwrap_or_default(),
            "0 needs PriorityUsageResetPeriod (Slurm stops: usage would roll over)",
        ));
    }
    if get("PreemptMode").is_some() || get("PreemptType").is_some() {
        let mode = get("PreemptMode").unwrap_or("OFF");
        let words: Vec<String> = mode.split(',').map(str::to_ascii_uppercase).collect();
        let off = !words
            .iter()
            .any(|w| ["CANCEL", "REQUEUE", "SUSPEND", "ON"].contains(&w.as_str()));
        let within = words.iter().any(|w| w == "WITHIN");
        let preempt_type = get("PreemptType").unwrap_or("preempt/none");
        let bad = match preempt_type {
            "preempt/none" => !off || within,
            "preempt/qos" | "preempt/partition_prio" => off,
            _ => false,
        };
        if bad {
            return Err(ConfigError::invalid(
                "PreemptMode",
                mode,
                format!(
                    "incompatible with PreemptType={preempt_type} (preempt/none takes only OFF or GANG; \
                     preempt/qos and preempt/partition_prio need CANCEL, REQUEUE or SUSPEND): Slurm stops"
                ),
            ));
        }
    }
    if num("SlurmSchedLogLevel", 0) != 0 && get("SlurmSchedLogFile").is_none() {
        return Err(ConfigError::invalid(
            "SlurmSchedLogLevel",
            get("SlurmSchedLogLevel").unwrap_or_default(),
            "needs SlurmSchedLogFile (Slurm stops without it)",
        ));
    }
    Ok(())
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
