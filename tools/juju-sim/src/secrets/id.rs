//! Secret ids: xids of 20 characters from `[0-9a-v]`, and the three URI forms every tool
//! accepts (`secret:<id>`, `secret://<model-uuid>/<id>`, bare `<id>`) [core/secrets/secret.go].

use std::fmt;

const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

/// A validated secret id (20 characters of base32hex, as an xid encodes 12 bytes).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretId(String);

impl SecretId {
    /// A fresh id from 12 random bytes (unguessable, unlike Scenario's counters).
    pub fn random() -> Result<Self, String> {
        let mut bytes = [0u8; 12];
        getrandom::fill(&mut bytes).map_err(|e| format!("cannot mint a secret id: {e}"))?;
        Ok(Self::encode(&bytes))
    }

    /// base32hex of 96 bits, padded with 4 zero bits: exactly xid's text encoding.
    fn encode(bytes: &[u8; 12]) -> Self {
        let mut out = String::with_capacity(20);
        let mut acc: u32 = 0;
        let mut bits = 0;
        for &b in bytes {
            acc = (acc << 8) | u32::from(b);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                out.push(char::from(ALPHABET[((acc >> bits) & 31) as usize]));
            }
        }
        out.push(char::from(ALPHABET[((acc << (5 - bits)) & 31) as usize]));
        SecretId(out)
    }

    /// The smallest id (a range bound for indexes).
    pub(crate) fn min() -> Self {
        SecretId(String::new())
    }

    /// Parse a bare id: 20 characters of `[0-9a-v]` whose last one carries no stray bits.
    pub fn parse(s: &str) -> Option<Self> {
        let ok = s.len() == 20
            && s.bytes().all(|c| ALPHABET.contains(&c))
            && matches!(s.as_bytes().last(), Some(b'0' | b'g'));
        ok.then(|| SecretId(s.to_owned()))
    }

    /// The bare id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `secret:<id>` (the `JUJU_SECRET_ID` form).
    pub fn short_uri(&self) -> String {
        format!("secret:{}", self.0)
    }

    /// `secret://<model-uuid>/<id>` (what `secret-add` prints).
    pub fn long_uri(&self, model_uuid: &str) -> String {
        format!("secret://{model_uuid}/{}", self.0)
    }
}

impl fmt::Display for SecretId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parse any of the three accepted forms; `None` when not valid.
pub fn parse_uri(s: &str) -> Option<SecretId> {
    let bare = if let Some(rest) = s.strip_prefix("secret://") {
        let (uuid, id) = rest.split_once('/')?;
        if uuid.is_empty() {
            return None;
        }
        id
    } else if let Some(rest) = s.strip_prefix("secret:") {
        rest
    } else {
        s
    };
    SecretId::parse(bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_valid_and_distinct() {
        let a = SecretId::random().unwrap();
        let b = SecretId::random().unwrap();
        assert_ne!(a, b);
        assert_eq!(SecretId::parse(a.as_str()), Some(a));
    }

    #[test]
    fn xid_encoding_of_known_bytes() {
        // rs/xid's test vector: 4d88e15b60f486e428412dc9 -> 9m4e2mr0ui3e8a215n4g
        let bytes = [
            0x4d, 0x88, 0xe1, 0x5b, 0x60, 0xf4, 0x86, 0xe4, 0x28, 0x41, 0x2d, 0xc9,
        ];
        assert_eq!(SecretId::encode(&bytes).as_str(), "9m4e2mr0ui3e8a215n4g");
    }

    #[test]
    fn uri_forms() {
        let id = "cu6tkrvnfgsc78ab1k2g";
        for form in [
            id.to_owned(),
            format!("secret:{id}"),
            format!("secret://d6b2b8f3-5c1e-4c8e-9a3b-6a7f0e1c2d3e/{id}"),
        ] {
            assert_eq!(parse_uri(&form).unwrap().as_str(), id, "{form}");
        }
        for bad in [
            "",
            "secret:",
            "cu6tkrvnfgsc78ab1k2",
            "cu6tkrvnfgsc78ab1k2w",
            "secret:///x",
        ] {
            assert!(parse_uri(bad).is_none(), "{bad}");
        }
    }
}
