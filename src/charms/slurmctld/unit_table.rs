//! How the relation cache holds one relation's units ([`super::cache::CachedRelation::units`]).
//!
//! **Stored** as one string of comma-separated entries for the units whose record was
//! accepted, each `unit NodeName flags shape-key digest` separated by single spaces (flags, a
//! digit: `new_node` plus 2 × owner), in unit-name order; the rest (rejected units, whose reason
//! is free text, or any field that could not be written so) as a JSON map. The fields are
//! space- and comma-free: Juju unit names, [`NodeName`]s (checked again when read: the cache
//! file is a boundary), hex keys. An entry that does not read back exactly as it is written
//! (five non-empty fields, single separators, no empty entry, a valid name, flags 0 to 3, units
//! in strictly increasing order) makes the cache unreadable, and the hook rebuilds it from
//! relation data.
//!
//! **Reading** is one pass over the separators of the whole string (`memchr2` for spaces and
//! commas), keeping each entry's fields as offsets into the text and its name checked once.
//!
//! **In memory** ([`Units`]) the entries read are never changed; the units a hook adds,
//! changes or removes are kept beside them as edits ([`Units::insert`], [`Units::remove`],
//! [`Units::set_owner`]) and merged in order when the table is read ([`Units::iter`]) or
//! written, each edit placed among the entries by a binary search. The quick index rewrites
//! only the buckets of the changed units ([`Units::changed_since_read`]).
//!
//! **Writing** copies the entries between two edits as one slice of the text read (they read
//! back only as written, so the slice is what writing them field by field would give) and
//! writes the edits field by field. The string is then handed to serde_json as raw JSON
//! (checked once, not escaped byte by byte) when nothing in it needs escaping. At 10,000 units
//! a map of owned records made four allocations per unit on every controller hook; now a hook
//! allocates the one name per unit, and writing the table costs a copy of its text.

use super::cache::CachedNode;
use crate::slurm::types::NodeName;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
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
    /// The entries of `text`, in strictly increasing unit order. Never changed once read (a
    /// change is an edit), so the entries between two edits are written back as one slice of
    /// `text`.
    read: Vec<ReadEntry>,
    /// By unit: the stored units that are not entries (rejected ones), and the units added,
    /// changed or removed since the table was read.
    edits: BTreeMap<String, Edit>,
    /// Read from a cache file: the units that differ from it are then exactly those
    /// [`Units::changed_since_read`] names.
    from_file: bool,
}

/// A unit of [`Units::edits`].
#[derive(Debug, Clone)]
enum Edit {
    /// A stored unit that is not an entry (a rejected one), as read: not a change.
    Stored(CachedNode),
    /// Added or changed since the table was read.
    Set(CachedNode),
    /// Removed since the table was read (or never stored: then harmless).
    Removed,
}

impl Edit {
    fn node(&self) -> Option<&CachedNode> {
        match self {
            Edit::Stored(node) | Edit::Set(node) => Some(node),
            Edit::Removed => None,
        }
    }
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

/// A piece of a table in unit order ([`Units::segments`]).
enum Segment<'a> {
    /// Consecutive stored entries that no edit replaces.
    Run(&'a [ReadEntry]),
    /// An edit (it replaces or removes the stored entry of its unit, if there is one).
    Edit(&'a str, &'a Edit),
}

/// [`Units::segments`]. Each edit costs a binary search for where it falls among the stored
/// entries, so a hook's few edits cut the entries into a few runs.
struct Segments<'a> {
    units: &'a Units,
    edits: std::collections::btree_map::Iter<'a, String, Edit>,
    /// The first stored entry not handed out yet.
    next: usize,
    /// An edit to hand out after the run before it.
    pending: Option<Segment<'a>>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;

    fn next(&mut self) -> Option<Segment<'a>> {
        if let Some(edit) = self.pending.take() {
            return Some(edit);
        }
        let (units, read) = (self.units, &self.units.read);
        let rest = read.get(self.next..).unwrap_or_default();
        let Some((unit, edit)) = self.edits.next() else {
            self.next = read.len();
            return (!rest.is_empty()).then_some(Segment::Run(rest));
        };
        let before = rest.partition_point(|e| units.field(&e.unit) < unit.as_str());
        let run = rest.get(..before).unwrap_or_default();
        self.next += before;
        if rest
            .get(before)
            .is_some_and(|e| units.field(&e.unit) == unit.as_str())
        {
            // the edit replaces (or removes) this stored entry
            self.next += 1;
        }
        let edit = Segment::Edit(unit.as_str(), edit);
        if run.is_empty() {
            Some(edit)
        } else {
            self.pending = Some(edit);
            Some(Segment::Run(run))
        }
    }
}

/// [`Units::iter`]: the entries of each run, and the edits that hold a record.
struct Iter<'a> {
    segments: Segments<'a>,
    run: std::slice::Iter<'a, ReadEntry>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, UnitRecord<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(e) = self.run.next() {
                let units = self.segments.units;
                return Some((units.field(&e.unit), units.read_record(e)));
            }
            match self.segments.next()? {
                Segment::Run(run) => self.run = run.iter(),
                Segment::Edit(unit, edit) => {
                    if let Some(node) = edit.node() {
                        return Some((unit, node.record()));
                    }
                }
            }
        }
    }
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
            return edit.node().map(CachedNode::record);
        }
        let i = self.find_read(unit)?;
        self.read.get(i).map(|e| self.read_record(e))
    }

    /// The record of `unit` as the cache file held it (edits since not seen); `None` when it
    /// was not one of the file's entries (added since, or stored as rejected).
    pub fn as_read(&self, unit: &str) -> Option<UnitRecord<'_>> {
        let i = self.find_read(unit)?;
        self.read.get(i).map(|e| self.read_record(e))
    }

    /// Whether `unit` has a record.
    pub fn contains_key(&self, unit: &str) -> bool {
        self.get(unit).is_some()
    }

    /// Sets (adds or replaces) the record of `unit`.
    pub fn insert(&mut self, unit: String, node: CachedNode) {
        self.edits.insert(unit, Edit::Set(node));
    }

    /// Removes the record of `unit` (nothing when it has none).
    pub fn remove(&mut self, unit: &str) {
        // kept as a removal even when the unit was added in this hook: whether a stored unit
        // lay under that edit is not known any more
        if let Some(edit) = self.edits.get_mut(unit) {
            *edit = Edit::Removed;
        } else if self.find_read(unit).is_some() {
            self.edits.insert(unit.to_owned(), Edit::Removed);
        }
    }

    /// Sets whether `unit` owns the name it publishes ([`CachedNode::owner`]).
    pub fn set_owner(&mut self, unit: &str, owner: bool) {
        if let Some(edit) = self.edits.get_mut(unit) {
            match edit {
                Edit::Set(node) => node.owner = owner,
                Edit::Stored(node) if node.owner != owner => {
                    let node = CachedNode {
                        owner,
                        ..node.clone()
                    };
                    *edit = Edit::Set(node);
                }
                Edit::Stored(_) | Edit::Removed => {}
            }
            return;
        }
        // a stored entry is not changed in place (runs of them are written back as read): the
        // changed record is an edit
        let changed = self
            .find_read(unit)
            .and_then(|i| self.read.get(i))
            .filter(|e| e.owner != owner)
            .map(|e| CachedNode {
                owner,
                ..self.read_record(e).to_node()
            });
        if let Some(node) = changed {
            self.edits.insert(unit.to_owned(), Edit::Set(node));
        }
    }

    /// The units added, changed or removed since the table was read from the cache file, in
    /// unit order (a unit may be named that in the end is as it was); `None` when the table
    /// was not read from a file. What the quick index ([`super::index::plan_index`]) rewrites:
    /// every other unit is as the file, and so the index, holds it.
    pub fn changed_since_read(&self) -> Option<impl Iterator<Item = &str> + '_> {
        self.from_file.then(|| {
            self.edits
                .iter()
                .filter(|(_, edit)| !matches!(edit, Edit::Stored(_)))
                .map(|(unit, _)| unit.as_str())
        })
    }

    /// The shapes the units changed since the table was read had in the file (each unit's
    /// stored entry, where it had one); `None` when the table was not read from a file. Only
    /// these shapes can have lost their last unit since the file was written.
    pub fn shapes_left_since_read(&self) -> Option<impl Iterator<Item = &str> + '_> {
        let changed = self.changed_since_read()?;
        Some(changed.filter_map(|unit| {
            let i = self.find_read(unit)?;
            self.read.get(i).map(|e| self.field(&e.shape))
        }))
    }

    /// The table in unit order: the runs of stored entries between edits, and the edits.
    fn segments(&self) -> Segments<'_> {
        Segments {
            units: self,
            edits: self.edits.iter(),
            next: 0,
            pending: None,
        }
    }

    /// Every unit with its record, in unit-name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, UnitRecord<'_>)> + '_ {
        Iter {
            segments: self.segments(),
            run: [].iter(),
        }
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
            edits: iter.into_iter().map(|(u, n)| (u, Edit::Set(n))).collect(),
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

/// The stored form, as read.
#[derive(Deserialize)]
struct Stored<'a> {
    /// Accepted units, an entry each.
    #[serde(default, borrow)]
    entries: Cow<'a, str>,
    /// The other units (rejected ones, with their reason).
    #[serde(default)]
    others: BTreeMap<String, CachedNode>,
}

/// The stored form, as written ([`Stored`]'s layout).
#[derive(Serialize)]
struct StoredOut<'a> {
    entries: Entries,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    others: BTreeMap<&'a str, CachedNode>,
}

/// The entries as written: the same JSON string either way.
#[derive(Serialize)]
#[serde(untagged)]
enum Entries {
    /// Already a JSON string (see [`entries_json`]).
    Raw(Box<RawValue>),
    /// Text to escape.
    Text(String),
}

/// The entries as the JSON string that escaping them would write, when nothing in them needs
/// escaping (no `"`, `\` or control character: never in what this charm writes, only in a
/// file edited by hand). serde_json escapes a string byte by byte; the entries are most of the
/// cache file (0.6 MB at 10,000 units), and checking them as JSON costs a third of that.
/// Only for serde_json (the one serializer of the cache, which already keeps shapes as raw
/// JSON: [`super::cache::ShapeJson`]).
fn entries_json(entries: String) -> Entries {
    if memchr::memchr2(b'"', b'\\', entries.as_bytes()).is_some() {
        return Entries::Text(entries);
    }
    let mut json = String::with_capacity(entries.len() + 2);
    json.push('"');
    json.push_str(&entries);
    json.push('"');
    // refused when a control character is in it (JSON has none unescaped in a string)
    match RawValue::from_string(json) {
        Ok(raw) => Entries::Raw(raw),
        Err(_) => Entries::Text(entries),
    }
}

/// Whether a record made in this hook is stored as an entry (accepted, every field free of
/// separators and of anything JSON would escape).
fn as_entry(unit: &str, node: &UnitRecord<'_>) -> bool {
    let safe = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !matches!(b, b',' | b'"' | b'\\'))
    };
    node.rejected.is_none()
        && node.name.is_some()
        && safe(unit)
        && safe(node.shape)
        && safe(node.digest)
}

/// `serialize_with` for the units.
pub fn serialize<S: Serializer>(units: &Units, s: S) -> Result<S::Ok, S::Error> {
    let mut entries = String::with_capacity(units.text.len() + 64 * units.edits.len());
    let mut others = BTreeMap::new();
    for segment in units.segments() {
        match segment {
            Segment::Run(run) => {
                // entries read back only when written as this charm writes them (see
                // `read_entries`): a run of them is its slice of the text, byte for byte
                let (Some(first), Some(last)) = (run.first(), run.last()) else {
                    continue;
                };
                if !entries.is_empty() {
                    entries.push(',');
                }
                let slice = first.unit.start as usize..last.digest.end as usize;
                entries.push_str(units.text.get(slice).unwrap_or_default());
            }
            Segment::Edit(unit, edit) => {
                let Some(node) = edit.node() else {
                    continue;
                };
                let record = node.record();
                match record.name {
                    Some(name) if as_entry(unit, &record) => {
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
                            &node.shape,
                            " ",
                            &node.digest,
                        ] {
                            entries.push_str(part);
                        }
                    }
                    _ => {
                        others.insert(unit, node.clone());
                    }
                }
            }
        }
    }
    StoredOut {
        entries: entries_json(entries),
        others,
    }
    .serialize(s)
}

/// Why the cached unit entries do not read back; the cache is then rebuilt from Juju.
#[derive(Debug, thiserror::Error)]
enum EntriesError {
    /// More text than the entry offsets can address.
    #[error("cached unit entries of {0} bytes are more than this charm writes")]
    TooLarge(usize),
    /// One entry is not as [`serialize`] writes it.
    #[error("cached unit entry {entry:?}: {why}")]
    BadEntry {
        /// The entry, as stored.
        entry: String,
        /// What is wrong with it.
        why: String,
    },
}

/// Why an entry does not read back, with the entry it is about.
fn bad_entry(text: &str, entry: usize, why: &str) -> EntriesError {
    let rest = text.get(entry..).unwrap_or_default();
    let shown = rest.split(',').next().unwrap_or_default();
    EntriesError::BadEntry {
        entry: shown.to_string(),
        why: why.to_string(),
    }
}

/// Splits and checks the entries of `text` in one pass over its separators (spaces and
/// commas, found with `memchr2`): each entry five non-empty fields separated by single spaces,
/// entries separated by single commas, a valid name, flags 0 to 3, units in strictly
/// increasing order. So an entry read is exactly as [`serialize`] writes it, and a run of
/// them is written back as its slice of `text`.
fn read_entries(text: &str) -> Result<Vec<ReadEntry>, EntriesError> {
    let bytes = text.as_bytes();
    let mut read: Vec<ReadEntry> = Vec::new();
    if bytes.is_empty() {
        return Ok(read);
    }
    let Ok(len) = u32::try_from(bytes.len()) else {
        return Err(EntriesError::TooLarge(bytes.len()));
    };
    read.reserve(memchr::memchr_iter(b',', bytes).count() + 1);
    let field = |r: &Range<u32>| {
        text.get(r.start as usize..r.end as usize)
            .unwrap_or_default()
    };
    let mut fields: [Range<u32>; 5] = Default::default();
    let mut found = 0;
    // where the entry and the field being read start
    let (mut entry, mut start) = (0, 0);
    // every position is below `len`, a u32
    let ends = memchr::memchr2_iter(b' ', b',', bytes).map(|i| i as u32);
    for end in ends.chain([len]) {
        let bad = |why: &str| bad_entry(text, entry as usize, why);
        let Some(slot) = fields.get_mut(found).filter(|_| end > start) else {
            return Err(bad("not five non-empty space-separated fields"));
        };
        *slot = start..end;
        found += 1;
        start = end + 1;
        if bytes.get(end as usize) == Some(&b' ') {
            continue;
        }
        // a comma or the end: the entry is complete
        if found != 5 {
            return Err(bad("not five non-empty space-separated fields"));
        }
        found = 0;
        let [unit, name, flags, shape, digest] = fields.clone();
        let name = NodeName::try_from(field(&name)).map_err(|e| bad(&e.to_string()))?;
        let flags = match field(&flags).as_bytes() {
            [f @ b'0'..=b'3'] => f - b'0',
            _ => return Err(bad("flags are not 0, 1, 2 or 3")),
        };
        if let Some(last) = read.last()
            && field(&last.unit) >= field(&unit)
        {
            return Err(bad("units are not in order (or one is cached twice)"));
        }
        read.push(ReadEntry {
            unit,
            shape,
            digest,
            name,
            new_node: flags & 1 != 0,
            owner: flags & 2 != 0,
        });
        entry = start;
    }
    Ok(read)
}

/// `deserialize_with` for the units.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Units, D::Error> {
    let stored = Stored::deserialize(d)?;
    let text = stored.entries.into_owned();
    let read = read_entries(&text).map_err(D::Error::custom)?;
    let mut units = Units {
        text,
        read,
        edits: BTreeMap::new(),
        from_file: true,
    };
    for (unit, node) in stored.others {
        if units.find_read(&unit).is_some() {
            return Err(D::Error::custom(format!("unit {unit} is cached twice")));
        }
        units.edits.insert(unit, Edit::Stored(node));
    }
    Ok(units)
}

#[cfg(test)]
pub(crate) mod tests {
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
            "gpu/0 gpu-0 0 aa bb ",
            "gpu/0 gpu-0 0 aa bb cc",
            "gpu/0 gpu-0 00 aa bb",
            // no empty entry: an entry reads back only as it is written
            "gpu/0 gpu-0 0 aa bb,",
            ",gpu/0 gpu-0 0 aa bb",
            "gpu/0 gpu-0 0 aa bb,,gpu/1 gpu-1 0 aa bb",
            ",",
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

    /// A small deterministic generator for the randomized tests (xorshift64).
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// What a table was written as before runs of entries were copied: every unit field by
    /// field, a stored entry always as an entry.
    fn field_by_field(units: &Units) -> String {
        #[derive(Serialize)]
        struct Old {
            entries: String,
            #[serde(skip_serializing_if = "BTreeMap::is_empty")]
            others: BTreeMap<String, CachedNode>,
        }
        let mut old = Old {
            entries: String::new(),
            others: BTreeMap::new(),
        };
        for (unit, node) in units.iter() {
            let stored = !units.edits.contains_key(unit) && units.find_read(unit).is_some();
            match node.name {
                Some(name) if stored || as_entry(unit, &node) => {
                    if !old.entries.is_empty() {
                        old.entries.push(',');
                    }
                    let new = FLAGS[usize::from(node.new_node) | usize::from(node.owner) << 1];
                    let fields = [unit, name.as_str(), new, node.shape, node.digest];
                    old.entries.push_str(&fields.join(" "));
                }
                _ => {
                    old.others.insert(unit.to_owned(), node.to_node());
                }
            }
        }
        serde_json::to_string(&old).unwrap()
    }

    /// A random record: accepted (sometimes with a field an entry cannot hold), or rejected.
    fn random_node(rng: &mut Rng) -> CachedNode {
        let i = rng.below(1000);
        let mut node = accepted(&format!("n-{i}"), rng.below(2) == 0);
        node.owner = rng.below(2) == 0;
        node.digest = format!("{:016x}", rng.below(u64::MAX));
        match rng.below(8) {
            0 => CachedNode {
                rejected: Some(format!("bad \"{i}\"\n")),
                ..CachedNode::default()
            },
            1 => CachedNode {
                shape: "odd\\shape".into(),
                ..node
            },
            _ => node,
        }
    }

    /// Tables read from a file (with entries that need escaping or not, and stored others),
    /// then edited at random as hooks do: written, each equals what writing them field by
    /// field gave, reads back equal, and names every unit it changed.
    #[test]
    fn runs_of_entries_are_written_as_field_by_field() {
        for seed in 1..=60u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut model: BTreeMap<String, CachedNode> = BTreeMap::new();
            let count = 1 + rng.below(40);
            for k in 0..count {
                model.insert(format!("gpu/{}", k * 3), random_node(&mut rng));
            }
            let mut entries: Vec<String> = Vec::new();
            let mut others = BTreeMap::new();
            for (unit, node) in &model {
                let r = node.record();
                match r.name {
                    Some(name) if r.rejected.is_none() => {
                        let flags = FLAGS[usize::from(r.new_node) | usize::from(r.owner) << 1];
                        entries.push(format!("{unit} {name} {flags} {} {}", r.shape, r.digest));
                    }
                    _ => {
                        others.insert(unit.clone(), node.clone());
                    }
                }
            }
            // some files hold an entry with a control character (escaped in JSON)
            let odd = seed % 5 == 0;
            if odd && let Some(e) = entries.first_mut() {
                e.push('\u{1}');
                if let Some((unit, node)) = model.iter_mut().find(|(_, n)| n.rejected.is_none()) {
                    node.digest.push('\u{1}');
                    assert!(e.starts_with(unit.as_str()));
                }
            }
            let file = serde_json::json!({"entries": entries.join(","), "others": others});
            let mut units = serde_json::from_value::<Holder>(file).unwrap().0;
            assert_eq!(units, model.clone().into_iter().collect::<Units>());
            assert_eq!(units.changed_since_read().unwrap().count(), 0);
            let original = model.clone();
            let mut changed = std::collections::BTreeSet::new();
            for _ in 0..rng.below(12) {
                let unit = format!("gpu/{}", rng.below(count * 3 + 3));
                match rng.below(4) {
                    0 | 1 => {
                        let node = random_node(&mut rng);
                        units.insert(unit.clone(), node.clone());
                        model.insert(unit.clone(), node);
                        changed.insert(unit);
                    }
                    2 => {
                        units.remove(&unit);
                        if model.remove(&unit).is_some() {
                            changed.insert(unit);
                        }
                    }
                    _ => {
                        let owner = rng.below(2) == 0;
                        units.set_owner(&unit, owner);
                        if let Some(n) = model.get_mut(&unit)
                            && n.owner != owner
                        {
                            n.owner = owner;
                            changed.insert(unit);
                        }
                    }
                }
            }
            let json = serde_json::to_string(&Holder(units.clone())).unwrap();
            assert_eq!(json, field_by_field(&units), "seed {seed}");
            assert_eq!(json.contains("\\u0001"), odd, "{json}");
            let back = serde_json::from_str::<Holder>(&json).unwrap().0;
            assert_eq!(back, units);
            assert_eq!(back, model.clone().into_iter().collect::<Units>());
            // every unit changed is named (a unit named may be as it was: added then removed)
            let named: std::collections::BTreeSet<String> = units
                .changed_since_read()
                .unwrap()
                .map(str::to_owned)
                .collect();
            assert!(named.is_superset(&changed), "{named:?} {changed:?}");
            for unit in named.difference(&changed) {
                assert_eq!(model.get(unit), original.get(unit), "{unit}");
            }
        }
    }

    #[test]
    fn changes_since_read_are_known_only_for_a_table_read_from_a_file() {
        let made: Units = [("gpu/0".to_owned(), accepted("gpu-0", false))]
            .into_iter()
            .collect();
        assert!(made.changed_since_read().is_none());
        let json = serde_json::to_string(&Holder(made)).unwrap();
        let mut read = serde_json::from_str::<Holder>(&json).unwrap().0;
        // a rejected unit stored as read is not a change; changing its owner flag is
        read.insert(
            "gpu/1".into(),
            CachedNode {
                rejected: Some("x".into()),
                ..CachedNode::default()
            },
        );
        let json = serde_json::to_string(&Holder(read)).unwrap();
        let mut read = serde_json::from_str::<Holder>(&json).unwrap().0;
        let changed = |u: &Units| {
            u.changed_since_read()
                .unwrap()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(changed(&read), "");
        read.set_owner("gpu/0", false);
        read.set_owner("gpu/1", false);
        assert_eq!(changed(&read), "", "the same flags");
        read.set_owner("gpu/1", true);
        read.set_owner("gpu/0", true);
        read.remove("gpu/9");
        assert_eq!(changed(&read), "gpu/0 gpu/1");
        read.remove("gpu/1");
        read.insert("gpu/2".into(), accepted("gpu-2", false));
        assert_eq!(changed(&read), "gpu/0 gpu/1 gpu/2");
        assert_eq!(read.keys().collect::<Vec<_>>(), ["gpu/0", "gpu/2"]);
        assert!(read.get("gpu/0").unwrap().owner);
    }
}
