//! The fatal-configuration checks (reference §1.5, §2.3) run before anything is rendered.

use std::collections::HashSet;
use std::sync::Arc;

use std::collections::HashMap;

use super::error::ConfigError;
use super::gres_conf::{AutoDetect, GresConf, GresLine, ListIds, NodeRecords};
use super::hostlist::natural_key;
use super::keys::owned_global;
use super::node::NodeConf;
use super::partition::Partition;
use super::slurm_conf::{NodeNames, SlurmConf};
use super::types::{NodeName, NodeRef};
use super::validate::{validate_key, validate_name, validate_token, validate_value};

/// Checks a slurm.conf model: values, duplicates, GRES forms, references.
pub fn check_slurm_conf(conf: &SlurmConf) -> Result<(), ConfigError> {
    if conf.cluster_name.is_empty() {
        return Err(ConfigError::Missing {
            key: "ClusterName".to_string(),
            context: "slurm.conf".to_string(),
        });
    }
    validate_name("ClusterName", &conf.cluster_name)?;
    if conf.slurmctld_hosts.is_empty() {
        return Err(ConfigError::Missing {
            key: "SlurmctldHost".to_string(),
            context: "slurm.conf".to_string(),
        });
    }
    for h in &conf.slurmctld_hosts {
        validate_token("SlurmctldHost", h)?;
    }
    for (k, v) in &conf.owned {
        validate_token(k.as_str(), v)?;
    }
    check_max_node_count(conf, conf.node_count())?;
    let mut seen = HashSet::new();
    for (k, v) in &conf.extra {
        validate_key(k, "slurm.conf")?;
        if let Some(owned) = owned_global(k) {
            return Err(ConfigError::OwnedKey {
                key: owned.to_string(),
                context: "slurm.conf pass-through keys".to_string(),
            });
        }
        if !seen.insert(k.to_ascii_lowercase()) {
            return Err(ConfigError::DuplicateKey {
                key: k.clone(),
                context: "slurm.conf".to_string(),
            });
        }
        validate_value(k, v)?;
    }
    for i in &conf.includes {
        validate_token("Include", i)?;
    }
    let gres_types = conf.gres_types();
    // Every node name in `node_lines` order, and where each is in it (partitions' `node_names`
    // are looked for along it: see [`check_partition_nodes`]).
    let mut order: Vec<&str> = Vec::with_capacity(conf.node_count());
    let mut names: HashMap<&str, usize> = HashMap::default();
    names.reserve(conf.node_count());
    // Grouped nodes share their fields: those are checked once per group, naming its first node.
    for (node, group) in conf.node_lines() {
        let first = group.first();
        let mut group_names = group.iter();
        for name in group_names.by_ref().take(1) {
            if names.insert(name, order.len()).is_some() {
                return Err(ConfigError::DuplicateNode {
                    node: name.to_string(),
                });
            }
            order.push(name);
        }
        for (i, g) in node.gres.iter().enumerate() {
            let earlier = &node.gres[..i];
            if earlier
                .iter()
                .any(|e| e.name == g.name && e.gres_type.is_some() != g.gres_type.is_some())
            {
                return Err(ConfigError::MixedTypedGres {
                    node: first.to_string(),
                    name: g.name.to_string(),
                });
            }
            if earlier
                .iter()
                .any(|e| e.name == g.name && e.gres_type == g.gres_type)
            {
                return Err(ConfigError::DuplicateGresSpec {
                    node: first.to_string(),
                    spec: g.key(),
                });
            }
            if !gres_types.iter().any(|t| *t == g.name.as_str()) {
                return Err(ConfigError::GresNameNotInGresTypes {
                    node: first.to_string(),
                    name: g.name.to_string(),
                });
            }
        }
        for name in group_names {
            if names.insert(name, order.len()).is_some() {
                return Err(ConfigError::DuplicateNode {
                    node: name.to_string(),
                });
            }
            order.push(name);
        }
    }
    let mut sets: HashSet<&str> = HashSet::new();
    for s in &conf.node_sets {
        s.validate()?;
        if !sets.insert(&s.name) || names.contains_key(s.name.as_str()) {
            return Err(ConfigError::DuplicateNodeSet {
                name: s.name.to_string(),
            });
        }
    }
    // With Include lines, nodes may be defined elsewhere: references cannot be checked.
    let check_refs = conf.includes.is_empty();
    let mut parts = HashSet::new();
    let mut default = None;
    for p in &conf.partitions {
        if !parts.insert(&p.name) {
            return Err(ConfigError::DuplicatePartition {
                partition: p.name.to_string(),
            });
        }
        let previous = if p.default {
            default.replace(&p.name)
        } else {
            None
        };
        if let Some(first) = previous {
            return Err(ConfigError::invalid(
                "Default",
                "YES",
                format!(
                    "partitions {first} and {} are both Default=YES; keep one",
                    p.name
                ),
            ));
        }
        if check_refs && let Some(node) = check_partition_nodes(p, &order, &names, &sets) {
            return Err(ConfigError::UnknownPartitionNode {
                partition: p.name.to_string(),
                node: node.to_string(),
            });
        }
    }
    let mut down = HashSet::new();
    for d in &conf.down_nodes {
        d.validate()?;
        for n in &d.nodes {
            if check_refs && !names.contains_key(n.as_str()) {
                return Err(ConfigError::UnknownDownNode {
                    node: n.to_string(),
                });
            }
            if !down.insert(n) {
                return Err(ConfigError::DuplicateDownNode {
                    node: n.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether two texts are the same, by pointer and length first: the controller's models share
/// one text between the places that name a node (its name), or that hold a shape's value (its
/// `Gres=`) or an application's name, so equal texts are mostly the same text.
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || a == b
}

/// The partition's node that is not defined (no NodeName, NodeSet or `ALL`), if any: the first
/// in the order of its `nodes` were its `node_names` in that set too. `order` is every node
/// name in [`SlurmConf::node_lines`] order, `names` where each is in it. Each of `node_names`
/// is looked for first just after the one before was found in `order` (the controller gives
/// them in its node groups' order: then none is hashed), by hash only where that fails.
fn check_partition_nodes<'a>(
    p: &'a Partition,
    order: &[&str],
    names: &HashMap<&str, usize>,
    sets: &HashSet<&str>,
) -> Option<&'a str> {
    let unknown_ref = p.nodes.iter().find(|n| match n {
        NodeRef::All => false,
        NodeRef::Node(n) => !names.contains_key(n.as_str()) && !sets.contains(n.as_str()),
        NodeRef::NodeSet(s) => !sets.contains(s.as_str()),
    });
    let mut at = 0;
    let mut unknown_name: Option<&NodeName> = None;
    for name in &p.node_names {
        let n = name.as_str();
        if order.get(at).is_some_and(|o| same_text(o, n)) {
            at += 1;
        } else if let Some(&i) = names.get(n) {
            at = i + 1;
        } else if !sets.contains(n) && unknown_name.is_none_or(|u| n < u.as_str()) {
            unknown_name = Some(name);
        }
    }
    match (unknown_ref, unknown_name) {
        (Some(r), Some(n)) if NodeRef::Node(n.clone()) < *r => Some(n.as_str()),
        (Some(r), _) => Some(r.as_str()),
        (None, n) => n.map(NodeName::as_str),
    }
}

/// The rules of one record that its field types cannot carry alone (they relate two fields).
/// Also run on every `node` relation record at ingest, so a record that passes ingest renders.
pub fn check_record(node: &str, r: &GresLine) -> Result<(), ConfigError> {
    match (r.count, r.files()) {
        (Some(c), Some(files)) if r.name == "gpu" && c != files.len() as u64 => {
            return Err(ConfigError::CountNotFileCount {
                node: node.to_string(),
                count: c,
                files: files.len(),
            });
        }
        _ => {}
    }
    if r.links.is_some() && r.files().is_none_or(|f| f.len() != 1) {
        return Err(ConfigError::LinksNeedOneFile {
            node: node.to_string(),
        });
    }
    Ok(())
}

/// What the records of one GRES name on one node look like.
#[derive(Default)]
struct NameSummary {
    file: bool,
    no_file: bool,
    typed: bool,
    untyped: bool,
    bare: usize,
}

/// Checks the records that apply to one node (global + its own), per GRES name.
fn check_node_records<'a>(
    node: &str,
    records: impl Iterator<Item = &'a GresLine>,
) -> Result<(), ConfigError> {
    // Nodes have few GRES names: a Vec beats a map.
    let mut by_name: Vec<(&str, NameSummary)> = Vec::new();
    // (GRES name, File= device) seen so far: a device belongs to one record of a name.
    let mut files: HashSet<(&str, String)> = HashSet::default();
    for r in records {
        check_record(node, r)?;
        if let Some(super::types::GresDevices::File(f)) = &r.devices {
            for path in f.files() {
                if !files.insert((r.name.as_str(), path.to_string())) {
                    return Err(ConfigError::DuplicateDeviceFile {
                        node: node.to_string(),
                        name: r.name.to_string(),
                        file: path.to_string(),
                    });
                }
            }
        }
        let has_file = r.devices.is_some();
        let at = match by_name.iter().position(|(n, _)| *n == r.name.as_str()) {
            Some(i) => i,
            None => {
                by_name.push((&r.name, NameSummary::default()));
                by_name.len() - 1
            }
        };
        let e = &mut by_name[at].1;
        e.file |= has_file;
        e.no_file |= !has_file;
        e.typed |= r.gres_type.is_some();
        e.untyped |= r.gres_type.is_none();
        if !has_file && r.gres_type.is_none() {
            e.bare += 1;
        }
    }
    for (name, s) in by_name {
        let err = |f: fn(String, String) -> ConfigError| Err(f(node.to_string(), name.to_string()));
        if s.file && s.no_file {
            return err(|node, name| ConfigError::MixedFileGres { node, name });
        }
        if s.typed && s.untyped {
            return err(|node, name| ConfigError::MixedTypeGresConf { node, name });
        }
        if s.bare > 1 {
            return err(|node, name| ConfigError::DuplicateUntypedGres { node, name });
        }
    }
    Ok(())
}

/// Checks a gres.conf model: values and the per-node conflicts Slurm treats as fatal; a node
/// given two different record lists ([`GresConf::node_groups`]) is refused.
pub fn check_gres_conf(conf: &GresConf) -> Result<(), ConfigError> {
    check_node_records("*", conf.global.iter())?;
    check_one_list_per_node(conf)?;
    // Nodes of one shape share one list: each shared list is checked once, and the error names
    // the first node, in name order, whose list fails (as when every node's list was checked).
    let mut fails: HashMap<*const Vec<GresLine>, bool> = HashMap::default();
    let mut fails = |records: &NodeRecords| {
        *fails.entry(Arc::as_ptr(records)).or_insert_with(|| {
            check_node_records("*", conf.global.iter().chain(records.iter())).is_err()
        })
    };
    // listed nodes are in name order: the first that fails is the least of them
    let mut first = conf
        .nodes
        .iter()
        .find(|(_, records)| fails(records))
        .map(|(node, records)| (node.as_str(), records));
    for g in &conf.node_groups {
        if g.names.is_empty() || !fails(&g.records) {
            continue;
        }
        if let Some(least) = g.names.iter().map(NodeName::as_str).min()
            && first.is_none_or(|(node, _)| least < node)
        {
            first = Some((least, &g.records));
        }
    }
    match first {
        Some((node, records)) => check_node_records(node, conf.global.iter().chain(records.iter())),
        None => Ok(()),
    }
}

/// Refuses a model that gives one node two different record lists (in `nodes` and a group, or
/// in two groups; an empty list counts as none): its file would split the node's records over
/// lines no check looked at together. Only names are hashed, and only when the model holds
/// groups and more than one list: the controller's alike nodes (one group) cost nothing here.
fn check_one_list_per_node(conf: &GresConf) -> Result<(), ConfigError> {
    let groups = || {
        conf.node_groups
            .iter()
            .filter(|g| !g.records.is_empty() && !g.names.is_empty())
    };
    if groups().next().is_none() {
        return Ok(());
    }
    let mut ids = ListIds::default();
    let listed = conf.nodes.iter().filter(|(_, rs)| !rs.is_empty());
    for (_, records) in listed.clone() {
        ids.id(records);
    }
    for g in groups() {
        ids.id(&g.records);
    }
    if ids.distinct() < 2 {
        return Ok(());
    }
    let mut list_of: HashMap<&str, usize> = HashMap::default();
    let places = listed
        .map(|(name, records)| (std::slice::from_ref(name), records))
        .chain(groups().map(|g| (g.names.as_slice(), &g.records)));
    for (names, records) in places {
        let id = ids.id(records);
        for name in names {
            if list_of
                .insert(name.as_str(), id)
                .is_some_and(|before| before != id)
            {
                return Err(ConfigError::GresNodeTwice {
                    node: name.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Checks the two files against each other: every GRES name is in `GresTypes`, and for every
/// slurm.conf node and (name, type) the `Gres=` count equals the devices its gres.conf records
/// give (type strings compared byte for byte). Skipped for counts when AutoDetect is on.
/// `gres` is one [`check_gres_conf`] passed (each node has one list of records).
pub fn check_consistency(slurm: &SlurmConf, gres: &GresConf) -> Result<(), ConfigError> {
    let gres_types = slurm.gres_types();
    // `GresTypes` names are lower-cased: compared without lower-casing each record's name.
    let unknown = |records: &'_ [GresLine]| -> Option<usize> {
        records
            .iter()
            .position(|r| !gres_types.iter().any(|t| t.eq_ignore_ascii_case(&r.name)))
    };
    if let Some(i) = unknown(&gres.global) {
        return Err(ConfigError::GresNameNotInGresTypes {
            node: "*".to_string(),
            name: gres.global[i].name.to_string(),
        });
    }
    // Nodes of one shape share one list: each shared list is looked at once, and the error
    // names the first node, in name order, whose list has such a name (as when every node's
    // list was looked at).
    let mut seen: HashMap<*const Vec<GresLine>, Option<usize>> = HashMap::default();
    let mut unknown_in = |records: &NodeRecords| {
        *seen
            .entry(Arc::as_ptr(records))
            .or_insert_with(|| unknown(records))
    };
    let mut first = gres
        .nodes
        .iter()
        .find_map(|(node, records)| unknown_in(records).map(|i| (node.as_str(), &records[i])));
    for g in &gres.node_groups {
        let Some(i) = unknown_in(&g.records) else {
            continue;
        };
        if let Some(least) = g.names.iter().map(NodeName::as_str).min()
            && first.is_none_or(|(node, _)| least < node)
        {
            first = Some((least, &g.records[i]));
        }
    }
    if let Some((node, r)) = first {
        return Err(ConfigError::GresNameNotInGresTypes {
            node: node.to_string(),
            name: r.name.to_string(),
        });
    }
    if gres.auto_detect.is_some_and(|a| a != AutoDetect::Off) {
        return Ok(());
    }
    let mut records_of = RecordsOf::new(gres);
    let mut have: Vec<((&str, Option<&str>), u64)> = Vec::new();
    // Listed nodes: the first that disagrees, in list order. Grouped nodes: the first in
    // natural order over every group (as if they were listed in that order).
    let mut grouped_error: Option<(&str, ConfigError)> = None;
    for (node, group) in slurm.node_lines() {
        // The nodes of a group share their `Gres=`: a record list that passed for the node
        // before is not compared again (by pointer: the controller's nodes of one shape share
        // one list, so a group of 10,000 costs one comparison).
        let mut passed: Option<&[GresLine]> = None;
        for name in group.iter() {
            let own = records_of.get(name);
            if passed.is_some_and(|p| std::ptr::eq(p, own)) {
                continue;
            }
            passed = Some(own);
            let Err(e) = node_counts_agree(name, node, gres.global.iter().chain(own), &mut have)
            else {
                continue;
            };
            if matches!(group, NodeNames::One(_)) {
                return Err(e);
            }
            if grouped_error
                .as_ref()
                .is_none_or(|(first, _)| natural_key(name) < natural_key(first))
            {
                grouped_error = Some((name, e));
            }
            break;
        }
    }
    grouped_error.map_or(Ok(()), |(_, e)| Err(e))
}

/// Finds slurm.conf nodes' gres.conf records ([`check_consistency`]), in a model that gives
/// each node one list ([`check_gres_conf`]). A name is looked for first where the name before
/// was found in a group ([`super::GresGroup`]), then at the start of the next group: the controller's
/// gres groups hold its nodes in the order its slurm.conf node groups do, so then no name is
/// hashed. Only a name not found so makes (once) a map of every node's records by name.
struct RecordsOf<'a> {
    gres: &'a GresConf,
    /// (group, position) where the next name is looked for first.
    next: (usize, usize),
    /// Every node with records, by name, made at the first name not found at `next`.
    by_name: Option<HashMap<&'a str, Found<'a>>>,
}

/// Where [`RecordsOf`] found a name: (group, position; `usize::MAX` for `nodes`), records.
type Found<'a> = (usize, usize, &'a [GresLine]);

impl<'a> RecordsOf<'a> {
    fn new(gres: &'a GresConf) -> Self {
        RecordsOf {
            gres,
            next: (0, 0),
            by_name: None,
        }
    }

    /// `name`'s records (none: empty).
    fn get(&mut self, name: &str) -> &'a [GresLine] {
        let groups = &self.gres.node_groups;
        let (g, i) = self.next;
        for (g, i) in [(g, i), (g + 1, 0)] {
            if let Some(group) = groups.get(g)
                && !group.records.is_empty()
                && group
                    .names
                    .get(i)
                    .is_some_and(|n| same_text(n.as_str(), name))
            {
                self.next = (g, i + 1);
                return &group.records;
            }
        }
        let gres = self.gres;
        let by_name = self.by_name.get_or_insert_with(|| {
            let listed = gres
                .nodes
                .iter()
                .filter(|(_, rs)| !rs.is_empty())
                .map(|(name, rs)| (name.as_str(), (usize::MAX, 0, rs.as_slice())));
            let grouped = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| !g.records.is_empty())
                .flat_map(|(at, g)| {
                    g.names
                        .iter()
                        .enumerate()
                        .map(move |(i, name)| (name.as_str(), (at, i, g.records.as_slice())))
                });
            listed.chain(grouped).collect()
        });
        match by_name.get(name) {
            Some(&(g, i, records)) => {
                if g != usize::MAX {
                    self.next = (g, i + 1);
                }
                records
            }
            None => &[],
        }
    }
}

/// One node's `Gres=` counts against the devices of its records (see [`check_consistency`]).
fn node_counts_agree<'a>(
    name: &str,
    node: &NodeConf,
    records: impl Iterator<Item = &'a GresLine>,
    have: &mut Vec<((&'a str, Option<&'a str>), u64)>,
) -> Result<(), ConfigError> {
    have.clear();
    for r in records {
        let key = (r.name.as_str(), r.gres_type.as_deref());
        match have.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += r.device_count(),
            None => have.push((key, r.device_count())),
        }
    }
    for g in &node.gres {
        let key = (g.name.as_str(), g.gres_type.as_deref());
        let got = match have.iter().position(|(k, _)| *k == key) {
            Some(i) => have.swap_remove(i).1,
            None => 0,
        };
        if got != g.count {
            return Err(ConfigError::GresCountMismatch {
                node: name.to_string(),
                spec: g.key(),
                slurm_conf: g.count,
                gres_conf: got,
            });
        }
    }
    let mut extra: Vec<_> = have.drain(..).filter(|(_, n)| *n > 0).collect();
    extra.sort();
    if let Some(((gres_name, t), got)) = extra.into_iter().next() {
        return Err(ConfigError::GresCountMismatch {
            node: name.to_string(),
            spec: t.map_or_else(|| gres_name.to_string(), |t| format!("{gres_name}:{t}")),
            slurm_conf: 0,
            gres_conf: got,
        });
    }
    Ok(())
}

/// `MaxNodeCount` in `conf`'s keys below `nodes`, the number of nodes the files define, stops
/// slurmctld ("Attempting to create node record past MaxNodeCount"). The controller, which renders its nodes
/// from stored lines rather than from `conf`, gives their number itself.
pub fn check_max_node_count(conf: &SlurmConf, nodes: usize) -> Result<(), ConfigError> {
    let Some((_, v)) = conf
        .extra
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("MaxNodeCount"))
    else {
        return Ok(());
    };
    match v.parse::<usize>() {
        Ok(max) if max < nodes => Err(ConfigError::invalid(
            "MaxNodeCount",
            v,
            format!(
                "below the {nodes} configured nodes (slurmctld stops: node record past MaxNodeCount)"
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::slurm::types::{DeviceFiles, NodeName, NodeRef};
    use crate::slurm::{
        ConfigError, GresConf, GresGroup, GresLine, GresSpec, NodeConf, NodeGroup, Partition,
        SlurmConf, render_files,
    };

    fn names(n: usize) -> Vec<NodeName> {
        (1..=n)
            .map(|i| format!("gpu-{i}").parse().unwrap())
            .collect()
    }

    /// `n` alike nodes of `gpus` GPUs each in one group, their records in one gres group (its
    /// list has `records` GPUs), all in partition `p` by name.
    fn grouped(n: usize, gpus: u64, records: u32) -> (SlurmConf, GresConf) {
        let mut node = NodeConf::new(NodeName::placeholder());
        node.gres.push(GresSpec::gpu("h100".parse().unwrap(), gpus));
        let mut slurm = SlurmConf::new("c", "ctl");
        slurm.node_groups.push(NodeGroup {
            node: Arc::new(node),
            names: names(n),
        });
        slurm.set_gres_types_from_nodes();
        let mut part = Partition::new("p".parse().unwrap());
        part.node_names = names(n);
        slurm.partitions.push(part);
        let list: Vec<GresLine> = (0..records)
            .map(|m| GresLine::gpu("h100".parse().unwrap(), DeviceFiles::nvidia(&[m]).unwrap()))
            .collect();
        let gres = GresConf {
            node_groups: vec![GresGroup {
                records: Arc::new(list),
                names: names(n),
            }],
            ..GresConf::default()
        };
        (slurm, gres)
    }

    /// The same model with every node, record list and partition node listed one by one.
    fn listed(slurm: &SlurmConf, gres: &GresConf) -> (SlurmConf, GresConf) {
        (slurm.normalized(), gres.normalized())
    }

    #[test]
    fn grouped_models_render_as_listed_ones() {
        let (slurm, gres) = grouped(12, 2, 2);
        let files = render_files(&slurm, &gres).unwrap();
        let (ls, lg) = listed(&slurm, &gres);
        assert!(ls.partitions[0].node_names.is_empty());
        assert_eq!(lg.nodes.len(), 12);
        assert_eq!(render_files(&ls, &lg).unwrap(), files);
        assert!(
            files
                .slurm_conf
                .contains("\nPartitionName=p Nodes=gpu-[1-12]")
        );
        assert!(
            files
                .gres_conf
                .contains("\nNodeName=gpu-[1-12] Name=gpu Type=h100 File=/dev/nvidia1\n")
        );
    }

    #[test]
    fn a_partition_naming_an_unknown_node_is_refused() {
        for at in [0, 5, 12] {
            let (mut slurm, gres) = grouped(12, 1, 1);
            slurm.partitions[0]
                .node_names
                .insert(at, "ghost".parse().unwrap());
            let e = render_files(&slurm, &gres).unwrap_err();
            assert_eq!(
                e,
                ConfigError::UnknownPartitionNode {
                    partition: "p".to_string(),
                    node: "ghost".to_string(),
                }
            );
            // named in the set or by name, the least unknown name is the one the error names
            slurm.partitions[0]
                .nodes
                .insert(NodeRef::Node("gpu-99".parse().unwrap()));
            let e = render_files(&slurm, &gres).unwrap_err().to_string();
            assert!(e.contains("unknown node ghost"), "{e}");
            slurm.partitions[0]
                .nodes
                .insert(NodeRef::Node("alpha".parse().unwrap()));
            let e = render_files(&slurm, &gres).unwrap_err().to_string();
            assert!(e.contains("unknown node alpha"), "{e}");
        }
        // out of the groups' order, each name is still found
        let (mut slurm, gres) = grouped(12, 1, 1);
        slurm.partitions[0].node_names.reverse();
        slurm.partitions[0].node_names.rotate_left(5);
        assert!(render_files(&slurm, &gres).is_ok());
    }

    #[test]
    fn a_gres_count_mismatch_in_a_group_is_refused() {
        let (slurm, gres) = grouped(12, 2, 1);
        let e = render_files(&slurm, &gres).unwrap_err();
        assert_eq!(
            e,
            ConfigError::GresCountMismatch {
                node: "gpu-1".to_string(),
                spec: "gpu:h100".to_string(),
                slurm_conf: 2,
                gres_conf: 1,
            }
        );
        // one node of the group with its own (short) list: that node is named
        let (slurm, mut gres) = grouped(12, 2, 2);
        let short = names(12).swap_remove(6);
        gres.node_groups[0].names.retain(|n| *n != short);
        let one = Arc::new(gres.node_groups[0].records[..1].to_vec());
        gres.node_groups.push(GresGroup {
            records: one,
            names: vec![short.clone()],
        });
        let e = render_files(&slurm, &gres).unwrap_err();
        assert!(
            matches!(&e, ConfigError::GresCountMismatch { node, .. } if *node == short.to_string()),
            "{e}"
        );
    }

    #[test]
    fn a_node_given_two_lists_is_refused() {
        let (slurm, mut gres) = grouped(4, 1, 1);
        let two: Vec<GresLine> = (0..2)
            .map(|m| GresLine::gpu("h100".parse().unwrap(), DeviceFiles::nvidia(&[m]).unwrap()))
            .collect();
        gres.nodes.insert("gpu-3".parse().unwrap(), Arc::new(two));
        assert_eq!(
            render_files(&slurm, &gres).unwrap_err(),
            ConfigError::GresNodeTwice {
                node: "gpu-3".to_string()
            }
        );
        // the same list again (a copy) is no conflict
        let (slurm, mut gres) = grouped(4, 1, 1);
        let copy = Arc::new(Vec::clone(&gres.node_groups[0].records));
        gres.nodes.insert("gpu-3".parse().unwrap(), copy);
        assert!(render_files(&slurm, &gres).is_ok());
    }
}
