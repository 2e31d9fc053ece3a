//! Node facts: the `slurmd -C` parser and the `node` record builder.

use crate::gpu::{GresFiles, GresRecord};
use crate::interface::InterfaceError;
use crate::interface::node::{GPU, GresEntry, GresSpec, NodeParameters, NodeRecord};
use crate::interface::token::{check_node_name, check_number};
use std::collections::BTreeMap;

/// Keys taken from `slurmd -C`; any other token on the line is ignored.
pub const FACT_KEYS: &[&str] = &[
    "CPUs",
    "Boards",
    "SocketsPerBoard",
    "CoresPerSocket",
    "ThreadsPerCore",
    "RealMemory",
];

/// What `slurmd -C` says about this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFacts {
    /// `NodeName` (short host name).
    pub node_name: String,
    /// The [`FACT_KEYS`] found, numeric strings.
    pub params: BTreeMap<String, String>,
}

/// Parses `slurmd -C` output: only the first line that starts with `NodeName=`; tokens split on
/// whitespace and then on the first `=`; unknown tokens and other lines are ignored (24.11+ adds
/// `Gres=`, `Parameters=` and "Found …" lines). `NodeName` and `RealMemory` are required.
pub fn parse_slurmd_c(output: &str) -> Result<NodeFacts, String> {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("NodeName="))
        .ok_or_else(|| "`slurmd -C` printed no NodeName= line".to_string())?;
    let mut node_name = None;
    let mut params = BTreeMap::new();
    for token in line.split_whitespace() {
        let Some((k, v)) = token.split_once('=') else {
            continue;
        };
        if k == "NodeName" {
            check_node_name(v).map_err(|e| format!("`slurmd -C` NodeName: {e}"))?;
            node_name = Some(v.to_string());
        } else if FACT_KEYS.contains(&k) {
            check_number(v).map_err(|e| format!("`slurmd -C` {k}: {e}"))?;
            params.insert(k.to_string(), v.to_string());
        }
    }
    let node_name = node_name.ok_or("`slurmd -C` NodeName is missing")?;
    if !params.contains_key("RealMemory") {
        return Err("`slurmd -C` printed no RealMemory".into());
    }
    Ok(NodeFacts { node_name, params })
}

/// `MemSpecLimit` for a node: `min(1024, RealMemory / 2)` MB, so it is always below RealMemory.
pub fn mem_spec_limit(real_memory: u64) -> u64 {
    (real_memory / 2).min(1024)
}

/// Converts the GPU inventory's records into relation `gres` entries.
pub fn gres_entries(records: &[GresRecord]) -> Vec<GresEntry> {
    records
        .iter()
        .map(|r| {
            let (file, multiple_files) = match &r.files {
                GresFiles::Devices(_) => (Some(r.file_spec()), None),
                GresFiles::Multiple(_) => (None, Some(r.file_spec())),
            };
            GresEntry {
                name: GPU.into(),
                type_name: r.type_name.clone(),
                file,
                multiple_files,
                cores: r.cores.clone(),
                links: r.links.clone(),
            }
        })
        .collect()
}

/// `Gres=` elements for the entries: one `gpu:<type>:<count>` per type, in first-seen order.
pub fn gres_specs(entries: &[GresEntry]) -> Result<Vec<GresSpec>, String> {
    let mut out: Vec<GresSpec> = Vec::new();
    for e in entries {
        let n = e.count()?;
        match out.iter_mut().find(|s| s.type_name == e.type_name) {
            Some(s) => s.count += n,
            None => out.push(GresSpec {
                name: GPU.into(),
                type_name: e.type_name.clone(),
                count: n,
            }),
        }
    }
    Ok(out)
}

/// Operator overrides from the `node-config` action, already validated. `NodeName` and `Gres`
/// are never overridden: they come from the host and its GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeOverrides {
    /// Parameters replacing detected ones (canonical keys).
    pub params: BTreeMap<String, String>,
}

/// Builds and validates this node's record: `slurmd -C` facts, then `Gres` (when GPUs exist),
/// then `MemSpecLimit`, then the overrides (which replace keys; `Gres` is always the detected
/// list, never a string).
pub fn build_node_record(
    facts: &NodeFacts,
    gres: Vec<GresEntry>,
    overrides: &NodeOverrides,
    new_node: bool,
) -> Result<NodeRecord, InterfaceError> {
    let mut params = facts.params.clone();
    let real = params
        .get("RealMemory")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    params.insert("MemSpecLimit".into(), mem_spec_limit(real).to_string());
    params.extend(overrides.params.clone());
    let specs = gres_specs(&gres).map_err(|reason| InterfaceError::Invalid {
        key: crate::interface::NODE_KEY,
        field: "gres".into(),
        reason,
    })?;
    let record = NodeRecord {
        node_parameters: NodeParameters {
            node_name: facts.node_name.clone(),
            params,
            gres: specs,
        },
        new_node,
        gres,
    };
    record.validate()?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C_2205: &str = "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105\nUpTime=0-00:08:47\n";

    #[test]
    fn parses_2205_output() {
        let f = parse_slurmd_c(C_2205).unwrap();
        assert_eq!(f.node_name, "vm");
        assert_eq!(f.params.len(), 6);
        assert_eq!(f.params["RealMemory"], "24105");
    }

    #[test]
    fn ignores_unknown_tokens_and_extra_lines() {
        let out = "Found gpu:tesla_t4:2 with Autodetect=nvml (Substring of gpu name may be used instead)\n\
                   NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=1000 Gres=gpu:tesla_t4:2 Parameters=x weird\n\
                   NodeName=n2 CPUs=1 RealMemory=5\nUpTime=1-00:00:00\n";
        let f = parse_slurmd_c(out).unwrap();
        assert_eq!(f.node_name, "n1");
        assert!(!f.params.contains_key("Gres"));
        assert_eq!(f.params["CPUs"], "8");
    }

    #[test]
    fn refuses_garbage() {
        assert!(parse_slurmd_c("UpTime=1\n").is_err());
        assert!(parse_slurmd_c("NodeName=a#b RealMemory=1").is_err());
        assert!(parse_slurmd_c("NodeName=a CPUs=x RealMemory=1").is_err());
        assert!(parse_slurmd_c("NodeName=a CPUs=1").is_err());
    }

    #[test]
    fn mem_spec_limit_stays_below_real_memory() {
        assert_eq!(mem_spec_limit(31848), 1024);
        assert_eq!(mem_spec_limit(1500), 750);
        assert_eq!(mem_spec_limit(1), 0);
    }

    fn t4() -> Vec<GresEntry> {
        gres_entries(&[
            GresRecord {
                type_name: "tesla_t4".into(),
                files: GresFiles::Devices(vec![0, 1]),
                cores: Some("0-1".into()),
                links: None,
            },
            GresRecord {
                type_name: "nvidia_l40s".into(),
                files: GresFiles::Devices(vec![3]),
                cores: None,
                links: None,
            },
        ])
    }

    #[test]
    fn builds_the_reference_shape() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let rec = build_node_record(&facts, t4(), &NodeOverrides::default(), true).unwrap();
        let json = rec.to_json();
        assert_eq!(
            json["node_parameters"]["Gres"],
            serde_json::json!(["gpu:tesla_t4:2", "gpu:nvidia_l40s:1"])
        );
        assert_eq!(json["node_parameters"]["MemSpecLimit"], "1024");
        assert_eq!(json["gres"][0]["File"], "/dev/nvidia[0-1]");
        assert_eq!(json["gres"][0]["Cores"], "0-1");
        assert_eq!(json["gres"][1]["File"], "/dev/nvidia3");
        assert_eq!(json["new_node"], true);
        let none = build_node_record(&facts, vec![], &NodeOverrides::default(), false).unwrap();
        assert!(none.to_json().get("gres").is_none());
        assert!(none.to_json()["node_parameters"].get("Gres").is_none());
    }

    #[test]
    fn overrides_replace_keys_and_keep_gres_the_detected_list() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let ov = NodeOverrides {
            params: BTreeMap::from([
                ("Weight".to_string(), "200".to_string()),
                ("RealMemory".to_string(), "20000".to_string()),
            ]),
        };
        let rec = build_node_record(&facts, t4(), &ov, true).unwrap();
        let json = rec.to_json();
        assert_eq!(json["node_parameters"]["Weight"], "200");
        assert_eq!(json["node_parameters"]["RealMemory"], "20000");
        assert_eq!(
            json["node_parameters"]["Gres"],
            serde_json::json!(["gpu:tesla_t4:2", "gpu:nvidia_l40s:1"])
        );
        let bad = NodeOverrides {
            params: BTreeMap::from([("CPUs".to_string(), "x".to_string())]),
        };
        assert!(build_node_record(&facts, t4(), &bad, true).is_err());
    }
}
