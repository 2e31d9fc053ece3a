//! Test doubles for the charms' host seam, shared by the `tests/charm_*.rs` files that run charm
//! code in-process (`mod common;`). They live here, not in the product crate, so the shipped
//! binary holds no test code.
#![allow(dead_code)]

pub mod daemon;
pub mod state;

use juju_runtime::{Event, RelationEvent, RelationId};
use slurm_charms::charms::{Cmd, CmdOutput, HostError, Runner};
use std::sync::Mutex;

/// Test runner: records every command and answers from a table (program + first argument →
/// output); anything else succeeds with empty output.
#[derive(Debug, Default)]
pub struct RecordingRunner {
    /// Commands in the order they ran.
    pub calls: Mutex<Vec<Cmd>>,
    /// Canned answers keyed by `"<program> <first arg>"` or `"<program>"`.
    pub answers: Mutex<Vec<(String, CmdOutput)>>,
}

impl RecordingRunner {
    /// Registers the output of commands whose line starts with `prefix`.
    pub fn answer(&self, prefix: &str, out: CmdOutput) {
        if let Ok(mut a) = self.answers.lock() {
            a.push((prefix.to_string(), out));
        }
    }

    /// The command lines run so far.
    pub fn lines(&self) -> Vec<String> {
        self.calls
            .lock()
            .map(|c| c.iter().map(ToString::to_string).collect())
            .unwrap_or_default()
    }

    /// Forgets the recorded commands.
    pub fn clear(&self) {
        if let Ok(mut c) = self.calls.lock() {
            c.clear();
        }
    }
}

impl Runner for RecordingRunner {
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(cmd.clone());
        }
        let line = cmd.to_string();
        let answers = self.answers.lock().map(|a| a.clone()).unwrap_or_default();
        let found = answers
            .into_iter()
            .rev()
            .find(|(p, _)| line.starts_with(p.as_str()));
        Ok(found.map(|(_, o)| o).unwrap_or(CmdOutput {
            code: Some(0),
            ..Default::default()
        }))
    }
}

/// A `relation-changed` event on `rel` from `app` (`unit` `None`: its application bag changed).
pub fn changed(rel: &RelationId, app: &str, unit: Option<&str>) -> Event {
    Event::RelationChanged(RelationEvent {
        relation: rel.clone(),
        remote_app: app.into(),
        remote_unit: unit.map(str::to_string),
        departing_unit: None,
    })
}

/// The commands a slurmd unit runs in its first hook with valid `cluster_info`: facts and
/// slurmd's state (observe; no `scontrol ping`: the cluster's key is not on this host yet, and
/// a ping with another key only makes slurmctld log an authentication error), then munge, the
/// drop-in and slurmd (apply).
pub const FIRST_CONFIGURE: [&str; 5] = [
    "slurmd -C",
    "systemctl is-active slurmd",
    "systemctl restart munge",
    "systemctl daemon-reload",
    "systemctl restart --no-block slurmd",
];
