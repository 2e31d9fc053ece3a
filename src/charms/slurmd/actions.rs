//! slurmd actions: `detect-gpus`, `node-config`, `node-configured`. An action does not act on
//! its own: from what the hook observed (its parameters included) it works out, purely, what it
//! adds to the hook's plan (overrides or the configured flag the reconcile then uses, unit
//! state to store, results or the reason it is refused). The reconcile publishes its effect in
//! the same hook.

use super::facts::{NodeOverrides, build_node_record};
use super::observe::{Observed, write_overrides};
use super::plan_types::ActionPlan;
use super::{NEW_NODE_STATE, NODE_CONFIG_STATE};
use crate::charms::action_failure::ActionFailure;
use crate::slurm::parse_node_overrides;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Plans the action `name` with the parameters observed.
pub fn plan_action(name: &str, params: &Map<String, Value>, obs: &Observed) -> ActionPlan {
    match name {
        "detect-gpus" => ActionPlan::results(detect_gpus(obs)),
        "node-config" => node_config(obs, params).unwrap_or_else(|e| ActionPlan::results(Err(e))),
        "node-configured" => node_configured(obs),
        other => ActionPlan::results(Err(ActionFailure::Unknown {
            charm: "slurmd",
            name: other.to_owned(),
        })),
    }
}

fn node_name(obs: &Observed) -> String {
    obs.facts
        .as_ref()
        .map(|f| f.node.name.to_string())
        .unwrap_or_default()
}

fn detect_gpus(obs: &Observed) -> Result<Map<String, Value>, ActionFailure> {
    let inv = obs
        .inventory
        .as_ref()
        .map_err(|e| ActionFailure::Gpu(e.clone()))?;
    let mut results = detect_results(
        inv,
        &node_name(obs),
        super::health::report(obs).as_ref(),
        &obs.gpu_sharing,
    );
    if let Some(state) = &obs.health_state {
        results.insert("xids".to_string(), xid_results(state));
    }
    Ok(results)
}

/// `xids.recent.<n>.{xid,pci-bus-id,class,meaning}` (oldest first) and `xids.count.<xid>`:
/// what the health-check program last read from the kernel log.
fn xid_results(state: &super::health_check_files::ProgramState) -> Value {
    let recent: Map<String, Value> = state
        .recent
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let class = match r.class {
                crate::gpu::XidClass::Drain => "drain",
                crate::gpu::XidClass::Count => "count",
                crate::gpu::XidClass::Application => "application",
            };
            let entry = Map::from_iter([
                ("xid".to_string(), Value::from(r.event.xid)),
                (
                    "pci-bus-id".to_string(),
                    Value::from(r.event.pci_bus_id.clone()),
                ),
                ("class".to_string(), Value::from(class)),
                ("meaning".to_string(), Value::from(r.meaning.clone())),
            ]);
            (i.to_string(), Value::Object(entry))
        })
        .collect();
    let count: Map<String, Value> = state
        .counts
        .iter()
        .map(|(xid, n)| (xid.to_string(), Value::from(*n)))
        .collect();
    Value::Object(Map::from_iter([
        ("recent".to_string(), Value::Object(recent)),
        ("count".to_string(), Value::Object(count)),
    ]))
}

/// `detect-gpus` on a host the steady check found unchanged ([`super::steady`]): the last full
/// hook saw these very facts and GPUs and ended active, so no GPU was failing or missing then
/// and none is now; the health part is assessed from the GPUs alone. The XIDs are those the
/// health-check program recorded (`program`, none held), as in full.
pub fn steady_detect_results(
    facts: &super::facts::NodeFacts,
    inv: &crate::gpu::Inventory,
    sharing: &Result<crate::gpu::GpuSharing, crate::gpu::SharingError>,
    program: Option<&super::health_check_files::ProgramState>,
) -> Map<String, Value> {
    let health = crate::gpu::assess(&inv.health, &[]);
    let mut results = detect_results(inv, facts.node.name.as_ref(), Some(&health), sharing);
    if let Some(state) = program {
        results.insert("xids".to_string(), xid_results(state));
    }
    results
}

/// `detect-gpus`'s results: the inventory, the GPUs' health when assessed, and the sharing.
fn detect_results(
    inv: &crate::gpu::Inventory,
    node: &str,
    health: Option<&crate::gpu::HealthReport>,
    sharing: &Result<crate::gpu::GpuSharing, crate::gpu::SharingError>,
) -> Map<String, Value> {
    let mut results = match crate::gpu::action_results(inv, node) {
        Value::Object(m) => m,
        other => Map::from_iter([("summary".to_string(), other)]),
    };
    if let Some(report) = health {
        results.insert("health".to_string(), health_results(report));
    }
    super::sharing::action_results(sharing, inv, node, &mut results);
    results
}

/// `health.status` (`healthy` or `failing`) and `health.problems.<n>` (the drain reason's words).
fn health_results(report: &crate::gpu::HealthReport) -> Value {
    let mut m = Map::new();
    let status = if report.healthy() {
        "healthy"
    } else {
        "failing"
    };
    m.insert("status".into(), status.into());
    if !report.healthy() {
        let problems: Map<String, Value> = report
            .problems
            .iter()
            .enumerate()
            .map(|(i, p)| (i.to_string(), p.to_string().into()))
            .collect();
        m.insert("problems".into(), Value::Object(problems));
    }
    Value::Object(m)
}

/// Parses `node-config parameters=…` into checked, typed overrides
/// ([`crate::slurm::parse_node_overrides`]: keys case-insensitive, never `NodeName` or `Gres`,
/// which come from the host and its GPUs), limited to the node parameters the relation carries
/// ([`NodeOverrides::insert`]).
pub fn parse_node_config(text: &str) -> Result<NodeOverrides, ActionFailure> {
    let mut ov = NodeOverrides::default();
    for o in parse_node_overrides(text)? {
        ov.insert(o).map_err(|e| ActionFailure::Invalid {
            param: "parameters",
            reason: e.to_string(),
        })?;
    }
    Ok(ov)
}

fn node_config(obs: &Observed, params: &Map<String, Value>) -> Result<ActionPlan, ActionFailure> {
    let reset = matches!(params.get("reset"), Some(Value::Bool(true)));
    let text = match params.get("parameters") {
        Some(Value::String(s)) => s.clone(),
        None => String::new(),
        Some(other) => {
            return Err(ActionFailure::Invalid {
                param: "parameters",
                reason: format!("must be a string, got {other}"),
            });
        }
    };
    let stored = || obs.overrides.clone().map_err(ActionFailure::StoredState);
    let ov = if reset {
        NodeOverrides::default()
    } else if text.trim().is_empty() {
        stored()?
    } else {
        let mut merged = stored().unwrap_or_default();
        merged.merge(parse_node_config(&text)?);
        merged
    };
    let facts = obs
        .facts
        .as_ref()
        .map_err(|e| ActionFailure::Facts(e.clone()))?;
    let inv = obs
        .inventory
        .as_ref()
        .map_err(|e| ActionFailure::Gpu(e.clone()))?;
    // A GPU feature Slurm would refuse is left out; the reconcile in this hook warns of it.
    let features = if obs.gpu_features {
        crate::gpu::gpu_features(inv).features
    } else {
        Vec::new()
    };
    let with_features = ov.clone().with_gpu_features(&features);
    let headroom = obs
        .memory_headroom
        .clone()
        .map_err(ActionFailure::MemoryHeadroom)?;
    // Refused when the controller would refuse it, or when it is larger than the controller
    // accepts: the overrides are then not stored and the published record stays.
    let record = build_node_record(facts, inv.gres(), &with_features, headroom, obs.new_node)
        .map_err(ActionFailure::NodeRecord)?;
    let line: Vec<String> = record
        .parameters()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Ok(ActionPlan {
        outcome: Ok(Map::from_iter([(
            "node-parameters".to_string(),
            Value::String(line.join(" ")),
        )])),
        state: BTreeMap::from([(NODE_CONFIG_STATE.to_string(), write_overrides(&ov))]),
        overrides: Some(ov),
        configured: false,
    })
}

fn node_configured(obs: &Observed) -> ActionPlan {
    let node = node_name(obs);
    let message = if obs.new_node {
        format!("{node} leaves DownNodes; slurmctld resumes it")
    } else {
        format!("{node} was already configured")
    };
    ActionPlan {
        outcome: Ok(Map::from_iter([(
            "message".to_string(),
            Value::String(message),
        )])),
        overrides: None,
        configured: true,
        state: BTreeMap::from([(NEW_NODE_STATE.to_string(), "false".to_string())]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_config_parsing() {
        let ov = parse_node_config("weight=200 features=a,b").unwrap();
        let value = |key| ov.get(key).map(|o| o.value());
        assert_eq!(
            (value("Weight"), value("Features")),
            (Some("200"), Some("a,b"))
        );
        assert_eq!(
            ov.get("Features").map(|o| o.setting().clone()),
            Some(crate::slurm::NodeSetting::Features(
                crate::slurm::types::Feature::parse_list("a,b").unwrap()
            ))
        );
        for (bad, why) in [
            ("NodeName=x", "NodeName"),
            ("Gres=gpu:t4:1", "Gres"),
            ("State=DRAIN", "not a node parameter"),
            ("Feature=a", "not a node parameter"),
            ("Weight=abc", "Weight"),
            ("Features=ib,a&b", "constraint operator"),
        ] {
            let e = juju_runtime::error_chain(&parse_node_config(bad).unwrap_err());
            assert!(e.contains(why) && e.contains("parameters"), "{bad}: {e}");
        }
        assert!(parse_node_config("SlurmctldProlog=/x").is_err());
    }
}
