//! Carries out the controller's plan (writes only, in a fixed order): the key secret created
//! when there is none, the secret housekeeping, the munge key (and a munge restart if it
//! changed), the three Slurm files (each atomic, skipped when identical), what slurmctld needs
//! (restart, reconfigure, stop or none; resume nodes that left DownNodes; clear GRES drains the
//! restart fixed), then the key secret's grants, `cluster_info` naming it (its id filled in here,
//! [`super::key_secret`]) and the verdicts on every relation where they changed. The status is
//! set by the caller after this, and the store saved last ([`save`]). A unit that is not
//! the leader is [`super::leadership`]'s.

use super::decide::{Decision, Reload};
use super::desired::NEW_NODE_REASON;
use super::key_secret::{self, KeySecretPlan};
use super::plan::{ControllerPlan, refused_status};
use super::refusal::{ACCEPTED_FILES, first_new_line};
use super::store::{Applied, RELOAD_PENDING, Refusal, STORE_PATH};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, CmdOutput, Host, HostError, Owner, SetFile};
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::interface::{GRES_TYPES_KEY, GresTypes, SLURMCTLD_ENDPOINT, VERDICTS_KEY, Verdicts};
use crate::slurm::is_gres_mismatch;
use crate::slurm::types::GresName;
use juju_runtime::{Bag, RelationId, SecretBackend, Status};
use std::collections::BTreeMap;

/// What applying a plan found out that the plan could not know: what the status and the store
/// then say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// slurmctld refused the new files (the accepted ones are back in place): the status to
    /// set instead of the plan's, and the refusal the store records.
    pub refused: Option<(Status, Refusal)>,
    /// The `cluster_info` published (naming the key secret, created in this hook or not): the
    /// store records it on the plan's relations ([`save`]).
    pub cluster_info: Option<String>,
    /// The verdicts published because of a refusal (relation id, value): the store records
    /// them ([`save`]).
    pub refusal_verdicts: Vec<(u32, String)>,
    /// slurmctld, found not running and restarted on the files it ran
    /// ([`Reload::Revive`]), does not answer: the status to set instead of the plan's.
    pub dead: Option<Status>,
    /// The plan took slurmctld to run ([`ControllerPlan::assumed_running`]) and it does not:
    /// nothing after the files was done and nothing was published; the caller observes and
    /// plans again, asking first ([`super::liveness`]).
    pub found_not_running: bool,
}

/// Applies everything in `plan` except the status and the cache, in the order the module
/// describes.
pub fn apply<B: SecretBackend + Sync>(
    backend: &B,
    host: &Host<'_>,
    plan: &ControllerPlan,
) -> Result<Outcome, CharmError> {
    // a plan that took slurmctld to run proves it: by its reconfigure, or asked first
    if plan.assumed_running && plan.decision.reload != Reload::Reconfigure && !still_runs(host) {
        return Ok(Outcome {
            found_not_running: true,
            ..Outcome::default()
        });
    }
    // the id exists from here on (created before anything names it)
    let key_secret = match &plan.key_secret {
        Some(KeySecretPlan {
            secret,
            cluster_info,
        }) => Some((key_secret::ensure(backend, secret)?, cluster_info.as_ref())),
        None => None,
    };
    key_secret::apply_actions(backend, &plan.secrets)?;
    for w in &plan.warnings {
        tracing::warn!("{w}");
    }
    let key_written = match &plan.munge_key {
        Some(key) => write(host, key)?,
        None => false,
    };
    if key_written && plan.restart_munge {
        tracing::info!("munge key installed: restarting munge");
        host.run_ok(&Cmd::new("systemctl", ["restart", "munge"]))?;
    }
    announce(&plan.decision);
    let write_and_reload = || -> Result<(), ReloadError> {
        if plan.decision.reload.runs() {
            // A state directory that cannot be written fails the hook here, before slurmctld
            // is touched (every retry would restart it again otherwise).
            let files = plan
                .store
                .as_ref()
                .and_then(|s| s.applied.as_ref())
                .map_or(0, |a| a.files_hash);
            let marker = format!("reloading slurmctld on files {files:016x}\n");
            // Unsynced as the store is: a crash that loses it loses the store's boot too. Its
            // being there is what counts (`observe`), so it is created in place, not renamed
            // into place: a marker a crash left torn still says a reload is owed.
            host.overwrite_unsynced(&[SetFile {
                path: RELOAD_PENDING,
                bytes: marker.as_bytes(),
                mode: 0o600,
                owner: Some(Owner::ROOT),
            }])
            .map_err(|e| ReloadError::Charm(e.into()))?;
        }
        host.write_set(&set(&plan.files))
            .map_err(|e| ReloadError::Charm(e.into()))?;
        reload(host, &plan.decision, plan.assumed_running)?;
        if plan.revived == super::liveness::Marker::Write {
            // a slurmctld that died restores node states from its last state save, which may
            // predate a resume of a new node: the charm's own `DownNodes` reason is lifted
            // again from the nodes that left `DownNodes`
            let keep_down = plan
                .store
                .as_ref()
                .and_then(|s| s.applied.as_ref())
                .map(|a| &a.down);
            resume_stale_new_nodes(host, keep_down);
        }
        Ok(())
    };
    let mut dead = None;
    let refused = match write_and_reload() {
        // the files are those it ran: a slurmctld that does not start is not a refusal of them
        Err(ReloadError::Refused(reason)) if plan.decision.reload == Reload::Revive => {
            let tail = super::liveness::log_tail(host);
            tracing::error!(
                "{}",
                super::liveness::with_log(
                    &format!("slurmctld does not start: {}", reason.trim()),
                    &tail
                )
            );
            dead = Some(super::liveness::dead_status(&tail));
            None
        }
        Ok(()) => {
            if plan.keep_accepted {
                keep_accepted(host, &plan.files)?;
            }
            None
        }
        Err(ReloadError::Refused(reason)) => Some(roll_back(host, plan, reason)?),
        Err(ReloadError::Charm(e)) => return Err(e),
        Err(ReloadError::NotRunning) => {
            return Ok(Outcome {
                found_not_running: true,
                ..Outcome::default()
            });
        }
    };
    // a restart that did not answer leaves no marker: the status says it does not start, and
    // a later hook that starts it is a first revival again
    let marker = match plan.revived {
        super::liveness::Marker::Write if dead.is_some() => super::liveness::Marker::Remove,
        m => m,
    };
    match marker {
        super::liveness::Marker::Keep => {}
        super::liveness::Marker::Write => {
            host.write(
                super::liveness::REVIVED,
                b"slurmctld was restarted by the charm after it was found not running\n",
                0o600,
                Some(Owner::ROOT),
            )?;
        }
        super::liveness::Marker::Remove => host.remove(super::liveness::REVIVED)?,
    }
    let cluster_info = match key_secret {
        Some((id, Some(write))) => Some(key_secret::publish(backend, &id, write)?),
        _ => None,
    };
    // Refused: the units whose values changed since the last accepted files are told, with the
    // daemon's reason, on their relations; the other relations get the plan's verdicts.
    let mut told: BTreeMap<u32, Verdicts> = BTreeMap::new();
    if let Some((_, refusal)) = &refused {
        for relation in refusal.units.values() {
            told.entry(*relation)
                .or_insert_with(|| plan.verdicts.get(relation).cloned().unwrap_or_default());
        }
        super::refusal::tell(&mut told, refusal);
    }
    for RelationWrite {
        relation,
        app,
        data,
    } in &plan.relation_data
    {
        if data.contains_key(VERDICTS_KEY) && told.contains_key(&relation.id) {
            continue;
        }
        backend.relation_set(relation, *app, data)?;
    }
    let mut refusal_verdicts = Vec::new();
    for (id, verdicts) in told {
        let value = verdicts.to_relation_value();
        let data = Bag::from([(VERDICTS_KEY.to_string(), value.clone())]);
        backend.relation_set(
            &RelationId::new(crate::interface::SLURMCTLD_ENDPOINT, id),
            true,
            &data,
        )?;
        refusal_verdicts.push((id, value));
    }
    publish_gres_types(backend, plan, refused.is_some())?;
    Ok(Outcome {
        refused,
        cluster_info,
        refusal_verdicts,
        dead,
        found_not_running: false,
    })
}

/// The GRES names slurmctld runs (`GresTypes` of the files in force: the new ones, or the old
/// ones when it refused the new) as `gres_types` ([`crate::interface::gres_types`]): the nodes
/// restart slurmd for a new GRES name only once slurmctld runs it. Written on every relation
/// after a reload that changed them (or with no earlier files known: a new leader, a rebuilt
/// store), and on the relations that get `cluster_info` in this hook (a new relation, a new
/// controller host). Juju tells the nodes only when the value changed.
fn publish_gres_types<B: SecretBackend>(
    backend: &B,
    plan: &ControllerPlan,
    refused: bool,
) -> Result<(), CharmError> {
    let Some(store) = plan.store.as_ref() else {
        return Ok(());
    };
    let before = plan.previous.0.as_ref().map(gres_types);
    let in_force = if refused {
        before.clone()
    } else {
        store.applied.as_ref().map(gres_types)
    };
    let in_force = in_force.unwrap_or_else(|| GresTypes::new([GresName::gpu()]));
    let changed = plan.decision.reload.runs() && (refused || before.as_ref() != Some(&in_force));
    let relations: Vec<RelationId> = if changed {
        store
            .relations
            .keys()
            .map(|id| RelationId::new(SLURMCTLD_ENDPOINT, *id))
            .collect()
    } else {
        plan.key_secret
            .as_ref()
            .and_then(|k| k.cluster_info.as_ref())
            .map(|w| w.relations.clone())
            .unwrap_or_default()
    };
    let data = Bag::from([(GRES_TYPES_KEY.to_string(), in_force.to_relation_value())]);
    for relation in &relations {
        backend.relation_set(relation, true, &data)?;
    }
    Ok(())
}

/// `gpu` and every GRES name of the nodes' `Gres=` values (`gpu:tesla_t4:1,shard:tesla_t4:2`):
/// the `GresTypes` the files of `applied` carry ([`crate::slurm::gres_types`]).
fn gres_types(applied: &Applied) -> GresTypes {
    let names = applied
        .gres
        .iter()
        .flat_map(|value| value.split(','))
        .filter_map(|part| GresName::try_from(part.split(':').next().unwrap_or_default()).ok());
    GresTypes::new(std::iter::once(GresName::gpu()).chain(names))
}

/// The file of `files` (the plan's) written to `live`, one of [`ACCEPTED_FILES`]' live paths.
fn live_file<'a>(files: &'a [FileWrite], live: &str) -> Option<&'a FileWrite> {
    files.iter().find(|f| f.path == live)
}

/// Keeps the files slurmctld just accepted as the last accepted set, each of cgroup.conf,
/// gres.conf and slurm.conf among `files`, matched by path (never slurm.key, which `files` may
/// also hold): a hard link to the live file ([`Host::link_copy`]), or, where no link can be
/// made, a private copy (0600) written over the old one (no fsync, no rename: a copy a crash
/// left stale or torn does not match the applied record's hash, and is then not put back,
/// `roll_back`; [`Host::overwrite_unsynced`] says why not a rename).
fn keep_accepted(host: &Host<'_>, files: &[FileWrite]) -> Result<(), CharmError> {
    let mut unlinked = Vec::new();
    for (live, copy) in ACCEPTED_FILES {
        let Some(f) = live_file(files, live) else {
            continue;
        };
        if !host.link_copy(live, copy)? {
            unlinked.push(SetFile {
                path: copy,
                bytes: &f.bytes,
                mode: 0o600,
                owner: None,
            });
        }
    }
    host.overwrite_unsynced(&unlinked)?;
    Ok(())
}

fn set(files: &[FileWrite]) -> Vec<SetFile<'_>> {
    files
        .iter()
        .map(|f| SetFile {
            path: f.path,
            bytes: &f.bytes,
            mode: f.mode,
            owner: f.owner,
        })
        .collect()
}

/// slurmctld refused the new files: puts the last accepted set back (and, after a restart,
/// starts slurmctld on it again), records the refusal so the same files are not offered on
/// every hook, and returns the status that names the failing input, and the reason (cut short).
fn roll_back(
    host: &Host<'_>,
    plan: &ControllerPlan,
    reason: String,
) -> Result<(Status, Refusal), CharmError> {
    let reason = crate::charms::util::short(reason.trim(), 200);
    tracing::error!("slurmctld refused the new files: {reason}");
    // The last accepted copies, read only now that they are needed, in ACCEPTED_FILES order.
    let copies: Vec<Option<Vec<u8>>> = ACCEPTED_FILES
        .iter()
        .map(|(_, copy)| host.read(copy).ok().flatten())
        .collect();
    let refused: Vec<Option<&FileWrite>> = ACCEPTED_FILES
        .iter()
        .map(|(live, _)| live_file(&plan.files, live))
        .collect();
    let refused_bytes: Vec<&[u8]> = refused
        .iter()
        .map(|f| f.map_or(&[][..], |f| f.bytes.as_slice()))
        .collect();
    let input = first_new_line(&copies, &refused_bytes);
    let restore: Vec<SetFile<'_>> = ACCEPTED_FILES
        .iter()
        .zip(&copies)
        .zip(&refused)
        .filter_map(|(((live, _), copy), f)| {
            let f = (*f)?;
            Some(SetFile {
                path: live,
                bytes: copy.as_deref()?,
                mode: f.mode,
                owner: f.owner,
            })
        })
        .collect();
    // the copies are what slurmctld accepted when they hash as the store says
    let expected = plan.previous.0.as_ref().map(|a| a.files_hash);
    let verified = match &copies[..] {
        [Some(cgroup), Some(gres), Some(slurm)] => {
            expected == Some(super::desired::files_hash(slurm, gres, cgroup))
        }
        _ => false,
    };
    if !plan.rollback || restore.len() != ACCEPTED_FILES.len() {
        tracing::warn!("no accepted files are known: the refused files stay in place");
    } else if !verified {
        tracing::warn!(
            "the last accepted copies do not match what slurmctld last accepted (a crash while \
             they were written?): the refused files stay in place"
        );
    } else {
        host.write_set(&restore)?;
        tracing::info!("restored the last files slurmctld accepted");
        if plan.decision.reload == Reload::Restart {
            if let Err(e) = restart_slurmctld(host) {
                tracing::error!("slurmctld does not start on the accepted files either: {e}");
            }
        }
    }
    let refusal = plan.refusal(reason, input).unwrap_or_default();
    Ok((refused_status(&refusal), refusal))
}

/// Why slurmctld could not be brought in line.
enum ReloadError {
    /// slurmctld refused the files (reconfigure failed, or a restarted slurmctld does not
    /// answer): what it said.
    Refused(String),
    /// Anything else (a command that cannot run or ran past its limit): the hook fails.
    Charm(CharmError),
    /// `scontrol reconfigure` got no answer and slurmctld does not run, where the plan took it
    /// to run without asking ([`ControllerPlan::assumed_running`]).
    NotRunning,
}

impl From<CharmError> for ReloadError {
    fn from(e: CharmError) -> Self {
        match e {
            CharmError::Host(HostError::Failed {
                command,
                status,
                stderr,
            }) => ReloadError::Refused(format!("`{command}` {status}: {stderr}")),
            other => ReloadError::Charm(other),
        }
    }
}

impl From<HostError> for ReloadError {
    fn from(e: HostError) -> Self {
        CharmError::Host(e).into()
    }
}

/// Saves the store: the last step of a hook, after the status was set, so a hook that fails
/// anywhere before leaves the store as it was and the retry publishes again. The store records
/// what `outcome` says was published and refused.
pub fn save(
    host: &Host<'_>,
    plan: &mut ControllerPlan,
    outcome: &Outcome,
) -> Result<(), CharmError> {
    let Some(mut store) = plan.store.take() else {
        return Ok(());
    };
    let published = plan
        .key_secret
        .as_ref()
        .and_then(|k| k.cluster_info.as_ref());
    if let (Some(published), Some(value)) = (published, &outcome.cluster_info) {
        key_secret::record(&mut store, published, value);
    }
    for write in &plan.relation_data {
        if let (Some(value), Some(rel)) = (
            write.data.get(VERDICTS_KEY),
            store.relations.get_mut(&write.relation.id),
        ) {
            rel.verdicts_published = (!value.is_empty()).then(|| value.clone());
        }
    }
    if let Some((status, refusal)) = &outcome.refused {
        // slurmctld still runs what it ran before
        store.applied = plan.previous.0.clone();
        store.accepted_seq = plan.previous.1;
        store.refused = Some(refusal.clone());
        store.status = Some((status.kind.as_str().to_owned(), status.message.clone()));
        for (id, value) in &outcome.refusal_verdicts {
            if let Some(rel) = store.relations.get_mut(id) {
                rel.verdicts_published = (!value.is_empty()).then(|| value.clone());
            }
        }
    }
    if let Some(status) = &outcome.dead {
        store.status = Some((status.kind.as_str().to_owned(), status.message.clone()));
    }
    write_store(host, &mut store)?;
    // what slurmctld runs is in the store now
    host.remove(RELOAD_PENDING)?;
    Ok(())
}

/// Writes `store` to its file. A directory (or anything but a file) in its place
/// was read as missing and rebuilt; it is replaced.
fn write_store(host: &Host<'_>, store: &mut super::store::Store) -> Result<(), CharmError> {
    if host.clear_non_file(STORE_PATH)? {
        tracing::warn!("replaced a non-file at {STORE_PATH} with the rebuilt store");
    }
    // Unsynced where the boot id names the page cache it lives in: only a kernel crash or a
    // power loss (a new boot) loses it, and a store of another boot is rebuilt from Juju.
    // Streamed to the file, never whole in memory (megabytes at 10,000 distinct nodes).
    let boot = crate::charms::host::boot_id();
    // Written over the old file's blocks: a torn one fails its checksum and is rebuilt.
    host.overwrite_streamed(
        STORE_PATH,
        0o600,
        Some(Owner::ROOT),
        boot.is_none(),
        |file| store.write_to(file, boot),
    )?;
    Ok(())
}

fn write(host: &Host<'_>, file: &FileWrite) -> Result<bool, HostError> {
    host.write(file.path, &file.bytes, file.mode, file.owner)
}

/// slurmctld's log (its last lines explain a failed start).
pub use super::liveness::SLURMCTLD_LOG;

/// How long a restarted slurmctld may take to answer `scontrol ping`.
const PING_TRIES: u32 = 20;

/// The longest the wait for a restarted slurmctld may last in all (each ping is also bounded
/// by its own command limit): a ping that hangs for seconds must not multiply by
/// `PING_TRIES`.
pub const PING_DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

fn log_tail(host: &Host<'_>) -> String {
    let text = host
        .read(SLURMCTLD_LOG)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        format!("nothing in {SLURMCTLD_LOG}")
    } else {
        format!("last lines of {SLURMCTLD_LOG}: {tail}")
    }
}

/// Restarts slurmctld and waits until it answers `scontrol ping` (a dead slurmctld would make
/// each `scontrol reconfigure` hang ~10 s); a slurmctld that dies is reported with its log.
fn restart_slurmctld(host: &Host<'_>) -> Result<(), CharmError> {
    host.run_ok(&Cmd::new("systemctl", ["restart", "slurmctld"]))?;
    let started = std::time::Instant::now();
    for i in 0..PING_TRIES {
        if started.elapsed() >= PING_DEADLINE {
            break;
        }
        if host.run(&Cmd::new("scontrol", ["ping"]))?.success() {
            return Ok(());
        }
        let active = host.run(&Cmd::new(
            "systemctl",
            ["is-active", "--quiet", "slurmctld"],
        ))?;
        if !active.success() {
            break;
        }
        if i + 1 < PING_TRIES {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
    Err(CharmError::Host(HostError::Failed {
        command: "systemctl restart slurmctld".into(),
        status: "slurmctld is not answering".into(),
        stderr: log_tail(host),
    }))
}

fn hostlist(names: &[String]) -> String {
    crate::slurm::hostlist::compress(names)
}

/// Clears drains a GRES count mismatch left behind on `nodes` (fixed by the restart): only a
/// reason that is exactly Slurm's own ([`is_gres_mismatch`]); an operator's drain stays, even
/// one whose reason mentions `gres` ("PSU swap in progress").
fn clear_gres_drains(host: &Host<'_>, nodes: &[String]) {
    let list = hostlist(nodes);
    let nodes_arg = format!("--nodes={list}");
    let query = Cmd::new(
        "sinfo",
        [
            "--noheader",
            "--Node",
            nodes_arg.as_str(),
            "--format=%N|%T|%E",
        ],
    );
    let out = match host.run_ok(&query) {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!("cannot check for GRES drains: {e}");
            return;
        }
    };
    let drained = gres_drained(&out.stdout);
    if drained.is_empty() {
        return;
    }
    resume(host, &drained, "GRES mismatch fixed by the restart");
}

/// After slurmctld was restarted from its saved state (found dead): resumes the nodes that are
/// down or drained with exactly the charm's `DownNodes` reason ([`NEW_NODE_REASON`]) but are no
/// longer in `DownNodes` (`keep_down`); every other down node is left as it is.
fn resume_stale_new_nodes(host: &Host<'_>, keep_down: Option<&std::collections::BTreeSet<String>>) {
    let query = Cmd::new("sinfo", ["--noheader", "--Node", "--format=%N|%T|%E"]);
    let out = match host.run_ok(&query) {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!("cannot check the nodes' states after the restart: {e}");
            return;
        }
    };
    let stale = stale_new_nodes(&out.stdout, keep_down);
    if !stale.is_empty() {
        resume(
            host,
            &stale,
            "configured before slurmctld died; its saved state said new",
        );
    }
}

/// The nodes of `sinfo --Node --format=%N|%T|%E` output that are down or drained with exactly
/// [`NEW_NODE_REASON`] and not in `keep_down`.
fn stale_new_nodes(
    sinfo: &str,
    keep_down: Option<&std::collections::BTreeSet<String>>,
) -> Vec<String> {
    sinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '|');
            let (n, st, reason) = (f.next()?.trim(), f.next()?, f.next()?);
            let st = st.to_ascii_lowercase();
            let down = st.contains("down") || st.contains("drain");
            let ours = reason.trim() == NEW_NODE_REASON;
            let kept = keep_down.is_some_and(|d| d.contains(n));
            (down && ours && !kept).then(|| n.to_string())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The nodes in `sinfo --Node --format=%N|%T|%E` output that are drained (or draining) with
/// exactly one of Slurm's GRES-mismatch reasons ([`is_gres_mismatch`]).
fn gres_drained(sinfo: &str) -> Vec<String> {
    sinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '|');
            let (n, st, reason) = (f.next()?, f.next()?, f.next()?);
            (st.to_ascii_lowercase().contains("drain") && is_gres_mismatch(reason.trim()))
                .then(|| n.trim().to_string())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn resume(host: &Host<'_>, nodes: &[String], why: &str) {
    let arg = format!("nodename={}", hostlist(nodes));
    tracing::info!("resuming {} ({why})", hostlist(nodes));
    let cmd = Cmd::new("scontrol", ["update", arg.as_str(), "state=resume"]);
    if let Err(e) = host.run_ok(&cmd) {
        tracing::warn!("cannot resume {}: {e}", hostlist(nodes));
    }
}

/// Logs what [`reload`] is about to do.
fn announce(decision: &Decision) {
    match decision.reload {
        Reload::Nothing => {}
        // the running slurmctld has these nodes already; the resume is the change (no
        // reconfigure: decide.rs)
        Reload::Resume => tracing::info!("only DownNodes changed: resuming, no reconfigure"),
        // from 23.11 this also takes added/removed nodes and changed GRES (decide.rs)
        Reload::Reconfigure => {
            tracing::info!("slurm.conf/gres.conf changed: scontrol reconfigure");
        }
        Reload::Restart => {
            tracing::info!("nodes or their GRES changed: restarting slurmctld, then reconfigure");
        }
        Reload::Stop => {
            tracing::info!("no nodes: stopping slurmctld (it cannot run without nodes)");
        }
        Reload::Revive => tracing::info!("slurmctld is not running: restarting it"),
    }
}

/// `scontrol reconfigure`. An answer lost on its way back while slurmctld still runs is not a
/// refusal of the files: from 24.11 slurmctld hands over to a new process that reads them, and
/// the old process's reply can be lost in the handover (`Socket timed out on send/recv
/// operation`, with slurmctld logging `Unexpected missing socket error`). The same reconfigure
/// is asked once more (the same files: nothing changes twice). Lost again with slurmctld
/// running, the hook fails as for any transient fault: Juju retries it, the files stay and the
/// reload-pending marker says a reload is owed; the last accepted files are not put back and no
/// unit is told of a refusal. A slurmctld that is gone after the request (the files may have
/// killed it) is a refusal, as before, except where the plan took it to run without asking
/// (`assumed`): it may have been gone before, so it is [`ReloadError::NotRunning`].
fn reconfigure(host: &Host<'_>, assumed: bool) -> Result<(), ReloadError> {
    let cmd = Cmd::new("scontrol", ["reconfigure"]);
    let mut answer = host.run_ok(&cmd);
    let runs = lost(&answer).then(|| still_runs(host));
    if assumed && runs == Some(false) {
        return Err(ReloadError::NotRunning);
    }
    if runs == Some(true) {
        tracing::warn!("`scontrol reconfigure` got no answer from slurmctld: asking again");
        answer = host.run_ok(&cmd);
        if lost(&answer) && still_runs(host) {
            // a transient fault, not a verdict on the files: the hook fails
            return answer.map(drop).map_err(|e| ReloadError::Charm(e.into()));
        }
    }
    answer.map(drop).map_err(Into::into)
}

/// True when `scontrol` failed without slurmctld's verdict ([`lost_answer`]).
fn lost(answer: &Result<CmdOutput, HostError>) -> bool {
    matches!(answer, Err(HostError::Failed { stderr, .. }) if lost_answer(stderr))
}

/// slurmctld runs, as [`super::liveness`] reads `systemctl is-active` (a command that cannot
/// run says no: the failed reconfigure is then a refusal, as before).
fn still_runs(host: &Host<'_>) -> bool {
    host.run(&Cmd::new("systemctl", ["is-active", "slurmctld"]))
        .is_ok_and(|out| super::liveness::says_running(&out))
}

/// True when `scontrol` says it got no answer (a request or reply lost, a connection closed
/// or refused), rather than slurmctld's verdict on the files.
fn lost_answer(stderr: &str) -> bool {
    [
        "Socket timed out on send/recv operation",
        "Zero Bytes were transmitted or received",
        "Unable to contact slurm controller",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

/// Restarts, reconfigures or stops slurmctld as decided ([`announce`]d first), then resumes
/// nodes and clears drains.
fn reload(host: &Host<'_>, decision: &Decision, assumed: bool) -> Result<(), ReloadError> {
    match decision.reload {
        Reload::Nothing | Reload::Resume => {}
        Reload::Reconfigure => reconfigure(host, assumed)?,
        Reload::Restart => {
            restart_slurmctld(host)?;
            reconfigure(host, false)?;
        }
        Reload::Stop => {
            host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))
                .map_err(|e| ReloadError::Charm(e.into()))?;
        }
        // found not running, the files unchanged: the nodes have them already (no
        // reconfigure, which 22.05.8's unregistered slurmd would not survive)
        Reload::Revive => restart_slurmctld(host)?,
    }
    if !decision.resume.is_empty() {
        resume(host, &decision.resume, "left DownNodes");
    }
    if matches!(decision.reload, Reload::Restart | Reload::Reconfigure)
        && !decision.gres_changed.is_empty()
    {
        clear_gres_drains(host, &decision.gres_changed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Applied, gres_drained, gres_types, stale_new_nodes};

    #[test]
    fn gres_types_are_gpu_and_every_name_the_nodes_carry() {
        let applied = Applied::new(
            [
                ("a", "gpu:tesla_t4:1(S:0,1),shard:tesla_t4:2"),
                ("b", "gpu:h100:8"),
                ("c", ""),
                ("d", "mps:100"),
            ],
            Default::default(),
            0,
            0,
        );
        assert_eq!(gres_types(&applied).to_relation_value(), "gpu,mps,shard");
        let none = Applied::new([("c", "")], Default::default(), 0, 0);
        assert_eq!(gres_types(&none).to_relation_value(), "gpu");
    }

    #[test]
    fn only_nodes_that_left_down_nodes_with_the_charms_reason_are_resumed() {
        let sinfo = "\
n1|down*|New node.
n2|down|New node.
n3|drained|New node. (ticket 7)
n4|down|Not responding
n5|idle|New node.
n6|drained|New node.
";
        let keep: std::collections::BTreeSet<String> = ["n2".to_string()].into();
        assert_eq!(stale_new_nodes(sinfo, Some(&keep)), vec!["n1", "n6"]);
        assert_eq!(stale_new_nodes(sinfo, None), vec!["n1", "n2", "n6"]);
    }

    #[test]
    fn only_slurms_own_gres_drains_are_cleared() {
        let sinfo = "\
n1|drained|gres/gpu count reported lower than configured (2 < 3)
n2|drained|PSU swap in progress (ticket 4711)
n3|draining|GRES cable reseat
n4|drained|slurmd-charm: gpu 1 (x): uncorrectable ECC errors
n5|drained|GPU 2 fan, see gres/gpu count too low (1 < 2)
n6|idle|gres/gpu count too low (1 < 2)
n7|drained*|gres/shard count reported lower than configured (0 < 4)
n1|drained|gres/gpu count reported lower than configured (2 < 3)
";
        assert_eq!(gres_drained(sinfo), vec!["n1", "n7"]);
    }
}
