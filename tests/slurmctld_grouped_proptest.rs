//! The applied record stores its node maps grouped by value as hostlists
//! (`slurmctld::grouped`): for any set of valid node names (`NodeName`'s rule: letters, digits,
//! `-`, `_`, `.`, numbers of any width, zero-padded or not) and values, the stored form reads
//! back to the same map. A lossy hostlist here would make the controller misjudge which nodes
//! it added, removed or changed.

use proptest::prelude::*;
use slurm_charms::charms::slurmctld::grouped::{ByNode, group, ungroup};
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
        let stored: std::collections::BTreeMap<String, String> = group(&map)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        prop_assert_eq!(ungroup(stored).unwrap(), map);
    }
}
