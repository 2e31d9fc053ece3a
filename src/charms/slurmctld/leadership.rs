//! Leadership: exactly one primary controller, the leader's. A standby that stops what it ran,
//! a new leader that waits for the former one's slurmctld, the peer relation that names every
//! controller host, and the shared state directory a new leader takes over.
//!
//! # Standby
//!
//! A slurmctld unit that is not the leader never runs slurmctld. Exactly one primary runs, the
//! leader's; with two, both would schedule the same queue and write the same state.
//!
//! Juju moves leadership without a hook on the unit that lost it (Juju 4; Juju 3.x may send it
//! `leader-settings-changed`), so every hook of a non-leader checks: a unit that ran slurmctld as
//! the leader (its store, its reload marker or a slurm.conf the charm wrote is here) stops it
//! (`systemctl stop slurmctld`), then removes the slurm.conf it wrote (Debian's unit starts
//! slurmctld only where `/etc/slurm/slurm.conf` exists, so it does not come back at the next
//! boot) and its store (were it elected again, it rebuilds from Juju and restarts slurmctld on
//! fresh files), and tells the new leader through its peer bag, which then takes over at once
//! ([`STOPPED_KEY`]). A unit that never led has none of those and runs no command.
//!
//! The status says what it waits for: leadership, with the state it would take over
//! (`state-save-location` on shared storage, see [Shared state](#shared-state)); blocked when it
//! could not take over without losing every job (the state on the leader's own disk) or when the
//! shared directory is not mounted here.
//!
//! # Takeover
//!
//! A new leader starts slurmctld only once the former leader's has stopped: two primaries on
//! one shared state would both schedule the same queue.
//!
//! Juju elects a new leader when the old one's agent stops renewing its lease, which says
//! nothing about its machine: slurmctld may still run there until that unit's next hook stops
//! it ([Standby](#standby)). So a leader that has not run slurmctld yet (no store here: a new
//! leader, or a first deployment) reads the `cluster_info` the application published (any unit
//! can read its own application's bag) and, when it names another host whose slurmctld port
//! still answers, waits: it writes nothing and publishes nothing (the nodes keep the controller
//! that answers them), and says what it waits for. Its next hook asks again: the peer
//! relation-changed the former leader causes once it has stopped its slurmctld
//! ([`STOPPED_KEY`]), or update-status at the latest. A host that does not answer
//! or no longer resolves is taken over at once.
//!
//! # Peers
//!
//! The other slurmctld units, listed in slurm.conf as `SlurmctldHost` lines after the leader's,
//! so a job outlives a leader change.
//!
//! Why: a job step's slurmstepd keeps the slurm.conf its slurmd had when the step started, and
//! reports the end of a batch job to the controllers that conf names, in their order
//! (`_send_complete_batch_script_msg` in Slurm's `slurmstepd/mgr.c`, retrying for an hour).
//! Naming only the leader, a job running when leadership moves reports to the old host forever
//! and never finishes (seen on 22.05: `Retrying job complete RPC for StepId=1.batch`). Naming
//! every unit, it tries the old leader, then the next host, the new leader. Those other hosts
//! run no slurmctld ([Standby](#standby)): Slurm sees them as backup controllers that are down
//! (`scontrol ping` still exits 0 while one controller answers).
//!
//! Each unit publishes its host name in its bag of the peer relation (`slurmctld-peers`, key
//! `hostname`) where it differs; the leader reads every unit's in the hooks that may change
//! them (peer relation events, leader-elected, upgrade-charm, or no file yet) and keeps them in
//! [`PEERS_FILE`] for the others (a slurmd relation event or update-status costs no extra
//! hook-tool call).
//!
//! # Shared state
//!
//! `state-save-location`: where slurmctld keeps its state (running and queued jobs, the next job
//! id, reservations), and so whether another slurmctld unit can take over when Juju moves
//! leadership.
//!
//! Only the leader runs slurmctld ([Standby](#standby)). With the default (empty) the state is on
//! the leader's own disk, `/var/lib/slurm/slurmctld`: a new leader would start from nothing, so
//! every other unit blocks and says so. Set to a directory on shared storage (NFS, CephFS, …)
//! mounted at that path on every slurmctld unit, the new leader's slurmctld starts from the state
//! the former one saved there.

use super::key_secret::{EventSecret, SecretAction, housekeeping};
use super::store::{RELOAD_PENDING, STORE_PATH};
use super::{GRES_CONF, SLURM_CONF};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host, Owner, port_answers};
use crate::charms::util::{config_str, short};
use crate::interface::{CLUSTER_INFO_KEY, ClusterInfo, SLURMCTLD_ENDPOINT};
use crate::slurm::GlobalKey;
use crate::slurm::render::HEADER;
use crate::slurm::types::NodeName;
use juju_runtime::{Bag, BagOwner, Event, HookContext, ModelBackend, SecretBackend};
use juju_runtime::{Status, StatusKind};
use serde_json::{Map, Value};

// ---- Standby: a unit that is not the leader ----

/// What a non-leader looks at (reads only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyObserved {
    /// `state-save-location`, checked on this machine.
    pub state_save: Result<StateSave, StateSaveError>,
    /// The leader-only files present here ([`LEADER_FILES`]).
    pub leader_files: Vec<&'static str>,
    /// The charm's slurm.conf and gres.conf present here (written when this unit led).
    pub charm_files: Vec<&'static str>,
}

/// What a non-leader does in a hook (the plan, pure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyPlan {
    /// The secret housekeeping the event asks for.
    pub secrets: Vec<SecretAction>,
    /// `systemctl stop slurmctld`: this unit ran it as the leader.
    pub stop_slurmctld: bool,
    /// Files to remove once slurmctld is stopped (the charm's own only).
    pub remove: Vec<&'static str>,
    /// The one status to set.
    pub status: Status,
}

/// Reads the config option and which of the leader's files are here.
pub fn standby_observe(config: &Map<String, Value>, host: &Host<'_>) -> StandbyObserved {
    let state_save = state_save_observe(&config_str(config, STATE_SAVE_OPTION), |path| {
        host.path(path).is_dir()
    });
    let leader_files = LEADER_FILES
        .into_iter()
        .filter(|p| host.exists(p))
        .collect();
    StandbyObserved {
        state_save,
        leader_files,
        charm_files: charm_files(host),
    }
}

/// slurm.conf and gres.conf where the charm wrote them (its header): an operator's file is not
/// ours to remove.
fn charm_files(host: &Host<'_>) -> Vec<&'static str> {
    [SLURM_CONF, GRES_CONF]
        .into_iter()
        .filter(|p| {
            host.read(p)
                .ok()
                .flatten()
                .is_some_and(|b| b.starts_with(HEADER.as_bytes()))
        })
        .collect()
}

/// Plans a non-leader's hook (pure).
pub fn standby_plan(obs: StandbyObserved, event: Option<&EventSecret>) -> StandbyPlan {
    let led = !obs.leader_files.is_empty() || !obs.charm_files.is_empty();
    let mut remove = obs.charm_files;
    remove.extend(obs.leader_files);
    StandbyPlan {
        secrets: housekeeping(event, false),
        stop_slurmctld: led,
        remove,
        status: standby_status(&obs.state_save),
    }
}

/// The standby status: what the unit waits for, or why it could not take over.
pub fn standby_status(state_save: &Result<StateSave, StateSaveError>) -> Status {
    let (kind, message) = match state_save {
        Ok(StateSave::Shared(path)) => (
            StatusKind::Active,
            format!(
                "standby: waiting for leadership (slurmctld runs on the leader only; if elected, \
                 this unit takes over the state in {path})"
            ),
        ),
        Ok(StateSave::Local) => (
            StatusKind::Blocked,
            format!(
                "standby cannot take over: slurmctld's state is on the leader's disk ({}), so a \
                 leader change would lose every job; set state-save-location to shared storage \
                 mounted on every slurmctld unit, or remove this unit",
                state_save_local()
            ),
        ),
        Err(e) => (
            StatusKind::Blocked,
            format!("standby cannot take over: {e}"),
        ),
    };
    Status::new(kind, short(&message, 400))
}

/// Carries out a standby plan: secret housekeeping, slurmctld stopped, the leader's files
/// removed (after the stop: a failed stop fails the hook with them still there, so the retry
/// stops it again), then the status.
pub fn standby_apply<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    plan: &StandbyPlan,
) -> Result<(), CharmError> {
    super::key_secret::apply_actions(backend, &plan.secrets)?;
    if plan.stop_slurmctld {
        tracing::info!("not the leader: stopping slurmctld (only the leader runs it)");
        host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))?;
    }
    for path in &plan.remove {
        host.remove(path)?;
    }
    // every standby hook: one unlink where there is nothing, and a unit that led before this
    // was added drops its stale metrics too
    crate::charms::cos::remove_cluster_metrics(host)?;
    if plan.stop_slurmctld {
        // the new leader may be waiting for this slurmctld to stop (takeover_wait)
        announce_stopped(backend)?;
    }
    super::status_record::set_unit_status(ctx, backend, host, &plan.status)?;
    Ok(())
}

/// The `stop` hook (the unit is being removed): slurmctld stopped and the leader's files
/// removed when this unit ran it, as a standby does; no status (the unit is going away).
pub fn stop(host: &Host<'_>) -> Result<(), CharmError> {
    let leader_files = LEADER_FILES
        .into_iter()
        .filter(|p| host.exists(p))
        .collect();
    let charm_files = charm_files(host);
    let led = |files: &Vec<&'static str>| !files.is_empty();
    if !led(&leader_files) && !led(&charm_files) {
        return Ok(());
    }
    tracing::info!("unit stopping: stopping slurmctld");
    host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))?;
    for path in charm_files.iter().chain(&leader_files) {
        host.remove(path)?;
    }
    crate::charms::cos::remove_cluster_metrics(host)?;
    Ok(())
}

/// A non-leader's hook: observe, plan, apply. `config`: the config when
/// [`super::observe::first_reads`] asked for it already.
pub fn standby_run<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    config: Option<Result<Map<String, Value>, juju_runtime::HookToolError>>,
    event: Option<&EventSecret>,
) -> Result<(), CharmError> {
    let config = match config {
        Some(config) => config?,
        None => backend.config_get()?,
    };
    let obs = standby_observe(&config, host);
    standby_apply(ctx, backend, host, &standby_plan(obs, event))
}

// ---- Takeover: a new leader waits for the former one ----

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
pub fn takeover_wait<B: ModelBackend>(
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

// ---- Peers: every controller host in slurm.conf ----

/// The peer endpoint (metadata.yaml `peers:`).
pub const PEER_ENDPOINT: &str = "slurmctld-peers";
/// The key of a unit's host name in its peer bag.
pub const HOSTNAME_KEY: &str = "hostname";
/// Set in a former leader's peer bag once it has stopped its slurmctld (a new value each time):
/// the peer relation-changed it causes on the new leader lets that one take over at once
/// instead of at its next update-status ([`takeover_wait`]).
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
/// hooks where it may rename (`may_rename`); a read of the own bag, and a write only when it differs).
pub fn peers_publish<B: ModelBackend>(
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

/// The other units' host names as the leader observed them, and what [`peers_save`] keeps of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Peers {
    /// Sorted, without the leader's own, each a name Slurm accepts.
    pub names: Vec<String>,
    /// [`PEERS_FILE`]'s new text, when it differs from the file.
    pub save: Option<String>,
}

/// The other units' host names (sorted, without `own`, each a name Slurm accepts): read from
/// their peer bags in the hooks that may change them (`may_change`), else from [`PEERS_FILE`] (or from
/// the bags when there is no file). A name Slurm refuses is left out with a warning. Reads
/// only: [`peers_save`] keeps them once the hook succeeded.
pub fn peers_observe<B: ModelBackend>(
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

/// Keeps what [`peers_observe`] read (after the hook's other writes succeeded).
pub fn peers_save(host: &Host<'_>, peers: &Peers) -> Result<(), CharmError> {
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

// ---- Shared state: `state-save-location` ----

/// The state directory when `state-save-location` is empty: the leader's own disk (Debian's).
pub fn state_save_local() -> &'static str {
    GlobalKey::StateSaveLocation.default_value()
}

/// The config option's name.
pub const STATE_SAVE_OPTION: &str = "state-save-location";

/// `state-save-location`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateSave {
    /// Empty: the leader's local disk ([`state_save_local`]); no other unit can take over.
    Local,
    /// A directory on shared storage, mounted at this absolute path on every slurmctld unit.
    Shared(String),
}

impl StateSave {
    /// Parses the option's value: empty (or spaces) is [`StateSave::Local`]; anything else must be
    /// an absolute path Slurm reads as one token (no spaces, quotes, `#` or `=`), without `.` or
    /// `..` components, not `/` itself. A trailing `/` is dropped.
    pub fn parse(value: &str) -> Result<StateSave, StateSaveError> {
        let v = value.trim();
        if v.is_empty() {
            return Ok(StateSave::Local);
        }
        let invalid = |why: &'static str| StateSaveError::Invalid {
            value: crate::charms::util::short(v, 100),
            why,
        };
        if !v.starts_with('/') {
            return Err(invalid("not an absolute path"));
        }
        if v.len() > 1024 {
            return Err(invalid("longer than 1024 bytes"));
        }
        if v.chars().any(|c| {
            c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '#' | '=' | '\\')
        }) {
            return Err(invalid(
                "spaces, quotes, `#`, `=` and backslashes cannot be in a slurm.conf path",
            ));
        }
        let path = v.trim_end_matches('/');
        if path.is_empty() {
            return Err(invalid("`/` itself cannot hold slurmctld's state"));
        }
        if path.split('/').any(|c| c == "." || c == "..") {
            return Err(invalid("`.` and `..` components are not allowed"));
        }
        Ok(StateSave::Shared(path.to_owned()))
    }

    /// The directory slurm.conf names in `StateSaveLocation`.
    pub fn path(&self) -> &str {
        match self {
            StateSave::Local => state_save_local(),
            StateSave::Shared(p) => p,
        }
    }
}

/// Why `state-save-location` cannot be used here: the leader blocks with it and writes no files
/// (slurmctld is not started on a state it would not find again after a leader change); a
/// standby blocks with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateSaveError {
    /// The value is not a usable path.
    #[error(
        "config option `state-save-location` {value:?}: {why} (give an absolute path to a directory on shared storage mounted on every slurmctld unit, or leave it empty)"
    )]
    Invalid {
        /// The value given (trimmed, cut short).
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The path is fine but there is no directory there on this machine.
    #[error(
        "state-save-location {path} is not a directory on this machine: mount the shared storage there (on every slurmctld unit), writable by the slurm user"
    )]
    Missing {
        /// The path.
        path: String,
    },
}

/// Parses `value` and checks that a shared directory exists on this machine (`is_dir`: the path
/// under the charm's root). The local default is Debian's and always there.
pub fn state_save_observe(
    value: &str,
    is_dir: impl Fn(&str) -> bool,
) -> Result<StateSave, StateSaveError> {
    let state = StateSave::parse(value)?;
    match &state {
        StateSave::Shared(path) if !is_dir(path) => {
            Err(StateSaveError::Missing { path: path.clone() })
        }
        _ => Ok(state),
    }
}

/// Files only a unit that ran slurmctld as the leader has: the store and the reload marker.
pub const LEADER_FILES: [&str; 2] = [STORE_PATH, RELOAD_PENDING];

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(state_save: Result<StateSave, StateSaveError>) -> StandbyObserved {
        StandbyObserved {
            state_save,
            leader_files: Vec::new(),
            charm_files: Vec::new(),
        }
    }

    #[test]
    fn a_unit_that_never_led_runs_nothing() {
        let p = standby_plan(observed(Ok(StateSave::Shared("/srv/state".into()))), None);
        assert!(!p.stop_slurmctld);
        assert!(p.remove.is_empty());
        assert_eq!(p.status.kind, StatusKind::Active);
        assert!(
            p.status
                .message
                .starts_with("standby: waiting for leadership")
        );
        assert!(
            p.status
                .message
                .ends_with("takes over the state in /srv/state)")
        );
    }

    #[test]
    fn a_former_leader_stops_slurmctld_and_removes_what_it_wrote() {
        let mut obs = observed(Ok(StateSave::Local));
        obs.leader_files = vec![super::super::store::STORE_PATH];
        obs.charm_files = vec![SLURM_CONF];
        let p = standby_plan(obs, None);
        assert!(p.stop_slurmctld);
        assert_eq!(p.remove, vec![SLURM_CONF, super::super::store::STORE_PATH]);
        assert_eq!(p.status.kind, StatusKind::Blocked);
        assert!(
            p.status
                .message
                .contains("set state-save-location to shared storage"),
            "{}",
            p.status.message
        );
    }

    #[test]
    fn a_standby_without_the_shared_directory_says_so() {
        let p = standby_plan(
            observed(Err(StateSaveError::Missing {
                path: "/srv/state".into(),
            })),
            None,
        );
        assert_eq!(p.status.kind, StatusKind::Blocked);
        assert!(
            p.status.message.starts_with(
                "standby cannot take over: state-save-location /srv/state is not a directory"
            ),
            "{}",
            p.status.message
        );
    }

    #[test]
    fn empty_is_local_and_a_path_is_shared() {
        assert_eq!(StateSave::parse(""), Ok(StateSave::Local));
        assert_eq!(StateSave::parse("  "), Ok(StateSave::Local));
        assert_eq!(StateSave::Local.path(), "/var/lib/slurm/slurmctld");
        assert_eq!(
            StateSave::parse("/srv/slurm/state/"),
            Ok(StateSave::Shared("/srv/slurm/state".into()))
        );
    }

    #[test]
    fn paths_slurm_cannot_read_or_that_escape_are_refused() {
        for bad in [
            "srv/state",
            "/",
            "//",
            "/srv/my state",
            "/srv/a#b",
            "/srv/a=b",
            "/srv/\"x\"",
            "/srv/../etc",
            "/srv/./x",
        ] {
            let e = StateSave::parse(bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("config option `state-save-location`"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_shared_directory_must_exist_here() {
        let e = state_save_observe("/srv/state", |_| false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "state-save-location /srv/state is not a directory on this machine: mount the shared \
             storage there (on every slurmctld unit), writable by the slurm user"
        );
        assert_eq!(
            state_save_observe("/srv/state", |p| p == "/srv/state"),
            Ok(StateSave::Shared("/srv/state".into()))
        );
        assert_eq!(state_save_observe("", |_| false), Ok(StateSave::Local));
    }
}
