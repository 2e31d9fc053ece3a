//! Value validation shared by the model, the parser and operator overrides. Every value that
//! reaches slurm.conf or gres.conf goes through one of these functions, so a hostile value can
//! never add a key, a record or a comment.

use super::error::ConfigError;

/// Longest single value (one `Key=Value`'s value, or a name) accepted in slurm.conf or
/// gres.conf. A list such as `Features` is checked item by item; how long a whole relation
/// record may be is [`crate::interface::MAX_RECORD_LEN`].
pub const MAX_CONF_VALUE_LEN: usize = 4096;

fn bad(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::invalid(key, value, reason)
}

/// Non-empty and at most [`MAX_CONF_VALUE_LEN`] bytes.
fn check_len(key: &str, value: &str) -> Result<(), ConfigError> {
    if value.is_empty() {
        return Err(bad(key, value, "must not be empty"));
    }
    if value.len() > MAX_CONF_VALUE_LEN {
        return Err(bad(
            key,
            value,
            format!("longer than {MAX_CONF_VALUE_LEN} bytes"),
        ));
    }
    Ok(())
}

fn check_chars(key: &str, value: &str, allow_eq: bool) -> Result<(), ConfigError> {
    check_len(key, value)?;
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

/// A partition, NodeSet or feature name: the rule of [`crate::slurm::types::PartitionName`]
/// (a token without `,`, `:`, brackets, not `DEFAULT`/`ALL`), for a name kept as text because
/// it is not a partition (cluster, NodeSet, feature).
pub fn validate_name(key: &str, value: &str) -> Result<(), ConfigError> {
    crate::slurm::types::PartitionName::try_from(value)
        .map(drop)
        .map_err(|e| bad(key, value, e.reason))
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
    fn numbers_and_counts() {
        assert_eq!(parse_u64("CPUs", "16").unwrap(), 16);
        assert!(parse_u64("CPUs", "-1").is_err());
        assert!(parse_u64("CPUs", "1.5").is_err());
        assert!(parse_u32("CPUs", "4294967296").is_err());
    }
}
