//! The slurmctld charm's cluster metrics (`slurmctld.prom` in node-exporter's textfile
//! directory), read from Slurm at each update-status by the leader.
//!
//! **Why a textfile and not an exporter.** Slurm below 25.11 serves no OpenMetrics, and
//! neither Debian 12 nor 13 packages a Slurm exporter (`apt-cache search prometheus-slurm`
//! finds nothing); a daemon of ours would be one more service to install, secure, restart and
//! upgrade on the controller. The COS subordinate already runs node-exporter with a textfile
//! directory, and Juju runs update-status every 5 minutes by default, which is the resolution
//! the alerts need (their `for:` is 5 minutes or more); `node_textfile_mtime_seconds` tells
//! when the file stops being refreshed (alert `SlurmMetricsStale`). The read costs two
//! commands (`scontrol -o show nodes`, `squeue`), only in update-status, never in the
//! relation hooks the controller's performance targets are about.
//!
//! | metric | labels | value |
//! | --- | --- | --- |
//! | `slurm_scheduler_up` | | 1 when slurmctld answered `scontrol show nodes`, else 0 |
//! | `slurm_node_state` | `node`, `state`, `reason` | 1 per node: its state as `scontrol` prints it, lowercased (`idle`, `mixed+drain`, `down+not_responding`), and its reason without the `[user@time]` suffix |
//! | `slurm_nodes` | `state` | nodes per state |
//! | `slurm_node_gpus` | `node`, `type` | GPUs configured (`Gres=`) per node and type |
//! | `slurm_node_gpus_allocated` | `node`, `type` | GPUs allocated (`AllocTRES=`) per node and type |
//! | `slurm_jobs` | `state` | jobs per state (`squeue`: pending, running, completing, …) |
//! | `slurm_gpu_jobs_pending` | | pending jobs that ask for GPUs (`--gres=gpu…`) |
//! | `slurm_gpu_jobs_pending_oldest_submit_timestamp_seconds` | | submit time of the oldest of them (absent when none) |

use std::collections::BTreeMap;
use std::time::Duration;

use super::textfile::{Exposition, MetricType};
use crate::charms::host::{Cmd, Host};

/// The file name the slurmctld charm writes in the textfile directory.
pub const CONTROLLER_TEXTFILE: &str = "slurmctld.prom";

/// One node as `scontrol -o show nodes` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeLine {
    /// `NodeName=`.
    pub node: String,
    /// `State=`, lowercased.
    pub state: String,
    /// `Reason=` without its `[user@time]` suffix; empty when none.
    pub reason: String,
    /// GPUs per type from `Gres=` (type `""` when untyped).
    pub gpus: BTreeMap<String, u64>,
    /// Allocated GPUs per type from `AllocTRES=`.
    pub allocated: BTreeMap<String, u64>,
}

/// One job as `squeue -h -a -o '%T|%b|%V'` prints it (with `SLURM_TIME_FORMAT=%s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLine {
    /// `%T`, lowercased.
    pub state: String,
    /// `%b` names a GPU GRES.
    pub wants_gpu: bool,
    /// `%V` as Unix seconds, when it parsed.
    pub submitted: Option<u64>,
}

/// What one update-status read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterSnapshot {
    /// `None`: slurmctld did not answer.
    pub nodes: Option<Vec<NodeLine>>,
    /// `None`: squeue failed (or was not asked).
    pub jobs: Option<Vec<JobLine>>,
}

/// Asks Slurm (`scontrol -o show nodes`, then `squeue` if that answered).
pub fn read_cluster(host: &Host<'_>) -> ClusterSnapshot {
    let limit = Duration::from_secs(30);
    let nodes_cmd = Cmd::new("scontrol", ["-o", "show", "nodes"]).with_timeout(limit);
    let nodes = match host.run_ok(&nodes_cmd) {
        Ok(out) => Some(parse_nodes(&out.stdout)),
        Err(e) => {
            tracing::warn!("metrics: slurmctld does not answer ({e})");
            None
        }
    };
    if nodes.is_none() {
        return ClusterSnapshot { nodes, jobs: None };
    }
    let jobs_cmd = Cmd::new("squeue", ["-h", "-a", "-o", "%T|%b|%V"])
        .env("SLURM_TIME_FORMAT", "%s")
        .with_timeout(limit);
    let jobs = match host.run_ok(&jobs_cmd) {
        Ok(out) => Some(parse_jobs(&out.stdout)),
        Err(e) => {
            tracing::warn!("metrics: squeue failed ({e}); job metrics left out");
            None
        }
    };
    ClusterSnapshot { nodes, jobs }
}

/// Parses `scontrol -o show nodes`: one node per line of `Key=Value` words; `Reason=` runs to
/// the end of the line. Lines without `NodeName=` are skipped.
pub fn parse_nodes(out: &str) -> Vec<NodeLine> {
    out.lines().filter_map(parse_node_line).collect()
}

fn parse_node_line(line: &str) -> Option<NodeLine> {
    let (head, reason) = match line.find(" Reason=") {
        Some(at) => (&line[..at], Some(&line[at + " Reason=".len()..])),
        None => (line, None),
    };
    let mut node = NodeLine::default();
    for word in head.split_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            continue;
        };
        match key {
            "NodeName" => node.node = value.to_owned(),
            "State" => node.state = value.to_ascii_lowercase(),
            "Gres" => node.gpus = parse_gres(value),
            "AllocTRES" => node.allocated = parse_tres_gpus(value),
            _ => {}
        }
    }
    if node.node.is_empty() {
        return None;
    }
    node.reason = reason.map(strip_reason_suffix).unwrap_or_default();
    // Untyped allocation on a node with one GPU type: that type.
    if let (Some(n), 1) = (node.allocated.get("").copied(), node.gpus.len()) {
        if let Some(t) = node.gpus.keys().next().filter(|t| !t.is_empty()).cloned() {
            node.allocated.remove("");
            node.allocated.insert(t, n);
        }
    }
    Some(node)
}

/// `slurmd-charm: gpu 3 … [root@2026-11-29T06:00:00]` → `slurmd-charm: gpu 3 …`.
fn strip_reason_suffix(reason: &str) -> String {
    let r = reason.trim();
    let r = match r.rfind(" [") {
        Some(at) if r.ends_with(']') && r[at..].contains('@') => &r[..at],
        _ => r,
    };
    r.trim().to_owned()
}

/// `gpu:h100:8(S:0-1),gpu:l40s:2,shard:h100:32` → `{h100: 8, l40s: 2}`; `(null)` → `{}`.
pub fn parse_gres(value: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut depth = 0u32;
    let mut items = Vec::new();
    let mut start = 0;
    for (i, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&value[start..]);
    for item in items {
        let item = item.split('(').next().unwrap_or_default();
        let parts: Vec<&str> = item.split(':').collect();
        let (ty, count) = match parts.as_slice() {
            ["gpu", count] => ("", *count),
            ["gpu", ty, count] => (*ty, *count),
            _ => continue,
        };
        if let Ok(n) = count.parse::<u64>() {
            *out.entry(ty.to_owned()).or_insert(0) += n;
        }
    }
    out
}

/// GPUs in a TRES list: `cpu=2,gres/gpu=2,gres/gpu:h100=2` → `{h100: 2}` (typed counts win;
/// the untyped total only when no type is listed).
pub fn parse_tres_gpus(value: &str) -> BTreeMap<String, u64> {
    let mut typed = BTreeMap::new();
    let mut untyped = None;
    for item in value.split(',') {
        let Some((key, n)) = item.split_once('=') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        match key.strip_prefix("gres/gpu") {
            Some("") => untyped = Some(n),
            Some(ty) => {
                if let Some(ty) = ty.strip_prefix(':') {
                    *typed.entry(ty.to_owned()).or_insert(0) += n;
                }
            }
            None => {}
        }
    }
    if typed.is_empty() {
        if let Some(n) = untyped {
            typed.insert(String::new(), n);
        }
    }
    typed
}

/// Parses `squeue -h -a -o '%T|%b|%V'` output.
pub fn parse_jobs(out: &str) -> Vec<JobLine> {
    out.lines()
        .filter_map(|line| {
            let mut parts = line.trim().splitn(3, '|');
            let state = parts.next()?.trim();
            if state.is_empty() {
                return None;
            }
            let gres = parts.next().unwrap_or_default();
            let submitted = parts.next().and_then(|s| s.trim().parse::<u64>().ok());
            Some(JobLine {
                state: state.to_ascii_lowercase(),
                wants_gpu: gres.contains("gpu"),
                submitted,
            })
        })
        .collect()
}

/// The metrics text of `snap`.
pub fn cluster_metrics(snap: &ClusterSnapshot) -> String {
    let mut e = Exposition::new();
    e.family(
        "slurm_scheduler_up",
        MetricType::Gauge,
        "1 when slurmctld answered scontrol at the last update-status, else 0.",
    )
    .sample(
        "slurm_scheduler_up",
        &[],
        if snap.nodes.is_some() { 1.0 } else { 0.0 },
    );
    if let Some(nodes) = &snap.nodes {
        e.family(
            "slurm_node_state",
            MetricType::Gauge,
            "1 per Slurm node, labelled with its state and reason.",
        );
        let mut by_state: BTreeMap<&str, u64> = BTreeMap::new();
        for n in nodes {
            e.sample(
                "slurm_node_state",
                &[
                    ("node", &n.node),
                    ("state", &n.state),
                    ("reason", &n.reason),
                ],
                1.0,
            );
            *by_state.entry(&n.state).or_insert(0) += 1;
        }
        e.family("slurm_nodes", MetricType::Gauge, "Slurm nodes per state.");
        for (state, count) in by_state {
            e.sample("slurm_nodes", &[("state", state)], count as f64);
        }
        e.family(
            "slurm_node_gpus",
            MetricType::Gauge,
            "GPUs configured in Slurm per node and type.",
        );
        for n in nodes {
            for (ty, count) in &n.gpus {
                e.sample(
                    "slurm_node_gpus",
                    &[("node", &n.node), ("type", ty)],
                    *count as f64,
                );
            }
        }
        e.family(
            "slurm_node_gpus_allocated",
            MetricType::Gauge,
            "GPUs allocated to jobs per node and type.",
        );
        for n in nodes {
            // Every configured type, 0 when idle, so free = configured - allocated.
            let mut types: BTreeMap<&str, u64> = n.gpus.keys().map(|t| (t.as_str(), 0)).collect();
            for (ty, count) in &n.allocated {
                types.insert(ty, *count);
            }
            for (ty, count) in types {
                e.sample(
                    "slurm_node_gpus_allocated",
                    &[("node", &n.node), ("type", ty)],
                    count as f64,
                );
            }
        }
    }
    if let Some(jobs) = &snap.jobs {
        let mut by_state: BTreeMap<&str, u64> = BTreeMap::new();
        for j in jobs {
            *by_state.entry(&j.state).or_insert(0) += 1;
        }
        e.family("slurm_jobs", MetricType::Gauge, "Slurm jobs per state.");
        for (state, count) in by_state {
            e.sample("slurm_jobs", &[("state", state)], count as f64);
        }
        let pending: Vec<&JobLine> = jobs
            .iter()
            .filter(|j| j.wants_gpu && j.state == "pending")
            .collect();
        e.family(
            "slurm_gpu_jobs_pending",
            MetricType::Gauge,
            "Pending Slurm jobs that ask for GPUs.",
        )
        .sample("slurm_gpu_jobs_pending", &[], pending.len() as f64);
        if let Some(oldest) = pending.iter().filter_map(|j| j.submitted).min() {
            e.family(
                "slurm_gpu_jobs_pending_oldest_submit_timestamp_seconds",
                MetricType::Gauge,
                "Submit time of the oldest pending job that asks for GPUs.",
            )
            .sample(
                "slurm_gpu_jobs_pending_oldest_submit_timestamp_seconds",
                &[],
                oldest as f64,
            );
        }
    }
    e.as_str().to_owned()
}
