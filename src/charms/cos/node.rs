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
//! The GPU health-check program Slurm runs (issue 40) writes its own file in the same directory,
//! [`XID_TEXTFILE`] ([`xid_metrics`]): `slurm_node_gpu_xid_errors_total{node, gpu, pci_bus_id,
//! xid}`, a counter of the XIDs the kernel logged per GPU and code in this boot, which the alert
//! `SlurmGpuXidDrainClass` reads (`increase(...[15m]) > 0` on the drain-class codes).
//!
//! **Why zeros.** `increase()` needs two samples of a series; a counter first scraped at 1
//! never shows an increase, so the first XID on a GPU would never fire the alert. The program
//! therefore writes a 0 for every GPU it knows and every drain-class code
//! ([`crate::gpu::drain_class_codes`]) before any is logged, as Prometheus's instrumentation
//! guide advises for label values known in advance; other codes appear when first logged.

use super::textfile::{Exposition, MetricType};
use crate::gpu::{Fault, HealthReport, KnownGpu, XidCount, drain_class_codes};

/// The file name the slurmd charm writes in the textfile directory.
pub const GPU_TEXTFILE: &str = "slurm-gpu.prom";
/// The file name the GPU health-check program writes in the textfile directory.
pub const XID_TEXTFILE: &str = "slurm-gpu-xid.prom";
/// The XID counter's name.
pub const XID_METRIC: &str = "slurm_node_gpu_xid_errors_total";

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

/// The XID counters of Slurm node `node`: `counts` (per GPU and code, this boot) and a 0 for
/// each GPU of `known` and each drain-class code not counted yet (see the module
/// documentation). `gpu` is the NVML index of the GPU with that PCI bus id in `known`, empty
/// for a GPU the health check does not know. Sorted by GPU index (unknown GPUs first), bus id,
/// then code.
pub fn xid_metrics(node: &str, known: &[KnownGpu], counts: &[XidCount]) -> String {
    let index_of = |bus: &str| known.iter().find(|k| k.pci_bus_id == bus).map(|k| k.index);
    let mut samples: std::collections::BTreeMap<(Option<u32>, String, u32), u64> =
        std::collections::BTreeMap::new();
    for k in known {
        for code in drain_class_codes() {
            samples.insert((Some(k.index), k.pci_bus_id.clone(), code), 0);
        }
    }
    for c in counts {
        samples.insert(
            (index_of(&c.pci_bus_id), c.pci_bus_id.clone(), c.xid),
            c.count,
        );
    }
    let mut e = Exposition::new();
    e.family(
        XID_METRIC,
        MetricType::Counter,
        "NVIDIA XID errors the kernel logged for the GPU in this boot, per XID code (the slurmd \
         charm's health-check program).",
    );
    for ((index, bus, xid), count) in &samples {
        let gpu = index.map(|i| i.to_string()).unwrap_or_default();
        let xid = xid.to_string();
        e.sample(
            XID_METRIC,
            &[
                ("node", node),
                ("gpu", &gpu),
                ("pci_bus_id", bus),
                ("xid", &xid),
            ],
            *count as f64,
        );
    }
    e.as_str().to_owned()
}
