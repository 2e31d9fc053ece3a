//! `gres_types` (slurmctld app bag): the GRES names in the `GresTypes` of the files slurmctld
//! runs (`gpu,shard`). A slurmd loads its GRES plugins only when it starts (Slurm 22.05's
//! `gres_reconfig`: "GresPlugins changed ... ignored"), and a configless slurmd starts from the
//! controller's files: a slurmd restarted for a new GRES name before slurmctld runs it comes up
//! without that plugin, and Slurm drains the node for a count mismatch once the controller's
//! files arrive. The controller publishes this after every reload, so a node restarts slurmd for
//! a new GRES name in the hook this publication causes (`src/charms/slurmd/gres_order.rs`).
//! Changes only when the cluster's `GresTypes` does: not an event per reload on every node.
//! The publication also gives every node a hook once slurmctld runs new GRES names, in which
//! a drain Slurm set for a count mismatch meanwhile is cleared. Absent or empty: the nodes
//! restart slurmd as before (an older controller).

use super::InterfaceError;
use crate::slurm::types::GresName;
use std::collections::BTreeSet;

/// Relation key of the GRES names slurmctld runs.
pub const GRES_TYPES_KEY: &str = "gres_types";

/// A set of GRES names (`GresTypes`), in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GresTypes(BTreeSet<GresName>);

impl GresTypes {
    /// The set of `names`.
    pub fn new(names: impl IntoIterator<Item = GresName>) -> Self {
        GresTypes(names.into_iter().collect())
    }

    /// The names, comma-separated in name order (`gpu,shard`): the relation value.
    pub fn to_relation_value(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(GresName::as_str).collect();
        names.join(",")
    }

    /// Reads the relation value; every name must be a GRES name Slurm accepts.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        raw.split(',')
            .filter(|n| !n.is_empty())
            .map(|n| {
                GresName::try_from(n).map_err(|e| {
                    InterfaceError::invalid(GRES_TYPES_KEY, "value", format!("{n:?}: {e}"))
                })
            })
            .collect::<Result<BTreeSet<_>, _>>()
            .map(GresTypes)
    }

    /// The names of `needed` missing here, comma-separated (empty when all are here).
    pub fn missing(&self, needed: &GresTypes) -> String {
        let names: Vec<&str> = needed.0.difference(&self.0).map(GresName::as_str).collect();
        names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(raw: &str) -> GresTypes {
        GresTypes::from_relation_value(raw).unwrap()
    }

    #[test]
    fn round_trips_in_name_order() {
        assert_eq!(types("shard,gpu").to_relation_value(), "gpu,shard");
        assert_eq!(types("").to_relation_value(), "");
    }

    #[test]
    fn refuses_what_is_not_a_gres_name() {
        let e = GresTypes::from_relation_value("gpu,Shard;x").unwrap_err();
        assert!(e.to_string().contains("gres_types"), "{e}");
    }

    #[test]
    fn missing_names_what_the_node_needs_and_slurmctld_lacks() {
        assert_eq!(types("gpu").missing(&types("gpu,shard")), "shard");
        assert_eq!(types("gpu,mps,shard").missing(&types("gpu,shard")), "");
    }
}
