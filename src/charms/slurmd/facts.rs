//! Node facts: the `slurmd -C` parser and the `node` record builder.

use super::memory::MemoryHeadroom;
use crate::interface::NODE_KEY;
use crate::interface::node::NODE_PARAMETER_KEYS;
use crate::interface::{InterfaceError, NodeRecord, check_record_len};
use crate::slurm::types::{Feature, NodeName, VocabError};
use crate::slurm::{ConfigError, GresLine, GresSpec, NodeConf, NodeOverride, NodeSetting};
use std::collections::BTreeMap;

/// Keys taken from `slurmd -C` (the first six node parameters the relation carries); any
/// other token on the line is ignored.
pub const FACT_KEYS: &[&str] = NODE_PARAMETER_KEYS.split_at(6).0;

/// What `slurmd -C` says about this node: its slurm.conf node line, parsed once with the
/// slurm.conf parser's rules ([`NodeConf::set`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFacts {
    /// `NodeName` (short host name) and the [`FACT_KEYS`] found.
    pub node: NodeConf,
}

/// Why `slurmd -C` output gave no node facts. Kept typed (the vocabulary or configuration
/// error underneath is the source) so the unit's blocked status and the `node-config` action's
/// failure name the key and the rule Slurm would break, produced from one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlurmdCError {
    /// No line starts with `NodeName=` (slurmd is missing, broken or printed an error).
    #[error(
        "`slurmd -C` printed no NodeName= line (check that slurmd is installed: run `slurmd -C` on the unit)"
    )]
    NoNodeLine,
    /// The host name is not a `NodeName` Slurm accepts.
    #[error("`slurmd -C` NodeName: {0} (rename the host to a name Slurm accepts)")]
    NodeName(#[source] VocabError),
    /// The `NodeName=` line names no node.
    #[error("`slurmd -C` NodeName is missing (run `slurmd -C` on the unit to see what it prints)")]
    NoNodeName,
    /// A node parameter is not a value Slurm accepts (e.g. a 32-bit overflow).
    #[error("`slurmd -C` {key}: {source}")]
    Param {
        /// The parameter (one of [`FACT_KEYS`]).
        key: String,
        /// The rule it breaks.
        #[source]
        source: ConfigError,
    },
    /// No `RealMemory=` (Slurm needs it to schedule memory).
    #[error(
        "`slurmd -C` printed no RealMemory (run `slurmd -C` on the unit to see what it prints)"
    )]
    NoRealMemory,
}

/// Parses `slurmd -C` output: only the first line that starts with `NodeName=`; tokens split on
/// whitespace and then on the first `=`; unknown tokens and other lines are ignored (24.11+ adds
/// `Gres=`, `Parameters=` and "Found …" lines). `NodeName` and `RealMemory` are required.
pub fn parse_slurmd_c(output: &str) -> Result<NodeFacts, SlurmdCError> {
    let line = output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("NodeName="))
        .ok_or(SlurmdCError::NoNodeLine)?;
    let mut node_name = None;
    let mut params = Vec::new();
    for token in line.split_whitespace() {
        let Some((k, v)) = token.split_once('=') else {
            continue;
        };
        if k == "NodeName" {
            let name = NodeName::try_from(v).map_err(SlurmdCError::NodeName)?;
            node_name = Some(name);
        } else if FACT_KEYS.contains(&k) {
            params.push((k, v));
        }
    }
    let node_name = node_name.ok_or(SlurmdCError::NoNodeName)?;
    let mut node = NodeConf::new(node_name);
    for (k, v) in params {
        node.set(k, v).map_err(|source| SlurmdCError::Param {
            key: k.to_owned(),
            source,
        })?;
    }
    if node.real_memory.is_none() {
        return Err(SlurmdCError::NoRealMemory);
    }
    Ok(NodeFacts { node })
}

/// `MemSpecLimit` for a node of the published `RealMemory`: `min(1024, RealMemory / 2)` MB, so
/// it is always below RealMemory.
pub fn mem_spec_limit(real_memory: u64) -> u64 {
    (real_memory / 2).min(1024)
}

/// `Gres=` elements for the records: one `gpu:<type>:<count>` per type, in first-seen order,
/// then one untyped `<shard|mps>:<total shares>` per shared GRES name.
pub fn gres_specs(records: &[GresLine]) -> Vec<GresSpec> {
    let mut out: Vec<GresSpec> = Vec::new();
    let mut shared: Vec<GresSpec> = Vec::new();
    for r in records.iter().filter(|r| r.name.is_shared()) {
        let n = r.device_count();
        match shared.iter_mut().find(|s| s.name == r.name) {
            Some(s) => s.count = s.count.saturating_add(n),
            None => shared.push(GresSpec {
                name: r.name.clone(),
                gres_type: None,
                no_consume: false,
                count: n,
            }),
        }
    }
    for r in records.iter().filter(|r| !r.name.is_shared()) {
        let Some(t) = &r.gres_type else {
            continue;
        };
        let n = r.device_count();
        match out.iter_mut().find(|s| s.gres_type.as_ref() == Some(t)) {
            Some(s) => s.count += n,
            None => out.push(GresSpec::gpu(t.clone(), n)),
        }
    }
    out.extend(shared);
    out
}

/// Operator overrides from the `node-config` action, checked once where they come in (the
/// action's text, [`crate::slurm::parse_node_overrides`], or what it stored in unit state,
/// [`crate::slurm::node_override`]) and kept typed, so the node record is built from them
/// without checking a value again. Only the node parameters the relation carries
/// ([`NODE_PARAMETER_KEYS`]): never `NodeName` or `Gres`, which come from the host and its GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeOverrides {
    /// By CamelCase key; a key set again replaces the earlier value.
    params: BTreeMap<&'static str, NodeOverride>,
}

/// A checked node override for a key the relation does not carry (`State`, `Reason`, ...):
/// the controller would refuse the record, so the override is refused where it comes in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{key} is not a node parameter this charm passes on; node-config sets {}",
    NODE_PARAMETER_KEYS.join(", ")
)]
pub struct NotPassedOn {
    /// The key, in its CamelCase spelling.
    pub key: &'static str,
}

impl NodeOverrides {
    /// Adds a checked override, replacing the key's earlier value; refuses a key the relation
    /// does not carry.
    pub fn insert(&mut self, o: NodeOverride) -> Result<(), NotPassedOn> {
        let key = o.key();
        if !NODE_PARAMETER_KEYS.contains(&key) {
            return Err(NotPassedOn { key });
        }
        self.params.insert(key, o);
        Ok(())
    }

    /// Sets `later`'s overrides over these (a key in both takes `later`'s value): a
    /// `node-config` run adds to the overrides stored before.
    pub fn merge(&mut self, later: NodeOverrides) {
        self.params.extend(later.params);
    }

    /// The override of `key` (CamelCase), if set.
    pub fn get(&self, key: &str) -> Option<&NodeOverride> {
        self.params.get(key)
    }

    /// The overrides, by key.
    pub fn iter(&self) -> impl Iterator<Item = &NodeOverride> {
        self.params.values()
    }

    /// True when no override is set.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// These overrides with the GPU features merged into `Features`, as checked features (the
    /// operator's first, [`crate::gpu::merge_features`]); unchanged when there are none.
    pub fn with_gpu_features(mut self, gpu: &[Feature]) -> NodeOverrides {
        if gpu.is_empty() {
            return self;
        }
        let operator = match self.params.get("Features").map(NodeOverride::setting) {
            Some(NodeSetting::Features(f)) => f.as_slice(),
            _ => &[],
        };
        if let Some(o) = NodeOverride::features(crate::gpu::merge_features(operator, gpu)) {
            self.params.insert(o.key(), o);
        }
        self
    }
}

/// Builds this node's record and checks it with the controller's own ingest rules
/// ([`NodeRecord::new`]): `slurmd -C` facts with `RealMemory` less the `headroom`
/// ([`MemoryHeadroom::published`]), then `Gres` (when GPUs exist), then the overrides (checked
/// when they came in; they replace keys, and `Gres` is always the detected list), then
/// `MemSpecLimit` from the final `RealMemory` unless an override sets it. An `Err` is what the
/// controller would reject this unit for, or a record larger than it accepts
/// ([`crate::interface::MAX_RECORD_LEN`]): the charm refuses with it instead of publishing.
pub fn build_node_record(
    facts: &NodeFacts,
    gres: Vec<GresLine>,
    overrides: &NodeOverrides,
    headroom: MemoryHeadroom,
    new_node: bool,
) -> Result<NodeRecord, InterfaceError> {
    let mut node = facts.node.clone();
    if let Some(real) = node.real_memory {
        let published = headroom.published(real).map_err(|e| {
            InterfaceError::invalid(NODE_KEY, "node_parameters.RealMemory", e.to_string())
        })?;
        node.real_memory = Some(published);
    }
    for o in overrides.iter() {
        node.apply(o.setting().clone());
    }
    if overrides.get("MemSpecLimit").is_none() {
        node.mem_spec_limit = Some(mem_spec_limit(node.real_memory.unwrap_or(0)));
    }
    node.gres = gres_specs(&gres);
    let record = NodeRecord::new(node, new_node, gres)?;
    // `"new_node":false` is the longer form: the record must fit in both.
    let longest = if new_node {
        record
            .renamed(record.node_name().clone(), false)
            .to_relation_value()
    } else {
        record.to_relation_value()
    };
    check_record_len(NODE_KEY, &longest)?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C_2205: &str = "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105\nUpTime=0-00:08:47\n";

    #[test]
    fn parses_2205_output() {
        let f = parse_slurmd_c(C_2205).unwrap();
        assert_eq!(f.node.name, "vm");
        assert_eq!(f.node.cpus, Some(2));
        assert_eq!(f.node.real_memory, Some(24105));
    }

    #[test]
    fn ignores_unknown_tokens_and_extra_lines() {
        let out = "Found gpu:tesla_t4:2 with Autodetect=nvml (Substring of gpu name may be used instead)\n\
                   NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=1000 Gres=gpu:tesla_t4:2 Parameters=x weird\n\
                   NodeName=n2 CPUs=1 RealMemory=5\nUpTime=1-00:00:00\n";
        let f = parse_slurmd_c(out).unwrap();
        assert_eq!(f.node.name, "n1");
        assert!(f.node.gres.is_empty());
        assert_eq!(f.node.cpus, Some(8));
    }

    #[test]
    fn refuses_garbage() {
        assert_eq!(parse_slurmd_c("UpTime=1\n"), Err(SlurmdCError::NoNodeLine));
        assert!(matches!(
            parse_slurmd_c("NodeName=a#b RealMemory=1"),
            Err(SlurmdCError::NodeName(_))
        ));
        let bad_cpus = parse_slurmd_c("NodeName=a CPUs=x RealMemory=1").unwrap_err();
        assert!(
            matches!(&bad_cpus, SlurmdCError::Param { key, .. } if key == "CPUs"),
            "{bad_cpus}"
        );
        assert!(
            bad_cpus.to_string().starts_with("`slurmd -C` CPUs: "),
            "{bad_cpus}"
        );
        assert_eq!(
            parse_slurmd_c("NodeName=a CPUs=1"),
            Err(SlurmdCError::NoRealMemory)
        );
    }

    #[test]
    fn mem_spec_limit_stays_below_real_memory() {
        assert_eq!(mem_spec_limit(31848), 1024);
        assert_eq!(mem_spec_limit(1500), 750);
        assert_eq!(mem_spec_limit(1), 0);
    }

    fn t4() -> Vec<GresLine> {
        let mut t4 = GresLine::gpu(
            "tesla_t4".parse().unwrap(),
            "/dev/nvidia[0-1]".parse().unwrap(),
        );
        t4.cores = Some("0-1".parse().unwrap());
        vec![
            t4,
            GresLine::gpu(
                "nvidia_l40s".parse().unwrap(),
                "/dev/nvidia3".parse().unwrap(),
            ),
        ]
    }

    fn to_json(rec: &NodeRecord) -> serde_json::Value {
        serde_json::from_str(&rec.to_relation_value()).unwrap()
    }

    #[test]
    fn builds_the_reference_shape() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let rec = build_node_record(
            &facts,
            t4(),
            &NodeOverrides::default(),
            MemoryHeadroom::default(),
            true,
        )
        .unwrap();
        let json = to_json(&rec);
        assert_eq!(
            json["node_parameters"]["Gres"],
            serde_json::json!(["gpu:tesla_t4:2", "gpu:nvidia_l40s:1"])
        );
        assert_eq!(json["node_parameters"]["MemSpecLimit"], "1024");
        assert_eq!(json["gres"][0]["File"], "/dev/nvidia[0-1]");
        assert_eq!(json["gres"][0]["Cores"], "0-1");
        assert_eq!(json["gres"][1]["File"], "/dev/nvidia3");
        assert_eq!(json["new_node"], true);
        let none = build_node_record(
            &facts,
            vec![],
            &NodeOverrides::default(),
            MemoryHeadroom::default(),
            false,
        )
        .unwrap();
        assert!(to_json(&none).get("gres").is_none());
        assert!(to_json(&none)["node_parameters"].get("Gres").is_none());
    }

    #[test]
    fn overrides_replace_keys_and_keep_gres_the_detected_list() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let ov = overrides("Weight=200 realmemory=20000");
        let rec = build_node_record(&facts, t4(), &ov, MemoryHeadroom::default(), true).unwrap();
        let json = to_json(&rec);
        assert_eq!(json["node_parameters"]["Weight"], "200");
        assert_eq!(json["node_parameters"]["RealMemory"], "20000");
        assert_eq!(
            json["node_parameters"]["Gres"],
            serde_json::json!(["gpu:tesla_t4:2", "gpu:nvidia_l40s:1"])
        );
    }

    fn overrides(text: &str) -> NodeOverrides {
        let mut ov = NodeOverrides::default();
        for o in crate::slurm::parse_node_overrides(text).unwrap() {
            ov.insert(o).unwrap();
        }
        ov
    }

    #[test]
    fn only_keys_the_relation_carries_are_kept() {
        let mut ov = NodeOverrides::default();
        for o in crate::slurm::parse_node_overrides("State=DRAIN Feature=a").unwrap() {
            let key = o.key();
            assert_eq!(ov.insert(o), Err(NotPassedOn { key }));
        }
        assert!(ov.is_empty());
        let e = NotPassedOn { key: "State" }.to_string();
        assert!(e.contains("State is not") && e.contains("Weight"), "{e}");
    }

    #[test]
    fn gpu_features_follow_the_operators() {
        let gpu = Feature::parse_list("tesla_t4,cuda12").unwrap();
        let features = |ov: &NodeOverrides| ov.get("Features").map(|o| o.value().to_string());
        let ov = overrides("Weight=5 Features=ib,tesla_t4").with_gpu_features(&gpu);
        assert_eq!(features(&ov).as_deref(), Some("ib,tesla_t4,cuda12"));
        assert_eq!(
            ov.get("Features").map(|o| o.setting().clone()),
            Some(NodeSetting::Features(
                Feature::parse_list("ib,tesla_t4,cuda12").unwrap()
            ))
        );
        assert_eq!(ov.get("Weight").map(|o| o.value()), Some("5"));
        let none = NodeOverrides::default().with_gpu_features(&gpu);
        assert_eq!(features(&none).as_deref(), Some("tesla_t4,cuda12"));
        let unchanged = overrides("Features=ib").with_gpu_features(&[]);
        assert_eq!(unchanged, overrides("Features=ib"));
        assert!(NodeOverrides::default().with_gpu_features(&[]).is_empty());
    }

    fn real_memory(rec: &NodeRecord) -> (String, String) {
        let json = to_json(rec);
        let p = &json["node_parameters"];
        (
            p["RealMemory"].as_str().unwrap_or_default().to_owned(),
            p["MemSpecLimit"].as_str().unwrap_or_default().to_owned(),
        )
    }

    #[test]
    fn machines_of_one_model_publish_one_real_memory() {
        let rec = |mb: u64| {
            let facts = parse_slurmd_c(&format!("NodeName=n CPUs=8 RealMemory={mb}\n")).unwrap();
            let ov = NodeOverrides::default();
            build_node_record(&facts, t4(), &ov, MemoryHeadroom::default(), false).unwrap()
        };
        assert_eq!(real_memory(&rec(515_000)), real_memory(&rec(514_998)));
        assert_eq!(
            real_memory(&rec(515_000)),
            ("503808".to_owned(), "1024".to_owned())
        );
        assert_eq!(real_memory(&rec(24_105)).0, "23552");
    }

    #[test]
    fn mem_spec_limit_follows_the_published_real_memory() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let h = MemoryHeadroom::default();
        let small = build_node_record(&facts, vec![], &overrides("RealMemory=1500"), h, false);
        assert_eq!(
            real_memory(&small.unwrap()),
            ("1500".to_owned(), "750".to_owned())
        );
        let set = overrides("MemSpecLimit=2048");
        let rec = build_node_record(&facts, vec![], &set, h, false).unwrap();
        assert_eq!(real_memory(&rec), ("23552".to_owned(), "2048".to_owned()));
        let none = MemoryHeadroom::Mb(24_105);
        let e = build_node_record(&facts, vec![], &NodeOverrides::default(), none, false);
        let e = e.unwrap_err().to_string();
        assert!(e.contains("memory-headroom 24105 MB"), "{e}");
    }

    #[test]
    fn a_record_over_the_controllers_limit_is_refused() {
        let facts = parse_slurmd_c(C_2205).unwrap();
        let h = MemoryHeadroom::default();
        let list = |n: usize| {
            let f: Vec<String> = (0..n).map(|i| format!("feature{i:05}")).collect();
            overrides(&format!("Features={}", f.join(",")))
        };
        // ~65 KB of Features (issue 39): over the 64 KiB the controller accepts.
        let e = build_node_record(&facts, t4(), &list(5_500), h, true).unwrap_err();
        assert!(
            matches!(e, InterfaceError::TooLarge { key: "node", len } if len > 65_536),
            "{e}"
        );
        assert!(e.to_string().contains("node-config"), "{e}");
        // The largest list that fits is published, whichever its `new_node`.
        let fits = |n| build_node_record(&facts, t4(), &list(n), h, true).is_ok();
        let mut n = 5_000;
        while fits(n + 1) {
            n += 1;
        }
        let at_limit = build_node_record(&facts, t4(), &list(n), h, false).unwrap();
        let len = at_limit.to_relation_value().len();
        assert!(
            len <= crate::interface::MAX_RECORD_LEN && len > 65_500,
            "{len}"
        );
    }

    #[test]
    fn underscore_host_names_are_published() {
        let facts = parse_slurmd_c("NodeName=gpu_node_2 CPUs=2 RealMemory=4000\n").unwrap();
        let rec = build_node_record(
            &facts,
            t4(),
            &NodeOverrides::default(),
            MemoryHeadroom::default(),
            true,
        )
        .unwrap();
        assert_eq!(rec.node_name(), "gpu_node_2");
    }
}
