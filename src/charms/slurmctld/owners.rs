//! Names owned first-come: a node name belongs to the unit that claimed it first, a partition
//! name to the application that published it first. The table lives in the relation cache, so
//! who came first never depends on the order of relation ids as strings (`"slurmd:10"` sorts
//! before `"slurmd:2"`) or of application names: a later claim on an owned name is rejected
//! for the newcomer alone. A name is released when its owner no longer claims it (the unit or
//! relation left, or it now publishes another name); claims that arrive in the same hook (a
//! full rebuild) are ordered by relation id as a number, then by unit number.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Who owns which name, and the default partition chosen when `default-partition` is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owners {
    /// Node name → the unit that owns it (read in bulk: [`super::grouped::bulk_map`]).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "super::grouped::bulk_map"
    )]
    pub nodes: BTreeMap<String, String>,
    /// Partition name → the application that owns it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub partitions: BTreeMap<String, String>,
    /// The partition made the default while `default-partition` is empty: kept while it
    /// exists, so a new application whose name sorts first does not take it over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_partition: Option<String>,
}

/// Settles ownership of names: `previous` owners keep every name they still claim; each name
/// no one owns goes to its first claimant in `claims` (already in arrival order: relation id,
/// then unit number). Returns the new table (name → owner). Both are taken by value: at 10,000
/// nodes the table is kept and pruned in place, and a claim's strings move into it, rather
/// than every name and owner being copied on every hook.
pub fn settle(
    mut previous: BTreeMap<String, String>,
    claims: Vec<(String, String)>,
) -> BTreeMap<String, String> {
    {
        // Claims by name, so keeping a previous owner costs one lookup, not a scan of all claims.
        let mut claimed: FxHashSet<(&str, &str)> = FxHashSet::default();
        claimed.reserve(claims.len());
        claimed.extend(claims.iter().map(|(n, o)| (n.as_str(), o.as_str())));
        previous.retain(|name, owner| claimed.contains(&(name.as_str(), owner.as_str())));
    }
    if previous.len() == claims.len() {
        // every claim is its owner's (the usual hook): nothing to add
        return previous;
    }
    // the names no one owns yet, in claim order (the first claimant of each wins)
    let fresh: Vec<(String, String)> = {
        let mut owned: FxHashSet<&str> = FxHashSet::default();
        owned.reserve(previous.len());
        owned.extend(previous.keys().map(String::as_str));
        claims
            .into_iter()
            .filter(|(name, _)| !owned.contains(name.as_str()))
            .collect()
    };
    for (name, owner) in fresh {
        previous.entry(name).or_insert(owner);
    }
    previous
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, o)| (n.to_string(), o.to_string()))
            .collect()
    }

    #[test]
    fn the_first_owner_keeps_its_name() {
        let first = settle(BTreeMap::new(), claims(&[("gpu-node-0", "a/0")]));
        // A newcomer listed first (e.g. a relation id that sorts first) does not take it.
        let later = settle(
            first,
            claims(&[("gpu-node-0", "b/0"), ("gpu-node-0", "a/0")]),
        );
        assert_eq!(later["gpu-node-0"], "a/0");
        // Once the owner is gone the name is free for the next claimant.
        let gone = settle(later, claims(&[("gpu-node-0", "b/0")]));
        assert_eq!(gone["gpu-node-0"], "b/0");
    }
}
