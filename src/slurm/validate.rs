//! Value validation shared by the model, the parser and operator overrides. Every value that
//! reaches slurm.conf or gres.conf goes through one of these functions, so a hostile value can
//! never add a key, a record or a comment.

use super::error::ConfigError;

/// Longest value accepted anywhere (Slurm reads lines into a 64 KiB buffer).
pub const MAX_VALUE_LEN: usize = 4096;

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::invalid(key, value, reason)
}

fn check_chars(key: &str, value: &str, allow_eq: bool) -> Result<(), ConfigError> {
    if value.is_empty() {
        return Err(bad(key, value, "must not be empty"));
    }
    if value.len() > MAX_VALUE_LEN {
        return Err(bad(
            key,
            value,
            format!("longer than {MAX_VALUE_LEN} bytes"),
        ));
    }
    for (i, c) in value.char_indices() {
        let reason = match c {
            c if c.is_whitespace() => "whitespace is not allowed",
            c if c.is_control() => "control characters are not allowed",
            c if !c.is_ascii() => "only ASCII characters are allowed",
            '#' => "'#' starts a comment in Slurm files",
            '"' => "quotes are not allowed",
            '\\' => "backslashes are not allowed",
            '=' if !allow_eq || i == 0 => "'=' is not allowed here",
            _ => continue,
        };
        return Err(bad(key, value, reason));
    }
    Ok(())
}

/// A Slurm token: non-empty printable ASCII without whitespace, `#`, `=`, `"` or `\`.
pub fn validate_token(key: &str, value: &str) -> Result<(), ConfigError> {
    check_chars(key, value, false)
}

/// A pass-through value: like [`validate_token`], but `=` is allowed after the first character,
/// because option lists such as `SchedulerParameters=bf_interval=60` or
/// `TRESBillingWeights=CPU=1.0,Mem=0.25G` need it. Slurm's lexer takes the whole non-blank run
/// as the value, so an inner `=` cannot start a new key.
pub fn validate_value(key: &str, value: &str) -> Result<(), ConfigError> {
    check_chars(key, value, true)
}

/// Free text written quoted (`Reason="..."`): no control characters (so no newline) and no
/// `"`. `#` and `\` are allowed; the renderer escapes them.
pub fn validate_text(key: &str, value: &str) -> Result<(), ConfigError> {
    if value.is_empty() {
        return Err(bad(key, value, "must not be empty"));
    }
    if value.len() > MAX_VALUE_LEN {
        return Err(bad(
            key,
            value,
            format!("longer than {MAX_VALUE_LEN} bytes"),
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(bad(
            key,
            value,
            "control characters (newline, tab, ...) are not allowed",
        ));
    }
    if value.contains('"') {
        return Err(bad(key, value, "double quotes are not allowed"));
    }
    if value.trim() != value {
        return Err(bad(
            key,
            value,
            "leading or trailing blanks are not allowed",
        ));
    }
    Ok(())
}

/// A key name as Slurm's lexer accepts it: `[A-Za-z0-9_.]+`.
pub fn validate_key(key: &str, context: &str) -> Result<(), ConfigError> {
    if key.is_empty()
        || key.len() > 128
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return Err(ConfigError::InvalidKey {
            key: key.to_string(),
            context: context.to_string(),
            reason: "a key is letters, digits, '_' and '.'".to_string(),
        });
    }
    Ok(())
}

/// A node name: an RFC 1123 host name (labels of letters, digits and `-`, not starting or
/// ending with `-`, at most 63 characters; at most 253 in all), not `ALL` or `DEFAULT`.
pub fn validate_node_name(value: &str) -> Result<(), ConfigError> {
    const KEY: &str = "NodeName";
    if value.is_empty() || value.len() > 253 {
        return Err(bad(KEY, value, "a host name has 1 to 253 characters"));
    }
    if value.eq_ignore_ascii_case("ALL") || value.eq_ignore_ascii_case("DEFAULT") {
        return Err(bad(KEY, value, "ALL and DEFAULT are reserved by Slurm"));
    }
    for label in value.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !ok {
            return Err(bad(
                KEY,
                value,
                "not a valid host name (letters, digits and '-', labels of 1-63 characters)",
            ));
        }
    }
    Ok(())
}

/// A partition, NodeSet or feature name: a token without `,`, `:`, brackets, not `DEFAULT`/`ALL`.
pub fn validate_name(key: &str, value: &str) -> Result<(), ConfigError> {
    validate_token(key, value)?;
    if value.len() > 255 {
        return Err(bad(key, value, "longer than 255 characters"));
    }
    if value.contains([',', ':', '[', ']', '(', ')']) {
        return Err(bad(
            key,
            value,
            "',', ':', brackets and parentheses are not allowed",
        ));
    }
    if value.eq_ignore_ascii_case("DEFAULT") || value.eq_ignore_ascii_case("ALL") {
        return Err(bad(key, value, "ALL and DEFAULT are reserved by Slurm"));
    }
    Ok(())
}

/// A GRES type as NVML naming produces it (ASCII lower case, `' '` → `_`): `[a-z0-9._-]+`
/// with at least one letter, at most 128 characters, and not `no_consume`.
pub fn validate_gres_type(value: &str) -> Result<(), ConfigError> {
    const KEY: &str = "Type";
    if value.is_empty() || value.len() > 128 {
        return Err(bad(KEY, value, "a GRES type has 1 to 128 characters"));
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(bad(
            KEY,
            value,
            "a GRES type is lower-case letters, digits, '.', '_' and '-' (NVML name lower-cased, spaces as '_')",
        ));
    }
    if !value.bytes().any(|b| b.is_ascii_lowercase()) {
        return Err(bad(KEY, value, "a GRES type needs at least one letter"));
    }
    if value == "no_consume" {
        return Err(bad(KEY, value, "no_consume is a Gres flag, not a type"));
    }
    Ok(())
}

/// A GRES name (`gpu`, `mps`, `shard`, ...): `[a-z][a-z0-9_]*`, at most 64 characters.
pub fn validate_gres_name(value: &str) -> Result<(), ConfigError> {
    const KEY: &str = "Name";
    let mut bytes = value.bytes();
    let ok = value.len() <= 64
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !ok {
        return Err(bad(
            KEY,
            value,
            "a GRES name is lower-case letters, digits and '_' (e.g. gpu)",
        ));
    }
    Ok(())
}

/// A device path: absolute, only `[A-Za-z0-9/_.+-]`, no `..` component, no trailing `/`.
pub fn validate_device_path(key: &str, value: &str) -> Result<(), ConfigError> {
    let bytes = value.as_bytes();
    let mut ok = bytes.len() > 1 && bytes.len() <= 1024 && bytes[0] == b'/';
    let (mut len, mut dots) = (0usize, true);
    for &b in bytes.iter().skip(1) {
        match b {
            b'/' => {
                ok &= !(len == 2 && dots);
                (len, dots) = (0, true);
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'+' | b'.' => {
                len += 1;
                dots &= b == b'.';
            }
            _ => ok = false,
        }
    }
    ok &= len > 0 && !(len == 2 && dots);
    if !ok {
        return Err(bad(
            key,
            value,
            "a device file is an absolute path of letters, digits, '/', '_', '.', '+' and '-' (e.g. /dev/nvidia0)",
        ));
    }
    Ok(())
}

/// Parses an unsigned decimal number (digits only, no sign, no blanks).
pub fn parse_u64(key: &str, value: &str) -> Result<u64, ConfigError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(key, value, "expected a non-negative whole number"));
    }
    value
        .parse::<u64>()
        .map_err(|_| bad(key, value, "number is too large"))
}

/// Parses an unsigned decimal number that must fit in 32 bits.
pub fn parse_u32(key: &str, value: &str) -> Result<u32, ConfigError> {
    let n = parse_u64(key, value)?;
    u32::try_from(n).map_err(|_| bad(key, value, "number is too large (at most 4294967295)"))
}

/// Parses a count with an optional `K`/`M`/`G`/`T`/`P` suffix (powers of 1024), as Slurm does
/// for GRES counts.
pub fn parse_count(key: &str, value: &str) -> Result<u64, ConfigError> {
    let (digits, mult) = match value.as_bytes().last() {
        Some(b'k' | b'K') => (&value[..value.len() - 1], 1u64 << 10),
        Some(b'm' | b'M') => (&value[..value.len() - 1], 1u64 << 20),
        Some(b'g' | b'G') => (&value[..value.len() - 1], 1u64 << 30),
        Some(b't' | b'T') => (&value[..value.len() - 1], 1u64 << 40),
        Some(b'p' | b'P') => (&value[..value.len() - 1], 1u64 << 50),
        _ => (value, 1),
    };
    let n = parse_u64(key, digits).map_err(|_| bad(key, value, "expected a count like 4 or 2K"))?;
    n.checked_mul(mult)
        .ok_or_else(|| bad(key, value, "count is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_refuse_injection() {
        for v in [
            "a b", "a\nb", "a#b", "a=b", "a\"b", "a\\b", "", "a\tb", "a\u{7}b", "é",
        ] {
            assert!(validate_token("K", v).is_err(), "{v:?}");
        }
        assert!(validate_token("K", "cons_tres,x:y/z").is_ok());
        assert!(validate_value("K", "bf_interval=60").is_ok());
        assert!(validate_value("K", "=60").is_err());
    }

    #[test]
    fn error_names_key_and_value() {
        let e = validate_token("SelectType", "a b").unwrap_err().to_string();
        assert!(e.contains("SelectType") && e.contains("\"a b\""), "{e}");
    }

    #[test]
    fn node_names() {
        for ok in ["vm", "juju-e33208-1", "gpu-001", "a.b.c", "0node"] {
            validate_node_name(ok).unwrap();
        }
        for no in [
            "", "-a", "a-", "a_b", "a b", "ALL", "default", "a..b", "n[1-2]", "a,b",
        ] {
            assert!(validate_node_name(no).is_err(), "{no:?}");
        }
    }

    #[test]
    fn gres_types() {
        for ok in [
            "tesla_t4",
            "nvidia_a100-sxm4-80gb",
            "nvidia_a100_1g.5gb",
            "h100",
        ] {
            validate_gres_type(ok).unwrap();
        }
        for no in [
            "Tesla_T4",
            "tesla t4",
            "t4:1",
            "",
            "123",
            "no_consume",
            "a,b",
        ] {
            assert!(validate_gres_type(no).is_err(), "{no:?}");
        }
    }

    #[test]
    fn numbers_and_counts() {
        assert_eq!(parse_u64("CPUs", "16").unwrap(), 16);
        assert!(parse_u64("CPUs", "-1").is_err());
        assert!(parse_u64("CPUs", "1.5").is_err());
        assert!(parse_u32("CPUs", "4294967296").is_err());
        assert_eq!(parse_count("Count", "2K").unwrap(), 2048);
        assert!(parse_count("Count", "K").is_err());
    }

    #[test]
    fn text_and_paths() {
        validate_text("Reason", "New node. # not a comment").unwrap();
        assert!(validate_text("Reason", "a\nb").is_err());
        assert!(validate_text("Reason", "a\"b").is_err());
        validate_device_path("File", "/dev/nvidia0").unwrap();
        validate_device_path("File", "/dev/x..y/...").unwrap();
        for no in [
            "dev/nvidia0",
            "/dev/nvidia[0-1]",
            "/dev/a,b",
            "/dev/../x",
            "/..",
            "/dev/..",
            "/dev/",
            "/",
            "/dev/x y",
        ] {
            assert!(validate_device_path("File", no).is_err(), "{no:?}");
        }
    }
}
