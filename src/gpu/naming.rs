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

/// MIG profile as Slurm names it from 23.02 on (`_handle_mig` in its NVML plugin; 22.05 always
/// used the attribute rule with rounding to nearest, see `docs/gpu-oracle.md`): the text after
/// `mig_` in the MIG device's NVML name, ASCII-lowercased with spaces as `_`
/// (`NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb` → `1c.3g.20gb`); when the name has none, from the
/// attributes: `<ci slices>c.` if the compute instance has fewer slices than its GPU instance,
/// then `<gi slices>g.<ceil(memorySizeMB / 1024)>gb`.
pub fn mig_profile(
    mig_name: Option<&str>,
    gpu_instance_slices: u32,
    compute_instance_slices: u32,
    memory_size_mb: u64,
) -> String {
    let named = mig_name.map(slurm_type).and_then(|n| {
        n.find("mig_")
            .map(|at| n[at + 4..].to_owned())
            .filter(|p| !p.is_empty())
    });
    if let Some(profile) = named {
        return profile;
    }
    let gb = memory_size_mb.div_ceil(1024);
    let ci = if compute_instance_slices != gpu_instance_slices {
        format!("{compute_instance_slices}c.")
    } else {
        String::new()
    };
    format!("{ci}{gpu_instance_slices}g.{gb}gb")
}

/// Slurm's MIG type: the parent's type cut at the first `-`, then `_` and the profile
/// ([`mig_profile`]). `NVIDIA A100-SXM4-40GB` with `1g.5gb` → `nvidia_a100_1g.5gb`.
pub fn mig_type(parent_nvml_name: &str, profile: &str) -> String {
    let parent = slurm_type(parent_nvml_name);
    let base = parent.split('-').next().unwrap_or(&parent);
    format!("{base}_{profile}")
}
