//! `verdicts` (slurmctld app bag): the units the controller left out of slurm.conf, each with a
//! short reason, so a slurmd unit whose node was not enlisted says so in its own status
//! instead of reporting itself active. Only rejected units are listed; the key is absent (set
//! empty) when there are none.

use std::collections::BTreeMap;

/// Relation key of the verdicts.
pub const VERDICTS_KEY: &str = "verdicts";

/// Longest reason published per unit (characters).
pub const MAX_VERDICT_REASON: usize = 200;

/// Largest `verdicts` value a slurmd unit reads (bytes); a larger one is ignored.
pub const MAX_VERDICTS_LEN: usize = 1024 * 1024;

/// Unit name → why its node is not in slurm.conf.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts(pub BTreeMap<String, String>);

impl Verdicts {
    /// The relation value: a compact JSON object, or "" when no unit was rejected.
    pub fn to_relation_value(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let cut: BTreeMap<&str, String> = self
            .0
            .iter()
            .map(|(u, why)| (u.as_str(), cut(why)))
            .collect();
        serde_json::to_string(&cut).unwrap_or_default()
    }

    /// Reads a published value; anything that is not a JSON object of strings (or is over
    /// [`MAX_VERDICTS_LEN`]) reads as no verdicts. A reason's control characters are read
    /// escaped (`\n`): it goes into the unit's status as the controller sent it.
    pub fn from_relation_value(raw: &str) -> Self {
        if raw.len() > MAX_VERDICTS_LEN {
            return Self::default();
        }
        let read: BTreeMap<String, String> = serde_json::from_str(raw).unwrap_or_default();
        Verdicts(
            read.into_iter()
                .map(|(unit, why)| (unit, super::printable(why)))
                .collect(),
        )
    }
}

fn cut(reason: &str) -> String {
    if reason.chars().count() <= MAX_VERDICT_REASON {
        return reason.to_string();
    }
    let mut s: String = reason.chars().take(MAX_VERDICT_REASON - 1).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bounds() {
        let mut v = Verdicts::default();
        assert_eq!(v.to_relation_value(), "");
        v.0.insert("b/1".into(), "x".repeat(5000));
        let raw = v.to_relation_value();
        let back = Verdicts::from_relation_value(&raw);
        assert_eq!(back.0["b/1"].chars().count(), MAX_VERDICT_REASON);
        assert!(Verdicts::from_relation_value("not json").0.is_empty());
    }

    #[test]
    fn a_reason_reads_without_control_characters() {
        let back = Verdicts::from_relation_value(r#"{"b/1":"bad\nslurmd/0: active\u001b[2J"}"#);
        assert_eq!(back.0["b/1"], r"bad\nslurmd/0: active\u{1b}[2J");
    }
}
