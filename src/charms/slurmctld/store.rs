//! The controller's one store: everything a leader learned from Juju and from slurmctld that a
//! later hook (a fresh process) needs, kept in one file so that a relation event costs O(1)
//! hook-tool calls instead of a `relation-get` per unit.
//!
//! It holds the relations (remote application, its raw `partition`, what this leader last
//! published there), the units (node name, `new_node`, first-come owner flag, when their record
//! last changed), each distinct validated `node` record **once** with its rendered slurm.conf and
//! gres.conf lines ([`Record`]), the partition owners, what slurmctld runs ([`Applied`]), the
//! files it last refused, the deferred reload, the last status and the config the last hook
//! that asked `config-get` got (relation events render with it).
//!
//! An event is applied to it once ([`Store::apply`], as kube-rs's reflector applies a watcher
//! event), and the answer ([`Change`]) is the one place that says whether anything changed. A
//! leader change, a charm upgrade, a missing or damaged file, or an event about a relation the
//! store does not know is a relist: the store is rebuilt from Juju and replaces the old one
//! whole (first-come ownership carried over, [`Store::keep_ownership_of`]).
//!
//! **File:** `<root>/var/lib/slurm-charms/slurmctld/store.bin`, mode 0600: a magic line, the
//! format version, the XXH3-64 checksum of the body, then the body in postcard (serde), in
//! sections ([`super::store_file`]). Anything that does not read back ([`StoreError`]) is
//! rebuilt from Juju. Written at the end of a leader hook, after the status, so a hook that
//! fails anywhere leaves the store in step with what Juju committed; written over the old file's
//! blocks, its checksum zeroed first and written last, so a write a crash or a failure tore
//! does not read back and is rebuilt ([`crate::charms::host::Host::overwrite_streamed`]).

use crate::interface::{InterfaceError, NODE_KEY, NodeRecord};
use crate::slurm::node_lines::{NodeLine, ShapeKeys};
use compact_str::CompactString;
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Host path of the store.
pub const STORE_PATH: &str = "/var/lib/slurm-charms/slurmctld/store.bin";

/// Written before slurmctld is restarted or reconfigured and removed once the store that records
/// the outcome is saved: a hook that fails in between leaves it, and the next hook reloads
/// slurmctld again whatever the store says it runs ([`Store::reload_deferred`]).
pub const RELOAD_PENDING: &str = "/var/lib/slurm-charms/slurmctld/reload-pending";

/// Format version; bump when the layout changes (an older file is then rebuilt from Juju).
pub const STORE_FORMAT: u32 = 8;

/// Longest rejection reason kept and logged (a hostile 1 MiB value must not be stored or logged
/// in full on every hook).
pub const MAX_REASON_LEN: usize = 400;

/// Why one unit's `node` value is not kept as a record: the unit is kept as rejected, with this
/// error's text as its verdict.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The value is over the shared limit, or not a valid `node` record (the message names the
    /// size and what to shorten, or the field and the rule).
    #[error(transparent)]
    Record(#[from] InterfaceError),
}

/// One distinct validated `node` record, as the files need it: rendered once, when it arrived.
/// Units whose records differ only in their name and `new_node` share one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Its node line without `RealMemory`, by id in [`Store::shapes`]: nodes of one model
    /// differ in RealMemory by a few MB, so 10,000 distinct records of one model share one text.
    pub shape: u32,
    /// Its `RealMemory` (MB), which the shape's line is rendered with.
    pub real_memory: Option<u64>,
    /// Whether nodes of this record may share one hostlist line (not with `NodeAddr` or
    /// `NodeHostname`, which name one host each).
    pub foldable: bool,
    /// Its GRES, by id in [`Store::gres`]: nodes of one model that differ in their node line
    /// (`RealMemory`) share one.
    pub gres: u32,
}

/// The slurm.conf node line after `NodeName=<names>`, without its ` RealMemory=<MB>`, and the
/// byte offset where that goes ([`crate::slurm::node_lines::node_shape`]). Read from a store file,
/// the offset is checked to fall on a character boundary of the text.
///
/// It also keeps what the line says about the node's memory other than `RealMemory` (`CPUs`,
/// `MemSpecLimit`, the GPUs in its `Gres=`): with a record's `RealMemory`, what the node offers
/// jobs ([`Shape::memory`]), read from the validated record once, when it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ShapeFields")]
pub struct Shape {
    text: String,
    at: u32,
    keys: ShapeKeys,
    cpus: Option<u64>,
    mem_spec_limit: Option<u64>,
    gpus: u64,
}

/// A [`Shape`]'s fields as a file gives them, before the offset is checked.
#[derive(Deserialize)]
struct ShapeFields {
    text: String,
    at: u32,
    keys: ShapeKeys,
    cpus: Option<u64>,
    mem_spec_limit: Option<u64>,
    gpus: u64,
}

impl TryFrom<ShapeFields> for Shape {
    type Error = &'static str;

    fn try_from(f: ShapeFields) -> Result<Shape, &'static str> {
        let at = usize::try_from(f.at).map_err(|_| "shape offset out of range")?;
        if f.text.is_char_boundary(at) {
            Ok(Shape {
                text: f.text,
                at: f.at,
                keys: f.keys,
                cpus: f.cpus,
                mem_spec_limit: f.mem_spec_limit,
                gpus: f.gpus,
            })
        } else {
            Err("a node line's RealMemory offset is not a character boundary of its text")
        }
    }
}

impl Shape {
    /// The shape of a node's line.
    pub fn of(node: &crate::slurm::NodeConf) -> Shape {
        let shape = crate::slurm::node_lines::node_shape(node);
        // a tail is a few hundred bytes (the value it comes from is bounded far below 4 GiB)
        let at = u32::try_from(shape.at).unwrap_or(u32::MAX);
        Shape {
            text: shape.text,
            at,
            keys: shape.keys,
            cpus: node.cpus.map(u64::from),
            mem_spec_limit: node.mem_spec_limit,
            gpus: crate::slurm::NodeMemory::gpus_of(node),
        }
    }

    /// What a node of this shape with `real_memory` offers jobs (`DefMemPerCPU`/`DefMemPerGPU`
    /// derive from it); `None` without `CPUs` or `RealMemory`.
    pub fn memory(&self, real_memory: Option<u64>) -> Option<crate::slurm::NodeMemory> {
        crate::slurm::NodeMemory::new(self.cpus, real_memory, self.mem_spec_limit, self.gpus)
    }

    /// The keys this shape's line sets: node lines share `NodeName=DEFAULT` lines only where
    /// they all set the same ones ([`crate::slurm::node_lines::defaults_apply`]).
    pub fn keys(&self) -> ShapeKeys {
        self.keys
    }

    /// The node line of `hostlist` with this shape and `real_memory`, for
    /// [`crate::slurm::node_lines::push_node_lines`].
    pub fn line<H>(&self, hostlist: H, real_memory: Option<u64>) -> NodeLine<'_, H> {
        NodeLine {
            hostlist,
            shape: &self.text,
            at: usize::try_from(self.at).unwrap_or(usize::MAX),
            real_memory,
        }
    }
}

/// The GRES part of a record: its gres.conf lines and what its node line declares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gres {
    /// The gres.conf lines after `NodeName=<names> `, one per GRES record.
    pub lines: Vec<String>,
    /// The node's `Gres=` value (empty without GRES): what slurmctld runs per node
    /// ([`Applied::pairs`]).
    pub value: String,
    /// How many GRES the node line declares (the status's GPU count).
    pub count: u64,
    /// The GRES names other than `gpu` the node line uses (`shard`, `mps`): `GresTypes`.
    pub names: Vec<String>,
}

/// A record as a checked `node` value gives it, before the store shares its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRecord {
    /// Its node line's shape.
    pub shape: Shape,
    /// [`Record::real_memory`].
    pub real_memory: Option<u64>,
    /// [`Record::foldable`].
    pub foldable: bool,
    /// Its GRES.
    pub gres: Gres,
}

impl NewRecord {
    /// The record of a checked `node` value, its name and `new_node` left out.
    pub fn of(record: &NodeRecord) -> NewRecord {
        let node = record.node();
        NewRecord {
            shape: Shape::of(node),
            real_memory: node.real_memory,
            foldable: !node
                .extra
                .iter()
                .any(|e| matches!(e.key(), "NodeAddr" | "NodeHostname")),
            gres: Gres {
                lines: record
                    .gres()
                    .iter()
                    .map(crate::slurm::render::gres_record_text)
                    .collect(),
                value: record.gres_string(),
                count: node.gres.iter().map(|g| g.count).sum(),
                names: node
                    .gres
                    .iter()
                    .map(|g| g.name.as_str())
                    .filter(|n| *n != "gpu")
                    .map(str::to_owned)
                    .collect(),
            },
        }
    }

    /// Whether `record`, with its shape and GRES looked up in `store`, is this record.
    pub fn is(&self, record: &Record, store: &Store) -> bool {
        self.real_memory == record.real_memory
            && self.foldable == record.foldable
            && store.shapes.get(&record.shape) == Some(&self.shape)
            && store.gres.get(&record.gres) == Some(&self.gres)
    }
}

/// What one unit's `node` value became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Entry {
    /// Accepted: its record's id in [`Store::records`].
    Record(u32),
    /// Refused, with the reason (bounded to [`MAX_REASON_LEN`]).
    Rejected(String),
}

/// One remote unit that published a `node` value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// The `NodeName` it publishes (empty when its record was refused).
    pub name: CompactString,
    /// Its record, or why it was refused.
    pub entry: Entry,
    /// `new_node` (the node is in `DownNodes` until `node-configured`).
    pub new_node: bool,
    /// The unit owns the name it publishes (first come); kept while it publishes that name.
    pub owner: bool,
    /// [`Store::seq`] when its value last changed: the units told of a refusal are those
    /// changed since the last accepted files ([`Store::changed_since`]).
    pub changed: u64,
}

/// A relation's units by name. A sorted vector ([`litemap`]), not a B-tree: a hook reads all
/// of them from the store file in name order and walks them whole, and looks up or replaces
/// one or two; built from that order it costs no tree nodes, no second copy and no sort
/// (docs/BENCHMARKS.md, issue 38, seventh pass).
pub type UnitMap = LiteMap<CompactString, Unit>;

/// One relation of the `slurmctld` endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    /// The remote application.
    pub app: String,
    /// Its raw `partition` value ([`admit_partition`]).
    pub partition: Option<String>,
    /// Remote units with a `node` value, by unit name: a sorted vector, read back from the
    /// store file in its order without building a tree ([`UnitMap`]).
    pub units: UnitMap,
    /// The `cluster_info` this leader last published here.
    pub cluster_info_published: Option<String>,
    /// The `verdicts` this leader last published here (`None`: none).
    pub verdicts_published: Option<String>,
}

/// What slurmctld was last brought in line with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The node names in natural order, each once, each ended by a newline: one string, not
    /// one allocation per node (10,000 were decoded, cloned, compared and dropped on every
    /// hook; docs/BENCHMARKS.md, issue 38 third pass).
    names: String,
    /// Each node's `Gres=` value, in the order of [`Applied::names`], as its index in
    /// [`Applied::gres`]: thousands of nodes share a handful of values.
    gres_of: Vec<u32>,
    /// The distinct `Gres=` values (empty without GRES).
    pub gres: Vec<String>,
    /// Nodes in `DownNodes`.
    pub down: BTreeSet<String>,
    /// XXH3-64 of slurm.conf, gres.conf and cgroup.conf.
    pub files_hash: u64,
    /// The same without slurm.conf's `DownNodes` lines: equal in two states that differ only in
    /// which nodes are down, which [`super::decide`] turns into a resume.
    pub base_hash: u64,
}

impl Applied {
    /// The nodes and their `Gres=` values, in natural name order and each name once (as the
    /// plan gives them: it settled the names in that order), the new nodes and the checksums.
    pub fn new<'a>(
        nodes: impl IntoIterator<Item = (&'a str, &'a str)>,
        down: BTreeSet<String>,
        files_hash: u64,
        base_hash: u64,
    ) -> Applied {
        let mut gres: Vec<String> = Vec::new();
        let mut last: Option<(&str, u32)> = None;
        let out: Vec<(&str, u32)> = nodes
            .into_iter()
            .map(|(name, value)| {
                let index = match last {
                    Some((v, i)) if v == value => i,
                    _ => {
                        let i = match gres.iter().position(|g| g == value) {
                            Some(i) => i as u32,
                            None => {
                                gres.push(value.to_owned());
                                (gres.len() - 1) as u32
                            }
                        };
                        last = Some((value, i));
                        i
                    }
                };
                (name, index)
            })
            .collect();
        debug_assert!(
            out.is_sorted_by(|a, b| crate::slurm::hostlist::natural_cmp(a.0, b.0).is_lt()),
            "nodes not in natural name order, or a name twice"
        );
        let mut names = String::with_capacity(out.iter().map(|(n, _)| n.len() + 1).sum());
        for (n, _) in &out {
            names.push_str(n);
            names.push('\n');
        }
        Applied {
            names,
            gres_of: out.into_iter().map(|(_, i)| i).collect(),
            gres,
            down,
            files_hash,
            base_hash,
        }
    }

    /// The node names, in natural order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.split_terminator('\n')
    }

    /// Each node with its `Gres=` value, in natural name order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.names().zip(&self.gres_of).map(|(n, i)| {
            let g = self.gres.get(*i as usize).map_or("", String::as_str);
            (n, g)
        })
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether both have the same nodes, in the same order: then [`Applied::pairs`] of the
    /// two differ at most in their `Gres=` values. One comparison of two strings.
    pub fn same_names(&self, other: &Applied) -> bool {
        self.names == other.names
    }

    /// Whether both give every node the same `Gres=` value, their names being the same
    /// ([`Applied::same_names`]): two comparisons of flat tables, not a walk along the nodes.
    pub fn same_gres(&self, other: &Applied) -> bool {
        self.gres == other.gres && self.gres_of == other.gres_of
    }

    /// Whether `name` is one of the nodes (a walk along them all).
    pub fn contains(&self, name: &str) -> bool {
        self.names().any(|n| n == name)
    }
}

/// Who owns which partition name, and the default partition chosen when `default-partition` is
/// empty. Node names are owned per unit: [`super::store::Unit::owner`] (a table of
/// 10,000 names and units was parsed and written on every hook; a flag on each unit's entry
/// is not).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owners {
    /// Partition name → the application that owns it.
    pub partitions: BTreeMap<String, String>,
    /// The partition made the default while `default-partition` is empty: kept while it
    /// exists, so a new application whose name sorts first does not take it over.
    pub default_partition: Option<String>,
}

/// Files slurmctld refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// [`Applied::files_hash`] of the refused set.
    pub files_hash: u64,
    /// What slurmctld (or the command) said.
    pub reason: String,
    /// The first line of the refused files that the accepted ones lack: the failing input.
    pub input: String,
    /// The units told (unit → relation id): those changed since the last accepted files.
    pub units: BTreeMap<String, u32>,
}

/// A stored record with the parts it shares ([`Store::record`]).
#[derive(Debug, Clone, Copy)]
pub struct StoredRecord<'a> {
    /// Its place among the records (`0..records.len()`): what the plan folds nodes by, a
    /// table index, not a hash key.
    pub place: usize,
    /// The record.
    pub record: &'a Record,
    /// Its node line's shape.
    pub shape: &'a Shape,
    /// Its GRES.
    pub gres: &'a Gres,
}

/// The store (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// Relations of the `slurmctld` endpoint by relation id.
    pub relations: BTreeMap<u32, Relation>,
    /// Distinct records by id; a record no unit names is dropped when the store is saved. A
    /// sorted vector, as [`Relation::units`].
    pub records: LiteMap<u32, Record>,
    /// Distinct GRES parts of the records, by id; dropped with the last record naming them.
    pub gres: BTreeMap<u32, Gres>,
    /// Distinct node line shapes of the records, by id (ids shared with the GRES parts');
    /// dropped with the last record naming them.
    pub shapes: BTreeMap<u32, Shape>,
    /// The next record id.
    pub next_record: u32,
    /// Partition names owned first-come (node names: [`Unit::owner`]).
    pub owners: Owners,
    /// Rejections already logged (unit or application → reason): each is logged once.
    pub logged: BTreeMap<String, String>,
    /// The status the last leader hook that planned set (kind word, message).
    pub status: Option<(String, String)>,
    /// The files on disk are newer than what slurmctld runs: a reload was deferred while more
    /// units were expected to join.
    pub reload_deferred: bool,
    /// What slurmctld runs, when known.
    pub applied: Option<Applied>,
    /// [`Store::seq`] when slurmctld last accepted files.
    pub accepted_seq: u64,
    /// The last set slurmctld refused (not offered again until an input changes).
    pub refused: Option<Refusal>,
    /// The slurmctld version last read (`slurmctld -V` is asked only on install and upgrade).
    pub slurm_version: Option<String>,
    /// The application's config as the last hook that asked `config-get` got it (its JSON):
    /// `slurmd-relation-joined`/`-changed` take it from here instead of asking
    /// ([`super::observe::config`]).
    pub config: Option<String>,
    /// Counts the changes applied to the store: [`Unit::changed`] is stamped with it.
    pub seq: u64,
}

/// One event, as a change to the store ([`Store::apply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    /// A relation appeared (relation-created), with the remote application's `partition`.
    RelationCreated {
        /// Relation id.
        relation: u32,
        /// Remote application.
        app: String,
        /// Its `partition` value, if it wrote one already.
        partition: Option<String>,
    },
    /// A remote application's `partition` value is now this.
    Partition {
        /// Relation id.
        relation: u32,
        /// The value (`None`: absent or empty).
        value: Option<String>,
    },
    /// A remote unit's `node` value is now this.
    Node {
        /// Relation id.
        relation: u32,
        /// The unit.
        unit: String,
        /// The value (`None`: absent or empty, the unit has no node).
        value: Option<String>,
    },
    /// A remote unit left.
    Departed {
        /// Relation id.
        relation: u32,
        /// The unit.
        unit: String,
    },
    /// A relation is gone.
    Broken {
        /// Relation id.
        relation: u32,
    },
}

/// What applying a [`Delta`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The store already said this.
    None,
    /// The store changed.
    Changed,
    /// The store does not know the relation: it must be rebuilt from Juju.
    UnknownRelation,
}

/// Why a store file was not used (the hook then rebuilds the store from Juju).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// There is no store file (first hook, or deleted to force a rebuild).
    #[error("missing")]
    Missing,
    /// The file does not start with the store's magic bytes and header.
    #[error("not a store file")]
    Magic,
    /// Another format version wrote it.
    #[error("format version {found} (expected {STORE_FORMAT})")]
    Version {
        /// The version found.
        found: u32,
    },
    /// The file could not be read (a directory in its place, no permission, an I/O error).
    #[error("cannot be read ({0})")]
    Io(#[source] std::io::Error),
    /// The body does not match the checksum.
    #[error("checksum mismatch")]
    Checksum,
    /// The body does not decode.
    #[error("unreadable body ({0})")]
    Body(#[source] postcard::Error),
    /// A section or entry is cut short, names a relation the head lacks, or is out of order.
    #[error("damaged framing")]
    Frame,
    /// Written without `fsync` before the machine last started: a crash may have lost what the
    /// last hooks wrote.
    #[error(
        "written before the machine restarted (not synced to disk, so it may be older than the last hook)"
    )]
    EarlierBoot,
}

/// A remote `partition` value as the store keeps it: itself, or a mark and its size when it is
/// over the shared limit (refused when planned, never stored in full).
pub fn admit_partition(raw: &str) -> String {
    if raw.len() > crate::interface::MAX_RECORD_LEN {
        format!("{OVERSIZED_MARK}{}", raw.len())
    } else {
        raw.to_string()
    }
}

/// Marks a stored `partition` value that was too large to keep (only its size is kept).
pub const OVERSIZED_MARK: &str = "\u{0}oversized:";

/// A rejection reason cut to [`MAX_REASON_LEN`] bytes (at a character boundary).
pub fn bounded(reason: String) -> String {
    if reason.len() <= MAX_REASON_LEN {
        return reason;
    }
    let mut end = MAX_REASON_LEN;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &reason[..end], reason.len())
}

/// XXH3-64 of `parts` in order: the one hash family, for integrity only (the store's checksum,
/// which files slurmctld runs).
pub fn checksum(parts: &[&[u8]]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p);
    }
    h.digest()
}

impl Store {
    /// Drops the records no unit names, and the GRES parts and shapes no record names (before
    /// the store is written).
    pub fn drop_unused_records(&mut self) {
        // a set, not a sorted vector: the 10,000 ids gathered on every save come in unit order,
        // and sorting them cost a distinct changed hook 1.3 M instructions more (callgrind)
        // room for every record at once (10,000 distinct ones grew the set through ten rehashes)
        let mut used: std::collections::HashSet<u32, crate::charms::common::NameHasher> =
            std::collections::HashSet::with_capacity_and_hasher(
                self.records.len(),
                Default::default(),
            );
        used.extend(self.units().filter_map(|(_, _, u)| match u.entry {
            Entry::Record(id) => Some(id),
            Entry::Rejected(_) => None,
        }));
        self.records.retain(|id, _| used.contains(id));
        let named = |part: fn(&Record) -> u32| {
            let mut ids: Vec<u32> = self.records.values().map(part).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let (gres, shapes) = (named(|r| r.gres), named(|r| r.shape));
        self.gres.retain(|id, _| gres.binary_search(id).is_ok());
        self.shapes.retain(|id, _| shapes.binary_search(id).is_ok());
    }

    /// Every unit with its relation id and name.
    pub fn units(&self) -> impl Iterator<Item = (u32, &str, &Unit)> {
        self.relations
            .iter()
            .flat_map(|(id, r)| r.units.iter().map(move |(n, u)| (*id, n.as_str(), u)))
    }

    /// Parses one unit's raw `node` value once, at the boundary, into a unit entry (its record
    /// shared with the units that have the same one). A value that fails is kept as refused,
    /// with the reason, for this unit alone.
    pub fn ingest(&mut self, raw: &str) -> Unit {
        let (name, new_node, entry) = ingest_entry(raw);
        let entry = match entry {
            Ok(record) => Entry::Record(self.record_id(record)),
            Err(why) => Entry::Rejected(why),
        };
        Unit {
            name: name.into(),
            entry,
            new_node,
            owner: false,
            changed: self.seq,
        }
    }

    /// The id of `record`: an equal record's, or a new one's (its shape and GRES shared
    /// likewise).
    fn record_id(&mut self, record: NewRecord) -> u32 {
        let gres = shared_id(&mut self.gres, &mut self.next_record, record.gres);
        let shape = shared_id(&mut self.shapes, &mut self.next_record, record.shape);
        let record = Record {
            shape,
            real_memory: record.real_memory,
            foldable: record.foldable,
            gres,
        };
        // an equal record's id: every field is a number once the shape and GRES are shared;
        // every field is named, so a field added to `Record` must be added here
        let Record {
            shape,
            real_memory,
            foldable,
            gres,
        } = &record;
        let equal = |r: &Record| {
            r.real_memory == *real_memory
                && r.shape == *shape
                && r.gres == *gres
                && r.foldable == *foldable
        };
        if let Some((id, _)) = self.records.iter().find(|(_, r)| equal(r)) {
            return *id;
        }
        let id = self.next_record;
        self.next_record = self.next_record.wrapping_add(1);
        self.records.insert(id, record);
        id
    }

    /// A stored record with its shape and GRES, and its place among the records.
    pub fn record(&self, id: u32) -> Option<StoredRecord<'_>> {
        let place = self.records.find_index(&id).ok()?;
        let (_, record) = self.records.get_indexed(place)?;
        Some(StoredRecord {
            place,
            record,
            shape: self.shapes.get(&record.shape)?,
            gres: self.gres.get(&record.gres)?,
        })
    }

    /// Applies one event to the store and says whether it changed anything.
    pub fn apply(&mut self, delta: Delta) -> Change {
        match delta {
            Delta::RelationCreated {
                relation,
                app,
                partition,
            } => {
                let partition = partition.as_deref().map(admit_partition);
                let rel = self.relations.entry(relation).or_default();
                if rel.app == app && rel.partition == partition {
                    return Change::None;
                }
                rel.app = app;
                rel.partition = partition;
            }
            Delta::Partition { relation, value } => {
                let value = value.as_deref().map(admit_partition);
                let Some(rel) = self.relations.get_mut(&relation) else {
                    return Change::UnknownRelation;
                };
                if rel.partition == value {
                    return Change::None;
                }
                rel.partition = value;
            }
            Delta::Node {
                relation,
                unit,
                value,
            } => {
                if !self.relations.contains_key(&relation) {
                    return Change::UnknownRelation;
                }
                self.seq += 1;
                let ingested = value.as_deref().map(|v| self.ingest(v));
                let Some(rel) = self.relations.get_mut(&relation) else {
                    return Change::UnknownRelation;
                };
                let before = rel.units.get(unit.as_str());
                match ingested {
                    Some(mut new) => {
                        if let Some(b) = before
                            && same_value(b, &new)
                        {
                            self.seq -= 1;
                            return Change::None;
                        }
                        // a unit keeps owning its name while it publishes that name
                        new.owner = before.is_some_and(|b| b.owner && b.name == new.name);
                        rel.units.insert(unit.into(), new);
                    }
                    None => {
                        if rel.units.remove(unit.as_str()).is_none() {
                            self.seq -= 1;
                            return Change::None;
                        }
                    }
                }
            }
            Delta::Departed { relation, unit } => {
                let Some(rel) = self.relations.get_mut(&relation) else {
                    return Change::UnknownRelation;
                };
                if rel.units.remove(unit.as_str()).is_none() {
                    return Change::None;
                }
                self.seq += 1;
            }
            Delta::Broken { relation } => {
                if self.relations.remove(&relation).is_none() {
                    return Change::None;
                }
                self.seq += 1;
            }
        }
        Change::Changed
    }

    /// Adds relation `relation` of application `app`, with its `partition` value and its units'
    /// `node` values, as a relist reads them from Juju (each applied as its own [`Delta`]).
    pub fn add_relation(
        &mut self,
        relation: u32,
        app: &str,
        partition: Option<String>,
        units: impl IntoIterator<Item = (String, String)>,
    ) {
        self.apply(Delta::RelationCreated {
            relation,
            app: app.to_owned(),
            partition,
        });
        for (unit, value) in units {
            self.apply(Delta::Node {
                relation,
                unit,
                value: Some(value),
            });
        }
    }

    /// After a relist: keeps the partition owners, each unit's owner flag while it still
    /// publishes the same name, and each unit's change stamp while its value is the same, from
    /// the store it replaces (first come survives a rebuild; a refusal after it tells only the
    /// units that changed). Also keeps what this leader published, ran and refused.
    pub fn keep_ownership_of(&mut self, previous: &Store) {
        self.owners = previous.owners.clone();
        self.logged = previous.logged.clone();
        self.applied = previous.applied.clone();
        self.accepted_seq = previous.accepted_seq;
        self.refused = previous.refused.clone();
        self.reload_deferred = previous.reload_deferred;
        self.status = previous.status.clone();
        self.slurm_version = previous.slurm_version.clone();
        self.seq = self.seq.max(previous.seq) + 1;
        let seq = self.seq;
        // (relation, unit) → (owner, change stamp), worked out before the units are updated
        let mut kept = Vec::new();
        for (id, name, unit) in self.units() {
            let before = previous.relations.get(&id).and_then(|r| r.units.get(name));
            let owner = before.is_some_and(|b| b.owner && b.name == unit.name);
            let same = before.is_some_and(|b| {
                b.name == unit.name
                    && b.new_node == unit.new_node
                    && resolved(previous, b) == resolved(self, unit)
            });
            let changed = match before {
                Some(b) if same => b.changed,
                _ => seq,
            };
            kept.push((owner, changed));
        }
        let units = self
            .relations
            .values_mut()
            .flat_map(|r| r.units.iter_mut().map(|(_, u)| u));
        for (unit, (owner, changed)) in units.zip(kept) {
            unit.owner = owner;
            unit.changed = changed;
        }
    }

    /// The units whose value changed after `seq` (unit → relation id).
    pub fn changed_since(&self, seq: u64) -> BTreeMap<String, u32> {
        self.units()
            .filter(|(_, _, u)| u.changed > seq)
            .map(|(id, name, _)| (name.to_owned(), id))
            .collect()
    }

    /// Sets the owner flag of the units named: (relation id, unit, owns).
    pub fn set_owners(&mut self, changes: &[(u32, String, bool)]) {
        for (id, unit, owns) in changes {
            if let Some(u) = self
                .relations
                .get_mut(id)
                .and_then(|r| r.units.get_mut(unit.as_str()))
            {
                u.owner = *owns;
            }
        }
    }
}

/// What a unit's entry says, its record resolved: comparable across two stores.
#[allow(clippy::type_complexity)]
fn resolved<'a>(
    store: &'a Store,
    unit: &'a Unit,
) -> Result<Option<(&'a Shape, Option<u64>, bool, &'a Gres)>, &'a str> {
    match &unit.entry {
        Entry::Record(id) => Ok(store
            .record(*id)
            .map(|r| (r.shape, r.record.real_memory, r.record.foldable, r.gres))),
        Entry::Rejected(why) => Err(why),
    }
}

/// The id of `part` in `parts`: an equal part's, or a new one's (taken from `next`).
fn shared_id<T: PartialEq>(parts: &mut BTreeMap<u32, T>, next: &mut u32, part: T) -> u32 {
    if let Some((id, _)) = parts.iter().find(|(_, p)| **p == part) {
        return *id;
    }
    let id = *next;
    *next = next.wrapping_add(1);
    parts.insert(id, part);
    id
}

/// Whether a unit's new entry says what the old one did (the record ids are the store's own:
/// equal records share one id).
fn same_value(before: &Unit, new: &Unit) -> bool {
    before.name == new.name && before.new_node == new.new_node && before.entry == new.entry
}

/// What one unit's raw `node` value becomes: its name, `new_node` and record, or why it is
/// refused (bounded). The one parse of a `node` value, for [`Store::ingest`] and for the file's
/// unchanged-event predicate ([`super::store_file::StoreFile::unchanged`]).
pub(super) fn ingest_entry(raw: &str) -> (String, bool, Result<NewRecord, String>) {
    match ingest_record(raw) {
        Ok(record) => (
            record.node_name().to_string(),
            record.new_node(),
            Ok(NewRecord::of(&record)),
        ),
        Err(why) => (String::new(), false, Err(bounded(why.to_string()))),
    }
}

/// A `node` value checked for size, then parsed and validated by Slurm's rules.
fn ingest_record(raw: &str) -> Result<NodeRecord, IngestError> {
    crate::interface::check_record_len(NODE_KEY, raw)?;
    Ok(NodeRecord::from_relation_value(raw)?)
}

#[cfg(test)]
mod shape_tests {
    use super::*;

    fn value(name: &str, cpus: u32, memory: u64) -> String {
        format!(
            r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"{cpus}","RealMemory":"{memory}","MemSpecLimit":"1024","Features":"ib"}},"new_node":false}}"#
        )
    }

    fn line(store: &Store, unit: &Unit) -> String {
        let Entry::Record(id) = unit.entry else {
            panic!("refused: {:?}", unit.entry)
        };
        let stored = store.record(id).expect("stored");
        let mut out = String::new();
        let line = stored
            .shape
            .line(unit.name.as_str(), stored.record.real_memory);
        crate::slurm::node_lines::push_node_lines(&mut out, false, [line]);
        out
    }

    #[test]
    fn records_that_differ_in_real_memory_alone_share_one_shape() {
        let mut store = Store::default();
        let a = store.ingest(&value("a", 4, 1000));
        let b = store.ingest(&value("b", 4, 1002));
        let c = store.ingest(&value("c", 8, 1000));
        assert_eq!(store.records.len(), 3);
        assert_eq!(store.shapes.len(), 2, "{:?}", store.shapes);
        assert_eq!(
            line(&store, &a),
            "NodeName=a CPUs=4 RealMemory=1000 MemSpecLimit=1024 Features=ib\n"
        );
        assert_eq!(
            line(&store, &b),
            "NodeName=b CPUs=4 RealMemory=1002 MemSpecLimit=1024 Features=ib\n"
        );
        assert_eq!(
            line(&store, &c),
            "NodeName=c CPUs=8 RealMemory=1000 MemSpecLimit=1024 Features=ib\n"
        );
    }

    #[test]
    fn a_shape_whose_offset_splits_a_character_does_not_read_back() {
        let shape = |text: &str, at: u32| {
            postcard::to_stdvec(&(text.to_owned(), at, 0u32, Some(4u64), None::<u64>, 0u64))
                .expect("encode")
        };
        let good = shape("CPUs=4 Features=é", 7);
        assert!(postcard::from_bytes::<Shape>(&good).is_ok());
        // 'é' is two bytes: an offset between them is no place for RealMemory
        let inside = "CPUs=4 Features=é".len() as u32 - 1;
        assert!(postcard::from_bytes::<Shape>(&shape("CPUs=4 Features=é", inside)).is_err());
        assert!(postcard::from_bytes::<Shape>(&shape("CPUs=4", 7)).is_err());
    }
}
