//! A node name → value map kept as value → hostlist of the names holding it ([`Grouped`]), for
//! the maps of the applied record ([`super::accepted`]): each node's `Gres=` value and
//! fingerprint. Nodes of one shape share one value, so 10,000 of them are one entry
//! (`{"gpu:h100:8":"gpu-[0-9999]"}`), in the file and in memory alike: reading, comparing and
//! writing the record costs a line per value, and names are made only for the values whose
//! node set changed ([`Grouped::diff`]). Each stored hostlist is checked when read (syntax and
//! size, [`crate::slurm::hostlist::count`]); a name listed under two values shows when those
//! values' names are made, and the comparison then fails: the controller treats the record as
//! lost (restart if the files differ, every node counted as changed).
//! The module also holds what the controller's other node-name maps share: [`bulk_map`]
//! (read a map of strings in one build).

use crate::slurm::check::same_text;
use crate::slurm::hostlist::{NumberedName, count, expand, numbered_names, numbered_to_string};
use crate::slurm::{HostlistError, MemoSession};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::Hash;

/// Why a stored [`Grouped`] map cannot be read or compared: the controller then treats the
/// applied record as lost (restart if the files differ, every node counted as changed) and
/// logs this. Typed so callers can tell the cases apart and the log line is made from it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GroupedError {
    /// A stored hostlist does not expand (a damaged or hand-edited record).
    #[error("stored hostlist `{list}`: {source}")]
    Hostlist {
        /// The stored hostlist.
        list: String,
        /// Why it does not read.
        #[source]
        source: HostlistError,
    },
    /// A node is listed under two values of one map (a damaged or hand-edited record).
    #[error("a node is listed twice")]
    ListedTwice,
}

/// Node name → value, one entry per node (what [`Grouped`] stands for).
pub type ByNode = BTreeMap<String, String>;

/// Node name → value, kept as value → hostlist of the names holding it. Each hostlist is
/// [`compress`](crate::slurm::hostlist::compress)'s form of its names, which depends only on
/// the set of names, so two maps are equal exactly when their entries are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Grouped(BTreeMap<String, String>);

/// How the nodes of two [`Grouped`] maps differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Names only the new map has.
    pub added: BTreeSet<String>,
    /// Names only the old map has.
    pub removed: BTreeSet<String>,
    /// Names both have, with another value.
    pub changed: BTreeSet<String>,
}

impl Grouped {
    /// The map of `(name, value)` pairs (each name once).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self::from_pairs_remembering(pairs, &mut MemoSession::default())
    }

    /// [`Grouped::from_pairs`], reusing the hostlists of earlier hooks that `memo` holds (a
    /// value's names in the same order as then are not compressed again).
    pub fn from_pairs_remembering<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        memo: &mut MemoSession,
    ) -> Self {
        let mut names: FxHashMap<&str, Vec<&str>> = FxHashMap::default();
        // Names of one value mostly come in a run (the nodes of one shape): gathered here and
        // handed to the map once per run, so a node costs a comparison, not a hash.
        let mut run: Option<(&str, Vec<&str>)> = None;
        for (name, value) in pairs {
            match &mut run {
                // nodes of one shape share one value: the same pointer before the bytes
                Some((v, names)) if same_text(v, value) => names.push(name),
                _ => {
                    if let Some((v, done)) = run.replace((value, vec![name])) {
                        hand_over(&mut names, v, done);
                    }
                }
            }
        }
        if let Some((v, done)) = run {
            hand_over(&mut names, v, done);
        }
        Grouped(
            names
                .into_iter()
                .map(|(value, names)| (value.to_owned(), memo.hostlist(&names).1))
                .collect(),
        )
    }

    /// The map whose value → hostlist entries are given; each hostlist must be
    /// [`crate::slurm::hostlist::compress`]'s form of its names (as they are made from
    /// [`crate::slurm::hostlist::compress_with_first`]), so the map equals one made from pairs.
    pub(super) fn from_hostlists(entries: BTreeMap<String, String>) -> Self {
        Grouped(entries)
    }

    /// The grouped form of a per-node map.
    pub fn from_map(map: &ByNode) -> Self {
        Self::from_pairs(map.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    }

    /// The per-node map; `Err` names a hostlist that does not expand, or says that a name is
    /// listed twice.
    pub fn to_map(&self) -> Result<ByNode, GroupedError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (value, list) in &self.0 {
            pairs.extend(names(list)?.into_iter().map(|n| (n, value.clone())));
        }
        let listed = pairs.len();
        let map: ByNode = pairs.into_iter().collect();
        if map.len() != listed {
            return Err(GroupedError::ListedTwice);
        }
        Ok(map)
    }

    /// No nodes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every node name (made from every hostlist: O(nodes), for the rare callers that need
    /// them all).
    pub fn names(&self) -> Result<BTreeSet<String>, GroupedError> {
        let mut all = Vec::new();
        for list in self.0.values() {
            all.extend(names(list)?);
        }
        once(all)
    }

    /// Whether `name` is one of the nodes, told from each value's hostlist without making
    /// its names ([`crate::slurm::hostlist::contains`]); `Err` names a hostlist that does not
    /// read.
    pub fn contains(&self, name: &str) -> Result<bool, GroupedError> {
        for list in self.0.values() {
            if crate::slurm::hostlist::contains(list, name).map_err(unreadable(list))? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Which nodes `new` adds, removes or gives another value, compared with `old`. Names are
    /// made only for the values whose hostlists differ: one changed node among 10,000 of one
    /// shape costs the names of its old and new value, not a lookup per node.
    pub fn diff(old: &Grouped, new: &Grouped) -> Result<Diff, GroupedError> {
        let mut gained: Vec<String> = Vec::new();
        let mut lost: Vec<String> = Vec::new();
        for (value, list) in &new.0 {
            let before = old.0.get(value);
            if before == Some(list) {
                continue;
            }
            let was_list = before.map_or("", String::as_str);
            match (numbered(list)?, numbered(was_list)?) {
                (Some(now), Some(was)) => {
                    split_difference(&now, &was, numbered_to_string, &mut gained, &mut lost)
                }
                _ => {
                    let (now, was) = (names(list)?, names(was_list)?);
                    let now: Vec<&str> = now.iter().map(String::as_str).collect();
                    let was: Vec<&str> = was.iter().map(String::as_str).collect();
                    split_difference(&now, &was, str::to_owned, &mut gained, &mut lost)
                }
            }
        }
        for (value, list) in &old.0 {
            if !new.0.contains_key(value) {
                lost.extend(names(list)?);
            }
        }
        let gained = once(gained)?;
        let lost = once(lost)?;
        let changed: BTreeSet<String> = gained.intersection(&lost).cloned().collect();
        Ok(Diff {
            added: gained.difference(&changed).cloned().collect(),
            removed: lost.difference(&changed).cloned().collect(),
            changed,
        })
    }
}

/// Moves a run of `value`'s names to its entry in `names` (the run's own vector when the
/// value has none yet).
fn hand_over<'a>(names: &mut FxHashMap<&'a str, Vec<&'a str>>, value: &'a str, run: Vec<&'a str>) {
    let held = names.entry(value).or_default();
    if held.is_empty() {
        *held = run;
    } else {
        held.extend(run);
    }
}

impl<'de> Deserialize<'de> for Grouped {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = bulk_map(d)?;
        for list in map.values() {
            count(list).map_err(|e| D::Error::custom(format!("hostlist `{list}`: {e}")))?;
        }
        Ok(Grouped(map))
    }
}

/// [`GroupedError::Hostlist`] for the stored hostlist `list`.
fn unreadable(list: &str) -> impl FnOnce(HostlistError) -> GroupedError + '_ {
    move |source| GroupedError::Hostlist {
        list: list.to_owned(),
        source,
    }
}

/// A stored hostlist's names.
fn names(list: &str) -> Result<Vec<String>, GroupedError> {
    expand(list).map_err(unreadable(list))
}

/// A stored hostlist's names as [`NumberedName`]s (made into strings only where two lists
/// differ); `None` when the list is not in
/// [`compress`](crate::slurm::hostlist::compress)'s form.
fn numbered(list: &str) -> Result<Option<Vec<NumberedName<'_>>>, GroupedError> {
    numbered_names(list).map_err(unreadable(list))
}

/// Names in `now` and not in `was` go to `gained`, the other way round to `lost` (a hash set
/// each way: the lists are in hostlist order, not sorted); `name` makes each moved name.
fn split_difference<K: Copy + Eq + Hash>(
    now: &[K],
    was: &[K],
    name: impl Fn(K) -> String,
    gained: &mut Vec<String>,
    lost: &mut Vec<String>,
) {
    let in_now: FxHashSet<K> = now.iter().copied().collect();
    let in_was: FxHashSet<K> = was.iter().copied().collect();
    gained.extend(now.iter().filter(|k| !in_was.contains(k)).map(|&k| name(k)));
    lost.extend(was.iter().filter(|k| !in_now.contains(k)).map(|&k| name(k)));
}

/// The names as a set; `Err` when one comes twice (listed under two values of one map).
fn once(names: Vec<String>) -> Result<BTreeSet<String>, GroupedError> {
    let listed = names.len();
    let set: BTreeSet<String> = names.into_iter().collect();
    if set.len() != listed {
        return Err(GroupedError::ListedTwice);
    }
    Ok(set)
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
    use crate::slurm::types::NodeName;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeSet;

    /// Either stored form (each name of the array is checked as a [`NodeName`]).
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        List(String),
        Names(BTreeSet<NodeName>),
    }

    /// `serialize_with`: the names as one hostlist.
    pub fn serialize<S: Serializer>(names: &BTreeSet<NodeName>, s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&NodeName> = names.iter().collect();
        s.serialize_str(&compress(&names))
    }

    /// `deserialize_with`: a hostlist (or an array of names); one that does not expand, names
    /// a node twice or holds a name that is not a [`NodeName`] is refused (the cache is then
    /// rebuilt).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeSet<NodeName>, D::Error> {
        match Stored::deserialize(d)? {
            Stored::Names(names) => Ok(names),
            Stored::List(list) => {
                let names = expand(&list)
                    .map_err(|e| D::Error::custom(format!("hostlist `{list}`: {e}")))?;
                let count = names.len();
                let set = names
                    .into_iter()
                    .map(NodeName::try_from)
                    .collect::<Result<BTreeSet<NodeName>, _>>()
                    .map_err(|e| D::Error::custom(format!("hostlist `{list}`: {e}")))?;
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
        let stored = Grouped::from_map(&map);
        assert_eq!(stored.0["gpu:h100:8"], "gpu-[0-999]");
        assert_eq!(stored.0[""], "cpu-a");
        assert_eq!(stored.0["gpu:t4:1"], "gpu-07");
        let json = serde_json::to_string(&stored).unwrap();
        let read: Grouped = serde_json::from_str(&json).unwrap();
        assert_eq!(read.to_map().unwrap(), map);
    }

    #[test]
    fn diff_names_added_removed_and_changed_nodes() {
        let old = Grouped::from_pairs([("n1", "a"), ("n2", "a"), ("n3", "b"), ("n4", "c")]);
        let new = Grouped::from_pairs([("n1", "a"), ("n2", "b"), ("n3", "b"), ("n5", "a")]);
        let d = Grouped::diff(&old, &new).unwrap();
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(d.added, set(&["n5"]));
        assert_eq!(d.removed, set(&["n4"]));
        assert_eq!(d.changed, set(&["n2"]));
        assert_eq!(Grouped::diff(&new, &new).unwrap(), Diff::default());
        let everything = Grouped::diff(&Grouped::default(), &new).unwrap();
        assert_eq!(everything.added, set(&["n1", "n2", "n3", "n5"]));
    }

    use crate::slurm::types::NodeName;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Down(#[serde(with = "hostlist_set")] std::collections::BTreeSet<NodeName>);

    #[test]
    fn a_name_set_is_one_hostlist_and_an_array_still_reads() {
        let set: std::collections::BTreeSet<NodeName> = (0..1000)
            .map(|i| NodeName::try_from(format!("gpu-{i}")).unwrap())
            .collect();
        let json = serde_json::to_string(&Down(set.clone())).unwrap();
        assert_eq!(json, r#""gpu-[0-999]""#);
        assert_eq!(serde_json::from_str::<Down>(&json).unwrap().0, set);
        let old: Down = serde_json::from_str(r#"["gpu-1","gpu-0"]"#).unwrap();
        assert_eq!(old.0.len(), 2);
        assert_eq!(serde_json::from_str::<Down>(r#""""#).unwrap().0.len(), 0);
        // a bad hostlist, a node twice, a name that is no node name (in either form)
        for bad in [
            r#""gpu-[3-1""#,
            r#""gpu-[0-1],gpu-1""#,
            r#""gpu-1,-x""#,
            r#"["gpu-1","a#b"]"#,
        ] {
            assert!(serde_json::from_str::<Down>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_stored_form_is_refused() {
        let bad = serde_json::from_str::<Grouped>(r#"{"x":"gpu-[3-1"}"#);
        assert!(bad.unwrap_err().to_string().contains("gpu-[3-1"));
        let twice: Grouped = serde_json::from_str(r#"{"x":"gpu-1","y":"gpu-[0-2]"}"#).unwrap();
        assert_eq!(twice.to_map(), Err(GroupedError::ListedTwice));
        // found when the values' names are compared
        let err = Grouped::diff(&Grouped::default(), &twice).unwrap_err();
        assert_eq!(err, GroupedError::ListedTwice);
        assert!(err.to_string().contains("listed twice"), "{err}");
    }
}
