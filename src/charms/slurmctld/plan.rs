//! The controller's plan: a pure function of what the leader observed. It says which files to
//! write, what slurmctld needs afterwards, which relations get a new `cluster_info`, the one
//! status to set and the cache to persist once everything else has succeeded. No I/O here:
//! [`super::apply`] carries the plan out.

use super::cache::Cache;
use super::decide::{Decision, Reload, decide};
use super::desired::{self, CGROUP_CONF_TEXT, Plan as Rendered};
use super::observe::{Enlisting, Observed, VERSION_PATH};
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::host::Owner;
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::charms::slurmd::MUNGE_KEY;
use crate::charms::util::short;
use crate::interface::cluster_info::MIN_MUNGE_KEY_LEN;
use crate::interface::{CLUSTER_INFO_KEY, ClusterInfo};
use juju_runtime::{Bag, RelationId, Status, StatusKind};

/// Size of a generated munge key (bytes), as `mungekey` makes it.
pub const MUNGE_KEY_LEN: usize = 1024;

/// Everything one leader hook does, decided before anything is done.
#[derive(Debug, Clone)]
pub struct ControllerPlan {
    /// The munge key file (written only if its bytes or mode differ); `None` when the event
    /// changed nothing (the key was not read).
    pub munge_key: Option<FileWrite>,
    /// The key differs from the one on disk: munge must be restarted after writing it.
    pub restart_munge: bool,
    /// cgroup.conf, gres.conf and slurm.conf, in that order; empty when rendering failed
    /// (the files on disk stay as they are).
    pub files: Vec<FileWrite>,
    /// What slurmctld needs once the files are written.
    pub decision: Decision,
    /// `cluster_info` for every relation where it differs from what was published.
    pub relation_data: Vec<RelationWrite>,
    /// Lines to log as warnings (units left out and why).
    pub warnings: Vec<String>,
    /// The one status to set.
    pub status: Status,
    /// The cache file to write last; `None` when it equals the file this hook read.
    pub cache: Option<Vec<u8>>,
    /// The slurmctld version read by this hook, to persist with the cache (see
    /// [`super::observe::VERSION_PATH`]).
    pub version: Option<FileWrite>,
}

/// The munge key the cluster uses: the one this application already shares in `cluster_info`
/// (so a new leader, whose package-generated key differs, keeps the cluster's); else the one on
/// disk (Debian's munge package generates one); else the fresh random key observed.
fn munge_key(obs: &Observed) -> Vec<u8> {
    let published = obs
        .cache
        .relations
        .values()
        .filter_map(|r| r.cluster_info_published.as_deref())
        .find_map(|raw| ClusterInfo::from_relation_value(raw).ok())
        .map(|c| c.munge_key);
    let on_disk = obs
        .munge_key_on_disk
        .clone()
        .filter(|k| k.len() >= MIN_MUNGE_KEY_LEN);
    published
        .or(on_disk)
        .unwrap_or_else(|| obs.fresh_munge_key.clone())
}

/// Plans one leader hook.
pub fn plan(obs: &Observed) -> ControllerPlan {
    if obs.unchanged {
        return unchanged(obs);
    }
    let key = munge_key(obs);
    let restart_munge = obs.munge_key_on_disk.as_deref() != Some(key.as_slice());
    let info = ClusterInfo {
        munge_key: key.clone(),
        slurmctld_host: obs.settings.hostname.clone(),
        nhc_params: String::new(),
    }
    .to_relation_value();
    let mut cache = obs.cache.clone();
    let mut relation_data = Vec::new();
    for rel in cache.relations.values_mut() {
        if rel.cluster_info_published.as_deref() == Some(info.as_str()) {
            continue;
        }
        relation_data.push(RelationWrite {
            relation: RelationId::new(rel.endpoint.clone(), rel.id),
            app: true,
            data: Bag::from([(CLUSTER_INFO_KEY.to_string(), info.clone())]),
        });
        rel.cluster_info_published = Some(info.clone());
    }

    let mut rendered = desired::plan(&obs.settings, &obs.cache);
    let mut status = status(&cache, &rendered);
    let warnings = rendered
        .rejected
        .iter()
        .map(|(who, why)| format!("left out {who}: {why}"))
        .chain(
            rendered
                .render_error
                .iter()
                .map(|e| format!("not writing slurm.conf/gres.conf: {e}")),
        )
        .collect();
    let (files, decision) = match (rendered.slurm_conf.take(), rendered.gres_conf.take()) {
        (Some(slurm), Some(gres)) => {
            let files = vec![
                FileWrite::new(CGROUP_CONF, CGROUP_CONF_TEXT, 0o644, Some(Owner::SLURM)),
                FileWrite::new(GRES_CONF, gres, 0o644, Some(Owner::SLURM)),
                FileWrite::new(SLURM_CONF, slurm, 0o644, Some(Owner::SLURM)),
            ];
            let changed = cache.reload_deferred
                || files.iter().any(|f| {
                    let on_disk = obs.files_on_disk.get(f.path).and_then(Option::as_deref);
                    on_disk != Some(f.bytes.as_slice())
                });
            let decision = decide(
                cache.applied.as_ref(),
                &rendered.applied,
                changed,
                obs.slurm_version,
            );
            if defer(&decision, obs.enlisting.as_ref()) {
                // the files are written; slurmctld keeps running what it has (`applied` stays
                // as it was) until the batch is in or the next update-status
                cache.reload_deferred = true;
                (files, Decision::nothing())
            } else {
                cache.reload_deferred = false;
                cache.applied = Some(rendered.applied);
                (files, decision)
            }
        }
        _ => (Vec::new(), Decision::nothing()),
    };
    if cache.reload_deferred {
        status = enlisting_status(obs.enlisting.as_ref(), &status);
    }
    cache.status = Some((status_word(status.kind).to_owned(), status.message.clone()));
    ControllerPlan {
        munge_key: Some(FileWrite::new(MUNGE_KEY, key, 0o400, Some(Owner::MUNGE))),
        restart_munge,
        files,
        decision,
        relation_data,
        warnings,
        status,
        cache: persist(&cache, obs.cache_file.as_deref()),
        version: version_file(obs),
    }
}

/// The plan of an event that changed nothing: no files, no reload, no relation data, the
/// cached status again, the cache file left as it is.
fn unchanged(obs: &Observed) -> ControllerPlan {
    let status = obs
        .cache
        .status
        .as_ref()
        .and_then(|(kind, message)| {
            status_kind(kind).map(|kind| Status::new(kind, message.clone()))
        })
        .unwrap_or_else(|| Status::new(StatusKind::Waiting, "no change"));
    ControllerPlan {
        munge_key: None,
        restart_munge: false,
        files: Vec::new(),
        decision: Decision::nothing(),
        relation_data: Vec::new(),
        warnings: Vec::new(),
        status,
        cache: None,
        version: version_file(obs),
    }
}

/// The slurmctld version to persist when this hook read it from the command.
fn version_file(obs: &Observed) -> Option<FileWrite> {
    obs.slurm_version
        .filter(|_| obs.slurm_version_fresh)
        .map(|v| {
            FileWrite::new(
                VERSION_PATH,
                format!("slurm {v}\n"),
                0o644,
                Some(Owner::ROOT),
            )
        })
}

fn status_word(kind: StatusKind) -> &'static str {
    match kind {
        StatusKind::Maintenance => "maintenance",
        StatusKind::Blocked => "blocked",
        StatusKind::Waiting => "waiting",
        StatusKind::Active => "active",
    }
}

fn status_kind(word: &str) -> Option<StatusKind> {
    Some(match word {
        "maintenance" => StatusKind::Maintenance,
        "blocked" => StatusKind::Blocked,
        "waiting" => StatusKind::Waiting,
        "active" => StatusKind::Active,
        _ => return None,
    })
}

/// Whether to hold back a restart or reconfigure: more slurmd units of the batch goal-state
/// lists are still to join (only asked on relation-joined/changed, so update-status and every
/// other hook apply). Stopping (no nodes left) is never deferred.
fn defer(decision: &Decision, enlisting: Option<&Enlisting>) -> bool {
    let reloads = matches!(decision.reload, Reload::Restart | Reload::Reconfigure);
    reloads && enlisting.is_some_and(|e| !e.pending.is_empty())
}

/// The status while a reload is deferred: how far the batch is ("enlisting 37 of 100 nodes").
fn enlisting_status(enlisting: Option<&Enlisting>, ready: &Status) -> Status {
    let Some(e) = enlisting else {
        return ready.clone();
    };
    let joined = e.expected.saturating_sub(e.pending.len());
    let msg = format!(
        "enlisting {joined} of {} nodes (slurmctld reloads once all joined, or at the next update-status); {}",
        e.expected, ready.message
    );
    Status::new(StatusKind::Waiting, short(&msg, 300))
}

/// The cache's bytes, unless they are exactly the file this hook read.
fn persist(cache: &Cache, read: Option<&[u8]>) -> Option<Vec<u8>> {
    let bytes = cache.to_bytes();
    (read != Some(bytes.as_slice())).then_some(bytes)
}

/// The leader's status.
fn status(cache: &Cache, rendered: &Rendered) -> Status {
    if let Some(e) = &rendered.render_error {
        return Status::new(
            StatusKind::Blocked,
            short(&format!("config not written: {e}"), 240),
        );
    }
    if cache.relations.is_empty() {
        return Status::new(StatusKind::Blocked, "Need relation: slurmd");
    }
    if rendered.nodes.is_empty() {
        let mut msg = "Waiting for slurmd nodes".to_string();
        push_problems(&mut msg, rendered);
        return Status::new(StatusKind::Waiting, short(&msg, 300));
    }
    let gpus: u64 = rendered
        .nodes
        .values()
        .flat_map(|n| n.record.node().gres.iter())
        .map(|g| g.count)
        .sum();
    let n = rendered.nodes.len();
    let mut msg = format!(
        "{n} node{}, {gpus} GPU{}",
        if n == 1 { "" } else { "s" },
        if gpus == 1 { "" } else { "s" }
    );
    if !rendered.applied.down.is_empty() {
        msg.push_str(&format!(
            ", {} new (run node-configured on the slurmd unit)",
            rendered.applied.down.len()
        ));
    }
    push_problems(&mut msg, rendered);
    Status::new(StatusKind::Active, short(&msg, 300))
}

/// Appends rejected units and applications waiting for their partition to a status message.
fn push_problems(msg: &mut String, rendered: &Rendered) {
    msg.push_str(&rendered.problems());
}
