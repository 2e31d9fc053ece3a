//! NVIDIA's DCGM exporter behind the slurmd option `dcgm-exporter` (default off; issue 41).
//!
//! **Source.** Canonical's `dcgm` snap (NVIDIA's Data Center GPU Manager with its
//! `dcgm-exporter` and `nv-hostengine` services), as canonical/slurm-charms' slurmd does
//! (`charms/slurmd/src/gpu.py`: `DCGMManager().install()`, then the `dcgm-exporter` service
//! enabled and started). The exporter listens on the snap's default `:9400` and serves
//! `/metrics`; the unit publishes that as a scrape job in its `cos-agent` data
//! ([`scrape_job_enabled`], `charms::cos`), so the COS subordinate scrapes it on `localhost`.
//!
//! **When.** Only in `config-changed`, `upgrade-charm` and `start` (after a reboot, e.g. the
//! driver install's) ([`converge`]): turning the option on
//! installs (`snap install dcgm`) and starts (`snap start --enable dcgm.nv-hostengine
//! dcgm.dcgm-exporter`); turning it off stops and disables the exporter, and removes the snap
//! when the charm installed it (a snap that was there before is the operator's). Every other
//! hook reads the small state file [`STATE_PATH`] only to say a problem in the status.
//!
//! **Failure.** No NVIDIA GPU readable, no `snap` command (no snapd), or a failing `snap`
//! command: nothing else changes (the node record, slurmd and the cluster are untouched), the
//! unit's status gets the suffix `; dcgm-exporter: <problem>` ([`with_note`]) and no scrape
//! job is published. The next `config-changed`, `upgrade-charm` or `start` tries again.

use super::observe::Observed;
use crate::charms::host::{Cmd, Host, HostError};
use juju_runtime::{Event, HookContext, Status};
use std::time::Duration;

/// The slurmd config option.
pub use super::dcgm_option::OPTION;
/// The snap.
pub const SNAP: &str = "dcgm";
/// The exporter's port (the snap's default `dcgm-exporter-address`, `:9400`).
pub const PORT: u16 = 9400;
/// The exporter's HTTP path.
pub const METRICS_PATH: &str = "/metrics";
/// What the charm did and what went wrong, kept between hooks (JSON).
pub const STATE_PATH: &str = "/var/lib/slurm-charms/slurmd/dcgm-exporter.json";
/// `snap install` downloads the snap: minutes on a slow mirror.
const INSTALL_LIMIT: Duration = Duration::from_secs(600);

/// The state file: written on every change, removed once the option is off and undone.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DcgmState {
    /// The charm ran `snap install dcgm` (so it removes the snap when turned off).
    #[serde(default)]
    pub installed_snap: bool,
    /// The exporter was started and enabled: the scrape job is published.
    #[serde(default)]
    pub running: bool,
    /// What went wrong, for the status (`None`: nothing).
    #[serde(default)]
    pub problem: Option<String>,
}

impl DcgmState {
    /// The state on disk (absent or unreadable: the default, nothing done).
    pub fn read(host: &Host<'_>) -> DcgmState {
        match host.read(STATE_PATH) {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or_default(),
            _ => DcgmState::default(),
        }
    }

    fn save(&self, host: &Host<'_>) {
        let result = if *self == DcgmState::default() {
            host.remove(STATE_PATH)
        } else {
            // A struct of bools and a string always serialises.
            let json = serde_json::to_vec(self).unwrap_or_default();
            host.write(STATE_PATH, &json, 0o644, None).map(|_| ())
        };
        if let Err(e) = result {
            tracing::warn!("cannot record the dcgm-exporter state in {STATE_PATH}: {e}");
        }
    }
}

/// Whether the unit publishes the exporter's scrape job (it was started and nothing failed
/// since).
pub fn scrape_job_enabled(host: &Host<'_>) -> bool {
    let s = DcgmState::read(host);
    s.running && s.problem.is_none()
}

/// Installs or removes the exporter to match the option, in `config-changed`, `upgrade-charm`
/// and `start` only; returns the problem to show in the status (from the state file in
/// every other hook). Never fails the hook.
pub fn converge(ctx: &HookContext, host: &Host<'_>, obs: &Observed) -> Option<String> {
    let mut state = DcgmState::read(host);
    if !matches!(
        ctx.event,
        Event::ConfigChanged | Event::UpgradeCharm | Event::Start
    ) {
        return state.problem;
    }
    let before = state.clone();
    if obs.dcgm_exporter {
        if !state.running || state.problem.is_some() {
            state.problem = start(host, &obs.inventory, &mut state).err();
        }
    } else if state.running || state.installed_snap || state.problem.is_some() {
        state.problem = stop(host, &mut state).err();
    }
    if state != before {
        state.save(host);
    }
    state.problem
}

/// Installs (unless there) and starts the snap's services.
fn start(
    host: &Host<'_>,
    inventory: &Result<crate::gpu::Inventory, std::sync::Arc<crate::gpu::GpuError>>,
    state: &mut DcgmState,
) -> Result<(), String> {
    match inventory {
        Ok(inv) if !inv.gpus.is_empty() => {}
        Ok(_) => return Err("not installed: no NVIDIA GPU on this node".into()),
        Err(e) => return Err(format!("not installed: the GPUs cannot be read ({e})")),
    }
    let listed = host
        .run(&Cmd::new("snap", ["list", SNAP]))
        .map_err(|e| match e {
            HostError::Spawn { .. } => {
                "not installed: no `snap` command (install snapd, or set dcgm-exporter=false)"
                    .to_owned()
            }
            other => format!("not installed: {other}"),
        })?;
    if !listed.success() {
        host.run_ok(&Cmd::new("snap", ["install", SNAP]).with_timeout(INSTALL_LIMIT))
            .map_err(|e| format!("not installed: {e}"))?;
        state.installed_snap = true;
    }
    host.run_ok(&Cmd::new(
        "snap",
        [
            "start",
            "--enable",
            "dcgm.nv-hostengine",
            "dcgm.dcgm-exporter",
        ],
    ))
    .map_err(|e| format!("not running: {e}"))?;
    state.running = true;
    Ok(())
}

/// Stops and disables the exporter; removes the snap when the charm installed it.
fn stop(host: &Host<'_>, state: &mut DcgmState) -> Result<(), String> {
    if state.running {
        host.run_ok(&Cmd::new(
            "snap",
            ["stop", "--disable", "dcgm.dcgm-exporter"],
        ))
        .map_err(|e| format!("still running: {e}"))?;
        state.running = false;
    }
    if state.installed_snap {
        host.run_ok(&Cmd::new("snap", ["remove", SNAP]).with_timeout(INSTALL_LIMIT))
            .map_err(|e| format!("snap not removed: {e}"))?;
        state.installed_snap = false;
    }
    Ok(())
}

/// `status` with `; dcgm-exporter: <problem>` added (the node works; only the exporter is
/// missing, so the status kind stays).
pub fn with_note(status: Status, problem: Option<&str>) -> Status {
    match problem {
        None => status,
        Some(p) if status.message.is_empty() => Status::new(status.kind, format!("{OPTION}: {p}")),
        Some(p) => Status::new(status.kind, format!("{}; {OPTION}: {p}", status.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use juju_runtime::StatusKind;

    #[test]
    fn note_keeps_the_kind_and_message() {
        let s = Status::new(StatusKind::Active, "node n1 ready");
        assert_eq!(with_note(s.clone(), None), s);
        let n = with_note(s, Some("not installed: no NVIDIA GPU on this node"));
        assert_eq!(n.kind, StatusKind::Active);
        assert_eq!(
            n.message,
            "node n1 ready; dcgm-exporter: not installed: no NVIDIA GPU on this node"
        );
    }
}
