//! Detection through nvml-wrapper against per-test copies of the fake NVML.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::slurm::GresLine;
use support::{Fake, conf_line, config, device, file_spec, text};

#[test]
fn two_t4_make_one_record_each_with_links_as_slurm_does() {
    let fake = Fake::fixture("two_t4");
    let inv = fake.detect();
    assert_eq!(inv.gpus.len(), 2);
    assert_eq!(inv.driver_version.as_deref(), Some("550.54.15"));
    assert_eq!(inv.cuda_version.as_deref(), Some("12.4"));
    assert!(inv.findings.is_empty(), "{:?}", inv.findings);
    let g = &inv.gpus[0];
    assert_eq!(g.name, "Tesla T4");
    assert_eq!(g.slurm_type, "tesla_t4");
    assert_eq!(g.pci_bus_id, "00000000:3B:00.0");
    assert_eq!(g.memory_total_bytes, Some(16106127360));
    assert_eq!(text(&g.cores).as_deref(), Some("0-1"));
    // NVLink unsupported: Slurm's NVML plugin still gives every GPU a Links row.
    assert_eq!(g.links, Some(vec![-1, 0]));
    assert_eq!(g.mig, None);
    assert_eq!(
        inv.gres(),
        vec![
            GresLine {
                cores: Some("0-1".parse().unwrap()),
                links: Some("-1,0".parse().unwrap()),
                ..GresLine::gpu("tesla_t4".parse().unwrap(), "/dev/nvidia0".parse().unwrap())
            },
            GresLine {
                cores: Some("0-1".parse().unwrap()),
                links: Some("0,-1".parse().unwrap()),
                ..GresLine::gpu("tesla_t4".parse().unwrap(), "/dev/nvidia1".parse().unwrap())
            }
        ]
    );
    assert_eq!(file_spec(&inv.gres()[0]), "/dev/nvidia0");
    assert_eq!(inv.gres_strings(), vec!["gpu:tesla_t4:2"]);
}

#[test]
fn zero_devices_is_an_empty_inventory() {
    let fake = Fake::new(&config(vec![]));
    let inv = fake.detect();
    assert!(inv.gpus.is_empty());
    assert!(inv.gres().is_empty());
    assert!(inv.findings.is_empty());
}

#[test]
fn device_file_comes_from_the_minor_not_the_index() {
    let fake = Fake::new(&config(vec![
        device("NVIDIA L4", 3, "00000000:01:00.0"),
        device("NVIDIA L4", 0, "00000000:02:00.0"),
        device("NVIDIA L4", 7, "00000000:03:00.0"),
    ]));
    let inv = fake.detect();
    assert_eq!(
        inv.gpus.iter().map(|g| g.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(inv.gpus[0].device_file(), "/dev/nvidia3");
    // One record per GPU, in PCI order (Slurm's order), whatever the minors.
    let files: Vec<String> = inv.gres().iter().map(file_spec).collect();
    assert_eq!(files, ["/dev/nvidia3", "/dev/nvidia0", "/dev/nvidia7"]);
    assert_eq!(inv.gres_strings(), vec!["gpu:nvidia_l4:3"]);
}

#[test]
fn mixed_models_are_grouped_per_type_in_pci_order() {
    let fake = Fake::fixture("mixed");
    let inv = fake.detect();
    let gres = inv.gres();
    let lines: Vec<String> = gres.iter().map(|r| conf_line(r, "node1")).collect();
    assert_eq!(
        lines,
        vec![
            // Links columns are load-order indices (docs/slurm-config.md, gres.conf section).
            "NodeName=node1 Name=gpu Type=tesla_t4 File=/dev/nvidia0 Cores=0-15 Links=-1,0,0,0",
            "NodeName=node1 Name=gpu Type=tesla_t4 File=/dev/nvidia3 Cores=16-31 Links=0,-1,0,0",
            "NodeName=node1 Name=gpu Type=nvidia_l40s File=/dev/nvidia2 Cores=0-15 Links=0,0,-1,0",
            "NodeName=node1 Name=gpu Type=nvidia_l40s File=/dev/nvidia5 Cores=16-31 Links=0,0,0,-1",
        ]
    );
    assert_eq!(
        inv.gres_strings(),
        vec!["gpu:tesla_t4:2", "gpu:nvidia_l40s:2"]
    );
}

#[test]
fn type_order_follows_the_lowest_pci_bus_id_not_the_nvml_index() {
    let fake = Fake::new(&config(vec![
        device("NVIDIA L4", 0, "00000000:C1:00.0"),
        device("NVIDIA A10", 1, "00000000:01:00.0"),
    ]));
    let inv = fake.detect();
    assert_eq!(
        inv.gres_strings(),
        vec!["gpu:nvidia_a10:1", "gpu:nvidia_l4:1"]
    );
}

fn with_affinity(name: &str, minor: u32, bus: &str, cpus: Vec<u32>) -> serde_json::Value {
    let mut d = device(name, minor, bus);
    d["cpu_affinity"] = serde_json::json!(cpus);
    d
}

#[test]
fn affinity_over_two_sockets_gives_each_device_its_cores() {
    // 2 sockets x 4 cores x 2 threads: socket 0 = CPUs 0-3,8-11, socket 1 = CPUs 4-7,12-15
    let s0: Vec<u32> = (0..4).chain(8..12).collect();
    let s1: Vec<u32> = (4..8).chain(12..16).collect();
    let fake = Fake::new(&config(vec![
        with_affinity("NVIDIA L40S", 0, "00000000:17:00.0", s0.clone()),
        with_affinity("NVIDIA L40S", 1, "00000000:31:00.0", s0),
        with_affinity("NVIDIA L40S", 2, "00000000:B1:00.0", s1.clone()),
        with_affinity("NVIDIA L40S", 3, "00000000:CA:00.0", s1),
    ]));
    // without topology the CPU ids are used as they are
    let raw = fake.detect();
    assert_eq!(text(&raw.gpus[0].cores).as_deref(), Some("0-3,8-11"));
    let lines: Vec<String> = raw.gres().iter().map(|r| conf_line(r, "n")).collect();
    assert_eq!(
        lines,
        vec![
            "NodeName=n Name=gpu Type=nvidia_l40s File=/dev/nvidia0 Cores=0-3,8-11 Links=-1,0,0,0",
            "NodeName=n Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Cores=0-3,8-11 Links=0,-1,0,0",
            "NodeName=n Name=gpu Type=nvidia_l40s File=/dev/nvidia2 Cores=4-7,12-15 Links=0,0,-1,0",
            "NodeName=n Name=gpu Type=nvidia_l40s File=/dev/nvidia3 Cores=4-7,12-15 Links=0,0,0,-1",
        ]
    );
    assert_eq!(raw.gres_strings(), vec!["gpu:nvidia_l40s:4"]);
    // with topology, hyperthreads fold into Slurm core ids (socket-major)
    support::write_cpu_topology(&fake.root, 2, 4, 2);
    let inv = fake.detect();
    assert_eq!(text(&inv.gpus[0].cores).as_deref(), Some("0-3"));
    assert_eq!(text(&inv.gpus[3].cores).as_deref(), Some("4-7"));
    let cores: Vec<Option<String>> = inv.gres().iter().map(|r| text(&r.cores)).collect();
    let want = |c: &str| Some(c.to_string());
    assert_eq!(
        cores,
        vec![want("0-3"), want("0-3"), want("4-7"), want("4-7")]
    );
}

#[test]
fn devices_of_one_type_with_different_cores_are_not_grouped() {
    let fake = Fake::new(&config(vec![
        with_affinity("Tesla T4", 0, "00000000:01:00.0", vec![0]),
        with_affinity("Tesla T4", 1, "00000000:02:00.0", vec![1]),
        with_affinity("Tesla T4", 2, "00000000:03:00.0", vec![0]),
    ]));
    let specs: Vec<(String, Option<String>)> = fake
        .detect()
        .gres()
        .iter()
        .map(|r| (file_spec(r), text(&r.cores)))
        .collect();
    assert_eq!(
        specs,
        vec![
            ("/dev/nvidia0".to_string(), Some("0".to_string())),
            ("/dev/nvidia1".to_string(), Some("1".to_string())),
            ("/dev/nvidia2".to_string(), Some("0".to_string())),
        ]
    );
}
