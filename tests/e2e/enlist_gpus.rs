//! The fake GPUs of the enlistment test (tests/e2e_enlist.rs): eight layouts of 8 GPUs each,
//! put together from the GPU fixtures, the device files a driver would make for them, and what
//! jobs must see.

use super::e2e::{self, Cluster};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// GPUs on every slurmd host of the enlistment (issue 13 item 5: 8 fake GPUs each; for a MIG
/// layout, 8 parent GPUs).
pub const GPUS_PER_HOST: usize = 8;

/// One host's GPU layout: the fixtures (`tests/fixtures/gpu/<name>.json`) put side by side on
/// one host, and the `Gres=` Slurm must show for it. Part `p` keeps its fixture's topology
/// (NVLink peers, shuffled minors, MIG instances) and moves to PCI domain `p` (as on machines
/// whose GPUs sit in PCI segments 0001, 0002 …), its minors after those of the parts before it.
pub struct Layout {
    pub parts: &'static [&'static str],
    pub gres: &'static [&'static str],
}

/// The layouts, assigned round-robin to the hosts of the batch: every host 8 GPUs, the models
/// mixed across hosts and, in four layouts, within the host.
pub const LAYOUTS: &[Layout] = &[
    // 8 H100 SXM behind NVSwitch (18 links each)
    Layout {
        parts: &["h100_sxm_8x_nvswitch"],
        gres: &["gpu:nvidia_h100_80gb_hbm3:8"],
    },
    // two NVLink islands of 4 A100 SXM4
    Layout {
        parts: &["a100_sxm4_4x_nvlink", "a100_sxm4_4x_nvlink"],
        gres: &["gpu:nvidia_a100-sxm4-40gb:8"],
    },
    // three models: A100 PCIe and L4 interleaved in PCI order with shuffled minors, then 2 T4
    Layout {
        parts: &["interleaved_models_shuffled_minors", "two_t4"],
        gres: &[
            "gpu:nvidia_a100_80gb_pcie:3",
            "gpu:nvidia_l4:3",
            "gpu:tesla_t4:2",
        ],
    },
    // T4 and L40S interleaved, minors with gaps (0, 2, 3, 5, 6, 8, 9, 11)
    Layout {
        parts: &["mixed", "mixed"],
        gres: &["gpu:tesla_t4:4", "gpu:nvidia_l40s:4"],
    },
    // 8 A100 SXM4, every other one in MIG mode (3g.20gb, 2g.10gb, 2 × 1g.5gb each)
    Layout {
        parts: &["a100_mig", "a100_mig", "a100_mig", "a100_mig"],
        gres: &[
            "gpu:nvidia_a100-sxm4-40gb:4",
            "gpu:nvidia_a100_3g.20gb:4",
            "gpu:nvidia_a100_2g.10gb:4",
            "gpu:nvidia_a100_1g.5gb:8",
        ],
    },
    // 4 pairs of H100 NVL joined by NVLink bridges
    Layout {
        parts: &["nvl_bridge_pairs", "nvl_bridge_pairs"],
        gres: &["gpu:nvidia_h100_nvl:8"],
    },
    // V100 SXM2 in partial NVLink meshes, minors in reverse PCI order
    Layout {
        parts: &["partial_nvlink_mesh", "partial_nvlink_mesh"],
        gres: &["gpu:tesla_v100-sxm2-32gb:8"],
    },
    // six models on one host, two of them named alike but for a double space
    Layout {
        parts: &["mixed", "odd_spacing_names", "single_l4"],
        gres: &[
            "gpu:tesla_t4:2",
            "gpu:nvidia_l40s:2",
            "gpu:nvidia_rtx__a6000:1",
            "gpu:nvidia_rtx_a6000:1",
            "gpu:quadro_rtx_8000:1",
            "gpu:nvidia_l4:1",
        ],
    },
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

fn fixture(name: &str) -> Value {
    let p = e2e::repo_root()
        .join("tests/fixtures/gpu")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A PCI bus id (`00000000:1B:00.0`) moved to PCI domain `domain`.
fn in_domain(bus_id: &str, domain: u32) -> String {
    let (d, rest) = bus_id
        .split_once(':')
        .unwrap_or_else(|| panic!("PCI bus id {bus_id}"));
    let d = u32::from_str_radix(d, 16).unwrap_or_else(|e| panic!("PCI bus id {bus_id}: {e}"));
    format!("{:08X}:{rest}", d + domain)
}

/// A GPU or MIG UUID made unique to part `p`: the first 4 digits of its last group say `p`.
fn in_part(uuid: &str, p: usize) -> String {
    let (head, last) = uuid
        .rsplit_once('-')
        .unwrap_or_else(|| panic!("UUID {uuid}"));
    assert!(last.len() >= 4, "UUID {uuid}");
    format!("{head}-{p:04x}{}", &last[4..])
}

/// Layout `i` (round-robin), with every GPU's CPU affinity set to this machine's CPUs.
pub fn layout(i: usize) -> Gpus {
    let l = &LAYOUTS[i % LAYOUTS.len()];
    let mut config = json!({});
    let mut devices: Vec<Value> = Vec::new();
    let mut next_minor = 0;
    for (p, name) in l.parts.iter().enumerate() {
        let mut f = fixture(name);
        let devs = f["devices"].take();
        if p == 0 {
            config = f;
        }
        let devs = devs
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no devices"));
        let minor = |d: &Value| d["minor"].as_u64().unwrap();
        let top = devs.iter().map(minor).max().map_or(0, |m| m + 1);
        for d in devs {
            let mut d = d.clone();
            d["minor"] = json!(minor(&d) + next_minor);
            d["cpu_affinity"] = json!(cpus());
            if p > 0 {
                let dom = p as u32;
                d["pci_bus_id"] = json!(in_domain(d["pci_bus_id"].as_str().unwrap(), dom));
                // (get_mut, not `d[key]`: indexing a missing key would add it as null)
                if let Some(links) = d.get_mut("nvlinks").and_then(Value::as_array_mut) {
                    for link in links.iter_mut().filter(|l| !l.is_null()) {
                        *link = json!(in_domain(link.as_str().unwrap(), dom));
                    }
                }
                d["uuid"] = json!(in_part(d["uuid"].as_str().unwrap(), p));
                let mig = d.get_mut("mig").and_then(|m| m.get_mut("instances"));
                if let Some(insts) = mig.and_then(Value::as_array_mut) {
                    for inst in insts {
                        inst["uuid"] = json!(in_part(inst["uuid"].as_str().unwrap(), p));
                    }
                }
            }
            devices.push(d);
        }
        next_minor += top;
    }
    assert_eq!(
        devices.len(),
        GPUS_PER_HOST,
        "layout {:?}: {GPUS_PER_HOST} GPUs per host",
        l.parts
    );
    for key in ["uuid", "pci_bus_id", "minor"] {
        let distinct: BTreeSet<String> = devices.iter().map(|d| d[key].to_string()).collect();
        assert_eq!(
            distinct.len(),
            devices.len(),
            "layout {:?}: {key} repeats",
            l.parts
        );
    }
    config["devices"] = Value::Array(devices);
    Gpus {
        config,
        gres: l.gres.iter().map(|s| s.to_string()).collect(),
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

/// The Slurm GPU type of an NVML name as docs/charms.md states it: lower case, each space to
/// `_` (`NVIDIA RTX  A6000`, two spaces, is `nvidia_rtx__a6000`, as Slurm's AutoDetect names it).
fn slurm_type(nvml_name: &str) -> String {
    nvml_name.replace(' ', "_").to_lowercase()
}
