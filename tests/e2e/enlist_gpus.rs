//! The fake GPUs of the enlistment test (tests/e2e_enlist.rs): eight layouts from the GPU
//! fixtures, the device files a driver would make for them, and what jobs must see.

use super::e2e::{self, Cluster};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The GPU layouts, assigned round-robin to the slurmd hosts: the fake NVML's fixture
/// (`tests/fixtures/gpu/<name>.json`, `None` = no GPUs) and the `Gres=` Slurm must show for it.
pub const LAYOUTS: &[(Option<&str>, &[&str])] = &[
    (None, &[]),
    (Some("single_l4"), &["gpu:nvidia_l4:1"]),
    (Some("two_t4"), &["gpu:tesla_t4:2"]),
    (
        Some("a100_sxm4_4x_nvlink"),
        &["gpu:nvidia_a100-sxm4-40gb:4"],
    ),
    (
        Some("h100_sxm_8x_nvswitch"),
        &["gpu:nvidia_h100_80gb_hbm3:8"],
    ),
    (
        Some("interleaved_models_shuffled_minors"),
        &["gpu:nvidia_a100_80gb_pcie:3", "gpu:nvidia_l4:3"],
    ),
    (
        Some("a100_mig"),
        &[
            "gpu:nvidia_a100-sxm4-40gb:1",
            "gpu:nvidia_a100_3g.20gb:1",
            "gpu:nvidia_a100_2g.10gb:1",
            "gpu:nvidia_a100_1g.5gb:2",
        ],
    ),
    (Some("mixed"), &["gpu:tesla_t4:2", "gpu:nvidia_l40s:2"]),
];

/// CPU ids of this machine (GPU affinity must name CPUs slurmd has, or it refuses `Cores=`).
fn cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    (0..n).collect()
}

/// One slurmd host's GPUs: the fake NVML's JSON and what Slurm must show.
pub struct Gpus {
    pub config: Value,
    pub gres: BTreeSet<String>,
}

/// Layout `i` (round-robin), with every GPU's CPU affinity set to this machine's CPUs.
pub fn layout(i: usize) -> Gpus {
    let (fixture, gres) = LAYOUTS[i % LAYOUTS.len()];
    let mut config = match fixture {
        None => json!({"devices": []}),
        Some(name) => {
            let p = e2e::repo_root()
                .join("tests/fixtures/gpu")
                .join(format!("{name}.json"));
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        }
    };
    for d in config["devices"].as_array_mut().unwrap() {
        d["cpu_affinity"] = json!(cpus());
    }
    Gpus {
        config,
        gres: gres.iter().map(|s| s.to_string()).collect(),
    }
}

/// `/proc/driver/nvidia-caps/mig-minors` as the driver writes it for `gpus` GPUs (the same
/// numbering as tests/fixtures/gpu/support.rs): 15 GPU instances of 9 minors per GPU.
fn mig_minors_text(gpus: u32) -> String {
    let mut s = String::from("config 1\nmonitor 2\n");
    for g in 0..gpus {
        for gi in 0..15 {
            let base = 3 + g * 135 + gi * 9;
            s.push_str(&format!("gpu{g}/gi{gi}/access {base}\n"));
            for ci in 0..8 {
                s.push_str(&format!("gpu{g}/gi{gi}/ci{ci}/access {}\n", base + 1 + ci));
            }
        }
    }
    s
}

/// What the driver would create for `config`: `/dev/nvidiaN` per GPU and, for MIG instances,
/// `/dev/nvidia-caps/nvidia-capN` of the GPU instance and compute instance, plus the
/// mig-minors table the charm reads.
pub fn install_gpus(cluster: &Cluster, host: &str, config: &Value) {
    let devices = config["devices"].as_array().unwrap();
    let minors: Vec<u32> = devices
        .iter()
        .map(|d| d["minor"].as_u64().unwrap() as u32)
        .collect();
    cluster.add_gpus(host, &minors);
    let mut caps = Vec::new();
    for d in devices {
        let g = d["minor"].as_u64().unwrap() as u32;
        for inst in d["mig"]["instances"].as_array().into_iter().flatten() {
            let gi = inst["gpu_instance_id"].as_u64().unwrap() as u32;
            let ci = inst["compute_instance_id"].as_u64().unwrap_or(0) as u32;
            let gi_minor = 3 + g * 135 + gi * 9;
            caps.push(gi_minor);
            caps.push(gi_minor + 1 + ci);
        }
    }
    if caps.is_empty() {
        return;
    }
    let gpus = minors.iter().max().map_or(0, |m| m + 1);
    cluster.write(
        host,
        "proc/driver/nvidia-caps/mig-minors",
        mig_minors_text(gpus).as_bytes(),
    );
    let dir = cluster.root(host).join("dev/nvidia-caps");
    std::fs::create_dir_all(&dir).unwrap();
    for c in caps {
        let p = dir.join(format!("nvidia-cap{c}"));
        if p.exists() {
            continue;
        }
        let st = std::process::Command::new("mknod")
            .args(["-m", "0444"])
            .arg(&p)
            .args(["c", "511", &c.to_string()])
            .status()
            .expect("mknod");
        assert!(st.success(), "mknod {}", p.display());
    }
}

/// For each GPU type of a host without MIG: the Slurm type and the device minors of that type.
pub fn whole_gpus_by_type(config: &Value) -> BTreeMap<String, Vec<u64>> {
    let devices = config["devices"].as_array().unwrap();
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    if devices.iter().any(|d| d["mig"]["current"] == 1) {
        return out;
    }
    for d in devices {
        let name = d["name"].as_str().unwrap();
        out.entry(slurm_type(name))
            .or_default()
            .push(d["minor"].as_u64().unwrap());
    }
    for m in out.values_mut() {
        m.sort();
    }
    out
}

/// The Slurm GPU type of an NVML name as docs/charms.md states it (lower case, spaces to `_`).
fn slurm_type(nvml_name: &str) -> String {
    nvml_name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
        .to_lowercase()
}
