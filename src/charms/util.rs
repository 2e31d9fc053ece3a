//! Small helpers shared by both charms.

use crate::juju::backend::{Status, StatusKind};
use serde_json::{Map, Value};

/// Splits `Key=Value Key2=Value2` (space separated, as `partition-config` and `node-config`
/// take it) into pairs. Values cannot contain spaces; an item without `=` is an error.
pub fn parse_key_values(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in text.split_whitespace() {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("{item:?} is not Key=Value"));
        };
        if k.is_empty() || v.is_empty() {
            return Err(format!("{item:?} needs both a key and a value"));
        }
        if out.iter().any(|(seen, _)| seen.eq_ignore_ascii_case(k)) {
            return Err(format!("{k} is given twice"));
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// A string config option (absent or non-string → empty).
pub fn config_str(config: &Map<String, Value>, key: &str) -> String {
    match config.get(key) {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// Builds a [`Status`].
pub fn status(kind: StatusKind, message: impl Into<String>) -> Status {
    Status {
        kind,
        message: message.into(),
    }
}

/// Cuts a status message to something a `juju status` column can show.
pub fn short(message: &str, max: usize) -> String {
    if message.chars().count() <= max {
        return message.to_string();
    }
    let cut: String = message.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values() {
        assert_eq!(
            parse_key_values(" MaxTime=1:00:00  State=UP ").unwrap(),
            vec![
                ("MaxTime".to_string(), "1:00:00".to_string()),
                ("State".to_string(), "UP".to_string())
            ]
        );
        assert!(parse_key_values("MaxTime").is_err());
        assert!(parse_key_values("=x").is_err());
        assert!(parse_key_values("a=1 A=2").is_err());
        assert_eq!(parse_key_values("").unwrap(), vec![]);
    }

    #[test]
    fn short_messages() {
        assert_eq!(short("abc", 5), "abc");
        assert_eq!(short("abcdef", 4), "abc…");
    }
}
