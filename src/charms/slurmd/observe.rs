//! What a slurmd hook looks at: config, leadership, the relation's bags, unit state, the node's
//! facts (`slurmd -C`, GPUs) and the files the charm manages.

use super::facts::{NodeFacts, NodeOverrides, parse_slurmd_c};
use super::{MUNGE_KEY, NEW_NODE_STATE, NODE_CONFIG_STATE, SLURMD_DEFAULTS};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use crate::charms::util::config_str;
use crate::gpu::{DetectOptions, Inventory};
use crate::interface::{CLUSTER_INFO_KEY, NODE_KEY, PARTITION_KEY, SLURMD_ENDPOINT};
use juju_runtime::{BagOwner, ModelBackend, RelationId};
use juju_runtime::{Event, HookContext};
use std::collections::BTreeMap;

/// Everything the desired-state function needs.
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
    /// The controller's `cluster_info` value.
    pub cluster_info_raw: Option<String>,
    /// `new_node` from unit state (true until `node-configured`).
    pub new_node: bool,
    /// Operator overrides from `node-config` (an error if the stored value is unreadable).
    pub overrides: Result<NodeOverrides, String>,
    /// `slurmd -C` facts.
    pub facts: Result<NodeFacts, String>,
    /// GPU inventory (an error is an operator problem such as no permission).
    pub inventory: Result<Inventory, String>,
    /// Current munge key file.
    pub munge_key_on_disk: Option<Vec<u8>>,
    /// Current `/etc/default/slurmd`.
    pub defaults_on_disk: Option<Vec<u8>>,
    /// True when the relation is being removed in this hook.
    pub relation_broken: bool,
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
    let mut own_node_raw = None;
    let mut own_partition_raw = None;
    let mut cluster_info_raw = None;
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
        cluster_info_raw = remote
            .get(CLUSTER_INFO_KEY)
            .cloned()
            .filter(|v| !v.is_empty());
    }
    let facts = host
        .run_ok(&Cmd::new("slurmd", ["-C"]))
        .map_err(|e| e.to_string())
        .and_then(|out| parse_slurmd_c(&out.stdout));
    let inventory =
        crate::gpu::detect(&DetectOptions::from_host_root(host.root())).map_err(|e| e.to_string());
    Ok(Observed {
        app_name: ctx.app_name.clone(),
        leader,
        partition_config: config_str(&config, "partition-config"),
        relation,
        own_node_raw,
        own_partition_raw,
        cluster_info_raw,
        new_node: state.get(NEW_NODE_STATE).map(String::as_str) != Some("false"),
        overrides: read_overrides(state.get(NODE_CONFIG_STATE)),
        facts,
        inventory,
        munge_key_on_disk: host.read(MUNGE_KEY)?,
        defaults_on_disk: host.read(SLURMD_DEFAULTS)?,
        relation_broken: matches!(ctx.event, Event::RelationBroken(_)),
    })
}

/// Decodes the stored `node-config` overrides: `{"params": {...}}`.
pub fn read_overrides(raw: Option<&String>) -> Result<NodeOverrides, String> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(NodeOverrides::default());
    };
    let v: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| format!("stored node-config is unreadable: {e}"))?;
    let params: BTreeMap<String, String> = serde_json::from_value(v["params"].clone())
        .map_err(|e| format!("stored node-config params are unreadable: {e}"))?;
    Ok(NodeOverrides { params })
}

/// Encodes overrides for unit state (see [`read_overrides`]).
pub fn write_overrides(ov: &NodeOverrides) -> String {
    serde_json::json!({"params": ov.params}).to_string()
}
