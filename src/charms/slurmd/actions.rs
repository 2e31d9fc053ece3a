//! slurmd actions: `detect-gpus`, `node-config`, `node-configured`. Each runs after the hook's
//! observation and before the reconcile, so what it changes is published in the same hook.

use super::facts::{NodeOverrides, build_node_record};
use super::observe::{Observed, write_overrides};
use super::{NEW_NODE_STATE, NODE_CONFIG_STATE};
use crate::charms::error::{CharmError, JujuResult};
use crate::interface::node::canonical_node_key;
use crate::juju::action_results::flatten;
use crate::juju::backend::ModelBackend;
use crate::slurm::{OverrideScope, parse_overrides};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Runs the action `name`; a problem with the request is reported with `action-fail`.
pub fn run_action<B: ModelBackend>(
    name: &str,
    backend: &B,
    obs: &mut Observed,
) -> Result<(), CharmError> {
    let outcome = match name {
        "detect-gpus" => detect_gpus(obs),
        "node-config" => {
            let params = backend.action_get().juju()?;
            node_config(backend, obs, &params)
        }
        "node-configured" => node_configured(backend, obs),
        other => Err(format!("the slurmd charm has no action {other:?}")),
    };
    match outcome {
        Ok(results) => {
            let flat = flatten(&results).map_err(|e| CharmError::ActionParam {
                param: "<results>".into(),
                reason: e.to_string(),
            })?;
            backend.action_set(&flat).juju()
        }
        Err(reason) => {
            tracing::warn!("action {name} failed: {reason}");
            backend.action_fail(&reason).juju()
        }
    }
}

fn detect_gpus(obs: &Observed) -> Result<Map<String, Value>, String> {
    let inv = obs.inventory.as_ref().map_err(Clone::clone)?;
    let node = obs
        .facts
        .as_ref()
        .map(|f| f.node.name.to_string())
        .unwrap_or_default();
    match crate::gpu::action_results(inv, &node) {
        Value::Object(m) => Ok(m),
        other => Ok(Map::from_iter([("summary".to_string(), other)])),
    }
}

/// Parses `node-config parameters=…` into overrides ([`crate::slurm::parse_overrides`]: keys
/// case-insensitive, never `NodeName` or `Gres`, which come from the host and its GPUs), limited
/// to the node parameters the relation carries.
pub fn parse_node_config(text: &str) -> Result<NodeOverrides, String> {
    let mut ov = NodeOverrides::default();
    for (k, v) in parse_overrides(text, OverrideScope::Node).map_err(|e| e.to_string())? {
        let key = canonical_node_key(&k)
            .filter(|k| *k != "NodeName" && *k != "Gres")
            .ok_or_else(|| format!("{k} is not a node parameter this charm passes on"))?;
        ov.params.insert(key.to_string(), v);
    }
    Ok(ov)
}

fn node_config<B: ModelBackend>(
    backend: &B,
    obs: &mut Observed,
    params: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let reset = matches!(params.get("reset"), Some(Value::Bool(true)));
    let text = match params.get("parameters") {
        Some(Value::String(s)) => s.clone(),
        None => String::new(),
        Some(other) => return Err(format!("parameters must be a string, got {other}")),
    };
    let ov = if reset {
        NodeOverrides::default()
    } else if text.trim().is_empty() {
        obs.overrides.clone().unwrap_or_default()
    } else {
        let mut merged = obs.overrides.clone().unwrap_or_default();
        merged.params.extend(parse_node_config(&text)?.params);
        merged
    };
    let facts = obs.facts.as_ref().map_err(Clone::clone)?;
    let inv = obs.inventory.as_ref().map_err(Clone::clone)?;
    let record = build_node_record(facts, inv.gres(), &ov, obs.new_node)
        .map_err(|e| format!("these parameters do not fit this node: {e}"))?;
    let state = BTreeMap::from([(NODE_CONFIG_STATE.to_string(), write_overrides(&ov))]);
    backend.state_set(&state).map_err(|e| e.to_string())?;
    obs.overrides = Ok(ov);
    let line: Vec<String> = record
        .parameters()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    Ok(Map::from_iter([(
        "node-parameters".to_string(),
        Value::String(line.join(" ")),
    )]))
}

fn node_configured<B: ModelBackend>(
    backend: &B,
    obs: &mut Observed,
) -> Result<Map<String, Value>, String> {
    let state = BTreeMap::from([(NEW_NODE_STATE.to_string(), "false".to_string())]);
    backend.state_set(&state).map_err(|e| e.to_string())?;
    let was_new = obs.new_node;
    obs.new_node = false;
    let node = obs
        .facts
        .as_ref()
        .map(|f| f.node.name.to_string())
        .unwrap_or_default();
    let message = if was_new {
        format!("{node} leaves DownNodes; slurmctld resumes it")
    } else {
        format!("{node} was already configured")
    };
    Ok(Map::from_iter([(
        "message".to_string(),
        Value::String(message),
    )]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_config_parsing() {
        let ov = parse_node_config("weight=200 features=a,b").unwrap();
        assert_eq!(ov.params["Weight"], "200");
        assert_eq!(ov.params["Features"], "a,b");
        for (bad, why) in [
            ("NodeName=x", "NodeName"),
            ("Gres=gpu:t4:1", "Gres"),
            ("State=DRAIN", "not a node parameter"),
            ("Weight=abc", "Weight"),
        ] {
            let e = parse_node_config(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(parse_node_config("SlurmctldProlog=/x").is_err());
    }
}
