//! Sanity checks on what NVML reports, before any of it becomes a Slurm word: facts Slurm
//! cannot use are refused for the GPU or MIG instance they describe, each with a [`Finding`]
//! that names it (PCI bus id, minor) and the problem, and the rest of the node is kept.
//!
//! - **Shared minor numbers**: two GPUs reporting one minor would both be `/dev/nvidiaN`; a
//!   gres.conf naming a device file twice makes `slurmd -G` fatal, and which GPU the file really
//!   opens cannot be known, so every GPU sharing the minor is left out.
//! - **MIG attributes**: a GPU instance has 1 to [`MAX_MIG_SLICES`] slices, its compute
//!   instance 1 to that many, and at least 1 MiB but no more memory than its parent GPU (or,
//!   when the parent's memory is unknown, [`MAX_MIG_MEMORY_MIB`]). Anything else (e.g.
//!   4294967295 slices, which would become type `nvidia_a100_4294967295g.0gb`) is a broken
//!   driver answer, and the instance is left out.
//! - **Names** are judged where the type is made ([`super::detect`]): a name that gives no
//!   [`crate::slurm::types::GresType`] (empty, only spaces, only digits) leaves its GPU out.

use std::collections::BTreeMap;

use super::finding::Finding;
use super::model::Gpu;

/// Most slices a MIG GPU instance can have (NVML's largest profile is 8 slices).
pub const MAX_MIG_SLICES: u32 = 8;

/// Largest MIG instance memory believed when the parent GPU's memory is unknown (1 TiB).
pub const MAX_MIG_MEMORY_MIB: u64 = 1 << 20;

/// Removes every GPU whose minor number another GPU also reports, with one
/// [`Finding::SharedMinor`] per minor naming all of them by PCI bus id.
pub fn drop_shared_minors(gpus: &mut Vec<Gpu>, findings: &mut Vec<Finding>) {
    let mut by_minor: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for g in gpus.iter() {
        by_minor
            .entry(g.minor)
            .or_default()
            .push(g.pci_bus_id.clone());
    }
    for (minor, pci_bus_ids) in &by_minor {
        if pci_bus_ids.len() > 1 {
            findings.push(Finding::SharedMinor {
                minor: *minor,
                pci_bus_ids: pci_bus_ids.clone(),
            });
        }
    }
    gpus.retain(|g| by_minor.get(&g.minor).is_some_and(|ids| ids.len() == 1));
}

/// Why NVML's attributes of a MIG instance cannot be true, if they cannot: slice counts outside
/// 1..=[`MAX_MIG_SLICES`] (compute slices at most the GPU instance's), memory of 0 or above the
/// parent GPU's (`parent_memory_bytes`; [`MAX_MIG_MEMORY_MIB`] when unknown).
pub fn implausible_mig(
    gpu_instance_slices: u32,
    compute_instance_slices: u32,
    memory_size_mb: u64,
    parent_memory_bytes: Option<u64>,
) -> Option<String> {
    if !(1..=MAX_MIG_SLICES).contains(&gpu_instance_slices) {
        return Some(format!(
            "NVML reports {gpu_instance_slices} GPU instance slices (a MIG instance has 1 to \
             {MAX_MIG_SLICES})"
        ));
    }
    if !(1..=gpu_instance_slices).contains(&compute_instance_slices) {
        return Some(format!(
            "NVML reports {compute_instance_slices} compute instance slices in a \
             {gpu_instance_slices}-slice GPU instance"
        ));
    }
    let limit = parent_memory_bytes
        .filter(|b| *b > 0)
        .map(|b| b / (1024 * 1024));
    let (max, of) = match limit {
        Some(mib) => (mib, "its GPU's memory"),
        None => (MAX_MIG_MEMORY_MIB, "the largest believable size"),
    };
    if memory_size_mb == 0 || memory_size_mb > max {
        return Some(format!(
            "NVML reports {memory_size_mb} MiB of memory (0 or above {of}, {max} MiB)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_bounds() {
        let gib40 = Some(40u64 << 30);
        assert_eq!(implausible_mig(1, 1, 4864, gib40), None);
        assert_eq!(implausible_mig(7, 7, 40960, gib40), None);
        assert_eq!(implausible_mig(3, 1, 19968, None), None);
        for (gi, ci, mem, parent) in [
            (u32::MAX, u32::MAX, 0, gib40),
            (0, 0, 4864, gib40),
            (9, 9, 4864, gib40),
            (2, 3, 4864, gib40),
            (1, 1, 0, gib40),
            (1, 1, 4_294_967_295, gib40),
            (1, 1, 40961, gib40),
            (1, 1, (1 << 20) + 1, None),
        ] {
            assert!(
                implausible_mig(gi, ci, mem, parent).is_some(),
                "{gi} {ci} {mem}"
            );
        }
    }
}
