//! `goal-state --format=json`: the units Juju means this application and each related one to
//! have, including units added by `add-unit` that have not started (or joined) yet. Charms use
//! it to tell "more units are on their way" from "this is everyone", e.g. to do expensive work
//! once per batch (`ops`: `Application.planned_units()`, `ops.hookcmds.goal_state()`).
//!
//! Juju 3.6 prints `{"units":{U:{status,since}},"relations":{ENDPOINT:{APP:{status,since},
//! "APP/N":{status,since}}}}`: per local endpoint, the remote application (keyed by its name,
//! or its offer URL when cross-model, e.g. `admin/other.slurmd`, with no unit entries) next to
//! its units [apiserver/facades/agent/uniter/uniter.go `goalStateRelations`]. A key is a unit
//! only when it is a unit name by Juju's rule ([`is_unit_name`]): an offer URL holds a `/` too.
//! Statuses are the workload status, `error` while in error and `dying` while dying.

use crate::tool_error::HookToolError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Whether `name` is a unit name by Juju's rule, `application/number`: the application is
/// lower-case letters, digits and single hyphens, starts with a letter and has a letter in each
/// hyphen-separated part; the number is `0` or has no leading zero. Juju 4.0
/// `core/unit/name.go` (`unitPattern`, `Name.Validate`); Juju 3.6 uses the same pattern
/// (`names.IsValidUnit`). An offer URL (`[controller:]user/model.application`) is not one.
pub fn is_unit_name(name: &str) -> bool {
    let Some((app, number)) = name.split_once('/') else {
        return false;
    };
    let app_ok = app.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && app.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && part.bytes().any(|b| b.is_ascii_lowercase())
        });
    let number_ok = number == "0"
        || (number
            .as_bytes()
            .first()
            .is_some_and(|b| (b'1'..=b'9').contains(b))
            && number.bytes().all(|b| b.is_ascii_digit()));
    app_ok && number_ok
}

/// One goal-state entry: a unit's (or a related application's) status and since when.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Goal {
    /// Workload status (`waiting`, `active`, …), `error` in error, `dying` while dying; for a
    /// related application the relation status (`joining`, `joined`, …).
    pub status: String,
    /// Time of that status as Juju prints it (`YYYY-MM-DD hh:mm:ssZ`, UTC).
    #[serde(default)]
    pub since: String,
}

impl Goal {
    /// The unit is on its way out (`remove-unit`); it is not part of the goal.
    pub fn is_dying(&self) -> bool {
        self.status == "dying"
    }
}

/// What `goal-state` printed, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GoalState {
    /// This application's units (alive or dying), the calling unit included.
    #[serde(default)]
    pub units: BTreeMap<String, Goal>,
    /// Per local endpoint: remote application names and remote unit names to their goal.
    #[serde(default)]
    pub relations: BTreeMap<String, BTreeMap<String, Goal>>,
}

impl GoalState {
    /// Parses `goal-state --format=json` output (`null` fields read as empty).
    pub fn from_json(tool: &str, out: &[u8]) -> Result<GoalState, HookToolError> {
        let parsed: Option<GoalState> =
            serde_json::from_slice(out).map_err(|source| HookToolError::BadOutput {
                tool: tool.to_owned(),
                output: String::from_utf8_lossy(out).chars().take(200).collect(),
                source: source.into(),
            })?;
        Ok(parsed.unwrap_or_default())
    }

    /// This application's planned units: those not dying (`ops` `planned_units()`).
    pub fn planned_units(&self) -> usize {
        self.units.values().filter(|g| !g.is_dying()).count()
    }

    /// The remote units Juju means to have on local `endpoint` (any related application),
    /// dying ones left out, sorted by name. Only unit names count ([`is_unit_name`]): a
    /// cross-model application's offer URL is an application, and Juju 3.6 lists none of its
    /// units.
    pub fn expected_remote_units(&self, endpoint: &str) -> Vec<&str> {
        self.relations
            .get(endpoint)
            .into_iter()
            .flat_map(|entries| entries.iter())
            .filter(|(name, goal)| is_unit_name(name) && !goal.is_dying())
            .map(|(name, _)| name.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_juju_output_and_leaves_out_dying_units_and_apps() {
        let out = br#"{"units":{"c/0":{"status":"active","since":"2025-03-01 10:00:05Z"},"c/1":{"status":"dying","since":"2025-03-01 10:00:05Z"}},"relations":{"db":{"compute":{"status":"joined","since":"2025-03-01 10:02:11Z"},"compute/0":{"status":"active","since":"2025-03-01 10:01:40Z"},"compute/1":{"status":"waiting","since":"x"},"compute/2":{"status":"dying","since":"x"}}}}"#;
        let g = GoalState::from_json("goal-state", out).unwrap();
        assert_eq!(g.planned_units(), 1);
        assert_eq!(g.expected_remote_units("db"), ["compute/0", "compute/1"]);
        assert!(g.expected_remote_units("other").is_empty());
        assert_eq!(
            GoalState::from_json("goal-state", b"null").unwrap(),
            GoalState::default()
        );
        let err = GoalState::from_json("goal-state", b"units: {}").unwrap_err();
        assert!(err.to_string().contains("goal-state"), "{err}");
    }

    /// Juju 3.6 keys a cross-model application by its offer URL
    /// [apiserver/facades/agent/uniter/uniter.go `goalStateRelations`: `key, ok =
    /// remoteApplication.URL()`] and lists none of its units (only local applications get
    /// `goalStateUnits`). The URL has a `/`, but it is not a unit.
    #[test]
    fn a_cross_model_application_keyed_by_its_offer_url_is_not_a_unit() {
        let out = br#"{"units":{"slurmctld/0":{"status":"active","since":"2025-03-01 10:00:05Z"}},"relations":{"slurmd":{"admin/other.slurmd":{"status":"joined","since":"2025-03-01 10:02:11Z"},"lxd:admin/gpu.compute":{"status":"joined","since":"2025-03-01 10:02:12Z"},"compute":{"status":"joined","since":"2025-03-01 10:02:11Z"},"compute/0":{"status":"active","since":"2025-03-01 10:01:40Z"}}}}"#;
        let g = GoalState::from_json("goal-state", out).unwrap();
        assert_eq!(g.expected_remote_units("slurmd"), ["compute/0"]);
    }

    #[test]
    fn unit_names_follow_juju_rule() {
        for good in ["a/0", "slurmd/12", "gpu-node-2x/3", "a1-b2/10", "k8s/1"] {
            assert!(is_unit_name(good), "{good}");
        }
        for bad in [
            "admin/other.slurmd",
            "lxd:admin/other.slurmd",
            "a/01",
            "a/",
            "/0",
            "a",
            "A/0",
            "1a/0",
            "a--b/0",
            "a-/0",
            "a-1/0",
            "a/0/1",
            "a/-1",
            "a b/0",
        ] {
            assert!(!is_unit_name(bad), "{bad}");
        }
    }
}
