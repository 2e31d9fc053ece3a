//! Property tests for `Cores=` held as ranges ([`CoreList`]): the same values are accepted
//! and refused, and the same text is written, as by the expanded id list the type held before
//! (`parse_ranges_u32` + `format_ranges`, which the slurmd charm still uses for its preview).

use proptest::prelude::*;
use slurm_charms::slurm::hostlist::{format_ranges, parse_ranges_u32};
use slurm_charms::slurm::types::{CoreList, MAX_CORES};

/// The old expanded form: ids as written, refused past the limit, written sorted and once.
fn expanded(text: &str) -> Option<(Vec<u32>, String)> {
    let ids = parse_ranges_u32(text).ok()?;
    if ids.len() > MAX_CORES || ids.is_empty() {
        return None;
    }
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let text = format_ranges(&sorted);
    Some((sorted, text))
}

/// A range list: single ids and `lo-hi` ranges, overlapping, adjacent and out of order,
/// sometimes reversed, huge or with leading zeros (all refused or kept as the old form did).
fn range_list() -> impl Strategy<Value = String> {
    let item = prop_oneof![
        (0u64..300).prop_map(|v| v.to_string()),
        (0u64..300, 0u64..40).prop_map(|(l, n)| format!("{l}-{}", l + n)),
        (0u64..300, 1u64..40).prop_map(|(l, n)| format!("{}-{l}", l + n)),
        (0u64..70_000).prop_map(|n| format!("0-{n}")),
        Just("4294967295".to_string()),
        Just("4294967296".to_string()),
        Just("007".to_string()),
        Just(String::new()),
    ];
    prop::collection::vec(item, 1..8).prop_map(|items| items.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ranges_accept_refuse_and_write_as_the_expanded_form(text in range_list()) {
        let new = CoreList::try_from(text.as_str());
        match expanded(&text) {
            None => prop_assert!(new.is_err(), "{text:?} accepted: {new:?}"),
            Some((ids, want)) => {
                let new = new.map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
                prop_assert_eq!(new.to_string(), want);
                prop_assert_eq!(new.ids().collect::<Vec<_>>(), ids.clone());
                prop_assert_eq!(CoreList::from_ids(&ids), Some(new.clone()));
                // Round trip through its text and through serde.
                let again = CoreList::try_from(new.to_string().as_str()).unwrap();
                prop_assert_eq!(&again, &new);
                let json = serde_json::to_string(&new).unwrap();
                prop_assert_eq!(serde_json::from_str::<CoreList>(&json).unwrap(), new);
            }
        }
    }

    #[test]
    fn order_is_the_order_of_the_id_lists(a in prop::collection::vec(0u32..64, 1..20),
                                          b in prop::collection::vec(0u32..64, 1..20)) {
        let (x, y) = (CoreList::from_ids(&a).unwrap(), CoreList::from_ids(&b).unwrap());
        let ids = |v: &[u32]| { let mut v = v.to_vec(); v.sort_unstable(); v.dedup(); v };
        prop_assert_eq!(x.cmp(&y), ids(&a).cmp(&ids(&b)));
        prop_assert_eq!(x == y, ids(&a) == ids(&b));
    }
}
