//! The other slurmctld units, listed in slurm.conf as `SlurmctldHost` lines after the leader's,
//! so a job outlives a leader change.
//!
//! Why: a job step's slurmstepd keeps the slurm.conf its slurmd had when the step started, and
//! reports the end of a batch job to the controllers that conf names, in their order
//! (`_send_complete_batch_script_msg` in Slurm's `slurmstepd/mgr.c`, retrying for an hour).
//! Naming only the leader, a job running when leadership moves reports to the old host forever
//! and never finishes (seen on 22.05: `Retrying job complete RPC for StepId=1.batch`). Naming
//! every unit, it tries the old leader, then the next host, the new leader. Those other hosts
//! run no slurmctld ([`super::standby`]): Slurm sees them as backup controllers that are down
//! (`scontrol ping` still exits 0 while one controller answers).
//!
//! Each unit publishes its host name in its bag of the peer relation (`slurmctld-peers`, key
//! `hostname`) where it differs; the leader reads every unit's in the hooks that may change
//! them (peer relation events, leader-elected, upgrade-charm, or no file yet) and keeps them in
//! [`PEERS_FILE`] for the others (a slurmd relation event or update-status costs no extra
//! hook-tool call).

use crate::charms::error::CharmError;
use crate::charms::host::{Host, Owner};
use crate::slurm::types::NodeName;
use juju_runtime::{Bag, BagOwner, Event, HookContext, ModelBackend};

/// The peer endpoint (metadata.yaml `peers:`).
pub const PEER_ENDPOINT: &str = "slurmctld-peers";
/// The key of a unit's host name in its peer bag.
pub const HOSTNAME_KEY: &str = "hostname";
/// Set in a former leader's peer bag once it has stopped its slurmctld (a new value each time):
/// the peer relation-changed it causes on the new leader lets that one take over at once
/// instead of at its next update-status ([`super::takeover`]).
pub const STOPPED_KEY: &str = "slurmctld-stopped";
/// The other units' host names, one a line, as the leader last read them.
pub const PEERS_FILE: &str = "/var/lib/slurm-charms/slurmctld/peers";

/// An event of the peer relation.
fn peer_event(event: &Event) -> bool {
    match event {
        Event::RelationCreated(r)
        | Event::RelationJoined(r)
        | Event::RelationChanged(r)
        | Event::RelationDeparted(r)
        | Event::RelationBroken(r) => r.relation.endpoint == PEER_ENDPOINT,
        _ => false,
    }
}

/// Whether this unit's host name may have changed, or its bag be new: the peer relation's
/// created/joined, start (a reboot), config-changed, upgrade-charm.
fn may_rename(event: &Event) -> bool {
    match event {
        Event::RelationCreated(r) | Event::RelationJoined(r) => {
            r.relation.endpoint == PEER_ENDPOINT
        }
        Event::Start | Event::ConfigChanged | Event::UpgradeCharm => true,
        _ => false,
    }
}

/// Whether the leader reads the other units' bags: a peer relation event (a unit came, went or
/// renamed), leader-elected (a new leader's file may be old) and upgrade-charm.
fn may_change(event: &Event) -> bool {
    peer_event(event) || matches!(event, Event::LeaderElected | Event::UpgradeCharm)
}

/// Publishes this unit's host name in its peer bag where it is not there yet (any unit, in the
/// hooks where it [`may_rename`]; a read of the own bag, and a write only when it differs).
pub fn publish<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    if !may_rename(&ctx.event) {
        return Ok(());
    }
    let hostname = host.hostname()?;
    let hostname = hostname.as_str();
    for rel in backend.relation_ids(PEER_ENDPOINT)? {
        let own = backend.relation_get(&rel, &BagOwner::Unit(ctx.unit_name.clone()))?;
        if own.get(HOSTNAME_KEY).map(String::as_str) != Some(hostname) {
            let data = Bag::from([(HOSTNAME_KEY.to_owned(), hostname.to_owned())]);
            backend.relation_set(&rel, false, &data)?;
        }
    }
    Ok(())
}

/// The other units' host names as the leader observed them, and what [`save`] keeps of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peers {
    /// Sorted, without the leader's own, each a name Slurm accepts.
    pub names: Vec<String>,
    /// [`PEERS_FILE`]'s new text, when it differs from the file.
    pub save: Option<String>,
}

/// The other units' host names (sorted, without `own`, each a name Slurm accepts): read from
/// their peer bags in the hooks that [`may_change`] them, else from [`PEERS_FILE`] (or from
/// the bags when there is no file). A name Slurm refuses is left out with a warning. Reads
/// only: [`save`] keeps them once the hook succeeded.
pub fn observe<B: ModelBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    own: &str,
) -> Result<Peers, CharmError> {
    let kept = host.read(PEERS_FILE)?;
    if let (false, Some(kept)) = (may_change(&ctx.event), &kept) {
        return Ok(Peers {
            names: String::from_utf8_lossy(kept)
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
            save: None,
        });
    }
    let mut names = Vec::new();
    let departing = match &ctx.event {
        Event::RelationDeparted(r) if r.relation.endpoint == PEER_ENDPOINT => {
            r.departing_unit.clone().or(r.remote_unit.clone())
        }
        _ => None,
    };
    for rel in backend.relation_ids(PEER_ENDPOINT)? {
        for unit in backend.relation_list(&rel)? {
            if Some(&unit) == departing.as_ref() {
                continue;
            }
            let bag = backend.relation_get(&rel, &BagOwner::Unit(unit.clone()))?;
            let Some(name) = bag.get(HOSTNAME_KEY).filter(|v| !v.is_empty()) else {
                continue;
            };
            match NodeName::try_from(name.as_str()) {
                Ok(n) if n.as_str() != own => names.push(n.as_str().to_owned()),
                Ok(_) => {}
                Err(e) => tracing::warn!("{unit}'s host name cannot be a SlurmctldHost: {e}"),
            }
        }
    }
    names.sort();
    names.dedup();
    let text: String = names.iter().map(|n| format!("{n}\n")).collect();
    let save = (kept.as_deref() != Some(text.as_bytes())).then_some(text);
    Ok(Peers { names, save })
}

/// Keeps what [`observe`] read (after the hook's other writes succeeded).
pub fn save(host: &Host<'_>, peers: &Peers) -> Result<(), CharmError> {
    if let Some(text) = &peers.save {
        host.write_unsynced(PEERS_FILE, text.as_bytes(), 0o600, Some(Owner::ROOT))?;
    }
    Ok(())
}

/// Tells the other units that this one stopped the slurmctld it ran ([`STOPPED_KEY`], the time
/// in nanoseconds: always a new value, so Juju runs the new leader's peer relation-changed).
pub fn announce_stopped<B: ModelBackend>(backend: &B) -> Result<(), CharmError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for rel in backend.relation_ids(PEER_ENDPOINT)? {
        let data = Bag::from([(STOPPED_KEY.to_owned(), now.to_string())]);
        backend.relation_set(&rel, false, &data)?;
    }
    Ok(())
}
