//! Node names and hostlists of them.

use super::error::VocabError;
use crate::slurm::hostlist;
use serde::{Deserialize, Serialize};

/// Longest node name accepted: a fully qualified host name (Slurm itself accepted 1100
/// characters when tried; 253 is the DNS limit and more than any `slurmd -C` reports).
pub const MAX_NODE_NAME_LEN: usize = 253;

/// A Slurm node name, as `slurmd -C` reports it and slurm.conf `NodeName=` takes it.
///
/// Rule (tried against the real slurmctld 22.05, evidence in `docs/slurm-config.md`): 1 to
/// 253 ASCII letters, digits, `-`, `_` and `.`, starting with a letter or digit; not `ALL` or
/// `DEFAULT` in any case. Slurm accepts `gpu_node_2`, a trailing `-` or `_`, upper case,
/// leading digits and dots; it refuses `ALL`/`DEFAULT` (fatal); `,` and `[` would make
/// hostlists, whitespace, `#` and `=` would break the file, and a leading `-` reads as an
/// option to `scontrol`, so those are refused here.
///
/// The text is shared (`Arc<str>`): the controller's plan clones each node's name into the
/// slurm.conf and gres.conf models on every hook, 10,000 clones at 10,000 nodes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct NodeName(std::sync::Arc<str>);

fn check_node_name(value: &str) -> Result<(), VocabError> {
    let bad = |reason: &str| Err(VocabError::new("NodeName", value, reason));
    if value.is_empty() || value.len() > MAX_NODE_NAME_LEN {
        return bad("a node name has 1 to 253 characters");
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return bad("a node name is ASCII letters, digits, '-', '_' and '.'");
    }
    if !value.as_bytes()[0].is_ascii_alphanumeric() {
        return bad("a node name starts with a letter or digit");
    }
    if value.eq_ignore_ascii_case("ALL") || value.eq_ignore_ascii_case("DEFAULT") {
        return bad("ALL and DEFAULT are reserved by Slurm");
    }
    Ok(())
}

string_newtype!(NodeName, check_node_name);

impl NodeName {
    /// `shape`: a valid name standing in where the real one is filled in later (a parser's
    /// `NodeName=DEFAULT` template, the controller's cached node shapes).
    pub fn placeholder() -> Self {
        Self("shape".into())
    }
}

/// A Slurm hostlist expression (`gpu-[1-4],login1`) whose every name is a [`NodeName`]; kept
/// expanded (in written order, duplicates removed) and written compressed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Hostlist(Vec<NodeName>);

impl Hostlist {
    /// The node names.
    pub fn names(&self) -> &[NodeName] {
        &self.0
    }

    /// Whether the list names no node.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl TryFrom<&str> for Hostlist {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let names = hostlist::expand(value)
            .map_err(|e| VocabError::new("hostlist", value, e.to_string()))?;
        if names.is_empty() {
            return Err(VocabError::new("hostlist", value, "names no node"));
        }
        let mut out: Vec<NodeName> = Vec::with_capacity(names.len());
        for n in names {
            let n = NodeName::try_from(n)?;
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Ok(Self(out))
    }
}

parsed_newtype!(Hostlist);

impl std::fmt::Display for Hostlist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hostlist::compress(&self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_follow_what_slurmctld_accepts() {
        for ok in [
            "vm",
            "juju-e33208-1",
            "gpu_node_2",
            "evil-",
            "x_",
            "0node",
            "123",
            "Gpu-Node",
            "node.example.com",
        ] {
            NodeName::try_from(ok).unwrap();
        }
        let long = "a".repeat(254);
        for no in [
            "", "-lead", "_x", ".x", "a b", "a\nb", "a#b", "a=b", "n[1-2]", "a,b", "ALL",
            "default", "é", "n:x", &long,
        ] {
            assert!(NodeName::try_from(no).is_err(), "{no:?}");
        }
    }

    #[test]
    fn errors_are_one_line_and_bounded() {
        let huge = format!("{}\n", "x".repeat(1 << 20));
        let e = NodeName::try_from(huge.as_str()).unwrap_err().to_string();
        assert!(e.len() < 300 && !e.contains('\n'), "{e}");
    }

    #[test]
    fn serde_goes_through_the_check() {
        let n: NodeName = serde_json::from_str("\"gpu_node_2\"").unwrap();
        assert_eq!(serde_json::to_string(&n).unwrap(), "\"gpu_node_2\"");
        assert!(serde_json::from_str::<NodeName>("\"a b\"").is_err());
    }

    #[test]
    fn hostlists() {
        let h = Hostlist::try_from("gpu-[1-3],gpu-2,login").unwrap();
        assert_eq!(h.names().len(), 4);
        assert_eq!(h.to_string(), "gpu-[1-3],login");
        for no in ["", "gpu-[3-1]", "a,ALL", "a b"] {
            assert!(Hostlist::try_from(no).is_err(), "{no:?}");
        }
    }
}
