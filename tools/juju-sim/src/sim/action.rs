//! Running actions (`juju run <unit> <action> k=v`).

use super::Simulator;
use super::exec::{Prepared, find_handler};
use crate::context::{ActionState, HookContext};
use crate::error::{Result, SimError};
use serde_json::Value as Json;

/// The outcome of an action, as `juju run` shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ActionResult {
    /// Action id.
    pub id: u32,
    /// Unit it ran on.
    pub unit: String,
    /// Action name.
    pub name: String,
    /// `completed` or `failed`.
    pub status: String,
    /// Failure message (`action-fail` message, `exit status N`, or not-implemented).
    pub message: String,
    /// Results set with `action-set` (nested map of strings).
    pub results: Json,
    /// `action-log` messages.
    pub logs: Vec<String>,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Process exit code (`-1` when killed by a signal or not run).
    pub return_code: i32,
}

impl Simulator {
    /// Run an action on a unit (`app/leader` addresses the leader). Params are validated
    /// against actions.yaml (unknown action or param, wrong type, missing required → `Err`)
    /// and defaults inserted. Deferred changes commit on exit 0 (even after `action-fail`).
    /// Settles before and after.
    pub fn run_action(&mut self, unit: &str, name: &str, params: Json) -> Result<ActionResult> {
        self.settle()?;
        let unit = match unit.strip_suffix("/leader") {
            Some(app) => self
                .leader(app)
                .ok_or_else(|| SimError::Action(format!("application {app:?} has no leader")))?,
            None => unit.to_owned(),
        };
        let (app, spec, charm_dir, extras, leader) = self.with_model(|m| -> Result<_> {
            let u = m
                .units
                .get(&unit)
                .ok_or_else(|| SimError::UnitNotFound(unit.clone()))?;
            if u.error.is_some() {
                return Err(SimError::UnitInError(unit.clone()));
            }
            let a = &m.apps[&u.app];
            let spec = a.charm.actions.get(name).cloned().ok_or_else(|| {
                SimError::Action(format!("action {name:?} not defined on unit {unit:?}"))
            })?;
            Ok((
                u.app.clone(),
                spec,
                a.charm.dir.clone(),
                u.extras.clone(),
                m.is_leader(&unit),
            ))
        })?;
        let params = match params {
            Json::Null => serde_json::Map::new(),
            Json::Object(m) => m,
            other => {
                return Err(SimError::Action(format!(
                    "action params must be a map, got {other}"
                )));
            }
        };
        let params = crate::actions::validate_params(&spec, &params).map_err(SimError::Action)?;
        let id = self.next_action;
        self.next_action += 1;
        let ctx_id = self.new_context_id(&unit, name);
        let mut ctx = HookContext::new(ctx_id, &unit, &app, name.to_owned(), leader);
        ctx.action = Some(ActionState {
            id,
            name: name.to_owned(),
            params,
            results: serde_json::Map::new(),
            failed: None,
            logs: Vec::new(),
        });
        let env = self.with_model(|m| {
            self.base_env(m, &ctx, &charm_dir, &format!("actions/{name}"), &extras)
        });
        let handler = find_handler(&charm_dir, "actions", name);
        let implemented = handler.is_some();
        let outcome = self.spawn(Prepared {
            ctx,
            env,
            charm_dir,
            handler,
            prefix: extras.command_prefix,
            remote_unit: String::new(),
            argv: None,
        })?;
        let state = outcome.ctx.action.clone();
        let code = outcome.code;
        let stdout = outcome.stdout.clone();
        let stderr = outcome.stderr.clone();
        let committed = self.finish(outcome, None);
        let state = state.ok_or_else(|| SimError::Action("action state vanished".into()))?;
        let (status, message) = if !implemented {
            ("failed", format!("action not implemented on unit {unit:?}"))
        } else {
            match (code, &state.failed) {
                (Some(0), _) if !committed => {
                    ("failed", "committing requested changes failed".to_owned())
                }
                (Some(0), None) => ("completed", String::new()),
                (Some(0), Some(m)) => ("failed", m.clone()),
                (Some(c), _) if c >= 0 => ("failed", format!("exit status {c}")),
                _ => ("failed", "signal: killed".to_owned()),
            }
        };
        self.settle()?;
        Ok(ActionResult {
            id,
            unit,
            name: name.to_owned(),
            status: status.to_owned(),
            message,
            results: Json::Object(state.results),
            logs: state.logs,
            stdout,
            stderr,
            return_code: code.unwrap_or(-1),
        })
    }
}
