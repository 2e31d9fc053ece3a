//! The slurmctld (controller) charm.

use crate::charms::error::CharmError;
use crate::charms::host::Host;
use crate::juju::backend::ModelBackend;
use crate::juju::event::HookContext;

/// Runs one slurmctld hook or action.
pub fn handle<B: ModelBackend>(
    _ctx: &HookContext,
    _backend: &B,
    _host: &Host<'_>,
) -> Result<(), CharmError> {
    Ok(())
}
