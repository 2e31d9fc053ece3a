//! This node's state in Slurm: read with `sinfo` ([`NodeDrain`]), drained or resumed with
//! `scontrol update` (`service_with_timeout`). Shared by the hooks and the health-check
//! program.

use super::errors::{NodeDrainError, SinfoError};
use super::plan_types::ServiceAction;
use crate::charms::host::{Cmd, Host, HostError};
use std::sync::Arc;

/// Start of every drain reason the charm sets: how it recognises its own drains.
pub const DRAIN_PREFIX: &str = "slurmd-charm: ";

/// This node as Slurm sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeDrain {
    /// Slurm's node name.
    pub node: String,
    /// The config server it was asked at (`host:port`).
    pub server: String,
    /// The node is drained or draining.
    pub drained: bool,
    /// The reason Slurm holds (`None` when it has none).
    pub reason: Option<String>,
}

impl NodeDrain {
    /// True when the node is drained with a reason the charm set.
    pub fn drained_by_charm(&self) -> bool {
        self.drained
            && self
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(DRAIN_PREFIX))
    }
}

/// Parses `sinfo -h -N -n <node> -o '%T|%E'` (one line per partition; the first is used):
/// `drained|slurmd-charm: gpu 1 …`, `idle|none`. `Err` names what was wrong with the output.
pub fn parse_sinfo(node: &str, server: &str, out: &str) -> Result<NodeDrain, SinfoError> {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| SinfoError::Empty {
            node: node.to_owned(),
        })?;
    let (state, reason) = line
        .split_once('|')
        .ok_or_else(|| SinfoError::NotStateReason {
            node: node.to_owned(),
            line: line.to_owned(),
        })?;
    let reason = reason.trim();
    Ok(NodeDrain {
        node: node.to_string(),
        server: server.to_string(),
        drained: state.to_ascii_lowercase().contains("drain"),
        reason: (!reason.is_empty() && reason != "none").then(|| reason.to_string()),
    })
}

/// This node's state and reason in Slurm: `sinfo -h -N -n <node> -o '%T|%E'` at `server`.
pub(super) fn read_node_drain(
    host: &Host<'_>,
    node: &str,
    server: &str,
) -> Result<NodeDrain, NodeDrainError> {
    let cmd =
        Cmd::new("sinfo", ["-h", "-N", "-n", node, "-o", "%T|%E"]).env("SLURM_CONF_SERVER", server);
    let out = host
        .run_ok(&cmd)
        .map_err(|e| NodeDrainError::Run(Arc::new(e)))?;
    Ok(parse_sinfo(node, server, &out.stdout)?)
}

/// Drains or resumes this node in Slurm (`scontrol update`, at most `limit`); any other
/// action does nothing here. Shared by the hooks and the health-check program.
pub(crate) fn service_with_timeout(
    host: &Host<'_>,
    action: &ServiceAction,
    limit: std::time::Duration,
) -> Result<(), HostError> {
    match action {
        ServiceAction::DrainNode {
            node,
            reason,
            server,
        } => {
            tracing::warn!("draining {node}: {reason}");
            let node_arg = format!("nodename={node}");
            let reason_arg = format!("reason={reason}");
            host.run_ok(
                &Cmd::new(
                    "scontrol",
                    [
                        "update",
                        node_arg.as_str(),
                        "state=drain",
                        reason_arg.as_str(),
                    ],
                )
                .env("SLURM_CONF_SERVER", server)
                .with_timeout(limit),
            )?;
        }
        ServiceAction::ResumeNode { node, server, why } => {
            tracing::info!("{why}: resuming {node} (drained by the charm)");
            let node_arg = format!("nodename={node}");
            host.run_ok(
                &Cmd::new("scontrol", ["update", node_arg.as_str(), "state=resume"])
                    .env("SLURM_CONF_SERVER", server)
                    .with_timeout(limit),
            )?;
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinfo_lines() {
        let n = parse_sinfo("n1", "c:6817", "drained|slurmd-charm: gpu 1 (x): y\n").unwrap();
        assert!(n.drained_by_charm());
        let n = parse_sinfo("n1", "c:6817", "draining|maintenance\nidle|none\n").unwrap();
        assert!(n.drained && !n.drained_by_charm());
        let n = parse_sinfo("n1", "c:6817", "idle|none").unwrap();
        assert!(!n.drained && n.reason.is_none());
        assert_eq!(
            parse_sinfo("n1", "c:6817", ""),
            Err(SinfoError::Empty { node: "n1".into() })
        );
        assert!(matches!(
            parse_sinfo("n1", "c:6817", "idle"),
            Err(SinfoError::NotStateReason { line, .. }) if line == "idle"
        ));
    }
}
