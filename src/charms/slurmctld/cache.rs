//! The controller's per-unit cache of remote relation data, so a relation event costs O(1)
//! hook-tool calls instead of re-reading every unit.
//!
//! **Where:** `<root>/var/lib/slurm-charms/slurmctld/relation-cache.json` (mode 0600), written
//! atomically at the end of each leader hook, after every hook-tool call succeeded. It holds,
//! per relation, the remote application, its raw `partition` value, each remote unit's raw
//! `node` value and the `cluster_info` we last published there; plus what was last applied to
//! slurmctld (node → GRES, DownNodes, a hash of both files).
//!
//! **Integrity:** the body is stored with an FNV-1a 64 hash; a missing file, unreadable JSON,
//! another format version or a hash mismatch counts as corrupt, and the hook rebuilds the cache
//! in full from relation data (O(units) calls, once). A full rebuild also happens on
//! `leader-elected` and `upgrade-charm` (the cache may be stale after missed events).
//!
//! **When it is wrong** (e.g. edited by hand with a matching hash), the files follow the cache
//! until the next full rebuild; deleting the file forces one on the next hook. The `applied`
//! part only decides restart-versus-reconfigure: if it is lost, slurmctld is restarted when the
//! rendered files differ from those on disk (the safe choice), and left alone otherwise.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Host path of the cache file.
pub const CACHE_PATH: &str = "/var/lib/slurm-charms/slurmctld/relation-cache.json";

/// Format version; bump when the layout changes (an old file then counts as corrupt).
pub const CACHE_VERSION: u32 = 1;

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
    /// Remote unit → its raw `node` value (units without one are not listed).
    pub units: BTreeMap<String, String>,
    /// The `cluster_info` value last published on this relation.
    pub cluster_info_published: Option<String>,
}

/// What slurmctld was last brought in line with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Node name → its `Gres=` value (empty without GPUs).
    pub nodes: BTreeMap<String, String>,
    /// Nodes in `DownNodes`.
    pub down: BTreeSet<String>,
    /// FNV-1a of slurm.conf, gres.conf and cgroup.conf.
    pub files_hash: String,
}

/// The whole cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cache {
    /// Relations by `endpoint:id`.
    pub relations: BTreeMap<String, CachedRelation>,
    /// Last applied state, if known.
    pub applied: Option<Applied>,
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    version: u32,
    hash: String,
    body: String,
}

/// FNV-1a 64-bit, as 16 hex digits.
pub fn fnv1a(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

impl Cache {
    /// Serialises the cache with its hash.
    pub fn to_bytes(&self) -> Vec<u8> {
        let body = serde_json::to_string(self).unwrap_or_default();
        let env = Envelope {
            version: CACHE_VERSION,
            hash: fnv1a(&[body.as_bytes()]),
            body,
        };
        serde_json::to_vec(&env).unwrap_or_default()
    }

    /// Reads a cache; `Err` says why it cannot be trusted.
    pub fn from_bytes(raw: &[u8]) -> Result<Self, String> {
        let env: Envelope = serde_json::from_slice(raw).map_err(|e| format!("unreadable ({e})"))?;
        if env.version != CACHE_VERSION {
            return Err(format!(
                "format version {} (expected {CACHE_VERSION})",
                env.version
            ));
        }
        if fnv1a(&[env.body.as_bytes()]) != env.hash {
            return Err("content hash mismatch".into());
        }
        serde_json::from_str(&env.body).map_err(|e| format!("unreadable body ({e})"))
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
                units: BTreeMap::from([("compute/0".into(), "{\"x\":1}".into())]),
                cluster_info_published: None,
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
    fn corruption_is_detected() {
        let raw = String::from_utf8(sample().to_bytes()).unwrap();
        let tampered = raw.replace("compute/0", "compute/9");
        assert!(
            Cache::from_bytes(tampered.as_bytes())
                .unwrap_err()
                .contains("hash")
        );
        assert!(Cache::from_bytes(b"{").is_err());
        let old = raw.replace("\"version\":1", "\"version\":0");
        assert!(
            Cache::from_bytes(old.as_bytes())
                .unwrap_err()
                .contains("version")
        );
    }

    #[test]
    fn fnv_known_value() {
        assert_eq!(fnv1a(&[b""]), "cbf29ce484222325");
        assert_eq!(fnv1a(&[b"a"]), "af63dc4c8601ec8c");
    }
}
