//! Action results: from a nested JSON map to the flat `key.sub=value` arguments `action-set`
//! takes (docs/juju-hook-tools.md §2.6), checked against Juju's rules *before* any tool runs, so a bad key is a
//! typed error naming the key rather than an exit-2 from `action-set` halfway through an action.
//!
//! Rules (Juju `action-set`): every dot-separated segment matches
//! `^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`; no segment may be `stdout`, `stderr`, `stdout-encoding` or
//! `stderr-encoding` (Juju fills those from the process output). Values become strings: strings
//! as-is, numbers and booleans in JSON form, `null` as the empty string, arrays as compact JSON
//! (Juju's results are maps of strings only). An empty nested map contributes no key.
//!
//! Size: `action-set` has no `--file` option, so every result travels on argv. The hook-tool
//! client refuses a single `key=value` over 128 KiB and a total over 1 MiB (Linux `MAX_ARG_STRLEN`
//! and a margin under `ARG_MAX`) with a clear error; bulky output belongs in a file whose path is
//! returned, or in several smaller keys.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Segments Juju reserves for the captured process output.
const RESERVED_SEGMENTS: [&str; 4] = ["stdout", "stderr", "stdout-encoding", "stderr-encoding"];

/// A result key Juju would reject, or two inputs that flatten to the same key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionResultError {
    /// A segment breaks Juju's key rule.
    #[error(
        "action result key {key:?}: segment {segment:?} must start and end with a lowercase letter \
         or digit and contain only lowercase letters, digits and hyphens"
    )]
    InvalidKey {
        /// The full dotted key.
        key: String,
        /// The offending segment.
        segment: String,
    },
    /// A segment is one Juju reserves.
    #[error(
        "action result key {key:?}: {segment:?} is reserved by Juju for the action's captured output"
    )]
    ReservedKey {
        /// The full dotted key.
        key: String,
        /// The reserved segment.
        segment: String,
    },
    /// Two entries of the nested map flatten to the same dotted key (e.g. `{"a.b":…}` and `{"a":{"b":…}}`).
    #[error("action result key {key:?} is given twice (once nested, once dotted)")]
    DuplicateKey {
        /// The dotted key.
        key: String,
    },
}

/// Checks one dotted key against Juju's rules.
pub fn validate_action_result_key(key: &str) -> Result<(), ActionResultError> {
    for segment in key.split('.') {
        if !segment_is_valid(segment) {
            return Err(ActionResultError::InvalidKey {
                key: key.to_owned(),
                segment: segment.to_owned(),
            });
        }
        if RESERVED_SEGMENTS.contains(&segment) {
            return Err(ActionResultError::ReservedKey {
                key: key.to_owned(),
                segment: segment.to_owned(),
            });
        }
    }
    Ok(())
}

/// `^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$` without a regex dependency.
fn segment_is_valid(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
        }
        _ => false,
    }
}

/// Flattens a nested result map to validated dotted keys with string values (see module doc).
pub fn flatten_action_results(
    results: &Map<String, Value>,
) -> Result<BTreeMap<String, String>, ActionResultError> {
    let mut out = BTreeMap::new();
    flatten_into(&mut out, "", results)?;
    Ok(out)
}

fn flatten_into(
    out: &mut BTreeMap<String, String>,
    prefix: &str,
    map: &Map<String, Value>,
) -> Result<(), ActionResultError> {
    for (key, value) in map {
        let full = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if let Value::Object(inner) = value {
            validate_action_result_key(&full)?;
            flatten_into(out, &full, inner)?;
            continue;
        }
        validate_action_result_key(&full)?;
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if out.insert(full.clone(), text).is_some() {
            return Err(ActionResultError::DuplicateKey { key: full });
        }
    }
    Ok(())
}
