//! `goal-state [--format yaml|json] [-o FILE]` as Juju 3.6 prints it [jujuc/goal-state.go;
//! apiserver/facades/agent/uniter/uniter.go `goalStateUnits`, `goalStateRelations`]: this
//! application's units (alive or dying, the caller included) and, per local endpoint of each
//! non-peer relation, the remote application with the relation status and each remote unit.

use super::output::{check_yaml_json, emit_typed};
use super::{ToolCx, ToolResult, check_empty};
use crate::flags::{FORMAT, OUTPUT, parse};
use crate::model::{Life, Model};
use crate::secrets::clock::goal_state_time;
use std::collections::BTreeMap;

/// One entry: a status and its time (field order as Juju's struct).
#[derive(Debug, Clone, serde::Serialize)]
struct Goal {
    status: String,
    since: String,
}

#[derive(Debug, serde::Serialize)]
struct GoalState {
    units: BTreeMap<String, Goal>,
    relations: BTreeMap<String, BTreeMap<String, Goal>>,
}

/// A unit's goal-state entry: `error` while in error, `dying` while dying, else its workload
/// status; `since` is the workload status time.
fn unit_goal(model: &Model, unit: &str) -> Option<Goal> {
    let u = model.units.get(unit)?;
    let status = if u.error.is_some() {
        "error".to_owned()
    } else if u.life == Life::Dying {
        "dying".to_owned()
    } else {
        u.status.status.clone()
    };
    Some(Goal {
        status,
        since: goal_state_time(u.status_at),
    })
}

fn app_units(model: &Model, app: &str) -> BTreeMap<String, Goal> {
    model
        .apps
        .get(app)
        .map(|a| {
            a.units
                .iter()
                .filter_map(|u| unit_goal(model, u).map(|g| (u.clone(), g)))
                .collect()
        })
        .unwrap_or_default()
}

/// `goal-state`: each call reads the model afresh.
pub fn goal_state(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_yaml_json(&parsed, "yaml")?;
    check_empty(&parsed.positionals)?;
    let model = &*cx.model;
    let app = &cx.hook.app;
    let mut relations: BTreeMap<String, BTreeMap<String, Goal>> = BTreeMap::new();
    for rel in model.relations.values() {
        if rel.is_peer() || rel.dying {
            continue;
        }
        let (Some(side), Some(remote)) = (rel.side_of(app), rel.remote_app(app)) else {
            continue;
        };
        let entry = relations.entry(side.endpoint.clone()).or_default();
        entry.insert(
            remote.to_owned(),
            Goal {
                status: if rel.joined { "joined" } else { "joining" }.to_owned(),
                since: goal_state_time(rel.status_at),
            },
        );
        entry.extend(app_units(model, remote));
    }
    let state = GoalState {
        units: app_units(model, app),
        relations,
    };
    emit_typed(cx, &parsed, &state, "yaml")
}
