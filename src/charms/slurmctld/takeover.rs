//! A new leader starts slurmctld only once the former leader's has stopped: two primaries on
//! one shared state would both schedule the same queue.
//!
//! Juju elects a new leader when the old one's agent stops renewing its lease, which says
//! nothing about its machine: slurmctld may still run there until that unit's next hook stops
//! it ([`super::standby`]). So a leader that has not run slurmctld yet (no store here: a new
//! leader, or a first deployment) reads the `cluster_info` the application published (any unit
//! can read its own application's bag) and, when it names another host whose slurmctld port
//! still answers, waits: it writes nothing and publishes nothing (the nodes keep the controller
//! that answers them), and says what it waits for. Its next hook asks again: the peer
//! relation-changed the former leader causes once it has stopped its slurmctld
//! ([`super::peers::STOPPED_KEY`]), or update-status at the latest. A host that does not answer
//! or no longer resolves is taken over at once.

use super::store::STORE_PATH;
use crate::charms::error::CharmError;
use crate::charms::host::{Host, port_answers};
use crate::interface::{CLUSTER_INFO_KEY, ClusterInfo, SLURMCTLD_ENDPOINT};
use juju_runtime::{BagOwner, HookContext, ModelBackend, Status, StatusKind};

/// slurmctld's port (`SlurmctldPort`, the charm's).
const SLURMCTLD_PORT: u16 = 6817;

/// The host the application's published `cluster_info` names (the controller the nodes use),
/// from the first relation that has one.
fn published_host<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
) -> Result<Option<String>, CharmError> {
    for rel in backend.relation_ids(SLURMCTLD_ENDPOINT)? {
        let bag = backend.relation_get(&rel, &BagOwner::App(ctx.app_name.clone()))?;
        let Some(raw) = bag.get(CLUSTER_INFO_KEY).filter(|v| !v.is_empty()) else {
            continue;
        };
        match ClusterInfo::from_relation_value(raw) {
            Ok(info) => return Ok(Some(info.slurmctld_host.as_str().to_owned())),
            Err(e) => tracing::warn!("cannot read the published cluster_info: {e}"),
        }
    }
    Ok(None)
}

/// The status to wait with, when this leader must not start slurmctld yet; `None` to go on.
/// Asks Juju only when there is no store here (see the module doc).
pub fn wait<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<Option<Status>, CharmError> {
    if host.exists(STORE_PATH) {
        return Ok(None);
    }
    let Some(former) = published_host(ctx, backend)? else {
        return Ok(None);
    };
    if former == host.hostname()? {
        return Ok(None);
    }
    let addr = format!("{former}:{SLURMCTLD_PORT}");
    match port_answers(&addr) {
        Some(true) => {
            tracing::info!(
                "the former controller {addr} still answers: not starting slurmctld here yet"
            );
            Ok(Some(waiting(&former)))
        }
        Some(false) => {
            tracing::info!("taking over from {former}: its slurmctld does not answer");
            Ok(None)
        }
        None => {
            tracing::warn!("taking over from {former}: its name does not resolve here");
            Ok(None)
        }
    }
}

/// The status while the former leader's slurmctld still answers.
pub fn waiting(former: &str) -> Status {
    Status::new(
        StatusKind::Waiting,
        format!(
            "taking over from {former}: its slurmctld still answers at {former}:{SLURMCTLD_PORT}; \
             this unit starts slurmctld once it has stopped (the former leader stops it in its \
             next hook)"
        ),
    )
}
