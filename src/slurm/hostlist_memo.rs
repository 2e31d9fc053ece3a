//! Hostlists of long node lists kept from one render to the next. At 10,000 nodes of a few
//! shapes the controller's files name the same few long lists on every hook (a shape's nodes,
//! a partition's nodes, the applied record's values), and a changed node touches one or two of
//! them. Compressing a list (and finding its first name in natural order) costs a pass over
//! its names with a natural comparison each; looking it up here costs one hash of its text.
//! The controller keeps the memo in its relation cache ([`HostlistMemo`]) and hands each
//! render a [`MemoSession`]: lists found are reused, the others compressed, and what the
//! render used is what is kept for the next one (so the memo holds only current lists).
//!
//! A list is keyed by the BLAKE3 hash of its names in the order given (length-prefixed, so no
//! two lists share a text): node names come from related applications, and a key an
//! application could make collide would put another list's nodes into the files. The names'
//! order is part of the key, so a list given in another order is simply compressed again.

use super::hostlist::{compress_with_first, count};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Lists of fewer names are compressed each time (cheap; not worth a line in the cache).
pub const MEMO_FROM: usize = 256;

/// Key length kept (bytes of the BLAKE3 hash): 128 bits, as hex in the cache file.
const KEY_LEN: usize = 16;

/// A list's key: the first [`KEY_LEN`] bytes of the BLAKE3 hash of its names.
type Key = [u8; KEY_LEN];

/// What is kept of one list: where its first name in natural order is, how many names it has
/// (checked against its hostlist when read) and its hostlist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Remembered {
    first: usize,
    count: usize,
    hostlist: String,
}

/// The hostlists kept for the next render, by list key. Read from the relation cache (a
/// boundary): each entry is checked when read (its hostlist reads and names `count` nodes, its
/// first name is one of them), so a damaged entry fails the cache's read rather than a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostlistMemo(BTreeMap<Key, Remembered>);

impl HostlistMemo {
    /// How many lists are kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No list kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One render's use of a [`HostlistMemo`]: the lists kept from before, and those used now
/// (what [`MemoSession::into_memo`] keeps for the next render).
#[derive(Debug, Clone, Default)]
pub struct MemoSession {
    earlier: HostlistMemo,
    now: HostlistMemo,
    buf: Vec<u8>,
}

/// Two sessions are equal when they leave the same memo ([`MemoSession::into_memo`]): what
/// each was started with does not count.
impl PartialEq for MemoSession {
    fn eq(&self, other: &Self) -> bool {
        self.now == other.now
    }
}

impl Eq for MemoSession {}

impl MemoSession {
    /// A session that reuses `earlier`'s lists.
    pub fn new(earlier: HostlistMemo) -> Self {
        Self {
            earlier,
            ..Self::default()
        }
    }

    /// A session that keeps every list of `earlier` for the next render, used or not: what a
    /// plan that renders without it leaves (the controller's plan from node groups).
    pub fn keeping(earlier: HostlistMemo) -> Self {
        Self {
            now: earlier,
            ..Self::default()
        }
    }

    /// The hostlist of `names` ([`compress`](super::hostlist::compress)) and the index of
    /// their first name in natural order (`0` for no names): found in the memo for a list of
    /// [`MEMO_FROM`] names or more seen before, else made.
    pub fn hostlist(&mut self, names: &[&str]) -> (usize, String) {
        if names.len() < MEMO_FROM {
            return compress_with_first(names);
        }
        let key = self.key(names);
        let found = self
            .now
            .0
            .get(&key)
            .or_else(|| self.earlier.0.get(&key))
            .filter(|r| r.count == names.len())
            .cloned();
        let remembered = found.unwrap_or_else(|| {
            let (first, hostlist) = compress_with_first(names);
            Remembered {
                first,
                count: names.len(),
                hostlist,
            }
        });
        let answer = (remembered.first, remembered.hostlist.clone());
        self.now.0.insert(key, remembered);
        answer
    }

    /// The lists this session used: what the next render may reuse.
    pub fn into_memo(self) -> HostlistMemo {
        self.now
    }

    fn key(&mut self, names: &[&str]) -> Key {
        self.buf.clear();
        for n in names {
            // length-prefixed: no two lists share a text whatever their names hold
            self.buf.extend_from_slice(&(n.len() as u32).to_le_bytes());
            self.buf.extend_from_slice(n.as_bytes());
        }
        let hash = blake3::hash(&self.buf);
        let mut key = [0u8; KEY_LEN];
        key.copy_from_slice(&hash.as_bytes()[..KEY_LEN]);
        key
    }
}

/// Why a stored memo entry is refused (the relation cache then reads as damaged and is
/// rebuilt).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoError {
    /// The key is not 32 hex digits.
    #[error("hostlist memo key `{0}` is not 32 hex digits")]
    Key(String),
    /// The hostlist does not read, or names another number of nodes than stored.
    #[error("hostlist memo entry `{hostlist}` does not name {count} nodes")]
    Count {
        /// The stored hostlist.
        hostlist: String,
        /// The stored number of names.
        count: usize,
    },
    /// The first name's index is not one of the list's.
    #[error("hostlist memo entry `{hostlist}`: first name {first} is past its {count} nodes")]
    First {
        /// The stored hostlist.
        hostlist: String,
        /// The stored index.
        first: usize,
        /// The stored number of names.
        count: usize,
    },
}

fn parse_key(text: &str) -> Result<Key, MemoError> {
    let bad = || MemoError::Key(text.chars().take(40).collect());
    if text.len() != KEY_LEN * 2 {
        return Err(bad());
    }
    let mut key = [0u8; KEY_LEN];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16)
            .map_err(|_| bad())?;
    }
    Ok(key)
}

fn key_text(key: &Key) -> String {
    use std::fmt::Write;
    key.iter()
        .fold(String::with_capacity(KEY_LEN * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn checked(first: usize, n: usize, hostlist: String) -> Result<Remembered, MemoError> {
    if count(&hostlist).ok() != Some(n) {
        return Err(MemoError::Count { hostlist, count: n });
    }
    if first >= n {
        return Err(MemoError::First {
            hostlist,
            first,
            count: n,
        });
    }
    Ok(Remembered {
        first,
        count: n,
        hostlist,
    })
}

impl Serialize for HostlistMemo {
    /// `{"<key hex>": [first, count, "hostlist"], …}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.0
                .iter()
                .map(|(k, r)| (key_text(k), (r.first, r.count, r.hostlist.as_str()))),
        )
    }
}

impl<'de> Deserialize<'de> for HostlistMemo {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = BTreeMap::<String, (usize, usize, String)>::deserialize(d)?;
        let mut memo = BTreeMap::new();
        for (k, (first, n, hostlist)) in raw {
            let key = parse_key(&k).map_err(D::Error::custom)?;
            memo.insert(key, checked(first, n, hostlist).map_err(D::Error::custom)?);
        }
        Ok(Self(memo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::hostlist::{compress, natural_first};

    fn names(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    fn made(list: &[&str]) -> (usize, String) {
        let first = natural_first(list.iter().copied()).unwrap();
        let at = list.iter().position(|n| *n == first).unwrap();
        (at, compress(list))
    }

    #[test]
    fn a_list_seen_before_is_found_and_gives_what_compress_gives() {
        let mut a = names("gpu-", 1000);
        a.reverse();
        let b = names("cpu-", 300);
        let mut first = MemoSession::default();
        for list in [&a, &b] {
            assert_eq!(first.hostlist(&refs(list)), made(&refs(list)));
        }
        // through the cache file's form
        let text = serde_json::to_string(&first.into_memo()).unwrap();
        let memo: HostlistMemo = serde_json::from_str(&text).unwrap();
        assert_eq!(memo.len(), 2);
        let mut second = MemoSession::new(memo);
        assert_eq!(second.hostlist(&refs(&a)), made(&refs(&a)));
        // one name changed: another list, compressed again
        let mut c = a.clone();
        c[500] = "gpu-5000".into();
        assert_eq!(second.hostlist(&refs(&c)), made(&refs(&c)));
        // only the lists used are kept: `b` was not
        assert_eq!(second.into_memo().len(), 2);
    }

    #[test]
    fn a_kept_entry_is_what_a_list_seen_before_gets() {
        // a stored entry of the right size but another hostlist shows that it was looked up,
        // not compressed again
        let a = names("gpu-", 300);
        let mut s = MemoSession::default();
        let key = key_text(&s.key(&refs(&a)));
        let text = format!(r#"{{"{key}":[7,300,"other-[1-300]"]}}"#);
        let mut s = MemoSession::new(serde_json::from_str(&text).unwrap());
        assert_eq!(s.hostlist(&refs(&a)), (7, "other-[1-300]".to_string()));
        // a list of another size under that key is not taken from it
        let short = &refs(&a)[..299];
        assert_eq!(s.hostlist(short), made(short));
    }

    #[test]
    fn short_lists_are_not_kept() {
        let a = names("n", MEMO_FROM - 1);
        let mut s = MemoSession::default();
        assert_eq!(s.hostlist(&refs(&a)), made(&refs(&a)));
        assert!(s.into_memo().is_empty());
    }

    #[test]
    fn names_that_join_alike_are_told_apart() {
        // "ab","c" and "a","bc" would hash alike if joined without their lengths
        let mut x = names("n", MEMO_FROM);
        let mut y = x.clone();
        x[0] = "ab".into();
        x[1] = "c".into();
        y[0] = "a".into();
        y[1] = "bc".into();
        let mut s = MemoSession::default();
        s.hostlist(&refs(&x));
        assert_eq!(s.hostlist(&refs(&y)), made(&refs(&y)));
        assert_eq!(s.into_memo().len(), 2);
    }

    #[test]
    fn damaged_entries_are_refused_when_read() {
        let key = "00112233445566778899aabbccddeeff";
        let ok = format!(r#"{{"{key}":[0,3,"n[1-3]"]}}"#);
        assert_eq!(serde_json::from_str::<HostlistMemo>(&ok).unwrap().len(), 1);
        for bad in [
            format!(r#"{{"{key}":[0,4,"n[1-3]"]}}"#),
            format!(r#"{{"{key}":[3,3,"n[1-3]"]}}"#),
            format!(r#"{{"{key}":[0,3,"n[1-3"]}}"#),
            r#"{"0011":[0,3,"n[1-3]"]}"#.to_string(),
            r#"{"zz112233445566778899aabbccddeeff":[0,3,"n[1-3]"]}"#.to_string(),
        ] {
            assert!(serde_json::from_str::<HostlistMemo>(&bad).is_err(), "{bad}");
        }
    }
}
