//! The unit-bag `node` record (reference `slurm-gres.md` §5.3), slurmd → slurmctld:
//!
//! ```json
//! {"node_parameters": {"NodeName": "node1", "CPUs": "16", …, "Gres": ["gpu:tesla_t4:2"], "MemSpecLimit": "1024"},
//!  "new_node": true,
//!  "gres": [{"Name": "gpu", "Type": "tesla_t4", "File": "/dev/nvidia[0-1]"}]}
//! ```
//!
//! `gres` entries may also carry our optional `MultipleFiles` (MIG, instead of `File`), `Cores`
//! and `Links`. `gres` and `Gres` are left out when the node has no GPUs.
//!
//! The record is (de)serialised with serde derive into the slurm vocabulary: the node line is a
//! [`NodeConf`] (values parsed by the slurm.conf parser's own rules), the `gres` entries are
//! [`GresLine`]s and `Gres` items [`crate::slurm::GresSpec`]s. [`NodeRecord::new`] (which
//! deserialisation goes through) also runs the renderer's per-node checks on the record alone,
//! so a record that exists renders: the controller rejects a unit at ingest or writes its node,
//! and the slurmd charm checks its own record the same way before publishing it.

use super::{InterfaceError, NODE_KEY};
use crate::slurm::keys::{NODE_HARDWARE_KEYS, concat_keys};
use crate::slurm::types::{GresDevices, NodeName};
use crate::slurm::{GresConf, GresLine, GresSpec, NodeConf, NodeRecords, SlurmConf};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Node parameters a record may carry besides `NodeName` and `Gres`, in the order they are
/// written on a slurm.conf node line: the hardware `slurmd -C` reports
/// ([`NODE_HARDWARE_KEYS`], first), then what an operator may set with `node-config`.
pub const NODE_PARAMETER_KEYS: &[&str] = &concat_keys::<12>(
    &NODE_HARDWARE_KEYS,
    &[
        "MemSpecLimit",
        "TmpDisk",
        "Weight",
        "CoreSpecCount",
        "CpuSpecList",
        "Features",
    ],
);

/// The whole `node` record. Built only by [`NodeRecord::new`] or deserialisation (which calls
/// it), so every record that exists renders.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "NodeRecordWire", into = "NodeRecordWire")]
pub struct NodeRecord {
    node: NodeConf,
    new_node: bool,
    /// Shared: the controller parses one list per distinct `gres` value ([`RecordsMemo`]).
    gres: NodeRecords,
}

/// The JSON layout of [`NodeRecord`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeRecordWire {
    node_parameters: NodeParametersWire,
    new_node: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    gres: Vec<GresLine>,
}

/// The JSON layout of `node_parameters`: values as strings, `Gres` as a list.
#[derive(Serialize, Deserialize)]
struct NodeParametersWire {
    #[serde(rename = "NodeName")]
    node_name: NodeName,
    #[serde(rename = "Gres", default, skip_serializing_if = "Vec::is_empty")]
    gres: Vec<GresSpec>,
    #[serde(flatten)]
    params: BTreeMap<String, String>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::invalid(NODE_KEY, field, reason)
}

/// The node line from `node_parameters`, each value parsed by slurm.conf's rules.
fn node_from_parameters(p: NodeParametersWire) -> Result<NodeConf, InterfaceError> {
    let mut node = NodeConf::new(p.node_name);
    for (k, v) in &p.params {
        if !NODE_PARAMETER_KEYS.contains(&k.as_str()) {
            return Err(invalid(
                format!("node_parameters.{k}"),
                "not a node parameter this charm passes on",
            ));
        }
        node.set(k, v)
            .map_err(|e| invalid(format!("node_parameters.{k}"), e.to_string()))?;
    }
    node.gres = p.gres;
    // serde grows a list it reads (room for 4 from the first push): one shape per node at
    // 10,000 distinct nodes held 2.5 MB of empty slots
    node.gres.shrink_to_fit();
    Ok(node)
}

impl TryFrom<NodeRecordWire> for NodeRecord {
    type Error = InterfaceError;
    fn try_from(wire: NodeRecordWire) -> Result<Self, InterfaceError> {
        let node = node_from_parameters(wire.node_parameters)?;
        NodeRecord::new(node, wire.new_node, wire.gres)
    }
}

/// [`NodeRecordWire`] without `gres`: the node part of a stored shape
/// ([`NodeRecord::to_shape_parts`]); a part that carries a list of its own does not read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeLineWire {
    node_parameters: NodeParametersWire,
    new_node: bool,
}

/// gres.conf record lists already parsed, by their JSON text (and by content): the controller
/// reads thousands of node shapes that differ in their node line (`RealMemory`) but carry the
/// same GPU records; each distinct list is parsed and held once
/// ([`NodeRecord::from_shape_parts_memo`]).
#[derive(Debug, Default)]
pub struct RecordsMemo {
    by_text: HashMap<Box<str>, NodeRecords>,
    by_content: HashSet<NodeRecords>,
    /// Lists (held above, so their addresses stay theirs) that passed the checks on the
    /// records alone as part of a record.
    checked: HashSet<*const Vec<GresLine>>,
}

impl RecordsMemo {
    /// The list for `text`, parsed unless seen before, and whether it passed the checks on
    /// the records alone; `None` when it does not parse.
    fn records(&mut self, text: &str) -> Option<(NodeRecords, bool)> {
        let list = self.list(text)?;
        let checked = self.checked.contains(&Arc::as_ptr(&list));
        Some((list, checked))
    }

    fn list(&mut self, text: &str) -> Option<NodeRecords> {
        if let Some(list) = self.by_text.get(text) {
            return Some(Arc::clone(list));
        }
        let list: Vec<GresLine> = serde_json::from_str(text).ok()?;
        let list = match self.by_content.get(&list) {
            Some(shared) => Arc::clone(shared),
            None => {
                let list = Arc::new(list);
                self.by_content.insert(Arc::clone(&list));
                list
            }
        };
        self.by_text.insert(text.into(), Arc::clone(&list));
        Some(list)
    }
}

impl From<NodeRecord> for NodeRecordWire {
    fn from(r: NodeRecord) -> Self {
        let params = r
            .parameters()
            .into_iter()
            .filter(|(k, _)| *k != "NodeName" && *k != "Gres")
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        NodeRecordWire {
            node_parameters: NodeParametersWire {
                node_name: r.node.name,
                gres: r.node.gres,
                params,
            },
            new_node: r.new_node,
            gres: Arc::unwrap_or_clone(r.gres),
        }
    }
}

/// Runs the renderer's checks on a cluster of this node alone; the node is moved into that
/// cluster and back and the records shared, not copied (a record's core lists and links are
/// most of it).
fn check_renders(
    node: NodeConf,
    gres: &NodeRecords,
    records_checked: bool,
) -> Result<NodeConf, InterfaceError> {
    // The charm's own global defaults cannot fail a check: only `GresTypes` (set below) and
    // the required names matter to a node's checks.
    let mut conf = SlurmConf {
        cluster_name: "ingest".to_string(),
        slurmctld_hosts: vec!["ingest".to_string()],
        ..SlurmConf::default()
    };
    let mut cluster = GresConf::default();
    if !gres.is_empty() {
        cluster.nodes.insert(node.name.clone(), Arc::clone(gres));
    }
    conf.nodes.push(node);
    conf.set_gres_types_from_nodes();
    let field = "node_parameters";
    crate::slurm::check_slurm_conf(&conf).map_err(|e| invalid(field, e.to_string()))?;
    if !records_checked {
        crate::slurm::check_gres_conf(&cluster).map_err(|e| invalid("gres", e.to_string()))?;
    }
    crate::slurm::check_consistency(&conf, &cluster).map_err(|e| {
        invalid(
            "node_parameters.Gres",
            format!("{e} (Gres must match the gres records; Slurm would mark the node INVALID)"),
        )
    })?;
    conf.nodes
        .pop()
        .ok_or_else(|| invalid(field, "the checked node went missing"))
}

impl NodeRecord {
    /// Checks a node line and its GRES records together and makes the record: only the
    /// parameters the relation carries, GPU records (`Name=gpu`, typed, with device files) and
    /// shared records on them (`shard`/`mps`, see `interface::node_sharing`), `Gres` agreeing
    /// with the records (same types, each count equal to its devices), no device file twice, and every check the renderer makes on one node
    /// ([`crate::slurm::check_slurm_conf`], [`crate::slurm::check_gres_conf`],
    /// [`crate::slurm::check_consistency`] on a cluster of this node alone).
    pub fn new(
        node: NodeConf,
        new_node: bool,
        gres: Vec<GresLine>,
    ) -> Result<Self, InterfaceError> {
        Self::with_records(node, new_node, Arc::new(gres), false)
    }

    /// [`NodeRecord::new`] with records shared with other records. `records_checked`: this
    /// list already passed the checks on the records alone (as part of another record, see
    /// [`RecordsMemo`]), which are then not run again; the checks of the node line and of the
    /// line against the records always run.
    fn with_records(
        node: NodeConf,
        new_node: bool,
        gres: NodeRecords,
        records_checked: bool,
    ) -> Result<Self, InterfaceError> {
        if node.state.is_some() || node.reason.is_some() {
            return Err(invalid(
                "node_parameters",
                "State and Reason are set by the controller",
            ));
        }
        super::node_sharing::check_shared(&node, &gres)?;
        let own_records = if records_checked { &[][..] } else { &gres[..] };
        for (i, g) in own_records.iter().enumerate() {
            let field = || format!("gres[{i}]");
            if g.name.is_shared() {
                continue;
            }
            if g.name != "gpu" {
                return Err(invalid(
                    field(),
                    format!("Name {}: only gpu, shard and mps GRES are carried", g.name),
                ));
            }
            if g.gres_type.is_none() {
                return Err(invalid(
                    field(),
                    "Type is missing (untyped GPUs are not carried)",
                ));
            }
            if g.devices.is_none() {
                return Err(invalid(field(), "needs File or MultipleFiles"));
            }
            if g.count.is_some() || !g.flags.is_empty() {
                return Err(invalid(field(), "Count and Flags are not carried"));
            }
        }
        for g in node.gres.iter().filter(|g| !g.name.is_shared()) {
            if g.name != "gpu" || g.gres_type.is_none() || g.no_consume || g.count == 0 {
                return Err(invalid(
                    "node_parameters.Gres",
                    format!("{g} is not gpu:<type>:<count> with a count above 0"),
                ));
            }
        }
        // A File= device belongs to one record; MIG instances share their parent GPU's file
        // but not their capability files, so a MultipleFiles set may not repeat.
        let mut files = std::collections::BTreeSet::new();
        let mut sets = std::collections::BTreeSet::new();
        for (i, g) in own_records
            .iter()
            .enumerate()
            .filter(|(_, g)| !g.name.is_shared())
        {
            let twice = match &g.devices {
                Some(GresDevices::File(f)) => f
                    .files()
                    .iter()
                    .find(|p| !files.insert(*p))
                    .map(|p| p.to_string()),
                Some(GresDevices::Multiple(m)) => (!sets.insert(m)).then(|| m.to_string()),
                None => None,
            };
            if let Some(f) = twice {
                return Err(invalid(format!("gres[{i}]"), format!("{f} appears twice")));
            }
        }
        let node = check_renders(node, &gres, records_checked)?;
        Ok(NodeRecord {
            node,
            new_node,
            gres,
        })
    }

    /// The slurm.conf node (name, parameters, `Gres=`).
    pub fn node(&self) -> &NodeConf {
        &self.node
    }

    /// `NodeName`.
    pub fn node_name(&self) -> &NodeName {
        &self.node.name
    }

    /// True until the operator runs `node-configured`: the node stays in `DownNodes`.
    pub fn new_node(&self) -> bool {
        self.new_node
    }

    /// The gres.conf records for the node (empty: no GPUs).
    pub fn gres(&self) -> &[GresLine] {
        &self.gres
    }

    /// The checked node line and its gres.conf records, moved out (the controller keeps them
    /// per shape without copying the records: a shape's core lists and links are kilobytes).
    pub fn into_parts(self) -> (NodeConf, NodeRecords) {
        (self.node, self.gres)
    }

    /// The same record under another name and `new_node` flag (the controller stores one
    /// shape per distinct hardware and fills in each unit's name).
    pub fn renamed(&self, name: NodeName, new_node: bool) -> NodeRecord {
        let mut out = self.clone();
        out.node.name = name;
        out.new_node = new_node;
        out
    }

    /// The node line's parameters in slurm.conf order, `NodeName` first and `Gres` after
    /// `RealMemory` (the reference layout), as `(key, value)` pairs.
    pub fn parameters(&self) -> Vec<(&'static str, String)> {
        let n = &self.node;
        let mut out = vec![("NodeName", n.name.to_string())];
        let extra = |k: &str| {
            n.extra
                .iter()
                .find(|e| e.key() == k)
                .map(|e| e.value().to_owned())
        };
        for key in NODE_PARAMETER_KEYS {
            let value = match *key {
                "CPUs" => n.cpus.map(|v| v.to_string()),
                "Boards" => n.boards.map(|v| v.to_string()),
                "SocketsPerBoard" => n.sockets_per_board.map(|v| v.to_string()),
                "CoresPerSocket" => n.cores_per_socket.map(|v| v.to_string()),
                "ThreadsPerCore" => n.threads_per_core.map(|v| v.to_string()),
                "RealMemory" => n.real_memory.map(|v| v.to_string()),
                "MemSpecLimit" => n.mem_spec_limit.map(|v| v.to_string()),
                "Weight" => n.weight.map(|v| v.to_string()),
                "Features" => (!n.features.is_empty()).then(|| n.features.join(",")),
                other => extra(other),
            };
            if let Some(v) = value {
                out.push((key, v));
            }
            if *key == "RealMemory" && !n.gres.is_empty() {
                out.push(("Gres", self.gres_string()));
            }
        }
        out
    }

    /// `Gres` joined as Slurm writes it: `gpu:a:2,gpu:b:1`.
    pub fn gres_string(&self) -> String {
        let items: Vec<String> = self.node.gres.iter().map(ToString::to_string).collect();
        items.join(",")
    }

    /// The relation value: compact JSON (keys sorted, so equal records give equal strings).
    pub fn to_relation_value(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses and validates a relation value.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        super::from_relation_json(NODE_KEY, raw)
    }

    /// The record split for storage: its relation value without the `gres` list, and the
    /// list's JSON (`None` without records). The controller keeps one copy of each distinct
    /// list: 10,000 nodes that differ in `RealMemory` but carry the same GPUs store their
    /// kilobyte of GPU records once, not 10,000 times.
    pub fn to_shape_parts(&self) -> (String, Option<String>) {
        let mut wire = NodeRecordWire::from(self.clone());
        let gres = std::mem::take(&mut wire.gres);
        let node = serde_json::to_string(&wire).unwrap_or_default();
        let gres = (!gres.is_empty()).then(|| serde_json::to_string(&gres).unwrap_or_default());
        (node, gres)
    }

    /// A record from the parts of [`NodeRecord::to_shape_parts`], the list looked up in `memo`
    /// by its text (parsed only when new) and shared: the same record, the same checks. Anything
    /// that does not read this way is parsed again as the joined record by
    /// [`NodeRecord::from_relation_value`], so a refusal reads exactly as there.
    pub fn from_shape_parts_memo(
        node: &str,
        gres: Option<&str>,
        memo: &mut RecordsMemo,
    ) -> Result<Self, InterfaceError> {
        let mut quick = || -> Option<Result<Self, InterfaceError>> {
            let wire: NodeLineWire = serde_json::from_str(node).ok()?;
            let (list, checked) = match gres {
                Some(text) => memo.records(text)?,
                None => (Arc::default(), false),
            };
            let line = node_from_parameters(wire.node_parameters).ok()?;
            let record = Self::with_records(line, wire.new_node, list, checked);
            if let Ok(r) = &record {
                memo.checked.insert(Arc::as_ptr(&r.gres));
            }
            Some(record)
        };
        match quick() {
            Some(Ok(record)) => Ok(record),
            _ => Self::from_relation_value(&join_shape_parts(node, gres)),
        }
    }
}

/// The relation value of a record stored as [`NodeRecord::to_shape_parts`]: the list put back
/// as the object's `gres` member.
pub fn join_shape_parts(node: &str, gres: Option<&str>) -> String {
    match (gres, node.strip_prefix('{')) {
        (Some(list), Some(rest)) => {
            let sep = if rest.trim_start().starts_with('}') {
                ""
            } else {
                ","
            };
            format!("{{\"gres\":{list}{sep}{rest}")
        }
        _ => node.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFERENCE: &str = r#"{"node_parameters": {"NodeName": "node1", "CPUs": "16", "Boards": "1",
   "SocketsPerBoard": "1", "CoresPerSocket": "8", "ThreadsPerCore": "2", "RealMemory": "31848",
   "Gres": ["gpu:tesla_t4:2", "gpu:l40s:2"], "MemSpecLimit": "1024"},
 "new_node": true,
 "gres": [{"Name": "gpu", "Type": "tesla_t4", "File": "/dev/nvidia[0-1]"},
          {"Name": "gpu", "Type": "l40s", "File": "/dev/nvidia[2-3]"}]}"#;

    #[test]
    fn a_record_splits_into_shape_parts_and_back() {
        let rec = NodeRecord::from_relation_value(REFERENCE).unwrap();
        let (node, gres) = rec.to_shape_parts();
        assert!(!node.contains("\"gres\""), "{node}");
        let gres = gres.unwrap();
        assert!(gres.starts_with('[') && gres.contains("tesla_t4"), "{gres}");
        let mut memo = RecordsMemo::default();
        let back = NodeRecord::from_shape_parts_memo(&node, Some(&gres), &mut memo).unwrap();
        assert_eq!(back, rec);
        assert_eq!(
            NodeRecord::from_relation_value(&join_shape_parts(&node, Some(&gres))).unwrap(),
            rec
        );
        // a list that does not belong (more records than Gres= counts) is refused as the
        // joined record is, with the same message
        let bad = gres.replace(
            ']',
            r#",{"Name":"gpu","Type":"l40s","File":"/dev/nvidia9"}]"#,
        );
        let err = NodeRecord::from_shape_parts_memo(&node, Some(&bad), &mut memo).unwrap_err();
        let whole =
            NodeRecord::from_relation_value(&join_shape_parts(&node, Some(&bad))).unwrap_err();
        assert_eq!(err.to_string(), whole.to_string());
        // a node part that carries a list itself is not a stored shape
        assert!(NodeRecord::from_shape_parts_memo(REFERENCE, Some(&gres), &mut memo).is_err());
    }

    #[test]
    fn parses_the_reference_record_and_round_trips() {
        let rec = NodeRecord::from_relation_value(REFERENCE).unwrap();
        assert_eq!(rec.node_name(), "node1");
        assert_eq!(rec.node().gres.len(), 2);
        assert!(rec.new_node());
        let again = NodeRecord::from_relation_value(&rec.to_relation_value()).unwrap();
        assert_eq!(again, rec);
        let line: Vec<String> = rec
            .parameters()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(
            line.join(" "),
            "NodeName=node1 CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=31848 Gres=gpu:tesla_t4:2,gpu:l40s:2 MemSpecLimit=1024"
        );
    }

    #[test]
    fn no_gpus_means_no_gres_keys() {
        let rec = NodeRecord::new(NodeConf::new("n".parse().unwrap()), false, vec![]).unwrap();
        assert_eq!(
            rec.to_relation_value(),
            r#"{"node_parameters":{"NodeName":"n"},"new_node":false}"#
        );
    }

    fn err(raw: &str) -> String {
        NodeRecord::from_relation_value(raw)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn refuses_bad_input_with_the_reason() {
        assert!(err("{not json").contains("not valid JSON"));
        assert!(err("[]").contains("expected"), "{}", err("[]"));
        let wrong_type = REFERENCE.replace(r#""CPUs": "16""#, r#""CPUs": 16"#);
        assert!(
            err(&wrong_type).contains("expected a string"),
            "{}",
            err(&wrong_type)
        );
        let gres_string = REFERENCE.replace(
            r#"["gpu:tesla_t4:2", "gpu:l40s:2"]"#,
            r#""gpu:tesla_t4:2,gpu:l40s:2""#,
        );
        assert!(
            err(&gres_string).contains("expected a sequence"),
            "{}",
            err(&gres_string)
        );
        let injected = REFERENCE.replace(
            r#""Type": "tesla_t4""#,
            r#""Type": "t4\nSlurmctldProlog=/tmp/x""#,
        );
        let e = err(&injected);
        assert!(e.contains("GRES type") && e.contains("\\n"), "{e}");
        let space = REFERENCE.replace(r#""RealMemory": "31848""#, r#""RealMemory": "318 48""#);
        assert!(err(&space).contains("RealMemory"));
        let hash = REFERENCE.replace(r#""NodeName": "node1""#, r#""NodeName": "node1#x""#);
        assert!(err(&hash).contains("NodeName"));
        let unknown = REFERENCE.replace(r#""Boards": "1""#, r#""SlurmctldProlog": "/tmp/x""#);
        assert!(err(&unknown).contains("SlurmctldProlog"));
        let eq = REFERENCE.replace(r#""Boards": "1""#, r#""Features": "a=b""#);
        assert!(err(&eq).contains("Features"));
        let new_node = REFERENCE.replace(r#""new_node": true"#, r#""new_node": "true""#);
        assert!(err(&new_node).contains("new_node") || err(&new_node).contains("boolean"));
        let bad_file = REFERENCE.replace("/dev/nvidia[2-3]", "/etc/../shadow");
        assert!(err(&bad_file).contains("device file"), "{}", err(&bad_file));
    }

    #[test]
    fn gres_must_match_the_records() {
        let fewer = REFERENCE.replace("/dev/nvidia[2-3]", "/dev/nvidia2");
        assert!(err(&fewer).contains("Gres"), "{}", err(&fewer));
        let missing = REFERENCE.replace(r#", "gpu:l40s:2""#, "");
        assert!(err(&missing).contains("Gres"), "{}", err(&missing));
        let dup_file = REFERENCE.replace("/dev/nvidia[2-3]", "/dev/nvidia[0-1]");
        assert!(err(&dup_file).contains("twice"), "{}", err(&dup_file));
    }

    #[test]
    fn the_memo_reads_records_as_the_plain_parse_and_shares_their_lists() {
        let mut memo = RecordsMemo::default();
        let other = REFERENCE
            .replace(r#""NodeName": "node1""#, r#""NodeName": "node2""#)
            .replace(r#""RealMemory": "31848""#, r#""RealMemory": "31000""#);
        let parts = |raw: &str| {
            NodeRecord::from_relation_value(raw)
                .unwrap()
                .to_shape_parts()
        };
        let read = |(node, gres): &(String, Option<String>), memo: &mut RecordsMemo| {
            NodeRecord::from_shape_parts_memo(node, gres.as_deref(), memo)
        };
        let (pa, pb) = (parts(REFERENCE), parts(&other));
        let a = read(&pa, &mut memo).unwrap();
        let b = read(&pb, &mut memo).unwrap();
        assert_eq!(a, NodeRecord::from_relation_value(REFERENCE).unwrap());
        assert_eq!(b, NodeRecord::from_relation_value(&other).unwrap());
        assert!(Arc::ptr_eq(&a.gres, &b.gres), "one list for both shapes");
        // The same content written differently shares the list too.
        let spaced = (
            pb.0.clone(),
            pb.1.as_ref().map(|g| g.replace("\":\"", "\": \"")),
        );
        assert_ne!(spaced.1, pb.1);
        let c = read(&spaced, &mut memo).unwrap();
        assert!(Arc::ptr_eq(&a.gres, &c.gres));
        // Refusals read exactly as the plain parse of the joined record's, whether the list
        // is new or known.
        let (node, gres) = (pa.0.as_str(), pa.1.clone().unwrap());
        let with_node = |n: String| (n, Some(gres.clone()));
        for bad in [
            (
                node.to_owned(),
                Some(gres.replace("/dev/nvidia[2-3]", "/dev/nvidia2")),
            ),
            with_node(node.replace(r#","gpu:l40s:2""#, "")),
            with_node(node.replace(r#""CPUs":"16""#, r#""CPUs":16"#)),
            (
                node.to_owned(),
                Some(gres.replace(r#""Type":"tesla_t4""#, r#""Type":"Tesla T4""#)),
            ),
            with_node(node.replace(r#""new_node":true"#, r#""new_node":true,"x":1"#)),
            with_node(node.replace(r#""RealMemory":"31848""#, r#""RealMemory":"318 48""#)),
            with_node(format!("{node} x")),
            with_node("{not json".to_string()),
        ] {
            assert!(
                bad.0 != node || bad.1.as_deref() != Some(gres.as_str()),
                "the edit took"
            );
            let memo_err = read(&bad, &mut memo).unwrap_err();
            let joined = join_shape_parts(&bad.0, bad.1.as_deref());
            assert_eq!(memo_err.to_string(), err(&joined), "{joined}");
        }
    }

    #[test]
    fn underscore_node_names_are_carried() {
        let raw = REFERENCE.replace(r#""NodeName": "node1""#, r#""NodeName": "gpu_node_2""#);
        assert_eq!(
            NodeRecord::from_relation_value(&raw).unwrap().node_name(),
            "gpu_node_2"
        );
    }

    #[test]
    fn mig_records() {
        let raw = r#"{"node_parameters":{"NodeName":"n","Gres":["gpu:nvidia_a100_1g.5gb:2"]},"new_node":false,
          "gres":[{"Name":"gpu","Type":"nvidia_a100_1g.5gb","MultipleFiles":"/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22"},
                  {"Name":"gpu","Type":"nvidia_a100_1g.5gb","MultipleFiles":"/dev/nvidia0,/dev/nvidia-caps/nvidia-cap30,/dev/nvidia-caps/nvidia-cap31"}]}"#;
        let rec = NodeRecord::from_relation_value(raw).unwrap();
        assert_eq!(rec.gres().len(), 2);
        let both = raw.replacen(
            r#""MultipleFiles""#,
            r#""File":"/dev/nvidia1","MultipleFiles""#,
            1,
        );
        assert!(err(&both).contains("mutually exclusive"), "{}", err(&both));
        let same = raw.replace(
            "cap30,/dev/nvidia-caps/nvidia-cap31",
            "cap21,/dev/nvidia-caps/nvidia-cap22",
        );
        assert!(err(&same).contains("twice"), "{}", err(&same));
    }
}
