//! The store's file: a magic line, the format version, the XXH3-64 checksum of the body, then
//! the body in four length-prefixed sections (postcard inside each):
//!
//! 1. the head: relations without their units, owners, logged rejections, status, flags;
//! 2. the units, one frame each: relation id, unit name, then the unit;
//! 3. the records, one frame each: record id, then the record;
//! 4. what slurmctld runs ([`super::store::Applied`]).
//!
//! Framing lets one question be answered without decoding the whole store: whether a relation
//! event changes anything ([`StoreFile::unchanged`], the one predicate that drops unchanged
//! events before the plan, as kube-runtime's predicates do). It reads the head, walks the unit
//! frames to the event's unit, and compares that unit's record, decoded alone, with the event's
//! value parsed as [`Store::apply`] parses it. Every other hook decodes the whole store
//! ([`StoreFile::decode`]).

use super::owners::Owners;
use super::store::{
    Applied, Delta, Entry, Gres, NewRecord, Record, Relation, STORE_FORMAT, Store, StoreError,
    Unit, admit_partition, checksum, ingest_entry,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The store file's first bytes.
const MAGIC: &[u8; 8] = b"SLCSTOR\n";

/// The header: magic, version (u32 LE), checksum (u64 LE).
const HEADER_LEN: usize = MAGIC.len() + 4 + 8;

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
    next_record: u32,
    owners: Owners,
    logged: BTreeMap<String, String>,
    status: Option<(String, String)>,
    reload_deferred: bool,
    accepted_seq: u64,
    refused: Option<super::store::Refusal>,
    slurm_version: Option<String>,
    seq: u64,
    /// The boot the file was written in without `fsync` ([`crate::charms::host::boot_id`]);
    /// `None` when it was synced. A file of another boot is not trusted: a kernel crash or a
    /// power loss (each a new boot) may have lost what the last hooks wrote.
    boot: Option<String>,
}

/// A store file whose header and checksum were checked, its sections found.
pub struct StoreFile<'a> {
    head: &'a [u8],
    units: &'a [u8],
    records: &'a [u8],
    applied: &'a [u8],
}

/// Splits off one frame: a u32 LE length and that many bytes.
fn frame(data: &[u8]) -> Result<(&[u8], &[u8]), StoreError> {
    let (len, rest) = data.split_at_checked(4).ok_or(StoreError::Frame)?;
    let len = u32::from_le_bytes(len.try_into().map_err(|_| StoreError::Frame)?) as usize;
    rest.split_at_checked(len).ok_or(StoreError::Frame)
}

/// The frames of a section, in order.
fn frames(mut data: &[u8]) -> impl Iterator<Item = Result<&[u8], StoreError>> {
    std::iter::from_fn(move || {
        if data.is_empty() {
            return None;
        }
        Some(frame(data).map(|(f, rest)| {
            data = rest;
            f
        }))
    })
}

/// Appends a frame holding `value` in postcard, encoded through `scratch` (reused).
fn push_frame<T: Serialize>(out: &mut Vec<u8>, scratch: &mut Vec<u8>, value: &T) {
    scratch.clear();
    let encoded = postcard::to_extend(value, std::mem::take(scratch)).unwrap_or_default();
    out.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
    out.extend_from_slice(&encoded);
    *scratch = encoded;
}

/// Starts a section in `out`: its length, filled in by [`end_section`].
fn begin_section(out: &mut Vec<u8>) -> usize {
    out.extend_from_slice(&[0; 4]);
    out.len()
}

/// Writes the length of the section begun at `start`.
fn end_section(out: &mut [u8], start: usize) {
    let len = (out.len() - start) as u32;
    out[start - 4..start].copy_from_slice(&len.to_le_bytes());
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

impl<'a> StoreFile<'a> {
    /// Checks the header and the checksum, and finds the sections.
    pub fn parse(raw: &'a [u8]) -> Result<Self, StoreError> {
        let (header, body) = raw.split_at_checked(HEADER_LEN).ok_or(StoreError::Magic)?;
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
        if checksum(&[body]) != sum {
            return Err(StoreError::Checksum);
        }
        let (head, rest) = frame(body)?;
        let (units, rest) = frame(rest)?;
        let (records, rest) = frame(rest)?;
        let (applied, rest) = frame(rest)?;
        if !rest.is_empty() {
            return Err(StoreError::Frame);
        }
        Ok(StoreFile {
            head,
            units,
            records,
            applied,
        })
    }

    /// The whole store.
    pub fn decode(&self) -> Result<Store, StoreError> {
        let head = trusted_head(self.head)?;
        let mut relations: BTreeMap<u32, Relation> = head
            .relations
            .into_iter()
            .map(|(id, r)| {
                let rel = Relation {
                    app: r.app,
                    partition: r.partition,
                    units: BTreeMap::new(),
                    cluster_info_published: r.cluster_info_published,
                    verdicts_published: r.verdicts_published,
                };
                (id, rel)
            })
            .collect();
        for f in frames(self.units) {
            let (relation, name, unit): (u32, String, Unit) = decode(f?)?;
            relations
                .get_mut(&relation)
                .ok_or(StoreError::Frame)?
                .units
                .insert(name, unit);
        }
        let mut records = BTreeMap::new();
        for f in frames(self.records) {
            let (id, record): (u32, Record) = decode(f?)?;
            records.insert(id, record);
        }
        let applied: Option<Applied> = decode(self.applied)?;
        Ok(Store {
            relations,
            records,
            gres: head.gres,
            next_record: head.next_record,
            owners: head.owners,
            logged: head.logged,
            status: head.status,
            reload_deferred: head.reload_deferred,
            applied,
            accepted_seq: head.accepted_seq,
            refused: head.refused,
            slurm_version: head.slurm_version,
            seq: head.seq,
        })
    }

    /// The store without its units, records and applied state: what a hook whose event changes
    /// nothing needs (the status, what was published, the flags).
    pub fn head(&self) -> Result<Store, StoreError> {
        let head = trusted_head(self.head)?;
        Ok(Store {
            relations: head
                .relations
                .into_iter()
                .map(|(id, r)| {
                    let rel = Relation {
                        app: r.app,
                        partition: r.partition,
                        units: BTreeMap::new(),
                        cluster_info_published: r.cluster_info_published,
                        verdicts_published: r.verdicts_published,
                    };
                    (id, rel)
                })
                .collect(),
            gres: head.gres,
            next_record: head.next_record,
            owners: head.owners,
            logged: head.logged,
            status: head.status,
            reload_deferred: head.reload_deferred,
            accepted_seq: head.accepted_seq,
            refused: head.refused,
            slurm_version: head.slurm_version,
            seq: head.seq,
            ..Store::default()
        })
    }

    /// Whether applying `delta` would change nothing ([`Store::apply`] answering
    /// [`super::store::Change::None`]), judged from the head, the event's one unit and its
    /// record. `false` whenever it cannot tell (an unknown relation or unit, a damaged frame):
    /// the hook then decodes the whole store.
    pub fn unchanged(&self, head: &Store, delta: &Delta) -> bool {
        match delta {
            Delta::Partition { relation, value } => head
                .relations
                .get(relation)
                .is_some_and(|r| r.partition == value.as_deref().map(admit_partition)),
            Delta::Node {
                relation,
                unit,
                value: Some(value),
            } if head.relations.contains_key(relation) => self
                .node_unchanged(head, *relation, unit, value)
                .unwrap_or(false),
            _ => false,
        }
    }

    fn node_unchanged(
        &self,
        head: &Store,
        relation: u32,
        unit: &str,
        value: &str,
    ) -> Result<bool, StoreError> {
        let mut stored = None;
        for f in frames(self.units) {
            let f = f?;
            let ((rel, name), _): ((u32, &str), _) =
                postcard::take_from_bytes(f).map_err(StoreError::Body)?;
            if rel == relation && name == unit {
                let (_, _, u): (u32, String, Unit) = decode(f)?;
                stored = Some(u);
                break;
            }
        }
        let Some(stored) = stored else {
            return Ok(false);
        };
        let (name, new_node, entry) = ingest_entry(value);
        if stored.name != name || stored.new_node != new_node {
            return Ok(false);
        }
        match (&stored.entry, entry) {
            (Entry::Rejected(a), Err(b)) => Ok(*a == b),
            (Entry::Record(id), Ok(record)) => self.record_is(*id, &record, head),
            _ => Ok(false),
        }
    }

    /// Whether record `id` is `record` (its GRES looked up in the head).
    fn record_is(&self, id: u32, record: &NewRecord, head: &Store) -> Result<bool, StoreError> {
        for f in frames(self.records) {
            let f = f?;
            let (found, _): (u32, _) = postcard::take_from_bytes(f).map_err(StoreError::Body)?;
            if found == id {
                let (_, stored): (u32, Record) = decode(f)?;
                return Ok(record.is(&stored, &head.gres));
            }
        }
        Ok(false)
    }
}

impl Store {
    /// Reads a store file's bytes (see the module doc).
    pub fn from_bytes(raw: &[u8]) -> Result<Store, StoreError> {
        StoreFile::parse(raw)?.decode()
    }

    /// The store file's bytes, to be written with `fsync`; records no unit names are left
    /// out.
    pub fn to_bytes(&mut self) -> Vec<u8> {
        self.to_bytes_in(None)
    }

    /// The store file's bytes, to be written without `fsync` in boot `boot` (`None`: synced).
    pub fn to_bytes_in(&mut self, boot: Option<&str>) -> Vec<u8> {
        self.drop_unused_records();
        encode(self, boot)
    }
}

/// The store file's bytes (see the module doc), naming `boot` when it is written without
/// `fsync` in that boot.
pub fn encode(store: &Store, boot: Option<&str>) -> Vec<u8> {
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
        next_record: store.next_record,
        owners: store.owners.clone(),
        logged: store.logged.clone(),
        status: store.status.clone(),
        reload_deferred: store.reload_deferred,
        accepted_seq: store.accepted_seq,
        refused: store.refused.clone(),
        slurm_version: store.slurm_version.clone(),
        seq: store.seq,
        boot: boot.map(str::to_owned),
    };
    // one buffer: the header, then each section, their lengths and the checksum filled in
    let mut out = Vec::with_capacity(HEADER_LEN + 64 * 1024 + store.records.len() * 256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&STORE_FORMAT.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    push_frame(&mut out, &mut scratch, &head);
    let units = begin_section(&mut out);
    for (relation, name, unit) in store.units() {
        push_frame(&mut out, &mut scratch, &(relation, name, unit));
    }
    end_section(&mut out, units);
    let records = begin_section(&mut out);
    for (id, record) in &store.records {
        push_frame(&mut out, &mut scratch, &(id, record));
    }
    end_section(&mut out, records);
    push_frame(&mut out, &mut scratch, &store.applied);
    let sum = checksum(&[&out[HEADER_LEN..]]);
    out[HEADER_LEN - 8..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
    out
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
        let file = StoreFile::parse(&bytes).unwrap();
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
            StoreFile::parse(&bytes),
            Err(StoreError::Checksum)
        ));
        assert!(matches!(
            StoreFile::parse(&bytes[..10]),
            Err(StoreError::Magic)
        ));
    }
}
