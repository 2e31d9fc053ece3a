//! Timing one hook repeatedly (the "hook that only sets status" benchmark).

use super::Simulator;
use super::hooks::Hook;
use crate::error::{Result, SimError};
use std::collections::BTreeMap;
use std::time::Duration;

/// Timings of repeated runs of one hook on one unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BenchResult {
    /// Unit.
    pub unit: String,
    /// Hook name.
    pub hook: String,
    /// Number of runs.
    pub runs: usize,
    /// Median wall time of the handler process.
    pub median: Duration,
    /// Fastest run.
    pub min: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// Slowest run.
    pub max: Duration,
    /// Median number of hook-tool processes per run.
    pub tool_calls_median: usize,
    /// Tool calls per tool name, summed over all runs.
    pub tool_calls: BTreeMap<String, usize>,
}

impl std::fmt::Display for BenchResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let per: Vec<String> = self
            .tool_calls
            .iter()
            .map(|(t, n)| format!("{t} x{}", *n as f64 / self.runs.max(1) as f64))
            .collect();
        write!(
            f,
            "{} on {}: {} runs, median {:.2} ms (min {:.2}, p90 {:.2}, max {:.2}); {} hook-tool processes per run ({})",
            self.hook,
            self.unit,
            self.runs,
            ms(self.median),
            ms(self.min),
            ms(self.p90),
            ms(self.max),
            self.tool_calls_median,
            per.join(", ")
        )
    }
}

impl Simulator {
    /// The [`Hook`] for a hook name on `unit`; relation hooks need the remote unit (or the
    /// remote app for an app-level `relation-changed`, `relation-created`, `relation-broken`).
    pub fn hook_named(&self, unit: &str, name: &str, remote: Option<&str>) -> Result<Hook> {
        let simple = match name {
            "install" => Some(Hook::Install),
            "start" => Some(Hook::Start),
            "stop" => Some(Hook::Stop),
            "remove" => Some(Hook::Remove),
            "config-changed" => Some(Hook::ConfigChanged),
            "upgrade-charm" => Some(Hook::UpgradeCharm),
            "update-status" => Some(Hook::UpdateStatus),
            "leader-elected" => Some(Hook::LeaderElected),
            "leader-settings-changed" => Some(Hook::LeaderSettingsChanged),
            _ => None,
        };
        if let Some(h) = simple {
            return Ok(h);
        }
        let bad = || SimError::Relation(format!("unknown hook {name:?} for unit {unit:?}"));
        let (endpoint, kind) = name.rsplit_once("-relation-").ok_or_else(bad)?;
        let remote_unit = remote.filter(|r| r.contains('/')).map(str::to_owned);
        let remote_app = remote.map(|r| r.split('/').next().unwrap_or(r).to_owned());
        let rel = self.with_model(|m| {
            let app = m.units.get(unit).map(|u| u.app.clone())?;
            m.relations
                .values()
                .find(|r| {
                    r.side_of(&app).is_some_and(|s| s.endpoint == endpoint)
                        && remote_app
                            .as_deref()
                            .is_none_or(|ra| r.remote_app(&app) == Some(ra))
                })
                .map(|r| r.id)
        });
        let rel = rel.ok_or_else(bad)?;
        Ok(match (kind, remote_unit) {
            ("created", _) => Hook::RelationCreated(rel),
            ("broken", _) => Hook::RelationBroken(rel),
            ("changed", r) => Hook::RelationChanged(rel, r),
            ("joined", Some(r)) => Hook::RelationJoined(rel, r),
            ("departed", Some(r)) => Hook::RelationDeparted {
                rel,
                remote: r.clone(),
                departing: r,
            },
            _ => return Err(bad()),
        })
    }

    /// Run `hook` on `unit` `runs` times (settling after each) and report handler wall times
    /// and hook-tool calls per run.
    pub fn bench_hook(&mut self, unit: &str, hook: Hook, runs: usize) -> Result<BenchResult> {
        self.settle()?;
        let mut times = Vec::with_capacity(runs);
        let mut calls = Vec::with_capacity(runs);
        let mut per_tool: BTreeMap<String, usize> = BTreeMap::new();
        let mut name = String::new();
        for _ in 0..runs {
            let start = self.records.len();
            self.enqueue(unit, hook.clone());
            self.settle()?;
            let rec = self.records[start..]
                .iter()
                .find(|r| r.unit == unit && !r.action)
                .ok_or_else(|| SimError::Relation(format!("{hook:?} did not run on {unit:?}")))?;
            if !rec.succeeded() {
                return Err(SimError::Relation(format!(
                    "{} failed on {unit}: {}",
                    rec.hook, rec.stderr
                )));
            }
            name = rec.hook.clone();
            times.push(rec.duration);
            calls.push(rec.calls.len());
            for c in &rec.calls {
                *per_tool.entry(c.tool.clone()).or_default() += 1;
            }
        }
        if times.is_empty() {
            return Err(SimError::Relation("bench needs at least one run".into()));
        }
        times.sort();
        calls.sort();
        let pick = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        Ok(BenchResult {
            unit: unit.to_owned(),
            hook: name,
            runs,
            median: pick(0.5),
            min: times[0],
            p90: pick(0.9),
            max: times[times.len() - 1],
            tool_calls_median: calls[calls.len() / 2],
            tool_calls: per_tool,
        })
    }
}
