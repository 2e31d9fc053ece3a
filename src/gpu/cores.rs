//! CPU affinity mask → Slurm core ids.

use std::ffi::c_ulong;
use std::path::Path;

use super::host::cpu_to_core;

/// CPU ids set in an NVML affinity mask (`unsigned long` words, least significant bit = CPU 0).
pub fn mask_to_cpus(words: &[c_ulong]) -> Vec<u32> {
    let mut cpus = Vec::new();
    for (w, word) in words.iter().enumerate() {
        for bit in 0..c_ulong::BITS {
            if word & (1 << bit) != 0 {
                cpus.push(w as u32 * c_ulong::BITS + bit);
            }
        }
    }
    cpus
}

/// Slurm core ids for the CPUs of an affinity mask: mapped through the CPU topology under
/// `root` when it is readable (threads of one core give one id), else the CPU ids themselves.
pub fn cpus_to_cores(root: &Path, cpus: &[u32]) -> Vec<u32> {
    let mut cores: Vec<u32> = match cpu_to_core(root, cpus) {
        Some(map) => cpus.iter().filter_map(|c| map.get(c).copied()).collect(),
        None => cpus.to_vec(),
    };
    cores.sort_unstable();
    cores.dedup();
    cores
}
