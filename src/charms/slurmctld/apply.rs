//! Carries out the controller's plan (writes only, in a fixed order): the munge key (and a
//! munge restart if it changed), the three Slurm files (each atomic, skipped when identical),
//! what slurmctld needs (restart, reconfigure or stop; resume nodes that left DownNodes; clear
//! GRES drains the restart fixed), then `cluster_info` on every relation where it changed.
//! The status is set by the caller after this, and the cache persisted last ([`persist`]).

use super::cache::CACHE_PATH;
use super::decide::{Decision, Reload};
use super::plan::ControllerPlan;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host, HostError, Owner};
use crate::charms::plan::{FileWrite, RelationWrite};
use juju_runtime::ModelBackend;

/// Applies everything in `plan` except the status and the cache.
pub fn apply<B: ModelBackend>(
    backend: &B,
    host: &Host<'_>,
    plan: &ControllerPlan,
) -> Result<(), CharmError> {
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
    for file in &plan.files {
        write(host, file)?;
    }
    reload(host, &plan.decision)?;
    for RelationWrite {
        relation,
        app,
        data,
    } in &plan.relation_data
    {
        backend.relation_set(relation, *app, data)?;
    }
    Ok(())
}

/// Writes the cache: the last step of a hook, after the status was set, so a hook that fails
/// anywhere before leaves the cache as it was and the retry publishes again.
pub fn persist(host: &Host<'_>, plan: &ControllerPlan) -> Result<(), CharmError> {
    if let Some(bytes) = &plan.cache {
        host.write(CACHE_PATH, bytes, 0o600, Some(Owner::ROOT))?;
    }
    if let Some(version) = &plan.version {
        write(host, version)?;
    }
    Ok(())
}

fn write(host: &Host<'_>, file: &FileWrite) -> Result<bool, HostError> {
    host.write(file.path, &file.bytes, file.mode, file.owner)
}

/// slurmctld's log (its last lines explain a failed start).
pub const SLURMCTLD_LOG: &str = "/var/log/slurm/slurmctld.log";

/// How long a restarted slurmctld may take to answer `scontrol ping`.
const PING_TRIES: u32 = 20;

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
    for i in 0..PING_TRIES {
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

/// Clears drains a GRES count mismatch left behind on `nodes` (fixed by the restart).
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
    let drained: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '|');
            let (n, st, reason) = (f.next()?, f.next()?, f.next()?);
            let gres = reason.contains("gres/gpu") || reason.to_ascii_lowercase().contains("gres");
            (st.to_ascii_lowercase().contains("drain") && gres).then(|| n.trim().to_string())
        })
        .collect();
    if drained.is_empty() {
        return;
    }
    resume(host, &drained, "GRES mismatch fixed by the restart");
}

fn resume(host: &Host<'_>, nodes: &[String], why: &str) {
    let arg = format!("nodename={}", hostlist(nodes));
    tracing::info!("resuming {} ({why})", hostlist(nodes));
    let cmd = Cmd::new("scontrol", ["update", arg.as_str(), "state=resume"]);
    if let Err(e) = host.run_ok(&cmd) {
        tracing::warn!("cannot resume {}: {e}", hostlist(nodes));
    }
}

/// Restarts, reconfigures or stops slurmctld as decided, then resumes nodes and clears drains.
fn reload(host: &Host<'_>, decision: &Decision) -> Result<(), CharmError> {
    match decision.reload {
        Reload::Nothing => {}
        Reload::Reconfigure => {
            // from 23.11 this also takes added/removed nodes and changed GRES (decide.rs)
            tracing::info!("slurm.conf/gres.conf changed: scontrol reconfigure");
            host.run_ok(&Cmd::new("scontrol", ["reconfigure"]))?;
        }
        Reload::Restart => {
            tracing::info!("nodes or their GRES changed: restarting slurmctld, then reconfigure");
            restart_slurmctld(host)?;
            host.run_ok(&Cmd::new("scontrol", ["reconfigure"]))?;
        }
        Reload::Stop => {
            tracing::info!("no nodes: stopping slurmctld (it cannot run without nodes)");
            host.run_ok(&Cmd::new("systemctl", ["stop", "slurmctld"]))?;
        }
    }
    if !decision.resume.is_empty() {
        resume(host, &decision.resume, "left DownNodes");
    }
    if decision.reload != Reload::Nothing && !decision.gres_changed.is_empty() {
        clear_gres_drains(host, &decision.gres_changed);
    }
    Ok(())
}
