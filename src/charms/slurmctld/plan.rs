//! The controller's plan: a pure function of what the leader observed. It says the secret
//! changes (the key secret created, a revision removed), which files to write, what slurmctld
//! needs afterwards, which relations get new data, the one status to set and the store to save
//! once everything else has succeeded. No I/O here: [`super::apply`] carries the plan out. When
//! the event changed nothing, the plan is the stored status again: an `if` below, not a second
//! path. A unit that is not the leader plans in [`super::leadership`].

use super::decide::{Decision, Reload, decide};
use super::desired::{self, CGROUP_CONF_TEXT, Plan as Rendered};
use super::key_secret::{
    ClusterInfoWrite, EventSecret, KeySecret, KeySecretPlan, SecretAction, housekeeping,
};
use super::liveness::{self, Marker};
use super::observe::{Enlisting, Observed};
use super::refusal;
use super::store::{Refusal, Store};
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::common::{MUNGE_KEY, SLURM_KEY};
use crate::charms::host::Owner;
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::charms::util::short;
use crate::interface::cluster_info::MIN_MUNGE_KEY_LEN;
use crate::interface::{
    AuthKind, ClusterInfo, MungeKeyRef, SLURMCTLD_ENDPOINT, VERDICTS_KEY, Verdicts,
};
use juju_runtime::{Bag, RelationId, Status, StatusKind};
use std::collections::BTreeMap;

/// Everything one leader hook does, decided before anything is done.
#[derive(Debug, Clone)]
pub struct ControllerPlan {
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
    /// slurm.key (auth/slurm), cgroup.conf, gres.conf and slurm.conf, in that order; empty
    /// when rendering failed or nothing changed (the files on disk stay as they are).
    pub files: Vec<FileWrite>,
    /// What slurmctld needs once the files are written.
    pub decision: Decision,
    /// The verdicts for every relation where they differ from what was published.
    pub relation_data: Vec<RelationWrite>,
    /// Lines to log as warnings (units left out and why).
    pub warnings: Vec<String>,
    /// The one status to set.
    pub status: Status,
    /// The store to save last (`None` when the event changed nothing: the file stays).
    pub store: Option<Store>,
    /// Once slurmctld took the files, copy them as the last accepted set
    /// ([`super::refusal::ACCEPTED_FILES`]).
    pub keep_accepted: bool,
    /// If slurmctld refuses the new files, put the last accepted copies back (a complete set
    /// was on disk when observed).
    pub rollback: bool,
    /// Every relation's verdicts (by relation id): what a refusal adds its verdicts to.
    pub verdicts: BTreeMap<u32, Verdicts>,
    /// What slurmctld ran, and [`Store::accepted_seq`], before this hook: what the store says
    /// again if slurmctld refuses this plan's files.
    pub previous: (Option<super::store::Applied>, u64),
    /// What becomes of the [`liveness::REVIVED`] marker (written once slurmctld, found not
    /// running, was restarted; removed when it was found running).
    pub revived: Marker,
    /// The plan took slurmctld to run without asking ([`liveness::Liveness::assumed`]): apply
    /// proves it, by the reconfigure or by asking first.
    pub assumed_running: bool,
}

/// The munge key the cluster uses: the key secret's content when this hook read it; else, when
/// the secret exists, the key file the leader wrote from it; without a secret (first hook, or
/// an upgrade from charms that sent the key inline) the key already shared inline in
/// `cluster_info` (so nodes keep working), else the one on disk (Debian's munge package
/// generates one), else the fresh random key observed.
pub fn munge_key(obs: &Observed) -> Vec<u8> {
    if let Some(key) = &obs.secret_key {
        return key.clone();
    }
    let on_disk = obs
        .munge_key_on_disk
        .clone()
        .filter(|k| k.len() >= MIN_MUNGE_KEY_LEN);
    let inline = || {
        obs.store
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

/// Plans one leader hook (see the module doc).
pub fn plan(obs: Observed, event: Option<&EventSecret>) -> ControllerPlan {
    let secrets = housekeeping(event, true);
    if obs.unchanged {
        // Nothing changed: the stored status again, nothing written.
        let status = stored_status(&obs.store);
        return ControllerPlan {
            key_secret: None,
            secrets,
            munge_key: None,
            restart_munge: false,
            files: Vec::new(),
            decision: Decision::nothing(),
            relation_data: Vec::new(),
            warnings: Vec::new(),
            status,
            store: None,
            keep_accepted: false,
            rollback: false,
            verdicts: BTreeMap::new(),
            previous: (None, 0),
            // an unchanged event is one where slurmctld runs and no marker is there
            revived: Marker::Keep,
            assumed_running: false,
        };
    }
    let key = munge_key(&obs);
    let mut obs = obs;
    let mut store = std::mem::take(&mut obs.store);
    let settings = obs.settings.clone();
    let previous = (store.applied.clone(), store.accepted_seq);
    let restart_munge = obs.munge_key_on_disk.as_deref() != Some(key.as_slice());
    let secret = match &obs.key_secret {
        Some(id) => KeySecret::Existing(id.clone()),
        None => KeySecret::Create { key: key.clone() },
    };
    // The nodes' `--conf-server`: a host name Slurm refuses is published to no node and blocks
    // the leader below.
    let host = &settings.hostname;
    let cluster_info = host
        .as_ref()
        .ok()
        .and_then(|host| cluster_info(&store, &secret, settings.auth, host));
    let mut rendered = desired::plan(&settings, &store);
    if let Err(e) = host {
        rendered.render_error = Some(format!(
            "this machine's host name cannot be the nodes' SlurmctldHost: {e} (give the machine a host name Slurm accepts)"
        ));
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    // slurmctld is not started on a state a leader change would not find again
    let refused = [
        obs.auth_refused.as_ref().map(ToString::to_string),
        obs.state_save_refused.as_ref().map(ToString::to_string),
    ];
    if let Some(why) = refused.into_iter().flatten().next() {
        rendered.render_error = Some(why);
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    store.owners = std::mem::take(&mut rendered.owners);
    store.set_owners(&rendered.owner_changes);
    let refused_before = store
        .refused
        .clone()
        .filter(|r| r.files_hash == rendered.applied.files_hash);
    if let Some(r) = &refused_before {
        // The units whose records slurmctld refused keep hearing it.
        refusal::tell(&mut rendered.verdicts, r);
    }
    let relation_data = verdicts(&store, &rendered.verdicts);
    let fresh = log_once(&mut store, &rendered.rejected);
    let mut status = status(&store, &rendered);
    if let Some(r) = &refused_before {
        // The same files slurmctld refused: not offered again until an input changes.
        status = refused_status(r);
        rendered.slurm_conf = None;
        rendered.gres_conf = None;
    }
    let mut warnings: Vec<String> = fresh
        .into_iter()
        .chain(
            rendered
                .render_error
                .iter()
                .map(|e| format!("not writing slurm.conf/gres.conf: {e}")),
        )
        .collect();
    let mut keep_accepted = false;
    let mut rollback = false;
    // slurmctld found not running: restarted on what it should run (liveness.rs)
    let dead = !obs.liveness.running;
    let (files, decision) = match (rendered.slurm_conf.take(), rendered.gres_conf.take()) {
        (Some(slurm), Some(gres)) => {
            let mut files = Vec::new();
            if settings.auth == AuthKind::Slurm {
                // auth/slurm: the cluster's key, which slurmctld reads at start (and slurmd
                // on every node, written there from the same secret).
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
            let changed = store.reload_deferred
                || files.iter().any(|f| {
                    let held = if f.path == SLURM_KEY {
                        obs.slurm_key_on_disk.as_deref() == Some(f.bytes.as_slice())
                    } else {
                        // a file the digests do not cover counts as changed
                        rendered.digests.of(f.path).is_some_and(|digest| {
                            obs.files_on_disk.get(f.path).copied().flatten() == Some(digest)
                        })
                    };
                    !held
                });
            let decision = decide(
                store.applied.as_ref(),
                &rendered.applied,
                changed,
                obs.slurm_version,
            );
            let revived = dead
                .then(|| liveness::revive(&decision, !rendered.applied.is_empty()))
                .flatten();
            if revived.is_none() && defer(&decision, obs.enlisting.as_ref()) {
                // the files are written; slurmctld keeps running what it has until the batch
                // is in or the next update-status
                store.reload_deferred = true;
                (files, Decision::nothing())
            } else {
                store.reload_deferred = false;
                let reloads = matches!(decision.reload, Reload::Reconfigure | Reload::Restart);
                // a resume: the files differ from the accepted ones only in `DownNodes`
                let kept = decision.reload == Reload::Resume
                    || (decision.reload == Reload::Nothing && !changed && store.applied.is_some());
                keep_accepted = reloads || kept;
                rollback = reloads && obs.accepted_complete;
                if decision.reload != Reload::Nothing || store.applied.is_none() {
                    store.accepted_seq = store.seq;
                }
                // what slurmctld runs once apply succeeds (a refusal puts the old one back)
                store.applied = Some(std::mem::take(&mut rendered.applied));
                store.refused = None;
                (files, revived.unwrap_or(decision))
            }
        }
        // nothing rendered (or the same files refused again): slurmctld keeps the accepted ones
        _ => {
            let runs_nodes = store.applied.as_ref().is_some_and(|a| !a.is_empty());
            let nothing = Decision::nothing();
            let decision = dead
                .then(|| liveness::revive(&nothing, runs_nodes))
                .flatten()
                .unwrap_or(nothing);
            (Vec::new(), decision)
        }
    };
    // a death only where this unit's store says slurmctld was brought in line here before (a
    // new leader, or a store rebuilt from nothing, starts it without calling it one)
    let revives =
        dead && previous.0.is_some() && matches!(decision.reload, Reload::Revive | Reload::Restart);
    if revives {
        warnings.push(liveness::with_log(
            "slurmctld was not running: restarting it",
            &obs.liveness.log_tail,
        ));
        status = liveness::revived_status(&obs.liveness, &status);
    }
    let revived = if revives {
        Marker::Write
    } else if obs.liveness.running && obs.liveness.revived_before {
        Marker::Remove
    } else {
        Marker::Keep
    };
    if store.reload_deferred {
        status = enlisting_status(obs.enlisting.as_ref(), &status);
    }
    store.status = Some((status.kind.as_str().to_owned(), status.message.clone()));
    ControllerPlan {
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
        store: Some(store),
        keep_accepted,
        rollback,
        verdicts: rendered.verdicts,
        previous,
        revived,
        assumed_running: obs.liveness.assumed,
    }
}

/// Each relation's verdicts, to publish where they differ from what the store says was
/// published ([`super::apply::save`] records them once published).
fn verdicts(store: &Store, verdicts: &BTreeMap<u32, Verdicts>) -> Vec<RelationWrite> {
    let mut out = Vec::new();
    for (id, rel) in &store.relations {
        let value = verdicts
            .get(id)
            .map(|v| v.to_relation_value())
            .unwrap_or_default();
        if rel.verdicts_published.as_deref().unwrap_or_default() == value {
            continue;
        }
        out.push(RelationWrite {
            relation: RelationId::new(SLURMCTLD_ENDPOINT, *id),
            app: true,
            data: Bag::from([(VERDICTS_KEY.to_string(), value)]),
        });
    }
    out
}

/// The rejections not logged yet in these words (each is logged once, and again only when its
/// reason changes); the store keeps the current ones.
fn log_once(store: &mut Store, rejected: &[(String, String)]) -> Vec<String> {
    let mut logged = BTreeMap::new();
    let mut fresh = Vec::new();
    for (who, why) in rejected {
        if store.logged.get(who) != Some(why) {
            fresh.push(format!("left out {who}: {why}"));
        }
        logged.insert(who.clone(), why.clone());
    }
    store.logged = logged;
    fresh
}

impl ControllerPlan {
    /// If slurmctld refuses this plan's files: the refusal to record, telling the units whose
    /// values changed since the last accepted files ([`Store::changed_since`]). `None` when the
    /// plan saves no store.
    pub fn refusal(&self, reason: String, input: String) -> Option<Refusal> {
        let store = self.store.as_ref()?;
        Some(Refusal {
            files_hash: store
                .applied
                .as_ref()
                .map(|a| a.files_hash)
                .unwrap_or_default(),
            reason,
            input,
            units: store.changed_since(self.previous.1),
        })
    }
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
/// differs (all of them for a secret still to create), granted the secret where that value did
/// not name it. `None` when every relation has it.
fn cluster_info(
    store: &Store,
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
    for (id, rel) in &store.relations {
        let published = rel.cluster_info_published.as_deref();
        let granted = match &existing {
            Some((_, value)) if published == Some(value.as_str()) => continue,
            Some((id, _)) => published
                .and_then(|raw| ClusterInfo::from_relation_value(raw).ok())
                .is_some_and(|c| matches!(&c.munge_key, MungeKeyRef::Secret(s) if s == *id)),
            None => false,
        };
        let relation = RelationId::new(SLURMCTLD_ENDPOINT, *id);
        if !granted {
            write.grants.push(relation.clone());
        }
        write.relations.push(relation);
    }
    (!write.relations.is_empty()).then_some(write)
}

/// The status the store holds (or a neutral one when it holds none).
fn stored_status(store: &Store) -> Status {
    if let Some(r) = &store.refused {
        return refused_status(r);
    }
    store
        .status
        .as_ref()
        .and_then(|(kind, message)| {
            StatusKind::from_word(kind).map(|kind| Status::new(kind, message.clone()))
        })
        .unwrap_or_else(|| Status::new(StatusKind::Waiting, "no change"))
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
fn status(store: &Store, rendered: &Rendered) -> Status {
    if let Some(e) = &rendered.render_error {
        return Status::new(
            StatusKind::Blocked,
            short(&format!("config not written: {e}"), 240),
        );
    }
    if store.relations.is_empty() {
        return Status::new(StatusKind::Blocked, "Need relation: slurmd");
    }
    if rendered.node_count == 0 {
        let mut msg = "Waiting for slurmd nodes".to_string();
        msg.push_str(&rendered.problems());
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
    msg.push_str(&rendered.problems());
    Status::new(StatusKind::Active, short(&msg, 300))
}
