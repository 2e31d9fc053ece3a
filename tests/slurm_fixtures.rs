//! Shared fixtures for the slurm tests and benchmark (included with `#[path]`; this file is
//! also built as an empty test crate).
#![allow(dead_code)]

use slurm_charms::slurm::types::{CoreList, DeviceFiles, DevicePath, NodeName};
use slurm_charms::slurm::*;

/// A node name known to be valid.
pub fn nn(name: &str) -> NodeName {
    NodeName::try_from(name).unwrap()
}

/// A node as `slurmd -C` plus the charm would publish it.
pub fn node(name: &str, gpus: &[(&str, u64)]) -> NodeConf {
    let mut n = NodeConf::new(nn(name));
    n.cpus = Some(16);
    n.boards = Some(1);
    n.sockets_per_board = Some(1);
    n.cores_per_socket = Some(8);
    n.threads_per_core = Some(2);
    n.real_memory = Some(31848);
    n.gres = gpus
        .iter()
        .map(|(t, c)| GresSpec::gpu(t.parse().unwrap(), *c))
        .collect();
    n.mem_spec_limit = Some(1024);
    n
}

/// `/dev/nvidia<i>` for each i in range.
pub fn files(range: std::ops::Range<u32>) -> DeviceFiles {
    DeviceFiles::new(range.map(DevicePath::nvidia).collect()).unwrap()
}

/// A MIG instance record: `nvidia_a100_1g.5gb` on `/dev/nvidia0` with caps 21 and 22.
pub fn mig_record() -> GresLine {
    GresLine {
        gres_type: Some("nvidia_a100_1g.5gb".parse().unwrap()),
        devices: Some(slurm_charms::slurm::types::GresDevices::Multiple(
            "/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22"
                .parse()
                .unwrap(),
        )),
        ..GresLine::new(slurm_charms::slurm::types::GresName::gpu())
    }
}

/// A typed GPU record.
pub fn gpu(gres_type: &str, files: DeviceFiles) -> GresLine {
    GresLine::gpu(gres_type.parse().unwrap(), files)
}

/// A small mixed cluster: two identical T4+L40S nodes, one A100 node (new), one CPU node.
pub fn cluster() -> (SlurmConf, GresConf) {
    let mut conf = SlurmConf::new("osd-cluster", "ctl-0");
    conf.nodes
        .push(node("gpu-2", &[("tesla_t4", 2), ("nvidia_l40s", 2)]));
    conf.nodes
        .push(node("gpu-1", &[("tesla_t4", 2), ("nvidia_l40s", 2)]));
    conf.nodes
        .push(node("gpu-10", &[("nvidia_a100_80gb_pcie", 1)]));
    conf.nodes.push(node("cpu-1", &[]));
    let mut p = Partition::new("slurmd".parse().unwrap());
    p.nodes
        .extend(["gpu-1", "gpu-2", "gpu-10", "cpu-1"].map(|n| n.parse().unwrap()));
    p.default = true;
    p.state = Some(PartitionState::Up);
    p.set("MaxTime", "1:00:00").unwrap();
    conf.partitions.push(p);
    conf.down_nodes.push(DownNodes {
        nodes: [nn("gpu-10")].into(),
        state: Some(NodeState::Down),
        reason: Some("New node.".parse().unwrap()),
    });
    let mut gres = GresConf::default();
    for n in ["gpu-1", "gpu-2"] {
        gres.nodes.insert(
            nn(n),
            vec![
                gpu("tesla_t4", files(0..2)),
                gpu("nvidia_l40s", files(2..4)),
            ]
            .into(),
        );
    }
    gres.nodes.insert(
        nn("gpu-10"),
        vec![gpu("nvidia_a100_80gb_pcie", files(0..1))].into(),
    );
    (conf, gres)
}

/// `n` nodes `gpu-00001…` with 8 GPUs each (`/dev/nvidia[0-7]`). With `identical`, every
/// other node has the same hardware as its neighbours (half the nodes fold into hostlists);
/// otherwise every node's RealMemory differs, so nothing folds in slurm.conf, and every
/// node's Cores differ, so nothing folds in gres.conf.
pub fn big_cluster(n: usize, identical: bool) -> (SlurmConf, GresConf) {
    let mut conf = SlurmConf::new("big", "ctl-0");
    let mut gres = GresConf::default();
    let mut p = Partition::new("gpu".parse().unwrap());
    p.default = true;
    p.state = Some(PartitionState::Up);
    let mut down = DownNodes {
        state: Some(NodeState::Down),
        reason: Some("New node.".parse().unwrap()),
        ..DownNodes::default()
    };
    for i in 0..n {
        let name = format!("gpu-{:05}", i + 1);
        let mut node = node(&name, &[("nvidia_h100_80gb_hbm3", 8)]);
        let same = identical && i % 2 == 0;
        if !same {
            node.real_memory = Some(1_000_000 + i as u64);
        }
        let mut line = gpu("nvidia_h100_80gb_hbm3", files(0..8));
        if !same && !identical {
            line.cores = CoreList::from_ids(&[(i % 128) as u32, 128 + (i / 128) as u32]);
        }
        gres.nodes.insert(nn(&name), vec![line].into());
        if i % 100 == 7 {
            down.nodes.insert(nn(&name));
        }
        p.nodes.insert(name.parse().unwrap());
        conf.nodes.push(node);
    }
    conf.partitions.push(p);
    conf.down_nodes.push(down);
    (conf, gres)
}
