//! The store's file: a magic line, the format version, the XXH3-64 checksum of the body, then
//! the body (postcard inside each frame; a frame is a u32 LE length and that many bytes):
//!
//! 1. the head, one frame: relations without their units, owners, logged rejections, status,
//!    flags;
//! 2. the number of units (u32 LE), then one frame each: relation id, unit name, the unit;
//! 3. the number of records (u32 LE), then one frame each: record id, the record;
//! 4. what slurmctld runs ([`super::store::Applied`]), one frame.
//!
//! The file is read and written as a stream, a frame at a time through a 64 KiB buffer, never
//! whole in memory: at 10,000 distinct nodes it is megabytes, and on the benchmark VM each
//! fresh 4 KiB page a hook touches costs about as much as 8,000 instructions
//! (docs/BENCHMARKS.md, issue 38 third pass). The checksum is checked once the last byte has
//! been read; nothing read from a file is used before that.
//!
//! Framing lets one question be answered without decoding the whole store: whether a relation
//! event changes anything ([`StoreFile::unchanged`], the one predicate that drops unchanged
//! events before the plan, as kube-runtime's predicates do). It decodes the head, walks the unit
//! frames to the event's unit, and compares that unit's record, decoded alone, with the event's
//! value parsed as [`Store::apply`] parses it. Every other hook decodes the whole store
//! ([`StoreFile::decode`]).

use super::store::{
    Applied, Delta, Entry, Gres, NewRecord, Owners, Record, Relation, STORE_FORMAT, Shape, Store,
    StoreError, Unit, admit_partition, ingest_entry,
};
use compact_str::CompactString;
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use xxhash_rust::xxh3::Xxh3;

/// The store file's first bytes.
const MAGIC: &[u8; 8] = b"SLCSTOR\n";

/// The header: magic, version (u32 LE), checksum (u64 LE).
const HEADER_LEN: usize = MAGIC.len() + 4 + 8;

/// Where the checksum is in the header.
const SUM_AT: usize = MAGIC.len() + 4;

/// The read and write buffer: what the file costs in memory, whatever its size.
const BUFFER: usize = 64 * 1024;

/// A relation as the head keeps it (its units are in their own section).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct RelationHead {
    app: String,
    partition: Option<String>,
    cluster_info_published: Option<String>,
    verdicts_published: Option<String>,
}

/// Everything but the units, the records and what slurmctld runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Head {
    relations: BTreeMap<u32, RelationHead>,
    gres: BTreeMap<u32, Gres>,
    shapes: BTreeMap<u32, Shape>,
    next_record: u32,
    owners: Owners,
    logged: BTreeMap<String, String>,
    status: Option<(String, String)>,
    reload_deferred: bool,
    accepted_seq: u64,
    refused: Option<super::store::Refusal>,
    slurm_version: Option<String>,
    config: Option<String>,
    seq: u64,
    /// The boot the file was written in without `fsync` ([`crate::charms::host::boot_id`]);
    /// `None` when it was synced. A file of another boot is not trusted: a kernel crash or a
    /// power loss (each a new boot) may have lost what the last hooks wrote.
    boot: Option<String>,
}

/// A store file whose header was checked, its head frame read (not yet checked against the
/// checksum: [`StoreFile::unchanged`] and [`StoreFile::decode`] read the whole body and check
/// it).
pub struct StoreFile<R> {
    source: R,
    /// The header's checksum.
    sum: u64,
    /// The body's length: the file's, less the header.
    len: u64,
    /// The head frame's bytes.
    head: Vec<u8>,
}

/// The body as the file gives it: at most `left` bytes, each hashed as it is read (a buffer
/// at a time, not a frame at a time).
struct Hashed<R> {
    input: R,
    hash: Xxh3,
    left: u64,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let most = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.input.read(&mut buf[..most])?;
        self.hash.update(&buf[..n]);
        self.left -= n as u64;
        Ok(n)
    }
}

/// The body being read, a frame at a time; no frame longer than what is left of the body.
struct Body<R> {
    input: BufReader<Hashed<R>>,
    /// What is left of the body after the frames taken.
    left: u64,
    /// Bytes of the buffer the last frame lent out, consumed before anything else is read.
    lent: usize,
    /// A frame that did not lie whole in the buffer, copied.
    frame: Vec<u8>,
}

impl<R: Read> Body<R> {
    /// Consumes the frame lent out last.
    fn settle(&mut self) {
        self.input.consume(self.lent);
        self.lent = 0;
    }

    /// The next `n` bytes, copied.
    fn take(&mut self, n: u32) -> Result<&[u8], StoreError> {
        self.settle();
        if u64::from(n) > self.left {
            return Err(StoreError::Frame);
        }
        self.frame.clear();
        self.frame.resize(n as usize, 0);
        self.input
            .read_exact(&mut self.frame)
            .map_err(StoreError::Io)?;
        self.left -= u64::from(n);
        Ok(&self.frame)
    }

    /// A u32 LE: a frame's length or a section's count.
    fn u32(&mut self) -> Result<u32, StoreError> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes(
            bytes.try_into().map_err(|_| StoreError::Frame)?,
        ))
    }

    /// The next frame's bytes: lent from the buffer when the frame lies whole in it (nearly
    /// every frame: they are small), else copied.
    fn frame(&mut self) -> Result<&[u8], StoreError> {
        self.settle();
        let buf = self.input.fill_buf().map_err(StoreError::Io)?;
        let whole = buf.split_first_chunk::<4>().and_then(|(len, rest)| {
            let len = u32::from_le_bytes(*len) as usize;
            (len <= rest.len()).then_some(4 + len)
        });
        if let Some(whole) = whole {
            if whole as u64 > self.left {
                return Err(StoreError::Frame);
            }
            self.left -= whole as u64;
            self.lent = whole;
            return Ok(&self.input.buffer()[4..whole]);
        }
        let len = self.u32()?;
        self.take(len)
    }

    /// Reads the rest of the body and checks the checksum.
    fn check(self, sum: u64) -> Result<(), StoreError> {
        let mut input = self.input.into_inner();
        std::io::copy(&mut input, &mut std::io::sink()).map_err(StoreError::Io)?;
        if input.left != 0 {
            return Err(StoreError::Frame);
        }
        if input.hash.digest() != sum {
            return Err(StoreError::Checksum);
        }
        Ok(())
    }
}

fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, StoreError> {
    postcard::from_bytes(bytes).map_err(StoreError::Body)
}

/// The head, when it can be what the last hook wrote in this boot.
fn trusted_head(bytes: &[u8]) -> Result<Head, StoreError> {
    let head: Head = decode(bytes)?;
    match &head.boot {
        Some(boot) if Some(boot.as_str()) != crate::charms::host::boot_id() => {
            Err(StoreError::EarlierBoot)
        }
        _ => Ok(head),
    }
}

/// The relations of a head, without their units.
fn relations(head: BTreeMap<u32, RelationHead>) -> BTreeMap<u32, Relation> {
    head.into_iter()
        .map(|(id, r)| {
            let rel = Relation {
                app: r.app,
                partition: r.partition,
                units: Default::default(),
                cluster_info_published: r.cluster_info_published,
                verdicts_published: r.verdicts_published,
            };
            (id, rel)
        })
        .collect()
}

/// The store a head describes, with `relations` (their units in), `records` and `applied`.
fn store_of(
    head: Head,
    relations: BTreeMap<u32, Relation>,
    records: LiteMap<u32, Record>,
    applied: Option<Applied>,
) -> Store {
    Store {
        relations,
        records,
        gres: head.gres,
        shapes: head.shapes,
        next_record: head.next_record,
        owners: head.owners,
        logged: head.logged,
        status: head.status,
        reload_deferred: head.reload_deferred,
        applied,
        accepted_seq: head.accepted_seq,
        refused: head.refused,
        slurm_version: head.slurm_version,
        config: head.config,
        seq: head.seq,
    }
}

impl<'a> StoreFile<std::io::Cursor<&'a [u8]>> {
    /// A store file's bytes already in memory (tests, tools).
    pub fn parse(raw: &'a [u8]) -> Result<Self, StoreError> {
        StoreFile::open(std::io::Cursor::new(raw))
    }
}

impl<R: Read + Seek> StoreFile<R> {
    /// Checks the header and reads the head frame of the store file `source`.
    pub fn open(mut source: R) -> Result<Self, StoreError> {
        let size = source.seek(SeekFrom::End(0)).map_err(StoreError::Io)?;
        source.seek(SeekFrom::Start(0)).map_err(StoreError::Io)?;
        let mut header = [0u8; HEADER_LEN];
        source.read_exact(&mut header).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => StoreError::Magic,
            _ => StoreError::Io(e),
        })?;
        let (magic, rest) = header.split_at(MAGIC.len());
        if magic != MAGIC {
            return Err(StoreError::Magic);
        }
        let (version, sum) = rest.split_at(4);
        let found = u32::from_le_bytes(version.try_into().map_err(|_| StoreError::Magic)?);
        if found != STORE_FORMAT {
            return Err(StoreError::Version { found });
        }
        let sum = u64::from_le_bytes(sum.try_into().map_err(|_| StoreError::Magic)?);
        let mut file = StoreFile {
            source,
            sum,
            len: size.saturating_sub(HEADER_LEN as u64),
            head: Vec::new(),
        };
        file.head = file.body()?.frame()?.to_vec();
        Ok(file)
    }

    /// The body, read from its start.
    fn body(&mut self) -> Result<Body<&mut R>, StoreError> {
        self.source
            .seek(SeekFrom::Start(HEADER_LEN as u64))
            .map_err(StoreError::Io)?;
        let hashed = Hashed {
            input: &mut self.source,
            hash: Xxh3::new(),
            left: self.len,
        };
        Ok(Body {
            input: BufReader::with_capacity(BUFFER, hashed),
            left: self.len,
            lent: 0,
            frame: Vec::new(),
        })
    }

    /// The whole store. A body that does not read back is named by its checksum when that
    /// does not match either (damage, rather than a bug).
    pub fn decode(&mut self) -> Result<Store, StoreError> {
        let sum = self.sum;
        let mut body = self.body()?;
        let store = decode_body(&mut body);
        match (store, body.check(sum)) {
            (_, Err(StoreError::Checksum)) => Err(StoreError::Checksum),
            (Ok(store), Ok(())) => Ok(store),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e),
        }
    }

    /// The store without its units, records and applied state: what a hook whose event changes
    /// nothing needs (the status, what was published, the flags). Checked against the
    /// checksum only by [`StoreFile::unchanged`] answering `true`.
    pub fn head(&self) -> Result<Store, StoreError> {
        let mut head = trusted_head(&self.head)?;
        let relations = relations(std::mem::take(&mut head.relations));
        Ok(store_of(head, relations, LiteMap::new(), None))
    }

    /// Whether applying `delta` would change nothing ([`Store::apply`] answering
    /// [`super::store::Change::None`]), judged from the head, the event's one unit and its
    /// record, once the whole body matched its checksum. `false` whenever it cannot tell (an
    /// unknown relation or unit, a damaged file): the hook then decodes the whole store.
    pub fn unchanged(&mut self, head: &Store, delta: &Delta) -> bool {
        let same = match delta {
            Delta::Partition { relation, value } => head
                .relations
                .get(relation)
                .is_some_and(|r| r.partition == value.as_deref().map(admit_partition)),
            Delta::Node {
                relation,
                unit,
                value: Some(value),
            } if head.relations.contains_key(relation) => {
                return self
                    .node_unchanged(head, *relation, unit, value)
                    .unwrap_or(false);
            }
            _ => false,
        };
        let sum = self.sum;
        same && self.body().and_then(|b| b.check(sum)).is_ok()
    }

    fn node_unchanged(
        &mut self,
        head: &Store,
        relation: u32,
        unit: &str,
        value: &str,
    ) -> Result<bool, StoreError> {
        let sum = self.sum;
        let mut body = self.body()?;
        body.frame()?;
        let mut left = body.u32()?;
        // a unit frame starts with its relation id and name as postcard writes them (the
        // name's length first, so `compute/1` is no prefix of `compute/10`): compared as bytes
        let key = postcard::to_stdvec(&(relation, unit)).map_err(StoreError::Body)?;
        let mut stored = None;
        while left > 0 && stored.is_none() {
            left -= 1;
            let f = body.frame()?;
            if f.starts_with(&key) {
                let (_, _, u): (u32, String, Unit) = decode(f)?;
                stored = Some(u);
            }
        }
        let Some(stored) = stored else {
            return Ok(false);
        };
        // a change is known as soon as it is seen: the rest is read only for a `true`, which
        // the checksum must back
        let (name, new_node, entry) = ingest_entry(value);
        if stored.name != name || stored.new_node != new_node {
            return Ok(false);
        }
        let same = match (&stored.entry, entry) {
            (Entry::Rejected(a), Err(b)) => *a == b,
            (Entry::Record(id), Ok(record)) => {
                for _ in 0..left {
                    body.frame()?;
                }
                record_is(&mut body, *id, &record, head)?
            }
            _ => false,
        };
        if same {
            body.check(sum)?;
        }
        Ok(same)
    }
}

/// The store in `body`, read to its end (not checked against the checksum).
fn decode_body<R: Read>(body: &mut Body<R>) -> Result<Store, StoreError> {
    let mut head = trusted_head(body.frame()?)?;
    let mut relations = relations(std::mem::take(&mut head.relations));
    // each relation's units come in order: gathered, then built in one pass each
    let count = body.u32()?;
    // room for every unit up front (a count the body cannot hold is bounded by its length: each
    // frame is at least its 4-byte length), so the units are never copied as the vector grows
    let mut units: Vec<(CompactString, Unit)> = Vec::with_capacity(frames_within(count, body.left));
    let mut current = None;
    for _ in 0..count {
        let (relation, name, unit): (u32, CompactString, Unit) = decode(body.frame()?)?;
        if current != Some(relation) {
            put_units(&mut relations, current, &mut units)?;
            current = Some(relation);
        }
        units.push((name, unit));
    }
    put_units(&mut relations, current, &mut units)?;
    let count = body.u32()?;
    let mut records: Vec<(u32, Record)> = Vec::with_capacity(frames_within(count, body.left));
    for _ in 0..count {
        records.push(decode(body.frame()?)?);
    }
    let applied: Option<Applied> = decode(body.frame()?)?;
    if body.left != 0 {
        return Err(StoreError::Frame);
    }
    Ok(store_of(head, relations, sorted(records)?, applied))
}

/// Puts the units gathered for `relation` in it. A relation's units are one run of frames.
fn put_units(
    relations: &mut BTreeMap<u32, Relation>,
    relation: Option<u32>,
    units: &mut Vec<(CompactString, Unit)>,
) -> Result<(), StoreError> {
    let Some(id) = relation else {
        return Ok(());
    };
    let rel = relations.get_mut(&id).ok_or(StoreError::Frame)?;
    if !rel.units.is_empty() {
        return Err(StoreError::Frame);
    }
    rel.units = sorted(std::mem::take(units))?;
    Ok(())
}

/// The map of pairs a section gave, built in their vector: the file holds them in increasing
/// key order, each key once (the writer walks sorted maps), so no pair is sorted or copied
/// again (`FromIterator` copies the vector and compares the keys to find it sorted; at 10,000
/// distinct nodes that was about 1.6 MB copied, docs/BENCHMARKS.md, issue 38, eighth pass).
/// Pairs out of order or a key twice are a damaged file.
fn sorted<K: Ord, V>(pairs: Vec<(K, V)>) -> Result<LiteMap<K, V>, StoreError> {
    if pairs.windows(2).all(|w| w[0].0 < w[1].0) {
        Ok(LiteMap::from_sorted_store_unchecked(pairs))
    } else {
        Err(StoreError::Frame)
    }
}

/// How many frames of a section said to hold `count` can lie in `left` bytes of body (each is
/// at least its 4-byte length): a vector's capacity, never more than the file can fill.
fn frames_within(count: u32, left: u64) -> usize {
    usize::try_from(u64::from(count).min(left / 4)).unwrap_or(0)
}

/// Whether record `id` in the records section `body` is at is `record` (its GRES looked up in
/// the head). Records come in id order: the walk ends at the first id not below `id`.
fn record_is<R: Read>(
    body: &mut Body<R>,
    id: u32,
    record: &NewRecord,
    head: &Store,
) -> Result<bool, StoreError> {
    for _ in 0..body.u32()? {
        let f = body.frame()?;
        let (found, _): (u32, _) = postcard::take_from_bytes(f).map_err(StoreError::Body)?;
        if found >= id {
            let same = found == id && {
                let (_, stored): (u32, Record) = decode(f)?;
                record.is(&stored, head)
            };
            return Ok(same);
        }
    }
    Ok(false)
}

impl Store {
    /// Reads a store file's bytes (see the module doc).
    pub fn from_bytes(raw: &[u8]) -> Result<Store, StoreError> {
        StoreFile::parse(raw)?.decode()
    }

    /// The store file's bytes, to be written with `fsync`; records no unit names are left
    /// out.
    pub fn to_bytes(&mut self) -> Vec<u8> {
        self.drop_unused_records();
        let mut out = header();
        // writing to memory does not fail
        if let Ok(sum) = encode(self, None, &mut out) {
            out[SUM_AT..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
        }
        out
    }

    /// Writes the store file to `out`, an empty file (see the module doc), naming `boot` when
    /// it is written without `fsync` in that boot (`None`: synced); records no unit names are
    /// left out.
    pub fn write_to(&mut self, out: &mut std::fs::File, boot: Option<&str>) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.drop_unused_records();
        out.write_all(&header())?;
        let sum = encode(self, boot, &mut *out)?;
        out.write_all_at(&sum.to_le_bytes(), SUM_AT as u64)
    }
}

/// The header, its checksum left zero.
fn header() -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&STORE_FORMAT.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out
}

/// Hashes what it writes.
struct Hashing<W> {
    out: W,
    hash: Xxh3,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes a frame holding `value` in postcard, encoded through `scratch` (reused).
fn push_frame<T: Serialize, W: Write>(
    out: &mut W,
    scratch: &mut Vec<u8>,
    value: &T,
) -> std::io::Result<()> {
    scratch.clear();
    let encoded = postcard::to_extend(value, std::mem::take(scratch))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    out.write_all(&(encoded.len() as u32).to_le_bytes())?;
    out.write_all(&encoded)?;
    *scratch = encoded;
    Ok(())
}

/// Writes the store file's body (see the module doc) to `out` through a buffer, naming
/// `boot` when it is written without `fsync` in that boot; returns its checksum.
fn encode<W: Write>(store: &Store, boot: Option<&str>, out: W) -> std::io::Result<u64> {
    let mut scratch = Vec::new();
    let head = Head {
        relations: store
            .relations
            .iter()
            .map(|(id, r)| {
                let head = RelationHead {
                    app: r.app.clone(),
                    partition: r.partition.clone(),
                    cluster_info_published: r.cluster_info_published.clone(),
                    verdicts_published: r.verdicts_published.clone(),
                };
                (*id, head)
            })
            .collect(),
        gres: store.gres.clone(),
        shapes: store.shapes.clone(),
        next_record: store.next_record,
        owners: store.owners.clone(),
        logged: store.logged.clone(),
        status: store.status.clone(),
        reload_deferred: store.reload_deferred,
        accepted_seq: store.accepted_seq,
        refused: store.refused.clone(),
        slurm_version: store.slurm_version.clone(),
        config: store.config.clone(),
        seq: store.seq,
        boot: boot.map(str::to_owned),
    };
    // hashed a buffer at a time, as it leaves the buffer
    let hashing = Hashing {
        out,
        hash: Xxh3::new(),
    };
    let mut body = std::io::BufWriter::with_capacity(BUFFER, hashing);
    push_frame(&mut body, &mut scratch, &head)?;
    let units = store.units().count();
    body.write_all(&(units as u32).to_le_bytes())?;
    for (relation, name, unit) in store.units() {
        push_frame(&mut body, &mut scratch, &(relation, name, unit))?;
    }
    body.write_all(&(store.records.len() as u32).to_le_bytes())?;
    for (id, record) in &store.records {
        push_frame(&mut body, &mut scratch, &(id, record))?;
    }
    push_frame(&mut body, &mut scratch, &store.applied)?;
    let hashing = body.into_inner().map_err(|e| e.into_error())?;
    Ok(hashing.hash.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, memory: u32, new_node: bool) -> String {
        format!(
            r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"{memory}"}},"new_node":{new_node}}}"#
        )
    }

    fn store() -> Store {
        let mut s = Store::default();
        s.add_relation(
            3,
            "compute",
            Some(r#"{"compute":{"State":"UP"}}"#.into()),
            [
                ("compute/0".to_owned(), node("c0", 1000, false)),
                ("compute/1".to_owned(), node("c1", 1000, true)),
                ("compute/2".to_owned(), "{not json".to_owned()),
            ],
        );
        s.status = Some(("active".into(), "2 nodes".into()));
        s
    }

    #[test]
    fn the_file_reads_back_whole() {
        let mut s = store();
        let bytes = s.to_bytes();
        assert_eq!(StoreFile::parse(&bytes).unwrap().decode().unwrap(), s);
    }

    /// The predicate agrees with `Store::apply` on every kind of event it may see.
    #[test]
    fn unchanged_is_what_apply_answers() {
        let mut s = store();
        let bytes = s.to_bytes();
        let mut file = StoreFile::parse(&bytes).unwrap();
        let head = file.head().unwrap();
        let node_delta = |unit: &str, value: Option<String>| Delta::Node {
            relation: 3,
            unit: unit.into(),
            value,
        };
        let cases = [
            node_delta("compute/0", Some(node("c0", 1000, false))),
            node_delta("compute/0", Some(node("c0", 1001, false))),
            node_delta("compute/0", Some(node("c9", 1000, false))),
            node_delta("compute/1", Some(node("c1", 1000, false))),
            node_delta("compute/2", Some("{not json".into())),
            node_delta("compute/2", Some("[]".into())),
            node_delta("compute/7", Some(node("c7", 1000, false))),
            node_delta("compute/0", None),
            Delta::Partition {
                relation: 3,
                value: Some(r#"{"compute":{"State":"UP"}}"#.into()),
            },
            Delta::Partition {
                relation: 3,
                value: Some(r#"{"other":{"State":"UP"}}"#.into()),
            },
            Delta::Node {
                relation: 9,
                unit: "x/0".into(),
                value: Some(node("x0", 1, false)),
            },
        ];
        let mut quiet = 0;
        for delta in cases {
            let predicted = file.unchanged(&head, &delta);
            let answer = s.clone().apply(delta.clone());
            // the predicate may only say "unchanged" where apply does; it says so for each
            // repeated value here
            assert_eq!(
                predicted,
                answer == super::super::store::Change::None,
                "{delta:?}"
            );
            quiet += usize::from(predicted);
        }
        assert_eq!(quiet, 3);
    }

    #[test]
    fn damage_is_named() {
        let mut s = store();
        let mut bytes = s.to_bytes();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(matches!(
            StoreFile::parse(&bytes).unwrap().decode(),
            Err(StoreError::Checksum)
        ));
        assert!(matches!(
            StoreFile::parse(&bytes[..10]),
            Err(StoreError::Magic)
        ));
        let mut cut = s.to_bytes();
        cut.truncate(cut.len() - 1);
        assert!(matches!(
            StoreFile::parse(&cut).unwrap().decode(),
            Err(StoreError::Checksum)
        ));
    }

    /// Units or records out of key order (or a key twice) on the file are damage: the maps are
    /// built on the file's order as it is, so an order the writer never makes is refused.
    #[test]
    fn frames_out_of_order_are_damage() {
        let reversed = |map: &mut super::super::store::UnitMap| {
            let mut pairs: Vec<_> = std::mem::take(map).into_tuple_vec();
            pairs.reverse();
            *map = LiteMap::from_sorted_store_unchecked(pairs);
        };
        let mut s = store();
        reversed(&mut s.relations.get_mut(&3).unwrap().units);
        assert!(matches!(
            Store::from_bytes(&s.to_bytes()),
            Err(StoreError::Frame)
        ));
        let mut s = store();
        s.apply(Delta::Node {
            relation: 3,
            unit: "compute/1".into(),
            value: Some(node("c1", 2000, true)),
        });
        assert_eq!(s.records.len(), 2);
        let mut records: Vec<_> = std::mem::take(&mut s.records).into_tuple_vec();
        records.reverse();
        s.records = LiteMap::from_sorted_store_unchecked(records);
        assert!(matches!(
            Store::from_bytes(&s.to_bytes()),
            Err(StoreError::Frame)
        ));
        // in order, the same store reads back
        let mut s = store();
        assert_eq!(Store::from_bytes(&s.to_bytes()).unwrap(), s);
    }

    /// A file of many 64 KiB buffers, frames lying across their ends, reads back whole, and
    /// the predicate finds a unit and record near its end.
    #[test]
    fn a_file_larger_than_the_buffer_reads_back() {
        let mut s = Store::default();
        let units: Vec<(String, String)> = (0..6000)
            .map(|k| {
                (
                    format!("compute/{k}"),
                    node(&format!("c{k}"), 1000 + k, false),
                )
            })
            .collect();
        s.add_relation(3, "compute", Some(r#"{"compute":{}}"#.into()), units);
        let mut bytes = s.to_bytes();
        assert!(bytes.len() > 2 * BUFFER, "{} bytes", bytes.len());
        assert_eq!(Store::from_bytes(&bytes).unwrap(), s);
        let repeat = Delta::Node {
            relation: 3,
            unit: "compute/5999".into(),
            value: Some(node("c5999", 6999, false)),
        };
        let mut file = StoreFile::parse(&bytes).unwrap();
        let head = file.head().unwrap();
        assert!(file.unchanged(&head, &repeat));
        // a record in the middle of the records (the walk stops at its id): found the same
        // when it is, and changed when it is not
        for (memory, same) in [(4000, true), (4001, false)] {
            let middle = Delta::Node {
                relation: 3,
                unit: "compute/3000".into(),
                value: Some(node("c3000", memory, false)),
            };
            let mut file = StoreFile::parse(&bytes).unwrap();
            assert_eq!(file.unchanged(&head, &middle), same, "RealMemory {memory}");
        }
        let at = bytes.len() - 2;
        bytes[at] ^= 1;
        let mut file = StoreFile::parse(&bytes).unwrap();
        assert!(!file.unchanged(&head, &repeat));
    }

    /// A directory where the file should be does not read (the hook rebuilds the store).
    #[test]
    fn a_directory_is_not_a_store() {
        let dir = tempfile::tempdir().unwrap();
        let opened = std::fs::File::open(dir.path()).unwrap();
        assert!(matches!(
            StoreFile::open(opened),
            Err(StoreError::Io(_) | StoreError::Magic)
        ));
    }

    /// Nothing read from a damaged file is used: the predicate answers "unchanged" only once
    /// the whole body matched its checksum, whichever part the damage is in.
    #[test]
    fn a_damaged_file_is_never_unchanged() {
        let mut s = store();
        let bytes = s.to_bytes();
        let repeat = Delta::Node {
            relation: 3,
            unit: "compute/0".into(),
            value: Some(node("c0", 1000, false)),
        };
        let partition = Delta::Partition {
            relation: 3,
            value: Some(r#"{"compute":{"State":"UP"}}"#.into()),
        };
        let mut file = StoreFile::parse(&bytes).unwrap();
        let head = file.head().unwrap();
        assert!(file.unchanged(&head, &repeat));
        assert!(file.unchanged(&head, &partition));
        // every byte of the body after the head frame: units, records, applied
        let head_end = HEADER_LEN + 4 + file.head.len();
        for at in head_end..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            let mut file = StoreFile::parse(&damaged).unwrap();
            assert!(!file.unchanged(&head, &repeat), "byte {at}");
            assert!(!file.unchanged(&head, &partition), "byte {at}");
            assert!(file.decode().is_err(), "byte {at}");
        }
    }
}
