//! What a slurmctld action decided: the change to make and the results to report, or why the
//! request is refused. A leaf shared by [`super::actions`] and [`super::rotate_key`].

use crate::charms::action_failure::ActionFailure;
use crate::charms::host::Cmd;
use juju_runtime::{SecretContent, SecretId};
use std::collections::BTreeMap;

/// An action's decision: the change to make and the results to report once it is made, or why
/// the request is refused (then nothing changes).
pub type Decision = Result<(ActionChange, BTreeMap<String, String>), ActionFailure>;

/// What an action changes once decided.
#[derive(Clone, PartialEq, Eq)]
pub enum ActionChange {
    /// Nothing: the action only reads (`show-current-config`).
    Nothing,
    /// A command whose failure is the action's (`action-fail`), not the hook's: `scontrol
    /// update` for `drain` and `resume`.
    Command(Cmd),
    /// `rotate-key`: a new revision of the key secret with this content
    /// ([`super::rotate_key::apply`]).
    NewKeyRevision {
        /// The key secret.
        id: SecretId,
        /// The new revision's content (the new key).
        content: SecretContent,
    },
}

impl std::fmt::Debug for ActionChange {
    /// Never the key: decisions are printed in test failures.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionChange::Nothing => f.write_str("Nothing"),
            ActionChange::Command(cmd) => f.debug_tuple("Command").field(cmd).finish(),
            ActionChange::NewKeyRevision { id, .. } => {
                write!(f, "NewKeyRevision {{ id: {id:?}, content: <redacted> }}")
            }
        }
    }
}
