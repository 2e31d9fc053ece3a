//! Host files read next to NVML: sysfs PCI devices, nvidia-caps MIG minors, CPU topology.
//! Every path is under a relocatable root (`/` in production).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Counts NVIDIA (vendor 0x10de) display-class (0x03xxxx: VGA/3D) PCI devices under
/// `<root>/sys/bus/pci/devices`. Unreadable entries count as absent.
pub fn count_nvidia_pci(root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root.join("sys/bus/pci/devices")) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let dir = e.path();
            let vendor = read_hex(&dir.join("vendor"));
            let class = read_hex(&dir.join("class"));
            vendor == Some(0x10de) && class.is_some_and(|c| c >> 16 == 0x03)
        })
        .count()
}

fn read_hex(path: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(path).ok()?;
    let t = text.trim();
    u32::from_str_radix(t.strip_prefix("0x").unwrap_or(t), 16).ok()
}

/// `<root>/proc/driver/nvidia-caps/mig-minors`: `gpu0/gi1/access 21` lines → name → minor.
/// A missing file gives an empty map.
pub fn mig_minors(root: &Path) -> HashMap<String, u32> {
    let Ok(text) = std::fs::read_to_string(root.join("proc/driver/nvidia-caps/mig-minors")) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next()?;
            let minor = parts.next()?.parse().ok()?;
            Some((name.to_owned(), minor))
        })
        .collect()
}

/// Maps machine CPU ids to Slurm abstract core ids using
/// `<root>/sys/devices/system/cpu/cpu<N>/topology/{physical_package_id,core_id}`: cores are
/// numbered 0.. in (socket, core id) order, and hyperthreads share their core's id.
/// Returns `None` when the topology cannot be read for every CPU in `cpus`.
pub fn cpu_to_core(root: &Path, cpus: &[u32]) -> Option<HashMap<u32, u32>> {
    let base = root.join("sys/devices/system/cpu");
    let mut topo: HashMap<u32, (u32, u32)> = HashMap::new();
    for entry in std::fs::read_dir(&base).ok()?.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path().join("topology");
        let pkg = read_dec(&dir.join("physical_package_id"));
        let core = read_dec(&dir.join("core_id"));
        if let (Some(pkg), Some(core)) = (pkg, core) {
            topo.insert(id, (pkg, core));
        }
    }
    if cpus.iter().any(|c| !topo.contains_key(c)) {
        return None;
    }
    let ordered: BTreeSet<(u32, u32)> = topo.values().copied().collect();
    let rank: HashMap<(u32, u32), u32> = ordered.into_iter().zip(0..).collect();
    Some(
        topo.into_iter()
            .filter_map(|(cpu, key)| rank.get(&key).map(|r| (cpu, *r)))
            .collect(),
    )
}

fn read_dec(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
