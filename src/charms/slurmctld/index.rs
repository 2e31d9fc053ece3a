//! The controller's quick index: what a relation event whose data equals the cached record
//! needs to know, laid out so that such an event reads a constant amount of data whatever the
//! number of related units (issue 13: an unchanged event must not read, hash or parse the whole
//! relation cache, 0.65 MB at 10,000 units).
//!
//! **Where:** `<root>/var/cache/slurm-charms/slurmctld/relation-index/` (`/var/cache`: it can be
//! regenerated at any time from the relation cache; kept apart from the state directory, so the
//! index never competes with the applied record for space there):
//!
//! * `head.json`: the hash of the relation cache it was written for (the cache file's first
//!   line, [`super::cache`]), the status the last hook set, the key secret published, and per
//!   relation a digest of its cached `partition`. It exists only while an unchanged event may
//!   take the quick path: it is removed before a leader hook writes anything else (so a hook
//!   that fails half-way leaves none) and written last, after the cache, only when nothing waits
//!   to be applied (no deferred reload, no refusal by slurmctld, a status and a key secret).
//! * `b/00` … `b/7f`: [`BUCKETS`] bucket files; each lists, for the units whose key hashes to
//!   it, the relation key, the unit and the FNV-1a digest of the raw `node` value its cached
//!   record was made from. A changed unit rewrites one bucket; a full rebuild all of them.
//!
//! **Planned** ([`plan_index`]) from the cache a hook persists. When the index on disk is
//! trusted, only the buckets of the units changed since the cache was read
//! ([`super::cache::Units::changed_since_read`]) can differ from it: their texts are made in
//! one pass over the cache's units (hashing each unit's key, no text for the others) and the
//! other buckets keep the hashes on record. A relation added or removed, or a table not read
//! from the file, makes every bucket's text again, as a full rebuild does.
//!
//! **The quick path** ([`unchanged`]): on `slurmd-relation-changed`/`-joined` it reads the head,
//! the cache file's first line (not its body), one bucket (1/128 of the index: about 80 units at
//! 10,000) and the event's one bag; when the bag's value hashes to the digest on record, the
//! event changes nothing and the hook sets the cached status again. Anything unexpected (no
//! head, another cache hash, a unit not listed, an unreadable file) falls back to the full
//! path, which is always correct; the index is only ever a shortcut.

use super::cache::{Cache, fnv1a};
use crate::charms::host::{Host, HostError};
use crate::interface::{NODE_KEY, PARTITION_KEY, SLURMCTLD_ENDPOINT};
use juju_runtime::{Bag, BagOwner, Event, HookContext, ModelBackend, SecretId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;
use std::io::{BufRead, Read};

/// Directory of the index.
pub const INDEX_DIR: &str = "/var/cache/slurm-charms/slurmctld/relation-index";
/// The head file.
pub const HEAD_PATH: &str = "/var/cache/slurm-charms/slurmctld/relation-index/head.json";
/// Directory of the bucket files.
pub const BUCKET_DIR: &str = "/var/cache/slurm-charms/slurmctld/relation-index/b";
/// Number of bucket files (a power of two; changing it changes [`INDEX_VERSION`]).
pub const BUCKETS: u64 = 128;
/// Format version of the head and buckets.
pub const INDEX_VERSION: u32 = 1;
/// First line of a bucket file.
const BUCKET_MAGIC: &str = "slurmctld-relation-index 1";

/// The index head ([`HEAD_PATH`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// [`INDEX_VERSION`].
    pub version: u32,
    /// The hash on the first line of the relation cache this head was written with.
    pub cache_hash: String,
    /// The status to set again (`kind` word, message).
    pub status: (String, String),
    /// The key secret published in `cluster_info`.
    pub key_secret: String,
    /// Relation key → digest of its cached `partition` (empty: none).
    pub relations: BTreeMap<String, String>,
    /// FNV-1a of each bucket file's bytes, by bucket number: a bucket that is not exactly what
    /// this head was written with (an older one a crash left, an empty one) is not trusted, so
    /// the index files need no `fsync` of their own.
    pub buckets: Vec<String>,
}

/// The index on disk as the full path found it (its head matched the cache read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnDisk {
    /// The head's bucket hashes: a bucket whose new text hashes the same is not written.
    pub buckets: Vec<String>,
    /// The relation keys of the cache the index was written for (the head's): a relation
    /// added or removed since then makes the plan compute every bucket's text again.
    pub relations: BTreeSet<String>,
    /// The bucket of the event's unit, written again whatever its hash (the unit took the full
    /// path: a bucket file that was missing or wrong is repaired).
    pub force: Option<u64>,
    /// That bucket's file as the quick path read it, when it was the one the head lists: a
    /// hook whose changes all fall in it patches this text (`patched`) instead of making
    /// the bucket from every cached unit.
    pub force_text: Option<String>,
}

impl OnDisk {
    /// Marks the bucket of `(relation key, unit)` to be written again.
    pub fn force(&mut self, relation: &str, unit: &str) {
        self.force = Some(bucket_of(relation, unit));
    }
}

/// What the quick path found: the event changes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchanged {
    /// The status to set again.
    pub status: (String, String),
    /// The published key secret.
    pub key_secret: SecretId,
}

/// Why the quick path did not apply, with what it already read (so the full path does not
/// ask Juju for the same bag twice).
#[derive(Debug, Clone, Default)]
pub struct Fallback {
    /// The event's bag, when the quick path read it.
    pub bag: Option<Bag>,
    /// The event unit's bucket (number, file text), when the quick path read it and it is the
    /// one the head lists ([`OnDisk::force_text`]).
    pub bucket: Option<(u64, String)>,
}

/// Digest of a raw relation value as the index and the cache keep it.
pub fn digest(raw: &str) -> String {
    digest_bytes(raw.as_bytes())
}

fn digest_bytes(raw: &[u8]) -> String {
    fnv1a(&[raw])
}

/// The digest of a cached `partition` (empty when there is none).
pub fn partition_digest(partition: Option<&str>) -> String {
    partition.map(digest).unwrap_or_default()
}

fn bucket_of(relation: &str, unit: &str) -> u64 {
    bucket_in(relation_hash(relation), unit)
}

/// The FNV-1a state after `relation` and its separator: where every unit's key of the
/// relation starts ([`bucket_in`]).
fn relation_hash(relation: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(relation.as_bytes());
    h.write(&[0]);
    h.finish()
}

/// The bucket of `unit` in the relation whose [`relation_hash`] is given.
fn bucket_in(relation_hash: u64, unit: &str) -> u64 {
    let mut h = fnv::FnvHasher::with_key(relation_hash);
    h.write(unit.as_bytes());
    h.finish() % BUCKETS
}

fn bucket_path(bucket: u64) -> String {
    format!("{BUCKET_DIR}/{bucket:02x}")
}

/// The hash on a relation cache file's first line, reading no more than that line.
pub fn cache_hash_on_disk(host: &Host<'_>, path: &str) -> Option<String> {
    let file = std::fs::File::open(host.path(path)).ok()?;
    let mut line = Vec::new();
    std::io::BufReader::with_capacity(256, file)
        .take(4096)
        .read_until(b'\n', &mut line)
        .ok()?;
    header_hash(&line)
}

/// The hash on the first line of cache bytes ([`Cache::to_bytes`]), when the file can be what
/// the last hook wrote: none for a file written unsynced in an earlier boot (the index, also
/// unsynced, may then agree with a cache that is older than Juju's data; see
/// [`super::cache`]'s durability).
pub fn header_hash(bytes: &[u8]) -> Option<String> {
    super::cache::Header::of(bytes)
        .ok()
        .filter(|h| h.trusted(crate::charms::host::boot_id()))
        .map(|h| h.hash)
}

/// The head on disk, when there is one of this format.
pub fn read_head(host: &Host<'_>) -> Option<Head> {
    let raw = host.read(HEAD_PATH).ok()??;
    serde_json::from_slice::<Head>(&raw)
        .ok()
        .filter(|h| h.version == INDEX_VERSION)
}

/// The quick path: `Ok(Ok(_))` when the event's data equals what the index records (the
/// event changes nothing), `Ok(Err(_))` when the full path must run. Only a hook-tool failure
/// is an error.
/// `prefetched` is the event's bag when [`super::first_reads`] already asked for it.
pub fn unchanged<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    cache_path: &str,
    prefetched: Option<Bag>,
) -> Result<Result<Unchanged, Fallback>, juju_runtime::HookToolError> {
    let fallback = |bag: Option<Bag>| Ok(Err(Fallback { bag, bucket: None }));
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return fallback(prefetched);
    };
    if r.relation.endpoint != SLURMCTLD_ENDPOINT {
        return fallback(prefetched);
    }
    let Some(head) = read_head(host) else {
        return fallback(prefetched);
    };
    if cache_hash_on_disk(host, cache_path).as_deref() != Some(head.cache_hash.as_str()) {
        return fallback(prefetched);
    }
    let key = r.relation.to_string();
    let Some(partition) = head.relations.get(&key) else {
        return fallback(prefetched);
    };
    let Ok(key_secret) = SecretId::parse(&head.key_secret) else {
        return fallback(prefetched);
    };
    let hit = Unchanged {
        status: head.status.clone(),
        key_secret,
    };
    match &r.remote_unit {
        Some(unit) => {
            let bucket = bucket_of(&key, unit);
            let Some(text) = read_bucket(host, &head, bucket) else {
                return fallback(prefetched);
            };
            let Some(known) = find_digest(&text, &key, unit) else {
                return fallback(prefetched);
            };
            let bag = match prefetched {
                Some(bag) => bag,
                None => backend.relation_get(&r.relation, &BagOwner::Unit(unit.clone()))?,
            };
            let same = bag
                .get(NODE_KEY)
                .filter(|v| !v.is_empty())
                .is_some_and(|v| digest(v) == known);
            Ok(if same {
                Ok(hit)
            } else {
                Err(Fallback {
                    bag: Some(bag),
                    bucket: Some((bucket, text)),
                })
            })
        }
        None => {
            let bag = match prefetched {
                Some(bag) => bag,
                None => backend.relation_get(&r.relation, &BagOwner::App(r.remote_app.clone()))?,
            };
            let value = bag
                .get(PARTITION_KEY)
                .filter(|v| !v.is_empty())
                .map(|v| super::cache::admit_partition(v));
            Ok(if partition_digest(value.as_deref()) == *partition {
                Ok(hit)
            } else {
                Err(Fallback {
                    bag: Some(bag),
                    bucket: None,
                })
            })
        }
    }
}

/// Bucket `bucket`'s file, when it is the one `head` lists (its hash on record) and starts
/// with the bucket magic line.
fn read_bucket(host: &Host<'_>, head: &Head, bucket: u64) -> Option<String> {
    let raw = host.read(&bucket_path(bucket)).ok()??;
    let expected = head.buckets.get(usize::try_from(bucket).ok()?)?;
    if digest_bytes(&raw) != *expected {
        return None;
    }
    let text = String::from_utf8(raw).ok()?;
    (text.lines().next()? == BUCKET_MAGIC).then_some(text)
}

/// The digest a bucket's text records for a unit.
fn find_digest<'a>(text: &'a str, relation: &str, unit: &str) -> Option<&'a str> {
    bucket_lines(text).find_map(|(r, u, d)| (r == relation && u == unit).then_some(d))
}

/// A bucket text's lines after the magic line, as (relation key, unit, digest); lines that
/// are not three tab-separated fields are skipped.
fn bucket_lines(text: &str) -> impl Iterator<Item = (&str, &str, &str)> {
    text.lines().skip(1).filter_map(|line| {
        let mut parts = line.split('\t');
        Some((parts.next()?, parts.next()?, parts.next()?))
    })
}

/// The index files a leader hook writes at its end (see [`plan_index`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexWrite {
    /// Remove every bucket first and write all of them (the old index was not trusted).
    pub full: bool,
    /// Bucket files to write, by path.
    pub buckets: Vec<(String, Vec<u8>)>,
    /// The head to write last; `None`: the quick path stays off until a later hook.
    pub head: Option<Head>,
}

/// Plans the index for the cache a hook persists: `before` is the index on disk when it was
/// trusted (its head matched the cache read), `None` to rewrite it in full. The text of each
/// bucket that can have changed is made from the cache (one pass, no per-unit map) and written
/// only when its hash differs from the one on record, or when forced; with `before`, those are
/// the buckets of the units changed since the cache was read and the forced one (see
/// `dirty_buckets`), the others keep the hashes on record. `cache_hash` is the hash of the
/// cache file as it will be after the hook. Pure.
pub fn plan_index(before: Option<&OnDisk>, cache: &Cache, cache_hash: Option<&str>) -> IndexWrite {
    let before = before.filter(|b| b.buckets.len() as u64 == BUCKETS);
    let dirty = before.and_then(|b| dirty_buckets(b, cache));
    plan_buckets(before, dirty, cache, cache_hash)
}

/// A set of buckets: one flag per bucket, by number.
type BucketSet = [bool; BUCKETS as usize];

/// The buckets whose text can differ from the one `before` records: those of the units
/// changed since the cache was read, and the forced one. `None` when that is not known (a
/// relation added or removed since the index was written, a table not read from the cache
/// file): every bucket is then made again.
fn dirty_buckets(before: &OnDisk, cache: &Cache) -> Option<BucketSet> {
    if !before.relations.iter().eq(cache.relations.keys()) {
        return None;
    }
    let mut dirty = [false; BUCKETS as usize];
    if let Some(b) = before.force {
        *dirty.get_mut(usize::try_from(b).ok()?)? = true;
    }
    for (rel, entry) in &cache.relations {
        let prefix = relation_hash(rel);
        for unit in entry.units.changed_since_read()? {
            if let Some(flag) = dirty.get_mut(bucket_in(prefix, unit) as usize) {
                *flag = true;
            }
        }
    }
    Some(dirty)
}

/// [`plan_index`] once the buckets to make are known: `dirty` (`None`: all of them); a bucket
/// not made keeps its hash in `before`, which `dirty` requires.
fn plan_buckets(
    before: Option<&OnDisk>,
    dirty: Option<BucketSet>,
    cache: &Cache,
    cache_hash: Option<&str>,
) -> IndexWrite {
    let wanted = dirty.unwrap_or([true; BUCKETS as usize]);
    // A hook whose changes all fall in the event unit's bucket, read by the quick path:
    // that text patched, no pass over every unit.
    let patch = match (before, dirty) {
        (
            Some(OnDisk {
                force: Some(b),
                force_text: Some(text),
                ..
            }),
            Some(_),
        ) if wanted.iter().enumerate().all(|(i, w)| !w || i as u64 == *b) => {
            patched(text, *b, cache).map(|t| (*b, t))
        }
        _ => None,
    };
    let mut texts: Vec<Option<String>> = wanted
        .iter()
        .map(|w| w.then(|| format!("{BUCKET_MAGIC}\n")))
        .collect();
    if let Some((b, text)) = patch {
        if let Some(slot) = texts.get_mut(b as usize) {
            *slot = Some(text);
        }
    } else if wanted.contains(&true) {
        // in (relation key, unit) order: the order the lines have always had
        for (rel, entry) in &cache.relations {
            let prefix = relation_hash(rel);
            for (unit, node) in entry.units.iter() {
                let text = texts.get_mut(bucket_in(prefix, unit) as usize);
                if let (Some(Some(text)), false) = (text, node.digest.is_empty()) {
                    for part in [rel.as_str(), "\t", unit, "\t", node.digest, "\n"] {
                        text.push_str(part);
                    }
                }
            }
        }
    }
    let recorded = |b: u64| {
        before.and_then(|before| usize::try_from(b).ok().and_then(|i| before.buckets.get(i)))
    };
    let mut hashes = Vec::with_capacity(texts.len());
    let mut buckets = Vec::new();
    for (b, text) in (0..BUCKETS).zip(texts) {
        let Some(text) = text else {
            // not made: as on record (`dirty` is only known with `before`)
            hashes.push(recorded(b).cloned().unwrap_or_default());
            continue;
        };
        let hash = digest_bytes(text.as_bytes());
        let kept = before.is_some_and(|before| before.force != Some(b))
            && recorded(b).is_some_and(|old| *old == hash);
        if !kept {
            buckets.push((bucket_path(b), text.into_bytes()));
        }
        hashes.push(hash);
    }
    IndexWrite {
        full: before.is_none(),
        buckets,
        head: head_for(cache, cache_hash, hashes),
    }
}

/// Bucket `b`'s text made from its text on disk (`text`, the one the head lists): the lines of
/// the units changed since the cache was read ([`Units::changed_since_read`]) replaced by
/// their current ones, in (relation key, unit) order as a pass over the cache writes them.
/// `None` when a table does not know what changed (the bucket is then made from every unit).
///
/// [`Units::changed_since_read`]: super::cache::Units::changed_since_read
fn patched(text: &str, b: u64, cache: &Cache) -> Option<String> {
    let mut changed: Vec<(&str, &str, Option<&str>)> = Vec::new();
    for (rel, entry) in &cache.relations {
        let prefix = relation_hash(rel);
        for unit in entry.units.changed_since_read()? {
            if bucket_in(prefix, unit) == b {
                let digest = entry
                    .units
                    .get(unit)
                    .map(|n| n.digest)
                    .filter(|d| !d.is_empty());
                changed.push((rel.as_str(), unit, digest));
            }
        }
    }
    let mut lines: Vec<(&str, &str, &str)> = bucket_lines(text)
        .filter(|(r, u, _)| !changed.iter().any(|(cr, cu, _)| cr == r && cu == u))
        .collect();
    lines.extend(changed.iter().filter_map(|&(r, u, d)| Some((r, u, d?))));
    lines.sort_unstable_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(BUCKET_MAGIC);
    out.push('\n');
    for (r, u, d) in lines {
        for part in [r, "\t", u, "\t", d, "\n"] {
            out.push_str(part);
        }
    }
    Some(out)
}

/// The head for a cache, when the quick path may use it: a status and a published key secret
/// are known and no reload waits.
fn head_for(cache: &Cache, cache_hash: Option<&str>, buckets: Vec<String>) -> Option<Head> {
    if cache.reload_deferred {
        return None;
    }
    let key_secret = super::observe::published_secret(cache)?;
    Some(Head {
        version: INDEX_VERSION,
        cache_hash: cache_hash?.to_owned(),
        status: cache.status.clone()?,
        key_secret: key_secret.to_string(),
        relations: cache
            .relations
            .iter()
            .map(|(k, r)| (k.clone(), partition_digest(r.partition.as_deref())))
            .collect(),
        buckets,
    })
}

/// Writes an index file atomically, mode 0600, without `fsync` ([`Host::write_unsynced`]):
/// after a crash a file may be older or empty, which the head's hashes reveal (the cache file's
/// first line for the head, the head's bucket hashes for a bucket), so the quick path is then
/// simply not taken. Saves 2 `fsync`s per changed event and 128 per full rebuild.
fn write_unsynced(host: &Host<'_>, host_path: &str, bytes: &[u8]) -> Result<(), IndexWriteError> {
    host.write_unsynced(host_path, bytes, 0o600, None)
        .map(drop)
        .map_err(IndexWriteError::Write)
}

/// Why the relation index was not written. The index is a shortcut: the hook logs this and
/// goes on, and events take the full path until a hook writes it. Typed so the warning is made
/// from it, with the OS or serializer error as its source.
#[derive(Debug, thiserror::Error)]
enum IndexWriteError {
    /// An old index directory or file could not be removed.
    #[error(
        "cannot clear {}: {source} (check the permissions of the charm's state directory)",
        path.display()
    )]
    Clear {
        /// What was being removed.
        path: std::path::PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A bucket or the head could not be written.
    #[error(transparent)]
    Write(HostError),
    /// The head did not serialize (never expected).
    #[error("the index head is not serializable: {0} (please report this charm bug)")]
    Head(#[source] serde_json::Error),
}

/// Removes whatever is at `path` (a directory with its content, or a file); absent is fine.
fn clear(path: &std::path::Path) -> Result<(), IndexWriteError> {
    let removed = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
    };
    removed.map_err(|source| IndexWriteError::Clear {
        path: path.to_owned(),
        source,
    })
}

/// Turns the quick path off before a hook writes anything (a hook that fails half-way then
/// leaves no head behind). A head that cannot be removed fails the hook: a stale one could
/// skip a change.
pub fn invalidate(host: &Host<'_>) -> Result<(), HostError> {
    let path = host.path(HEAD_PATH);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        // no head can be there: absent, or a file where a directory of the index belongs
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(())
        }
        Err(source) => Err(HostError::Write { path, source }),
    }
}

/// Writes the planned index: buckets, then the head (only when `quick_ok`: slurmctld did not
/// refuse the files). The index is a shortcut: a failure is logged and leaves the quick path
/// off, the hook goes on.
pub fn write(host: &Host<'_>, index: &IndexWrite, quick_ok: bool) {
    let result = (|| -> Result<(), IndexWriteError> {
        if index.full {
            // a non-directory where the index directory belongs is replaced
            let top = host.path(INDEX_DIR);
            if std::fs::symlink_metadata(&top).is_ok_and(|m| !m.is_dir()) {
                clear(&top)?;
            }
            clear(&host.path(BUCKET_DIR))?;
        }
        for (path, bytes) in &index.buckets {
            write_unsynced(host, path, bytes)?;
        }
        if let (Some(head), true) = (&index.head, quick_ok) {
            let bytes = serde_json::to_vec(head).map_err(IndexWriteError::Head)?;
            write_unsynced(host, HEAD_PATH, &bytes)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        tracing::warn!("relation index not written ({e}); events take the full path");
        host.remove(HEAD_PATH).ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charms::slurmctld::cache::{CachedNode, CachedRelation};
    use crate::charms::slurmctld::unit_table::tests::Rng;
    use crate::interface::{AuthKind, ClusterInfo, MungeKeyRef};
    use crate::slurm::types::NodeName;

    fn random_node(rng: &mut Rng) -> CachedNode {
        let i = rng.below(100_000);
        let digest = format!("{:016x}", rng.below(u64::MAX));
        match rng.below(10) {
            // rejected units are listed too; a record without a digest is not
            0 => CachedNode {
                rejected: Some("bad".into()),
                digest,
                ..CachedNode::default()
            },
            1 => CachedNode {
                name: Some(NodeName::try_from(format!("n-{i}")).unwrap()),
                shape: "s".into(),
                ..CachedNode::default()
            },
            _ => CachedNode {
                name: Some(NodeName::try_from(format!("n-{i}")).unwrap()),
                shape: "s".into(),
                digest,
                ..CachedNode::default()
            },
        }
    }

    /// A cache of a few relations and random units, with what a head needs (a status and a
    /// published key secret).
    fn random_cache(rng: &mut Rng) -> Cache {
        let mut cache = Cache {
            status: Some(("active".into(), "ok".into())),
            ..Cache::default()
        };
        let info = ClusterInfo {
            munge_key: MungeKeyRef::Secret(SecretId::parse("secret:cu5t2qvmp25c77fh5ce0").unwrap()),
            slurmctld_host: NodeName::try_from("ctl-0").unwrap(),
            nhc_params: String::new(),
            auth: AuthKind::Munge,
        };
        for r in 1..=1 + rng.below(3) {
            let mut rel = CachedRelation {
                endpoint: "slurmd".into(),
                id: u32::try_from(r).unwrap(),
                app: format!("app{r}"),
                partition: (r == 2).then(|| "{}".into()),
                cluster_info_published: Some(info.to_relation_value()),
                ..CachedRelation::default()
            };
            for k in 0..rng.below(400) {
                rel.units.insert(format!("app{r}/{k}"), random_node(rng));
            }
            cache.relations.insert(format!("slurmd:{r}"), rel);
        }
        cache
    }

    /// The index as a hook writes it for `cache` (read back from its file, as the next hook
    /// reads it).
    fn written(cache: &Cache) -> (Cache, OnDisk) {
        let head = plan_index(None, cache, Some("h0")).head.unwrap();
        let before = OnDisk {
            buckets: head.buckets,
            relations: head.relations.into_keys().collect(),
            force: None,
            force_text: None,
        };
        (Cache::from_bytes(&cache.to_bytes()).unwrap(), before)
    }

    /// Random hooks' edits to a cache read from its file: the plan that makes the changed
    /// buckets only equals the one that makes them all, bucket for bucket and in the head.
    #[test]
    fn changed_buckets_alone_plan_as_all_of_them() {
        let mut incremental = 0;
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let (mut cache, mut before) = written(&random_cache(&mut rng));
            let keys: Vec<String> = cache.relations.keys().cloned().collect();
            for _ in 0..rng.below(6) {
                let Some(key) = keys.get(rng.below(keys.len() as u64) as usize) else {
                    continue;
                };
                let Some(rel) = cache.relations.get_mut(key) else {
                    continue;
                };
                let unit = format!("{}/{}", rel.app, rng.below(420));
                match rng.below(3) {
                    0 => rel.units.remove(&unit),
                    1 => rel.units.set_owner(&unit, rng.below(2) == 0),
                    _ => rel.units.insert(unit, random_node(&mut rng)),
                }
            }
            match rng.below(4) {
                0 => before.force("slurmd:1", "app1/3"),
                // a relation added or removed: every bucket is made
                1 => drop(cache.relations.pop_last()),
                2 => {
                    let rel = CachedRelation {
                        units: [("new/0".to_owned(), random_node(&mut rng))]
                            .into_iter()
                            .collect(),
                        ..CachedRelation::default()
                    };
                    cache.relations.insert("slurmd:9".into(), rel);
                }
                _ => {}
            }
            let dirty = dirty_buckets(&before, &cache);
            let all = plan_buckets(Some(&before), None, &cache, Some("h1"));
            assert_eq!(
                plan_index(Some(&before), &cache, Some("h1")),
                all,
                "seed {seed}"
            );
            if let Some(dirty) = dirty {
                incremental += 1;
                // only the buckets made can be written
                for (path, _) in &all.buckets {
                    let b = u64::from_str_radix(path.rsplit('/').next().unwrap(), 16).unwrap();
                    assert!(dirty[b as usize], "{path}");
                }
            }
            // and the head's hashes are those of a plan from nothing
            let fresh = plan_index(None, &cache, Some("h1")).head;
            assert_eq!(all.head.map(|h| h.buckets), fresh.map(|h| h.buckets));
        }
        assert!(incremental >= 10, "{incremental}");
    }

    /// Edits that all fall in the event unit's bucket, with that bucket's text as the quick
    /// path read it: the patched bucket equals the one made from every unit.
    #[test]
    fn a_patched_bucket_equals_one_made_from_every_unit() {
        let mut patched_hooks = 0;
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
            let original = random_cache(&mut rng);
            let texts = plan_index(None, &original, Some("h0")).buckets;
            let (mut cache, mut before) = written(&original);
            let key = "slurmd:1";
            let unit = format!("app1/{}", rng.below(420));
            before.force(key, &unit);
            let b = before.force.unwrap();
            before.force_text = texts
                .iter()
                .find(|(path, _)| path.ends_with(&format!("/{b:02x}")))
                .map(|(_, bytes)| String::from_utf8(bytes.clone()).unwrap());
            let rel = cache.relations.get_mut(key).unwrap();
            // the event's unit changed, added or removed, and others of its bucket with it
            let mut same_bucket: Vec<String> = (0..2000)
                .map(|k| format!("app1/{k}"))
                .filter(|u| bucket_of(key, u) == b && *u != unit)
                .collect();
            same_bucket.truncate(rng.below(4) as usize);
            for u in std::iter::once(unit).chain(same_bucket) {
                match rng.below(3) {
                    0 => rel.units.remove(&u),
                    1 => rel.units.set_owner(&u, rng.below(2) == 0),
                    _ => rel.units.insert(u, random_node(&mut rng)),
                }
            }
            let dirty = dirty_buckets(&before, &cache).unwrap();
            assert!(dirty.iter().enumerate().all(|(i, d)| !d || i as u64 == b));
            let all = plan_buckets(Some(&before), None, &cache, Some("h1"));
            let got = plan_index(Some(&before), &cache, Some("h1"));
            assert_eq!(got, all, "seed {seed}");
            // the patch itself, against the bucket made from every unit (always written: forced)
            let made = all
                .buckets
                .iter()
                .find(|(path, _)| *path == bucket_path(b))
                .map(|(_, bytes)| String::from_utf8(bytes.clone()).unwrap());
            let text = before.force_text.as_deref().unwrap();
            assert_eq!(patched(text, b, &cache), made, "seed {seed}");
            patched_hooks += 1;
        }
        assert_eq!(patched_hooks, 40);
    }

    /// A removed relation's units leave their buckets, and a table not read from the file
    /// (replaced whole) makes every bucket again.
    #[test]
    fn relations_added_removed_or_replaced_make_every_bucket() {
        let mut rng = Rng(7);
        let mut cache = random_cache(&mut rng);
        let mut rel = cache.relations.get("slurmd:1").cloned().unwrap();
        rel.units.insert("app1/1000".into(), random_node(&mut rng));
        cache.relations.insert("slurmd:2".into(), rel);
        let (cache, before) = written(&cache);
        let mut removed = cache.clone();
        removed.relations.remove("slurmd:2");
        assert!(dirty_buckets(&before, &removed).is_none());
        let plan = plan_index(Some(&before), &removed, None);
        assert!(!plan.buckets.is_empty());
        assert_eq!(plan, plan_buckets(Some(&before), None, &removed, None));
        let mut replaced = cache.clone();
        if let Some(rel) = replaced.relations.get_mut("slurmd:2") {
            rel.units = rel
                .units
                .iter()
                .map(|(u, r)| (u.to_owned(), r.to_node()))
                .collect();
            rel.units.remove("app1/1000");
        }
        assert!(dirty_buckets(&before, &replaced).is_none());
        // nothing changed: no bucket is made or written
        let same = plan_index(Some(&before), &cache, Some("h0"));
        assert_eq!(
            dirty_buckets(&before, &cache),
            Some([false; BUCKETS as usize])
        );
        assert!(same.buckets.is_empty());
        assert_eq!(same, plan_buckets(Some(&before), None, &cache, Some("h0")));
    }

    #[test]
    fn a_unit_s_bucket_is_its_key_s_hash() {
        for (rel, unit) in [("slurmd:1", "compute/0"), ("slurmd:12", "a/7"), ("", "")] {
            let mut h = fnv::FnvHasher::default();
            h.write(rel.as_bytes());
            h.write(&[0]);
            h.write(unit.as_bytes());
            assert_eq!(bucket_of(rel, unit), h.finish() % BUCKETS);
        }
    }
}
