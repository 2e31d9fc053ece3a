//! The applied record keeps its node maps grouped by value as hostlists
//! (`slurmctld::grouped`), on disk and in memory: for any set of valid node names (`NodeName`'s rule: letters, digits,
//! `-`, `_`, `.`, numbers of any width, zero-padded or not) and values, the stored form reads
//! back to the same map, and comparing two grouped maps names the nodes a per-node comparison
//! names. A lossy hostlist here would make the controller misjudge which nodes
//! it added, removed or changed.

use proptest::prelude::*;
use slurm_charms::charms::slurmctld::grouped::{ByNode, Grouped};
use slurm_charms::slurm::types::NodeName;

fn node_name() -> impl Strategy<Value = String> {
    prop_oneof![
        // numbered names, the hostlist case: widths, padding, a suffix after the number
        (
            "[a-z]{1,3}[-_.]?",
            0u32..120,
            prop::bool::ANY,
            "(-[a-z0-9]{1,2})?"
        )
            .prop_map(|(prefix, n, padded, suffix)| {
                if padded {
                    format!("{prefix}{n:03}{suffix}")
                } else {
                    format!("{prefix}{n}{suffix}")
                }
            }),
        "[a-zA-Z0-9][a-zA-Z0-9._-]{0,12}",
    ]
    .prop_filter("a valid NodeName", |n| n.parse::<NodeName>().is_ok())
}

proptest! {
    #[test]
    fn grouped_maps_read_back_unchanged(
        entries in prop::collection::vec((node_name(), "[a-z:0-9]{0,6}"), 0..200)
    ) {
        let map: ByNode = entries.into_iter().collect();
        let json = serde_json::to_string(&Grouped::from_map(&map)).unwrap();
        let read: Grouped = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(read.to_map().unwrap(), map);
    }

    /// Looking a name up in the hostlists answers what the per-node map does.
    #[test]
    fn grouped_contains_equals_the_per_node_lookup(
        entries in prop::collection::vec((node_name(), "[ab]"), 0..80),
        probes in prop::collection::vec(node_name(), 0..40),
    ) {
        let map: ByNode = entries.into_iter().collect();
        let grouped = Grouped::from_map(&map);
        for name in probes.iter().chain(map.keys()) {
            prop_assert_eq!(grouped.contains(name).unwrap(), map.contains_key(name), "{}", name);
        }
    }

    /// The grouped comparison names exactly the nodes a per-node comparison does.
    #[test]
    fn grouped_diff_equals_the_per_node_diff(
        old in prop::collection::vec((node_name(), "[ab]"), 0..60),
        new in prop::collection::vec((node_name(), "[ab]"), 0..60),
    ) {
        let old: ByNode = old.into_iter().collect();
        let new: ByNode = new.into_iter().collect();
        let d = Grouped::diff(&Grouped::from_map(&old), &Grouped::from_map(&new)).unwrap();
        let names = |f: &dyn Fn(&String) -> bool, m: &ByNode| -> std::collections::BTreeSet<String> {
            m.keys().filter(|n| f(n)).cloned().collect()
        };
        prop_assert_eq!(d.added, names(&|n| !old.contains_key(n), &new));
        prop_assert_eq!(d.removed, names(&|n| !new.contains_key(n), &old));
        prop_assert_eq!(d.changed, names(&|n| old.get(n).is_some_and(|v| Some(v) != new.get(n)), &new));
    }
}
