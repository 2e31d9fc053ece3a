//! Records what a machine with real NVIDIA GPUs shows, so tests without a GPU can replay it.
//!
//! Issue 15 item 5: where a real GPU can be used, the charm's detection, its health check and
//! Slurm's own `AutoDetect=nvml` run against the real NVML, and their outputs are kept as
//! fixtures (`tests/fixtures/real-gpu/<machine>/`, `docs/real-gpu.md`). This crate is the part
//! that runs there (the binary `gpu-probe`, driven by `tools/gpu-probe/capture.sh`) and the part
//! the replay test shares with it:
//!
//! - [`nvml_fixture`]: every NVML value and return code the charm and Slurm's plugin read, in the
//!   fake library's JSON format (`docs/fake-nvml.md`), so `tools/fake-nvml` answers as the real
//!   GPU did;
//! - [`record`]: the `detect-gpus` action's results (the charm's own code: detection, health,
//!   sharing) and the GPU features, for a node described by its `slurmd -C` line;
//! - [`controller_files`]: the slurm.conf node line and gres.conf our controller writes for that
//!   node (the same path as the charm: `build_node_record` → `Store::apply` → `plan`).
//!
//! It is a development tool: no charm ships it.

mod fixture;

pub use fixture::nvml_fixture;

use serde_json::{Map, Value, json};
use slurm_charms::charms::slurmctld::desired::{Settings, plan};
use slurm_charms::charms::slurmctld::store::{Delta, Store};
use slurm_charms::charms::slurmd::actions::steady_detect_results;
use slurm_charms::charms::slurmd::facts::{
    NodeOverrides, SlurmdCError, build_node_record, parse_slurmd_c,
};
use slurm_charms::charms::slurmd::memory::MemoryHeadroom;
use slurm_charms::gpu::{GpuSharing, Inventory, gpu_features};

/// Why a recording could not be made; each names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The `slurmd -C` text did not parse.
    #[error("slurmd -C output: {0}")]
    SlurmdC(#[source] SlurmdCError),
    /// The node record the slurmd charm would publish was refused.
    #[error("node record: {0}")]
    NodeRecord(String),
    /// The controller did not render the node.
    #[error("controller: {0}")]
    Controller(String),
}

/// The `detect-gpus` results (as the action returns them on a host whose GPUs did not change,
/// with `gpu-sharing=none` and no health-check program state) and the GPU features the node
/// would get (with, under `features_refused`, the ones the charm would leave out and warn of,
/// when there are any).
pub fn record(inv: &Inventory, slurmd_c: &str) -> Result<Value, ProbeError> {
    let facts = parse_slurmd_c(slurmd_c).map_err(ProbeError::SlurmdC)?;
    let results = steady_detect_results(&facts, inv, &Ok(GpuSharing::None), None);
    let derived = gpu_features(inv);
    let mut out = json!({
        "detect_gpus": Value::Object(results),
        "features": derived.features,
    });
    if !derived.refused.is_empty() {
        out["features_refused"] = derived.refused.iter().map(ToString::to_string).collect();
    }
    Ok(out)
}

/// What our controller writes for the node alone: its slurm.conf `NodeName=` line and gres.conf,
/// for a slurmd unit with the default configuration (GPU features on, no `node-config`, the
/// default `memory-headroom`, `gpu-sharing=none`).
pub fn controller_files(inv: &Inventory, slurmd_c: &str) -> Result<(String, String), ProbeError> {
    controller_files_sharing(inv, slurmd_c, GpuSharing::None)
}

/// [`controller_files`] for a slurmd unit whose `gpu-sharing` is `sharing` (the shared GRES
/// records added as the charm adds them).
pub fn controller_files_sharing(
    inv: &Inventory,
    slurmd_c: &str,
    sharing: GpuSharing,
) -> Result<(String, String), ProbeError> {
    let facts = parse_slurmd_c(slurmd_c).map_err(ProbeError::SlurmdC)?;
    let overrides = NodeOverrides::default().with_gpu_features(&gpu_features(inv).features);
    let mut gres = inv.gres();
    let (shared, _) = sharing.records(&gres);
    gres.extend(shared);
    let record = build_node_record(&facts, gres, &overrides, MemoryHeadroom::default(), false)
        .map_err(|e| ProbeError::NodeRecord(e.to_string()))?;
    let mut cache = Store::default();
    cache.apply(Delta::RelationCreated {
        relation: 1,
        app: "gpu".into(),
        partition: Some(r#"{"gpu":{"State":"UP"}}"#.into()),
    });
    cache.apply(Delta::Node {
        relation: 1,
        unit: "gpu/0".into(),
        value: Some(record.to_relation_value()),
    });
    let settings = Settings {
        cluster_name: "oracle".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("controller"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    };
    let p = plan(&settings, &cache);
    if let Some(e) = p.render_error {
        return Err(ProbeError::Controller(e));
    }
    if let Some((unit, why)) = p.rejected.first() {
        return Err(ProbeError::Controller(format!("{unit} rejected: {why}")));
    }
    let slurm_conf = p
        .slurm_conf
        .ok_or_else(|| ProbeError::Controller("no slurm.conf".into()))?;
    let prefix = format!("NodeName={} ", facts.node.name);
    let node_line = slurm_conf
        .lines()
        .find(|l| l.starts_with(&prefix))
        .ok_or_else(|| ProbeError::Controller(format!("no {prefix}line in\n{slurm_conf}")))?
        .to_owned();
    Ok((node_line, p.gres_conf.unwrap_or_default()))
}

/// [`record`] plus [`controller_files`] as one JSON object, what `gpu-probe record` prints.
pub fn full_record(inv: &Inventory, slurmd_c: &str) -> Result<Value, ProbeError> {
    let mut out = match record(inv, slurmd_c)? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let (node_line, gres_conf) = controller_files(inv, slurmd_c)?;
    out.insert("node_line".into(), node_line.into());
    out.insert("gres_conf".into(), gres_conf.into());
    Ok(Value::Object(out))
}

/// The node line and gres.conf for `gpu-sharing=<sharing>`, what `gpu-probe files` prints.
pub fn sharing_files(
    inv: &Inventory,
    slurmd_c: &str,
    sharing: GpuSharing,
) -> Result<Value, ProbeError> {
    let (node_line, gres_conf) = controller_files_sharing(inv, slurmd_c, sharing)?;
    Ok(json!({
        "gpu_sharing": sharing.to_string(),
        "node_line": node_line,
        "gres_conf": gres_conf,
    }))
}
