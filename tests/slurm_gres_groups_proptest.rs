//! Property test for the grouped gres.conf nodes ([`GresGroup`]) and partitions' `node_names`:
//! a model whose gres.conf records are held per group of nodes (one shared list each, as the
//! controller builds them per GPU shape) and whose partitions list nodes by name renders the
//! same bytes, and is refused with the same error, as the same nodes put one by one in
//! `GresConf::nodes` and `Partition::nodes`.

use std::sync::Arc;

use proptest::prelude::*;
use slurm_charms::slurm::types::{DeviceFiles, GresType, NodeName, NodeRef};
use slurm_charms::slurm::*;

/// One shape: its GPU count and how its records may be wrong on purpose.
#[derive(Debug, Clone)]
struct ShapeSpec {
    gpus: u32,
    /// The `Gres=` count is this far from the records' device count (0: agrees).
    count_off: u32,
    /// Two records name one device file (refused by the gres.conf check).
    twice: bool,
    /// One more record of a GRES name `GresTypes` lacks (refused by the consistency check).
    stray: bool,
}

fn shape() -> impl Strategy<Value = ShapeSpec> {
    (
        1u32..3,
        prop::sample::select(vec![0u32, 0, 0, 0, 0, 1]),
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(gpus, count_off, twice, stray)| ShapeSpec {
            gpus,
            count_off,
            twice,
            stray,
        })
}

/// How a node's records are held in the grouped model.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// In its list's group.
    Group,
    /// In its list's second group (a group of the same list may be split).
    SecondGroup,
    /// In `GresConf::nodes`.
    Listed,
    /// In its list's group and in `GresConf::nodes` too, with the same list (counts once).
    Both,
}

fn place() -> impl Strategy<Value = Place> {
    prop::sample::select(vec![
        Place::Group,
        Place::Group,
        Place::Group,
        Place::SecondGroup,
        Place::Listed,
        Place::Both,
    ])
}

fn records(s: &ShapeSpec) -> Vec<GresLine> {
    let t: GresType = "h100".parse().unwrap();
    let mut out: Vec<GresLine> = (0..s.gpus)
        .map(|minor| GresLine::gpu(t.clone(), DeviceFiles::nvidia(&[minor]).unwrap()))
        .collect();
    if s.twice {
        out.push(GresLine::gpu(t, DeviceFiles::nvidia(&[0]).unwrap()));
    }
    if s.stray {
        out.push(GresLine::new("stray".parse().unwrap()));
    }
    out
}

fn node(s: &ShapeSpec) -> NodeConf {
    let mut n = NodeConf::new(NodeName::placeholder());
    n.cpus = Some(8);
    n.gres.push(GresSpec::gpu(
        "h100".parse().unwrap(),
        u64::from(s.gpus + s.count_off),
    ));
    n
}

/// Both models (listed first) of nodes `gpu-<i>` of shapes `of[i]`, held at `at[i]` in the
/// grouped model. slurm.conf's node groups are the same in both (one per shape, names in
/// natural order). Lists are shared per shape; with `copies`, each group holds a copy of its
/// shape's list (equal content, another pointer). The partition lists every node, in the grouped
/// model by name in `order` (a rotation: not the groups' order unless 0), with the first `in_set`
/// in its set too; it also names the `ghosts`, nodes that are not defined.
#[allow(clippy::too_many_arguments)]
fn models(
    shapes: &[ShapeSpec],
    of: &[usize],
    at: &[Place],
    copies: bool,
    rotate: usize,
    in_set: usize,
    ghosts: &[&str],
) -> ((SlurmConf, GresConf), (SlurmConf, GresConf)) {
    let mut slurm = SlurmConf::new("c", "ctl");
    let lines: Vec<(Arc<NodeConf>, NodeRecords)> = shapes
        .iter()
        .map(|s| (Arc::new(node(s)), Arc::new(records(s))))
        .collect();
    let mut listed = GresConf::default();
    let mut grouped = GresConf::default();
    // (shape, second) -> gres group index in `grouped`
    let mut gres_groups: Vec<((usize, bool), usize)> = Vec::new();
    let mut slurm_groups: Vec<(usize, usize)> = Vec::new();
    let names: Vec<NodeName> = (0..of.len())
        .map(|i| format!("gpu-{i}").parse().unwrap())
        .collect();
    for (i, (&k, name)) in of.iter().zip(&names).enumerate() {
        let g = match slurm_groups.iter().find(|(s, _)| *s == k) {
            Some((_, g)) => *g,
            None => {
                slurm.node_groups.push(NodeGroup {
                    node: Arc::clone(&lines[k].0),
                    names: Vec::new(),
                });
                slurm_groups.push((k, slurm.node_groups.len() - 1));
                slurm.node_groups.len() - 1
            }
        };
        slurm.node_groups[g].names.push(name.clone());
        let list = &lines[k].1;
        listed.nodes.insert(name.clone(), Arc::clone(list));
        let place = at[i % at.len()];
        if matches!(place, Place::Listed | Place::Both) {
            grouped.nodes.insert(name.clone(), Arc::clone(list));
        }
        if place != Place::Listed {
            let key = (k, place == Place::SecondGroup);
            let g = match gres_groups.iter().find(|(s, _)| *s == key) {
                Some((_, g)) => *g,
                None => {
                    let records = if copies {
                        Arc::new(Vec::clone(list))
                    } else {
                        Arc::clone(list)
                    };
                    grouped.node_groups.push(GresGroup {
                        records,
                        names: Vec::new(),
                    });
                    gres_groups.push((key, grouped.node_groups.len() - 1));
                    grouped.node_groups.len() - 1
                }
            };
            grouped.node_groups[g].names.push(name.clone());
        }
    }
    slurm.set_gres_types_from_nodes();
    let mut grouped_slurm = slurm.clone();
    let mut part = Partition::new("p".parse().unwrap());
    let mut by_name = part.clone();
    let mut order: Vec<NodeName> = slurm
        .node_groups
        .iter()
        .flat_map(|g| g.names.iter().cloned())
        .collect();
    if !order.is_empty() {
        let n = order.len();
        order.rotate_left(rotate % n);
    }
    for (i, ghost) in ghosts.iter().enumerate() {
        order.insert(order.len() * i / 2, ghost.parse().unwrap());
    }
    part.nodes = order.iter().cloned().map(NodeRef::Node).collect();
    by_name.nodes = order
        .iter()
        .take(in_set)
        .cloned()
        .map(NodeRef::Node)
        .collect();
    by_name.node_names = order;
    if part.has_nodes() {
        slurm.partitions.push(part);
        grouped_slurm.partitions.push(by_name);
    }
    ((slurm, listed), (grouped_slurm, grouped))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn grouped_gres_and_partition_names_render_and_refuse_as_listed(
        shapes in prop::collection::vec(shape(), 1..4),
        // now and then past the renderer's `KEEP_FROM` (256): long hostlists are made once
        of in prop_oneof![
            9 => prop::collection::vec(0usize..4, 0..30),
            1 => prop::collection::vec(0usize..4, 250..600),
        ],
        at in prop::collection::vec(place(), 1..6),
        copies in any::<bool>(),
        rotate in prop_oneof![3 => Just(0usize), 2 => 0usize..600],
        in_set in 0usize..4,
        ghosts in prop::option::weighted(
            0.15,
            prop::collection::vec(prop::sample::select(vec!["ghost", "gpu-99", "gpu-100", "a"]), 1..3),
        ),
    ) {
        let of: Vec<usize> = of.into_iter().map(|k| k % shapes.len()).collect();
        let ghosts = ghosts.unwrap_or_default();
        let ((a, ga), (b, gb)) = models(&shapes, &of, &at, copies, rotate, in_set, &ghosts);
        let listed = render_files(&a, &ga).map_err(|e| e.to_string());
        let grouped = render_files(&b, &gb).map_err(|e| e.to_string());
        prop_assert_eq!(&grouped, &listed);
        prop_assert_eq!(
            render_gres_conf(&gb).map_err(|e| e.to_string()),
            render_gres_conf(&ga).map_err(|e| e.to_string())
        );
        prop_assert_eq!(
            render_slurm_conf(&b).map_err(|e| e.to_string()),
            render_slurm_conf(&a).map_err(|e| e.to_string())
        );
        // The normal forms list grouped nodes and partition names one by one.
        prop_assert_eq!(gb.normalized(), ga.normalized());
        prop_assert_eq!(b.normalized(), a.normalized());
        if let Ok(files) = listed {
            prop_assert_eq!(parse_gres_conf(&files.gres_conf, "gres.conf").unwrap(), gb.normalized());
            prop_assert_eq!(parse_slurm_conf(&files.slurm_conf, "slurm.conf").unwrap(), b.normalized());
        }
    }

    /// A node given two different lists (a group and `nodes`, or two groups) is refused, by
    /// every renderer, naming the node.
    #[test]
    fn a_node_with_two_lists_is_refused(
        n in 2usize..20,
        twice in 0usize..20,
        listed in any::<bool>(),
    ) {
        let twice = twice % n;
        let one = Arc::new(records(&ShapeSpec { gpus: 1, count_off: 0, twice: false, stray: false }));
        let two = Arc::new(records(&ShapeSpec { gpus: 2, count_off: 0, twice: false, stray: false }));
        let names: Vec<NodeName> = (0..n).map(|i| format!("gpu-{i}").parse().unwrap()).collect();
        let mut gres = GresConf::default();
        gres.node_groups.push(GresGroup { records: Arc::clone(&one), names: names.clone() });
        if listed {
            gres.nodes.insert(names[twice].clone(), Arc::clone(&two));
        } else {
            gres.node_groups.push(GresGroup { records: Arc::clone(&two), names: vec![names[twice].clone()] });
        }
        let e = render_gres_conf(&gres).unwrap_err();
        prop_assert_eq!(e, ConfigError::GresNodeTwice { node: names[twice].to_string() });
        // The same list twice (or an empty one) is no conflict.
        let mut same = gres.clone();
        same.nodes.clear();
        same.node_groups.truncate(1);
        same.node_groups.push(GresGroup { records: Arc::new(Vec::clone(&one)), names: vec![names[twice].clone()] });
        same.node_groups.push(GresGroup { records: Arc::new(Vec::new()), names: names.clone() });
        prop_assert!(render_gres_conf(&same).is_ok());
    }
}
