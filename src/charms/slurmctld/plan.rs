//! The controller's plan: a pure function of what the leader observed. It says whether the
//! quick index goes first, the secret changes (the key secret created, a revision removed), which
//! files to write, what slurmctld needs afterwards, which relations get a new `cluster_info`, the
//! one status to set and the cache to persist once everything else has succeeded. No I/O here:
//! [`super::apply`] carries the plan out. A unit that is not the leader plans only its secret
//! housekeeping and its standby status ([`standby`]).

use super::accepted::{AppliedRecordRef, Refusal};
use super::cache::{Applied, Cache, content_hash, fnv1a};
use super::decide::{Decision, Reload, decide};
use super::desired::{self, CGROUP_CONF_TEXT, Plan as Rendered};
use super::group_plan;
use super::grouped::Grouped;
use super::index::{IndexWrite, OnDisk, plan_index};
use super::key_secret::{
    ClusterInfoWrite, EventSecret, KeySecret, KeySecretPlan, SecretAction, housekeeping,
};
use super::observe::{Enlisting, Observed, VERSION_PATH};
use super::refusal;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::host::Owner;
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::charms::slurmd::{MUNGE_KEY, SLURM_KEY};
use crate::charms::util::short;
use crate::interface::cluster_info::MIN_MUNGE_KEY_LEN;
use crate::interface::{AuthKind, ClusterInfo, MungeKeyRef, VERDICTS_KEY, Verdicts};
use crate::slurm::MemoSession;
use juju_runtime::{Bag, RelationId, Status, StatusKind};
use std::collections::BTreeMap;

/// Size of a generated munge key (bytes), as `mungekey` makes it.
pub const MUNGE_KEY_LEN: usize = 1024;

/// Everything one leader hook does, decided before anything is done.
#[derive(Debug, Clone)]
pub struct ControllerPlan {
    /// Remove the quick index's head before anything else is written
    /// ([`super::index::invalidate`]): a hook that fails half-way then leaves the quick path
    /// off. False on the quick path (nothing but the status is written).
    pub invalidate_index: bool,
    /// The key secret and where `cluster_info` names it; `None` when the event changed
    /// nothing (nothing is published or granted).
    pub key_secret: Option<KeySecretPlan>,
    /// The secret housekeeping the event asks for ([`housekeeping`]).
    pub secrets: Vec<SecretAction>,
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
    /// The verdicts for every relation where they differ from what was published
    /// (`cluster_info` is in [`ControllerPlan::key_secret`]).
    pub relation_data: Vec<RelationWrite>,
    /// Lines to log as warnings (units left out and why).
    pub warnings: Vec<String>,
    /// The one status to set.
    pub status: Status,
    /// The cache to persist last (`None` when the event changed nothing): serialised only
    /// then, straight into its file ([`super::apply::persist`]).
    pub cache: Option<CacheWrite>,
    /// The slurmctld version read by this hook, to persist with the cache (see
    /// [`super::observe::VERSION_PATH`]).
    pub version: Option<FileWrite>,
    /// The applied record to write before the files and the restart or reconfigure (the
    /// change marked pending); `None` when slurmctld needs nothing.
    pub applied_before: Option<Vec<u8>>,
    /// The applied record once slurmctld took the files.
    pub applied_after: Option<Vec<u8>>,
    /// What the applied record says if slurmctld refuses the files (the reason and the failing
    /// input filled in then); written with [`ControllerPlan::accepted_fingerprints`].
    pub refused_record: Option<RefusedRecord>,
    /// The fingerprints of the last set slurmctld accepted, as read: what a refusal record
    /// keeps ([`super::refusal`]).
    pub accepted_fingerprints: Grouped,
    /// Once slurmctld took the files, copy them (cgroup.conf, gres.conf, slurm.conf from
    /// [`ControllerPlan::files`], by path) as the last accepted set ([`super::accepted::ACCEPTED_FILES`]).
    pub keep_accepted: bool,
    /// If slurmctld refuses the new files, put the last accepted copies back (a complete set
    /// was on disk when observed). The copies are read only then: a refusal is rare, and at
    /// 10,000 nodes they are megabytes.
    pub rollback: bool,
    /// The quick index to write after the cache when the event changed nothing (`None` on the
    /// quick path: it is current); a changed hook's index is planned once its cache is written
    /// and its hash known ([`CacheWrite`]).
    pub index: Option<IndexWrite>,
    /// The applied record on disk still says slurmctld refused the files once this plan is
    /// carried out without a new refusal (this hook writes no record and the one read says
    /// so): the quick path stays off, since the status shown is the refusal's, not the cached
    /// one. Decided here, so persisting does not read and parse the record again.
    pub refusal_on_record: bool,
    /// What the plan was made from and no longer needs (a line per node each), handed back
    /// with it so the caller decides how it goes ([`crate::charms::host::Host::release`]).
    pub spent: Spent,
}

/// The per-node structures a plan was made from and no longer needs.
#[derive(Debug, Clone, Default)]
pub struct Spent {
    /// The accepted nodes the files were rendered from.
    pub nodes: super::accepted_nodes::AcceptedNodes,
    /// What slurmctld ran before (unless a refusal keeps it: [`RefusedRecord::applied`]).
    pub applied: Option<Applied>,
    /// The slurm.conf and gres.conf models the files were rendered from.
    pub models: (crate::slurm::SlurmConf, crate::slurm::GresConf),
}

/// The cache a changed hook persists. It is serialised by [`super::apply::persist`], after
/// the files were written and let go, straight into the cache file: at 10,000 distinct nodes
/// the cache and the files are megabytes each, which were all held in memory at once.
#[derive(Debug, Clone)]
pub struct CacheWrite {
    /// The cache.
    pub cache: Cache,
    /// The body hash on the first line of the cache file this hook read (`None`: none was
    /// trusted): a cache that hashes the same is not written again.
    pub read_hash: Option<String>,
    /// The quick index on disk as observed: the index is planned against it once the new
    /// cache's hash is known ([`super::index::plan_index`]).
    pub index_before: Option<OnDisk>,
}

/// The applied record of a refusal, less its fingerprints (those of the last accepted set,
/// [`ControllerPlan::accepted_fingerprints`]): what slurmctld still runs, and the refusal.
#[derive(Debug, Clone)]
pub struct RefusedRecord {
    /// What slurmctld still runs (the last accepted set).
    pub applied: Option<Applied>,
    /// The refused files; `reason` and `input` are filled by [`super::apply`], the units told
    /// by [`ControllerPlan::refusal`].
    pub refusal: Refusal,
    /// The fingerprints of the files offered: the units whose node's fingerprint differs from
    /// the accepted one are told of a refusal ([`super::refusal::changed_units`]).
    pub offered_fingerprints: Grouped,
    /// Each relation's verdicts without the refusal (per relation cache key).
    pub verdicts: BTreeMap<String, Verdicts>,
}

/// The verdicts and cache of a hook in which slurmctld refuses the new files: the units whose
/// records changed learn it ([`super::refusal`]). The daemon's reason is known only then, so
/// [`super::apply`] makes the verdict values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnRefusal {
    /// Per relation: its verdicts without the refusal, and the units to tell.
    pub verdicts: Vec<(RelationId, Verdicts, Vec<String>)>,
    /// The relations (cache keys) whose published verdicts the cache then marks unknown, so
    /// the next hook (which runs in full) publishes them again.
    pub unknown: Vec<String>,
}

/// The munge key the cluster uses: the key secret's content when this hook read it; else, when
/// the secret exists, the key file the leader wrote from it; without a secret (first hook, or
/// an upgrade from charms that sent the key inline) the key already shared inline in
/// `cluster_info` (so nodes keep working), else the one on disk (Debian's munge package
/// generates one), else the fresh random key observed. Without a secret, the plan has apply
/// create it with this key ([`KeySecret::Create`]).
pub fn munge_key(obs: &Observed) -> Vec<u8> {
    if let Some(key) = &obs.secret_key {
        return key.clone();
    }
    let on_disk = obs
        .munge_key_on_disk
        .clone()
        .filter(|k| k.len() >= MIN_MUNGE_KEY_LEN);
    let inline = || {
        obs.cache
            .relations
            .values()
            .filter_map(|r| r.cluster_info_published.as_deref())
            .filter_map(|raw| ClusterInfo::from_relation_value(raw).ok())
            .find_map(|c| match c.munge_key {
                MungeKeyRef::Inline(k) => Some(k.bytes().to_vec()),
                MungeKeyRef::Secret(_) => None,
            })
    };
    let shared = match &obs.key_secret {
        Some(_) => on_disk.clone(),
        None => inline(),
    };
    shared
        .or(on_disk)
        .unwrap_or_else(|| obs.fresh_munge_key.clone())
}

/// Plans one leader hook: the secret housekeeping `event` asks for, the key ([`munge_key`]) and
/// the secret that holds it (created by apply when none exists), and the rest. Takes what was
/// observed by value: the cache and the applied record (a line per node each) become the
/// plan's, moved rather than copied.
pub fn plan(obs: Observed, event: Option<&EventSecret>) -> ControllerPlan {
    let secrets = housekeeping(event, true);
    if obs.unchanged {
        return unchanged(&obs, secrets);
    }
    let mut obs = obs;
    let key = munge_key(&obs);
    let restart_munge = obs.munge_key_on_disk.as_deref() != Some(key.as_slice());
    let secret = match &obs.key_secret {
        Some(id) => KeySecret::Existing(id.clone()),
        None => KeySecret::Create { key: key.clone() },
    };
    // The nodes' `--conf-server`: a host name Slurm refuses is published to no node (each would
    // refuse the record) and blocks the leader below.
    let host = &obs.settings.hostname;
    let cluster_info = host
        .as_ref()
        .ok()
        .and_then(|host| cluster_info(&obs.cache, &secret, obs.settings.auth, host));
    // Nodes that only moved between the cache's node groups: planned from the groups.
    let from_groups = group_plan::plan(&obs.settings, &obs.cache);
    let owners = std::mem::take(&mut obs.cache.owners);
    let memo = std::mem::take(&mut obs.cache.hostlists);
    let mut rendered = match from_groups {
        Some(mut rendered) => {
            rendered.owners = owners;
            rendered.hostlists = MemoSession::keeping(memo);
            rendered
        }
        None => {
            desired::plan_with_owners(&obs.settings, &obs.cache, owners, MemoSession::new(memo))
        }
    };
    let mut hostlists = std::mem::take(&mut rendered.hostlists);
    let mut cache = std::mem::take(&mut obs.cache);
    let mut relation_data = Vec::new();

    if let Err(e) = host {
        rendered.render_error = Some(format!(
            "this machine's host name cannot be the nodes' SlurmctldHost: {e} (give the machine a host name Slurm accepts)"
        ));
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    if let Some(why) = &obs.auth_refused {
        // Refused like a bad slurm-conf-parameters: blocked, the files on disk stay as they are.
        rendered.render_error = Some(why.to_string());
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    cache.owners = std::mem::take(&mut rendered.owners);
    // the groups stand for the files rendered: none when this hook writes none
    cache.node_groups = rendered
        .node_groups
        .take()
        .filter(|_| rendered.render_error.is_none());
    // the units are those the files were rendered from
    cache.set_owners(&rendered.owner_changes);
    // moved, not copied: it holds a fingerprint per node
    let had_record = obs.applied_record.is_some();
    let record = obs.applied_record.take().unwrap_or_default();
    let refused_before = record
        .refused
        .as_ref()
        .filter(|r| r.files_hash == rendered.applied.files_hash);
    if let Some(r) = refused_before {
        // The units whose records slurmctld refused keep hearing it.
        refusal::tell(&mut rendered.verdicts, r);
    }
    // Verdicts: each relation's rejected units, published where they changed.
    for (key, rel) in cache.relations.iter_mut() {
        let value = rendered
            .verdicts
            .get(key)
            .map(|v| v.to_relation_value())
            .unwrap_or_default();
        if rel.verdicts_published.as_deref().unwrap_or_default() == value {
            continue;
        }
        relation_data.push(RelationWrite {
            relation: RelationId::new(rel.endpoint.clone(), rel.id),
            app: true,
            data: Bag::from([(VERDICTS_KEY.to_string(), value.clone())]),
        });
        rel.verdicts_published = (!value.is_empty()).then_some(value);
    }
    // Each rejection is logged once (and again only when its reason changes).
    let mut logged = BTreeMap::new();
    let mut fresh = Vec::new();
    for (who, why) in &rendered.rejected {
        let hash = fnv1a(&[why.as_bytes()]);
        if cache.logged.get(who) != Some(&hash) {
            fresh.push(format!("left out {who}: {why}"));
        }
        logged.insert(who.clone(), hash);
    }
    cache.logged = logged;
    let mut status = status(&cache, &rendered);
    if let Some(r) = refused_before {
        // The same files slurmctld refused: not offered again until an input changes.
        status = refused_status(r);
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    let mut applied_before = None;
    let mut applied_after = None;
    let mut refused_record = None;
    let mut keep_accepted = false;
    let mut rollback = false;
    let mut spent_applied = None;
    let warnings = fresh
        .into_iter()
        .chain(
            rendered
                .render_error
                .iter()
                .map(|e| format!("not writing slurm.conf/gres.conf: {e}")),
        )
        .collect();
    let (files, decision) = match (rendered.slurm_conf.take(), rendered.gres_conf.take()) {
        (Some(slurm), Some(gres)) => {
            let mut files = Vec::new();
            if obs.settings.auth == AuthKind::Slurm {
                files.push(FileWrite::new(
                    SLURM_KEY,
                    key.clone(),
                    0o600,
                    Some(Owner::SLURM),
                ));
            }
            files.extend([
                FileWrite::new(CGROUP_CONF, CGROUP_CONF_TEXT, 0o644, Some(Owner::SLURM)),
                FileWrite::new(GRES_CONF, gres, 0o644, Some(Owner::SLURM)),
                FileWrite::new(SLURM_CONF, slurm, 0o644, Some(Owner::SLURM)),
            ]);
            let changed = cache.reload_deferred
                || files.iter().any(|f| {
                    let held = if f.path == SLURM_KEY {
                        obs.slurm_key_on_disk.as_deref() == Some(f.bytes.as_slice())
                    } else {
                        obs.files_on_disk
                            .get(f.path)
                            .and_then(Option::as_deref)
                            .is_some_and(|h| content_hash(&f.bytes) == h)
                    };
                    !held
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
                let mut old = cache.applied.take();
                let reloads = matches!(decision.reload, Reload::Reconfigure | Reload::Restart);
                if decision.reload != Reload::Nothing {
                    applied_before = Some(
                        AppliedRecordRef {
                            applied: old.as_ref(),
                            pending: Some(&rendered.applied.files_hash),
                            refused: None,
                            fingerprints: &record.fingerprints,
                        }
                        .to_bytes(),
                    );
                }
                // Same files, same nodes: the accepted fingerprints carry over (computing them
                // is O(nodes), paid only when slurmctld is brought in line).
                let mut computed = (decision.reload != Reload::Nothing).then(|| {
                    rendered
                        .fingerprints
                        .take()
                        .unwrap_or_else(|| refusal::fingerprints(&rendered.nodes, &mut hostlists))
                });
                let fingerprints = computed.as_ref().unwrap_or(&record.fingerprints);
                let same_record = had_record
                    && record.pending.is_none()
                    && record.refused.is_none()
                    && old.as_ref() == Some(&rendered.applied)
                    && *fingerprints == record.fingerprints;
                if !same_record {
                    let after = AppliedRecordRef {
                        applied: Some(&rendered.applied),
                        pending: None,
                        refused: None,
                        fingerprints,
                    };
                    applied_after = Some(after.to_bytes());
                }
                // a resume: the files differ from the accepted ones only in `DownNodes`
                let kept = decision.reload == Reload::Resume
                    || (decision.reload == Reload::Nothing && !changed && old.is_some());
                keep_accepted = reloads || kept;
                if reloads {
                    // Who is told of a refusal is worked out only if there is one
                    // ([`ControllerPlan::refusal`]): comparing every node's fingerprint is
                    // O(nodes), and slurmctld takes the files on almost every hook.
                    let offered = computed
                        .take()
                        .unwrap_or_else(|| record.fingerprints.clone());
                    refused_record = Some(RefusedRecord {
                        applied: old.take(),
                        refusal: Refusal {
                            files_hash: rendered.applied.files_hash.clone(),
                            // filled by [`super::apply`] when slurmctld refuses
                            reason: String::new(),
                            input: String::new(),
                            units: BTreeMap::new(),
                        },
                        offered_fingerprints: offered,
                        verdicts: std::mem::take(&mut rendered.verdicts),
                    });
                    rollback = obs.accepted_complete;
                }
                spent_applied = old;
                cache.applied = Some(rendered.applied);
                (files, decision)
            }
        }
        _ => (Vec::new(), Decision::nothing()),
    };
    if cache.reload_deferred {
        status = enlisting_status(obs.enlisting.as_ref(), &status);
    }
    cache.status = Some((status.kind.as_str().to_owned(), status.message.clone()));
    cache.hostlists = hostlists.into_memo();
    let version = version_file(&obs);
    let cache = Some(CacheWrite {
        cache,
        read_hash: obs.cache_hash.take(),
        index_before: obs.index_before.take(),
    });
    let refusal_on_record =
        applied_before.is_none() && applied_after.is_none() && record.refused.is_some();
    ControllerPlan {
        invalidate_index: !obs.quick,
        key_secret: Some(KeySecretPlan {
            secret,
            cluster_info,
        }),
        secrets,
        munge_key: Some(FileWrite::new(MUNGE_KEY, key, 0o400, Some(Owner::MUNGE))),
        restart_munge,
        files,
        decision,
        relation_data,
        warnings,
        status,
        cache,
        applied_before,
        applied_after,
        refused_record,
        keep_accepted,
        rollback,
        version,
        index: None,
        refusal_on_record,
        accepted_fingerprints: record.fingerprints,
        spent: Spent {
            nodes: rendered.nodes,
            applied: spent_applied,
            models: rendered.spent_models,
        },
    }
}

impl ControllerPlan {
    /// If slurmctld refuses this plan's files: the refusal to record (the units whose node
    /// changed since the last accepted set told, [`super::refusal::changed_units`]) and what
    /// it changes in the verdicts and the cache. `None` when the plan reloads nothing; without
    /// a cache to persist, the refusal tells no unit. Pure; made only when a refusal happens.
    pub fn refusal(&self) -> Option<(Refusal, OnRefusal)> {
        let record = self.refused_record.as_ref()?;
        let mut refusal = record.refusal.clone();
        let Some(CacheWrite { cache, .. }) = &self.cache else {
            return Some((refusal, OnRefusal::default()));
        };
        refusal.units = if self.spent.nodes.is_empty() {
            // planned from node groups: no node list, the units are found in the cache
            refusal::changed_units_in_cache(
                &self.accepted_fingerprints,
                &record.offered_fingerprints,
                cache,
            )
        } else {
            refusal::changed_units(
                &self.spent.nodes,
                &self.accepted_fingerprints,
                &record.offered_fingerprints,
                cache,
            )
        };
        let on = on_refusal(cache, &record.verdicts, &refusal);
        Some((refusal, on))
    }
}

/// What a refusal of this hook's files changes: the told units' relations get their verdicts
/// again (with the reason, by [`super::apply`]); the cache marks those verdicts unknown.
fn on_refusal(
    cache: &Cache,
    verdicts: &BTreeMap<String, Verdicts>,
    refusal: &Refusal,
) -> OnRefusal {
    let mut told: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (unit, key) in &refusal.units {
        told.entry(key.as_str()).or_default().push(unit.clone());
    }
    let mut out = OnRefusal {
        verdicts: Vec::new(),
        unknown: Vec::new(),
    };
    for (key, units) in told {
        let Some(rel) = cache.relations.get(key) else {
            continue;
        };
        let base = verdicts.get(key).cloned().unwrap_or_default();
        out.verdicts
            .push((RelationId::new(rel.endpoint.clone(), rel.id), base, units));
        out.unknown.push(key.to_owned());
    }
    out
}

/// The quick index of a hook whose event changed nothing (the cache file read stays); `None`
/// on the quick path, where it is current.
fn index_for(obs: &Observed) -> Option<IndexWrite> {
    (!obs.quick).then(|| {
        plan_index(
            obs.index_before.as_ref(),
            &obs.cache,
            obs.cache_hash.as_deref(),
        )
    })
}

/// The status while slurmctld refuses the files the inputs render to.
pub fn refused_status(r: &Refusal) -> Status {
    let input = if r.input.is_empty() {
        String::new()
    } else {
        format!(" at `{}`", r.input)
    };
    Status::new(
        StatusKind::Blocked,
        short(
            &format!(
                "slurmctld refused the new files{}{input}: {}; kept the last accepted files",
                refusal::named(r),
                r.reason,
            ),
            300,
        ),
    )
}

/// Where `cluster_info` naming `secret` is published: every relation whose published value
/// differs (all of them for a secret still to create: nothing can name it yet), granted the
/// secret where that value did not name it. `None` when every relation has it.
fn cluster_info(
    cache: &Cache,
    secret: &KeySecret,
    auth: AuthKind,
    host: &crate::slurm::types::NodeName,
) -> Option<ClusterInfoWrite> {
    let mut write = ClusterInfoWrite {
        auth,
        slurmctld_host: host.clone(),
        relations: Vec::new(),
        grants: Vec::new(),
    };
    let existing = match secret {
        KeySecret::Existing(id) => Some((id, write.value(id))),
        KeySecret::Create { .. } => None,
    };
    for rel in cache.relations.values() {
        let published = rel.cluster_info_published.as_deref();
        let granted = match &existing {
            Some((_, value)) if published == Some(value.as_str()) => continue,
            Some((id, _)) => published
                .and_then(|raw| ClusterInfo::from_relation_value(raw).ok())
                .is_some_and(|c| matches!(&c.munge_key, MungeKeyRef::Secret(s) if s == *id)),
            None => false,
        };
        let relation = RelationId::new(rel.endpoint.clone(), rel.id);
        if !granted {
            write.grants.push(relation.clone());
        }
        write.relations.push(relation);
    }
    (!write.relations.is_empty()).then_some(write)
}

/// The plan of a unit that is not the leader (pure): its secret housekeeping, then the standby
/// status. It renders, publishes and persists nothing.
pub fn standby(event: Option<&EventSecret>) -> StandbyPlan {
    StandbyPlan {
        secrets: housekeeping(event, false),
        status: Status::new(
            StatusKind::Active,
            "standby (the leader manages slurm.conf)",
        ),
    }
}

/// What a unit that is not the leader does in a hook ([`standby`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyPlan {
    /// The secret housekeeping the event asks for.
    pub secrets: Vec<SecretAction>,
    /// The one status to set.
    pub status: Status,
}

/// The plan of an event that changed nothing: no files, no reload, no relation data, the
/// cached status again, the cache file left as it is (the secret housekeeping still done).
fn unchanged(obs: &Observed, secrets: Vec<SecretAction>) -> ControllerPlan {
    let status = obs
        .cache
        .status
        .as_ref()
        .and_then(|(kind, message)| {
            StatusKind::from_word(kind).map(|kind| Status::new(kind, message.clone()))
        })
        .unwrap_or_else(|| Status::new(StatusKind::Waiting, "no change"));
    ControllerPlan {
        invalidate_index: !obs.quick,
        key_secret: None,
        secrets,
        munge_key: None,
        restart_munge: false,
        files: Vec::new(),
        decision: Decision::nothing(),
        relation_data: Vec::new(),
        warnings: Vec::new(),
        status,
        cache: None,
        version: version_file(obs),
        applied_before: None,
        applied_after: None,
        refused_record: None,
        accepted_fingerprints: Grouped::default(),
        keep_accepted: false,
        rollback: false,
        index: index_for(obs),
        refusal_on_record: obs
            .applied_record
            .as_ref()
            .is_some_and(|r| r.refused.is_some()),
        spent: Spent::default(),
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
    if rendered.node_count == 0 {
        let mut msg = "Waiting for slurmd nodes".to_string();
        push_problems(&mut msg, rendered);
        return Status::new(StatusKind::Waiting, short(&msg, 300));
    }
    let gpus = rendered.gres_count;
    let n = rendered.node_count;
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
