//! What a slurmd hook looks at (reads only): config, leadership, the relation's bags, unit
//! state, the action's parameters, the node's facts (`slurmd -C`, GPUs), the files the charm
//! manages, which GPU device files exist, whether slurmd runs, and the controller's answer.

use super::facts::{NodeFacts, NodeOverrides, parse_slurmd_c};
use super::probe::{ControllerProbe, probe_controller};
use super::{MUNGE_KEY, NEW_NODE_STATE, NODE_CONFIG_STATE, SLURMD_DEFAULTS, SLURMD_DROP_IN};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host, HostError};
use crate::charms::util::config_str;
use crate::gpu::{DetectOptions, GpuError, Inventory};
use crate::interface::{
    CLUSTER_INFO_KEY, ClusterInfo, InterfaceError, NODE_KEY, PARTITION_KEY, SLURMD_ENDPOINT,
};
use juju_runtime::{BagOwner, Event, HookContext, ModelBackend, RelationId};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Everything the plan needs.
#[derive(Debug, Clone)]
pub struct Observed {
    /// This unit's application name (the partition name).
    pub app_name: String,
    /// Leadership.
    pub leader: bool,
    /// `partition-config`.
    pub partition_config: String,
    /// The slurmctld relation, if any (absent in its own relation-broken).
    pub relation: Option<RelationId>,
    /// Our published `node` value.
    pub own_node_raw: Option<String>,
    /// Our app's published `partition` value (leader only).
    pub own_partition_raw: Option<String>,
    /// The controller's `cluster_info`, parsed (absent when not published yet).
    pub cluster_info: Option<Result<ClusterInfo, InterfaceError>>,
    /// `new_node` from unit state (true until `node-configured`).
    pub new_node: bool,
    /// Operator overrides from `node-config`.
    pub overrides: Result<NodeOverrides, StoredStateError>,
    /// `slurmd -C` facts.
    pub facts: Result<NodeFacts, FactsError>,
    /// GPU inventory (an error is an operator problem such as no permission).
    pub inventory: Result<Inventory, Arc<GpuError>>,
    /// The action being run and its parameters (`action-get`), if this is an action.
    pub action: Option<(String, Map<String, Value>)>,
    /// Current munge key file.
    pub munge_key_on_disk: Option<Vec<u8>>,
    /// Current `/etc/default/slurmd`.
    pub defaults_on_disk: Option<Vec<u8>>,
    /// Current systemd drop-in for slurmd.
    pub drop_in_on_disk: Option<Vec<u8>>,
    /// GPU device files (`/dev/nvidia*`) that exist.
    pub device_files_present: BTreeSet<String>,
    /// `systemctl is-active slurmd` (asked only once the controller is known).
    pub slurmd_active: bool,
    /// The controller's answer at the config server `cluster_info` names, when it is valid.
    pub controller: Option<ControllerProbe>,
    /// True when the relation is being removed in this hook.
    pub relation_broken: bool,
}

/// Stored unit state that cannot be read back.
#[derive(Debug, Clone, thiserror::Error)]
#[error("stored {key} is unreadable ({reason})")]
pub struct StoredStateError {
    /// The unit-state key.
    pub key: &'static str,
    /// The decoder's message.
    pub reason: String,
}

/// Why this node's facts could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FactsError {
    /// `slurmd -C` could not be run or failed.
    #[error(transparent)]
    Run(Arc<HostError>),
    /// Its output is not what Slurm prints.
    #[error("{0}")]
    Output(String),
}

/// Reads the model and the host.
pub fn observe<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<Observed, CharmError> {
    let leader = backend.is_leader()?;
    let config = backend.config_get()?;
    let state = backend.state_get()?;
    let relation = backend.relation_ids(SLURMD_ENDPOINT)?.into_iter().next();
    let action = match &ctx.event {
        Event::Action(a) if a.name == "node-config" => {
            Some((a.name.clone(), backend.action_get()?))
        }
        Event::Action(a) => Some((a.name.clone(), Map::new())),
        _ => None,
    };
    let mut own_node_raw = None;
    let mut own_partition_raw = None;
    let mut cluster_info = None;
    if let Some(rel) = &relation {
        let own = backend.relation_get(rel, &BagOwner::Unit(ctx.unit_name.clone()))?;
        own_node_raw = own.get(NODE_KEY).cloned();
        if leader {
            let app = backend.relation_get(rel, &BagOwner::App(ctx.app_name.clone()))?;
            own_partition_raw = app.get(PARTITION_KEY).cloned();
        }
        let remote_app = match &ctx.event {
            Event::RelationChanged(r)
            | Event::RelationJoined(r)
            | Event::RelationCreated(r)
            | Event::RelationDeparted(r)
                if r.relation == *rel =>
            {
                r.remote_app.clone()
            }
            _ => backend.relation_remote_app(rel)?,
        };
        let remote = backend.relation_get(rel, &BagOwner::App(remote_app))?;
        cluster_info = remote
            .get(CLUSTER_INFO_KEY)
            .filter(|v| !v.is_empty())
            .map(|raw| ClusterInfo::from_relation_value(raw));
    }
    let facts = match host.run_ok(&Cmd::new("slurmd", ["-C"])) {
        Ok(out) => parse_slurmd_c(&out.stdout).map_err(FactsError::Output),
        Err(e) => Err(FactsError::Run(Arc::new(e))),
    };
    let inventory =
        crate::gpu::detect(&DetectOptions::from_host_root(host.root())).map_err(Arc::new);
    let (slurmd_active, controller) = match &cluster_info {
        Some(Ok(info)) => (
            {
                // "activating": started and waiting for its config (Type=notify, 23.11+)
                let state = host.run(&Cmd::new("systemctl", ["is-active", "slurmd"]))?;
                state.success() || state.stdout.trim() == "activating"
            },
            Some(probe_controller(host, &info.conf_server())),
        ),
        _ => (false, None),
    };
    Ok(Observed {
        app_name: ctx.app_name.clone(),
        leader,
        partition_config: config_str(&config, "partition-config"),
        relation,
        own_node_raw,
        own_partition_raw,
        cluster_info,
        new_node: state.get(NEW_NODE_STATE).map(String::as_str) != Some("false"),
        overrides: read_overrides(state.get(NODE_CONFIG_STATE)),
        facts,
        inventory,
        action,
        munge_key_on_disk: host.read(MUNGE_KEY)?,
        defaults_on_disk: host.read(SLURMD_DEFAULTS)?,
        drop_in_on_disk: host.read(SLURMD_DROP_IN)?,
        device_files_present: device_files(host)?,
        slurmd_active,
        controller,
        relation_broken: matches!(ctx.event, Event::RelationBroken(_)),
    })
}

/// The `/dev/nvidia*` files that exist on the host.
pub fn device_files(host: &Host<'_>) -> Result<BTreeSet<String>, CharmError> {
    let dir = host.path("/dev");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(source) => return Err(HostError::Read { path: dir, source }.into()),
    };
    Ok(entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.starts_with("nvidia"))
        .map(|name| format!("/dev/{name}"))
        .collect())
}

/// Decodes the stored `node-config` overrides: `{"params": {...}}`.
pub fn read_overrides(raw: Option<&String>) -> Result<NodeOverrides, StoredStateError> {
    #[derive(serde::Deserialize)]
    struct Stored {
        params: BTreeMap<String, String>,
    }
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(NodeOverrides::default());
    };
    let stored: Stored = serde_json::from_str(raw).map_err(|e| StoredStateError {
        key: NODE_CONFIG_STATE,
        reason: e.to_string(),
    })?;
    Ok(NodeOverrides {
        params: stored.params,
    })
}

/// Encodes overrides for unit state (see [`read_overrides`]).
pub fn write_overrides(ov: &NodeOverrides) -> String {
    serde_json::json!({"params": ov.params}).to_string()
}
