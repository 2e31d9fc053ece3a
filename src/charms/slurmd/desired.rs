//! The slurmd charm's desired state: a pure function of what was observed.

use super::facts::{NodeOverrides, build_node_record};
use super::observe::Observed;
use crate::charms::util::short;
use crate::interface::{
    ClusterInfo, InterfaceError, NodeRecord, PARTITION_KEY, PartitionRecord, check_record_len,
};
use crate::slurm::GresLine;
use crate::slurm::types::{GresDevices, PartitionName, VocabError};
use crate::slurm::{ParseError, parse_partition_overrides};
use juju_runtime::{Status, StatusKind};

/// What this hook should converge to.
#[derive(Debug, Clone)]
pub struct Desired {
    /// The node record (None when the facts cannot be read).
    pub node: Option<NodeRecord>,
    /// New `node` value to publish (only when it differs from the bag).
    pub publish_node: Option<String>,
    /// New `partition` value to publish (leader, only when it differs).
    pub publish_partition: Option<String>,
    /// The controller's data, when valid.
    pub cluster: Option<ClusterInfo>,
    /// `/etc/default/slurmd` content when configured.
    pub defaults: Option<String>,
    /// This node's GRES differ from what was published before (slurmd must restart).
    pub gres_changed: bool,
    /// Device files that must exist before slurmd starts.
    pub device_files: Vec<String>,
    /// Status to set unless applying finds a problem.
    pub status: Status,
    /// Problems to log as warnings.
    pub warnings: Vec<String>,
}

/// `/etc/default/slurmd` for a configless slurmd (Debian's unit passes `$SLURMD_OPTIONS`).
pub fn slurmd_defaults(info: &ClusterInfo) -> String {
    format!(
        "# Managed by the slurmd charm: slurmd fetches slurm.conf and gres.conf from slurmctld.\n\
         SLURMD_OPTIONS=\"--conf-server {}\"\n",
        info.conf_server()
    )
}

/// Why the leader publishes no `partition` record: the unit blocks with it until the config
/// (or the application's name) is fixed. Typed so the status is made from it once, with the
/// parser's or the record's error as its source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionConfigError {
    /// `partition-config` is not `Key=Value` text by Slurm's rules, or sets a key the
    /// controller owns (the parser's message names the option, the line and the fix).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The application's name is not a partition name Slurm accepts.
    #[error(
        "this application's name is not a partition name Slurm accepts: {0} (deploy it under another name)"
    )]
    Name(#[source] VocabError),
}

/// This application's `partition` record: its name and `partition-config`
/// ([`crate::slurm::parse_partition_overrides`]: Slurm's lexical rules and partition keys,
/// none the controller owns), whose values are checked once, when parsed.
pub fn partition_record(app: &str, config: &str) -> Result<PartitionRecord, PartitionConfigError> {
    let overrides = parse_partition_overrides(config)?;
    let name = PartitionName::try_from(app).map_err(PartitionConfigError::Name)?;
    Ok(PartitionRecord::from_overrides(name, overrides))
}

/// The status message for a node's GPUs: `2 GPUs: gpu:tesla_t4:2` or `no GPUs`
/// (`2 GPUs: gpu:tesla_t4:2,shard:8` with sharing; shares are not GPUs).
pub fn gpu_summary(node: &NodeRecord) -> String {
    let total: u64 = node
        .node()
        .gres
        .iter()
        .filter(|g| !g.name.is_shared())
        .map(|g| g.count)
        .sum();
    if total == 0 {
        return "no GPUs".into();
    }
    let plural = if total == 1 { "GPU" } else { "GPUs" };
    format!("{total} {plural}: {}", node.gres_string())
}

fn published_gres(raw: Option<&String>) -> Option<Vec<GresLine>> {
    let raw = raw?;
    NodeRecord::from_relation_value(raw)
        .ok()
        .map(|r| r.gres().to_vec())
}

/// The blocked message when this node's own record fails the controller's ingest checks.
fn not_enlisted(e: &crate::interface::InterfaceError) -> String {
    format!("node not enlisted: the controller would reject this record ({e})")
}

/// Computes the desired state.
pub fn desired(obs: &Observed) -> Desired {
    let mut warnings = Vec::new();
    let mut blocked: Option<String> = None;

    let overrides = match &obs.overrides {
        Ok(o) => o.clone(),
        Err(e) => {
            warnings.push(format!(
                "{e}; until then the node is published without node-config overrides"
            ));
            Default::default()
        }
    };
    let inventory = match &obs.inventory {
        Ok(inv) => Some(inv),
        Err(e) => {
            blocked.get_or_insert(e.to_string());
            None
        }
    };
    let mut gres = inventory.map(|i| i.gres()).unwrap_or_default();
    let sharing_note =
        super::sharing::add_shared_records(&obs.gpu_sharing, &mut gres, &mut warnings);
    // A GPU failing or missing (issue 39 item 2): the node is drained (the health check), and
    // the published record stays as it is (below), so the controller rewrites no file and
    // restarts nothing for a fault that may heal. `detect-gpus accept-missing=true` forgets a
    // GPU gone for good (the report is healthy then), and the record is republished without it.
    let failing = super::health::report(obs).is_some_and(|r| !r.healthy());
    if let Err(e) = &obs.gpu_sharing {
        blocked.get_or_insert(e.to_string());
    }
    let features = match inventory {
        Some(inv) if obs.gpu_features => {
            let derived = crate::gpu::gpu_features(inv);
            warnings.extend(derived.refused.iter().map(|e| {
                format!(
                    "a GPU feature is left out of the node's Features ({e}); jobs cannot ask for it with --constraint"
                )
            }));
            derived.features
        }
        _ => Vec::new(),
    };
    let has_overrides = !overrides.is_empty();
    let overrides = overrides.with_gpu_features(&features);
    if let Some(inv) = inventory {
        for f in &inv.findings {
            if f.is_blocking() {
                // Logged too: the status shows the first problem only.
                warnings.push(f.to_string());
                blocked.get_or_insert(f.to_string());
            } else {
                warnings.push(f.to_string());
            }
        }
    }
    let headroom = match &obs.memory_headroom {
        Ok(h) => Some(*h),
        Err(e) => {
            blocked.get_or_insert(e.to_string());
            None
        }
    };
    // A record the charm refuses to publish as it is, while one was published: that one stays
    // (a bad `memory-headroom`, or a record larger than the controller accepts).
    let mut keep_published = headroom.is_none();
    let node = match (&obs.facts, headroom) {
        (Ok(facts), Some(headroom)) => {
            match build_node_record(facts, gres.clone(), &overrides, headroom, obs.new_node) {
                Ok(n) => Some(n),
                Err(e @ InterfaceError::TooLarge { .. }) => {
                    // Refused, not cut: the controller would leave the node out.
                    blocked.get_or_insert(format!("node record not published: {e}"));
                    keep_published = true;
                    None
                }
                Err(e) if has_overrides => {
                    // Overrides no longer fit (e.g. GPUs changed): publish the detected record.
                    warnings.push(format!("node-config overrides do not fit this node: {e}"));
                    let detected = NodeOverrides::default().with_gpu_features(&features);
                    build_node_record(facts, gres, &detected, headroom, obs.new_node)
                        .map_err(|e| blocked.get_or_insert(not_enlisted(&e)))
                        .ok()
                }
                Err(e) => {
                    // The controller would reject this record: say so instead of publishing it.
                    blocked.get_or_insert(not_enlisted(&e));
                    None
                }
            }
        }
        (Ok(_), None) => None,
        (Err(e), _) => {
            blocked.get_or_insert(format!("cannot read node facts: {e}"));
            None
        }
    };
    // The published record stands for this node meanwhile (its GRES' device files, its
    // status summary): what the controller has is what this unit keeps to.
    let node = match node {
        None if keep_published => obs
            .own_node_raw
            .as_deref()
            .and_then(|raw| NodeRecord::from_relation_value(raw).ok()),
        n => n,
    };

    let mut publish_node = None;
    let mut gres_changed = false;
    if let (Some(_), Some(n)) = (&obs.relation, &node) {
        let raw = n.to_relation_value();
        if !keep_published && obs.own_node_raw.as_deref() != Some(raw.as_str()) {
            publish_node = Some(raw);
        }
        gres_changed = published_gres(obs.own_node_raw.as_ref()).is_some_and(|old| old != n.gres());
        if obs.gpu_sharing.is_err() || obs.inventory.is_err() || failing {
            // A bad `gpu-sharing`, NVML failing as a whole, or a GPU failing or missing changes
            // nothing: the published record stays as it is (the health check drains the node
            // meanwhile), so the controller never drops this node's GPUs for a fault.
            if obs.own_node_raw.is_some() {
                publish_node = None;
                gres_changed = false;
            }
        }
    }

    let mut publish_partition = None;
    if obs.leader && obs.relation.is_some() {
        match partition_record(&obs.app_name, &obs.partition_config) {
            Ok(rec) => {
                let raw = rec.to_relation_value();
                if let Err(e) = check_record_len(PARTITION_KEY, &raw) {
                    // The controller would refuse it: the published one stays.
                    blocked.get_or_insert(format!("partition record not published: {e}"));
                } else if obs.own_partition_raw.as_deref() != Some(raw.as_str()) {
                    publish_partition = Some(raw);
                }
            }
            Err(e) => {
                blocked.get_or_insert(e.to_string());
            }
        }
    }

    if let Some(Err(e)) = &obs.munge_key {
        blocked.get_or_insert(e.to_string());
    }
    let cluster = match &obs.cluster_info {
        None => None,
        Some(Ok(c)) => Some(c.clone()),
        Some(Err(e)) => {
            blocked.get_or_insert(format!("slurmctld sent bad data: {e}"));
            None
        }
    };
    let defaults = cluster.as_ref().map(slurmd_defaults);
    let device_files = node
        .iter()
        .flat_map(|n| n.gres().iter())
        .filter_map(|g| match &g.devices {
            Some(GresDevices::File(f)) => Some(f.files().iter().map(ToString::to_string)),
            _ => None,
        })
        .flatten()
        .collect();

    if let (Some(why), Some(_), Some(_)) = (&obs.verdict, &obs.relation, &cluster) {
        // The controller left this node out: say so rather than report the node active.
        blocked.get_or_insert(format!("node not enlisted: {why}"));
    }
    let st = if let Some(b) = blocked {
        Status::new(StatusKind::Blocked, short(&b, 200))
    } else if obs.relation.is_none() {
        Status::new(StatusKind::Blocked, "Need relation: slurmctld")
    } else if cluster.is_none() {
        Status::new(StatusKind::Waiting, "Waiting for slurmctld")
    } else {
        let summary = node.as_ref().map(gpu_summary).unwrap_or_default();
        Status::new(StatusKind::Active, format!("{summary}{sharing_note}"))
    };
    Desired {
        node,
        publish_node,
        publish_partition,
        cluster,
        defaults,
        gres_changed,
        device_files,
        status: st,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_record_errors_name_their_cause() {
        assert!(partition_record("compute", "MaxTime=60").is_ok());
        let owned = partition_record("compute", "Nodes=ALL").unwrap_err();
        assert!(matches!(owned, PartitionConfigError::Parse(_)), "{owned}");
        assert!(owned.to_string().contains("partition-config"), "{owned}");
        let name = partition_record("bad name", "").unwrap_err();
        assert!(matches!(name, PartitionConfigError::Name(_)), "{name}");
        assert!(name.to_string().contains("another name"), "{name}");
    }
}
