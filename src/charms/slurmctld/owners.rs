//! Names owned first-come: a node name belongs to the unit that claimed it first, a partition
//! name to the application that published it first. Ownership lives in the relation cache (a
//! flag on each unit's entry, a table of partition names), so
//! who came first never depends on the order of relation ids as strings (`"slurmd:10"` sorts
//! before `"slurmd:2"`) or of application names: a later claim on an owned name is rejected
//! for the newcomer alone. A name is released when its owner no longer claims it (the unit or
//! relation left, or it now publishes another name); claims that arrive in the same hook are
//! ordered by relation id as a number, then by unit number. A full rebuild of the cache
//! (leader elected, charm upgraded) keeps the owners the loaded store had
//! ([`super::store::Store::keep_ownership_of`]).

use crate::charms::common::NameMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::HashSet;

/// Who owns which partition name, and the default partition chosen when `default-partition` is
/// empty. Node names are owned per unit: [`super::store::Unit::owner`] (a table of
/// 10,000 names and units was parsed and written on every hook; a flag on each unit's entry
/// is not).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owners {
    /// Partition name → the application that owns it.
    pub partitions: BTreeMap<String, String>,
    /// The partition made the default while `default-partition` is empty: kept while it
    /// exists, so a new application whose name sorts first does not take it over.
    pub default_partition: Option<String>,
}

/// Settles ownership of names: `previous` owners (name, owner) keep every name they still
/// claim; each name no one owns goes to its first claimant in `claims` (already in arrival
/// order: relation id, then unit number). Returns the new table (name → owner), borrowing
/// every string: at 10,000 nodes nothing is copied.
pub fn settle<'a>(
    previous: impl IntoIterator<Item = (&'a str, &'a str)>,
    claims: &[(&'a str, &'a str)],
) -> NameMap<&'a str, &'a str> {
    // Claims by name, so keeping a previous owner costs one lookup, not a scan of all claims.
    let mut claimed: HashSet<(&str, &str), crate::charms::common::NameHasher> = HashSet::default();
    claimed.reserve(claims.len());
    claimed.extend(claims.iter().copied());
    let mut owners: NameMap<&str, &str> = NameMap::default();
    owners.reserve(claims.len());
    for (name, owner) in previous {
        if claimed.contains(&(name, owner)) {
            owners.entry(name).or_insert(owner);
        }
    }
    if owners.len() == claims.len() {
        // every claim is its owner's (the usual hook): nothing to add
        return owners;
    }
    for &(name, owner) in claims {
        owners.entry(name).or_insert(owner);
    }
    owners
}

/// [`settle`] for node names, whose ownership is a flag on each claimant's cache entry
/// ([`super::store::Unit::owner`], kept only while the unit publishes the name it owned):
/// `claims` (name, unit, the unit owns it), in arrival order. A flagged claimant keeps its
/// name; each name no flagged claimant holds goes to its first claimant. The previous owners
/// are exactly the flagged claimants, so no table of them is built: at 10,000 nodes that is
/// one map insert per name. (Two flagged claims of one name exist only in a damaged cache: the
/// first in arrival order keeps it.)
pub fn settle_flagged<'a>(claims: &[(&'a str, &'a str, bool)]) -> NameMap<&'a str, &'a str> {
    let mut owners: NameMap<&str, &str> = NameMap::default();
    owners.reserve(claims.len());
    let mut flagged = 0;
    for &(name, unit, _) in claims.iter().filter(|c| c.2) {
        owners.entry(name).or_insert(unit);
        flagged += 1;
    }
    if flagged == claims.len() {
        // every claim is its owner's (the usual hook): nothing to add
        return owners;
    }
    for &(name, unit, _) in claims {
        owners.entry(name).or_insert(unit);
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_owner_keeps_its_name() {
        let first = settle([], &[("gpu-node-0", "a/0")]);
        // A newcomer listed first (e.g. a relation id that sorts first) does not take it.
        let later = settle(first, &[("gpu-node-0", "b/0"), ("gpu-node-0", "a/0")]);
        assert_eq!(later["gpu-node-0"], "a/0");
        // Once the owner is gone the name is free for the next claimant.
        let gone = settle(later, &[("gpu-node-0", "b/0")]);
        assert_eq!(gone["gpu-node-0"], "b/0");
    }

    #[test]
    fn a_flagged_claimant_keeps_its_name() {
        // A newcomer listed first does not take the name its owner (flagged) still claims.
        let later = settle_flagged(&[("gpu-node-0", "b/0", false), ("gpu-node-0", "a/0", true)]);
        assert_eq!(later["gpu-node-0"], "a/0");
        // No flagged claimant: the first claim wins.
        let fresh = settle_flagged(&[("gpu-node-0", "b/0", false), ("gpu-node-0", "a/0", false)]);
        assert_eq!(fresh["gpu-node-0"], "b/0");
        assert_eq!(fresh.len(), 1);
    }
}
