//! The state of one running hook or action: identity, fixed leadership, the deferred changes
//! that are committed only on exit 0, and the record of tool calls.

use crate::model::PortRange;
use crate::secrets::SecretId;
use crate::secrets::pending::PendingSecrets;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// Which bag a pending relation write targets.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BagOwner {
    /// The local unit's bag.
    Unit,
    /// The local application's bag.
    App,
}

/// The relation a relation hook is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationInfo {
    /// Relation id.
    pub id: u32,
    /// Local endpoint.
    pub endpoint: String,
    /// Remote application (own app for peers).
    pub remote_app: String,
    /// Remote unit, empty for created/broken/app-changed.
    pub remote_unit: String,
}

/// A running action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionState {
    /// Action id (small integer, as Juju 3.x).
    pub id: u32,
    /// Action name.
    pub name: String,
    /// Validated parameters with defaults filled.
    pub params: Json,
    /// Results set with `action-set` (nested map of strings).
    pub results: serde_json::Map<String, Json>,
    /// Message given to `action-fail`.
    pub failed: Option<String>,
    /// `action-log` messages.
    pub logs: Vec<String>,
}

/// One port operation requested in this hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortOp {
    /// Open (true) or close (false).
    pub open: bool,
    /// The range.
    pub range: PortRange,
    /// Endpoints (empty = all).
    pub endpoints: BTreeSet<String>,
}

/// One hook-tool invocation, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolCall {
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Exit code.
    pub code: i32,
}

/// A running hook's context.
#[derive(Debug, Clone)]
pub struct HookContext {
    /// `JUJU_CONTEXT_ID`.
    pub id: String,
    /// Unit name.
    pub unit: String,
    /// Application name.
    pub app: String,
    /// Hook name (e.g. `db-relation-changed`) or action name.
    pub hook_name: String,
    /// Relation details in relation hooks.
    pub relation: Option<RelationInfo>,
    /// The relation being broken (excluded from relation-ids), in relation-broken.
    pub broken_relation: Option<u32>,
    /// Action state when running an action.
    pub action: Option<ActionState>,
    /// Leadership, fixed for the whole hook.
    pub leader: bool,
    /// Pending relation writes: (relation, bag) -> key -> value (`None` = delete).
    pub pending_bags: BTreeMap<(u32, BagOwner), BTreeMap<String, Option<String>>>,
    /// Pending state writes (`None` = delete).
    pub pending_state: BTreeMap<String, Option<String>>,
    /// Pending port changes, in order.
    pub pending_ports: Vec<PortOp>,
    /// `juju-reboot` requested (applies on success).
    pub reboot: bool,
    /// Tool calls made so far.
    pub calls: Vec<ToolCall>,
    /// Pending secret changes (committed on exit 0).
    pub secrets: PendingSecrets,
    /// The secret a secret hook is about.
    pub secret: Option<SecretHookInfo>,
}

/// The secret a secret hook (`secret-changed`, `-remove`, `-rotate`, `-expired`) is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHookInfo {
    /// The secret.
    pub id: SecretId,
    /// `JUJU_SECRET_LABEL` (may be empty).
    pub label: String,
    /// `JUJU_SECRET_REVISION` (remove and expired only).
    pub revision: Option<u32>,
}

impl HookContext {
    /// A fresh context.
    pub fn new(id: String, unit: &str, app: &str, hook_name: String, leader: bool) -> Self {
        HookContext {
            id,
            unit: unit.to_owned(),
            app: app.to_owned(),
            hook_name,
            relation: None,
            broken_relation: None,
            action: None,
            leader,
            pending_bags: BTreeMap::new(),
            pending_state: BTreeMap::new(),
            pending_ports: Vec::new(),
            reboot: false,
            calls: Vec::new(),
            secrets: PendingSecrets::default(),
            secret: None,
        }
    }
}
