//! Juju secrets (3.x): the [`SecretBackend`] extension of the model seam and its types.
//!
//! Like [`crate::NetworkBackend`] it is a separate trait, so every `ModelBackend` implementor
//! stays valid and charm code that keeps a key in a secret asks for `B: SecretBackend`.
//!
//! Rules the client follows (the repository's `docs/juju-hook-tools.md` §2.16):
//! - content never goes on argv (Juju and test simulators log argv): every value is written to
//!   a `0600` temporary file and passed as `key#file=<path>`, as ops does;
//! - values are bytes: reads ask for `key#base64` and decode, so binary keys survive;
//! - ids are normalised to the bare 20-character xid ([`SecretId`]) before they are compared or
//!   stored; Juju accepts the bare form, `secret:<id>` and `secret://<model>/<id>`.

use crate::backend::{ModelBackend, RelationId};
use crate::tool_error::HookToolError;
use std::collections::BTreeMap;
use std::fmt;

/// A secret's content: key → value bytes. Keys follow Juju's rule
/// (`^[a-z](-?[a-z0-9]){2,}$`, see [`valid_secret_key`]).
pub type SecretContent = BTreeMap<String, Vec<u8>>;

/// A secret id, normalised to the bare xid (`cu5t2qvmp25c77fh5ce0`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretId(String);

/// Why a string is not a secret id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "secret id {given:?} is not valid: expected secret:<20 characters of [0-9a-v]> (or the bare or secret://<model>/ form)"
)]
pub struct SecretIdError {
    /// What was given (truncated to 80 characters).
    pub given: String,
}

impl SecretId {
    /// Parses any of Juju's three forms (`<xid>`, `secret:<xid>`, `secret://<model>/<xid>`).
    pub fn parse(raw: &str) -> Result<Self, SecretIdError> {
        let raw = raw.trim();
        let bare = raw
            .strip_prefix("secret://")
            .and_then(|rest| rest.rsplit_once('/').map(|(_, id)| id))
            .or_else(|| raw.strip_prefix("secret:"))
            .unwrap_or(raw);
        let ok = bare.len() == 20
            && bare
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b));
        if ok {
            Ok(SecretId(bare.to_owned()))
        } else {
            Err(SecretIdError {
                given: raw.chars().take(80).collect(),
            })
        }
    }

    /// The bare xid.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The `secret:<xid>` form Juju exports in `JUJU_SECRET_ID` and charms publish.
    pub fn uri(&self) -> String {
        format!("secret:{}", self.0)
    }
}

impl fmt::Display for SecretId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "secret:{}", self.0)
    }
}

/// Juju's content key rule: `^[a-z](-?[a-z0-9]){2,}$`.
pub fn valid_secret_key(key: &str) -> bool {
    let b = key.as_bytes();
    if b.first().is_none_or(|c| !c.is_ascii_lowercase()) {
        return false;
    }
    let mut groups = 0;
    let mut i = 1;
    while i < b.len() {
        if b[i] == b'-' {
            i += 1;
        }
        match b.get(i) {
            Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => groups += 1,
            _ => return false,
        }
        i += 1;
    }
    groups >= 2
}

/// Who owns a new secret (`secret-add --owner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretOwner {
    /// The application (Juju's default): only the leader manages it, every unit reads it.
    #[default]
    Application,
    /// The running unit.
    Unit,
}

/// A rotation policy (`--rotate`): Juju fires `secret-rotate` on the owner when it is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotatePolicy {
    /// `never`
    Never,
    /// `hourly`
    Hourly,
    /// `daily`
    Daily,
    /// `weekly`
    Weekly,
    /// `monthly`
    Monthly,
    /// `quarterly`
    Quarterly,
    /// `yearly`
    Yearly,
}

impl RotatePolicy {
    /// The word Juju takes and prints.
    pub fn as_str(self) -> &'static str {
        match self {
            RotatePolicy::Never => "never",
            RotatePolicy::Hourly => "hourly",
            RotatePolicy::Daily => "daily",
            RotatePolicy::Weekly => "weekly",
            RotatePolicy::Monthly => "monthly",
            RotatePolicy::Quarterly => "quarterly",
            RotatePolicy::Yearly => "yearly",
        }
    }

    /// Parses Juju's word; `None` for anything else.
    pub fn parse(word: &str) -> Option<Self> {
        [
            RotatePolicy::Never,
            RotatePolicy::Hourly,
            RotatePolicy::Daily,
            RotatePolicy::Weekly,
            RotatePolicy::Monthly,
            RotatePolicy::Quarterly,
            RotatePolicy::Yearly,
        ]
        .into_iter()
        .find(|p| p.as_str() == word)
    }
}

/// Metadata flags of `secret-add` and `secret-set`; `None` leaves a field as it is (set) or
/// unset (add).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretOptions {
    /// `--owner` (add only; ignored by set).
    pub owner: SecretOwner,
    /// `--label`.
    pub label: Option<String>,
    /// `--description`.
    pub description: Option<String>,
    /// `--expire`: an RFC 3339 time or a Go duration (`24h`), passed as given.
    pub expire: Option<String>,
    /// `--rotate`.
    pub rotate: Option<RotatePolicy>,
}

/// Which secret a read or `secret-info-get` means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretRef {
    /// By id.
    Id(SecretId),
    /// By label (the owner's label, or this unit's consumer label).
    Label(String),
    /// By id, setting this unit's consumer (or the owner's) label on the way (`secret-get <id>
    /// --label L`), so later reads and `JUJU_SECRET_LABEL` can use the label.
    IdWithLabel(SecretId, String),
}

/// Which revision `secret-get` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretRead {
    /// The revision this unit tracks (the first read tracks the latest).
    #[default]
    Tracked,
    /// The latest revision, without tracking it (`--peek`).
    Peek,
    /// The latest revision, tracked from now on (`--refresh`).
    Refresh,
}

/// `secret-info-get` for one secret (owner side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretInfo {
    /// The secret.
    pub id: SecretId,
    /// The latest revision.
    pub revision: u32,
    /// The owner label; `None` when unset.
    pub label: Option<String>,
    /// `application` or `unit`.
    pub owner: String,
    /// The description, if any.
    pub description: Option<String>,
    /// The rotation policy, if any.
    pub rotation: Option<RotatePolicy>,
    /// The latest revision's expiry (RFC 3339), if any.
    pub expiry: Option<String>,
}

/// Juju's secret hook tools. Writes (`add`, `set`, `grant`, `revoke`, `remove`) are applied by
/// Juju only when the hook exits 0; reads within the hook see them.
pub trait SecretBackend: ModelBackend {
    /// `secret-add`: a new secret with `content`; returns its id (usable in this hook at once).
    fn secret_add(
        &self,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<SecretId, HookToolError>;

    /// `secret-get <ref> key#base64 ...` for every key: the content of the revision `read` picks.
    /// `keys` are the content keys the caller expects (Juju prints one key per call in base64).
    fn secret_get(
        &self,
        secret: &SecretRef,
        keys: &[&str],
        read: SecretRead,
    ) -> Result<SecretContent, HookToolError>;

    /// `secret-info-get`; `Ok(None)` when Juju says the secret is not found (which is also what a
    /// non-leader sees for its application's secrets).
    fn secret_info_get(&self, secret: &SecretRef) -> Result<Option<SecretInfo>, HookToolError>;

    /// `secret-set <id>`: a new revision with `content` (content is replaced, not merged; an
    /// identical content makes no revision) and/or new metadata.
    fn secret_set(
        &self,
        id: &SecretId,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<(), HookToolError>;

    /// `secret-grant <id> -r <rel> [--unit U]`: lets the remote application (or one unit) read.
    fn secret_grant(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError>;

    /// `secret-revoke <id> -r <rel> [--unit U]`.
    fn secret_revoke(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError>;

    /// `secret-remove <id> [--revision N]`: one revision, or (`None`) the whole secret.
    fn secret_remove(&self, id: &SecretId, revision: Option<u32>) -> Result<(), HookToolError>;

    /// `secret-ids`: the secrets this unit owns (the leader: its application's too).
    fn secret_ids(&self) -> Result<Vec<SecretId>, HookToolError>;
}

/// Refuses content Juju would refuse, before calling it (every backend uses it, so charm code
/// sees the same error whichever backend runs it).
pub fn check_secret_content(tool: &str, content: &SecretContent) -> Result<(), HookToolError> {
    if content.is_empty() {
        return Err(HookToolError::InvalidArgument {
            tool: tool.to_owned(),
            reason: "a secret needs at least one key".to_owned(),
        });
    }
    if let Some(bad) = content.keys().find(|k| !valid_secret_key(k)) {
        return Err(HookToolError::InvalidArgument {
            tool: tool.to_owned(),
            reason: format!(
                "secret key {bad:?} is not valid (Juju wants ^[a-z](-?[a-z0-9]){{2,}}$)"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_normalise_from_three_forms_and_refuse_others() {
        let bare = "cu5t2qvmp25c77fh5ce0";
        for form in [
            bare.to_owned(),
            format!("secret:{bare}"),
            format!("secret://0c3a1e5e-1111-2222-3333-444455556666/{bare}"),
        ] {
            assert_eq!(SecretId::parse(&form).unwrap().as_str(), bare, "{form}");
        }
        for bad in [
            "",
            "secret:",
            "cu5t2qvmp25c77fh5ce",
            "cu5t2qvmp25c77fh5cez",
            "x/y",
        ] {
            assert!(SecretId::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            SecretId::parse(bare).unwrap().uri(),
            format!("secret:{bare}")
        );
    }

    #[test]
    fn content_keys_follow_juju() {
        for ok in ["key", "api-key", "a1b", "abc-d1"] {
            assert!(valid_secret_key(ok), "{ok}");
        }
        for bad in ["", "ab", "Key", "1ab", "a--b", "ab-", "a_b"] {
            assert!(!valid_secret_key(bad), "{bad}");
        }
        let empty = SecretContent::new();
        assert!(check_secret_content("secret-add", &empty).is_err());
    }
}
