//! Property tests: hostlist compress/expand, render/parse round trips on generated models,
//! and the parsers never panicking on arbitrary text.

use std::collections::BTreeSet;

use proptest::prelude::*;
use slurm_charms::slurm::hostlist::{compress, expand};
use slurm_charms::slurm::types::{CoreList, DeviceFiles};
use slurm_charms::slurm::*;

/// Node-like names: a prefix, maybe a number of random width (zero padding included).
fn name() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["n", "gpu-", "rack1-", "a.b", "x"]),
        prop::option::of((0u64..2000, 0usize..5)),
    )
        .prop_map(|(p, num)| match num {
            Some((v, w)) => format!("{p}{v:0w$}"),
            None => p.trim_end_matches('-').to_string(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn compress_then_expand_gives_the_same_set(names in prop::collection::vec(name(), 0..60)) {
        let c = compress(&names);
        let back: BTreeSet<String> = expand(&c).unwrap().into_iter().collect();
        let want: BTreeSet<String> = names.iter().cloned().collect();
        prop_assert_eq!(&back, &want, "compressed: {}", c);
        // No duplicates in the expansion.
        prop_assert_eq!(expand(&c).unwrap().len(), want.len());
    }

    #[test]
    fn compress_is_order_independent(mut names in prop::collection::vec(name(), 0..40), seed in any::<u64>()) {
        let a = compress(&names);
        let n = names.len().max(1);
        names.rotate_left((seed as usize) % n);
        names.reverse();
        prop_assert_eq!(a, compress(&names));
    }

    #[test]
    fn expand_never_panics(s in "[a-z0-9\\[\\],\\-]{0,40}") {
        let _ = expand(&s);
    }

    #[test]
    fn parsers_never_panic(s in "(?s).{0,200}") {
        let _ = parse_slurm_conf(&s, "fuzz");
        let _ = parse_gres_conf(&s, "fuzz");
        let _ = parse_overrides(&s, OverrideScope::Node);
    }

    #[test]
    fn tokens_with_injection_characters_are_refused(
        a in "[a-z]{0,5}", bad in prop::sample::select(vec![" ", "\n", "\t", "#", "=", "\"", "\\", "\r", "\u{0}"]), b in "[a-z]{0,5}"
    ) {
        let v = format!("{a}{bad}{b}");
        prop_assert!(validate_token("Key", &v).is_err());
        let mut n = NodeConf::new("n1".parse().unwrap());
        prop_assert!(n.set("TmpDisk", &v).is_err());
    }
}

const TYPES: [&str; 4] = [
    "tesla_t4",
    "nvidia_l40s",
    "nvidia_a100-sxm4-80gb",
    "nvidia_h100_80gb_hbm3",
];

#[derive(Debug, Clone)]
struct NodeSpec {
    cpus: Option<u32>,
    mem: Option<u64>,
    gpus: Vec<(usize, u32)>,
    features: Vec<String>,
    weight: Option<u32>,
    reason: Option<String>,
    tmp_disk: Option<u32>,
    cores: bool,
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (
        prop::option::of(1u32..4),
        prop::option::of(prop::sample::select(vec![1000u64, 2000])),
        prop::collection::btree_map(0usize..4, 1u32..4, 0..3),
        prop::collection::vec(prop::sample::select(vec!["ib", "a100", "x86"]), 0..3),
        prop::option::of(1u32..3),
        prop::option::of("[a-zA-Z0-9 #\\\\.]{1,12}"),
        prop::option::of(0u32..2),
        any::<bool>(),
    )
        .prop_map(
            |(cpus, mem, gpus, features, weight, reason, tmp_disk, cores)| NodeSpec {
                cpus,
                mem,
                gpus: gpus.into_iter().collect(),
                features: features.into_iter().map(String::from).collect(),
                weight,
                reason: reason
                    .map(|r| r.trim().to_string())
                    .filter(|r| !r.is_empty()),
                tmp_disk,
                cores,
            },
        )
}

fn build(specs: &[NodeSpec], part_mask: u64, down_mask: u64) -> (SlurmConf, GresConf) {
    let mut conf = SlurmConf::new("c", "ctl");
    conf.extra
        .push(("SchedulerParameters".into(), "bf_interval=60".into()));
    let mut gres = GresConf::default();
    let mut p = Partition::new("p".parse().unwrap());
    let mut down = DownNodes {
        state: Some(NodeState::Drain),
        reason: Some("maint #1".parse().unwrap()),
        ..DownNodes::default()
    };
    for (i, s) in specs.iter().enumerate() {
        let name = if i % 3 == 0 {
            format!("n{i}")
        } else {
            format!("gpu-{i:03}")
        };
        let mut n = NodeConf::new(name.parse().unwrap());
        n.cpus = s.cpus;
        n.real_memory = s.mem;
        n.features = s.features.iter().map(|f| f.parse().unwrap()).collect();
        n.weight = s.weight;
        n.reason = s.reason.as_deref().map(|r| r.parse().unwrap());
        if let Some(t) = s.tmp_disk {
            n.set("TmpDisk", &t.to_string()).unwrap();
        }
        let mut minor = 0;
        let mut records = Vec::new();
        for &(t, count) in &s.gpus {
            n.gres
                .push(GresSpec::gpu(TYPES[t].parse().unwrap(), u64::from(count)));
            let minors: Vec<u32> = (minor..minor + count).collect();
            let files = DeviceFiles::nvidia(&minors).unwrap();
            minor += count;
            let mut r = GresLine::gpu(TYPES[t].parse().unwrap(), files);
            if s.cores {
                r.cores = CoreList::from_ids(&[0, 1, 3]);
            }
            records.push(r);
        }
        if !records.is_empty() {
            gres.nodes.insert(name.parse().unwrap(), records.into());
        }
        if part_mask >> (i % 64) & 1 == 1 {
            p.nodes.insert(name.parse().unwrap());
        }
        if down_mask >> (i % 64) & 1 == 1 {
            down.nodes.insert(name.parse().unwrap());
        }
        conf.nodes.push(n);
    }
    conf.partitions.push(p);
    conf.down_nodes.push(down);
    (conf, gres)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn parse_of_render_is_the_normalised_model(
        specs in prop::collection::vec(node_spec(), 0..25), part in any::<u64>(), down in any::<u64>()
    ) {
        let (conf, gres) = build(&specs, part, down);
        let out = render_files(&conf, &gres).unwrap();
        let back = parse_slurm_conf(&out.slurm_conf, "slurm.conf").unwrap();
        prop_assert_eq!(&back, &conf.normalized());
        let gback = parse_gres_conf(&out.gres_conf, "gres.conf").unwrap();
        prop_assert_eq!(&gback, &gres.normalized());
        // Rendering the parsed model gives the same bytes (fixed point).
        prop_assert_eq!(render_files(&back, &gback).unwrap(), out.clone());
        // Every node is written exactly once (folded lines expanded).
        let mut seen = BTreeSet::new();
        for line in out.slurm_conf.lines().filter(|l| l.starts_with("NodeName=")) {
            let list = line["NodeName=".len()..].split(' ').next().unwrap();
            for n in expand(list).unwrap() {
                prop_assert!(seen.insert(n.clone()), "{} twice", n);
            }
        }
        prop_assert_eq!(seen.len(), conf.nodes.len());
    }
}
