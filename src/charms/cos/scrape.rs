//! The `metrics_scrape_jobs` a unit publishes over `cos-agent`: HTTP endpoints on its own
//! machine for the COS subordinate to scrape (as the `cos_agent` library's `_scrape_jobs`
//! makes them: `metrics_path`, one `static_configs` target on `localhost:<port>`, and
//! `job_name` `<app>_<index>_<name>`). What each unit serves is read from the host, so the
//! `cos-agent` hooks publish what really runs:
//!
//! - slurmctld: Slurm 25.11+'s own OpenMetrics endpoints (`/metrics/jobs`, `/metrics/nodes`,
//!   `/metrics/partitions`, `/metrics/scheduler`) on slurmctld's port, when the slurm.conf the
//!   controller wrote enables them ([`crate::slurm::openmetrics::scrape_port`]).
//! - slurmd: NVIDIA's DCGM exporter (`/metrics` on 9400) when the `dcgm-exporter` option
//!   started it ([`crate::charms::slurmd::dcgm`]).

use crate::charms::CharmKind;
use crate::charms::host::Host;
use serde_json::{Value, json};

/// One job as the library writes it.
fn job(app: &str, index: usize, name: &str, path: &str, port: u16) -> Value {
    json!({
        "metrics_path": path,
        "static_configs": [{"targets": [format!("localhost:{port}")]}],
        "job_name": format!("{app}_{index}_{name}"),
    })
}

/// The scrape jobs of `kind`'s unit of application `app`, from what its host serves.
pub fn scrape_jobs(kind: CharmKind, app: &str, host: &Host<'_>) -> Vec<Value> {
    match kind {
        CharmKind::Slurmctld => {
            let conf = match host.read(crate::charms::slurmctld::SLURM_CONF) {
                Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(None) => return Vec::new(),
                Err(e) => {
                    tracing::warn!("cannot read slurm.conf for the cos-agent scrape jobs: {e}");
                    return Vec::new();
                }
            };
            let Some(port) = crate::slurm::openmetrics::scrape_port(&conf) else {
                return Vec::new();
            };
            crate::slurm::openmetrics::PATHS
                .iter()
                .enumerate()
                .map(|(i, path)| {
                    let name = format!("slurm_{}", path.trim_start_matches("/metrics/"));
                    job(app, i, &name, path, port)
                })
                .collect()
        }
        CharmKind::Slurmd => {
            use crate::charms::slurmd::dcgm;
            if dcgm::scrape_job_enabled(host) {
                vec![job(app, 0, "dcgm_exporter", dcgm::METRICS_PATH, dcgm::PORT)]
            } else {
                Vec::new()
            }
        }
    }
}
