//! What a slurmctld leader hook looks at (reads only): config, the store with this event applied
//! to it ([`super::store`]: a relist from Juju when it may be stale), and, when the event
//! changed something, the munge key, the key secret, the Slurm files on disk and fresh random
//! bytes for a munge key in case the cluster has none yet.
//!
//! # First reads
//!
//! The reads a hook starts with, asked at once: `is-leader` and, for a relation event of the
//! `slurmctld` endpoint, the event's bag (`relation-get`), with `config-get` on a unit that
//! keeps no store; for any other event, on a unit that keeps a store (it led before),
//! `systemctl is-active slurmctld` ([`super::liveness`]; a relation event finds out in
//! [`observe`]). They run concurrently instead of one after another.
//!
//! Why: each hook tool is a process and a round trip to the unit agent (about 1–1.5 ms here),
//! and a node's `slurmd-relation-changed` on a small cluster is mostly those round trips
//! (issue 13: every controller hook ≥ 20× faster than the ops baseline). They are reads,
//! independent of each other, and Juju's agent runs the hook tools of one hook one at a time
//! whatever the order they arrive in (`jujuc/server.go`: "A single command is run at a time",
//! a mutex around each request), so asking at once changes no outcome: only the waiting
//! overlaps. Writes (`relation-set`, `status-set`, secrets) stay sequential, in apply's order.
//!
//! Only `slurmd-relation-joined`/`-changed` prefetch: the controller's busiest events, and the
//! ones whose bag the quick path needs. A leader renders them with the config its store kept
//! ([`config`]: Juju runs `config-changed` first when the config changed); on a non-leader,
//! and on an unchanged event, a read asked at once is spent for nothing but costs no waiting.

use super::desired::Settings;
use super::liveness::Liveness;
use super::refusal::ACCEPTED_FILES;
use super::store::{Change, Delta, RELOAD_PENDING, STORE_PATH, Store, StoreError};
use super::store_file::StoreFile;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::common::{MUNGE_KEY, SLURM_KEY};
use crate::charms::error::CharmError;
use crate::charms::host::Cmd;
use crate::charms::host::Host;
use crate::charms::util::config_str;
use crate::interface::{
    AuthKind, ClusterInfo, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL, MungeKeyRef,
};
use crate::interface::{
    CLUSTER_INFO_KEY, NODE_KEY, PARTITION_KEY, SLURMCTLD_ENDPOINT, VERDICTS_KEY,
};
use crate::slurm::SlurmVersion;
use crate::slurm::types::NodeName;
use juju_runtime::{Bag, BagOwner, HookToolError, ModelBackend, SecretBackend};
use juju_runtime::{Event, HookContext};
use juju_runtime::{SecretId, SecretRead, SecretRef};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Size of a generated munge key (bytes), as `mungekey` makes it.
pub const MUNGE_KEY_LEN: usize = 1024;

/// Everything the controller's plan needs (leader only).
#[derive(Debug, Clone)]
pub struct Observed {
    /// Rendering settings from config and the host.
    pub settings: Settings,
    /// The store, this event applied.
    pub store: Store,
    /// Why the store was rebuilt from Juju in this hook, if it was.
    pub rebuilt: Option<String>,
    /// The munge key file's bytes.
    pub munge_key_on_disk: Option<Vec<u8>>,
    /// The controller's key secret, when it exists (from the published `cluster_info`, else
    /// by its label).
    pub key_secret: Option<SecretId>,
    /// The secret's content (the key), when this hook read it (see [`must_read_key`]).
    pub secret_key: Option<Vec<u8>>,
    /// Why `auth-type` cannot be used (a bad value, or `slurm` before Slurm 23.11); the plan
    /// then blocks and writes no files.
    pub auth_refused: Option<AuthTypeError>,
    /// Why `state-save-location` cannot be used (a bad value, or no directory there); the plan
    /// then blocks and writes no files.
    pub state_save_refused: Option<super::leadership::StateSaveError>,
    /// `/etc/slurm/slurm.key` as it is on disk (written from the key secret for auth/slurm).
    pub slurm_key_on_disk: Option<Vec<u8>>,
    /// Random bytes from the kernel: the key to use if the cluster has none yet.
    pub fresh_munge_key: Vec<u8>,
    /// XXH3-64 of slurm.conf, gres.conf and cgroup.conf as they are on disk, by host path
    /// (`None`: absent): whether the files to write differ from them, without holding
    /// megabytes of slurm.conf in memory.
    pub files_on_disk: BTreeMap<&'static str, Option<u64>>,
    /// The installed slurmctld's version; `None` when it cannot be read (the charm then does
    /// what every version takes).
    pub slurm_version: Option<SlurmVersion>,
    /// All three last accepted copies ([`ACCEPTED_FILES`]) exist, so a refusal can put them
    /// back.
    pub accepted_complete: bool,
    /// The event changed nothing in the store and nothing waits to be applied: the plan sets
    /// the stored status again (the files, the munge key and goal-state were not read).
    pub unchanged: bool,
    /// Related slurmd units goal-state expects, and which of them are not in the store yet
    /// (asked only on relation-joined/changed, see [`enlisting`]).
    pub enlisting: Option<Enlisting>,
    /// Whether slurmctld runs: asked, or [`Liveness::assumed`] by a relation event that changed
    /// the store ([`super::liveness`]).
    pub liveness: Liveness,
}

/// Units of an enlistment batch (`add-unit -n N`) that Juju lists in goal-state but that have
/// not yet published their `node` record to this controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enlisting {
    /// Remote units goal-state expects on the `slurmctld` endpoint (not dying).
    pub expected: usize,
    /// Those of them with no record in the cache yet, sorted.
    pub pending: Vec<String>,
}

/// Asks goal-state which slurmd units are expected, on relation-joined/changed of our
/// endpoint only (and [`observe`] asks only for a unit new to the cache or while a reload is
/// deferred): those are the events of an enlistment, and any other hook (update-status at the
/// latest) applies what was deferred, so a unit that never arrives holds nobody back.
/// Units that are dying are not expected; blocked units (waiting for their operator, e.g. a
/// host name Slurm refuses) are not waited for; units whose record was rejected have arrived.
pub fn enlisting<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    store: &Store,
) -> Result<Option<Enlisting>, CharmError> {
    let ours = match &ctx.event {
        Event::RelationJoined(r) | Event::RelationChanged(r) => {
            r.relation.endpoint == SLURMCTLD_ENDPOINT
        }
        _ => false,
    };
    if !ours {
        return Ok(None);
    }
    let goal = backend.goal_state()?;
    let expected = goal.expected_remote_units(SLURMCTLD_ENDPOINT);
    // a blocked unit waits for its operator, not for this controller: it is not waited for
    let blocked = |unit: &str| {
        goal.relations
            .get(SLURMCTLD_ENDPOINT)
            .and_then(|r| r.get(unit))
            .is_some_and(|g| g.status == "blocked")
    };
    let known = |unit: &str| store.relations.values().any(|r| r.units.contains_key(unit));
    let pending = expected
        .iter()
        .filter(|u| !known(u) && !blocked(u))
        .map(|u| (*u).to_owned())
        .collect();
    Ok(Some(Enlisting {
        expected: expected.len(),
        pending,
    }))
}

/// The installed slurmctld's version: the one the store holds, except on install and
/// upgrade-charm (the package may have changed) or when it holds none, when `slurmctld -V` is
/// asked (and the store keeps its answer). A failure is logged, naming its source, and gives
/// `None` (the charm then does what every version takes).
pub fn slurm_version(
    ctx: &HookContext,
    host: &Host<'_>,
    store: &mut Store,
) -> Option<SlurmVersion> {
    let package_may_have_changed = matches!(ctx.event, Event::Install | Event::UpgradeCharm);
    if !package_may_have_changed && let Some(text) = &store.slurm_version {
        match SlurmVersion::parse_v_output(text, "the controller's store") {
            Ok(v) => return Some(v),
            Err(e) => tracing::warn!("{e}; asking slurmctld again"),
        }
    }
    let out = match host.run(&Cmd::new("slurmctld", ["-V"])) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            tracing::warn!("`slurmctld -V` failed: {}", out.stderr.trim());
            return None;
        }
        Err(e) => {
            tracing::warn!("cannot run `slurmctld -V`: {e}");
            return None;
        }
    };
    match SlurmVersion::parse_v_output(&out.stdout, "slurmctld -V") {
        Ok(v) => {
            store.slurm_version = Some(format!("slurm {v}"));
            Some(v)
        }
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    }
}

/// Reads config and the store, applies the event to the store (relisting from Juju when it may
/// be stale), and reads the host when the event changed something.
/// `prefetched`: what [`first_reads`] asked for already (not asked again); `hostname`: this
/// machine's, read once by the caller.
pub fn observe<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    prefetched: Prefetched,
    hostname: &str,
) -> Result<Observed, CharmError> {
    let event_bag = prefetched.event_bag.transpose()?;
    let forced = match &ctx.event {
        Event::LeaderElected => Some("leader elected".to_owned()),
        Event::UpgradeCharm => Some("charm upgraded".to_owned()),
        _ => None,
    };
    // a reload was under way when a hook failed: slurmctld may run the old files or the new
    let pending = host.path(RELOAD_PENDING).exists();
    let event_delta = match forced {
        None => delta(ctx, backend, event_bag.clone())?,
        Some(_) => None,
    };
    // Every leader hook finds out whether slurmctld runs ([`super::liveness`]); one where it
    // does not takes the plan path. [`first_reads`] asked already for events other than the
    // endpoint's relation events, where this unit kept a store (the leader's usual case).
    let (quiet, file) = read_store(ctx, host, event_delta.as_ref(), pending);
    let mut liveness = prefetched
        .liveness
        .or_else(|| quiet.is_some().then(|| Liveness::observe(host)));
    // an event that changes nothing skips the plan only while slurmctld runs, settled
    let quiet = quiet.filter(|_| liveness.as_ref().is_some_and(Liveness::settled));
    let quiet_hook = quiet.is_some();
    let decoded = || match file? {
        Read::Decoded(store) => Ok(*store),
        Read::Open(mut f) => f.decode(),
    };
    let (mut store, mut relist) = match quiet {
        Some(head) => (head, None),
        None => match decoded() {
            Ok(store) => (store, forced),
            Err(why) => (Store::default(), Some(format!("store {why}"))),
        },
    };
    if pending {
        store.reload_deferred = true;
    }
    let mut changed = false;
    // a unit new to the store may be one of a batch (`add-unit -n N`): goal-state is asked
    let joining = !quiet_hook
        && event_unit(ctx).is_some_and(|(rel, unit)| {
            !store
                .relations
                .get(&rel)
                .is_some_and(|r| r.units.contains_key(unit))
        });
    if relist.is_none() && !quiet_hook {
        match event_delta.map(|d| store.apply(d)) {
            None | Some(Change::None) => {}
            Some(Change::Changed) => changed = true,
            Some(Change::UnknownRelation) => {
                relist = Some("event for a relation the store does not know".into())
            }
        }
    }
    if let Some(why) = &relist {
        tracing::info!("rebuilding the store from Juju ({why})");
        let previous = std::mem::take(&mut store);
        store = rebuild(ctx, backend, event_bag)?;
        store.keep_ownership_of(&previous);
        changed = true;
    }
    let liveness = match liveness.take() {
        Some(asked) => asked,
        // a relation event that changed a settled store reconfigures slurmctld, which proves
        // it runs; apply checks it otherwise ([`super::liveness`])
        None if our_relation_event(ctx)
            && changed
            && relist.is_none()
            && !pending
            && settled(&store)
            && !host.exists(super::liveness::REVIVED) =>
        {
            Liveness::assumed()
        }
        None => Liveness::observe(host),
    };
    let config = config(ctx, backend, prefetched.config, &mut store)?;
    let slurm_version = slurm_version(ctx, host, &mut store);
    let mut cluster_name = config_str(&config, "cluster-name");
    if cluster_name.is_empty() {
        cluster_name = "osd-cluster".into();
    }
    let (auth, auth_refused) = auth_kind(&config_str(&config, "auth-type"), slurm_version);
    let state_save = super::leadership::state_save_observe(
        &config_str(&config, super::leadership::STATE_SAVE_OPTION),
        |path| host.path(path).is_dir(),
    );
    let settings = Settings {
        auth,
        cluster_name,
        default_partition: config_str(&config, "default-partition"),
        slurm_conf_parameters: config_str(&config, "slurm-conf-parameters"),
        hostname: NodeName::try_from(hostname),
        health_check: crate::slurm::HealthCheck::parse(
            config
                .get("health-check-interval")
                .and_then(serde_json::Value::as_i64),
            &config_str(&config, "health-check-node-state"),
            slurm_version,
        ),
        openmetrics: crate::slurm::openmetrics::serves_openmetrics(slurm_version),
        controllers: super::desired::Controllers {
            // the other units: [`super::leadership`], asked by the caller
            others: Vec::new(),
            state_save_location: match &state_save {
                Ok(super::leadership::StateSave::Shared(path)) => Some(path.clone()),
                _ => None,
            },
        },
        default_memory: crate::slurm::DefaultMemory::parse(
            &config_str(&config, "default-mem-per-cpu"),
            &config_str(&config, "default-mem-per-gpu"),
        ),
    };
    let published = published_secret(&store);
    let unchanged = quiet_hook
        || (our_relation_event(ctx)
            && !changed
            && relist.is_none()
            && settled(&store)
            && liveness.settled());
    let mut observed = Observed {
        settings,
        store,
        rebuilt: relist,
        munge_key_on_disk: None,
        key_secret: published,
        secret_key: None,
        auth_refused,
        state_save_refused: state_save.err(),
        slurm_key_on_disk: None,
        fresh_munge_key: Vec::new(),
        files_on_disk: BTreeMap::new(),
        slurm_version,
        accepted_complete: false,
        unchanged,
        enlisting: None,
        liveness,
    };
    if unchanged {
        return Ok(observed);
    }
    observed.accepted_complete = ACCEPTED_FILES
        .iter()
        .all(|(_, copy)| host.path(copy).is_file());
    // a deferred reload needs to know whether the batch is complete; a change to a known unit
    // is applied at once
    if joining || observed.store.reload_deferred {
        observed.enlisting = enlisting(ctx, backend, &observed.store)?;
    }
    for path in [CGROUP_CONF, GRES_CONF, SLURM_CONF] {
        observed.files_on_disk.insert(path, host.checksum(path)?);
    }
    observed.munge_key_on_disk = host.read(MUNGE_KEY)?;
    if observed.key_secret.is_none() {
        observed.key_secret = backend
            .secret_info_get(&SecretRef::Label(MUNGE_KEY_SECRET_LABEL.to_owned()))?
            .map(|info| info.id);
    }
    // a rebuilt store: the key file here may not be the one this unit wrote as the leader (a
    // new leader's is its own machine's)
    let read_key = must_read_key(&ctx.event, observed.munge_key_on_disk.is_some())
        || observed.rebuilt.is_some();
    observed.secret_key = match &observed.key_secret {
        Some(id) if read_key => {
            let content = backend.secret_get(
                &SecretRef::Id(id.clone()),
                &[MUNGE_KEY_SECRET_FIELD],
                SecretRead::Refresh,
            )?;
            content.get(MUNGE_KEY_SECRET_FIELD).cloned()
        }
        _ => None,
    };
    observed.slurm_key_on_disk = host.read(SLURM_KEY)?;
    observed.fresh_munge_key = host.random_bytes(MUNGE_KEY_LEN)?;
    Ok(observed)
}

/// The config this leader hook renders with. `slurmd-relation-joined`/`-changed` (the events
/// of an enlistment, most of a controller's hooks) take the one the store keeps; every other
/// hook asks `config-get` (or was given the first reads' answer, `prefetched`) and the store
/// keeps it.
///
/// Why a relation event may trust the kept config: Juju runs `config-changed` before any
/// relation hook once its agent has seen a config change (`nextOp` in
/// `internal/worker/uniter/resolver.go`, Juju 3.6 and 4.0: a changed config hash is resolved
/// before `Relations.NextOp`), and that hook reads the new config and renders it. A relation
/// hook that raced a change renders the config `slurm.conf` already has, and the
/// `config-changed` that follows renders the new one, as it would for a change made a moment
/// later. A store without a config (rebuilt in this hook, or written by an older charm) or
/// whose config does not read back: `config-get` is asked.
pub fn config<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    prefetched: Option<Result<Map<String, Value>, HookToolError>>,
    store: &mut Store,
) -> Result<Map<String, Value>, CharmError> {
    if prefetched.is_none()
        && our_relation_event(ctx)
        && let Some(text) = &store.config
    {
        match serde_json::from_str(text) {
            Ok(config) => return Ok(config),
            Err(e) => tracing::warn!("the store's config does not read back ({e}): asking Juju"),
        }
    }
    let config = match prefetched {
        Some(config) => config?,
        None => backend.config_get()?,
    };
    store.config = serde_json::to_string(&config).ok();
    Ok(config)
}

/// The store file as [`read_store`] left it: decoded whole, or still open (the event may change
/// nothing, which the caller decides once it knows whether slurmctld runs).
enum Read {
    Decoded(Box<Store>),
    Open(StoreFile<std::fs::File>),
}

/// Reads the store file: its head when `delta` changes nothing (the one predicate that drops
/// an event changing nothing before the plan reads the head and the event's unit only), else
/// the whole store decoded.
fn read_store(
    ctx: &HookContext,
    host: &Host<'_>,
    delta: Option<&Delta>,
    pending: bool,
) -> (Option<Store>, Result<Read, StoreError>) {
    // a path that cannot be read (a directory, no permission) is rebuilt like a damaged file;
    // saving replaces it
    let mut file = match std::fs::File::open(host.path(STORE_PATH)) {
        Ok(f) => StoreFile::open(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::Missing),
        Err(e) => Err(StoreError::Io(e)),
    };
    let quiet = match (&mut file, delta) {
        (Ok(file), Some(d)) if !pending && our_relation_event(ctx) => file
            .head()
            .ok()
            .filter(|head| settled(head) && file.unchanged(head, d)),
        _ => None,
    };
    let file = match quiet {
        Some(_) => file.map(Read::Open),
        None => file
            .and_then(|mut f| f.decode())
            .map(|s| Read::Decoded(Box::new(s))),
    };
    (quiet, file)
}

/// `auth-type` parsed and checked against the installed Slurm: `slurm` needs 23.11+ (an unknown
/// version is let through: slurmctld itself then says what it lacks). A refusal keeps munge and
/// says why.
pub fn auth_kind(value: &str, version: Option<SlurmVersion>) -> (AuthKind, Option<AuthTypeError>) {
    match AuthKind::parse(value) {
        Err(_) => (
            AuthKind::Munge,
            Some(AuthTypeError::Invalid {
                value: value.trim().to_owned(),
            }),
        ),
        Ok(AuthKind::Slurm) => match version.filter(|v| *v < SlurmVersion::AUTH_SLURM) {
            Some(installed) => (
                AuthKind::Munge,
                Some(AuthTypeError::SlurmTooOld { installed }),
            ),
            None => (AuthKind::Slurm, None),
        },
        Ok(kind) => (kind, None),
    }
}

/// Why the `auth-type` config cannot be used: the leader then blocks with it and writes no
/// files (the ones on disk stay). Typed so the status is made from it once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthTypeError {
    /// Neither `munge` nor `slurm`.
    #[error("config option `auth-type`: {value:?} is not munge or slurm (set one of those)")]
    Invalid {
        /// The value given (trimmed).
        value: String,
    },
    /// `slurm` on a Slurm older than [`SlurmVersion::AUTH_SLURM`].
    #[error(
        "auth-type=slurm needs Slurm {} or newer (installed: {installed}); set auth-type=munge",
        SlurmVersion::AUTH_SLURM
    )]
    SlurmTooOld {
        /// The installed version.
        installed: SlurmVersion,
    },
}

/// The key secret named by a `cluster_info` this leader published (any relation).
pub(super) fn published_secret(store: &Store) -> Option<SecretId> {
    store
        .relations
        .values()
        .filter_map(|r| r.cluster_info_published.as_deref())
        .filter_map(|raw| ClusterInfo::from_relation_value(raw).ok())
        .find_map(|c| match c.munge_key {
            MungeKeyRef::Secret(id) => Some(id),
            MungeKeyRef::Inline(_) => None,
        })
}

/// Whether the leader reads the key from its secret in this hook: when the key may have
/// changed or the leader may be new (and always when the key file is missing); else the key
/// file it wrote is current. Reads use `--refresh`, so the leader never holds an old revision.
pub fn must_read_key(event: &Event, on_disk: bool) -> bool {
    let may_change = matches!(
        event,
        Event::Install
            | Event::Start
            | Event::LeaderElected
            | Event::UpgradeCharm
            | Event::ConfigChanged
            | Event::SecretChanged(_)
    );
    may_change || !on_disk
}

/// A relation-joined/changed of our endpoint: the only events that can leave everything as it
/// was (any other hook, config-changed or update-status, reconciles the files in full).
fn our_relation_event(ctx: &HookContext) -> bool {
    match &ctx.event {
        Event::RelationJoined(r) | Event::RelationChanged(r) => {
            r.relation.endpoint == SLURMCTLD_ENDPOINT
        }
        _ => false,
    }
}

/// The store says the last hook finished its work: nothing deferred or refused, a status to set
/// again, a key secret published. Only then may an event that changes nothing skip the plan.
fn settled(store: &Store) -> bool {
    !store.reload_deferred
        && store.refused.is_none()
        && store.status.is_some()
        && published_secret(store).is_some()
}

/// `(relation id, unit)` of a relation-joined/changed of our endpoint about a unit.
fn event_unit(ctx: &HookContext) -> Option<(u32, &str)> {
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return None;
    };
    let unit = r.remote_unit.as_deref()?;
    (r.relation.endpoint == SLURMCTLD_ENDPOINT).then_some((r.relation.id, unit))
}

/// The value of `key` in `bag`, when present and not empty.
fn value(bag: &Bag, key: &str) -> Option<String> {
    bag.get(key).filter(|v| !v.is_empty()).cloned()
}

/// The event as a change to the store, reading the one bag it is about (`event_bag` when
/// [`first_reads`] read it already). `None` for events that change no relation data.
fn delta<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    event_bag: Option<Bag>,
) -> Result<Option<Delta>, CharmError> {
    let r = match &ctx.event {
        Event::RelationCreated(r)
        | Event::RelationJoined(r)
        | Event::RelationChanged(r)
        | Event::RelationDeparted(r)
        | Event::RelationBroken(r)
            if r.relation.endpoint == SLURMCTLD_ENDPOINT =>
        {
            r
        }
        _ => return Ok(None),
    };
    let relation = r.relation.id;
    let mut event_bag = event_bag;
    let mut get = |owner: BagOwner| match event_bag.take() {
        Some(bag) => Ok::<_, CharmError>(bag),
        None => Ok(backend.relation_get(&r.relation, &owner)?),
    };
    Ok(Some(match &ctx.event {
        Event::RelationCreated(_) => {
            // the remote leader may have written `partition` already (units installed first)
            let bag = backend.relation_get(&r.relation, &BagOwner::App(r.remote_app.clone()))?;
            Delta::RelationCreated {
                relation,
                app: r.remote_app.clone(),
                partition: value(&bag, PARTITION_KEY),
            }
        }
        Event::RelationJoined(_) | Event::RelationChanged(_) => match &r.remote_unit {
            Some(unit) => Delta::Node {
                relation,
                unit: unit.clone(),
                value: value(&get(BagOwner::Unit(unit.clone()))?, NODE_KEY),
            },
            None => Delta::Partition {
                relation,
                value: value(&get(BagOwner::App(r.remote_app.clone()))?, PARTITION_KEY),
            },
        },
        Event::RelationDeparted(_) => {
            let departing = r.departing_unit.as_ref().or(r.remote_unit.as_ref());
            match departing.filter(|u| **u != ctx.unit_name) {
                Some(unit) => Delta::Departed {
                    relation,
                    unit: unit.clone(),
                },
                None => return Ok(None),
            }
        }
        _ => Delta::Broken { relation },
    }))
}

/// The relist: every relation of the endpoint read in full (O(units) hook-tool calls) into a
/// new store. `event_bag` is the event's bag when it was read already (not asked again).
pub fn rebuild<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    event_bag: Option<Bag>,
) -> Result<Store, CharmError> {
    let departing = match &ctx.event {
        Event::RelationDeparted(r) => r.departing_unit.clone().or(r.remote_unit.clone()),
        _ => None,
    };
    let mut event_bag = event_bag;
    let mut get = |rel: &juju_runtime::RelationId, owner: BagOwner| {
        let theirs = match (&ctx.event, &owner) {
            (Event::RelationJoined(r) | Event::RelationChanged(r), BagOwner::Unit(u)) => {
                r.relation == *rel && r.remote_unit.as_ref() == Some(u)
            }
            (Event::RelationJoined(r) | Event::RelationChanged(r), BagOwner::App(a)) => {
                r.relation == *rel && r.remote_unit.is_none() && r.remote_app == *a
            }
            _ => false,
        };
        match event_bag.take_if(|_| theirs) {
            Some(bag) => Ok(bag),
            None => backend.relation_get(rel, &owner),
        }
    };
    let mut store = Store::default();
    for rel in backend.relation_ids(SLURMCTLD_ENDPOINT)? {
        let app = backend.relation_remote_app(&rel)?;
        let remote = get(&rel, BagOwner::App(app.clone()))?;
        let own = backend.relation_get(&rel, &BagOwner::App(ctx.app_name.clone()))?;
        store.apply(Delta::RelationCreated {
            relation: rel.id,
            app,
            partition: value(&remote, PARTITION_KEY),
        });
        if let Some(r) = store.relations.get_mut(&rel.id) {
            r.cluster_info_published = value(&own, CLUSTER_INFO_KEY);
            r.verdicts_published = value(&own, VERDICTS_KEY);
        }
        for unit in backend.relation_list(&rel)? {
            if Some(&unit) == departing.as_ref() {
                continue;
            }
            let bag = get(&rel, BagOwner::Unit(unit.clone()))?;
            if let Some(v) = value(&bag, NODE_KEY) {
                store.apply(Delta::Node {
                    relation: rel.id,
                    unit,
                    value: Some(v),
                });
            }
        }
    }
    Ok(store)
}

// ---- first_reads ----

/// What the first reads found.
#[derive(Debug)]
pub struct FirstReads {
    /// `is-leader`.
    pub leader: bool,
    /// The reads asked with it (empty for events that do not prefetch).
    pub prefetched: Prefetched,
}

/// Reads asked before the leader knew it needed them. Their errors are the leader's to report
/// (when observe needs the value): a non-leader never looks at them.
#[derive(Debug, Default)]
pub struct Prefetched {
    /// The event's bag.
    pub event_bag: Option<Result<Bag, HookToolError>>,
    /// `config-get`.
    pub config: Option<Result<Map<String, Value>, HookToolError>>,
    /// Whether slurmctld runs, asked when this unit has a store (it led before) and the event
    /// is not one of the endpoint's relation events (see [`first_reads`]).
    pub liveness: Option<Liveness>,
}

/// The bag a relation event of the `slurmctld` endpoint is about: the remote unit's, or the
/// remote application's when no unit is named.
fn event_bag_owner(ctx: &HookContext) -> Option<(&juju_runtime::RelationId, BagOwner)> {
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return None;
    };
    if r.relation.endpoint != SLURMCTLD_ENDPOINT {
        return None;
    }
    let owner = match &r.remote_unit {
        Some(unit) => BagOwner::Unit(unit.clone()),
        None => BagOwner::App(r.remote_app.clone()),
    };
    Some((&r.relation, owner))
}

/// Asks `is-leader`, and at the same time: for a relation event of the `slurmctld` endpoint
/// the event's bag, and the config where this unit keeps no store; for any other event, where
/// this unit keeps a store (it led before, so it most likely leads now), whether slurmctld
/// runs ([`Liveness::observe`], a read: a non-leader drops the answer; a relation event
/// finds out in [`observe`]). Each is a process the hook waits for; asked together they cost
/// one wait instead of one each (docs/BENCHMARKS.md, issue 38, eighth pass). Only a failing
/// `is-leader` is an error here.
pub fn first_reads<B: ModelBackend + Sync>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<FirstReads, HookToolError> {
    let event = event_bag_owner(ctx);
    // a unit that keeps a store led before: it takes the config of a relation event from the
    // store ([`config`]); one without asks for it (a standby's hook)
    let led = host.exists(STORE_PATH);
    let (leader, prefetched) = std::thread::scope(|scope| {
        // `systemctl`'s log lines go where this thread's go
        let log = tracing::dispatcher::get_default(Clone::clone);
        let liveness = (led && event.is_none()).then(|| {
            scope.spawn(move || tracing::dispatcher::with_default(&log, || Liveness::observe(host)))
        });
        let reads = event.map(|(relation, owner)| {
            (
                scope.spawn(move || backend.relation_get(relation, &owner)),
                (!led).then(|| scope.spawn(|| backend.config_get())),
            )
        });
        let leader = backend.is_leader();
        let (event_bag, config) = match reads {
            Some((bag, config)) => (
                Some(joined(bag.join())),
                config.map(|config| joined(config.join())),
            ),
            None => (None, None),
        };
        let prefetched = Prefetched {
            event_bag,
            config,
            liveness: liveness.map(|l| joined(l.join())),
        };
        (leader, prefetched)
    });
    Ok(FirstReads {
        leader: leader?,
        prefetched,
    })
}

/// A scoped thread's answer; a panic there is the hook's panic.
fn joined<T>(answer: std::thread::Result<T>) -> T {
    answer.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_type_refusals_say_what_to_set() {
        assert_eq!(auth_kind("munge", None), (AuthKind::Munge, None));
        let (kind, refused) = auth_kind(" kerberos ", None);
        assert_eq!(kind, AuthKind::Munge);
        assert_eq!(
            refused,
            Some(AuthTypeError::Invalid {
                value: "kerberos".into()
            })
        );
        let (kind, refused) = auth_kind("slurm", Some(SlurmVersion::new(22, 5, 8)));
        assert_eq!(kind, AuthKind::Munge);
        assert_eq!(
            refused.map(|e| e.to_string()).as_deref(),
            Some(
                "auth-type=slurm needs Slurm 23.11.0 or newer (installed: 22.05.8); set \
                 auth-type=munge"
            )
        );
    }
}
