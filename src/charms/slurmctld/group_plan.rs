//! The controller's plan from node groups ([`super::node_groups`]): when the units changed
//! since the cache was read only moved between groups (same name, same relation, still
//! accepted and not new, whatever their shape), the files, the applied record's maps, the
//! fingerprints and the status's counts are made from a line per group, and the two
//! hostlists each move touches are edited. What it makes equals what the full
//! plan ([`super::desired::plan_with_owners`]) makes from the same cache (tests/
//! charm_group_plan.rs drives both through random changes); anything else is left to the
//! full plan (`None`).

use super::cache::Cache;
use super::desired::{Plan, Settings, Shape, applied, load_shape};
use super::grouped::Grouped;
use super::node_groups::{MAX_GROUPS, NodeGroup, NodeGroups, basis};
use super::refusal::fingerprint;
use crate::interface::RecordsMemo;
use crate::slurm::hostlist::{compress_with_first, contains, count, expand, natural_key};
use crate::slurm::hostlist_runs::NumberRuns;
use crate::slurm::render::{node_tail, push_gres_lines, push_node_line};
use crate::slurm::types::NodeName;
use crate::slurm::{GresConf, MemoSession, SlurmConf};
use std::collections::{BTreeMap, BTreeSet};

/// Names to take out of and put into one group.
#[derive(Default)]
struct Move<'a> {
    out: Vec<&'a str>,
    into: Vec<&'a str>,
}

/// The plan of this hook made from the cache's node groups, or `None` when the hook is not a
/// move between groups or the `GresTypes` the files list would change (the caller then plans
/// in full). The plan's `hostlists` and `owners` are left empty for the caller to fill (it
/// holds them).
pub fn plan(settings: &Settings, cache: &Cache) -> Option<Plan> {
    let table = cache.node_groups.as_ref()?;
    if table.basis != basis(settings, &cache.relations, &cache.owners) {
        return None;
    }
    let mut moves: BTreeMap<(&str, &str), Move> = BTreeMap::new();
    let mut owner_changes = Vec::new();
    for (key, rel) in &cache.relations {
        for unit in rel.units.changed_since_read()? {
            let old = rel.units.as_read(unit)?;
            let new = rel.units.get(unit)?;
            let name = new.name?;
            let same = old.name == Some(name)
                && old.owner
                && !old.new_node
                && !new.new_node
                && new.rejected.is_none();
            if !same {
                return None;
            }
            if !new.owner {
                owner_changes.push((key.clone(), unit.to_owned(), true));
            }
            if old.shape != new.shape {
                moves
                    .entry((key, old.shape))
                    .or_default()
                    .out
                    .push(name.as_str());
                moves
                    .entry((key, new.shape))
                    .or_default()
                    .into
                    .push(name.as_str());
            }
        }
    }
    // the cache file is a boundary: each stored group is checked once, here
    let mut groups = table
        .groups
        .iter()
        .map(read)
        .collect::<Option<Vec<NodeGroup>>>()?;
    for ((relation, shape), change) in moves {
        match groups
            .iter_mut()
            .position(|g| g.relation == relation && g.shape == shape && !g.new_node)
        {
            Some(i) => {
                if !edit(&mut groups[i], &change)? {
                    groups.remove(i);
                }
            }
            // a shape no node of the relation had: a group of its own
            None => {
                let mut group = NodeGroup {
                    relation: relation.to_owned(),
                    shape: shape.to_owned(),
                    ..NodeGroup::default()
                };
                edit(&mut group, &change)?.then_some(())?;
                let at = groups
                    .iter()
                    .position(|g| {
                        (g.relation.as_str(), g.shape.as_str(), g.new_node)
                            > (relation, shape, false)
                    })
                    .unwrap_or(groups.len());
                groups.insert(at, group);
            }
        }
    }
    if groups.len() > MAX_GROUPS {
        return None;
    }
    let made = Made::of(&groups, cache)?;
    // slurm.conf's head names the GRES the nodes have (`GresTypes`, as
    // [`SlurmConf::set_gres_types_from_nodes`] writes it): it stays only when the shapes in
    // the files still have the same ones (the shapes that left may be gone from the cache)
    let mut gres_types = String::from("\nGresTypes=gpu");
    for name in made.gres_names() {
        gres_types.push(',');
        gres_types.push_str(name);
    }
    gres_types.push('\n');
    if !table.slurm_head.contains(&gres_types) {
        return None;
    }
    let slurm_conf = made.slurm_conf(table)?;
    let gres_conf = made.gres_conf(table)?;
    // the new nodes did not change (no changed unit is or was new)
    let mut down = BTreeSet::new();
    for g in groups.iter().filter(|g| g.new_node) {
        for name in expand(&g.hostlist).ok()? {
            down.insert(NodeName::try_from(name.as_str()).ok()?);
        }
    }
    let applied = applied(
        made.union_by(|g| made.shapes[&g.shape].gres.clone())?,
        down,
        &slurm_conf,
        &gres_conf,
    );
    let fingerprints = made.union_by(|g| {
        let app = cache
            .relations
            .get(&g.relation)
            .map_or("", |r| r.app.as_str());
        fingerprint(made.shapes[&g.shape].digest, app, g.new_node)
    })?;
    let mut node_count = 0;
    let mut gres_count = 0;
    for g in &groups {
        let n = count(&g.hostlist).ok()?;
        node_count += n;
        gres_count += n as u64 * made.shapes[&g.shape].gres_count();
    }
    Some(Plan {
        slurm_conf: Some(slurm_conf),
        gres_conf: Some(gres_conf),
        render_error: None,
        nodes: Default::default(),
        rejected: Vec::new(),
        waiting_apps: Vec::new(),
        applied,
        owners: Default::default(),
        owner_changes,
        verdicts: BTreeMap::new(),
        default_missing: None,
        spent_models: (SlurmConf::default(), GresConf::default()),
        hostlists: MemoSession::default(),
        node_count,
        gres_count,
        fingerprints: Some(fingerprints),
        node_groups: Some(NodeGroups {
            groups,
            ..table.clone()
        }),
    })
}

/// Takes `change.out` out of `group` and puts `change.into` in; `Some(false)` when no name is
/// left, `None` when a name to take out is not there or one to put in is.
fn edit(group: &mut NodeGroup, change: &Move) -> Option<bool> {
    // one prefix, numbered names (`gpu-[0-4,6-9999]`): a step per run
    if let Some(mut runs) = NumberRuns::of(&group.hostlist) {
        let done = change.out.iter().all(|n| runs.remove(n).is_some())
            && change.into.iter().all(|n| runs.insert(n).is_some());
        if done {
            let Some((first, hostlist)) = runs.to_hostlist() else {
                return Some(false);
            };
            group.first = first;
            group.hostlist = hostlist;
            return Some(true);
        }
    }
    // any other names: made, edited and compressed again
    let mut names = expand(&group.hostlist).ok()?;
    let before = names.len();
    names.retain(|n| !change.out.contains(&n.as_str()));
    if names.len() + change.out.len() != before {
        return None;
    }
    for name in &change.into {
        if names.iter().any(|n| n == name) {
            return None;
        }
        names.push((*name).to_owned());
    }
    if names.is_empty() {
        return Some(false);
    }
    (group.first, group.hostlist) = compressed(&names)?;
    Some(true)
}

/// The groups with their shapes read.
struct Made<'g> {
    groups: &'g [NodeGroup],
    shapes: BTreeMap<String, Shape>,
    cache: &'g Cache,
}

impl<'g> Made<'g> {
    fn of(groups: &'g [NodeGroup], cache: &'g Cache) -> Option<Self> {
        let mut memo = RecordsMemo::default();
        let mut shapes = BTreeMap::new();
        for g in groups {
            if !shapes.contains_key(&g.shape) {
                let shape = load_shape(&g.shape, cache, &mut memo).ok()?;
                shapes.insert(g.shape.clone(), shape);
            }
        }
        Some(Made {
            groups,
            shapes,
            cache,
        })
    }

    /// The GRES names other than `gpu` the shapes' node lines carry (what `GresTypes` lists).
    fn gres_names(&self) -> BTreeSet<&str> {
        self.shapes
            .values()
            .flat_map(|s| s.node.gres.iter())
            .map(|g| g.name.as_str())
            .filter(|n| *n != "gpu")
            .collect()
    }

    /// The groups by a key, each key's names as one hostlist and its first name.
    fn merged<K: Ord>(
        &self,
        key: impl Fn(&NodeGroup) -> K,
    ) -> Option<BTreeMap<K, (String, String)>> {
        let mut by: BTreeMap<K, Vec<&NodeGroup>> = BTreeMap::new();
        for g in self.groups {
            by.entry(key(g)).or_default().push(g);
        }
        by.into_iter()
            .map(|(k, gs)| {
                let merged = match gs.as_slice() {
                    [one] => (one.first.clone(), one.hostlist.clone()),
                    many => union(many)?,
                };
                Some((k, merged))
            })
            .collect()
    }

    /// The grouped map of node → `value(group)`.
    fn union_by(&self, value: impl Fn(&NodeGroup) -> String) -> Option<Grouped> {
        let merged = self.merged(value)?;
        Some(Grouped::from_hostlists(
            merged.into_iter().map(|(k, (_, hl))| (k, hl)).collect(),
        ))
    }

    /// slurm.conf: a node line per shape between the kept head and tail; `None` when two
    /// shapes would share a line or a shape's nodes are listed one by one (as the renderer
    /// writes them: the full plan then decides).
    fn slurm_conf(&self, table: &NodeGroups) -> Option<String> {
        let lines = self.merged(|g| g.shape.clone())?;
        let mut tails = BTreeSet::new();
        let mut out: Vec<(String, String)> = Vec::with_capacity(lines.len());
        for (shape, (first, hostlist)) in lines {
            let node = &self.shapes[&shape].node;
            let listed = node
                .extra
                .iter()
                .any(|e| matches!(e.key(), "NodeAddr" | "NodeHostname"));
            let tail = node_tail(node);
            if listed || !tails.insert(tail.clone()) {
                return None;
            }
            let mut line = String::new();
            push_node_line(&mut line, &hostlist, &tail);
            out.push((first, line));
        }
        out.sort_by(|a, b| natural_key(&a.0).cmp(&natural_key(&b.0)));
        let mut text = table.slurm_head.clone();
        for (_, line) in out {
            text.push_str(&line);
        }
        text.push_str(&table.slurm_tail);
        Some(text)
    }

    /// gres.conf: the kept head, then a line per record of each distinct record list, for
    /// the nodes of every shape with that list.
    fn gres_conf(&self, table: &NodeGroups) -> Option<String> {
        let list_of = |g: &NodeGroup| self.cache.shapes.get(&g.shape).and_then(|s| s.gres.clone());
        let mut lines: Vec<(String, String)> = Vec::new();
        for (list, (first, hostlist)) in self.merged(list_of)? {
            let Some(list) = list else { continue };
            let shape = self
                .groups
                .iter()
                .find(|g| list_of(g).as_deref() == Some(list.as_str()))
                .map(|g| &self.shapes[&g.shape])?;
            if !shape.lines.is_empty() {
                let mut text = String::new();
                push_gres_lines(&mut text, &hostlist, &shape.lines);
                lines.push((first, text));
            }
        }
        lines.sort_by(|a, b| natural_key(&a.0).cmp(&natural_key(&b.0)));
        let mut text = table.gres_head.clone();
        for (_, chunk) in lines {
            text.push_str(&chunk);
        }
        Some(text)
    }
}

/// A group as the cache file holds it, checked (a boundary: a list of one prefix is read into
/// runs and must be written as they write it, with its first name; any other must name its
/// first name); `None` when it is not so.
fn read(group: &NodeGroup) -> Option<NodeGroup> {
    let valid = match NumberRuns::of(&group.hostlist) {
        Some(runs) => runs.to_hostlist()? == (group.first.clone(), group.hostlist.clone()),
        None => contains(&group.hostlist, &group.first).ok()?,
    };
    valid.then(|| group.clone())
}

/// The names of several groups as one hostlist and its first name.
fn union(groups: &[&NodeGroup]) -> Option<(String, String)> {
    let runs = groups.iter().try_fold(NumberRuns::of("")?, |all, g| {
        all.union(&NumberRuns::of(&g.hostlist)?)
    });
    if let Some(runs) = runs {
        return runs.to_hostlist();
    }
    let mut names = Vec::new();
    for g in groups {
        names.extend(expand(&g.hostlist).ok()?);
    }
    compressed(&names)
}

/// The first name in natural order and the hostlist of `names` (not empty).
fn compressed(names: &[String]) -> Option<(String, String)> {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (first, hostlist) = compress_with_first(&refs);
    Some((refs.get(first)?.to_string(), hostlist))
}
