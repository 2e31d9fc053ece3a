//! Property test for grouped nodes ([`NodeGroup`]): a model whose nodes are held in groups
//! (one shared line per group, as the controller builds it per node shape) renders the same
//! bytes, and is refused with the same error, as the same nodes listed one by one.

use std::sync::Arc;

use proptest::prelude::*;
use slurm_charms::slurm::types::{CoreList, DeviceFiles};
use slurm_charms::slurm::*;

/// One shape: a node line's fields and its GPU records, sometimes wrong on purpose.
#[derive(Debug, Clone)]
struct ShapeSpec {
    cpus: u32,
    mem: Option<u64>,
    gpus: u32,
    /// The `Gres=` count is this far from the records' device count (0: agrees).
    count_off: u32,
    /// `Gres=` lists the GPU type twice (refused: duplicate GRES spec).
    twice: bool,
    /// `NodeAddr=` set (such nodes are never folded into one line).
    addr: bool,
    features: Vec<&'static str>,
}

fn shape() -> impl Strategy<Value = ShapeSpec> {
    (
        prop::sample::select(vec![8u32, 16, 224]),
        prop::option::of(prop::sample::select(vec![1000u64, 2000])),
        0u32..3,
        prop::sample::select(vec![0u32, 0, 0, 0, 0, 0, 0, 1]),
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.1),
        prop::collection::vec(prop::sample::select(vec!["a", "b", "h100"]), 0..2),
    )
        .prop_map(
            |(cpus, mem, gpus, count_off, twice, addr, features)| ShapeSpec {
                cpus,
                mem,
                gpus,
                count_off,
                twice,
                addr,
                features,
            },
        )
}

fn node_line(s: &ShapeSpec, name: &str) -> (NodeConf, Vec<GresLine>) {
    let mut n = NodeConf::new(name.parse().unwrap());
    n.cpus = Some(s.cpus);
    n.real_memory = s.mem;
    n.features = s.features.iter().map(|f| f.parse().unwrap()).collect();
    if s.addr {
        n.set("NodeAddr", "10.0.0.1").unwrap();
    }
    let mut records = Vec::new();
    if s.gpus > 0 {
        let t: GresType = "h100".parse().unwrap();
        n.gres
            .push(GresSpec::gpu(t.clone(), u64::from(s.gpus + s.count_off)));
        if s.twice {
            n.gres.push(GresSpec::gpu(t.clone(), 1));
        }
        for minor in 0..s.gpus {
            let mut r = GresLine::gpu(t.clone(), DeviceFiles::nvidia(&[minor]).unwrap());
            r.cores = CoreList::from_ids(&[0, 1, 2, 3, 8 * minor]);
            records.push(r);
        }
    }
    (n, records)
}
use slurm_charms::slurm::types::GresType;

/// Both models: nodes `gpu-<i>` (natural order) of the shapes `of[i]`, listed one by one and
/// grouped per shape (a shape's names in natural order; `split` puts every other node of a
/// shape in a second group with a copy of the line). Gres record lists are shared per shape
/// when `share` (as the controller does), else one list per node; with `odd`, every fifth
/// node has one record fewer than its shape (its own error, inside a group).
fn models(
    shapes: &[ShapeSpec],
    of: &[usize],
    split: bool,
    share: bool,
    odd: bool,
    max_nodes: Option<usize>,
) -> ((SlurmConf, GresConf), (SlurmConf, GresConf)) {
    let mut listed = SlurmConf::new("c", "ctl");
    let mut grouped = SlurmConf::new("c", "ctl");
    let mut gres = GresConf::default();
    let mut part = Partition::new("p".parse().unwrap());
    let mut down = DownNodes {
        state: Some(NodeState::Down),
        reason: Some("New node.".parse().unwrap()),
        ..DownNodes::default()
    };
    let lines: Vec<(Arc<NodeConf>, NodeRecords)> = shapes
        .iter()
        .map(|s| {
            let (n, r) = node_line(s, "placeholder");
            (Arc::new(n), Arc::new(r))
        })
        .collect();
    // (shape, half) -> group index in `grouped`.
    let mut groups: Vec<((usize, bool), usize)> = Vec::new();
    for (i, &k) in of.iter().enumerate() {
        let name = format!("gpu-{i}");
        let (n, mut records) = node_line(&shapes[k], &name);
        listed.nodes.push(n);
        let odd = odd && i % 5 == 4 && records.pop().is_some();
        if !records.is_empty() {
            let list = if share && !odd {
                Arc::clone(&lines[k].1)
            } else {
                Arc::new(records)
            };
            gres.nodes.insert(name.parse().unwrap(), list);
        }
        let key = (k, split && i % 2 == 1);
        let g = match groups.iter().find(|(g, _)| *g == key) {
            Some((_, g)) => *g,
            None => {
                let node = if key.1 {
                    Arc::new(NodeConf::clone(&lines[k].0))
                } else {
                    Arc::clone(&lines[k].0)
                };
                grouped.node_groups.push(NodeGroup {
                    node,
                    names: Vec::new(),
                });
                groups.push((key, grouped.node_groups.len() - 1));
                grouped.node_groups.len() - 1
            }
        };
        grouped.node_groups[g].names.push(name.parse().unwrap());
        part.nodes.insert(name.parse().unwrap());
        if i % 3 == 0 {
            down.nodes.insert(name.parse().unwrap());
        }
    }
    for conf in [&mut listed, &mut grouped] {
        conf.set_gres_types_from_nodes();
        if !part.nodes.is_empty() {
            conf.partitions.push(part.clone());
        }
        conf.down_nodes.push(down.clone());
        if let Some(max) = max_nodes {
            conf.set_global("MaxNodeCount", &max.to_string()).unwrap();
        }
    }
    ((listed, gres.clone()), (grouped, gres))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn grouped_nodes_render_and_refuse_as_listed_nodes(
        shapes in prop::collection::vec(shape(), 1..5),
        of in prop::collection::vec(0usize..5, 0..40),
        split in any::<bool>(),
        share in any::<bool>(),
        odd in prop::bool::weighted(0.2),
        max_nodes in prop::option::weighted(0.1, 0usize..40),
    ) {
        let of: Vec<usize> = of.into_iter().map(|k| k % shapes.len()).collect();
        let ((a, ga), (b, gb)) = models(&shapes, &of, split, share, odd, max_nodes);
        prop_assert_eq!(b.node_count(), a.nodes.len());
        let listed = render_files(&a, &ga).map_err(|e| e.to_string());
        let grouped = render_files(&b, &gb).map_err(|e| e.to_string());
        prop_assert_eq!(&grouped, &listed);
        prop_assert_eq!(
            render_slurm_conf(&b).map_err(|e| e.to_string()),
            render_slurm_conf(&a).map_err(|e| e.to_string())
        );
        // The normal form lists grouped nodes one by one.
        prop_assert_eq!(b.normalized(), a.normalized());
        if let Ok(files) = listed {
            prop_assert_eq!(parse_slurm_conf(&files.slurm_conf, "slurm.conf").unwrap(), b.normalized());
        }
    }
}
