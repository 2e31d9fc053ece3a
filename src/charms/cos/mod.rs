//! Observability through COS (issue 41, `docs/observability.md`): the `cos-agent` endpoint both
//! charms provide, and the metrics they write for node-exporter's textfile collector.
//!
//! - [`publish`]: the unit databag of `cos-agent` as Canonical's `cos_agent` library writes it
//!   ([`ProviderUnitData`]: alert rules with Juju topology, the cluster-overview dashboard).
//!   Set in `cos-agent-relation-joined`/`-changed` (those hooks do nothing else) and after
//!   `upgrade-charm` (new rules ship with a new charm); no other hook pays for it.
//! - [`write_node_metrics`] (slurmd, every hook that runs in full): GPU health, [`gpu_metrics`].
//! - [`write_xid_metrics`] (slurmd's health-check program, every `HealthCheckInterval`): the
//!   XIDs the kernel logged per GPU, [`xid_metrics`].
//! - [`write_cluster_metrics`] (slurmctld leader, update-status): nodes, GPUs, jobs, scheduler
//!   health, [`cluster_metrics`].
//!
//! A textfile is written only where the textfile directory exists, i.e. where a COS
//! subordinate installed node-exporter; failing to write one is a warning, never a failed hook.

mod agent;
mod controller;
pub(crate) mod error;
mod node;
mod scrape;
mod textfile;

pub use agent::{
    DATABAG_KEY, ENDPOINT, ProviderUnitData, Topology, alert_rules, dashboard_files, dashboard_uid,
    databag_value, databag_value_with_jobs, encode_dashboard, lzma_base64, lzma_base64_decode,
    provider_data, provider_data_with_jobs, rule_files,
};
pub use controller::{
    CONTROLLER_TEXTFILE, ClusterSnapshot, JobLine, NodeLine, cluster_metrics, parse_gres,
    parse_jobs, parse_nodes, parse_tres_gpus, read_cluster,
};
pub use error::CosAgentError;
pub use node::{GPU_TEXTFILE, XID_METRIC, XID_TEXTFILE, fault_label, gpu_metrics, xid_metrics};
pub use scrape::scrape_jobs;
pub use textfile::{
    Exposition, MetricType, TEXTFILE_DIR, textfile_dir, write_textfile, write_textfile_in,
};

use crate::charms::CharmKind;
use crate::charms::error::CharmError;
use crate::charms::host::{Host, HostError};
use crate::gpu::{HealthReport, KnownGpu, XidCount};
use juju_runtime::{Bag, Event, HookContext, ModelBackend, RelationEvent, RelationId};

/// The charm's name (`name:` in its metadata.yaml).
pub fn charm_name(kind: CharmKind) -> &'static str {
    match kind {
        CharmKind::Slurmd => "slurmd",
        CharmKind::Slurmctld => "slurmctld",
    }
}

/// The Juju topology of this hook; the model UUID from `JUJU_MODEL_UUID`, which Juju sets for
/// every hook (empty where unset: the `juju_model_uuid` label is then left out, as cosl does).
pub fn topology(kind: CharmKind, ctx: &HookContext) -> Topology {
    Topology {
        model: ctx.model_name.clone(),
        model_uuid: std::env::var("JUJU_MODEL_UUID").unwrap_or_default(),
        application: ctx.app_name.clone(),
        unit: ctx.unit_name.clone(),
        charm_name: charm_name(kind).to_owned(),
    }
}

/// The relation event of a `cos-agent-relation-*` hook, if this is one.
pub fn own_event(event: &Event) -> Option<&RelationEvent> {
    match event {
        Event::RelationCreated(r)
        | Event::RelationJoined(r)
        | Event::RelationChanged(r)
        | Event::RelationDeparted(r)
        | Event::RelationBroken(r)
            if r.relation.endpoint == ENDPOINT =>
        {
            Some(r)
        }
        _ => None,
    }
}

/// Where a unit remembers the scrape jobs it last published (JSON), so that a hook in which
/// they change (leadership moved and slurm.conf came or went, `dcgm-exporter` started or
/// stopped, a new Slurm) republishes, and no other hook asks Juju anything.
pub fn published_jobs_path(kind: CharmKind) -> String {
    format!(
        "/var/lib/slurm-charms/{}/cos-agent-scrape-jobs.json",
        charm_name(kind)
    )
}

/// The `cos-agent` part of a hook, run before (`cos-agent-relation-*`: `true`, the hook is
/// done) or after the charm's own reconcile (every other hook). Sets `config` in this unit's
/// bag of the event's relation (joined, changed: nothing else is asked or written), or of every
/// `cos-agent` relation in `upgrade-charm` (a new charm brings new rules) and in any hook whose
/// scrape jobs (what `host` serves, [`scrape_jobs`]) differ from the ones last published
/// ([`published_jobs_path`]); Juju fires no change event for a value set again unchanged.
/// Other hooks read two small files and ask Juju nothing.
pub fn publish<B: ModelBackend>(
    kind: CharmKind,
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<bool, CharmError> {
    if let Some(r) = own_event(&ctx.event) {
        if matches!(
            ctx.event,
            Event::RelationJoined(_) | Event::RelationChanged(_)
        ) {
            let jobs = scrape_jobs(kind, &ctx.app_name, host);
            let value = databag_value_with_jobs(kind, &topology(kind, ctx), jobs)?;
            let bag = Bag::from([(DATABAG_KEY.to_owned(), value)]);
            backend.relation_set(&r.relation, false, &bag)?;
        }
        return Ok(true);
    }
    let jobs = scrape_jobs(kind, &ctx.app_name, host);
    // A list of JSON values always serialises.
    let jobs_text = serde_json::to_string(&jobs).unwrap_or_default();
    let remembered = published_jobs_path(kind);
    // Nothing remembered: nothing published yet, as good as no jobs (`cos-agent-relation-joined`
    // publishes whatever there is then).
    let published = host
        .read(&remembered)
        .ok()
        .flatten()
        .unwrap_or_else(|| b"[]".to_vec());
    let changed = published != jobs_text.as_bytes();
    if !changed && !matches!(ctx.event, Event::UpgradeCharm) {
        return Ok(false);
    }
    let relations: Vec<RelationId> = backend.relation_ids(ENDPOINT)?;
    if !relations.is_empty() {
        let value = databag_value_with_jobs(kind, &topology(kind, ctx), jobs)?;
        let bag = Bag::from([(DATABAG_KEY.to_owned(), value)]);
        for rel in &relations {
            backend.relation_set(rel, false, &bag)?;
        }
    }
    if changed && let Err(e) = host.write(&remembered, jobs_text.as_bytes(), 0o644, None) {
        tracing::warn!("cannot remember the published cos-agent scrape jobs: {e}");
    }
    Ok(false)
}

fn textfile_dir_exists(host: &Host<'_>) -> bool {
    host.path(&textfile_dir()).is_dir()
}

/// Writes this node's GPU health ([`gpu_metrics`]) when the textfile directory exists.
pub fn write_node_metrics(host: &Host<'_>, node: &str, report: &HealthReport) {
    if !textfile_dir_exists(host) {
        return;
    }
    if let Err(e) = write_textfile(host, GPU_TEXTFILE, &gpu_metrics(node, report)) {
        tracing::warn!("cannot write the GPU health metrics for node-exporter: {e}");
    }
}

/// Writes the XID counters of node `node` ([`xid_metrics`]) to the host directory `dir` when it
/// exists (`Ok(false)`: it does not, nothing written). For the health-check program, which
/// gets `dir` from the hook (slurmd starts it with an empty environment).
pub fn write_xid_metrics(
    host: &Host<'_>,
    dir: &str,
    node: &str,
    known: &[KnownGpu],
    counts: &[XidCount],
) -> Result<bool, HostError> {
    if !host.path(dir).is_dir() {
        return Ok(false);
    }
    write_textfile_in(host, dir, XID_TEXTFILE, &xid_metrics(node, known, counts))?;
    Ok(true)
}

/// Reads the cluster from Slurm and writes [`cluster_metrics`], when the textfile directory
/// exists; only in update-status (the caller checks leadership).
pub fn write_cluster_metrics(ctx: &HookContext, host: &Host<'_>) {
    if !matches!(ctx.event, Event::UpdateStatus) || !textfile_dir_exists(host) {
        return;
    }
    let snap = read_cluster(host);
    if let Err(e) = write_textfile(host, CONTROLLER_TEXTFILE, &cluster_metrics(&snap)) {
        tracing::warn!("cannot write the Slurm cluster metrics for node-exporter: {e}");
    }
}

/// Removes the cluster metrics this unit wrote while it led: a standby's copy would go on
/// being scraped, frozen at the moment leadership moved, beside the new leader's (pending GPU
/// jobs, drained nodes: alerts on a past state). Absent is fine.
pub fn remove_cluster_metrics(host: &Host<'_>) -> Result<(), HostError> {
    host.remove(&format!("{}/{CONTROLLER_TEXTFILE}", textfile_dir()))
}
