//! A node name → value map stored as value → hostlist of the names holding it, for the maps
//! of the applied record ([`super::accepted`]): each node's `Gres=` value and fingerprint. At
//! 10,000 nodes these maps had 10,000 entries each, parsed and written (twice) on every
//! controller hook that reloads slurmctld; nodes of one shape share one value, so the stored
//! form is a line per value (`{"gpu:h100:8":"gpu-[0-9999]"}`). In memory the maps stay keyed by
//! node name, so nothing else changes. A stored hostlist that does not expand, or a name listed
//! under two values, makes the record unreadable, which the controller treats as a lost
//! record (restart if the files differ, every node counted as changed).
//! The module also holds what the controller's other node-name maps share: [`bulk_map`]
//! (read a map of strings in one build) and [`seek`] (walk name-sorted maps side by side).

use crate::slurm::hostlist::{compress, expand};
use serde::de::Error as _;
use serde::{Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Node name → value, as the applied record keeps it in memory.
pub type ByNode = BTreeMap<String, String>;

/// The stored form: value → hostlist of the node names holding it.
pub fn group(map: &ByNode) -> BTreeMap<&str, String> {
    let mut names: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, value) in map {
        names.entry(value.as_str()).or_default().push(name.as_str());
    }
    names
        .into_iter()
        .map(|(value, names)| (value, compress(&names)))
        .collect()
}

/// Back from the stored form; `Err` names the hostlist that does not expand, or says that a
/// name is listed twice.
pub fn ungroup(groups: BTreeMap<String, String>) -> Result<ByNode, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (value, list) in &groups {
        let names = expand(list).map_err(|e| format!("hostlist `{list}`: {e}"))?;
        pairs.extend(names.into_iter().map(|name| (name, value.clone())));
    }
    // built in bulk (sorted once inside), faster than inserting 10,000 names one by one; a
    // name listed twice ([`group`] lists each once) shows as a shorter map
    let listed = pairs.len();
    let map: ByNode = pairs.into_iter().collect();
    if map.len() != listed {
        return Err("a node is listed twice".to_owned());
    }
    Ok(map)
}

/// `serialize_with` for a [`ByNode`] field.
pub fn serialize<S: Serializer>(map: &ByNode, s: S) -> Result<S::Ok, S::Error> {
    group(map).serialize(s)
}

/// `serialize_with` for a `&ByNode` field (a borrowed record).
pub fn serialize_ref<S: Serializer>(map: &&ByNode, s: S) -> Result<S::Ok, S::Error> {
    serialize(map, s)
}

/// `deserialize_with` for a [`ByNode`] field.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ByNode, D::Error> {
    ungroup(bulk_map(d)?).map_err(D::Error::custom)
}

/// Reads a JSON object of strings into a map built in one go: the entries are collected, then
/// the map is built from them (sorted input, as written, is linear), instead of inserted one by
/// one: at 10,000 node names that insertion was a tenth of reading the relation cache.
pub fn bulk_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(entry) = map.next_entry()? {
                out.push(entry);
            }
            Ok(out)
        }
    }
    Ok(d.deserialize_map(Entries)?.into_iter().collect())
}

/// `with` module for a set of node names stored as one hostlist (`"gpu-[0-9999]"`): the
/// applied record's `DownNodes`, every node while a batch is new, was an array of 10,000
/// strings. An array (records written before) is still read.
pub mod hostlist_set {
    use crate::slurm::hostlist::{compress, expand};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeSet;

    /// Either stored form.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        List(String),
        Names(BTreeSet<String>),
    }

    /// `serialize_with`: the names as one hostlist.
    pub fn serialize<S: Serializer>(names: &BTreeSet<String>, s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&String> = names.iter().collect();
        s.serialize_str(&compress(&names))
    }

    /// `deserialize_with`: a hostlist (or an array of names); one that does not expand, or
    /// names a node twice, is refused.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeSet<String>, D::Error> {
        match Stored::deserialize(d)? {
            Stored::Names(names) => Ok(names),
            Stored::List(list) => {
                let names = expand(&list)
                    .map_err(|e| D::Error::custom(format!("hostlist `{list}`: {e}")))?;
                let count = names.len();
                let set: BTreeSet<String> = names.into_iter().collect();
                if set.len() != count {
                    return Err(D::Error::custom(format!(
                        "hostlist `{list}` names a node twice"
                    )));
                }
                Ok(set)
            }
        }
    }
}

/// Advances an iterator over a name-sorted map to `name` and returns its value there, if it
/// holds `name`: walking two or three such maps side by side costs one comparison per step
/// instead of a lookup per name (which nodes changed between two applied states).
pub fn seek<'a>(
    it: &mut std::iter::Peekable<std::collections::btree_map::Iter<'a, String, String>>,
    name: &str,
) -> Option<&'a String> {
    while let Some((k, _)) = it.peek() {
        match k.as_str().cmp(name) {
            std::cmp::Ordering::Less => {
                it.next();
            }
            std::cmp::Ordering::Equal => return it.next().map(|(_, v)| v),
            std::cmp::Ordering::Greater => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_of_one_value_share_a_line_and_come_back() {
        let mut map = ByNode::new();
        for i in 0..1000 {
            map.insert(format!("gpu-{i}"), "gpu:h100:8".to_owned());
        }
        map.insert("cpu-a".into(), String::new());
        map.insert("gpu-07".into(), "gpu:t4:1".into());
        let stored = group(&map);
        assert_eq!(stored["gpu:h100:8"], "gpu-[0-999]");
        assert_eq!(stored[""], "cpu-a");
        assert_eq!(stored["gpu:t4:1"], "gpu-07");
        let owned = stored.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        assert_eq!(ungroup(owned).unwrap(), map);
    }

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Down(#[serde(with = "hostlist_set")] std::collections::BTreeSet<String>);

    #[test]
    fn a_name_set_is_one_hostlist_and_an_array_still_reads() {
        let set: std::collections::BTreeSet<String> =
            (0..1000).map(|i| format!("gpu-{i}")).collect();
        let json = serde_json::to_string(&Down(set.clone())).unwrap();
        assert_eq!(json, r#""gpu-[0-999]""#);
        assert_eq!(serde_json::from_str::<Down>(&json).unwrap().0, set);
        let old: Down = serde_json::from_str(r#"["gpu-1","gpu-0"]"#).unwrap();
        assert_eq!(old.0.len(), 2);
        assert_eq!(serde_json::from_str::<Down>(r#""""#).unwrap().0.len(), 0);
        for bad in [r#""gpu-[3-1""#, r#""gpu-[0-1],gpu-1""#] {
            assert!(serde_json::from_str::<Down>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_stored_form_is_refused() {
        let bad = BTreeMap::from([("x".to_owned(), "gpu-[3-1".to_owned())]);
        assert!(ungroup(bad).unwrap_err().contains("gpu-[3-1"));
        let twice = BTreeMap::from([
            ("x".to_owned(), "gpu-1".to_owned()),
            ("y".to_owned(), "gpu-[0-2]".to_owned()),
        ]);
        assert!(ungroup(twice).unwrap_err().contains("listed twice"));
    }
}
