//! What one slurmd hook will do, decided before anything is done: the plan's types
//! ([`SlurmdPlan`], its [`ServiceAction`]s, the running action's [`ActionPlan`]). Built by
//! [`super::plan`] and its parts, carried out by [`super::apply`].

use super::driver_source::DriverSource;
use super::facts::NodeOverrides;
use crate::charms::action_failure::ActionFailure;
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::interface::GresTypes;
use juju_runtime::Status;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A change to a service or device, in the order the plan lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceAction {
    /// `systemctl restart munge` (the key changed).
    RestartMunge,
    /// `systemctl daemon-reload` (the drop-in changed).
    DaemonReload,
    /// `nvidia-modprobe -c N` for each missing `/dev/nvidiaN`.
    CreateDeviceFiles(Vec<String>),
    /// `systemctl restart slurmd`, and why.
    RestartSlurmd(&'static str),
    /// `systemctl stop slurmd`, and why (the controller went away; a new node's slurmd that
    /// would be restarted waits for `node-configured` instead).
    StopSlurmd(&'static str),
    /// `scontrol update nodename=<node> state=drain reason=<reason>` (a GPU is failing).
    DrainNode {
        /// Slurm node name.
        node: String,
        /// The reason, starting with [`super::node_state::DRAIN_PREFIX`].
        reason: String,
        /// The controller's config server (`host:port`, for `SLURM_CONF_SERVER`).
        server: String,
    },
    /// `scontrol update nodename=<node> state=resume` (the charm's own drain, GPUs healthy).
    /// Install the NVIDIA driver, load it, request a reboot if it does not load
    /// ([`super::driver::install_driver`]).
    InstallDriver {
        /// What to install.
        source: DriverSource,
        /// The boot id now (remembered with the attempt).
        boot_id: String,
    },
    ResumeNode {
        /// Slurm node name.
        node: String,
        /// The controller's config server (`host:port`, for `SLURM_CONF_SERVER`).
        server: String,
        /// Why the charm's drain is over, for the log (`GPUs healthy again`).
        why: &'static str,
    },
    /// After slurmd restarted for a GRES name slurmctld now runs: wait (bounded) until the node
    /// registers right, then resume it if Slurm drained it for a GRES count mismatch meanwhile
    /// ([`super::gres_order::resume_once_registered`]).
    ResumeGresMismatch {
        /// Slurm node name.
        node: String,
        /// The controller's config server (`host:port`, for `SLURM_CONF_SERVER`).
        server: String,
    },
    /// Point [`super::keys::PROGRAM_PATH`] at the charm's binary (a symbolic link,
    /// replaced atomically).
    LinkHealthCheck(std::path::PathBuf),
}

/// Everything one slurmd hook does, decided before anything is done.
#[derive(Debug)]
pub struct SlurmdPlan {
    /// Remove the steady record before anything else is written ([`super::steady`]): a hook
    /// that fails half-way then leaves no record that would let the next update-status skip
    /// its work. The record this hook earns is written after the status, by the caller.
    pub forget_steady: bool,
    /// Files to write (only what differs is written).
    pub files: Vec<FileWrite>,
    /// Files to remove.
    pub remove: Vec<&'static str>,
    /// Service actions, in order.
    pub services: Vec<ServiceAction>,
    /// Relation data to publish (only what changed).
    pub relation_data: Vec<RelationWrite>,
    /// Unit state to store.
    pub state: BTreeMap<String, String>,
    /// The running action's outcome.
    pub action: Option<ActionPlan>,
    /// Lines to log as warnings.
    pub warnings: Vec<String>,
    /// The one status to set.
    pub status: Status,
    /// The GRES names of the record this unit stands for (what its slurmd must load), for
    /// [`super::gres_order`]; `None` while there is no record.
    pub gres_names: Option<GresTypes>,
}

impl SlurmdPlan {
    /// Whether the plan (re)starts slurmd.
    pub fn restarts_slurmd(&self) -> bool {
        self.services
            .iter()
            .any(|s| matches!(s, ServiceAction::RestartSlurmd(_)))
    }

    /// Takes every slurmd (re)start out of the plan; whether there was one.
    pub fn drop_slurmd_restarts(&mut self) -> bool {
        let before = self.services.len();
        self.services
            .retain(|s| !matches!(s, ServiceAction::RestartSlurmd(_)));
        self.services.len() != before
    }
}

/// What the running action adds to the hook's plan.
#[derive(Debug)]
pub struct ActionPlan {
    /// The results to return (`action-set`), or why the request is refused (`action-fail`).
    pub outcome: Result<Map<String, Value>, ActionFailure>,
    /// `node-config`: the overrides this hook's node record is built with.
    pub overrides: Option<NodeOverrides>,
    /// `node-configured`: the node leaves `DownNodes` in this hook's record.
    pub configured: bool,
    /// Unit state to store (`state-set`).
    pub state: BTreeMap<String, String>,
}

impl ActionPlan {
    pub(super) fn results(outcome: Result<Map<String, Value>, ActionFailure>) -> Self {
        ActionPlan {
            outcome,
            overrides: None,
            configured: false,
            state: BTreeMap::new(),
        }
    }
}
