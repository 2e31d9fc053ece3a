//! The app-bag `cluster_info` record (slurmctld leader → slurmd):
//! `{"munge_key_secret": "secret:<id>", "slurmctld_host": "<host>", "nhc_params": "#"}`.
//! `"#"` stands for empty `nhc_params` (relation data cannot hold empty strings).
//!
//! The munge key itself travels in a Juju secret the controller owns and grants to the slurmd
//! relation; the record only names it. Charms before secrets sent the key inline
//! (`"munge_key": "<base64>"`); that shape is still read ([`MungeKeyRef::Inline`]) so a
//! deployment can be upgraded, and is never written by the controller any more.

use super::InterfaceError;
use crate::slurm::types::NodeName;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use juju_runtime::SecretId;
use serde::{Deserialize, Serialize};

/// The relation key of the record.
pub const CLUSTER_INFO_KEY: &str = "cluster_info";

/// Smallest munge key munged accepts (bytes).
pub const MIN_MUNGE_KEY_LEN: usize = 32;

/// Largest munge key accepted here (munged's own limit is 1 KiB).
pub const MAX_MUNGE_KEY_LEN: usize = 1024;

/// A munge key, length-checked (munged wants 32 to 1024 bytes). Its `Debug` hides the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct MungeKey(Vec<u8>);

impl MungeKey {
    /// Checks the length; `source` names where the bytes came from in the error.
    pub fn new(bytes: Vec<u8>, source: &'static str) -> Result<Self, InterfaceError> {
        let n = bytes.len();
        if !(MIN_MUNGE_KEY_LEN..=MAX_MUNGE_KEY_LEN).contains(&n) {
            return Err(InterfaceError::invalid(
                source,
                "munge_key",
                format!("is {n} bytes; munge needs {MIN_MUNGE_KEY_LEN} to {MAX_MUNGE_KEY_LEN}"),
            ));
        }
        Ok(MungeKey(bytes))
    }

    /// The key bytes (what goes into `/etc/munge/munge.key`).
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for MungeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MungeKey(<{} bytes>)", self.0.len())
    }
}

/// Where slurmd finds the munge key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MungeKeyRef {
    /// In this Juju secret (content key [`MUNGE_KEY_SECRET_FIELD`]), granted to the relation.
    Secret(SecretId),
    /// Inline in relation data: the shape of charms before secrets, read for upgrades only.
    Inline(MungeKey),
}

/// Which authentication the cluster uses (slurmctld's `auth-type` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthKind {
    /// `AuthType=auth/munge`, `CredType=cred/munge`: the key is munged's
    /// `/etc/munge/munge.key` (the default).
    #[default]
    Munge,
    /// `AuthType=auth/slurm`, `CredType=cred/slurm` (Slurm 23.11+): the same key is also
    /// `/etc/slurm/slurm.key` (0600 slurm:slurm) on every host; a configless slurmd uses
    /// auth/slurm for its first contact when that file exists.
    Slurm,
}

impl AuthKind {
    /// Parses the option value (`munge` or `slurm`).
    pub fn parse(value: &str) -> Result<Self, UnknownAuthType> {
        match value.trim() {
            "" | "munge" => Ok(AuthKind::Munge),
            "slurm" => Ok(AuthKind::Slurm),
            other => Err(UnknownAuthType(other.to_string())),
        }
    }

    /// The option value.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::Munge => "munge",
            AuthKind::Slurm => "slurm",
        }
    }
}

/// An `auth-type` value that names neither authentication the charms support.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not munge or slurm")]
pub struct UnknownAuthType(pub String);

/// The content key of the munge key in the controller's secret.
pub const MUNGE_KEY_SECRET_FIELD: &str = "munge-key";

/// The owner label of the controller's key secret.
pub const MUNGE_KEY_SECRET_LABEL: &str = "cluster-key";

/// What slurmd units need from the controller.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ClusterInfoWire", into = "ClusterInfoWire")]
pub struct ClusterInfo {
    /// Where the munge key is.
    pub munge_key: MungeKeyRef,
    /// Host name slurmd fetches its configuration from (`<host>:6817`): a [`NodeName`], parsed
    /// once when the record is read (serde `try_from`) and carried as is to slurmd's
    /// `--conf-server` and its controller checks.
    pub slurmctld_host: NodeName,
    /// Node health check parameters; empty means none.
    pub nhc_params: String,
    /// The cluster's authentication; `munge` when absent (records before `auth-type`).
    pub auth: AuthKind,
}

impl std::fmt::Debug for ClusterInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterInfo")
            .field("munge_key", &self.munge_key)
            .field("slurmctld_host", &self.slurmctld_host)
            .field("nhc_params", &self.nhc_params)
            .field("auth", &self.auth)
            .finish()
    }
}

/// The JSON layout: the secret id (or, old shape, the key as base64), `"#"` for empty
/// `nhc_params`; unknown keys ignored (the reference adds some over time).
#[derive(Serialize, Deserialize)]
struct ClusterInfoWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    munge_key_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    munge_key: Option<String>,
    /// A JSON string on the wire, parsed by [`NodeName`]'s `try_from = "String"` (an error
    /// names the field `slurmctld_host`).
    slurmctld_host: NodeName,
    #[serde(default)]
    nhc_params: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    auth_type: Option<String>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::invalid(CLUSTER_INFO_KEY, field, reason)
}

impl TryFrom<ClusterInfoWire> for ClusterInfo {
    type Error = InterfaceError;
    fn try_from(w: ClusterInfoWire) -> Result<Self, InterfaceError> {
        let munge_key = match (w.munge_key_secret, w.munge_key) {
            (Some(id), _) => MungeKeyRef::Secret(
                SecretId::parse(&id).map_err(|e| invalid("munge_key_secret", e.to_string()))?,
            ),
            (None, Some(b64)) => {
                let bytes = STANDARD
                    .decode(b64.split_ascii_whitespace().collect::<String>())
                    .map_err(|e| invalid("munge_key", format!("not base64: {e}")))?;
                MungeKeyRef::Inline(MungeKey::new(bytes, CLUSTER_INFO_KEY)?)
            }
            (None, None) => return Err(invalid("munge_key_secret", "missing")),
        };
        Ok(Self {
            munge_key,
            slurmctld_host: w.slurmctld_host,
            nhc_params: w.nhc_params.filter(|s| s != "#").unwrap_or_default(),
            auth: AuthKind::parse(w.auth_type.as_deref().unwrap_or_default())
                .map_err(|e| invalid("auth_type", e.to_string()))?,
        })
    }
}

impl From<ClusterInfo> for ClusterInfoWire {
    fn from(c: ClusterInfo) -> Self {
        let (munge_key_secret, munge_key) = match &c.munge_key {
            MungeKeyRef::Secret(id) => (Some(id.uri()), None),
            MungeKeyRef::Inline(key) => (None, Some(STANDARD.encode(key.bytes()))),
        };
        ClusterInfoWire {
            munge_key_secret,
            munge_key,
            slurmctld_host: c.slurmctld_host,
            nhc_params: Some(if c.nhc_params.is_empty() {
                "#".to_string()
            } else {
                c.nhc_params
            }),
            auth_type: (c.auth == AuthKind::Slurm).then(|| "slurm".to_owned()),
        }
    }
}

impl ClusterInfo {
    /// The configless server slurmd uses: `<host>:6817`.
    pub fn conf_server(&self) -> String {
        format!("{}:6817", self.slurmctld_host)
    }

    /// The relation value: compact JSON.
    pub fn to_relation_value(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses and validates a relation value.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        super::from_relation_json(CLUSTER_INFO_KEY, raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> SecretId {
        SecretId::parse("secret:cu5t2qvmp25c77fh5ce0").unwrap()
    }

    fn info() -> ClusterInfo {
        ClusterInfo {
            munge_key: MungeKeyRef::Secret(id()),
            slurmctld_host: NodeName::try_from("ctl-0").unwrap(),
            nhc_params: String::new(),
            auth: AuthKind::Munge,
        }
    }

    #[test]
    fn round_trip_and_hash_for_empty_nhc() {
        let raw = info().to_relation_value();
        assert!(raw.contains(r##""nhc_params":"#""##));
        assert!(raw.contains(r#""munge_key_secret":"secret:cu5t2qvmp25c77fh5ce0""#));
        assert!(!raw.contains(r#""munge_key":"#), "{raw}");
        assert_eq!(ClusterInfo::from_relation_value(&raw).unwrap(), info());
        assert_eq!(info().conf_server(), "ctl-0:6817");
        // The wire shape is the one charms before the typed host wrote: a plain JSON string.
        assert_eq!(
            raw,
            r##"{"munge_key_secret":"secret:cu5t2qvmp25c77fh5ce0","slurmctld_host":"ctl-0","nhc_params":"#"}"##
        );
        let old = ClusterInfo {
            munge_key: MungeKeyRef::Inline(MungeKey::new(vec![7; 1024], "test").unwrap()),
            ..info()
        };
        assert!(!format!("{old:?}").contains("7, 7"));
        let raw = old.to_relation_value();
        assert_eq!(ClusterInfo::from_relation_value(&raw).unwrap(), old);
    }

    #[test]
    fn refuses_bad_records() {
        let short = r#"{"munge_key":"AQEBAQ==","slurmctld_host":"h"}"#;
        assert!(
            ClusterInfo::from_relation_value(short)
                .unwrap_err()
                .to_string()
                .contains("munge_key")
        );
        // The host is parsed once, as the record is read: a name Slurm refuses is an error that
        // names the field, never a `ClusterInfo`.
        for host in ["ctl 0\nx", "", "ALL", "-ctl", "ctl;rm", "ctl:6817"] {
            let raw = format!(
                r#"{{"munge_key_secret":"secret:cu5t2qvmp25c77fh5ce0","slurmctld_host":{host:?}}}"#
            );
            let e = ClusterInfo::from_relation_value(&raw).unwrap_err();
            assert!(
                matches!(&e, InterfaceError::Invalid { field, .. } if field == "slurmctld_host"),
                "{host:?}: {e:?}"
            );
            assert!(e.to_string().contains("NodeName"), "{host:?}: {e}");
        }
        let e = ClusterInfo::from_relation_value(
            r#"{"munge_key_secret":"secret:cu5t2qvmp25c77fh5ce0","slurmctld_host":7}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("slurmctld_host"), "{e}");
        let e = ClusterInfo::from_relation_value(r#"{"munge_key":"***","slurmctld_host":"h"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("base64"), "{e}");
        assert!(ClusterInfo::from_relation_value(r#"{"slurmctld_host":"h"}"#).is_err());
        let e =
            ClusterInfo::from_relation_value(r#"{"munge_key_secret":"x","slurmctld_host":"h"}"#)
                .unwrap_err();
        assert!(e.to_string().contains("munge_key_secret"), "{e}");
    }
}
