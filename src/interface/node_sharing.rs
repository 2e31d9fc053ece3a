//! Ingest rules for the shared GRES (`shard`, `mps`) a `node` record may carry next to its
//! GPUs (the slurmd `gpu-sharing` option; rules from Slurm's source, `docs/slurm-config.md`):
//! - each shared record is untyped (Slurm copies Type from the GPU), names exactly one whole
//!   GPU's device file (`File=`, one of the record's `gpu` files), at most once, with
//!   `Count` from 1 to [`MAX_SHARES_PER_GPU`], and nothing else;
//! - a node carries one shared GRES name at most: Slurm links a single shared GRES to a node's
//!   `gpu` (`alt_gres_ns` in `gres.c`), so `shard` and `mps` never share a node;
//! - `Gres=` lists it untyped (`shard:<total>`), without `no_consume`; that the total equals
//!   the records' counts is the renderer's consistency check, run by `NodeRecord::new`.

use super::{InterfaceError, NODE_KEY};
use crate::slurm::types::{DevicePath, GresDevices, MAX_SHARES_PER_GPU};
use crate::slurm::{GresLine, NodeConf};
use std::collections::BTreeSet;

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::invalid(NODE_KEY, field, reason)
}

/// Checks the shared records and `Gres=` items of one record (see the module doc).
pub(crate) fn check_shared(node: &NodeConf, gres: &[GresLine]) -> Result<(), InterfaceError> {
    let gpu_files: BTreeSet<&DevicePath> = gres
        .iter()
        .filter(|g| g.name == "gpu")
        .filter_map(GresLine::files)
        .flat_map(|f| f.files().iter())
        .collect();
    let mut names = BTreeSet::new();
    let mut shared_files = BTreeSet::new();
    for (i, g) in gres.iter().enumerate().filter(|(_, g)| g.name.is_shared()) {
        let field = format!("gres[{i}]");
        let name = &g.name;
        names.insert(name.as_str());
        if g.gres_type.is_some() {
            return Err(invalid(field, format!("{name} records carry no Type")));
        }
        if g.cores.is_some() || g.links.is_some() || !g.flags.is_empty() {
            return Err(invalid(
                field,
                format!("{name} records carry only Name, File and Count"),
            ));
        }
        let file = match &g.devices {
            Some(GresDevices::File(f)) if f.len() == 1 => &f.files()[0],
            _ => {
                return Err(invalid(
                    field,
                    format!("a {name} record names exactly one GPU device file (File=)"),
                ));
            }
        };
        if !gpu_files.contains(file) {
            return Err(invalid(
                field,
                format!("{name} on {file}, which is not one of this node's whole GPUs"),
            ));
        }
        if !shared_files.insert(file) {
            return Err(invalid(field, format!("{file} is shared twice")));
        }
        match g.count {
            Some(c) if (1..=MAX_SHARES_PER_GPU).contains(&c) => {}
            _ => {
                return Err(invalid(
                    field,
                    format!("{name} Count must be from 1 to {MAX_SHARES_PER_GPU} per GPU"),
                ));
            }
        }
    }
    for g in node.gres.iter().filter(|g| g.name.is_shared()) {
        names.insert(g.name.as_str());
        if g.gres_type.is_some() || g.no_consume || g.count == 0 {
            return Err(invalid(
                "node_parameters.Gres",
                format!("{g} is not {}:<count> with a count above 0", g.name),
            ));
        }
    }
    if names.len() > 1 {
        return Err(invalid(
            "gres",
            "shard and mps on one node (Slurm links one shared GRES to a node's GPUs)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::interface::NodeRecord;

    const SHARD: &str = r#"{"node_parameters":{"NodeName":"n","Gres":["gpu:tesla_t4:2","shard:8"]},"new_node":false,
      "gres":[{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"},
              {"Name":"shard","File":"/dev/nvidia0","Count":"4"},
              {"Name":"shard","File":"/dev/nvidia1","Count":"4"}]}"#;

    fn err(raw: &str) -> String {
        NodeRecord::from_relation_value(raw)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn carries_shard_and_mps() {
        let rec = NodeRecord::from_relation_value(SHARD).unwrap();
        assert_eq!(rec.gres_string(), "gpu:tesla_t4:2,shard:8");
        assert_eq!(
            NodeRecord::from_relation_value(&rec.to_relation_value()).unwrap(),
            rec
        );
        let mps = SHARD
            .replace("shard", "mps")
            .replace(r#""4""#, r#""100""#)
            .replace("mps:8", "mps:200");
        NodeRecord::from_relation_value(&mps).unwrap();
    }

    #[test]
    fn refuses_shared_records_slurm_would_not_take() {
        let cases = [
            (SHARD.replace("shard:8", "shard:7"), "Gres"),
            (SHARD.replace(r#","shard:8""#, ""), "Gres"),
            (
                SHARD.replace(
                    r#""File":"/dev/nvidia1","Count""#,
                    r#""File":"/dev/nvidia3","Count""#,
                ),
                "not one of this node's whole GPUs",
            ),
            (
                SHARD.replace(
                    r#""File":"/dev/nvidia1","Count""#,
                    r#""File":"/dev/nvidia0","Count""#,
                ),
                "shared twice",
            ),
            (
                SHARD.replace(
                    r#""File":"/dev/nvidia1","Count""#,
                    r#""File":"/dev/nvidia[0-1]","Count""#,
                ),
                "exactly one GPU device file",
            ),
            (
                SHARD.replace(
                    r#"{"Name":"shard","File":"/dev/nvidia1","Count":"4"}"#,
                    r#"{"Name":"shard","Count":"4"}"#,
                ),
                "exactly one GPU device file",
            ),
            (
                SHARD.replace(r#""Count":"4"}]"#, r#""Count":"0"}]"#),
                "Count must be from 1",
            ),
            (
                SHARD.replace(r#""Count":"4"}]"#, r#""Count":"99999999999999"}]"#),
                "Count must be from 1",
            ),
            (
                SHARD.replace(
                    r#"{"Name":"shard","File":"/dev/nvidia1""#,
                    r#"{"Name":"shard","Type":"tesla_t4","File":"/dev/nvidia1""#,
                ),
                "no Type",
            ),
            (
                SHARD.replace(
                    r#"{"Name":"shard","File":"/dev/nvidia1","Count":"4"}"#,
                    r#"{"Name":"mps","File":"/dev/nvidia1","Count":"4"}"#,
                ),
                "shard and mps",
            ),
            (SHARD.replace("shard:8", "shard:t4:8"), "Gres"),
            (
                SHARD.replace(
                    r#""Name":"shard","File":"/dev/nvidia0""#,
                    r#""Name":"fpga","File":"/dev/nvidia0""#,
                ),
                "only gpu, shard and mps",
            ),
        ];
        for (raw, want) in cases {
            let e = err(&raw);
            assert!(e.contains(want), "want {want:?} in {e}");
        }
    }
}
