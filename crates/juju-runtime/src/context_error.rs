//! Why a hook environment could not be turned into a [`HookContext`](crate::HookContext).
//! Each variant names the variable(s) at fault, so an operator reading `juju debug-log` (or a test
//! author driving the binary by hand) sees what Juju, or the test, exported wrongly.

use crate::secrets::SecretIdError;

/// Missing or contradictory hook environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// `JUJU_DISPATCH_PATH` is unset: the process is not running as a Juju hook at all.
    #[error(
        "JUJU_DISPATCH_PATH is not set: this binary is a Juju charm and only runs as a hook or \
         action, started by Juju's dispatch (or the simulator)"
    )]
    NotInHook,
    /// A variable the hook kind requires is absent (or empty where Juju never exports it empty).
    #[error(
        "{var} is not set, but Juju always exports it for {hook}; run the charm through Juju's \
         dispatch (or the simulator), not by hand"
    )]
    MissingVar {
        /// The variable name.
        var: &'static str,
        /// The hook (`install`, `db-relation-changed`, `actions/x`) being dispatched.
        hook: String,
    },
    /// A variable has a value of the wrong shape.
    #[error("{var}={value:?} is not valid: expected {expected}")]
    InvalidVar {
        /// The variable name.
        var: &'static str,
        /// The value found.
        value: String,
        /// What Juju would have exported.
        expected: &'static str,
    },
    /// `JUJU_DISPATCH_PATH` is neither `hooks/<name>` nor `actions/<name>`.
    #[error(
        "JUJU_DISPATCH_PATH={value:?} is neither hooks/<hook-name> nor actions/<action-name>; \
         Juju >= 2.8 always sets it when it runs `dispatch`"
    )]
    BadDispatchPath {
        /// The value found.
        value: String,
    },
    /// The hook name in `JUJU_DISPATCH_PATH` is not one Juju runs on machine charms.
    #[error("unknown hook {name:?} (from JUJU_DISPATCH_PATH); this charm runtime does not know it")]
    UnknownHook {
        /// The hook name.
        name: String,
    },
    /// `JUJU_HOOK_NAME` disagrees with `JUJU_DISPATCH_PATH`.
    #[error("JUJU_HOOK_NAME={hook_name:?} contradicts JUJU_DISPATCH_PATH=hooks/{dispatch}")]
    HookNameMismatch {
        /// The name from `JUJU_DISPATCH_PATH`.
        dispatch: String,
        /// `JUJU_HOOK_NAME`.
        hook_name: String,
    },
    /// An action was dispatched but `JUJU_HOOK_NAME` is non-empty (Juju never sets it for actions).
    #[error(
        "JUJU_HOOK_NAME={hook_name:?} is set for action {action:?} (JUJU_DISPATCH_PATH=actions/{action}); \
         Juju leaves it empty for actions"
    )]
    HookNameInAction {
        /// The action from `JUJU_DISPATCH_PATH`.
        action: String,
        /// `JUJU_HOOK_NAME`.
        hook_name: String,
    },
    /// `JUJU_ACTION_NAME` disagrees with `JUJU_DISPATCH_PATH`.
    #[error("JUJU_ACTION_NAME={action_name:?} contradicts JUJU_DISPATCH_PATH=actions/{dispatch}")]
    ActionNameMismatch {
        /// The name from `JUJU_DISPATCH_PATH`.
        dispatch: String,
        /// `JUJU_ACTION_NAME`.
        action_name: String,
    },
    /// A relation or storage variable names a different endpoint/storage than the hook's prefix.
    #[error("{var}={value:?} does not belong to hook {hook:?} (its prefix is {prefix:?})")]
    PrefixMismatch {
        /// The variable name.
        var: &'static str,
        /// Its value.
        value: String,
        /// The hook name.
        hook: String,
        /// The hook's endpoint or storage prefix.
        prefix: String,
    },
    /// A variable is set to a non-empty value in a hook where Juju exports it empty or not at all.
    #[error("{var}={value:?} is set in hook {hook:?}, where Juju exports it empty or not at all")]
    UnexpectedVar {
        /// The variable name.
        var: &'static str,
        /// Its value.
        value: String,
        /// The hook name.
        hook: String,
    },
    /// A secret hook's `JUJU_SECRET_ID` is not a secret id: kept apart from [`InvalidVar`]
    /// so the parse error itself ([`SecretIdError`]) stays reachable as the source.
    ///
    /// [`InvalidVar`]: ContextError::InvalidVar
    #[error("{var} in hook {hook:?} is not valid: {source}")]
    InvalidSecretId {
        /// The variable name (`JUJU_SECRET_ID`).
        var: &'static str,
        /// The hook name.
        hook: String,
        /// Why the value is not a secret id (it holds the value, truncated).
        #[source]
        source: SecretIdError,
    },
    /// `JUJU_REMOTE_UNIT` is not a unit of `JUJU_REMOTE_APP`.
    #[error("JUJU_REMOTE_UNIT={unit:?} is not a unit of JUJU_REMOTE_APP={app:?}")]
    RemoteUnitAppMismatch {
        /// `JUJU_REMOTE_UNIT`.
        unit: String,
        /// `JUJU_REMOTE_APP`.
        app: String,
    },
}
