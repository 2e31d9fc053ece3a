//! The `dcgm-exporter` option as observe reads it: a leaf, so that observe needs nothing of
//! [`super::dcgm`], which acts on what observe read.

/// The config option that runs NVIDIA's DCGM exporter.
pub const OPTION: &str = "dcgm-exporter";

/// The option as configured (`false` when absent or not a boolean).
pub fn wanted(config: &serde_json::Map<String, serde_json::Value>) -> bool {
    matches!(config.get(OPTION), Some(serde_json::Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_true_turns_it_on() {
        let cfg = |v: serde_json::Value| {
            let mut m = serde_json::Map::new();
            m.insert(OPTION.into(), v);
            m
        };
        assert!(wanted(&cfg(serde_json::Value::Bool(true))));
        assert!(!wanted(&cfg(serde_json::Value::Bool(false))));
        assert!(!wanted(&cfg("true".into())));
        assert!(!wanted(&serde_json::Map::new()));
    }
}
