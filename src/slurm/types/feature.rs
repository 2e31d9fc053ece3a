//! Node features (`NodeName=... Features=a100,ib`).

use super::error::VocabError;
use super::partition_name::check_name;
use serde::{Deserialize, Serialize};

/// One node feature, as `Features=` lists it and `--constraint` asks for it.
///
/// Slurm reads `Features` as one string and splits it at `,` (`node_features_build_list_eq`
/// in `src/slurmctld/read_config.c` 22.05, `src/common/node_features.c` 24.11/26.05), without
/// checking the parts; a job then names them in `--constraint`, whose parser
/// (`build_feature_list`, `src/slurmctld/job_scheduler.c`) reads `*`, `&`, `|`, brackets and
/// parentheses as operators. So a feature is a name ([`super::PartitionName`]'s rule: no
/// blanks, `#`, `=`, quotes, `\`, `,`, `:`, brackets or parentheses, not `ALL`/`DEFAULT`)
/// without `*`, `&` or `|`: a feature holding one would be written but no job could ask for it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Feature(String);

fn check_feature(value: &str) -> Result<(), VocabError> {
    check_name("Features", value)?;
    match value.chars().find(|c| matches!(c, '*' | '&' | '|')) {
        Some(c) => Err(VocabError::new(
            "Features",
            value,
            format!("{c:?} is a --constraint operator; no job could ask for this feature"),
        )),
        None => Ok(()),
    }
}

string_newtype!(Feature, check_feature);

impl Feature {
    /// The features of a `Features=` value (`a100,ib`), in order; the error names the first
    /// refused one.
    pub fn parse_list(value: &str) -> Result<Vec<Feature>, VocabError> {
        value.split(',').map(Feature::try_from).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_slurm_can_match() {
        for ok in [
            "a100",
            "ib",
            "nvidia_h100_80gb_hbm3",
            "cuda12",
            "rack-2",
            "x.y",
            "gpu@2",
        ] {
            Feature::try_from(ok).unwrap();
        }
        assert_eq!(Feature::parse_list("a,b").unwrap().len(), 2);
    }

    #[test]
    fn near_misses_are_refused_naming_features() {
        for no in [
            "", "a b", "a,b", "a:b", "a=b", "a#b", "a&b", "a|b", "a*2", "[a]", "(a)", "ALL",
            "a\"b", "é",
        ] {
            let e = Feature::try_from(no).unwrap_err().to_string();
            assert!(e.contains("Features"), "{no:?}: {e}");
        }
        let e = Feature::parse_list("ok,a&b").unwrap_err().to_string();
        assert!(
            e.contains("constraint operator") && e.contains("a&b"),
            "{e}"
        );
        assert!(Feature::parse_list("a,,b").is_err());
    }
}
