//! How the relation cache stores one relation's units ([`super::cache::CachedRelation::units`]):
//! the units whose record was accepted as one string of comma-separated entries, each
//! `unit NodeName flags shape-key digest` separated by spaces (flags: `new_node` + 2 × owner,
//! a digit); the rest (rejected units,
//! whose reason is free text, or any field that could not be written so) as a JSON map. At
//! 10,000 units a JSON object per unit cost most of the cache's parse and write on every
//! controller hook; an entry costs a split, and the string needs no JSON escaping, so it is read
//! in place. The fields are space- and comma-free: Juju unit names, [`NodeName`]s (checked
//! again when read: the cache file is a boundary), hex keys. An entry that does not read back
//! makes the cache unreadable, and the hook rebuilds it from relation data.

use super::cache::CachedNode;
use crate::slurm::types::NodeName;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// An entry's flags field: bit 0 `new_node`, bit 1 the unit owns its name
/// ([`CachedNode::owner`]).
const FLAGS: [&str; 4] = ["0", "1", "2", "3"];

/// Unit name → its cached record, as [`super::cache::CachedRelation`] holds it.
pub type Units = BTreeMap<String, CachedNode>;

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

/// Whether a record is stored as an entry (accepted, every field free of separators and of
/// anything JSON would escape).
fn as_entry(unit: &str, node: &CachedNode) -> bool {
    let safe = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_graphic() && !matches!(b, b',' | b'"' | b'\\'))
    };
    node.rejected.is_none()
        && node.name.is_some()
        && safe(unit)
        && safe(&node.shape)
        && safe(&node.digest)
}

/// `serialize_with` for the units map.
pub fn serialize<S: Serializer>(units: &Units, s: S) -> Result<S::Ok, S::Error> {
    let mut entries = String::with_capacity(units.len() * 64);
    let mut others = BTreeMap::new();
    for (unit, node) in units {
        match &node.name {
            Some(name) if as_entry(unit, node) => {
                if !entries.is_empty() {
                    entries.push(',');
                }
                let new = FLAGS[usize::from(node.new_node) | usize::from(node.owner) << 1];
                for part in [
                    unit.as_str(),
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
                others.insert(unit.clone(), node.clone());
            }
        }
    }
    Stored {
        entries: Cow::Owned(entries),
        others,
    }
    .serialize(s)
}

/// The non-empty comma-separated entries of `table`, found with `memchr` (SIMD): with 10,000
/// entries, `str::split`'s pattern search was a third of reading them.
fn entries(table: &str) -> impl Iterator<Item = &str> {
    let ends = memchr::memchr_iter(b',', table.as_bytes()).chain([table.len()]);
    let mut start = 0;
    ends.filter_map(move |end| {
        let entry = table.get(start..end).filter(|e| !e.is_empty());
        start = end + 1;
        entry
    })
}

/// An entry's five space-separated fields (`None` for more or fewer).
fn fields(entry: &str) -> Option<[&str; 5]> {
    let mut out = [""; 5];
    let mut found = 0;
    let mut start = 0;
    for end in memchr::memchr_iter(b' ', entry.as_bytes()).chain([entry.len()]) {
        *out.get_mut(found)? = entry.get(start..end)?;
        found += 1;
        start = end + 1;
    }
    (found == 5).then_some(out)
}

/// `deserialize_with` for the units map.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Units, D::Error> {
    let stored = Stored::deserialize(d)?;
    let mut units: Vec<(String, CachedNode)> = Vec::new();
    for entry in entries(&stored.entries) {
        let bad = |why: &str| D::Error::custom(format!("cached unit entry {entry:?}: {why}"));
        let Some([unit, name, new, shape, digest]) = fields(entry) else {
            return Err(bad("not five space-separated fields"));
        };
        let name = NodeName::try_from(name).map_err(|e| bad(&e.to_string()))?;
        let Some(flags) = FLAGS.iter().position(|f| *f == new) else {
            return Err(bad("flags are not 0, 1, 2 or 3"));
        };
        units.push((
            unit.to_owned(),
            CachedNode {
                name: Some(name),
                new_node: flags & 1 != 0,
                shape: shape.to_owned(),
                rejected: None,
                digest: digest.to_owned(),
                owner: flags & 2 != 0,
            },
        ));
    }
    units.extend(stored.others);
    let count = units.len();
    let map: Units = units.into_iter().collect();
    if map.len() != count {
        return Err(D::Error::custom("a unit is cached twice"));
    }
    Ok(map)
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
        let mut units = Units::new();
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

    #[test]
    fn a_bad_entry_makes_the_table_unreadable() {
        for entries in [
            "gpu/0 gpu-0 1 aa",
            "gpu/0 gpu-0 4 aa bb",
            "gpu/0 bad#name 0 aa bb",
            "gpu/0 gpu-0 0 aa bb,gpu/0 gpu-1 0 aa bb",
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
