//! What a slurmctld leader hook looks at (reads only). Relation data comes from the cache
//! ([`super::cache`]), updated in memory with the one bag the event is about; the cache is
//! rebuilt in full only when it may be stale (leader-elected, upgrade-charm, missing or
//! corrupt, or an event for a relation it does not know). The host part is the munge key, the
//! three Slurm files as they are on disk, and fresh random bytes for a munge key in case the
//! cluster has none yet.

use super::accepted::{ACCEPTED_FILES, APPLIED_PATH, AppliedRecord};
use super::cache::{CACHE_PATH, Cache, CacheError, CachedRelation, admit_partition};
use super::desired::Settings;
use super::first_reads::Prefetched;
use super::index::{self, Unchanged};
use super::plan::MUNGE_KEY_LEN;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::error::CharmError;
use crate::charms::host::Cmd;
use crate::charms::host::Host;
use crate::charms::slurmd::MUNGE_KEY;
use crate::charms::slurmd::SLURM_KEY;
use crate::charms::util::config_str;
use crate::interface::{
    AuthKind, ClusterInfo, MUNGE_KEY_SECRET_FIELD, MUNGE_KEY_SECRET_LABEL, MungeKeyRef,
};
use crate::interface::{
    CLUSTER_INFO_KEY, NODE_KEY, PARTITION_KEY, SLURMCTLD_ENDPOINT, VERDICTS_KEY,
};
use crate::slurm::SlurmVersion;
use crate::slurm::types::NodeName;
use juju_runtime::{Bag, BagOwner, ModelBackend, RelationId, SecretBackend};
use juju_runtime::{Event, HookContext, RelationEvent};
use juju_runtime::{SecretId, SecretRead, SecretRef};
use std::collections::BTreeMap;

/// Everything the controller's plan needs (leader only).
#[derive(Debug, Clone)]
pub struct Observed {
    /// Rendering settings from config and the host.
    pub settings: Settings,
    /// Relation data, already updated for this event.
    pub cache: Cache,
    /// Why the cache was rebuilt in this hook, if it was.
    pub rebuilt: Option<String>,
    /// The body hash on the first line of the cache file read, when it was trusted (saving a
    /// cache with the same hash is skipped; the file itself is not kept).
    pub cache_hash: Option<String>,
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
    /// `/etc/slurm/slurm.key` as it is on disk (written from the key secret for auth/slurm).
    pub slurm_key_on_disk: Option<Vec<u8>>,
    /// Random bytes from the kernel: the key to use if the cluster has none yet.
    pub fresh_munge_key: Vec<u8>,
    /// slurm.conf, gres.conf and cgroup.conf as they are on disk, by host path: the hash of
    /// each ([`super::cache::content_hash`], by [`Host::hash`]), read in pieces and not kept
    /// (at 10,000 distinct nodes slurm.conf alone is megabytes); `None` when absent.
    pub files_on_disk: BTreeMap<&'static str, Option<String>>,
    /// The installed slurmctld's version (`slurmctld -V`); `None` when it cannot be read (the
    /// charm then does what every version takes).
    pub slurm_version: Option<SlurmVersion>,
    /// The version was read from `slurmctld -V` in this hook (the plan persists it).
    pub slurm_version_fresh: bool,
    /// What slurmctld last accepted or refused ([`super::accepted`]); `None` when absent or
    /// unreadable.
    pub applied_record: Option<AppliedRecord>,
    /// All three last accepted copies ([`ACCEPTED_FILES`]) exist, so a refusal can put them
    /// back (they are read only then, by [`super::apply`]).
    pub accepted_complete: bool,
    /// The event's data equals the cached record and nothing waits to be applied: the plan
    /// renders nothing and sets the cached status again (the files, the munge key and
    /// goal-state were not read).
    pub unchanged: bool,
    /// Related slurmd units goal-state expects, and which of them are not in the cache yet
    /// (asked only on relation-joined/changed, see [`enlisting`]).
    pub enlisting: Option<Enlisting>,
    /// The quick index ([`super::index`]) showed the event changes nothing: neither the cache
    /// nor config was read, and nothing but the status is written.
    pub quick: bool,
    /// The quick index on disk, when it matched the cache read (the hook then rewrites only
    /// the buckets it changes); `None`: it is rewritten in full.
    pub index_before: Option<index::OnDisk>,
}

impl Observed {
    /// What the quick path observed: the status and key secret to use again, nothing else.
    fn quick(hit: Unchanged) -> Self {
        Observed {
            settings: Settings {
                cluster_name: String::new(),
                default_partition: String::new(),
                slurm_conf_parameters: String::new(),
                hostname: Ok(NodeName::placeholder()),
                auth: AuthKind::Munge,
            },
            cache: Cache {
                status: Some(hit.status),
                ..Cache::default()
            },
            rebuilt: None,
            cache_hash: None,
            munge_key_on_disk: None,
            key_secret: Some(hit.key_secret),
            secret_key: None,
            auth_refused: None,
            slurm_key_on_disk: None,
            fresh_munge_key: Vec::new(),
            files_on_disk: BTreeMap::new(),
            slurm_version: None,
            slurm_version_fresh: false,
            applied_record: None,
            accepted_complete: false,
            unchanged: true,
            enlisting: None,
            quick: true,
            index_before: None,
        }
    }
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
    cache: &Cache,
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
    let known = |unit: &str| {
        cache
            .relations
            .values()
            .any(|r| r.endpoint == SLURMCTLD_ENDPOINT && r.units.contains_key(unit))
    };
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

/// Where the leader keeps the slurmctld version it last read, so a hook does not spawn
/// `slurmctld -V` (the version changes only with the package: install, upgrade-charm).
pub const VERSION_PATH: &str = "/var/lib/slurm-charms/slurmctld/slurm-version";

/// The installed slurmctld's version, and whether it was read from the command just now (the
/// plan then persists it to [`VERSION_PATH`]). Install and upgrade-charm always ask the command;
/// other hooks use the file when it holds a version. A failure is logged, naming its source,
/// and gives `None` (the charm then does what every version takes).
pub fn slurm_version(
    ctx: &HookContext,
    host: &Host<'_>,
) -> Result<(Option<SlurmVersion>, bool), CharmError> {
    let package_may_have_changed = matches!(ctx.event, Event::Install | Event::UpgradeCharm);
    if !package_may_have_changed {
        if let Some(bytes) = host.read(VERSION_PATH)? {
            let text = String::from_utf8_lossy(&bytes);
            match SlurmVersion::parse_v_output(&text, VERSION_PATH) {
                Ok(v) => return Ok((Some(v), false)),
                Err(e) => tracing::warn!("{e}; asking slurmctld again"),
            }
        }
    }
    let out = match host.run(&Cmd::new("slurmctld", ["-V"])) {
        Ok(out) if out.success() => out,
        Ok(out) => {
            tracing::warn!("`slurmctld -V` failed: {}", out.stderr.trim());
            return Ok((None, true));
        }
        Err(e) => {
            tracing::warn!("cannot run `slurmctld -V`: {e}");
            return Ok((None, true));
        }
    };
    match SlurmVersion::parse_v_output(&out.stdout, "slurmctld -V") {
        Ok(v) => Ok((Some(v), true)),
        Err(e) => {
            tracing::warn!("{e}");
            Ok((None, true))
        }
    }
}

/// Reads config, the cache and the event's bag.
/// `prefetched`: what [`super::first_reads`] asked for already (not asked again).
pub fn observe<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    prefetched: Prefetched,
) -> Result<Observed, CharmError> {
    let event_bag = prefetched.event_bag.transpose()?;
    // An event whose data equals the cached record reads O(1) data (no cache body).
    let (prefetched_bag, event_bucket) =
        match index::unchanged(ctx, backend, host, CACHE_PATH, event_bag)? {
            Ok(hit) => return Ok(Observed::quick(hit)),
            Err(fallback) => (fallback.bag, fallback.bucket),
        };
    let config = match prefetched.config {
        Some(config) => config?,
        None => backend.config_get()?,
    };
    let (slurm_version, slurm_version_fresh) = slurm_version(ctx, host)?;
    let mut cluster_name = config_str(&config, "cluster-name");
    if cluster_name.is_empty() {
        cluster_name = "osd-cluster".into();
    }
    let (auth, auth_refused) = auth_kind(&config_str(&config, "auth-type"), slurm_version);
    let settings = Settings {
        auth,
        cluster_name,
        default_partition: config_str(&config, "default-partition"),
        slurm_conf_parameters: config_str(&config, "slurm-conf-parameters"),
        hostname: NodeName::try_from(host.hostname()?.as_str()),
    };
    // A cache path that cannot be read (a directory, no permission) is rebuilt like a corrupt
    // one; persisting replaces it.
    let (raw, unreadable) = match host.read(CACHE_PATH) {
        Ok(raw) => (raw, None),
        Err(e) => (None, Some(e)),
    };
    let loaded = match (&raw, unreadable) {
        (_, Some(why)) => Err(CacheError::Unreadable(why)),
        (None, None) => Err(CacheError::Missing),
        (Some(raw), None) => Cache::from_bytes(raw),
    };
    let cache_hash = raw
        .as_deref()
        .filter(|_| loaded.is_ok())
        .and_then(index::header_hash);
    drop(raw);
    let forced = match &ctx.event {
        Event::LeaderElected => Some("leader elected"),
        Event::UpgradeCharm => Some("charm upgraded"),
        _ => None,
    };
    let (mut cache, mut rebuild) = match (loaded, forced) {
        (Ok(c), None) => (c, None),
        (Ok(c), Some(why)) => (c, Some(why.to_string())),
        (Err(why), _) => (Cache::default(), Some(format!("cache {why}"))),
    };
    let head = index::read_head(host);
    let mut index_before = match (&cache_hash, &rebuild, head) {
        (Some(hash), None, Some(head)) if *hash == head.cache_hash => Some(index::OnDisk {
            buckets: head.buckets,
            relations: head.relations.into_keys().collect(),
            force: None,
            force_text: None,
        }),
        _ => None,
    };
    if let (Some(before), Some(unit)) = (&mut index_before, event_unit(ctx)) {
        // the event's unit took the full path: its bucket is written again (a bucket that was
        // missing or wrong is repaired)
        before.force(&unit.0, &unit.1);
        // the quick path read that bucket (the head lists it): the plan patches it
        before.force_text = event_bucket
            .filter(|(b, _)| before.force == Some(*b))
            .map(|(_, text)| text);
    }
    let before = event_record(ctx, &cache);
    let mut prefetched = prefetched_bag;
    if rebuild.is_none() && !update_with(ctx, backend, &mut cache, prefetched.take())? {
        rebuild = Some("event for a relation the cache does not know".into());
        index_before = None;
    }
    let applied_record = host
        .read(APPLIED_PATH)
        .ok()
        .flatten()
        .and_then(|raw| AppliedRecord::from_bytes(&raw));
    let published = published_secret(&cache);
    // A refusal by slurmctld is in the status the unit shows, not in the cached one: such a
    // hook runs in full so the status stays the refusal's.
    let refused = applied_record.as_ref().is_some_and(|r| r.refused.is_some());
    let unchanged = !refused
        && rebuild.is_none()
        && before.is_some()
        && before == event_record(ctx, &cache)
        && !cache.reload_deferred
        && cache.status.is_some()
        && published.is_some();
    if unchanged {
        return Ok(Observed {
            key_secret: published,
            secret_key: None,
            auth_refused: None,
            slurm_key_on_disk: None,
            applied_record,
            accepted_complete: false,
            settings,
            cache,
            rebuilt: None,
            cache_hash,
            munge_key_on_disk: None,
            fresh_munge_key: Vec::new(),
            files_on_disk: BTreeMap::new(),
            slurm_version,
            slurm_version_fresh,
            unchanged: true,
            enlisting: None,
            quick: false,
            index_before,
        });
    }
    if let Some(why) = &rebuild {
        tracing::info!("rebuilding the relation cache in full ({why})");
        let previous = std::mem::take(&mut cache);
        cache = rebuild_cache(ctx, backend, prefetched)?;
        cache.keep_ownership_of(&previous);
    }
    cache.prune_shapes();
    let mut applied_record = applied_record;
    // The applied record is the one copy of what slurmctld runs (written as soon as slurmctld
    // took the files); moved into the cache for the plan, not copied.
    cache.applied = applied_record.as_mut().and_then(|r| r.applied.take());
    let accepted_complete = ACCEPTED_FILES
        .iter()
        .all(|(_, copy)| host.path(copy).is_file());
    // a unit new to the cache may be one of a batch; a deferred reload needs to know whether
    // the batch is complete. A change to a known unit is applied at once.
    let joining = matches!(before, Some((None, _)));
    let enlisting = if joining || cache.reload_deferred {
        enlisting(ctx, backend, &cache)?
    } else {
        None
    };
    let mut files_on_disk = BTreeMap::new();
    for path in [CGROUP_CONF, GRES_CONF, SLURM_CONF] {
        files_on_disk.insert(path, host.hash(path)?);
    }
    let munge_key_on_disk = host.read(MUNGE_KEY)?;
    let key_secret = match published_secret(&cache) {
        Some(id) => Some(id),
        None => backend
            .secret_info_get(&SecretRef::Label(MUNGE_KEY_SECRET_LABEL.to_owned()))?
            .map(|info| info.id),
    };
    let secret_key = match &key_secret {
        Some(id) if must_read_key(&ctx.event, munge_key_on_disk.is_some()) => {
            let content = backend.secret_get(
                &SecretRef::Id(id.clone()),
                &[MUNGE_KEY_SECRET_FIELD],
                SecretRead::Refresh,
            )?;
            content.get(MUNGE_KEY_SECRET_FIELD).cloned()
        }
        _ => None,
    };
    Ok(Observed {
        settings,
        cache,
        rebuilt: rebuild,
        cache_hash,
        munge_key_on_disk,
        auth_refused,
        slurm_key_on_disk: host.read(SLURM_KEY)?,
        key_secret,
        secret_key,
        fresh_munge_key: host.random_bytes(MUNGE_KEY_LEN)?,
        files_on_disk,
        slurm_version,
        slurm_version_fresh,
        applied_record,
        accepted_complete,
        unchanged: false,
        enlisting,
        quick: false,
        index_before,
    })
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
pub(super) fn published_secret(cache: &Cache) -> Option<SecretId> {
    cache
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

/// What a relation-joined/changed of our endpoint is about, as the cache holds it: the remote
/// unit's record (or none), the remote application's partition. `None` for other events.
fn event_record(
    ctx: &HookContext,
    cache: &Cache,
) -> Option<(Option<super::cache::CachedNode>, Option<String>)> {
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return None;
    };
    if r.relation.endpoint != SLURMCTLD_ENDPOINT {
        return None;
    }
    let entry = cache.relations.get(&key(&r.relation))?;
    let unit = r
        .remote_unit
        .as_ref()
        .and_then(|u| entry.units.get(u).map(|r| r.to_node()));
    Some((unit, entry.partition.clone()))
}

/// `(relation key, unit)` of a relation-joined/changed of our endpoint about a unit.
fn event_unit(ctx: &HookContext) -> Option<(String, String)> {
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return None;
    };
    let unit = r.remote_unit.clone()?;
    (r.relation.endpoint == SLURMCTLD_ENDPOINT).then(|| (key(&r.relation), unit))
}

fn key(rel: &RelationId) -> String {
    rel.to_string()
}

/// Applies the one change this event is about. Returns false when the cache cannot take it
/// (it does not know the relation) and must be rebuilt.
pub fn update_for_event<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    cache: &mut Cache,
) -> Result<bool, CharmError> {
    update_with(ctx, backend, cache, None)
}

/// [`update_for_event`], given the event's bag when the quick path already read it.
fn update_with<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    cache: &mut Cache,
    prefetched: Option<Bag>,
) -> Result<bool, CharmError> {
    let mut prefetched = prefetched;
    let mut get = |rel: &RelationId, owner: BagOwner| match prefetched.take() {
        Some(bag) => Ok(bag),
        None => backend.relation_get(rel, &owner),
    };
    let ours = |r: &RelationEvent| r.relation.endpoint == SLURMCTLD_ENDPOINT;
    match &ctx.event {
        Event::RelationCreated(r) if ours(r) => {
            // The remote leader may have written `partition` already (units installed first).
            let bag = backend.relation_get(&r.relation, &BagOwner::App(r.remote_app.clone()))?;
            let entry = cache
                .relations
                .entry(key(&r.relation))
                .or_insert_with(|| CachedRelation {
                    endpoint: r.relation.endpoint.clone(),
                    id: r.relation.id,
                    app: r.remote_app.clone(),
                    ..Default::default()
                });
            entry.partition = bag
                .get(PARTITION_KEY)
                .filter(|v| !v.is_empty())
                .map(|v| admit_partition(v));
        }
        Event::RelationJoined(r) | Event::RelationChanged(r) if ours(r) => {
            let k = key(&r.relation);
            if !cache.relations.contains_key(&k) {
                return Ok(false);
            }
            match &r.remote_unit {
                Some(unit) => {
                    let bag = get(&r.relation, BagOwner::Unit(unit.clone()))?;
                    let node = bag
                        .get(NODE_KEY)
                        .filter(|v| !v.is_empty())
                        .map(|v| cache.ingest_node(v));
                    if let Some(entry) = cache.relations.get_mut(&k) {
                        match node {
                            Some(mut node) => {
                                // a unit keeps owning its name while it publishes that name
                                let before = entry.units.get(unit);
                                node.owner =
                                    before.is_some_and(|b| b.owner && b.name == node.name.as_ref());
                                entry.units.insert(unit.clone(), node)
                            }
                            None => entry.units.remove(unit),
                        };
                    }
                }
                None => {
                    let bag = get(&r.relation, BagOwner::App(r.remote_app.clone()))?;
                    if let Some(entry) = cache.relations.get_mut(&k) {
                        entry.partition = bag
                            .get(PARTITION_KEY)
                            .filter(|v| !v.is_empty())
                            .map(|v| admit_partition(v));
                    }
                }
            }
        }
        Event::RelationDeparted(r) if ours(r) => {
            let Some(entry) = cache.relations.get_mut(&key(&r.relation)) else {
                return Ok(false);
            };
            let departing = r.departing_unit.as_ref().or(r.remote_unit.as_ref());
            if let Some(unit) = departing.filter(|u| **u != ctx.unit_name) {
                entry.units.remove(unit);
            }
        }
        Event::RelationBroken(r) if ours(r) => {
            cache.relations.remove(&key(&r.relation));
        }
        _ => {}
    }
    Ok(true)
}

/// Reads every relation in full: O(units) hook-tool calls.
/// `event_bag` is the event's bag when it was read already (it is not asked for again).
pub fn rebuild_cache<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    event_bag: Option<Bag>,
) -> Result<Cache, CharmError> {
    let departing = match &ctx.event {
        Event::RelationDeparted(r) => r.departing_unit.clone().or(r.remote_unit.clone()),
        _ => None,
    };
    let mut event_bag = event_bag;
    let mut get = |rel: &RelationId, owner: BagOwner| {
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
    let mut cache = Cache::default();
    for rel in backend.relation_ids(SLURMCTLD_ENDPOINT)? {
        let app = backend.relation_remote_app(&rel)?;
        let remote = get(&rel, BagOwner::App(app.clone()))?;
        let own = backend.relation_get(&rel, &BagOwner::App(ctx.app_name.clone()))?;
        let mut entry = CachedRelation {
            endpoint: rel.endpoint.clone(),
            id: rel.id,
            app,
            partition: remote
                .get(PARTITION_KEY)
                .filter(|v| !v.is_empty())
                .map(|v| admit_partition(v)),
            cluster_info_published: own.get(CLUSTER_INFO_KEY).filter(|v| !v.is_empty()).cloned(),
            verdicts_published: own.get(VERDICTS_KEY).filter(|v| !v.is_empty()).cloned(),
            ..Default::default()
        };
        for unit in backend.relation_list(&rel)? {
            if Some(&unit) == departing.as_ref() {
                continue;
            }
            let bag = get(&rel, BagOwner::Unit(unit.clone()))?;
            if let Some(v) = bag.get(NODE_KEY).filter(|v| !v.is_empty()) {
                entry.units.insert(unit, cache.ingest_node(v));
            }
        }
        cache.relations.insert(key(&rel), entry);
    }
    Ok(cache)
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
