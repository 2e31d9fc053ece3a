//! The fatal-configuration checks (reference §1.5, §2.3) run before anything is rendered.

use std::collections::HashSet;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::error::ConfigError;
use super::gres_conf::{AutoDetect, GresConf, GresLine};
use super::hostlist::natural_key;
use super::keys::owned_global;
use super::node::NodeConf;
use super::slurm_conf::{NodeNames, SlurmConf};
use super::types::NodeRef;
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
    check_max_node_count(conf)?;
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
    let mut names: FxHashSet<&str> = FxHashSet::default();
    names.reserve(conf.node_count());
    // Grouped nodes share their fields: those are checked once per group, naming its first node.
    for (node, group) in conf.node_lines() {
        let first = group.first();
        let mut group_names = group.iter();
        for name in group_names.by_ref().take(1) {
            if !names.insert(name) {
                return Err(ConfigError::DuplicateNode {
                    node: name.to_string(),
                });
            }
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
            if !names.insert(name) {
                return Err(ConfigError::DuplicateNode {
                    node: name.to_string(),
                });
            }
        }
    }
    let mut sets: HashSet<&str> = HashSet::new();
    for s in &conf.node_sets {
        s.validate()?;
        if !sets.insert(&s.name) || names.contains(s.name.as_str()) {
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
        if check_refs {
            for n in &p.nodes {
                let known = match n {
                    NodeRef::All => true,
                    NodeRef::Node(n) => names.contains(n.as_str()) || sets.contains(n.as_str()),
                    NodeRef::NodeSet(s) => sets.contains(s.as_str()),
                };
                if !known {
                    return Err(ConfigError::UnknownPartitionNode {
                        partition: p.name.to_string(),
                        node: n.to_string(),
                    });
                }
            }
        }
    }
    let mut down = FxHashSet::default();
    for d in &conf.down_nodes {
        d.validate()?;
        for n in &d.nodes {
            if check_refs && !names.contains(n.as_str()) {
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
    let mut files: FxHashSet<(&str, String)> = FxHashSet::default();
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

/// Checks a gres.conf model: values and the per-node conflicts Slurm treats as fatal.
pub fn check_gres_conf(conf: &GresConf) -> Result<(), ConfigError> {
    check_node_records("*", conf.global.iter())?;
    // Nodes of one shape share one list: each shared list is checked once (its first node,
    // in name order, is the one an error names).
    let mut checked: FxHashSet<*const Vec<GresLine>> = FxHashSet::default();
    for (node, records) in &conf.nodes {
        if checked.insert(Arc::as_ptr(records)) {
            check_node_records(node, conf.global.iter().chain(records.iter()))?;
        }
    }
    Ok(())
}

/// Checks the two files against each other: every GRES name is in `GresTypes`, and for every
/// slurm.conf node and (name, type) the `Gres=` count equals the devices its gres.conf records
/// give (type strings compared byte for byte). Skipped for counts when AutoDetect is on.
pub fn check_consistency(slurm: &SlurmConf, gres: &GresConf) -> Result<(), ConfigError> {
    let gres_types = slurm.gres_types();
    // Nodes of one shape share one list: each shared list is looked at once (its first node,
    // in name order, is the one an error names, as when every node's list was looked at).
    let mut seen: FxHashSet<*const Vec<GresLine>> = FxHashSet::default();
    let all_records = gres.global.iter().map(|r| ("*", r)).chain(
        gres.nodes
            .iter()
            .filter(|(_, rs)| seen.insert(Arc::as_ptr(rs)))
            .flat_map(|(n, rs)| rs.iter().map(move |r| (n.as_str(), r))),
    );
    for (node, r) in all_records {
        // `GresTypes` names are lower-cased: compared without lower-casing each record's name.
        if !gres_types.iter().any(|t| t.eq_ignore_ascii_case(&r.name)) {
            return Err(ConfigError::GresNameNotInGresTypes {
                node: node.to_string(),
                name: r.name.to_string(),
            });
        }
    }
    if gres.auto_detect.is_some_and(|a| a != AutoDetect::Off) {
        return Ok(());
    }
    let empty = Vec::new();
    let mut by_node: FxHashMap<&str, &Vec<GresLine>> = FxHashMap::default();
    by_node.reserve(gres.nodes.len());
    by_node.extend(gres.nodes.iter().map(|(k, v)| (k.as_str(), &**v)));
    let mut have: Vec<((&str, Option<&str>), u64)> = Vec::new();
    // Listed nodes: the first that disagrees, in list order. Grouped nodes: the first in
    // natural order over every group (as if they were listed in that order).
    let mut grouped_error: Option<(&str, ConfigError)> = None;
    for (node, group) in slurm.node_lines() {
        // The nodes of a group share their `Gres=`: a record list that passed for the node
        // before is not compared again (by pointer: the controller's nodes of one shape share
        // one list, so a group of 10,000 costs one comparison).
        let mut passed: Option<*const Vec<GresLine>> = None;
        for name in group.iter() {
            let own = by_node.get(name).copied().unwrap_or(&empty);
            if passed == Some(own as *const _) {
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

/// `MaxNodeCount` below the number of configured nodes stops slurmctld ("Attempting to
/// create node record past MaxNodeCount"): refused when the nodes are rendered.
fn check_max_node_count(conf: &SlurmConf) -> Result<(), ConfigError> {
    let Some((_, v)) = conf
        .extra
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("MaxNodeCount"))
    else {
        return Ok(());
    };
    match v.parse::<usize>() {
        Ok(max) if max < conf.node_count() => Err(ConfigError::invalid(
            "MaxNodeCount",
            v,
            format!(
                "below the {} configured nodes (slurmctld stops: node record past MaxNodeCount)",
                conf.node_count()
            ),
        )),
        _ => Ok(()),
    }
}
