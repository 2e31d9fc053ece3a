//! gres.conf `Cores=`.

use super::error::VocabError;
use crate::slurm::hostlist;
use serde::{Deserialize, Serialize};

/// Most core ids one `Cores=` value may name.
pub const MAX_CORES: usize = 1 << 16;

/// A `Cores=` value: abstract core ids, sorted, each once, at least one; read and written as
/// a range list (`0-3,8`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CoreList(Vec<u32>);

impl CoreList {
    /// The ids (sorted, each once); `None` when there are none.
    pub fn from_ids(ids: &[u32]) -> Option<Self> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        (!ids.is_empty()).then_some(Self(ids))
    }

    /// The core ids, sorted.
    pub fn ids(&self) -> &[u32] {
        &self.0
    }
}

impl TryFrom<&str> for CoreList {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let bad = || VocabError::new("Cores", value, "expected core ids like 0-3,8");
        let ids = hostlist::parse_ranges_u32(value).map_err(|_| bad())?;
        if ids.len() > MAX_CORES {
            return Err(bad());
        }
        Self::from_ids(&ids).ok_or_else(bad)
    }
}

parsed_newtype!(CoreList);

impl std::fmt::Display for CoreList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hostlist::format_ranges(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores() {
        assert_eq!(CoreList::try_from("8,0-3,2").unwrap().to_string(), "0-3,8");
        for no in ["", "0-3 8", "3-1", "a", "0-99999999"] {
            assert!(CoreList::try_from(no).is_err(), "{no:?}");
        }
    }
}
