//! How the relation cache holds one relation's units ([`super::cache::CachedRelation::units`]).
//!
//! **Stored** as one string of comma-separated entries for the units whose record was
//! accepted, each `unit NodeName flags shape-key digest` separated by spaces (flags, a digit:
//! `new_node` plus 2 × owner), in unit-name order; the rest (rejected units, whose reason is free
//! text, or any field that could not be written so) as a JSON map. The fields are space- and
//! comma-free: Juju unit names, [`NodeName`]s (checked again when read: the cache file is a
//! boundary), hex keys. An entry that does not read back (five fields, a valid name, flags
//! 0 to 3, units in strictly increasing order) makes the cache unreadable, and the hook
//! rebuilds it from relation data.
//!
//! **In memory** ([`Units`]) the entries' text is kept as read, with each entry's fields found
//! once (offsets) and its name checked once; the units a hook adds, changes or removes are
//! kept beside it ([`Units::insert`], [`Units::remove`]) and merged in order when the table is
//! read ([`Units::iter`]) or written. At 10,000 units, a map of owned records made four
//! allocations per unit on every controller hook, and writing it checked every byte again;
//! now a hook allocates the one name per unit and writes the untouched entries from their
//! fields.

use super::cache::CachedNode;
use crate::slurm::types::NodeName;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

/// An entry's flags field: bit 0 `new_node`, bit 1 the unit owns its name
/// ([`CachedNode::owner`]).
const FLAGS: [&str; 4] = ["0", "1", "2", "3"];

/// One relation's units: unit name → its cached record, in unit-name order (string order).
#[derive(Clone, Default)]
pub struct Units {
    /// The stored entries' text, as read.
    text: String,
    /// The entries of `text`, in strictly increasing unit order.
    read: Vec<ReadEntry>,
    /// Units added or changed (`Some`) or removed (`None`) since the table was read; also the
    /// stored units that are not entries (rejected ones).
    edits: BTreeMap<String, Option<CachedNode>>,
}

/// One entry of [`Units::text`]: where its fields are, its name checked, its flags.
#[derive(Debug, Clone)]
struct ReadEntry {
    unit: Range<u32>,
    shape: Range<u32>,
    digest: Range<u32>,
    name: NodeName,
    new_node: bool,
    owner: bool,
}

/// A unit's cached record as [`Units`] hands it out (borrowed: see [`CachedNode`] for what
/// each field means).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitRecord<'a> {
    /// `NodeName` (none when rejected).
    pub name: Option<&'a NodeName>,
    /// `new_node`.
    pub new_node: bool,
    /// Key of its shape in [`super::cache::Cache::shapes`] (empty when rejected).
    pub shape: &'a str,
    /// Why the record was left out.
    pub rejected: Option<&'a str>,
    /// FNV-1a of the raw `node` value.
    pub digest: &'a str,
    /// The unit owns the `NodeName` it publishes.
    pub owner: bool,
    /// Read from a stored entry: written back as one without checking its fields again.
    stored: bool,
}

impl UnitRecord<'_> {
    /// The record as an owned [`CachedNode`].
    pub fn to_node(&self) -> CachedNode {
        CachedNode {
            name: self.name.cloned(),
            new_node: self.new_node,
            shape: self.shape.to_owned(),
            rejected: self.rejected.map(str::to_owned),
            digest: self.digest.to_owned(),
            owner: self.owner,
        }
    }
}

impl CachedNode {
    /// The record as [`Units`] hands it out.
    pub fn record(&self) -> UnitRecord<'_> {
        UnitRecord {
            name: self.name.as_ref(),
            new_node: self.new_node,
            shape: &self.shape,
            rejected: self.rejected.as_deref(),
            digest: &self.digest,
            owner: self.owner,
            stored: false,
        }
    }
}

impl Units {
    fn field(&self, r: &Range<u32>) -> &str {
        let range = r.start as usize..r.end as usize;
        self.text.get(range).unwrap_or_default()
    }

    fn read_record<'a>(&'a self, e: &'a ReadEntry) -> UnitRecord<'a> {
        UnitRecord {
            name: Some(&e.name),
            new_node: e.new_node,
            shape: self.field(&e.shape),
            rejected: None,
            digest: self.field(&e.digest),
            owner: e.owner,
            stored: true,
        }
    }

    fn find_read(&self, unit: &str) -> Option<usize> {
        self.read
            .binary_search_by(|e| self.field(&e.unit).cmp(unit))
            .ok()
    }

    /// The record of `unit`, if it has one.
    pub fn get(&self, unit: &str) -> Option<UnitRecord<'_>> {
        if let Some(edit) = self.edits.get(unit) {
            return edit.as_ref().map(CachedNode::record);
        }
        let i = self.find_read(unit)?;
        self.read.get(i).map(|e| self.read_record(e))
    }

    /// Whether `unit` has a record.
    pub fn contains_key(&self, unit: &str) -> bool {
        self.get(unit).is_some()
    }

    /// Sets (adds or replaces) the record of `unit`.
    pub fn insert(&mut self, unit: String, node: CachedNode) {
        self.edits.insert(unit, Some(node));
    }

    /// Removes the record of `unit` (nothing when it has none).
    pub fn remove(&mut self, unit: &str) {
        if self.find_read(unit).is_some() {
            self.edits.insert(unit.to_owned(), None);
        } else {
            self.edits.remove(unit);
        }
    }

    /// Sets whether `unit` owns the name it publishes ([`CachedNode::owner`]).
    pub fn set_owner(&mut self, unit: &str, owner: bool) {
        if let Some(edit) = self.edits.get_mut(unit) {
            if let Some(node) = edit {
                node.owner = owner;
            }
            return;
        }
        if let Some(i) = self.find_read(unit)
            && let Some(e) = self.read.get_mut(i)
        {
            e.owner = owner;
        }
    }

    /// Every unit with its record, in unit-name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, UnitRecord<'_>)> + '_ {
        let mut read = self.read.iter().peekable();
        let mut edits = self.edits.iter().peekable();
        std::iter::from_fn(move || {
            loop {
                let next_read = read.peek().map(|e| self.field(&e.unit));
                let next_edit = edits.peek().map(|(unit, _)| unit.as_str());
                let take_edit = match (next_read, next_edit) {
                    (None, None) => return None,
                    (Some(r), Some(e)) => {
                        if e == r {
                            // the edit replaces (or removes) the stored entry
                            read.next();
                        }
                        e <= r
                    }
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                };
                if take_edit {
                    let (unit, edit) = edits.next()?;
                    if let Some(node) = edit {
                        return Some((unit.as_str(), node.record()));
                    }
                } else {
                    let e = read.next()?;
                    return Some((self.field(&e.unit), self.read_record(e)));
                }
            }
        })
    }

    /// The unit names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(unit, _)| unit)
    }

    /// The number of units (counts them: O(units)).
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether no unit has a record.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

impl FromIterator<(String, CachedNode)> for Units {
    fn from_iter<I: IntoIterator<Item = (String, CachedNode)>>(iter: I) -> Self {
        Units {
            edits: iter.into_iter().map(|(u, n)| (u, Some(n))).collect(),
            ..Units::default()
        }
    }
}

/// Two tables are equal when they hold the same units with the same records, however each
/// was made (read from a file, or edited).
impl PartialEq for Units {
    fn eq(&self, other: &Self) -> bool {
        self.iter()
            .map(|(u, r)| (u, r.to_node()))
            .eq(other.iter().map(|(u, r)| (u, r.to_node())))
    }
}

impl Eq for Units {}

impl std::fmt::Debug for Units {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The stored form.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    /// Accepted units, an entry each.
    #[serde(default, borrow)]
    entries: Cow<'a, str>,
    /// The other units (rejected ones, with their reason).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    others: BTreeMap<String, CachedNode>,
}

/// Whether a record made in this hook is stored as an entry (accepted, every field free of
/// separators and of anything JSON would escape).
fn as_entry(unit: &str, node: &UnitRecord<'_>) -> bool {
    let safe = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !matches!(b, b',' | b'"' | b'\\'))
    };
    node.stored
        || (node.rejected.is_none()
            && node.name.is_some()
            && safe(unit)
            && safe(node.shape)
            && safe(node.digest))
}

/// `serialize_with` for the units.
pub fn serialize<S: Serializer>(units: &Units, s: S) -> Result<S::Ok, S::Error> {
    let mut entries = String::with_capacity(units.text.len() + 64 * units.edits.len());
    let mut others = BTreeMap::new();
    for (unit, node) in units.iter() {
        match node.name {
            Some(name) if as_entry(unit, &node) => {
                if !entries.is_empty() {
                    entries.push(',');
                }
                let new = FLAGS[usize::from(node.new_node) | usize::from(node.owner) << 1];
                for part in [
                    unit,
                    " ",
                    name.as_str(),
                    " ",
                    new,
                    " ",
                    node.shape,
                    " ",
                    node.digest,
                ] {
                    entries.push_str(part);
                }
            }
            _ => {
                others.insert(unit.to_owned(), node.to_node());
            }
        }
    }
    Stored {
        entries: Cow::Owned(entries),
        others,
    }
    .serialize(s)
}

/// The byte ranges of an entry's five space-separated fields (`None` for more or fewer, or an
/// empty one).
fn fields(text: &[u8], entry: Range<usize>) -> Option<[Range<u32>; 5]> {
    let mut out: [Range<u32>; 5] = Default::default();
    let mut found = 0;
    let mut start = entry.start;
    let bytes = text.get(entry.clone())?;
    let ends = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b' ')
        .map(|(i, _)| entry.start + i)
        .chain([entry.end]);
    for end in ends {
        if end == start {
            return None;
        }
        *out.get_mut(found)? = u32::try_from(start).ok()?..u32::try_from(end).ok()?;
        found += 1;
        start = end + 1;
    }
    (found == 5).then_some(out)
}

/// `deserialize_with` for the units.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Units, D::Error> {
    let stored = Stored::deserialize(d)?;
    let text = stored.entries.into_owned();
    let mut units = Units {
        read: Vec::with_capacity(memchr::memchr_iter(b',', text.as_bytes()).count() + 1),
        ..Units::default()
    };
    let bytes = text.as_bytes();
    let mut start = 0;
    for end in memchr::memchr_iter(b',', bytes).chain([bytes.len()]) {
        let entry = start..end;
        start = end + 1;
        if entry.is_empty() {
            continue;
        }
        let shown = || text.get(entry.clone()).unwrap_or_default();
        let bad = |why: &str| D::Error::custom(format!("cached unit entry {:?}: {why}", shown()));
        let Some([unit, name, new, shape, digest]) = fields(bytes, entry.clone()) else {
            return Err(bad("not five non-empty space-separated fields"));
        };
        let field = |r: &Range<u32>| {
            text.get(r.start as usize..r.end as usize)
                .unwrap_or_default()
        };
        let name = NodeName::try_from(field(&name)).map_err(|e| bad(&e.to_string()))?;
        let Some(flags) = FLAGS.iter().position(|f| *f == field(&new)) else {
            return Err(bad("flags are not 0, 1, 2 or 3"));
        };
        if let Some(last) = units.read.last()
            && field(&last.unit) >= field(&unit)
        {
            return Err(bad("units are not in order (or one is cached twice)"));
        }
        units.read.push(ReadEntry {
            unit,
            shape,
            digest,
            name,
            new_node: flags & 1 != 0,
            owner: flags & 2 != 0,
        });
    }
    units.text = text;
    for (unit, node) in stored.others {
        if units.find_read(&unit).is_some() {
            return Err(D::Error::custom(format!("unit {unit} is cached twice")));
        }
        units.edits.insert(unit, Some(node));
    }
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charms::slurmctld::cache::Cache;

    fn accepted(name: &str, new_node: bool) -> CachedNode {
        CachedNode {
            name: Some(NodeName::try_from(name).unwrap()),
            new_node,
            shape: "0123456789abcdef-1".into(),
            rejected: None,
            digest: "fedcba9876543210".into(),
            owner: false,
        }
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder(#[serde(with = "super")] Units);

    #[test]
    fn entries_and_others_read_back() {
        let mut units = Units::default();
        units.insert("gpu/0".into(), accepted("gpu-0", true));
        units.insert("gpu/1".into(), accepted("gpu_node.1", false));
        let mut owned = accepted("gpu-9", true);
        owned.owner = true;
        units.insert("gpu/9".into(), owned);
        units.insert(
            "gpu/2".into(),
            CachedNode {
                rejected: Some("NodeName \"a b,\\\"c\": not a node name\n\t".into()),
                digest: "00".into(),
                ..CachedNode::default()
            },
        );
        // a field an entry cannot hold goes with the others
        let mut odd = accepted("gpu-3", false);
        odd.shape = "a,b".into();
        units.insert("gpu/3".into(), odd);
        let json = serde_json::to_string(&Holder(units.clone())).unwrap();
        assert!(
            json.contains(
                r#""entries":"gpu/0 gpu-0 1 0123456789abcdef-1 fedcba9876543210,gpu/1 gpu_node.1 0"#
            ),
            "{json}"
        );
        let back: Holder = serde_json::from_str(&json).unwrap();
        assert_eq!(back.0, units);
    }

    /// A table read from a file, then edited as a hook does: every view of it (lookup, the
    /// merged iteration, the length, what is written and read back) agrees with a plain map
    /// given the same edits.
    #[test]
    fn edits_merge_with_the_entries_read() {
        let mut model: BTreeMap<String, CachedNode> = BTreeMap::new();
        for i in [0, 1, 2, 5, 10, 11] {
            model.insert(
                format!("gpu/{i}"),
                accepted(&format!("gpu-{i}"), i % 2 == 0),
            );
        }
        model.insert(
            "gpu/3".into(),
            CachedNode {
                rejected: Some("bad".into()),
                digest: "01".into(),
                ..CachedNode::default()
            },
        );
        let json = serde_json::to_string(&Holder(model.clone().into_iter().collect())).unwrap();
        let mut units = serde_json::from_str::<Holder>(&json).unwrap().0;
        assert!(!units.read.is_empty(), "entries are read as entries");
        // replace a stored entry, add a unit before, between and after them, remove one
        // stored and one added, change an owner flag of each kind
        let mut changed = accepted("gpu-1b", false);
        changed.digest = "99".into();
        for (unit, node) in [
            ("gpu/1", changed),
            ("gpu/00", accepted("gpu-00", false)),
            ("gpu/4", accepted("gpu-4", true)),
            ("gpu/9", accepted("gpu-9", false)),
            ("gpu/7", accepted("gpu-7", false)),
        ] {
            units.insert(unit.into(), node.clone());
            model.insert(unit.into(), node);
        }
        for unit in ["gpu/10", "gpu/7", "gpu/404"] {
            units.remove(unit);
            model.remove(unit);
        }
        for (unit, owner) in [("gpu/2", true), ("gpu/4", true), ("gpu/3", true)] {
            units.set_owner(unit, owner);
            if let Some(n) = model.get_mut(unit) {
                n.owner = owner;
            }
        }
        let seen: Vec<(String, CachedNode)> = units
            .iter()
            .map(|(u, n)| (u.to_owned(), n.to_node()))
            .collect();
        let expected: Vec<(String, CachedNode)> = model.clone().into_iter().collect();
        assert_eq!(seen, expected);
        assert_eq!(units.len(), model.len());
        for unit in [
            "gpu/0", "gpu/1", "gpu/3", "gpu/10", "gpu/7", "gpu/9", "gpu/99",
        ] {
            assert_eq!(
                units.get(unit).map(|r| r.to_node()),
                model.get(unit).cloned(),
                "{unit}"
            );
        }
        let json = serde_json::to_string(&Holder(units.clone())).unwrap();
        let back = serde_json::from_str::<Holder>(&json).unwrap().0;
        assert_eq!(back, units);
        assert_eq!(back, model.into_iter().collect::<Units>());
        // a unit stored both as an entry and among the others is refused
        let twice = r#"{"entries":"gpu/0 gpu-0 0 aa bb","others":{"gpu/0":{"r":"x"}}}"#;
        let err = serde_json::from_str::<Holder>(twice)
            .unwrap_err()
            .to_string();
        assert!(err.contains("twice"), "{err}");
    }

    #[test]
    fn a_bad_entry_makes_the_table_unreadable() {
        for entries in [
            "gpu/0 gpu-0 1 aa",
            "gpu/0 gpu-0 4 aa bb",
            "gpu/0 bad#name 0 aa bb",
            "gpu/0 gpu-0 0 aa bb,gpu/0 gpu-1 0 aa bb",
            "gpu/1 gpu-1 0 aa bb,gpu/0 gpu-0 0 aa bb",
            "gpu/0  gpu-0 0 aa bb",
        ] {
            let json = format!(r#"{{"entries":"{entries}"}}"#);
            let err = serde_json::from_str::<Holder>(&json)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("cached unit") || err.contains("twice"),
                "{err}"
            );
        }
        // a cache file holding one (with a matching hash) is unreadable: the hook rebuilds it
        let mut c = Cache::default();
        let mut rel = crate::charms::slurmctld::cache::CachedRelation::default();
        rel.units.insert("gpu/0".into(), accepted("gpu-0", false));
        c.relations.insert("slurmd:1".into(), rel);
        let raw = String::from_utf8(c.to_bytes()).unwrap();
        let (head, body) = raw.split_once('\n').unwrap();
        let body = body.replace("gpu/0 gpu-0 0", "gpu/0 gpu#0 0");
        let old_hash = crate::charms::slurmctld::cache::content_hash(
            raw.split_once('\n').unwrap().1.as_bytes(),
        );
        let new_hash = crate::charms::slurmctld::cache::content_hash(body.as_bytes());
        let tampered = format!("{}\n{body}", head.replace(&old_hash, &new_hash));
        let err = Cache::from_bytes(tampered.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unreadable body") && err.contains("gpu#0"),
            "{err}"
        );
    }
}
