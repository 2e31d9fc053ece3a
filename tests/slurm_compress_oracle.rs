//! `hostlist::compress` writes slurm.conf's `NodeName=` lines, partitions' `Nodes=` and the
//! applied record, so its output must stay byte-identical. It is compared here with an oracle
//! written from its rules alone, naively, with sets and one sort (not the product's hash map,
//! runs of one prefix and hand-written number writer):
//! - one name is written as it is; otherwise each distinct name once, an empty name left out;
//! - a name ending in 1 to 18 digits is its prefix and that number; any other name stands alone;
//! - under one prefix, a number written with leading zeros fixes its digit count as a width:
//!   every number of the prefix written with that many digits is listed at that width, the
//!   others unpadded;
//! - the numbers of one (prefix, width) are written `prefix<n>` for one number, else
//!   `prefix[runs]`, a run of consecutive numbers as `lo-hi`;
//! - items in the order of (prefix or lone name, a lone name first, smallest number, width).

use proptest::prelude::*;
use slurm_charms::slurm::hostlist::compress;
use std::collections::{BTreeMap, BTreeSet};

/// The (prefix, digits) of a name that ends in 1 to 18 digits.
fn numbered(name: &str) -> Option<(&str, &str)> {
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = name.len() - prefix.len();
    (1..=18)
        .contains(&digits)
        .then(|| name.split_at(prefix.len()))
}

/// `numbers` written as runs: a run starts at a number whose predecessor is not there and
/// ends before the first gap.
fn runs(numbers: &BTreeSet<u64>, width: usize) -> Vec<String> {
    let there = |n: Option<u64>| n.is_some_and(|n| numbers.contains(&n));
    numbers
        .iter()
        .filter(|&&n| !there(n.checked_sub(1)))
        .map(|&lo| {
            let mut hi = lo;
            while there(hi.checked_add(1)) {
                hi += 1;
            }
            if hi == lo {
                format!("{lo:0width$}")
            } else {
                format!("{lo:0width$}-{hi:0width$}")
            }
        })
        .collect()
}

/// Where an item stands: (prefix or lone name, 0 for a lone name, smallest number, width).
type Order<'a> = (&'a str, u8, u64, usize);

fn oracle(names: &[String]) -> String {
    if let [only] = names {
        return only.clone();
    }
    let distinct: BTreeSet<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !n.is_empty())
        .collect();
    let padded: BTreeSet<(&str, usize)> = distinct
        .iter()
        .filter_map(|n| numbered(n))
        .filter(|(_, digits)| digits.len() > 1 && digits.starts_with('0'))
        .map(|(prefix, digits)| (prefix, digits.len()))
        .collect();
    let mut items: Vec<(Order, String)> = Vec::new();
    let mut groups: BTreeMap<(&str, usize), BTreeSet<u64>> = BTreeMap::new();
    for name in distinct {
        match numbered(name) {
            None => items.push(((name, 0, 0, 0), name.to_string())),
            Some((prefix, digits)) => {
                let fixed = padded.contains(&(prefix, digits.len()));
                let width = if fixed { digits.len() } else { 0 };
                let number = digits.parse().expect("at most 18 digits");
                groups.entry((prefix, width)).or_default().insert(number);
            }
        }
    }
    for ((prefix, width), numbers) in groups {
        let first = *numbers.first().expect("a group has a number");
        let text = match runs(&numbers, width).as_slice() {
            [one] if numbers.len() == 1 => format!("{prefix}{one}"),
            many => format!("{prefix}[{}]", many.join(",")),
        };
        items.push(((prefix, 1, first, width), text));
    }
    items.sort();
    let texts: Vec<String> = items.into_iter().map(|(_, text)| text).collect();
    texts.join(",")
}

#[test]
fn the_oracle_follows_the_rules() {
    let oracle_of =
        |names: &[&str]| oracle(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
    assert_eq!(oracle_of(&["n9", "n09", "n10"]), "n9,n[09-10]");
    assert_eq!(
        oracle_of(&["gpu-3", "gpu-", "gpu-1", "gpu-2", "a", "gpu-1"]),
        "a,gpu-,gpu-[1-3]"
    );
    assert_eq!(
        oracle_of(&["", "5", "x007", "x8", "x010"]),
        "5,x[007,010],x8"
    );
    assert_eq!(oracle_of(&[""]), "");
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-c]{0,2}[-_.]?", 0u64..40, 0usize..4, "(-[a-z]{1,2})?")
            .prop_map(|(prefix, n, pad, suffix)| format!("{prefix}{n:0pad$}{suffix}")),
        "[a-c0-9]{1,4}",
        Just(String::new()),
        (0u64..u64::MAX).prop_map(|n| format!("n{n}")),
    ]
}

proptest! {
    #[test]
    fn compress_writes_what_the_rules_say(
        names in prop::collection::vec(name(), 0..80)
    ) {
        prop_assert_eq!(compress(&names), oracle(&names));
    }
}
