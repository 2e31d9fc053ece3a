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
            let conf = match global_lines(&host.path(crate::charms::slurmctld::SLURM_CONF)) {
                Ok(Some(text)) => text,
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

/// slurm.conf's lines before its first record (`NodeName=`, `PartitionName=`, …): the global
/// keys the charm writes are all there, so a file of 10,000 nodes is not read to the end in
/// every hook. `None` when there is no file.
fn global_lines(path: &std::path::Path) -> std::io::Result<Option<String>> {
    use std::io::BufRead;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut out = String::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line?;
        let record = crate::slurm::keys::SLURM_RECORD_KEYS.iter().any(|k| {
            line.get(..k.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(k))
                && line
                    .get(k.len()..)
                    .is_some_and(|rest| rest.starts_with('='))
        });
        if record {
            break;
        }
        out.push_str(&line);
        out.push('\n');
    }
    Ok(Some(out))
}
