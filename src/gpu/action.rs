//! The `detect-gpus` action result map.

use serde_json::{Map, Value, json};

use super::model::{Gpu, Inventory, MigInstance};
use crate::slurm::render::render_gres_records;

/// Result of the `detect-gpus` action as a nested map of strings (every dotted key segment
/// matches Juju's `^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`):
///
/// - `summary`: one readable line (`"no NVIDIA GPUs detected"` when there are none);
/// - `node-name`, `gpu-count`, `driver-version`, `cuda-version` (the last two only when known);
/// - `gres`: the slurm.conf `Gres=` value (`gpu:tesla_t4:2,…`), `gres-conf`: the gres.conf lines
///   this node would get, one per line (both only when there are GPUs);
/// - `gpus.<index>.{index,model,slurm-type,device-file,uuid,pci-bus-id,memory-mib,cores,links}`
///   and, for MIG GPUs, `gpus.<index>.mig.<n>.{uuid,profile,slurm-type,gpu-instance-id,
///   compute-instance-id,memory-mib,files}`;
/// - `findings.<n>`: operator messages (driver not loaded, skipped devices, …).
pub fn action_results(inv: &Inventory, node_name: &str) -> Value {
    let mut out = Map::new();
    let records = inv.gres();
    let gres_count: u64 = records.iter().map(|r| r.device_count()).sum();
    let summary = if inv.gpus.is_empty() {
        "no NVIDIA GPUs detected".to_owned()
    } else {
        format!(
            "{} NVIDIA GPU{} detected, {} GRES: {}",
            inv.gpus.len(),
            if inv.gpus.len() == 1 { "" } else { "s" },
            gres_count,
            inv.gres_strings().join(",")
        )
    };
    out.insert("summary".into(), summary.into());
    out.insert("node-name".into(), node_name.into());
    out.insert("gpu-count".into(), inv.gpus.len().to_string().into());
    if let Some(v) = &inv.driver_version {
        out.insert("driver-version".into(), v.clone().into());
    }
    if let Some(v) = &inv.cuda_version {
        out.insert("cuda-version".into(), v.clone().into());
    }
    if !records.is_empty() {
        out.insert("gres".into(), inv.gres_strings().join(",").into());
        let lines = render_gres_records(node_name, &records);
        out.insert("gres-conf".into(), lines.join("\n").into());
    }
    if !inv.gpus.is_empty() {
        let gpus: Map<String, Value> = inv
            .gpus
            .iter()
            .map(|g| (g.index.to_string(), gpu_value(g)))
            .collect();
        out.insert("gpus".into(), Value::Object(gpus));
    }
    if !inv.findings.is_empty() {
        let findings: Map<String, Value> = inv
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| (i.to_string(), f.to_string().into()))
            .collect();
        out.insert("findings".into(), Value::Object(findings));
    }
    Value::Object(out)
}

fn gpu_value(g: &Gpu) -> Value {
    let mut m = Map::new();
    m.insert("index".into(), g.index.to_string().into());
    m.insert("model".into(), g.name.clone().into());
    m.insert("slurm-type".into(), g.slurm_type.to_string().into());
    m.insert("device-file".into(), g.device_file().into());
    m.insert("uuid".into(), g.uuid.clone().into());
    m.insert("pci-bus-id".into(), g.pci_bus_id.clone().into());
    if let Some(bytes) = g.memory_total_bytes {
        m.insert(
            "memory-mib".into(),
            (bytes / (1024 * 1024)).to_string().into(),
        );
    }
    if let Some(cores) = &g.cores {
        m.insert("cores".into(), cores.to_string().into());
    }
    if let Some(links) = &g.links {
        let s: Vec<String> = links.iter().map(i32::to_string).collect();
        m.insert("links".into(), s.join(",").into());
    }
    if let Some(instances) = &g.mig {
        m.insert("mig-mode".into(), "enabled".into());
        let mig: Map<String, Value> = instances
            .iter()
            .enumerate()
            .map(|(i, inst)| (i.to_string(), mig_value(inst)))
            .collect();
        m.insert("mig".into(), Value::Object(mig));
    }
    Value::Object(m)
}

fn mig_value(m: &MigInstance) -> Value {
    json!({
        "uuid": m.uuid,
        "profile": m.profile,
        "slurm-type": m.slurm_type,
        "gpu-instance-id": m.gpu_instance_id.to_string(),
        "compute-instance-id": m.compute_instance_id.to_string(),
        "memory-mib": m.memory_mb.to_string(),
        "files": m.files.to_string(),
    })
}
