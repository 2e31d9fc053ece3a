//! Who learns of a refusal: when slurmctld refuses new files (see [`super::accepted`]), the
//! units whose `node` values changed since the last set it accepted are the ones whose change
//! did not reach Slurm ([`super::store::Store::changed_since`]). Each gets a verdict with the
//! daemon's reason, abbreviated (its unit status then says its node was not enlisted and why),
//! and the controller's status names them.

use super::store::Refusal;
use crate::charms::util::short;
use crate::interface::Verdicts;
use std::collections::BTreeMap;

/// Longest part of the daemon's reason quoted in a unit's verdict (characters).
pub const MAX_REASON_IN_VERDICT: usize = 120;

/// Most unit names the controller's status lists; the rest are counted.
const MAX_NAMED: usize = 5;

/// A told unit's verdict: the daemon's reason, abbreviated.
pub fn verdict(reason: &str) -> String {
    format!(
        "slurmctld refused the files with this node's new record ({}); it runs on the last \
         accepted files",
        short(reason, MAX_REASON_IN_VERDICT)
    )
}

/// Adds the verdict of each unit `refusal` tells to `verdicts` (per relation id); a unit
/// already left out for its own reason keeps that reason.
pub fn tell(verdicts: &mut BTreeMap<u32, Verdicts>, refusal: &Refusal) {
    for (unit, relation) in &refusal.units {
        verdicts
            .entry(*relation)
            .or_default()
            .0
            .entry(unit.clone())
            .or_insert_with(|| verdict(&refusal.reason));
    }
}

/// The part of the controller's status naming the told units: ` (not enlisted: a/0, a/1)`.
pub fn named(refusal: &Refusal) -> String {
    if refusal.units.is_empty() {
        return String::new();
    }
    let mut names: Vec<&str> = refusal
        .units
        .keys()
        .map(String::as_str)
        .take(MAX_NAMED)
        .collect();
    let more = refusal.units.len().saturating_sub(MAX_NAMED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    names.sort_unstable();
    format!(" (not enlisted: {}{more})", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_units_keep_their_own_reason_and_are_named() {
        let refusal = Refusal {
            units: BTreeMap::from([("a/0".to_owned(), 1), ("a/1".to_owned(), 1)]),
            reason: "bad".into(),
            ..Refusal::default()
        };
        let mut verdicts = BTreeMap::from([(
            1,
            Verdicts(BTreeMap::from([("a/1".to_owned(), "own".to_owned())])),
        )]);
        tell(&mut verdicts, &refusal);
        assert_eq!(verdicts[&1].0["a/1"], "own");
        assert!(verdicts[&1].0["a/0"].contains("(bad)"));
        assert_eq!(named(&refusal), " (not enlisted: a/0, a/1)");
    }
}
