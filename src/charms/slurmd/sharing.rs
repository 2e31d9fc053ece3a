//! The slurmd side of `gpu-sharing`: the node's shared GRES records (`shard`/`mps`, built by
//! [`crate::gpu::GpuSharing::records`]) join its `gpu` records before the node record is built,
//! and the status and `detect-gpus` say what is shared. A bad value is refused in
//! [`super::desired`] (blocked, the published record kept).

use crate::gpu::{GpuSharing, Inventory, SharingError, SharingOutcome};
use crate::slurm::GresLine;
use serde_json::{Map, Value};

/// Appends the shared records for `gres` (the node's `gpu` records) as the config asks, and
/// returns the note the active status ends with (`""`, `" (shard:4 per GPU)"`, or why nothing
/// is shared). A MIG node is not shared: a warning says so.
pub fn add_shared_records(
    sharing: &Result<GpuSharing, SharingError>,
    gres: &mut Vec<GresLine>,
    warnings: &mut Vec<String>,
) -> String {
    let Ok(sharing) = *sharing else {
        return String::new();
    };
    let (shared, outcome) = sharing.records(gres);
    gres.extend(shared);
    note(sharing, outcome, warnings)
}

fn note(sharing: GpuSharing, outcome: SharingOutcome, warnings: &mut Vec<String>) -> String {
    match outcome {
        SharingOutcome::Off | SharingOutcome::Shared(0) => String::new(),
        SharingOutcome::Shared(_) => format!(" ({sharing} per GPU)"),
        SharingOutcome::SkippedMig(n) => {
            let why = format!(
                "gpu-sharing {sharing} not applied: {n} MIG instance{} (already partitions of a GPU)",
                if n == 1 { "" } else { "s" }
            );
            warnings.push(why.clone());
            format!(" ({why})")
        }
    }
}

/// `detect-gpus`: `gpu-sharing` (the option as parsed, or why it is refused) and, when GPUs
/// are shared, `gres` and `gres-conf` with the shared records included (what the node
/// publishes).
pub fn action_results(
    option: &Result<GpuSharing, SharingError>,
    inv: &Inventory,
    node: &str,
    out: &mut Map<String, Value>,
) {
    let sharing = match option {
        Ok(s) => *s,
        Err(e) => {
            out.insert("gpu-sharing".into(), e.to_string().into());
            return;
        }
    };
    let mut records = inv.gres();
    let mut ignored = Vec::new();
    let note = add_shared_records(option, &mut records, &mut ignored);
    out.insert(
        "gpu-sharing".into(),
        format!("{sharing}{note}").trim().to_string().into(),
    );
    if records.iter().any(|r| r.name.is_shared()) {
        let specs: Vec<String> = super::facts::gres_specs(&records)
            .iter()
            .map(ToString::to_string)
            .collect();
        out.insert("gres".into(), specs.join(",").into());
        let lines = crate::slurm::render::render_gres_records(node, &records);
        out.insert("gres-conf".into(), lines.join("\n").into());
    }
}
