//! Node `Features` derived from the detected GPUs, so jobs can ask for a GPU model or a CUDA
//! generation with `--constraint` (`sbatch --constraint=nvidia_h100_80gb_hbm3&cuda12`).

use super::model::Inventory;
use crate::slurm::types::{Feature, VocabError};

/// The node features derived from the GPUs, checked as [`Feature`]s where they are made (the
/// GPU types come from NVML names), and the ones Slurm would not match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuFeatures {
    /// Each whole-GPU Slurm type, in NVML order without repeats, then `cuda<major>`.
    pub features: Vec<Feature>,
    /// Derived features Slurm would not match (a GPU type `all` or `default` is a GRES type
    /// but a reserved name): left out of `Features`, and reported so the operator sees why.
    pub refused: Vec<VocabError>,
}

impl GpuFeatures {
    /// Keeps a derived feature, or the reason Slurm would not match it.
    fn keep(&mut self, feature: Result<Feature, VocabError>) {
        match feature {
            Ok(f) => self.features.push(f),
            Err(e) => self.refused.push(e),
        }
    }
}

/// The features of a node with these GPUs: each whole-GPU Slurm type (the `Type=` of its GRES,
/// e.g. `nvidia_h100_80gb_hbm3`), in NVML order without repeats, then `cuda<major>` from the
/// driver's CUDA version (`12.4` → `cuda12`). No GPUs: none.
pub fn gpu_features(inv: &Inventory) -> GpuFeatures {
    let mut out = GpuFeatures::default();
    let mut types: Vec<&str> = Vec::new();
    for gpu in &inv.gpus {
        let t = gpu.slurm_type.as_str();
        if types.contains(&t) {
            continue;
        }
        types.push(t);
        out.keep(Feature::try_from(t));
    }
    if types.is_empty() {
        return out;
    }
    if let Some(major) = inv
        .cuda_version
        .as_deref()
        .and_then(|v| v.split('.').next())
        .filter(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
    {
        out.keep(Feature::try_from(format!("cuda{major}")));
    }
    out
}

/// `operator` features (from `node-config`, kept first and in order) followed by the `gpu`
/// features not already there; the `Features` of the node.
pub fn merge_features(operator: &[Feature], gpu: &[Feature]) -> Vec<Feature> {
    let mut out = operator.to_vec();
    for f in gpu {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(list: &str) -> Vec<Feature> {
        Feature::parse_list(list).unwrap()
    }

    #[test]
    fn merge_keeps_operator_first_without_repeats() {
        let gpu = features("tesla_t4,cuda12");
        assert_eq!(merge_features(&[], &gpu), gpu);
        assert_eq!(
            merge_features(&features("ib,tesla_t4"), &gpu),
            features("ib,tesla_t4,cuda12")
        );
        assert_eq!(merge_features(&features("ib"), &[]), features("ib"));
        assert!(merge_features(&[], &[]).is_empty());
    }

    fn gpu(index: u32, slurm_type: &str) -> super::super::Gpu {
        super::super::Gpu {
            index,
            name: slurm_type.to_uppercase(),
            slurm_type: slurm_type.parse().unwrap(),
            minor: index,
            uuid: format!("GPU-{index}"),
            pci_bus_id: format!("00000000:0{index}:00.0"),
            memory_total_bytes: None,
            cores: None,
            links: None,
            nvlink_remotes: Vec::new(),
            mig: None,
        }
    }

    #[test]
    fn a_gpu_type_slurm_reserves_is_reported_not_dropped() {
        let mut inv = Inventory {
            gpus: vec![gpu(0, "tesla_t4"), gpu(1, "all"), gpu(2, "tesla_t4")],
            cuda_version: Some("12.4".into()),
            ..Default::default()
        };
        let f = gpu_features(&inv);
        assert_eq!(f.features, features("tesla_t4,cuda12"));
        assert_eq!(f.refused.len(), 1, "{f:?}");
        let e = f.refused[0].to_string();
        assert!(e.contains("Features") && e.contains("\"all\""), "{e}");
        inv.gpus.clear();
        assert_eq!(gpu_features(&inv), GpuFeatures::default());
    }
}
