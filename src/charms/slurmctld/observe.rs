//! What a slurmctld hook looks at. Relation data comes from the cache ([`super::cache`]),
//! updated with the one bag the event is about; the cache is rebuilt in full only when it may
//! be stale (leader-elected, upgrade-charm, missing or corrupt, or an event for a relation it
//! does not know).

use super::cache::{CACHE_PATH, Cache, CachedRelation};
use super::desired::Settings;
use crate::charms::error::{CharmError, JujuResult};
use crate::charms::host::{Cmd, Host};
use crate::charms::util::config_str;
use crate::interface::{CLUSTER_INFO_KEY, NODE_KEY, PARTITION_KEY, SLURMCTLD_ENDPOINT};
use crate::juju::backend::{BagOwner, ModelBackend, RelationId};
use crate::juju::event::{Event, HookContext, RelationEvent};
use crate::slurm::SlurmVersion;

/// Everything the controller's desired state needs (leader only).
#[derive(Debug, Clone)]
pub struct Observed {
    /// Rendering settings from config and the host.
    pub settings: Settings,
    /// Relation data, already updated for this event.
    pub cache: Cache,
    /// Why the cache was rebuilt in this hook, if it was.
    pub rebuilt: Option<String>,
    /// The cache file as read, when it was trusted (saving identical bytes is skipped).
    pub cache_file: Option<Vec<u8>>,
    /// The installed slurmctld's version (`slurmctld -V`); `None` when it cannot be read (the
    /// charm then does what every version takes).
    pub slurm_version: Option<SlurmVersion>,
}

/// Reads the installed slurmctld's version; a failure is logged, naming its source.
pub fn slurm_version(host: &Host<'_>) -> Option<SlurmVersion> {
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
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    }
}

/// Reads config, the cache and the event's bag.
pub fn observe<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<Observed, CharmError> {
    let config = backend.config_get().juju()?;
    let mut cluster_name = config_str(&config, "cluster-name");
    if cluster_name.is_empty() {
        cluster_name = "osd-cluster".into();
    }
    let settings = Settings {
        cluster_name,
        default_partition: config_str(&config, "default-partition"),
        slurm_conf_parameters: config_str(&config, "slurm-conf-parameters"),
        hostname: host.hostname()?,
    };
    let raw = host.read(CACHE_PATH)?;
    let loaded = match &raw {
        None => Err("missing".to_string()),
        Some(raw) => Cache::from_bytes(raw),
    };
    let cache_file = raw.filter(|_| loaded.is_ok());
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
    if rebuild.is_none() && !update_for_event(ctx, backend, &mut cache)? {
        rebuild = Some("event for a relation the cache does not know".into());
    }
    if let Some(why) = &rebuild {
        tracing::info!("rebuilding the relation cache in full ({why})");
        let applied = cache.applied.take();
        cache = rebuild_cache(ctx, backend)?;
        cache.applied = applied;
    }
    cache.prune_shapes();
    Ok(Observed {
        settings,
        cache,
        rebuilt: rebuild,
        cache_file,
        slurm_version: None,
    })
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
    let ours = |r: &RelationEvent| r.relation.endpoint == SLURMCTLD_ENDPOINT;
    match &ctx.event {
        Event::RelationCreated(r) if ours(r) => {
            // The remote leader may have written `partition` already (units installed first).
            let bag = backend
                .relation_get(&r.relation, &BagOwner::App(r.remote_app.clone()))
                .juju()?;
            let entry = cache
                .relations
                .entry(key(&r.relation))
                .or_insert_with(|| CachedRelation {
                    endpoint: r.relation.endpoint.clone(),
                    id: r.relation.id,
                    app: r.remote_app.clone(),
                    ..Default::default()
                });
            entry.partition = bag.get(PARTITION_KEY).filter(|v| !v.is_empty()).cloned();
        }
        Event::RelationJoined(r) | Event::RelationChanged(r) if ours(r) => {
            let k = key(&r.relation);
            if !cache.relations.contains_key(&k) {
                return Ok(false);
            }
            match &r.remote_unit {
                Some(unit) => {
                    let bag = backend
                        .relation_get(&r.relation, &BagOwner::Unit(unit.clone()))
                        .juju()?;
                    let node = bag
                        .get(NODE_KEY)
                        .filter(|v| !v.is_empty())
                        .map(|v| cache.ingest_node(v));
                    if let Some(entry) = cache.relations.get_mut(&k) {
                        match node {
                            Some(node) => entry.units.insert(unit.clone(), node),
                            None => entry.units.remove(unit),
                        };
                    }
                }
                None => {
                    let bag = backend
                        .relation_get(&r.relation, &BagOwner::App(r.remote_app.clone()))
                        .juju()?;
                    if let Some(entry) = cache.relations.get_mut(&k) {
                        entry.partition = bag.get(PARTITION_KEY).filter(|v| !v.is_empty()).cloned();
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
pub fn rebuild_cache<B: ModelBackend>(ctx: &HookContext, backend: &B) -> Result<Cache, CharmError> {
    let departing = match &ctx.event {
        Event::RelationDeparted(r) => r.departing_unit.clone().or(r.remote_unit.clone()),
        _ => None,
    };
    let mut cache = Cache::default();
    for rel in backend.relation_ids(SLURMCTLD_ENDPOINT).juju()? {
        let app = backend.relation_remote_app(&rel).juju()?;
        let remote = backend
            .relation_get(&rel, &BagOwner::App(app.clone()))
            .juju()?;
        let own = backend
            .relation_get(&rel, &BagOwner::App(ctx.app_name.clone()))
            .juju()?;
        let mut entry = CachedRelation {
            endpoint: rel.endpoint.clone(),
            id: rel.id,
            app,
            partition: remote.get(PARTITION_KEY).filter(|v| !v.is_empty()).cloned(),
            cluster_info_published: own.get(CLUSTER_INFO_KEY).filter(|v| !v.is_empty()).cloned(),
            ..Default::default()
        };
        for unit in backend.relation_list(&rel).juju()? {
            if Some(&unit) == departing.as_ref() {
                continue;
            }
            let bag = backend
                .relation_get(&rel, &BagOwner::Unit(unit.clone()))
                .juju()?;
            if let Some(v) = bag.get(NODE_KEY).filter(|v| !v.is_empty()) {
                entry.units.insert(unit, cache.ingest_node(v));
            }
        }
        cache.relations.insert(key(&rel), entry);
    }
    Ok(cache)
}
