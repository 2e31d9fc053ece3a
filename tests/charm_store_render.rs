//! The controller renders slurm.conf and gres.conf from its store: each record's lines, rendered
//! once when the record arrived, folded by record. The oracle is the full model render
//! (`slurm::render_files`): the same nodes parsed from their relation values into a
//! `SlurmConf` and a `GresConf`, node by node, as the controller planned before the store. Over
//! random clusters (applications, partitions, nodes alike and distinct in `RealMemory`, CPUs,
//! GPUs and features, new nodes, shared GRES, names out of order) both must be byte-identical.

use proptest::prelude::*;
use serde_json::{Value, json};
use slurm_charms::charms::slurmctld::desired::{Settings, plan};
use slurm_charms::charms::slurmctld::store::Store;
use slurm_charms::interface::{NodeRecord, PartitionRecord};
use slurm_charms::slurm::hostlist::natural_cmp;
use slurm_charms::slurm::types::{NodeName, Reason};
use slurm_charms::slurm::{DownNodes, GlobalKey, GresConf, NodeState, SlurmConf, render_files};
use std::collections::BTreeSet;

/// One generated node: its `node` value.
#[derive(Debug, Clone)]
struct Node {
    value: String,
}

fn node_value(
    name: &str,
    cpus: u32,
    memory: u64,
    gpus: u32,
    shard: bool,
    features: bool,
    new: bool,
) -> String {
    let mut params = json!({
        "NodeName": name, "CPUs": cpus.to_string(), "Boards": "1", "SocketsPerBoard": "1",
        "CoresPerSocket": (cpus / 2).to_string(), "ThreadsPerCore": "2",
        "RealMemory": memory.to_string(), "MemSpecLimit": "1024",
    });
    if features {
        params["Features"] = json!(format!("ib,cpus{cpus}"));
    }
    let mut rec = json!({"node_parameters": {}, "new_node": new});
    if gpus > 0 {
        let mut gres = vec![format!("gpu:tesla_t4:{gpus}")];
        let file = if gpus == 1 {
            "/dev/nvidia0".to_string()
        } else {
            format!("/dev/nvidia[0-{}]", gpus - 1)
        };
        let mut lines =
            vec![json!({"Name": "gpu", "Type": "tesla_t4", "File": file, "Cores": "0-1"})];
        if shard {
            gres.push(format!("shard:{}", 4 * gpus));
            for i in 0..gpus {
                lines.push(
                    json!({"Name": "shard", "File": format!("/dev/nvidia{i}"), "Count": "4"}),
                );
            }
        }
        params["Gres"] = Value::from(gres);
        rec["gres"] = Value::from(lines);
    }
    rec["node_parameters"] = params;
    rec.to_string()
}

/// A cluster: per application (its partition name), its units' nodes (names unique overall).
fn cluster() -> impl Strategy<Value = Vec<(String, Vec<Node>)>> {
    let node = (
        2u32..4, // CPUs / 2
        0u64..3, // RealMemory variant (0: all alike)
        0u32..3, // GPUs
        any::<bool>(),
        prop::bool::weighted(0.2),
        any::<bool>(),
        0u32..40,  // name number
        0usize..2, // name prefix
    );
    prop::collection::vec(prop::collection::vec(node, 1..12), 1..3).prop_map(|apps| {
        let mut seen = BTreeSet::new();
        apps.into_iter()
            .enumerate()
            .map(|(a, nodes)| {
                let nodes = nodes
                    .into_iter()
                    .filter_map(|(half, mem, gpus, shard, features, new, num, prefix)| {
                        let name = format!("{}-{num}", ["gpu", "cpu"][prefix]);
                        seen.insert(name.clone()).then(|| Node {
                            value: node_value(
                                &name,
                                half * 2,
                                31_000 + mem * 7,
                                gpus,
                                shard,
                                features,
                                new,
                            ),
                        })
                    })
                    .collect();
                (format!("part{a}"), nodes)
            })
            .collect()
    })
}

fn settings() -> Settings {
    Settings {
        cluster_name: "oracle".into(),
        default_partition: String::new(),
        slurm_conf_parameters: "SchedulerParameters=bf_continue".into(),
        hostname: NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    }
}

/// The oracle: the model of the same nodes, node by node, rendered by `render_files`.
fn model_files(apps: &[(String, Vec<Node>)]) -> (String, String) {
    let s = settings();
    let mut slurm = SlurmConf::new(&s.cluster_name, "ctl-0");
    slurm.set_override(
        &slurm_charms::slurm::parse_global_overrides(&s.slurm_conf_parameters).unwrap()[0],
    );
    let mut gres = GresConf::default();
    let mut partitions = Vec::new();
    let mut down = BTreeSet::new();
    for (part, nodes) in apps {
        let record =
            PartitionRecord::from_relation_value(&format!(r#"{{"{part}":{{"State":"UP"}}}}"#))
                .unwrap();
        let mut p = record.partition().clone();
        for n in nodes {
            let r = NodeRecord::from_relation_value(&n.value).unwrap();
            let new = r.new_node();
            let name = r.node_name().clone();
            let (node, lines) = r.into_parts();
            slurm.nodes.push(node);
            if !lines.is_empty() {
                gres.nodes.insert(name.clone(), lines);
            }
            if new {
                down.insert(name.clone());
            }
            p.node_names.push(name);
        }
        if !p.node_names.is_empty() {
            partitions.push(p);
        }
    }
    partitions.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    if let Some(first) = partitions.first_mut() {
        first.default = true;
    }
    slurm.partitions = partitions;
    if !down.is_empty() {
        slurm.down_nodes.push(DownNodes {
            nodes: down,
            state: Some(NodeState::Down),
            reason: Reason::try_from("New node.").ok(),
        });
    }
    slurm.set_gres_types_from_nodes();
    // the memory defaults, from the model's own nodes (the store reads them from its records)
    let memory = slurm_charms::slurm::DefaultMemory::default().lines(
        slurm
            .nodes
            .iter()
            .filter_map(slurm_charms::slurm::NodeMemory::of_node),
        &slurm.extra,
    );
    for (key, mb) in memory {
        slurm.extra.push((key.to_owned(), mb.to_string()));
    }
    assert!(slurm.owned.contains_key(&GlobalKey::GresTypes));
    let files = render_files(&slurm, &gres).unwrap();
    (files.slurm_conf, files.gres_conf)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_store_renders_what_the_model_renders(apps in cluster()) {
        let mut store = Store::default();
        for (i, (part, nodes)) in apps.iter().enumerate() {
            store.add_relation(
                i as u32 + 1,
                &format!("app{i}"),
                Some(format!(r#"{{"{part}":{{"State":"UP"}}}}"#)),
                nodes.iter().enumerate().map(|(k, n)| (format!("app{i}/{k}"), n.value.clone())),
            );
        }
        let p = plan(&settings(), &store);
        prop_assert!(p.render_error.is_none(), "{:?}", p.render_error);
        prop_assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        let (slurm, gres) = model_files(&apps);
        prop_assert_eq!(p.slurm_conf.as_deref(), Some(slurm.as_str()));
        prop_assert_eq!(p.gres_conf.as_deref(), Some(gres.as_str()));
        // and the store reads back as it was written
        let mut copy = store.clone();
        let back = Store::from_bytes(&copy.to_bytes()).unwrap();
        prop_assert_eq!(plan(&settings(), &back), p);
    }
}
