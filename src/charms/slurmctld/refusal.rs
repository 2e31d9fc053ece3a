//! Who learns of a refusal: when slurmctld refuses new files (see [`super::accepted`]), the
//! units whose node records changed since the last set it accepted are the ones whose change
//! did not reach Slurm. Each gets a verdict with the daemon's reason, abbreviated (its unit
//! status then says its node was not enlisted and why), and the controller's status names them.
//!
//! "Changed" is judged by a fingerprint per node (its record, application and `new_node`),
//! kept with the last accepted set in [`super::accepted::AppliedRecord`]; with no accepted
//! fingerprints known (first enlistment, or a record written by an older charm) every node
//! counts as changed.

use std::collections::BTreeMap;
use std::hash::Hasher;

use rustc_hash::FxHashMap;

use super::accepted::Refusal;
use super::accepted_nodes::AcceptedNodes;
use super::cache::Cache;
use super::desired::AcceptedNode;
use super::grouped::Grouped;
use crate::charms::util::short;
use crate::interface::Verdicts;
use crate::slurm::MemoSession;

/// Longest part of the daemon's reason quoted in a unit's verdict (characters).
pub const MAX_REASON_IN_VERDICT: usize = 120;

/// Most unit names the controller's status lists; the rest are counted.
const MAX_NAMED: usize = 5;

/// Node name → fingerprint of what the files say about it: FNV-1a of the shape's relation
/// value, a newline, the application, a newline and `1`/`0` for `new_node`; grouped by
/// fingerprint ([`Grouped`]), the hostlists reused from `memo` where a fingerprint's nodes did
/// not change.
pub fn fingerprints(nodes: &AcceptedNodes, memo: &mut MemoSession) -> Grouped {
    // The shape's part is hashed once per shape when it is read ([`AcceptedNode::shape_digest`];
    // FNV-1a is sequential, so its state goes on with the application), and each distinct
    // (shape, application, `new_node`) once here: 10,000 nodes of one shape cost 10,000 map
    // lookups, not 10,000 hashes of a kilobyte of JSON.
    // Nodes of one key mostly come in runs: a node whose key is the one before costs a
    // comparison, not a hash.
    let mut done: FxHashMap<(u64, &str, bool), String> = FxHashMap::default();
    let mut last = None;
    for n in nodes.values() {
        let key = fingerprint_key(n);
        if last.is_some_and(|l| same_key(l, key)) {
            continue;
        }
        last = Some(key);
        done.entry(key)
            .or_insert_with(|| fingerprint(n.shape_digest, &n.app, n.new_node));
    }
    let mut last: Option<((u64, &str, bool), &str)> = None;
    Grouped::from_pairs_remembering(
        nodes.iter().filter_map(|(name, n)| {
            let key = fingerprint_key(n);
            let value = match last {
                Some((k, v)) if same_key(k, key) => v,
                _ => done.get(&key)?.as_str(),
            };
            last = Some((key, value));
            Some((name, value))
        }),
        memo,
    )
}

/// The fingerprint of a node of the shape whose [`AcceptedNode::shape_digest`] is
/// `shape_digest`, of application `app`, new or not.
pub fn fingerprint(shape_digest: u64, app: &str, new_node: bool) -> String {
    let mut h = fnv::FnvHasher::with_key(shape_digest);
    h.write(app.as_bytes());
    h.write(b"\n");
    h.write(if new_node { b"1" } else { b"0" });
    format!("{:016x}", h.finish())
}

/// Two fingerprint keys are equal (the application by pointer first: the nodes of one
/// application share its name).
fn same_key(a: (u64, &str, bool), b: (u64, &str, bool)) -> bool {
    a.0 == b.0 && a.2 == b.2 && crate::slurm::check::same_text(a.1, b.1)
}

/// What a node's fingerprint is made of, besides its name.
fn fingerprint_key(n: &AcceptedNode) -> (u64, &str, bool) {
    (n.shape_digest, &n.app, n.new_node)
}

/// The units (unit → relation cache key) whose node's fingerprint in `new` differs from the
/// last accepted one in `accepted` (or is absent there); every node's when the two do not
/// compare (a record that lists a node twice counts as lost).
pub fn changed_units(
    nodes: &AcceptedNodes,
    accepted: &Grouped,
    new: &Grouped,
    cache: &Cache,
) -> BTreeMap<String, String> {
    let diff = Grouped::diff(accepted, new);
    let changed: Vec<&AcceptedNode> = match &diff {
        Ok(d) => {
            let find = nodes.index(d.added.len() + d.changed.len());
            d.added
                .iter()
                .chain(&d.changed)
                .filter_map(|name| find(name))
                .collect()
        }
        Err(_) => nodes.values().collect(),
    };
    if changed.is_empty() {
        return BTreeMap::new();
    }
    let mut out = BTreeMap::new();
    for n in changed {
        let unit = n.unit_name();
        let key = cache
            .relations
            .iter()
            .find(|(_, r)| *r.app == *n.app && r.units.contains_key(&unit))
            .map(|(k, _)| k.clone());
        if let Some(key) = key {
            out.insert(unit, key);
        }
    }
    out
}

/// [`changed_units`] for a plan that lists no nodes (the plan from node groups,
/// [`super::group_plan`]): each changed node's unit is the one of `cache` that owns its name.
/// O(units), paid only when slurmctld refuses the files.
pub fn changed_units_in_cache(
    accepted: &Grouped,
    new: &Grouped,
    cache: &Cache,
) -> BTreeMap<String, String> {
    let changed: Option<rustc_hash::FxHashSet<String>> = match Grouped::diff(accepted, new) {
        Ok(d) => Some(d.added.into_iter().chain(d.changed).collect()),
        Err(_) => None,
    };
    if changed.as_ref().is_some_and(|c| c.is_empty()) {
        return BTreeMap::new();
    }
    let mut out = BTreeMap::new();
    for (key, rel) in &cache.relations {
        for (unit, record) in rel.units.iter() {
            let Some(name) = record
                .name
                .filter(|_| record.owner && record.rejected.is_none())
            else {
                continue;
            };
            if changed.as_ref().is_none_or(|c| c.contains(name.as_str())) {
                out.insert(unit.to_owned(), key.clone());
            }
        }
    }
    out
}

/// A told unit's verdict: the daemon's reason, abbreviated.
pub fn verdict(reason: &str) -> String {
    format!(
        "slurmctld refused the files with this node's new record ({}); it runs on the last \
         accepted files",
        short(reason, MAX_REASON_IN_VERDICT)
    )
}

/// Adds the verdict of each unit `refusal` tells to `verdicts` (per relation cache key); a
/// unit already left out for its own reason keeps that reason.
pub fn tell(verdicts: &mut BTreeMap<String, Verdicts>, refusal: &Refusal) {
    for (unit, key) in &refusal.units {
        verdicts
            .entry(key.clone())
            .or_default()
            .0
            .entry(unit.clone())
            .or_insert_with(|| verdict(&refusal.reason));
    }
}

/// The part of the controller's status naming the told units: ` (not enlisted: a/0, a/1)`.
pub fn named(refusal: &Refusal) -> String {
    if refusal.units.is_empty() {
        return String::new();
    }
    let mut names: Vec<&str> = refusal
        .units
        .keys()
        .map(String::as_str)
        .take(MAX_NAMED)
        .collect();
    let more = refusal.units.len().saturating_sub(MAX_NAMED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    names.sort_unstable();
    format!(" (not enlisted: {}{more})", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::cache::fnv1a;
    use super::super::unit_name::UnitName;
    use super::*;
    use crate::interface::NodeRecord;
    use crate::slurm::types::NodeName;
    use std::sync::Arc;

    #[test]
    fn fingerprints_are_the_hash_of_shape_app_and_new_node() {
        let record = |cpus: u32| {
            let raw = format!(
                r#"{{"node_parameters":{{"NodeName":"shape","CPUs":"{cpus}"}},"new_node":false}}"#
            );
            Arc::new(NodeRecord::from_relation_value(&raw).unwrap())
        };
        let (a, b) = (record(4), record(8));
        let mut nodes = Vec::new();
        let mut want = BTreeMap::new();
        for (i, (shape, app, new_node)) in [
            (&a, "x", false),
            (&a, "x", false),
            (&a, "x", true),
            (&a, "y", false),
            (&b, "x", false),
        ]
        .into_iter()
        .enumerate()
        {
            let json = shape.to_relation_value();
            let node = AcceptedNode {
                unit: UnitName::new(&format!("{app}/{i}"), app),
                app: Arc::from(app),
                new_node,
                node: Arc::new(shape.node().clone()),
                shape_digest: super::super::desired::shape_digest(&json),
            };
            nodes.push((NodeName::try_from(format!("n{i}").as_str()).unwrap(), node));
            let flag: &[u8] = if new_node { b"1" } else { b"0" };
            let hash = fnv1a(&[json.as_bytes(), b"\n", app.as_bytes(), b"\n", flag]);
            want.insert(format!("n{i}"), hash);
        }
        let got = fingerprints(&nodes.into_iter().collect(), &mut MemoSession::default())
            .to_map()
            .unwrap();
        assert_eq!(got, want);
        assert_eq!(got["n0"], got["n1"]);
        assert_ne!(got["n0"], got["n2"]);
        assert_ne!(got["n0"], got["n3"]);
        assert_ne!(got["n0"], got["n4"]);
    }

    #[test]
    fn changed_units_are_those_whose_fingerprint_moved_or_is_new() {
        let raw = r#"{"node_parameters":{"NodeName":"shape","CPUs":"4"},"new_node":false}"#;
        let shape = Arc::new(NodeRecord::from_relation_value(raw).unwrap());
        let mut nodes = Vec::new();
        let mut cache = Cache::default();
        let mut rel = super::super::cache::CachedRelation {
            app: "x".into(),
            ..Default::default()
        };
        for name in ["a", "b", "c", "d", "n10", "n9"] {
            let unit = format!("x/{name}");
            nodes.push((
                NodeName::try_from(name).unwrap(),
                AcceptedNode {
                    unit: UnitName::new(&unit, "x"),
                    app: "x".into(),
                    new_node: false,
                    node: Arc::new(shape.node().clone()),
                    shape_digest: 0,
                },
            ));
            rel.units.insert(unit, Default::default());
        }
        cache.relations.insert("slurmd:1".into(), rel);
        let map = |pairs: &[(&str, &str)]| Grouped::from_pairs(pairs.iter().copied());
        let accepted = map(&[
            ("a", "1"),
            ("b", "1"),
            ("bb", "7"),
            ("d", "4"),
            ("n10", "5"),
            ("z", "9"),
        ]);
        let new = map(&[
            ("a", "1"),
            ("b", "2"),
            ("c", "3"),
            ("d", "4"),
            ("n10", "6"),
            ("n9", "5"),
        ]);
        let told = changed_units(&nodes.into_iter().collect(), &accepted, &new, &cache);
        let units: Vec<&str> = told.keys().map(String::as_str).collect();
        assert_eq!(units, ["x/b", "x/c", "x/n10", "x/n9"]);
        assert!(told.values().all(|k| k == "slurmd:1"));
    }

    #[test]
    fn without_a_node_list_the_changed_nodes_units_are_their_names_owners() {
        let mut cache = Cache::default();
        let mut rel = super::super::cache::CachedRelation {
            app: "x".into(),
            ..Default::default()
        };
        let node = |name: &str, owner: bool, rejected: bool| super::super::cache::CachedNode {
            name: Some(NodeName::try_from(name).unwrap()),
            owner,
            rejected: rejected.then(|| "bad".to_string()),
            ..Default::default()
        };
        rel.units.insert("x/0".into(), node("a", true, false));
        rel.units.insert("x/1".into(), node("b", true, false));
        // claims `b` too, but does not own it
        rel.units.insert("x/2".into(), node("b", false, false));
        rel.units.insert("x/3".into(), node("c", true, false));
        rel.units.insert("x/4".into(), node("d", true, true));
        cache.relations.insert("slurmd:1".into(), rel);
        let map = |pairs: &[(&str, &str)]| Grouped::from_pairs(pairs.iter().copied());
        let accepted = map(&[("a", "1"), ("b", "1"), ("c", "3")]);
        let new = map(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]);
        let told = changed_units_in_cache(&accepted, &new, &cache);
        assert_eq!(told.keys().collect::<Vec<_>>(), ["x/1"]);
        assert_eq!(told["x/1"], "slurmd:1");
        assert!(changed_units_in_cache(&new, &new, &cache).is_empty());
    }

    #[test]
    fn verdicts_and_names() {
        let refusal = Refusal {
            files_hash: "h".into(),
            reason: "x".repeat(500),
            input: String::new(),
            units: (0..7)
                .map(|i| (format!("a/{i}"), "slurmd:1".to_string()))
                .collect(),
        };
        let mut v = BTreeMap::new();
        v.entry("slurmd:1".to_string())
            .or_insert_with(Verdicts::default)
            .0
            .insert("a/0".to_string(), "own reason".to_string());
        tell(&mut v, &refusal);
        let rel = &v["slurmd:1"].0;
        assert_eq!(rel["a/0"], "own reason");
        assert!(
            rel["a/6"].starts_with("slurmctld refused"),
            "{}",
            rel["a/6"]
        );
        assert!(rel["a/6"].chars().count() < 250, "{}", rel["a/6"]);
        assert_eq!(
            named(&refusal),
            " (not enlisted: a/0, a/1, a/2, a/3, a/4 and 2 more)"
        );
        assert_eq!(named(&Refusal::default()), "");
    }
}
