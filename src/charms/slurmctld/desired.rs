//! The controller's desired state: slurm.conf and gres.conf rendered holistically from every
//! current unit's cached record (what slurmctld then needs is [`super::decide`]). Pure: same
//! inputs, byte-identical output.

use super::cache::{Applied, Cache, fnv1a};
use crate::interface::{NodeRecord, PartitionRecord};
use crate::slurm::hostlist::{natural_cmp, natural_key};
use crate::slurm::types::NodeName;
use crate::slurm::{
    DownNodes, GresConf, GresLine, NodeConf, NodeState, OverrideScope, Partition, SlurmConf,
    parse_overrides,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// cgroup.conf: jobs see only the GPUs and cores they were given (as the reference charm), and
/// only their memory: the nodes send `MemSpecLimit`, which Slurm 24.11+ reports as "Limited
/// MemSpecLimit support" (an error in slurmd.log) unless `ConstrainRAMSpace=yes`.
pub const CGROUP_CONF_TEXT: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n\
ConstrainCores=yes\n\
ConstrainDevices=yes\n\
ConstrainRAMSpace=yes\n";

/// `DownNodes` reason for nodes that are new (until `node-configured`).
pub const NEW_NODE_REASON: &str = "New node.";

/// Config and facts the rendering depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `cluster-name`.
    pub cluster_name: String,
    /// `default-partition` (empty: none).
    pub default_partition: String,
    /// `slurm-conf-parameters` (Key=Value, lines or spaces).
    pub slurm_conf_parameters: String,
    /// This controller's host name (`SlurmctldHost`).
    pub hostname: String,
}

/// One node that made it into the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedNode {
    /// The unit that sent it.
    pub unit: String,
    /// Its application (partition).
    pub app: String,
    /// `new_node` (the node is in `DownNodes`).
    pub new_node: bool,
    /// Its shape: the record with a placeholder `NodeName` (the map key is the name) and
    /// `new_node` false, shared by every node of that shape.
    pub record: Arc<NodeRecord>,
}

/// The rendered result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// slurm.conf text (None when rendering failed).
    pub slurm_conf: Option<String>,
    /// gres.conf text.
    pub gres_conf: Option<String>,
    /// Why rendering failed (the old files stay).
    pub render_error: Option<String>,
    /// Nodes in the files, by node name.
    pub nodes: BTreeMap<String, AcceptedNode>,
    /// Units (or applications) left out, with the reason.
    pub rejected: Vec<(String, String)>,
    /// Applications whose nodes wait for their `partition` record.
    pub waiting_apps: Vec<String>,
    /// What slurmctld will have once applied.
    pub applied: Applied,
}

/// A shape of the cache, read (the cache file is a boundary: parsed into a [`NodeRecord`]
/// again) once per hook.
struct Shape {
    record: Arc<NodeRecord>,
    node: NodeConf,
    lines: Vec<GresLine>,
    gres: String,
}

fn load_shape(raw: Option<&String>) -> Result<Shape, String> {
    let raw = raw.ok_or("cached node shape is missing")?;
    let record = NodeRecord::from_relation_value(raw).map_err(|e| e.to_string())?;
    let (node, lines) = (record.node().clone(), record.gres().to_vec());
    let gres = record.gres_string();
    Ok(Shape {
        record: Arc::new(record),
        node,
        lines,
        gres,
    })
}

impl Plan {
    /// What the status appends about left-out units and waiting applications:
    /// `; 2 units rejected (gpu/3, gpu/7): gpu/3: <reason>; waiting for partition from x`.
    /// Each rejected unit is also logged with its reason ([`crate::charms`] warns per unit).
    pub fn problems(&self) -> String {
        let mut msg = String::new();
        if let Some((who, why)) = self.rejected.first() {
            let n = self.rejected.len();
            let names: Vec<&str> = self
                .rejected
                .iter()
                .take(5)
                .map(|(w, _)| w.as_str())
                .collect();
            let more = if n > 5 { ", …" } else { "" };
            msg.push_str(&format!(
                "; {n} rejected ({}{more}): {who}: {why}",
                names.join(", ")
            ));
        }
        if !self.waiting_apps.is_empty() {
            msg.push_str(&format!(
                "; waiting for partition from {}",
                self.waiting_apps.join(",")
            ));
        }
        msg
    }
}

/// Applies `slurm-conf-parameters` (`Key=Value` pairs, blank- or line-separated, Slurm's lexical rules, no
/// charm-owned keys: [`crate::slurm::parse_overrides`]) to the model.
pub fn apply_parameters(conf: &mut SlurmConf, text: &str) -> Result<(), String> {
    let pairs = parse_overrides(text, OverrideScope::SlurmConf).map_err(|e| e.to_string())?;
    for (k, v) in pairs {
        conf.set_global(&k, &v).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Renders the files from every cached relation.
pub fn plan(settings: &Settings, cache: &Cache) -> Plan {
    let relations = &cache.relations;
    let mut rejected = Vec::new();
    let mut waiting_apps = Vec::new();
    let mut nodes: BTreeMap<String, AcceptedNode> = BTreeMap::new();
    // Accepted node name → index into `shapes`.
    let mut accepted: Vec<(&NodeName, usize)> = Vec::new();
    let mut partitions: Vec<Partition> = Vec::new();
    let mut claimed: BTreeMap<String, String> = BTreeMap::new();
    let mut shape_index: HashMap<&str, Result<usize, String>> = HashMap::new();
    let mut shapes: Vec<Shape> = Vec::new();

    // Units sorted by name across relations, so "first come" is deterministic.
    for rel in relations.values() {
        let partition = match rel.partition.as_deref() {
            None => {
                if !rel.units.is_empty() {
                    waiting_apps.push(rel.app.clone());
                }
                continue;
            }
            Some(raw) => match PartitionRecord::from_relation_value(raw) {
                Ok(p) => p,
                Err(e) => {
                    rejected.push((rel.app.clone(), e.to_string()));
                    continue;
                }
            },
        };
        // One partition name, one application: a second claim is that application's problem
        // alone (slurmctld refuses a partition defined twice).
        match claimed.entry(partition.name().to_string()) {
            std::collections::btree_map::Entry::Occupied(first) => {
                rejected.push((
                    rel.app.clone(),
                    format!(
                        "partition {} is already published by application {}",
                        partition.name(),
                        first.get()
                    ),
                ));
                continue;
            }
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(rel.app.clone());
            }
        }
        let mut part = partition.partition().clone();
        let mut units: Vec<_> = rel.units.iter().collect();
        units.sort_by_cached_key(|(unit, _)| natural_key(unit));
        for (unit, cached) in units {
            if let Some(why) = &cached.rejected {
                rejected.push((unit.clone(), why.clone()));
                continue;
            }
            let index = shape_index.entry(cached.shape.as_str()).or_insert_with(|| {
                let shape = load_shape(cache.shapes.get(&cached.shape))?;
                shapes.push(shape);
                Ok(shapes.len() - 1)
            });
            let index = match index {
                Ok(i) => *i,
                Err(e) => {
                    rejected.push((unit.clone(), e.clone()));
                    continue;
                }
            };
            let Some(name) = &cached.name else {
                rejected.push((unit.clone(), "cached record has no NodeName".to_string()));
                continue;
            };
            match nodes.entry(name.to_string()) {
                std::collections::btree_map::Entry::Occupied(other) => {
                    rejected.push((
                        unit.clone(),
                        format!("NodeName {name} is already used by {}", other.get().unit),
                    ));
                    continue;
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(AcceptedNode {
                        unit: unit.clone(),
                        app: rel.app.clone(),
                        new_node: cached.new_node,
                        record: Arc::clone(&shapes[index].record),
                    });
                }
            }
            accepted.push((name, index));
            part.nodes.insert(name.to_string());
        }
        part.default =
            !settings.default_partition.is_empty() && part.name == settings.default_partition;
        if !part.nodes.is_empty() {
            partitions.push(part);
        }
    }

    let mut slurm = SlurmConf::new(&settings.cluster_name, &settings.hostname);
    let mut gres = GresConf::default();
    let mut render_error = apply_parameters(&mut slurm, &settings.slurm_conf_parameters)
        .err()
        .map(|e| format!("config option `slurm-conf-parameters`: {e}"));
    accepted.sort_by_cached_key(|(name, _)| natural_key(name));
    slurm.nodes.reserve(accepted.len());
    for &(name, index) in &accepted {
        let shape = &shapes[index];
        let mut node = shape.node.clone();
        node.name = name.clone();
        slurm.nodes.push(node);
        if !shape.lines.is_empty() {
            gres.nodes.insert(name.clone(), shape.lines.clone());
        }
    }
    partitions.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    // Without `default-partition`, the first partition by name is the default, so jobs
    // submitted without `-p` run (slurmctld logs "default partition not set" otherwise).
    if settings.default_partition.is_empty() {
        if let Some(first) = partitions.first_mut() {
            first.default = true;
        }
    }
    slurm.partitions = partitions;
    let down: BTreeSet<String> = nodes
        .iter()
        .filter(|(_, n)| n.new_node)
        .map(|(k, _)| k.clone())
        .collect();
    if !down.is_empty() {
        slurm.down_nodes.push(DownNodes {
            nodes: down.clone(),
            state: Some(NodeState::Down),
            reason: Some(NEW_NODE_REASON.to_string()),
        });
    }
    let (mut slurm_text, mut gres_text) = (None, None);
    if render_error.is_none() {
        match crate::slurm::render_files(&slurm, &gres) {
            Ok(files) => {
                slurm_text = Some(files.slurm_conf);
                gres_text = Some(files.gres_conf);
            }
            Err(e) => render_error = Some(e.to_string()),
        }
    }
    let applied = Applied {
        nodes: accepted
            .iter()
            .map(|&(name, index)| (name.to_string(), shapes[index].gres.clone()))
            .collect(),
        down,
        files_hash: fnv1a(&[
            slurm_text.as_deref().unwrap_or_default().as_bytes(),
            b"\0",
            gres_text.as_deref().unwrap_or_default().as_bytes(),
            b"\0",
            CGROUP_CONF_TEXT.as_bytes(),
        ]),
    };
    Plan {
        slurm_conf: slurm_text,
        gres_conf: gres_text,
        render_error,
        nodes,
        rejected,
        waiting_apps,
        applied,
    }
}
