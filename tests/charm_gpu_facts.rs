//! Bad GPU facts from NVML (issue 11), through the simulator, the real charm binary and the
//! fake NVML: two GPUs reporting one minor number, MIG instances with impossible sizes, names
//! that give no Slurm GRES type. Each bad GPU (or MIG instance) is left out and the unit is
//! blocked with words naming it (PCI bus id, minor, name) and the problem; the good GPUs are
//! still enlisted; the controller never renders the bad facts; the unit never says `active`
//! while one of its GPUs is missing.

#[path = "charm_support.rs"]
mod support;

use serde_json::{Value, json};
use support::*;

/// `/proc/driver/nvidia-caps/mig-minors` for GPU minor 0: GPU instances 1..=14, each with
/// compute instances 0..=7.
fn mig_minors() -> String {
    let mut s = String::from("config 1\nmonitor 2\n");
    for gi in 0..15u32 {
        let base = 3 + gi * 9;
        s.push_str(&format!("gpu0/gi{gi}/access {base}\n"));
        for ci in 0..8 {
            s.push_str(&format!("gpu0/gi{gi}/ci{ci}/access {}\n", base + 1 + ci));
        }
    }
    s
}

/// A controller and one slurmd unit whose fake NVML lists `devices`, related; `/dev/nvidia0`
/// to `/dev/nvidia3` exist, and the MIG minors of GPU 0 are published.
fn cluster_with(devices: Value) -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    let root = c.root("slurmd/0");
    std::fs::create_dir_all(root.join("dev")).unwrap();
    for minor in 0..4 {
        std::fs::write(root.join(format!("dev/nvidia{minor}")), "").unwrap();
    }
    std::fs::create_dir_all(root.join("proc/driver/nvidia-caps")).unwrap();
    std::fs::write(
        root.join("proc/driver/nvidia-caps/mig-minors"),
        mig_minors(),
    )
    .unwrap();
    set_devices(&c, devices);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

/// Replaces the fake NVML's device list of slurmd/0.
fn set_devices(c: &Cluster, devices: Value) {
    let cfg =
        json!({"driver_version": "550.54.15", "cuda_driver_version": 12040, "devices": devices});
    std::fs::write(c.root("slurmd/0").join("nvml.json"), cfg.to_string()).unwrap();
}

fn gpu(name: &str, minor: u32, bus: &str) -> Value {
    json!({"name": name, "uuid": format!("GPU-{minor:08x}-0000-4000-8000-{}", &bus[5..7]),
           "pci_bus_id": bus, "minor": minor, "memory_total": 16u64 << 30})
}

/// Everything the charms logged (juju-log and stderr).
fn logs(c: &Cluster) -> String {
    let juju_log = c.sim.logs().into_iter().map(|l| l.message + "\n");
    let stderr = c.sim.records().iter().map(|r| r.stderr.clone());
    juju_log.chain(stderr).collect()
}

/// The controller's node line for slurmd-0.
fn node_line(c: &Cluster) -> String {
    c.slurm_records()
        .into_iter()
        .find(|l| l.starts_with("NodeName=slurmd-0 "))
        .unwrap_or_else(|| panic!("slurmd-0 not enlisted: {:?}", c.slurm_records()))
}

#[test]
fn gpus_sharing_a_minor_are_left_out_and_named() {
    let c = cluster_with(json!([
        gpu("Tesla T4", 0, "00000000:3B:00.0"),
        gpu("Tesla T4", 1, "00000000:5E:00.0"),
        gpu("Tesla T4", 0, "00000000:D8:00.0"),
    ]));
    let (status, message) = c.status("slurmd/0");
    assert_eq!(status, "blocked", "{message}");
    for word in [
        "00000000:3B:00.0",
        "00000000:D8:00.0",
        "minor number 0",
        "/dev/nvidia0",
    ] {
        assert!(message.contains(word), "{word} not in {message:?}");
    }
    assert!(!message.contains("5E:00.0"), "{message}");
    // The good GPU is enlisted; /dev/nvidia0 is in no file.
    assert!(
        node_line(&c).contains("Gres=gpu:tesla_t4:1 "),
        "{}",
        node_line(&c)
    );
    let gres = c.gres_conf();
    assert!(gres.contains("/dev/nvidia1"), "{gres}");
    assert!(!gres.contains("/dev/nvidia0"), "{gres}");
}

#[test]
fn a_gpu_whose_name_gives_no_slurm_type_blocks_naming_it() {
    for (name, shown) in [
        ("   ", r#""   ""#),
        ("1234", r#""1234""#),
        ("", r#""""#),
        ("Tesla:T4", r#""Tesla:T4""#),
    ] {
        let c = cluster_with(json!([
            gpu("Tesla T4", 0, "00000000:3B:00.0"),
            gpu(name, 1, "00000000:D8:00.0"),
        ]));
        let (status, message) = c.status("slurmd/0");
        assert_eq!(status, "blocked", "{name:?}: {message}");
        for word in ["GPU 1 (00000000:D8:00.0)", shown, "no GRES type"] {
            assert!(
                message.contains(word),
                "{name:?}: {word} not in {message:?}"
            );
        }
        if name == "1234" {
            assert!(message.contains("count"), "{message}");
        }
        // The good GPU is enlisted, the bad one is in no file and no Gres.
        assert!(
            node_line(&c).contains("Gres=gpu:tesla_t4:1 "),
            "{}",
            node_line(&c)
        );
        let gres = c.gres_conf();
        assert!(
            !gres.contains("/dev/nvidia1") && !gres.contains("___"),
            "{gres}"
        );
        assert!(!c.slurm_conf().contains("gpu:1234"), "{}", c.slurm_conf());
    }
}

#[test]
fn a_bad_name_is_not_blamed_on_node_config_overrides() {
    let mut c = cluster_with(json!(TWO_T4_JSON()));
    let r = c
        .sim
        .run_action(
            "slurmd/0",
            "node-config",
            json!({"parameters": "Weight=10"}),
        )
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    assert_eq!(c.status("slurmd/0").0, "active");
    c.sim.clear_records();
    set_devices(
        &c,
        json!([
            gpu("Tesla T4", 0, "00000000:3B:00.0"),
            gpu("1234", 1, "00000000:D8:00.0"),
        ]),
    );
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    let (status, message) = c.status("slurmd/0");
    assert_eq!(status, "blocked", "{message}");
    assert!(message.contains("GPU 1 (00000000:D8:00.0)"), "{message}");
    let log = logs(&c);
    assert!(!log.contains("node-config overrides"), "{log}");
    assert!(log.contains("00000000:D8:00.0"), "{log}");
    // The operator's override still applies to the node with its good GPU.
    let line = node_line(&c);
    assert!(line.contains("Weight=10"), "{line}");
    assert!(line.contains("Gres=gpu:tesla_t4:1 "), "{line}");
}

#[allow(non_snake_case)]
fn TWO_T4_JSON() -> Value {
    json!([
        gpu("Tesla T4", 0, "00000000:3B:00.0"),
        gpu("Tesla T4", 1, "00000000:D8:00.0"),
    ])
}

/// An A100 40GB in MIG mode with the given instances (no names: types from the attributes).
fn a100_mig(instances: Value) -> Value {
    json!([{
        "name": "NVIDIA A100-SXM4-40GB", "uuid": "GPU-a1000000-0000-4000-8000-000000000000",
        "pci_bus_id": "00000000:07:00.0", "minor": 0, "memory_total": 42949672960u64,
        "mig": {"current": 1, "max_devices": 7, "instances": instances}
    }])
}

fn instance(slot: u32, gi: u32, slices: u64, memory_mb: u64) -> Value {
    json!({"slot": slot, "uuid": format!("MIG-{gi:08x}-0000-5000-8000-000000000000"),
           "name": "", "gpu_instance_id": gi, "compute_instance_id": 0,
           "gpu_instance_slice_count": slices, "compute_instance_slice_count": slices,
           "memory_size_mb": memory_mb})
}

#[test]
fn mig_instances_with_impossible_sizes_are_left_out_and_named() {
    for (slices, memory_mb, says) in [
        (4_294_967_295u64, 0u64, "4294967295 GPU instance slices"),
        (1, 4_294_967_295, "4294967295 MiB"),
        (1, 0, "0 MiB"),
        (2, 40 * 1024 + 1, "above its GPU's memory"),
    ] {
        let c = cluster_with(a100_mig(json!([
            instance(0, 9, 1, 4864),
            instance(1, 3, slices, memory_mb),
        ])));
        let (status, message) = c.status("slurmd/0");
        assert_eq!(status, "blocked", "{slices}/{memory_mb}: {message}");
        for word in ["MIG device 1 of GPU 00000000:07:00.0 (/dev/nvidia0)", says] {
            assert!(message.contains(word), "{word} not in {message:?}");
        }
        // The sane instance is enlisted; the absurd one is nowhere.
        assert!(
            node_line(&c).contains("Gres=gpu:nvidia_a100_1g.5gb:1 "),
            "{}",
            node_line(&c)
        );
        let gres = c.gres_conf();
        assert_eq!(gres.matches("MultipleFiles=").count(), 1, "{gres}");
        assert!(!gres.contains("4294967295"), "{gres}");
        assert!(!c.slurm_conf().contains("4294967295"));
    }
}

#[test]
fn a_gpu_type_no_job_could_ask_for_is_left_out_of_features_with_a_warning() {
    let c = cluster_with(json!([
        gpu("Tesla T4", 0, "00000000:3B:00.0"),
        gpu("ALL", 1, "00000000:D8:00.0"),
    ]));
    c.assert_no_errors();
    let line = node_line(&c);
    assert!(line.contains("Gres=gpu:tesla_t4:1,gpu:all:1 "), "{line}");
    assert!(line.ends_with(" Features=tesla_t4,cuda12"), "{line}");
    let log = logs(&c);
    assert!(
        log.contains("a GPU feature is left out of the node's Features (invalid Features \"all\""),
        "{log}"
    );
}
