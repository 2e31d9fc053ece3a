//! The unit status this slurmctld unit last set, so a relation event whose outcome leaves the
//! status as it is skips `status-set` (a process and a round trip to the agent; issue 13: the
//! controller's relation events must cost what changed, and the status rarely does).
//!
//! **Record:** [`STATUS_RECORD`] holds the kind word and the message of the last `status-set`
//! that went through [`set_unit_status`]. It is removed before every `status-set` and written
//! after it succeeded, so a hook that dies in between leaves no record, never a wrong one.
//!
//! **When a set is skipped:** only on relation events (`-joined`, `-changed`, `-departed`)
//! ([`may_skip`]), and only when the record equals the status to set. Every other hook sets the
//! status whatever the record says: install and upgrade-charm set maintenance statuses of their
//! own before the final one, the non-leader path sets its standby status through here, and
//! update-status (every 5 minutes by default) re-asserts the status, which bounds how long a
//! status Juju lost could stay unset. Skipping also keeps Juju's `since` at the time the status
//! last changed, as `juju status` readers expect. The record lives under `/var/cache`: losing it
//! costs one `status-set`.

use crate::charms::host::{Host, HostError};
use juju_runtime::{Event, HookContext, ModelBackend, Status, StatusScope};

/// Where the last status set by this unit is kept (kind word, newline, message).
pub const STATUS_RECORD: &str = "/var/cache/slurm-charms/slurmctld/unit-status";

/// Whether `event` may skip a `status-set` that would repeat the recorded status.
pub fn may_skip(event: &Event) -> bool {
    matches!(
        event,
        Event::RelationJoined(_) | Event::RelationChanged(_) | Event::RelationDeparted(_)
    )
}

fn encode(status: &Status) -> String {
    format!("{}\n{}", status.kind.as_str(), status.message)
}

/// Sets the unit status unless `ctx`'s event [`may_skip`] and [`STATUS_RECORD`] already holds
/// it. Returns whether `status-set` ran. A record that cannot be read or written only costs a
/// `status-set` in a later hook (logged); a failing `status-set` is the hook's error.
pub fn set_unit_status<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    status: &Status,
) -> Result<bool, crate::charms::error::CharmError> {
    let wanted = encode(status);
    if may_skip(&ctx.event) {
        if let Ok(Some(recorded)) = host.read(STATUS_RECORD) {
            if recorded == wanted.as_bytes() {
                return Ok(false);
            }
        }
    }
    // no record while the status is being changed: a hook that stops here leaves none (a
    // record that cannot be removed, e.g. under a path that is not a directory, cannot be read
    // either, so it never makes a later hook skip)
    if let Err(e) = host.remove(STATUS_RECORD) {
        tracing::warn!("cannot remove the unit status record ({e})");
    }
    backend.status_set(StatusScope::Unit, status)?;
    if let Err(e) = record(host, &wanted) {
        tracing::warn!("cannot record the unit status ({e}); the next hook sets it again");
    }
    Ok(true)
}

fn record(host: &Host<'_>, wanted: &str) -> Result<bool, HostError> {
    host.write_unsynced(STATUS_RECORD, wanted.as_bytes(), 0o600, None)
}
