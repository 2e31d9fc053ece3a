//! The slurmd charm's GPU health metrics (`slurm-gpu.prom` in node-exporter's textfile
//! directory), from the health report of the hook ([`crate::gpu::HealthReport`]).
//!
//! | metric | labels | value |
//! | --- | --- | --- |
//! | `slurm_node_gpus` | `node` | GPUs the health check knows on this node |
//! | `slurm_node_gpu_healthy` | `node`, `gpu` (NVML index), `pci_bus_id` | 1 healthy, 0 failing |
//! | `slurm_node_gpu_fault` | `node`, `gpu`, `pci_bus_id`, `fault` | 1 per fault found |
//!
//! `fault` is one of `lost`, `uncorrectable_ecc`, `retired_pages_pending`,
//! `row_remap_failure`, `cannot_open`, `disappeared`, `unreadable` ([`fault_label`]).
//!
//! Reserved for the GPU health-check program Slurm runs (issue 40), which writes its own file
//! in the same directory: `slurm_node_gpu_xid_errors_total{node, gpu, xid}` (counter: XID
//! events seen per GPU and XID code since the driver loaded); the alert
//! `SlurmGpuXidDrainClass` reads it.

use super::textfile::{Exposition, MetricType};
use crate::gpu::{Fault, HealthReport};

/// The file name the slurmd charm writes in the textfile directory.
pub const GPU_TEXTFILE: &str = "slurm-gpu.prom";

/// The `fault` label of a [`Fault`].
pub fn fault_label(fault: &Fault) -> &'static str {
    match fault {
        Fault::Lost => "lost",
        Fault::UncorrectableEcc { .. } => "uncorrectable_ecc",
        Fault::RetiredPagesPending => "retired_pages_pending",
        Fault::RowRemapFailure => "row_remap_failure",
        Fault::CannotOpen { .. } => "cannot_open",
        Fault::Disappeared => "disappeared",
        Fault::Unreadable { .. } => "unreadable",
        Fault::Xid { .. } => "xid",
    }
}

/// The metrics text of `report` for Slurm node `node`. GPUs are in NVML index order.
pub fn gpu_metrics(node: &str, report: &HealthReport) -> String {
    // Every GPU: the remembered ones and any failing one not remembered (cannot be opened).
    let mut gpus: Vec<(u32, String)> = report
        .known
        .iter()
        .map(|k| (k.index, k.pci_bus_id.clone()))
        .collect();
    for p in &report.problems {
        if !gpus.iter().any(|(i, _)| *i == p.index) {
            gpus.push((p.index, p.pci_bus_id.clone().unwrap_or_default()));
        }
    }
    gpus.sort();
    let mut e = Exposition::new();
    e.family(
        "slurm_node_gpus",
        MetricType::Gauge,
        "GPUs the slurmd charm's health check knows on this node.",
    )
    .sample("slurm_node_gpus", &[("node", node)], gpus.len() as f64);
    e.family(
        "slurm_node_gpu_healthy",
        MetricType::Gauge,
        "1 when the GPU passed the slurmd charm's health check, 0 when it is failing or lost.",
    );
    for (index, bus) in &gpus {
        let failing = report.problems.iter().any(|p| p.index == *index);
        let gpu = index.to_string();
        e.sample(
            "slurm_node_gpu_healthy",
            &[("node", node), ("gpu", &gpu), ("pci_bus_id", bus)],
            if failing { 0.0 } else { 1.0 },
        );
    }
    e.family(
        "slurm_node_gpu_fault",
        MetricType::Gauge,
        "1 for each fault the slurmd charm's health check found on a GPU.",
    );
    for p in &report.problems {
        let gpu = p.index.to_string();
        let bus = p.pci_bus_id.clone().unwrap_or_default();
        e.sample(
            "slurm_node_gpu_fault",
            &[
                ("node", node),
                ("gpu", &gpu),
                ("pci_bus_id", &bus),
                ("fault", fault_label(&p.fault)),
            ],
            1.0,
        );
    }
    e.as_str().to_owned()
}
