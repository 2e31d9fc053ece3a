//! gres.conf `Links=`.

use super::error::VocabError;
use serde::{Deserialize, Serialize};

/// A `Links=` row: one entry per GPU of the node in index order, `-1` for the GPU itself
/// (exactly once) and `0` or a link count for the others (`-1,4,4,0`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LinksRow(Vec<i32>);

impl LinksRow {
    /// A row from its entries: refused unless exactly one is `-1` and none is below it.
    pub fn new(entries: Vec<i32>) -> Result<Self, VocabError> {
        if entries.iter().filter(|l| **l == -1).count() != 1 || entries.iter().any(|l| *l < -1) {
            let text: Vec<String> = entries.iter().map(i32::to_string).collect();
            return Err(VocabError::new(
                "Links",
                &text.join(","),
                "a Links row has exactly one -1 (the GPU itself) and 0 or link counts elsewhere",
            ));
        }
        Ok(Self(entries))
    }

    /// The entries.
    pub fn entries(&self) -> &[i32] {
        &self.0
    }
}

impl TryFrom<&str> for LinksRow {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let entries = value
            .split(',')
            .map(|l| {
                l.parse::<i32>()
                    .ok()
                    .filter(|_| !l.starts_with('+'))
                    .ok_or_else(|| {
                        VocabError::new(
                            "Links",
                            value,
                            "expected a comma list of -1, 0 or link counts",
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        Self::new(entries)
    }
}

parsed_newtype!(LinksRow);

impl std::fmt::Display for LinksRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::newtype::write_comma_list(f, &self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links() {
        assert_eq!(LinksRow::try_from("-1,2,0").unwrap().to_string(), "-1,2,0");
        for no in ["", "2,0", "-1,-1", "-1,+2", "-1,-2", "-1 ,2", "-1,x"] {
            assert!(LinksRow::try_from(no).is_err(), "{no:?}");
        }
    }
}
