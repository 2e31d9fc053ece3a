//! Small helpers shared by both charms.

use serde_json::{Map, Value};

/// A string config option (absent or non-string → empty).
pub fn config_str(config: &Map<String, Value>, key: &str) -> String {
    match config.get(key) {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
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
    fn short_messages() {
        assert_eq!(short("abc", 5), "abc");
        assert_eq!(short("abcdef", 4), "abc…");
    }
}
