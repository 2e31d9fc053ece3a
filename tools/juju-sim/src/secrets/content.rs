//! Secret content from hook-tool arguments: `key=value`, `key#base64=B64`, `key#file=PATH`
//! and `--file F` (a YAML or JSON string map whose values override the arguments), with
//! Juju's key syntax, size limits and error texts [core/secrets/createsecret.go
//! `CreateSecretData`, `ReadSecretData`, `encodeBase64`; jujuc/secret-add.go `Init`]. Every
//! error here is a usage error (exit 2).
//!
//! Limits (Juju 3.6 and 4.0 alike, `maxValueSizeBytes` and `maxContentSizeBytes`, 1 MB "which
//! will be supported everywhere"): a `#file` file and the `--file` file may hold 1,000,000
//! bytes; each value, measured base64-encoded, and the encoded values of the arguments and of
//! the `--file` file (each source on its own, as `encodeBase64` runs once per source) may
//! total 1,000,000 bytes.

use super::Content;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::collections::BTreeMap;

/// Largest value, base64-encoded (`maxValueSizeBytes`); also the largest `#file` file.
pub const MAX_VALUE: usize = 1000 * 1000;
/// Largest total of one source's encoded values (`maxContentSizeBytes`); also the largest
/// `--file` file.
pub const MAX_TOTAL: usize = 1000 * 1000;

fn key_ok(k: &str) -> bool {
    // ^[a-z](?:-?[a-z0-9]){2,}$
    let b = k.as_bytes();
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

/// One value before encoding: raw bytes, or already base64.
enum Raw {
    Plain(Vec<u8>),
    Base64(String),
}

fn add(out: &mut BTreeMap<String, Raw>, key: &str, raw: Raw) -> Result<(), String> {
    let (key, raw) = match (key.strip_suffix("#base64"), raw) {
        (Some(k), Raw::Plain(v)) => (k, Raw::Base64(String::from_utf8_lossy(&v).into_owned())),
        (_, raw) => (key, raw),
    };
    if !key_ok(key) {
        return Err(format!("key {key:?} not valid"));
    }
    out.insert(key.to_owned(), raw);
    Ok(())
}

/// Encodes one source's values and checks Juju's limits on them (`encodeBase64`).
fn encode(raw: BTreeMap<String, Raw>) -> Result<Content, String> {
    let mut total = 0;
    let mut out = Content::new();
    for (k, v) in raw {
        let encoded = match v {
            Raw::Plain(bytes) => STANDARD.encode(&bytes),
            Raw::Base64(b) => b,
        };
        let size = encoded.len();
        if size > MAX_VALUE {
            return Err(format!(
                "base64 encoded secret content for key {k:?} too large: {size} bytes"
            ));
        }
        total += size;
        out.insert(k, encoded);
    }
    if total > MAX_TOTAL {
        return Err(format!(
            "base64 encoded secret content too large: {total} bytes"
        ));
    }
    Ok(out)
}

/// Parse content arguments and an optional `--file`, reading files through `read`.
pub fn parse(
    args: &[String],
    file: Option<&str>,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> Result<Content, String> {
    let mut raw: BTreeMap<String, Raw> = BTreeMap::new();
    for arg in args {
        // Juju strips base64 padding before looking for the first `=`.
        let stripped = arg.trim_end_matches('=');
        let idx = match stripped.find('=') {
            Some(i) if i >= 1 => i,
            _ => return Err(format!("key value {arg:?} not valid")),
        };
        let (key, value) = (&arg[..idx], &arg[idx + 1..]);
        if let Some(k) = key.strip_suffix("#file") {
            let bytes = read(value)?;
            if bytes.len() > MAX_VALUE {
                return Err(format!(
                    "secret content in file {value:?} too large: {} bytes",
                    bytes.len()
                ));
            }
            add(&mut raw, k, Raw::Plain(bytes))?;
        } else {
            add(&mut raw, key, Raw::Plain(value.as_bytes().to_vec()))?;
        }
    }
    let mut out = encode(raw)?;
    if let Some(f) = file {
        let bytes = read(f)?;
        if bytes.len() > MAX_TOTAL {
            return Err(format!(
                "secret content in file {f:?} too large: {} bytes",
                bytes.len()
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let map: BTreeMap<String, serde_yaml::Value> = serde_yaml::from_str(&text)
            .map_err(|e| format!("cannot parse secret content file {f:?}: {e}"))?;
        let mut from_file: BTreeMap<String, Raw> = BTreeMap::new();
        for (k, v) in map {
            let value = match v {
                serde_yaml::Value::String(s) => s,
                serde_yaml::Value::Number(n) => n.to_string(),
                serde_yaml::Value::Bool(b) => b.to_string(),
                serde_yaml::Value::Null => String::new(),
                _ => {
                    return Err(format!(
                        "secret content file {f:?}: value of {k:?} is not a string"
                    ));
                }
            };
            add(&mut from_file, &k, Raw::Plain(value.into_bytes()))?;
        }
        // the file's values override the arguments' (secret-add.go `Init`)
        out.extend(encode(from_file)?);
    }
    Ok(out)
}

/// Decode a stored value for printing (lossy for non-UTF-8 bytes).
pub fn decode(b64: &str) -> String {
    STANDARD
        .decode(b64)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_files(p: &str) -> Result<Vec<u8>, String> {
        Err(format!("no file {p}"))
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keys() {
        for good in ["abc", "a-b-c", "key1", "pass-word"] {
            assert!(key_ok(good), "{good}");
        }
        for bad in ["ab", "Abc", "1ab", "a--b", "ab-", "a_b", ""] {
            assert!(!key_ok(bad), "{bad}");
        }
    }

    #[test]
    fn forms_and_errors() {
        let c = parse(&args(&["pass=s3cret", "raw#base64=AA=="]), None, &no_files).unwrap();
        assert_eq!(c["pass"], STANDARD.encode("s3cret"));
        assert_eq!(c["raw"], "AA==");
        assert_eq!(
            parse(&args(&["key="]), None, &no_files),
            Err("key value \"key=\" not valid".into())
        );
        assert_eq!(
            parse(&args(&["Bad=x"]), None, &no_files),
            Err("key \"Bad\" not valid".into())
        );
        // 750,001 bytes encode to 1,000,004: over the limit, measured encoded
        let big = format!("big={}", "x".repeat(750_001));
        assert_eq!(
            parse(&args(&[&big]), None, &no_files),
            Err("base64 encoded secret content for key \"big\" too large: 1000004 bytes".into())
        );
    }
}
