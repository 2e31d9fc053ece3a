//! Why the slurmd charm could not read what a hook needs: typed errors that the shared error
//! types ([`crate::charms::CharmError`], [`crate::charms::action_failure`]) carry as sources.
//! A leaf: it imports no other part of the charm, so the shared types import it without a
//! cycle.

use super::facts::{NotPassedOn, SlurmdCError};
use crate::charms::host::HostError;
use crate::interface::InterfaceError;
use juju_runtime::{HookToolError, SecretId};
use std::sync::Arc;

/// Stored `node-config` overrides that cannot be read back (unit state is written by this
/// charm, but can be damaged or edited by hand, and a later charm may refuse a value an
/// earlier one took). The message names the unit-state key, what in it is wrong and the fix.
#[derive(Debug, Clone, thiserror::Error)]
#[error("stored {key} is unreadable ({source}); run `node-config reset=true` to clear it")]
pub struct StoredStateError {
    /// The unit-state key.
    pub key: &'static str,
    /// What is wrong with it.
    #[source]
    pub source: StoredValueError,
}

/// What is wrong with a stored value ([`StoredStateError`]).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoredValueError {
    /// Not the JSON this charm writes (shared: `Observed` is cloned).
    #[error("{0}")]
    Json(#[source] Arc<serde_json::Error>),
    /// A stored override Slurm would refuse (the rule's message names the value).
    #[error("params[{key}]: {source}")]
    Override {
        /// The stored key, quoted and shortened as the vocabulary shows values.
        key: String,
        /// The rule it breaks.
        #[source]
        source: crate::slurm::ConfigError,
    },
    /// A stored override for a key the relation does not carry.
    #[error(transparent)]
    Key(#[from] NotPassedOn),
}

/// Why this node's facts could not be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FactsError {
    /// `slurmd -C` could not be run or failed.
    #[error(transparent)]
    Run(Arc<HostError>),
    /// Its output is not what Slurm prints.
    #[error(transparent)]
    Output(#[from] SlurmdCError),
}

/// Why the cluster's munge key (the controller's secret that `cluster_info` names) could not
/// be read. Kept typed so the blocked status is made from it once, with the hook tool's or the
/// record's error as its source; it never holds the key.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MungeKeyError {
    /// `secret-get` failed (not granted yet, removed, Juju unreachable).
    #[error(
        "cannot read the munge key from {secret}: {source} (`juju secrets` shows whether it exists and is granted to this application)"
    )]
    Read {
        /// The secret.
        secret: SecretId,
        /// What the hook tool said (shared: `Observed` is cloned).
        #[source]
        source: Arc<HookToolError>,
    },
    /// The secret holds no usable key (missing, or a length munged refuses).
    #[error("{secret}: {source} (run the controller's rotate-key action to write a new key)")]
    Invalid {
        /// The secret.
        secret: SecretId,
        /// What is wrong with its content.
        #[source]
        source: InterfaceError,
    },
}

/// Why this node's state in Slurm (`sinfo`) could not be read: the GPU-health drain and
/// resume then wait for a hook where it can. Kept typed for the warning made from it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NodeDrainError {
    /// `sinfo` could not be run, ran too long or failed.
    #[error(transparent)]
    Run(Arc<HostError>),
    /// Its output is not `STATE|REASON`.
    #[error(transparent)]
    Output(#[from] SinfoError),
}

/// `sinfo` output that does not say this node's state: the charm then leaves its drain alone
/// for this hook. Typed so the warning is made from it at the last moment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinfoError {
    /// No line at all: the controller does not know this node (yet).
    #[error(
        "sinfo printed nothing for node {node} (is it in slurm.conf yet? `scontrol show node {node}`)"
    )]
    Empty {
        /// The node asked about.
        node: String,
    },
    /// A line that is not `STATE|REASON` (another `sinfo` version or an error text).
    #[error(
        "sinfo printed {line:?} for node {node}, not STATE|REASON (check the slurm-client version)"
    )]
    NotStateReason {
        /// The node asked about.
        node: String,
        /// The line printed.
        line: String,
    },
}
