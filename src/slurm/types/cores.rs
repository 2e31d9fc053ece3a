//! gres.conf `Cores=`.

use super::error::VocabError;
use crate::slurm::hostlist;
use serde::{Deserialize, Serialize};

/// Most core ids one `Cores=` value may name.
pub const MAX_CORES: usize = 1 << 16;

/// A `Cores=` value: abstract core ids, sorted, each once, at least one; read and written as
/// a range list (`0-3,8`). Held as that range list (sorted, disjoint, never adjacent), not
/// expanded: a GPU's `0-55,112-167` is two ranges rather than 112 ids, which is most of a
/// parsed `node` record (the controller holds one per node shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CoreList(Box<[(u32, u32)]>);

impl CoreList {
    /// The ids (any order, repeats allowed); `None` when there are none.
    pub fn from_ids(ids: &[u32]) -> Option<Self> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        Self::from_ranges(ids.into_iter().map(|i| (i, i)).collect())
    }

    /// The canonical form of inclusive ranges (any order, overlapping or adjacent allowed):
    /// sorted, merged; `None` when there are none.
    fn from_ranges(mut ranges: Vec<(u32, u32)>) -> Option<Self> {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if u64::from(lo) <= u64::from(last.1) + 1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        (!merged.is_empty()).then(|| Self(merged.into_boxed_slice()))
    }

    /// The ids as inclusive `(lo, hi)` ranges, sorted, disjoint and never adjacent.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.0
    }

    /// The core ids, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(lo, hi)| lo..=hi)
    }
}

/// Ordered as the sorted id lists are (the order of the expanded form this type once held).
impl Ord for CoreList {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.ids().cmp(other.ids())
    }
}

impl PartialOrd for CoreList {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl TryFrom<&str> for CoreList {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let bad = || VocabError::new("Cores", value, "expected core ids like 0-3,8");
        let runs = hostlist::parse_runs(value).map_err(|_| bad())?;
        // At most MAX_CORES ids as written (repeats counted), each a u32.
        let mut written: u64 = 0;
        let mut ranges = Vec::with_capacity(runs.len());
        for (lo, hi) in runs {
            let (Ok(lo), Ok(hi)) = (u32::try_from(lo), u32::try_from(hi)) else {
                return Err(bad());
            };
            written += u64::from(hi - lo) + 1;
            if written > MAX_CORES as u64 {
                return Err(bad());
            }
            ranges.push((lo, hi));
        }
        Self::from_ranges(ranges).ok_or_else(bad)
    }
}

parsed_newtype!(CoreList);

impl std::fmt::Display for CoreList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        let ranges = self
            .0
            .iter()
            .map(|&(lo, hi)| (u64::from(lo), u64::from(hi)));
        hostlist::push_ranges(&mut out, ranges, 0);
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores() {
        assert_eq!(CoreList::try_from("8,0-3,2").unwrap().to_string(), "0-3,8");
        assert_eq!(CoreList::try_from("4-7,0-3").unwrap().ranges(), [(0, 7)]);
        assert_eq!(CoreList::try_from("0,1").unwrap().to_string(), "0-1");
        for no in [
            "",
            "0-3 8",
            "3-1",
            "a",
            "0-99999999",
            "4294967296",
            "0-65536",
        ] {
            assert!(CoreList::try_from(no).is_err(), "{no:?}");
        }
        assert!(CoreList::try_from("0-65535").is_ok());
        assert!(
            CoreList::try_from("0-65535,0").is_err(),
            "ids as written count"
        );
    }
}
