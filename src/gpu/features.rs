//! Node `Features` derived from the detected GPUs, so jobs can ask for a GPU model or a CUDA
//! generation with `--constraint` (`sbatch --constraint=nvidia_h100_80gb_hbm3&cuda12`).

use super::model::Inventory;

/// The features of a node with these GPUs: each whole-GPU Slurm type (the `Type=` of its GRES,
/// e.g. `nvidia_h100_80gb_hbm3`), in NVML order without repeats, then `cuda<major>` from the
/// driver's CUDA version (`12.4` → `cuda12`). No GPUs: none.
pub fn gpu_features(inv: &Inventory) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for gpu in &inv.gpus {
        let t = gpu.slurm_type.to_string();
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return out;
    }
    if let Some(major) = inv
        .cuda_version
        .as_deref()
        .and_then(|v| v.split('.').next())
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
    {
        out.push(format!("cuda{major}"));
    }
    out
}

/// `operator` features (a comma list from `node-config`, kept first and in order) followed by
/// the `gpu` features not already in it; the `Features` value of the node.
pub fn merge_features(operator: Option<&str>, gpu: &[String]) -> String {
    let mut out: Vec<String> = operator
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect();
    for f in gpu {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_operator_first_without_repeats() {
        let gpu = vec!["tesla_t4".to_string(), "cuda12".to_string()];
        assert_eq!(merge_features(None, &gpu), "tesla_t4,cuda12");
        assert_eq!(
            merge_features(Some("ib,tesla_t4"), &gpu),
            "ib,tesla_t4,cuda12"
        );
        assert_eq!(merge_features(Some("ib"), &[]), "ib");
        assert_eq!(merge_features(Some(""), &[]), "");
    }
}
