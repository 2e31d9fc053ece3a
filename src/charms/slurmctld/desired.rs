//! The controller's desired state: slurm.conf and gres.conf rendered holistically from every
//! current unit's cached record (what slurmctld then needs is [`super::decide`]). Pure: same
//! inputs, byte-identical output.

use super::accepted_nodes::AcceptedNodes;
use super::cache::{Applied, Cache, CachedRelation, OVERSIZED_MARK, OversizedValue, fnv1a};
use super::grouped::Grouped;
use super::node_groups::{self, NodeGroups};
use super::owners::{Owners, settle, settle_flagged};
use super::unit_name::UnitName;
use crate::interface::{
    AuthKind, InterfaceError, NodeRecord, PartitionRecord, RecordsMemo, Verdicts,
};
use crate::slurm::GlobalKey;
use crate::slurm::hostlist::{natural_cmp, sort_naturally};
use crate::slurm::types::{NodeName, Reason, VocabError};
use crate::slurm::{
    DownNodes, GresConf, GresGroup, GresLine, MemoSession, NodeConf, NodeGroup, NodeRecords,
    NodeState, ParseError, Partition, SlurmConf, parse_global_overrides,
};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;
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
    /// This controller's host name (`SlurmctldHost`, the nodes' `--conf-server`), read once at
    /// observe; a name Slurm refuses blocks the leader and renders nothing.
    pub hostname: Result<NodeName, VocabError>,
    /// `auth-type`: `AuthType`/`CredType` munge (default) or slurm.
    pub auth: AuthKind,
}

/// One node that made it into the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedNode {
    /// The unit that sent it (its number: the full name is [`AcceptedNode::unit_name`]).
    pub unit: UnitName,
    /// Its application (partition), shared by the application's nodes.
    pub app: Arc<str>,
    /// `new_node` (the node is in `DownNodes`).
    pub new_node: bool,
    /// Its shape's node line (placeholder `NodeName`: the map key is the name), shared by
    /// every node of that shape.
    pub node: Arc<NodeConf>,
    /// FNV-1a state after the shape's key in the cache (the hash of its stored parts) and a
    /// newline: where each node's fingerprint ([`super::refusal::fingerprints`]) starts,
    /// computed once per shape when it is read, so no shape is serialized again to
    /// fingerprint it.
    pub shape_digest: u64,
}

impl AcceptedNode {
    /// The full name of the unit that sent it.
    pub fn unit_name(&self) -> String {
        self.unit.to_full(&self.app)
    }
}

/// The FNV-1a state after a text standing for a shape (its cache key) and a newline (see
/// [`AcceptedNode::shape_digest`]).
pub fn shape_digest(shape: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(shape.as_bytes());
    h.write(b"\n");
    h.finish()
}

/// The rendered result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// slurm.conf text (None when rendering failed).
    pub slurm_conf: Option<String>,
    /// gres.conf text.
    pub gres_conf: Option<String>,
    /// Why rendering failed (the old files stay): the blocked status's text, made from the
    /// typed error ([`ParametersError`], the renderer's [`crate::slurm::ConfigError`], the
    /// `auth-type` refusal) when the plan is made.
    pub render_error: Option<String>,
    /// Nodes in the files, in acceptance order.
    pub nodes: AcceptedNodes,
    /// Units (or applications) left out, with the reason.
    pub rejected: Vec<(String, String)>,
    /// Applications whose nodes wait for their `partition` record.
    pub waiting_apps: Vec<String>,
    /// What slurmctld will have once applied.
    pub applied: Applied,
    /// Who owns which partition name after this hook (first come), and the sticky default
    /// partition.
    pub owners: Owners,
    /// The cached units whose ownership of the node name they publish changes in this hook:
    /// (relation key, unit, owns it after) ([`Cache::set_owners`]).
    pub owner_changes: Vec<(String, String, bool)>,
    /// Per relation (cache key): the units left out and why, to publish as `verdicts`.
    pub verdicts: BTreeMap<String, Verdicts>,
    /// `default-partition` when it names no partition (a warning in the status).
    pub default_missing: Option<String>,
    /// The models the files were rendered from (a line per node each), no longer needed:
    /// handed back so the caller decides how they go ([`crate::charms::host::Host::release`]).
    pub spent_models: (SlurmConf, GresConf),
    /// The hostlists this render used and made (the next render's memo, once the hook's
    /// other node lists are added: [`super::refusal::fingerprints`]).
    pub hostlists: MemoSession,
    /// How many nodes are in the files: the status's count.
    pub node_count: usize,
    /// How many GPUs (GRES counts) those nodes have: the status's count.
    pub gres_count: u64,
    /// The nodes' fingerprints when the plan made them already (the plan from node groups,
    /// [`super::group_plan`], which lists no [`Plan::nodes`]); otherwise they are made from
    /// [`Plan::nodes`] when slurmctld is brought in line.
    pub fingerprints: Option<Grouped>,
    /// The node groups the next hook may plan from ([`super::node_groups`]); `None` when this
    /// outcome is not one they stand for (a unit or application left out, a render error,
    /// more than [`super::node_groups::MAX_GROUPS`] groups).
    pub node_groups: Option<NodeGroups>,
}

/// Records that `who` (a unit of relation `key`) is left out, for the status and its verdict.
fn reject(
    rejected: &mut Vec<(String, String)>,
    verdicts: &mut BTreeMap<String, Verdicts>,
    key: &str,
    who: &str,
    why: String,
) {
    verdicts
        .entry(key.to_string())
        .or_default()
        .0
        .insert(who.to_string(), why.clone());
    rejected.push((who.to_string(), why));
}

/// Records that application `rel.app` is left out: the status names the application, and each
/// of its units gets the verdict.
fn reject_app(
    rejected: &mut Vec<(String, String)>,
    verdicts: &mut BTreeMap<String, Verdicts>,
    key: &str,
    rel: &CachedRelation,
    why: String,
) {
    let v = verdicts.entry(key.to_string()).or_default();
    for unit in rel.units.keys() {
        v.0.insert(unit.to_owned(), format!("application {}: {why}", rel.app));
    }
    rejected.push((rel.app.clone(), why));
}

/// Why an application's cached `partition` value is refused: every unit of the application
/// is left out, with this error's text in its verdict (made when the verdict is recorded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// The value was over the size limit (only its size was cached).
    #[error(transparent)]
    Oversized(#[from] OversizedValue),
    /// The value is not a valid `partition` record (the message names the field and the rule).
    #[error(transparent)]
    Record(#[from] InterfaceError),
}

/// A cached `partition` value parsed (or why not).
fn parse_partition(raw: &str) -> Result<PartitionRecord, PartitionError> {
    if let Some(len) = raw.strip_prefix(OVERSIZED_MARK) {
        return Err(OversizedValue {
            key: "partition",
            len: len.parse().unwrap_or_default(),
        }
        .into());
    }
    Ok(PartitionRecord::from_relation_value(raw)?)
}

/// Why a cached node shape cannot be read back: the units of that shape are left out, with
/// this error's text in their verdicts. The cache file is a boundary (a damaged or
/// hand-edited file shows here); the next full rebuild re-reads every unit's record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// The unit's shape key names no stored shape.
    #[error(
        "cached node shape is missing (the relation cache is damaged; it is rebuilt when the leader changes or the charm is upgraded)"
    )]
    MissingShape,
    /// The shape's gres-list key names no stored list.
    #[error(
        "cached gres list is missing (the relation cache is damaged; it is rebuilt when the leader changes or the charm is upgraded)"
    )]
    MissingGresList,
    /// The stored parts are not a valid record any more.
    #[error(transparent)]
    Record(#[from] InterfaceError),
}

/// A node the plan accepted.
struct Accepted<'a> {
    name: &'a NodeName,
    /// Where its shape is in the plan's list of shapes.
    shape: usize,
    /// Its relation's cache key.
    relation: &'a str,
    new_node: bool,
}

/// A shape of the cache, read (the cache file is a boundary: parsed into a [`NodeRecord`]
/// again) once per hook.
pub(super) struct Shape {
    /// Its key in [`Cache::shapes`].
    pub(super) key: String,
    /// [`shape_digest`] of the key: where its nodes' fingerprints start.
    pub(super) digest: u64,
    /// Its node line (placeholder name).
    pub(super) node: Arc<NodeConf>,
    /// Its gres.conf records.
    pub(super) lines: NodeRecords,
    /// Its `Gres=` value (what the applied record keeps per node).
    pub(super) gres: String,
}

impl Shape {
    /// GPUs (and other GRES) a node of this shape has: what the status counts.
    pub(super) fn gres_count(&self) -> u64 {
        self.node.gres.iter().map(|g| g.count).sum()
    }
}

/// Reads shape `key` of the cache (see [`Shape`]).
pub(super) fn load_shape(
    key: &str,
    cache: &Cache,
    memo: &mut RecordsMemo,
) -> Result<Shape, ShapeError> {
    let stored = cache.shapes.get(key).ok_or(ShapeError::MissingShape)?;
    let list = match &stored.gres {
        Some(k) => Some(
            cache
                .gres_lists
                .get(k)
                .ok_or(ShapeError::MissingGresList)?
                .as_str(),
        ),
        None => None,
    };
    // Shapes that differ only in their node line (`RealMemory`) share one parsed list of
    // records: 10,000 distinct nodes of one GPU model hold (and parse) one list, not 10,000.
    let record = NodeRecord::from_shape_parts_memo(stored.node.as_str(), list, memo)?;
    let gres = record.gres_string();
    let (node, lines) = record.into_parts();
    Ok(Shape {
        key: key.to_owned(),
        // the key is the hash of both stored parts: it stands for the shape's content
        digest: shape_digest(key),
        node: Arc::new(node),
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
        if let Some(name) = &self.default_missing {
            msg.push_str(&format!("; default-partition {name} names no partition"));
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

/// Why `slurm-conf-parameters` cannot be applied: the leader blocks with it and writes no
/// files until the option is fixed. Typed so the status is made from it once, with the
/// parser's error as its source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParametersError {
    /// The text is not `Key=Value` by Slurm's rules, sets a key the charm owns, or a value
    /// is refused for its key.
    #[error("config option `slurm-conf-parameters`: {0}")]
    Parse(#[from] ParseError),
}

/// Applies `slurm-conf-parameters` (`Key=Value` pairs, blank- or line-separated, Slurm's lexical rules, no
/// charm-owned keys: [`crate::slurm::parse_global_overrides`]) to the model; the pairs are
/// checked once, when parsed.
pub fn apply_parameters(conf: &mut SlurmConf, text: &str) -> Result<(), ParametersError> {
    for pair in parse_global_overrides(text)? {
        conf.set_override(&pair);
    }
    Ok(())
}

/// Renders the files from every cached relation.
pub fn plan(settings: &Settings, cache: &Cache) -> Plan {
    plan_with_owners(
        settings,
        cache,
        cache.owners.clone(),
        MemoSession::new(cache.hostlists.clone()),
    )
}

/// [`plan`], given the cache's owners table by value ([`Cache::owners`] is then ignored): a
/// leader hook moves it out of the cache it observed, and the table (a line per node) is
/// pruned and extended in place rather than copied. The long node lists' hostlists come from
/// `hostlists` where their names did not change (a leader hook makes it from the cache's memo,
/// [`Cache::hostlists`], moved out likewise).
pub fn plan_with_owners(
    settings: &Settings,
    cache: &Cache,
    previous: Owners,
    mut hostlists: MemoSession,
) -> Plan {
    let Owners {
        partitions: previous_partitions,
        default_partition: previous_default,
    } = previous;
    let relations = &cache.relations;
    let mut rejected = Vec::new();
    let mut waiting_apps = Vec::new();
    // Accepted nodes in acceptance order (made a map once, at the end: one bulk build rather
    // than 10,000 inserts), and where each name is.
    let mut accepted_nodes: Vec<(NodeName, AcceptedNode)> = Vec::new();
    // The accepted nodes by name, with where their shapes are in `shapes`.
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut partitions: Vec<Partition> = Vec::new();
    let mut shape_index: FxHashMap<&str, Result<usize, ShapeError>> = FxHashMap::default();
    let mut shapes: Vec<Shape> = Vec::new();
    let mut last_shape: Option<(&str, usize)> = None;
    let mut records_memo = RecordsMemo::default();

    let mut verdicts: BTreeMap<String, Verdicts> = BTreeMap::new();
    // Relations in arrival order: by relation id as a number, never as a string.
    let mut rels: Vec<(&String, &CachedRelation)> = relations.iter().collect();
    rels.sort_by_key(|(_, r)| r.id);
    let parsed: Vec<Option<Result<PartitionRecord, PartitionError>>> = rels
        .iter()
        .map(|(_, r)| r.partition.as_deref().map(parse_partition))
        .collect();
    // First come: names already owned stay with their owners ([`super::owners`]).
    let partition_claims: Vec<(&str, &str)> = rels
        .iter()
        .zip(&parsed)
        .filter_map(|((_, r), p)| match p {
            Some(Ok(p)) => Some((p.name().as_str(), r.app.as_str())),
            _ => None,
        })
        .collect();
    let previous = previous_partitions
        .iter()
        .map(|(n, o)| (n.as_str(), o.as_str()));
    let partition_owners: BTreeMap<String, String> = settle(previous, &partition_claims)
        .into_iter()
        .map(|(n, o)| (n.to_owned(), o.to_owned()))
        .collect();
    // Each relation's units in natural order (unit number), sorted once for both passes.
    let sorted_units: Vec<Vec<_>> = rels
        .iter()
        .map(|(_, r)| {
            let mut units: Vec<_> = r.units.iter().collect();
            // natural order by ranked prefix and number (compares integers, not strings)
            sort_naturally(&mut units, |&(unit, _)| unit);
            units
        })
        .collect();
    let mut node_claims: Vec<(&str, &str, bool)> = Vec::new();
    for (((_, r), p), units) in rels.iter().zip(&parsed).zip(&sorted_units) {
        let Some(Ok(p)) = p else { continue };
        if partition_owners.get(p.name().as_str()) != Some(&r.app) {
            continue;
        }
        for &(unit, cached) in units {
            if let (Some(name), None) = (&cached.name, &cached.rejected) {
                node_claims.push((name.as_str(), unit, cached.owner));
            }
        }
    }
    let node_owners = settle_flagged(&node_claims);
    // The units whose ownership of their name changes, found as each is looked at below.
    let mut owner_changes: Vec<(String, String, bool)> = Vec::new();

    for (((key, rel), parsed), units) in rels.iter().zip(parsed).zip(sorted_units) {
        // Who owns the name each unit publishes (looked up once per unit, for both uses), and
        // whether the unit does after this hook (a unit of an application left out owns none).
        let name_owners: Vec<Option<&str>> = units
            .iter()
            .map(|(_, cached)| {
                let name = cached.name?;
                node_owners.get(name.as_str()).copied()
            })
            .collect();
        for (&(unit, cached), owner) in units.iter().zip(&name_owners) {
            let owns = *owner == Some(unit);
            if owns != cached.owner {
                owner_changes.push((key.to_string(), unit.to_owned(), owns));
            }
        }
        let partition = match parsed {
            None => {
                if !rel.units.is_empty() {
                    waiting_apps.push(rel.app.clone());
                }
                continue;
            }
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                reject_app(&mut rejected, &mut verdicts, key, rel, e.to_string());
                continue;
            }
        };
        // One partition name, one application (slurmctld refuses a partition defined twice):
        // the application that published it first keeps it; a later claim is that
        // application's problem alone.
        match partition_owners.get(partition.name().as_str()) {
            Some(owner) if *owner != rel.app => {
                let why = format!(
                    "partition {} is already published by application {owner} (it published it first)",
                    partition.name()
                );
                reject_app(&mut rejected, &mut verdicts, key, rel, why);
                continue;
            }
            _ => {}
        }
        let mut part = partition.partition().clone();
        let app: Arc<str> = Arc::from(rel.app.as_str());
        let mut part_nodes: Vec<NodeName> = Vec::with_capacity(units.len());
        for ((unit, cached), name_owner) in units.into_iter().zip(name_owners) {
            if let Some(why) = cached.rejected {
                reject(&mut rejected, &mut verdicts, key, unit, why.to_owned());
                continue;
            }
            // units of one shape mostly come in runs: the shape before costs a comparison
            let index = match last_shape {
                Some((shape, i)) if shape == cached.shape => i,
                _ => {
                    let index = shape_index.entry(cached.shape).or_insert_with(|| {
                        let shape = load_shape(cached.shape, cache, &mut records_memo)?;
                        shapes.push(shape);
                        Ok(shapes.len() - 1)
                    });
                    match index {
                        Ok(i) => {
                            last_shape = Some((cached.shape, *i));
                            *i
                        }
                        Err(e) => {
                            reject(&mut rejected, &mut verdicts, key, unit, e.to_string());
                            continue;
                        }
                    }
                }
            };
            let Some(name) = cached.name else {
                let why = "cached record has no NodeName".to_string();
                reject(&mut rejected, &mut verdicts, key, unit, why);
                continue;
            };
            // Each name has one owner, so the names accepted are distinct.
            match name_owner {
                Some(owner) if owner == unit => {}
                Some(owner) => {
                    let why =
                        format!("NodeName {name} is already used by {owner} (it claimed it first)");
                    reject(&mut rejected, &mut verdicts, key, unit, why);
                    continue;
                }
                None => {
                    // every unit that reaches here claimed its name: never expected
                    let why =
                        format!("NodeName {name} was not claimed (please report this charm bug)");
                    reject(&mut rejected, &mut verdicts, key, unit, why);
                    continue;
                }
            }
            accepted_nodes.push((
                name.clone(),
                AcceptedNode {
                    unit: UnitName::new(unit, &app),
                    app: Arc::clone(&app),
                    new_node: cached.new_node,
                    node: Arc::clone(&shapes[index].node),
                    shape_digest: shapes[index].digest,
                },
            ));
            accepted.push(Accepted {
                name,
                shape: index,
                relation: key,
                new_node: cached.new_node,
            });
            part_nodes.push(name.clone());
        }
        part.node_names = part_nodes;
        part.default = !settings.default_partition.is_empty()
            && part.name.as_str() == settings.default_partition;
        if part.has_nodes() {
            partitions.push(part);
        }
    }

    // Who owns which name is settled: what it took (a map or list per node each) goes before
    // the model and the files are made, so they reuse its memory (at 10,000 distinct nodes
    // the hook's peak is while the files are rendered).
    drop((node_owners, node_claims, shape_index, records_memo));
    // The new nodes, by the names checked at ingest (`accepted` is in `accepted_nodes` order).
    let down: BTreeSet<NodeName> = accepted
        .iter()
        .filter(|a| a.new_node)
        .map(|a| a.name.clone())
        .collect();
    let nodes = AcceptedNodes::from_iter(accepted_nodes);
    let mut slurm = SlurmConf::new(
        &settings.cluster_name,
        settings.hostname.as_ref().map_or("", NodeName::as_str),
    );
    let mut gres = GresConf::default();
    if settings.auth == AuthKind::Slurm {
        slurm
            .owned
            .insert(GlobalKey::AuthType, "auth/slurm".to_owned());
        slurm
            .owned
            .insert(GlobalKey::CredType, "cred/slurm".to_owned());
    }
    let mut render_error = apply_parameters(&mut slurm, &settings.slurm_conf_parameters)
        .err()
        .map(|e| e.to_string());
    sort_naturally(&mut accepted, |a| a.name.as_str());
    // One group per shape, in the order of its first node: the shape's line is shared, not
    // copied per node, and checked and folded once per shape.
    let mut group_of: Vec<Option<usize>> = vec![None; shapes.len()];
    // One gres.conf group per record list (shapes that differ only in their node line share one).
    let mut gres_group_of: Vec<Option<usize>> = vec![None; shapes.len()];
    let mut gres_groups: FxHashMap<*const Vec<GresLine>, usize> = FxHashMap::default();
    for &Accepted {
        name, shape: index, ..
    } in &accepted
    {
        let shape = &shapes[index];
        let group = *group_of[index].get_or_insert_with(|| {
            slurm.node_groups.push(NodeGroup {
                node: Arc::clone(&shape.node),
                names: Vec::new(),
            });
            slurm.node_groups.len() - 1
        });
        slurm.node_groups[group].names.push(name.clone());
        if !shape.lines.is_empty() {
            let g = *gres_group_of[index].get_or_insert_with(|| {
                *gres_groups
                    .entry(Arc::as_ptr(&shape.lines))
                    .or_insert_with(|| {
                        gres.node_groups.push(GresGroup {
                            records: Arc::clone(&shape.lines),
                            names: Vec::new(),
                        });
                        gres.node_groups.len() - 1
                    })
            });
            gres.node_groups[g].names.push(name.clone());
        }
    }
    // `gpu` plus the shared GRES (shard, mps) the accepted nodes carry.
    slurm.set_gres_types_from_nodes();
    partitions.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    // Without `default-partition`, the first partition by name is the default, so jobs
    // submitted without `-p` run (slurmctld logs "default partition not set" otherwise); once
    // chosen it stays the default while it exists, whatever sorts first later.
    let mut default_partition = None;
    let mut default_missing = None;
    if settings.default_partition.is_empty() {
        let kept = previous_default.as_ref().and_then(|d| {
            partitions
                .iter()
                .position(|p| p.name.as_str() == d.as_str())
        });
        if let Some(p) = kept.or((!partitions.is_empty()).then_some(0)) {
            partitions[p].default = true;
            default_partition = Some(partitions[p].name.to_string());
        }
    } else if !partitions
        .iter()
        .any(|p| p.name.as_str() == settings.default_partition)
    {
        default_missing = Some(settings.default_partition.clone());
    }
    slurm.partitions = partitions;
    if !down.is_empty() {
        slurm.down_nodes.push(DownNodes {
            nodes: down,
            state: Some(NodeState::Down),
            reason: Reason::try_from(NEW_NODE_REASON).ok(),
        });
    }
    let (mut slurm_text, mut gres_text) = (None, None);
    if render_error.is_none() {
        match crate::slurm::render_files_remembering(&slurm, &gres, &mut hostlists) {
            Ok(files) => {
                slurm_text = Some(files.slurm_conf);
                gres_text = Some(files.gres_conf);
            }
            Err(e) => render_error = Some(e.to_string()),
        }
    }
    // The model is done with: its DownNodes set (the only line) is what was applied.
    let down = slurm.down_nodes.pop().map(|d| d.nodes).unwrap_or_default();
    let owners = Owners {
        partitions: partition_owners,
        default_partition,
    };
    let clean = rejected.is_empty()
        && waiting_apps.is_empty()
        && default_missing.is_none()
        && render_error.is_none();
    let node_groups = match (clean, &slurm_text, &gres_text) {
        (true, Some(slurm_conf), Some(gres_conf)) => NodeGroups::of_plan(
            node_groups::basis(settings, relations, &owners),
            accepted.iter().map(|a| {
                let shape = shapes[a.shape].key.as_str();
                (a.relation, shape, a.new_node, a.name.as_str())
            }),
            slurm_conf,
            gres_conf,
        ),
        _ => None,
    };
    let node_count = accepted.len();
    let gres_count = accepted.iter().map(|a| shapes[a.shape].gres_count()).sum();
    let applied = applied(
        Grouped::from_pairs_remembering(
            accepted
                .iter()
                .map(|a| (a.name.as_str(), shapes[a.shape].gres.as_str())),
            &mut hostlists,
        ),
        down,
        slurm_text.as_deref().unwrap_or_default(),
        gres_text.as_deref().unwrap_or_default(),
    );
    Plan {
        slurm_conf: slurm_text,
        gres_conf: gres_text,
        render_error,
        nodes,
        rejected,
        waiting_apps,
        applied,
        owner_changes,
        owners,
        verdicts,
        default_missing,
        spent_models: (slurm, gres),
        hostlists,
        node_count,
        gres_count,
        fingerprints: None,
        node_groups,
    }
}

/// What slurmctld runs once it took `slurm_conf` and `gres_conf`: each node's `Gres=` value,
/// the new nodes, and the files' hashes.
pub(super) fn applied(
    nodes: Grouped,
    down: BTreeSet<NodeName>,
    slurm_conf: &str,
    gres_conf: &str,
) -> Applied {
    Applied {
        nodes,
        down,
        files_hash: files_hash(
            slurm_conf.as_bytes(),
            gres_conf.as_bytes(),
            CGROUP_CONF_TEXT.as_bytes(),
        ),
        base_hash: fnv1a(&[
            without_down_nodes(slurm_conf).as_bytes(),
            b"\0",
            gres_conf.as_bytes(),
            b"\0",
            CGROUP_CONF_TEXT.as_bytes(),
        ]),
    }
}

/// [`Applied::files_hash`] of a set of files: what the applied record says slurmctld runs, and
/// what the last accepted copies are checked against before they are put back.
pub fn files_hash(slurm_conf: &[u8], gres_conf: &[u8], cgroup_conf: &[u8]) -> String {
    fnv1a(&[slurm_conf, b"\0", gres_conf, b"\0", cgroup_conf])
}

/// slurm.conf without its `DownNodes` lines, which the renderer writes last
/// ([`crate::slurm::render_files`]): what [`Applied::base_hash`] hashes.
fn without_down_nodes(slurm_conf: &str) -> &str {
    match slurm_conf.find("\nDownNodes=") {
        Some(at) => &slurm_conf[..at + 1],
        None => slurm_conf,
    }
}
