//! Render tests: exact output for small models, folding, determinism, and every fatal
//! configuration refused.

use slurm_charms::slurm::*;

fn node(name: &str, gpus: &[(&str, u64)]) -> NodeConf {
    let mut n = NodeConf::new(name);
    n.cpus = Some(16);
    n.boards = Some(1);
    n.sockets_per_board = Some(1);
    n.cores_per_socket = Some(8);
    n.threads_per_core = Some(2);
    n.real_memory = Some(31848);
    n.gres = gpus.iter().map(|(t, c)| GresSpec::gpu(t, *c)).collect();
    n.mem_spec_limit = Some(1024);
    n
}

fn files(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("/dev/nvidia{i}")).collect()
}

fn cluster() -> (SlurmConf, GresConf) {
    let mut conf = SlurmConf::new("osd-cluster", "ctl-0");
    conf.nodes
        .push(node("gpu-2", &[("tesla_t4", 2), ("nvidia_l40s", 2)]));
    conf.nodes
        .push(node("gpu-1", &[("tesla_t4", 2), ("nvidia_l40s", 2)]));
    conf.nodes
        .push(node("gpu-10", &[("nvidia_a100_80gb_pcie", 1)]));
    conf.nodes.push(node("cpu-1", &[]));
    let mut p = Partition::new("slurmd");
    p.nodes
        .extend(["gpu-1", "gpu-2", "gpu-10", "cpu-1"].map(String::from));
    p.default = true;
    p.state = Some(PartitionState::Up);
    p.extra.push(("MaxTime".into(), "1:00:00".into()));
    conf.partitions.push(p);
    conf.down_nodes.push(DownNodes {
        nodes: ["gpu-10".to_string()].into(),
        state: Some(NodeState::Down),
        reason: Some("New node.".into()),
    });
    let mut gres = GresConf::default();
    for n in ["gpu-1", "gpu-2"] {
        gres.nodes.insert(
            n.into(),
            vec![
                GresLine::gpu("tesla_t4", files(0..2)),
                GresLine::gpu("nvidia_l40s", files(2..4)),
            ],
        );
    }
    gres.nodes.insert(
        "gpu-10".into(),
        vec![GresLine::gpu("nvidia_a100_80gb_pcie", files(0..1))],
    );
    (conf, gres)
}

#[test]
fn renders_expected_text() {
    let (conf, gres) = cluster();
    let out = render_files(&conf, &gres).unwrap();
    println!("{}\n{}", out.slurm_conf, out.gres_conf);
    assert!(out.slurm_conf.contains(
        "\nNodeName=gpu-[1-2] CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=31848 Gres=gpu:tesla_t4:2,gpu:nvidia_l40s:2 MemSpecLimit=1024\n"
    ));
    assert!(out.slurm_conf.contains(
        "\nPartitionName=slurmd Nodes=cpu-1,gpu-[1-2,10] Default=YES State=UP MaxTime=1:00:00\n"
    ));
    assert!(
        out.slurm_conf
            .contains("\nDownNodes=gpu-10 State=DOWN Reason=\"New node.\"\n")
    );
    assert_eq!(
        out.gres_conf.lines().skip(1).collect::<Vec<_>>(),
        [
            "NodeName=gpu-[1-2] Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1]",
            "NodeName=gpu-[1-2] Name=gpu Type=nvidia_l40s File=/dev/nvidia[2-3]",
            "NodeName=gpu-10 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0",
        ]
    );
}
