//! The controller's per-unit cache of remote relation data, so a relation event costs O(1)
//! hook-tool calls instead of re-reading every unit.
//!
//! **Where:** `<root>/var/lib/slurm-charms/slurmctld/relation-cache.json` (mode 0600), written
//! atomically at the end of each leader hook, after every hook-tool call succeeded (and only
//! when its bytes changed). It holds, per relation, the remote application, its raw
//! `partition` value, each remote unit's `node` record already checked and split into its
//! name, `new_node` flag and *shape* (the record with a placeholder name and `new_node` false,
//! stored once per distinct shape in [`Cache::shapes`], its `gres` list once per distinct list
//! in [`Cache::gres_lists`]) or the reason it was rejected, and the
//! `cluster_info` we last published there. What slurmctld runs (node → GRES, DownNodes, a hash
//! of the files) is kept once, in the applied record ([`super::accepted`]), not here. A hook
//! therefore parses only the one record its event is about; thousands of identical nodes share
//! one shape.
//!
//! **Integrity:** the body is stored with its XXH3-64 hash ([`content_hash`]); a missing file, unreadable JSON,
//! another format version or a hash mismatch counts as corrupt, and the hook rebuilds the cache
//! in full from relation data (O(units) calls, once). A full rebuild also happens on
//! `leader-elected` and `upgrade-charm` (the cache may be stale after missed events).
//!
//! **Durability:** the file is written without `fsync` (an atomic rename only) and its header
//! names the boot it was written in ([`crate::charms::host::boot_id`]). Unsynced data is lost
//! only by a kernel crash or a power loss, and the machine then boots again with a new boot
//! id: a cache of another boot may be older than what the last hooks told Juju, so it is
//! treated as lost and rebuilt in full (once per such restart). A hook therefore pays no
//! `fsync` for a file that is megabytes at 10,000 distinct nodes, and no node is lost to a
//! crash. Where the boot id cannot be read, the file is synced and its header names no boot.
//!
//! **When it is wrong** (e.g. edited by hand with a matching hash), the files follow the cache
//! until the next full rebuild; deleting the file forces one on the next hook. Shapes are still
//! validated again when rendered, so a bad shape leaves its units out rather than reaching
//! slurm.conf. The applied record only decides restart-versus-reconfigure: if it is lost,
//! slurmctld is restarted when the rendered files differ from those on disk (the safe
//! choice), and left alone otherwise.

pub use super::unit_table::{UnitRecord, Units};
use crate::charms::host::HostError;
use crate::interface::{InterfaceError, NodeRecord};
use crate::slurm::HostlistMemo;
use crate::slurm::types::NodeName;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hasher;

/// Host path of the cache file.
pub const CACHE_PATH: &str = "/var/lib/slurm-charms/slurmctld/relation-cache.json";

/// Format version; bump when the layout changes (an old file then counts as corrupt).
pub const CACHE_VERSION: u32 = 10;

/// Placeholder `NodeName` of a stored shape ([`NodeName::placeholder`]).
pub const SHAPE_NAME: &str = "shape";

/// Longest rejection reason kept in the cache and logged (a hostile 1 MiB value must not be
/// stored or logged in full on every hook).
pub const MAX_REASON_LEN: usize = 400;

/// The largest relation value (`node`, `partition`) the controller accepts, in bytes; a larger
/// one is refused for its unit or application alone. The limit the slurmd side keeps to.
pub use crate::interface::MAX_RECORD_LEN as MAX_VALUE_LEN;

/// A remote value over [`MAX_VALUE_LEN`]: the unit (or application) is left out and this is
/// its verdict, so it names the key, the size and the limit. A type of its own because both
/// the `node` ingest ([`IngestError`]) and the `partition` parse refuse with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{key}` is {len} bytes, over the {MAX_VALUE_LEN}-byte limit (shorten the unit's {})",
    option_of(key)
)]
pub struct OversizedValue {
    /// The relation key (`node`, `partition`).
    pub key: &'static str,
    /// The value's size in bytes.
    pub len: usize,
}

/// The option an operator shortens for an oversized value of `key`.
fn option_of(key: &str) -> &'static str {
    match key {
        "partition" => "partition-config",
        _ => "node-config overrides",
    }
}

/// Why one unit's `node` value is not cached as a shape: it is kept as rejected, with this
/// error's text as its verdict (made once, by [`Cache::ingest_node`]).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The value is over [`MAX_VALUE_LEN`].
    #[error(transparent)]
    Oversized(#[from] OversizedValue),
    /// The value is not a valid `node` record (the message names the field and the rule).
    #[error(transparent)]
    Record(#[from] InterfaceError),
    /// A record's own serialization did not read back as JSON (never expected).
    #[error("shape is not JSON: {0} (please report this charm bug)")]
    ShapeJson(#[source] serde_json::Error),
}

/// Marks a stored `partition` value that was too large to keep (only its size is kept).
pub const OVERSIZED_MARK: &str = "\u{0}oversized:";

/// A remote `partition` value as the cache keeps it: itself, or [`OVERSIZED_MARK`] and its
/// size when it is over [`MAX_VALUE_LEN`] (rejected when rendered, never stored in full).
pub fn admit_partition(raw: &str) -> String {
    if raw.len() > MAX_VALUE_LEN {
        format!("{OVERSIZED_MARK}{}", raw.len())
    } else {
        raw.to_string()
    }
}

/// Cached data of one relation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedRelation {
    /// Relation endpoint (`slurmd`).
    pub endpoint: String,
    /// Relation id number.
    pub id: u32,
    /// The remote application.
    pub app: String,
    /// The remote app bag's raw `partition` value.
    pub partition: Option<String>,
    /// Remote unit → its checked `node` record (units without one are not listed). Stored as
    /// an entry per unit ([`super::unit_table`]).
    #[serde(with = "super::unit_table")]
    pub units: Units,
    /// The `cluster_info` value last published on this relation.
    pub cluster_info_published: Option<String>,
    /// The `verdicts` value last published on this relation (`None`: none or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdicts_published: Option<String>,
}

/// One remote unit's `node` record as ingested: checked once, when it arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedNode {
    /// `NodeName` (none when rejected); parsed again when the cache file is read.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<NodeName>,
    /// `new_node`.
    #[serde(rename = "new", default, skip_serializing_if = "std::ops::Not::not")]
    pub new_node: bool,
    /// Key of its shape in [`Cache::shapes`] (empty when rejected).
    #[serde(rename = "s", default, skip_serializing_if = "String::is_empty")]
    pub shape: String,
    /// Why the record was left out (parse or validation error).
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// FNV-1a of the raw `node` value this entry was made from: what the quick index
    /// ([`super::index`]) compares an event's bag with.
    #[serde(rename = "d", default, skip_serializing_if = "String::is_empty")]
    pub digest: String,
    /// The unit owns the `NodeName` it publishes ([`super::owners`]: first come); kept while
    /// it publishes that name, dropped when it publishes another or is rejected.
    #[serde(rename = "o", default, skip_serializing_if = "std::ops::Not::not")]
    pub owner: bool,
}

/// What slurmctld was last brought in line with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Node name → its `Gres=` value (empty without GPUs), grouped by value
    /// ([`super::grouped`]).
    #[serde(rename = "node_groups")]
    pub nodes: super::grouped::Grouped,
    /// Nodes in `DownNodes` (stored as one hostlist: [`super::grouped::hostlist_set`]).
    #[serde(with = "super::grouped::hostlist_set")]
    pub down: BTreeSet<NodeName>,
    /// FNV-1a of slurm.conf, gres.conf and cgroup.conf.
    pub files_hash: String,
    /// The same hash with slurm.conf's `DownNodes` lines left out: equal in two states whose
    /// files differ only in which nodes are down, which [`super::decide`] turns into a resume
    /// instead of a reconfigure. Empty in caches written before it existed (then a change of
    /// `DownNodes` reconfigures, as it did).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub base_hash: String,
}

/// The whole cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// Relations by `endpoint:id`.
    pub relations: BTreeMap<String, CachedRelation>,
    /// What slurmctld runs, if known. Not stored in the cache file: the applied record
    /// ([`super::accepted::AppliedRecord`], written as soon as slurmctld took the files) is its
    /// one copy, moved here when observed, so a hook parses and writes it once.
    #[serde(skip)]
    pub applied: Option<Applied>,
    /// Node shapes by key: a checked record with `NodeName` set to [`SHAPE_NAME`] and
    /// `new_node` false, stored as its parts ([`NodeRecord::to_shape_parts`]): the record
    /// without its `gres` list, and the key of the list in [`Cache::gres_lists`].
    pub shapes: BTreeMap<String, StoredShape>,
    /// The shapes' `gres` lists by key, each distinct list once: nodes that differ only in
    /// their node line (`RealMemory`) share one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gres_lists: BTreeMap<String, ShapeJson>,
    /// Partition names owned first-come ([`super::owners`]; node names: [`CachedNode::owner`]).
    #[serde(default)]
    pub owners: super::owners::Owners,
    /// Rejections already logged, by unit or application: the hash of the reason (a rejected
    /// value is logged once, not on every hook).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub logged: BTreeMap<String, String>,
    /// The files on disk are newer than what slurmctld runs: a restart or reconfigure was
    /// deferred while more slurmd units were expected to join (goal-state), so the next hook
    /// that does not defer must apply them even when the files already match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reload_deferred: bool,
    /// The status the last leader hook that rendered the files set (`kind` word, message): an
    /// event whose data equals the cached record sets it again without building the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<(String, String)>,
    /// The hostlists of the long node lists the last render wrote (a shape's nodes, a
    /// partition's, the applied record's values): the next render reuses each list whose names
    /// did not change instead of compressing it again ([`crate::slurm::MemoSession`]).
    #[serde(default, skip_serializing_if = "HostlistMemo::is_empty")]
    pub hostlists: HostlistMemo,
    /// The node groups of the last plan, when it kept them ([`super::node_groups`]): the next
    /// hook plans from them when its units only moved between groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_groups: Option<super::node_groups::NodeGroups>,
}

/// One entry of [`Cache::shapes`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredShape {
    /// The record without its `gres` list.
    #[serde(rename = "n")]
    pub node: ShapeJson,
    /// The key of its list in [`Cache::gres_lists`] (`None`: no records).
    #[serde(rename = "g", default, skip_serializing_if = "Option::is_none")]
    pub gres: Option<String>,
}

/// A stored shape part: the compact JSON of a checked record's part, kept in the cache file as JSON (an
/// object, not a string holding it). At 10,000 distinct nodes the shapes are megabytes, which
/// as strings were escaped on every write and unescaped on every read; as raw JSON they are
/// checked once when read and written back as they are.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ShapeJson(Box<serde_json::value::RawValue>);

impl ShapeJson {
    /// A shape from its JSON text (`Err` when it is not JSON: never for a record's own
    /// serialization).
    pub fn new(json: String) -> Result<Self, serde_json::Error> {
        serde_json::value::RawValue::from_string(json).map(ShapeJson)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for ShapeJson {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ShapeJson {}

/// Stores `value` in `table` under `hash` (a colliding different value gets a numbered key:
/// `hash-1`, …) and returns its key.
fn insert_keyed<T: PartialEq>(table: &mut BTreeMap<String, T>, hash: String, value: T) -> String {
    let mut key = hash.clone();
    let mut i = 0u32;
    loop {
        match table.get(&key) {
            Some(known) if *known == value => return key,
            Some(_) => {
                i += 1;
                key = format!("{hash}-{i}");
            }
            None => {
                table.insert(key.clone(), value);
                return key;
            }
        }
    }
}

/// The file's first line; the body (the [`Cache`] as JSON) follows on the second, so it is
/// hashed and parsed as it lies, without being escaped into a string.
#[derive(Serialize, Deserialize)]
pub(crate) struct Header {
    version: u32,
    pub(crate) hash: String,
    /// The boot the file was written in without `fsync` ([`crate::charms::host::boot_id`]);
    /// absent when it was synced. A file of another boot is not trusted ([`Header::trusted`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) boot: Option<String>,
}

impl Header {
    /// The header on the first line of cache bytes (the rest is ignored), if it reads.
    pub(crate) fn of(bytes: &[u8]) -> Result<Header, serde_json::Error> {
        let end = bytes
            .iter()
            .position(|b| *b == b'\n')
            .unwrap_or(bytes.len());
        serde_json::from_slice(&bytes[..end])
    }

    /// Whether a body under this header can be what the last hook wrote, in boot `current`: a
    /// synced file always; an unsynced one only in the boot it was written in (a kernel crash
    /// or power loss, each a new boot, may have lost it or left an older copy).
    pub(crate) fn trusted(&self, current: Option<&str>) -> bool {
        match &self.boot {
            None => true,
            Some(boot) => current == Some(boot.as_str()),
        }
    }
}

/// The header line (with its newline) for a body of hash `hash`, written in boot `boot`
/// without `fsync` (`None`: synced).
fn header_line(hash: &str, boot: Option<&str>) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(&Header {
        version: CACHE_VERSION,
        hash: hash.to_owned(),
        boot: boot.map(str::to_owned),
    })?;
    line.push(b'\n');
    Ok(line)
}

/// Passes bytes on to `inner` and hashes them on the way ([`content_hash`]'s XXH3-64).
struct HashingWriter<W> {
    inner: W,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(buf.get(..n).unwrap_or(buf));
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Why a cache file cannot be trusted (the hook then rebuilds the cache in full).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// There is no cache file (first hook, or deleted to force a rebuild).
    #[error("missing")]
    Missing,
    /// The header line is not JSON.
    #[error("unreadable ({0})")]
    Header(#[source] serde_json::Error),
    /// Another format version wrote it.
    #[error("format version {found} (expected {CACHE_VERSION})")]
    Version {
        /// The version found.
        found: u32,
    },
    /// The header has no body after it.
    #[error("unreadable (no body)")]
    NoBody,
    /// The body does not match the header's hash.
    #[error("content hash mismatch")]
    Hash,
    /// Written without `fsync` before the machine last started: a crash may have lost what
    /// the last hooks wrote (`Header::trusted`).
    #[error(
        "written before the machine restarted (not synced to disk, so it may be older than the last hook)"
    )]
    EarlierBoot,
    /// The cache path cannot be read (a directory, no permission, an I/O error).
    #[error("unreadable ({0})")]
    Unreadable(#[source] HostError),
    /// The body is not the cache's JSON.
    #[error("unreadable body ({0})")]
    Body(#[source] serde_json::Error),
}

/// XXH3-64 (the `xxhash-rust` crate) of `bytes` as 16 hex digits: the hash of content that is
/// megabytes at 10,000 nodes and hashed on every controller hook (the cache's integrity line,
/// the live Slurm files compared with the rendered ones); stable across builds and versions.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// FNV-1a 64-bit (the `fnv` crate) of the parts in order, as 16 hex digits: a stable hash for
/// small stored keys (shape and gres-list keys, the applied record's file hashes, logged
/// reasons; it is stored, so it must not change between builds, unlike `std`'s or Fx hashing).
pub fn fnv1a(parts: &[&[u8]]) -> String {
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        h.write(part);
    }
    format!("{:016x}", h.finish())
}

/// A rejection reason cut to [`MAX_REASON_LEN`] bytes (at a character boundary).
fn bounded(reason: String) -> String {
    if reason.len() <= MAX_REASON_LEN {
        return reason;
    }
    let mut end = MAX_REASON_LEN;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &reason[..end], reason.len())
}

impl Cache {
    /// Parses one unit's raw `node` value into a [`NodeRecord`] (which checks every value and
    /// runs the renderer's per-node checks, so an accepted record always renders) and records
    /// its shape. A record that fails is kept as rejected, with the reason, for this unit alone.
    pub fn ingest_node(&mut self, raw: &str) -> CachedNode {
        let digest = super::index::digest(raw);
        match self.try_ingest(raw) {
            Ok(node) => CachedNode { digest, ..node },
            Err(why) => CachedNode {
                rejected: Some(bounded(why.to_string())),
                digest,
                ..CachedNode::default()
            },
        }
    }

    fn try_ingest(&mut self, raw: &str) -> Result<CachedNode, IngestError> {
        if raw.len() > MAX_VALUE_LEN {
            return Err(OversizedValue {
                key: "node",
                len: raw.len(),
            }
            .into());
        }
        let record = NodeRecord::from_relation_value(raw)?;
        let (node, gres) = record
            .renamed(NodeName::placeholder(), false)
            .to_shape_parts();
        let gres = match gres {
            Some(list) => {
                let hash = fnv1a(&[list.as_bytes()]);
                let list = ShapeJson::new(list).map_err(IngestError::ShapeJson)?;
                Some(insert_keyed(&mut self.gres_lists, hash, list))
            }
            None => None,
        };
        // The hash of both parts names the shape.
        let hash = fnv1a(&[
            node.as_bytes(),
            b"\n",
            gres.as_deref().unwrap_or_default().as_bytes(),
        ]);
        let node = ShapeJson::new(node).map_err(IngestError::ShapeJson)?;
        let key = insert_keyed(&mut self.shapes, hash, StoredShape { node, gres });
        Ok(CachedNode {
            name: Some(record.node_name().clone()),
            new_node: record.new_node(),
            shape: key,
            rejected: None,
            digest: String::new(),
            owner: false,
        })
    }

    /// Drops the shapes named, and the gres lists no remaining shape uses.
    fn drop_shapes(&mut self, unused: &[String]) {
        if unused.is_empty() {
            return;
        }
        let lists: BTreeSet<String> = unused
            .iter()
            .filter_map(|k| self.shapes.remove(k))
            .filter_map(|s| s.gres)
            .collect();
        for list in lists {
            if !self.shapes.values().any(|s| s.gres.as_ref() == Some(&list)) {
                self.gres_lists.remove(&list);
            }
        }
    }

    /// Sets [`CachedNode::owner`] of the units listed (relation key, unit, owner): those whose
    /// flag a hook changes.
    pub fn set_owners(&mut self, changes: &[(String, String, bool)]) {
        for (key, unit, owner) in changes {
            if let Some(rel) = self.relations.get_mut(key) {
                rel.units.set_owner(unit, *owner);
            }
        }
    }

    /// Keeps first-come ownership across a full rebuild from Juju (leader elected, charm
    /// upgraded, an event the cache did not know): the partition owners of `previous` (the
    /// cache as loaded), and the owner flag of each unit that still publishes the node name it
    /// owned there. Without this a rebuild would settle every name by relation id and unit
    /// number, and an owner on a later relation could lose its name to a newcomer.
    pub fn keep_ownership_of(&mut self, previous: &Cache) {
        self.owners = previous.owners.clone();
        let mut kept = Vec::new();
        for (key, unit, record) in previous.units_in_order() {
            let Some(name) = record.name.filter(|_| record.owner) else {
                continue;
            };
            let same_name = self
                .relations
                .get(key)
                .and_then(|r| r.units.get(unit))
                .is_some_and(|now| now.name == Some(name));
            if same_name {
                kept.push((key.to_owned(), unit.to_owned(), true));
            }
        }
        self.set_owners(&kept);
    }

    /// Every cached unit in the cache's order (relations by key, then units by name), with
    /// its relation's key and its record.
    pub fn units_in_order(&self) -> impl Iterator<Item = (&str, &str, UnitRecord<'_>)> {
        self.relations
            .iter()
            .flat_map(|(key, r)| r.units.iter().map(move |(u, n)| (key.as_str(), u, n)))
    }

    /// Drops shapes no unit uses any more. When every table was read from the cache file
    /// (which holds no unused shape: every hook prunes before it persists), only the shapes
    /// changed units had there can be unused ([`Units::shapes_left_since_read`]): each is
    /// looked for among the units until found, instead of a set of every unit's shape.
    pub fn prune_shapes(&mut self) {
        let left: Option<Vec<&str>> = self
            .relations
            .values()
            .map(|r| {
                r.units
                    .shapes_left_since_read()
                    .map(|s| s.collect::<Vec<_>>())
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().flatten().collect());
        if let Some(mut left) = left {
            left.sort_unstable();
            left.dedup();
            left.retain(|shape| {
                !self
                    .relations
                    .values()
                    .flat_map(|r| r.units.iter())
                    .any(|(_, n)| n.shape == *shape)
            });
            let unused: Vec<String> = left.into_iter().map(str::to_owned).collect();
            self.drop_shapes(&unused);
            return;
        }
        // units of one shape mostly come in runs: each run costs one set lookup
        let mut used: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
        let mut last = None;
        for (_, n) in self.relations.values().flat_map(|r| r.units.iter()) {
            if last != Some(n.shape) {
                used.insert(n.shape);
                last = Some(n.shape);
            }
        }
        self.shapes.retain(|k, _| used.contains(k.as_str()));
        let lists: BTreeSet<&str> = self
            .shapes
            .values()
            .filter_map(|s| s.gres.as_deref())
            .collect();
        self.gres_lists.retain(|k, _| lists.contains(k.as_str()));
    }

    /// Serialises the cache: a header line with the format version and the body's hash, then
    /// the body ([`Cache::write_to`] into memory).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        // writing into memory fails only if serde fails, which a cache's types never do
        if self.write_to(&mut out, None).is_err() {
            return Vec::new();
        }
        out.into_inner()
    }

    /// Writes the cache as [`Cache::to_bytes`] lays it out, straight to `out` (the cache file
    /// being written), and returns the body's hash: room for the header line first (its
    /// length does not depend on the hash, 16 hex digits), then the body, hashed as it is
    /// written, then the header over the room. At 10,000 distinct nodes the body is
    /// megabytes, which were held whole in memory beside the rendered files. `boot`: the boot
    /// the file is written in without `fsync` (`None`: it is synced), named in the header.
    pub fn write_to<W: std::io::Write + std::io::Seek>(
        &self,
        out: &mut W,
        boot: Option<&str>,
    ) -> std::io::Result<String> {
        use std::io::{SeekFrom, Write};
        let start = out.stream_position()?;
        let room = header_line(&content_hash(b""), boot)?;
        out.write_all(&room)?;
        let mut body = HashingWriter {
            inner: std::io::BufWriter::with_capacity(64 * 1024, &mut *out),
            hash: xxhash_rust::xxh3::Xxh3::new(),
        };
        serde_json::to_writer(&mut body, self).map_err(std::io::Error::other)?;
        body.inner.flush()?;
        let hash = format!("{:016x}", body.hash.digest());
        drop(body);
        let line = header_line(&hash, boot)?;
        if line.len() != room.len() {
            return Err(std::io::Error::other("cache header changed length"));
        }
        let end = out.stream_position()?;
        out.seek(SeekFrom::Start(start))?;
        out.write_all(&line)?;
        out.seek(SeekFrom::Start(end))?;
        Ok(hash)
    }

    /// Reads a cache in this boot ([`crate::charms::host::boot_id`]); `Err` says why it
    /// cannot be trusted.
    pub fn from_bytes(raw: &[u8]) -> Result<Self, CacheError> {
        Self::from_bytes_in(raw, crate::charms::host::boot_id())
    }

    /// [`Cache::from_bytes`] in boot `current`.
    pub fn from_bytes_in(raw: &[u8], current: Option<&str>) -> Result<Self, CacheError> {
        let body = raw.iter().position(|b| *b == b'\n').map(|i| &raw[i + 1..]);
        // An older layout (one JSON object) still names its version.
        let header = Header::of(raw).map_err(CacheError::Header)?;
        if header.version != CACHE_VERSION {
            return Err(CacheError::Version {
                found: header.version,
            });
        }
        if !header.trusted(current) {
            return Err(CacheError::EarlierBoot);
        }
        let body = body.ok_or(CacheError::NoBody)?;
        if content_hash(body) != header.hash {
            return Err(CacheError::Hash);
        }
        serde_json::from_slice(body).map_err(CacheError::Body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Cache {
        let mut c = Cache::default();
        c.relations.insert(
            "slurmd:1".into(),
            CachedRelation {
                endpoint: "slurmd".into(),
                id: 1,
                app: "compute".into(),
                partition: Some("{}".into()),
                units: Units::from_iter([(
                    "compute/0".into(),
                    CachedNode {
                        rejected: Some("x".into()),
                        ..CachedNode::default()
                    },
                )]),
                cluster_info_published: None,
                verdicts_published: None,
            },
        );
        c
    }

    #[test]
    fn round_trip() {
        let c = sample();
        assert_eq!(Cache::from_bytes(&c.to_bytes()).unwrap(), c);
    }

    #[test]
    fn written_to_a_file_as_in_memory() {
        use std::io::{Read, Seek};
        let mut c = sample();
        let node = CachedNode {
            rejected: Some("\"quoted\"\n".into()),
            ..CachedNode::default()
        };
        if let Some(rel) = c.relations.get_mut("slurmd:1") {
            rel.units.insert("compute/1".into(), node);
        }
        let mut file = tempfile::tempfile().unwrap();
        let hash = c.write_to(&mut file, None).unwrap();
        let mut bytes = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, c.to_bytes());
        let head = std::str::from_utf8(&bytes).unwrap().lines().next().unwrap();
        assert!(head.contains(&hash), "{head}");
        assert_eq!(Cache::from_bytes(&bytes).unwrap(), c);
    }

    #[test]
    fn an_unsynced_cache_is_trusted_in_its_own_boot_only() {
        let c = sample();
        let (a, b) = (
            "0f4b0c4e-8b41-4a0e-9d55-3d1b7c4f2a10",
            "7d2e51f0-1c9a-4c55-b1a4-5e0c9d8e7f21",
        );
        let mut file = std::io::Cursor::new(Vec::new());
        c.write_to(&mut file, Some(a)).unwrap();
        let bytes = file.into_inner();
        assert_eq!(Cache::from_bytes_in(&bytes, Some(a)).unwrap(), c);
        assert!(matches!(
            Cache::from_bytes_in(&bytes, Some(b)),
            Err(CacheError::EarlierBoot)
        ));
        assert!(matches!(
            Cache::from_bytes_in(&bytes, None),
            Err(CacheError::EarlierBoot)
        ));
        // synced: no boot named, trusted in any
        let synced = c.to_bytes();
        assert!(!String::from_utf8_lossy(&synced).contains("boot"));
        assert_eq!(Cache::from_bytes_in(&synced, Some(b)).unwrap(), c);
        assert_eq!(Cache::from_bytes_in(&synced, None).unwrap(), c);
    }

    #[test]
    fn corruption_is_detected() {
        let raw = String::from_utf8(sample().to_bytes()).unwrap();
        let tampered = raw.replace("compute/0", "compute/9");
        assert!(
            Cache::from_bytes(tampered.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("hash")
        );
        assert!(Cache::from_bytes(b"{").is_err());
        let v1 = br#"{"version":1,"hash":"0","body":"{}"}"#;
        assert!(
            Cache::from_bytes(v1)
                .unwrap_err()
                .to_string()
                .contains("version 1")
        );
        let old = raw.replace(&format!("\"version\":{CACHE_VERSION}"), "\"version\":1");
        assert!(
            Cache::from_bytes(old.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("version")
        );
    }

    fn raw_node(name: &str, new_node: bool) -> String {
        format!(
            r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"8","RealMemory":"32000","Gres":["gpu:tesla_t4:2"]}},"new_node":{new_node},"gres":[{{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"}}]}}"#
        )
    }

    #[test]
    fn identical_nodes_share_one_shape() {
        let mut c = Cache::default();
        let a = c.ingest_node(&raw_node("gpu-1", true));
        let b = c.ingest_node(&raw_node("gpu-2", false));
        assert_eq!(a.rejected, None);
        assert_eq!((a.name.as_deref(), a.new_node), (Some("gpu-1"), true));
        assert_eq!((b.name.as_deref(), b.new_node), (Some("gpu-2"), false));
        assert_eq!(a.shape, b.shape);
        assert_eq!(c.shapes.len(), 1);
        let stored = &c.shapes[&a.shape];
        let list = stored.gres.as_ref().map(|k| c.gres_lists[k].as_str());
        let joined = crate::interface::join_shape_parts(stored.node.as_str(), list);
        let shape = NodeRecord::from_relation_value(&joined).unwrap();
        assert_eq!(shape.node_name(), SHAPE_NAME);
        assert!(!shape.new_node());
        // the stored parts are the shape's own: what fingerprints hash
        // (`desired::shape_digest`) equals what the record splits into again
        assert_eq!(
            shape.to_shape_parts(),
            (stored.node.as_str().to_owned(), list.map(str::to_owned))
        );
    }

    #[test]
    fn bad_records_keep_their_reason() {
        let mut c = Cache::default();
        let bad_json = c.ingest_node("{");
        assert!(bad_json.rejected.is_some() && bad_json.shape.is_empty());
        let bad_name = c.ingest_node(&raw_node("bad name", false));
        assert!(bad_name.rejected.unwrap().contains("NodeName"));
        let bad_gres = c.ingest_node(&raw_node("gpu-1", false).replace("[0-1]", "[0-2]"));
        assert!(bad_gres.rejected.unwrap().contains("Gres"));
        let huge = c.ingest_node(&raw_node(&"x y".repeat(1 << 18), false));
        let huge = huge.rejected.unwrap();
        assert!(huge.len() < MAX_REASON_LEN + 40);
        assert!(
            huge.contains("bytes, over the 65536-byte limit (shorten the unit's node-config"),
            "{huge}"
        );
        assert!(c.shapes.is_empty(), "{:?}", c.shapes);
        let underscore = c.ingest_node(&raw_node("gpu_node_2", false));
        assert_eq!(underscore.rejected, None);
        assert_eq!(c.shapes.len(), 1);
    }

    #[test]
    fn unused_shapes_are_pruned() {
        let mut c = sample();
        let node = c.ingest_node(&raw_node("gpu-1", false));
        c.ingest_node(&raw_node("gpu-2", false).replace("\"8\"", "\"16\""));
        assert_eq!(c.shapes.len(), 2);
        if let Some(rel) = c.relations.get_mut("slurmd:1") {
            rel.units.insert("compute/1".into(), node.clone());
        }
        c.prune_shapes();
        assert_eq!(c.shapes.keys().collect::<Vec<_>>(), [&node.shape]);
        assert_eq!(Cache::from_bytes(&c.to_bytes()).unwrap(), c);
    }

    /// A cache read from its file: a unit moved to another shape leaves its old one unused
    /// (pruned, with its gres list) or shared (kept), as a prune of every shape decides.
    #[test]
    fn shapes_left_by_changed_units_are_pruned_as_in_full() {
        let mut c = sample();
        let a = c.ingest_node(&raw_node("gpu-1", false));
        let b = c.ingest_node(&raw_node("gpu-2", false).replace("\"8\"", "\"16\""));
        if let Some(rel) = c.relations.get_mut("slurmd:1") {
            rel.units.insert("compute/1".into(), a.clone());
            rel.units.insert("compute/2".into(), b.clone());
            rel.units.insert("compute/3".into(), b.clone());
        }
        c.prune_shapes();
        let stored = c.to_bytes();
        for moved in [&["compute/2"][..], &["compute/2", "compute/3"]] {
            let mut read = Cache::from_bytes(&stored).unwrap();
            let rel = read.relations.get_mut("slurmd:1").unwrap();
            for unit in moved {
                rel.units.insert((*unit).into(), a.clone());
            }
            let mut full = read.clone();
            read.prune_shapes();
            // the same cache, not read from a file: every shape is looked at
            full.relations = full
                .relations
                .into_iter()
                .map(|(k, mut r)| {
                    r.units = r
                        .units
                        .iter()
                        .map(|(u, n)| (u.to_owned(), n.to_node()))
                        .collect();
                    (k, r)
                })
                .collect();
            full.prune_shapes();
            assert_eq!(read.shapes, full.shapes, "{moved:?}");
            assert_eq!(read.gres_lists, full.gres_lists, "{moved:?}");
            assert_eq!(read.shapes.contains_key(&b.shape), moved.len() == 1);
        }
    }

    #[test]
    fn fnv_known_value() {
        assert_eq!(fnv1a(&[b""]), "cbf29ce484222325");
        assert_eq!(fnv1a(&[b"a"]), "af63dc4c8601ec8c");
    }
}
