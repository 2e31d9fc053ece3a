//! Property tests for `Cores=` held as ranges ([`CoreList`]): the values accepted and refused,
//! and the text written, are those of the expanded id list, as an oracle written here from
//! the rules alone (not with the product's range-list code): a list is `,`-separated numbers
//! (1 to 18 digits) and `lo-hi` ranges with `lo <= hi`, every id a u32, at most [`MAX_CORES`]
//! ids as written; it is written sorted, each id once, a run of consecutive ids as `lo-hi`.

use proptest::prelude::*;
use slurm_charms::slurm::types::{CoreList, MAX_CORES};
use std::collections::BTreeSet;

/// The ids a list names (sorted, each once) and the text it is written as; `None` when refused.
fn expanded(text: &str) -> Option<(Vec<u32>, String)> {
    let number = |s: &str| -> Option<u64> {
        let digits = !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
        if digits { s.parse().ok() } else { None }
    };
    let mut written: u64 = 0;
    let mut ids = BTreeSet::new();
    for part in text.split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi) = (number(lo)?, number(hi)?);
        if lo > hi || hi > u64::from(u32::MAX) {
            return None;
        }
        written += hi - lo + 1;
        if written > MAX_CORES as u64 {
            return None;
        }
        ids.extend(lo as u32..=hi as u32);
    }
    // A run starts at an id whose predecessor is not named and ends at the last id before a
    // gap.
    let named = |id: u32| ids.contains(&id);
    let runs: Vec<String> = ids
        .iter()
        .filter(|&&id| id == 0 || !named(id - 1))
        .map(|&lo| {
            let mut hi = lo;
            while hi.checked_add(1).is_some_and(named) {
                hi += 1;
            }
            if hi == lo {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    Some((ids.into_iter().collect(), runs.join(",")))
}

/// A range list: single ids and `lo-hi` ranges, overlapping, adjacent and out of order,
/// sometimes reversed, huge or with leading zeros.
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

#[test]
fn the_oracle_follows_the_rules() {
    let text = |t: &str| expanded(t).map(|(_, text)| text);
    assert_eq!(text("8,0-3,2").as_deref(), Some("0-3,8"));
    assert_eq!(
        text("007,5-6,4294967295").as_deref(),
        Some("5-7,4294967295")
    );
    for refused in ["", "3-1", "1,", "a", "-1", "4294967296", "0-65536"] {
        assert_eq!(text(refused), None, "{refused:?}");
    }
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
