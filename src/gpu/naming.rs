//! Slurm GPU type names (slurm-gres.md §3.1, §3.2).

/// Slurm's type for an NVML device name: ASCII lowercase, each `' '` → `'_'`, nothing else
/// (`gpu_common_underscorify_tolower`). `NVIDIA A100-SXM4-80GB` → `nvidia_a100-sxm4-80gb`.
pub fn slurm_type(nvml_name: &str) -> String {
    nvml_name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            ' ' => '_',
            other => other,
        })
        .collect()
}

/// MIG profile as Slurm 22.05 derives it: `<gpuInstanceSliceCount>g.<round(memorySizeMB/1024)>gb`.
pub fn mig_profile(gpu_instance_slices: u32, memory_size_mb: u64) -> String {
    let gb = (memory_size_mb + 512) / 1024;
    format!("{gpu_instance_slices}g.{gb}gb")
}

/// Slurm 22.05 MIG type: the parent's type cut at the first `-`, then `_` and the profile.
/// `NVIDIA A100-SXM4-40GB` with 1 slice and 4864 MB → `nvidia_a100_1g.5gb`.
pub fn mig_type(parent_nvml_name: &str, gpu_instance_slices: u32, memory_size_mb: u64) -> String {
    let parent = slurm_type(parent_nvml_name);
    let base = parent.split('-').next().unwrap_or(&parent);
    format!(
        "{base}_{}",
        mig_profile(gpu_instance_slices, memory_size_mb)
    )
}
