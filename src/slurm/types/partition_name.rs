//! Partition names.

use super::error::VocabError;
use serde::{Deserialize, Serialize};

/// A partition name (`PartitionName=`; also the rule for NodeSet and feature names): 1 to 255
/// printable ASCII characters without whitespace, `#`, `=`, quotes, `\`, `,`, `:`, brackets or
/// parentheses (list and hostlist syntax), not `ALL` or `DEFAULT`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PartitionName(String);

/// The rule behind [`PartitionName`], for the `what` named in the error.
pub(crate) fn check_name(what: &'static str, value: &str) -> Result<(), VocabError> {
    let bad = |reason: &str| Err(VocabError::new(what, value, reason));
    if value.is_empty() || value.len() > 255 {
        return bad("a name has 1 to 255 characters");
    }
    if let Some(c) = value.chars().find(|c| {
        !c.is_ascii_graphic()
            || matches!(c, '#' | '=' | '"' | '\'' | '`' | '\\' | ',' | ':')
            || matches!(c, '[' | ']' | '(' | ')')
    }) {
        return bad(&format!(
            "{c:?} is not allowed (no blanks, control or non-ASCII characters, # = quotes \\ , : brackets or parentheses)"
        ));
    }
    if value.eq_ignore_ascii_case("ALL") || value.eq_ignore_ascii_case("DEFAULT") {
        return bad("ALL and DEFAULT are reserved by Slurm");
    }
    Ok(())
}

fn check_partition_name(value: &str) -> Result<(), VocabError> {
    check_name("PartitionName", value)
}

string_newtype!(PartitionName, check_partition_name);

impl PartitionName {
    /// `partition`: a valid name standing in where the real one is set later (the parser's
    /// `PartitionName=DEFAULT` template, the override checker's scratch partition).
    pub fn placeholder() -> Self {
        Self("partition".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names() {
        for ok in ["slurmd", "gpu-a100", "batch_1"] {
            PartitionName::try_from(ok).unwrap();
        }
        for no in [
            "", "a b", "a,b", "a:b", "DEFAULT", "all", "a\nb", "a=b", "p[1]",
        ] {
            assert!(PartitionName::try_from(no).is_err(), "{no:?}");
        }
    }
}
