//! The steady update-status: when nothing about this node changed since the last hook that
//! ran in full and found the controller answering, update-status re-reads only the host (its
//! `slurmd -C` facts, the GPUs, the device files, and from one `systemctl show` whether slurmd
//! runs and the main PIDs of slurmd and munged), sets the status that hook set, and makes no
//! other hook-tool call and no `scontrol ping` (issue 13).
//!
//! A `detect-gpus` reports what the node has, so it checks only that ([`Scope::Hardware`]: the
//! facts, the GPUs, the device files; not the daemons, not the controller). Found as the last
//! full hook published it, it answers from what this check read and the `gpu-sharing` the
//! record keeps (`action-get`, `action-set`); whether slurmd runs and the controller answers is
//! update-status's to check, as between any two hooks.
//!
//! Why this is safe: everything else a slurmd hook reads from Juju (config, relation data,
//! unit state, leadership gained) changes only with an event, and every event other than
//! update-status runs in full and forgets the steady record before its first write (the
//! plan's first step, [`super::apply`]; or, when observing fails, before the hook fails), so no
//! hook that fails leaves one behind. The controller is checked
//! again after anything changes (slurmd restarted, facts or GPUs changed), and whenever the
//! last check failed (no record is kept then).
//!
//! The one thing it asks beyond the host: whether the controller's port still opens (a TCP
//! connect, no `scontrol ping`); a closed one runs the hook in full, whose controller check
//! then says `slurmctld at <host>:6817 is not answering (port closed)`.
//!
//! **Where:** `<root>/var/lib/slurm-charms/slurmd/steady.json`: the fingerprint of the host
//! facts and the status, written last by a full hook whose controller check succeeded and
//! whose status is active. A missing or unreadable file just means a full hook.

use super::facts::{NodeFacts, parse_slurmd_c};
use super::keys::STEADY_PATH;
use super::observe::Observed;
use super::probe::ControllerProbe;
use crate::charms::common::digest;
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, CmdOutput, Host, HostError, Owner};
use crate::gpu::{DetectOptions, Inventory};
use juju_runtime::{Status, StatusKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What a steady update-status needs from the last full hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steady {
    /// [`fingerprint`] of the host facts that hook saw.
    pub fingerprint: String,
    /// [`Services::seen`] by that hook. Absent in records of older charms, whose fingerprint
    /// held it (their next update-status runs in full and writes it).
    #[serde(default)]
    pub services: Option<String>,
    /// The status it set (active only).
    pub message: String,
    /// The controller's config server (`host:port`) that answered that hook: a steady
    /// update-status checks that its port still opens (no `scontrol ping`), so a controller
    /// that died shows in this node's status at its next update-status. Absent in records of
    /// older charms (no check then; their next full hook writes it).
    #[serde(default)]
    pub conf_server: Option<String>,
    /// The `gpu-sharing` that hook ran with: a steady `detect-gpus` reports the sharing the
    /// node runs without asking `config-get` (a new value comes with `config-changed`, a full
    /// hook that rewrites this record). Absent in records of older charms (the action then
    /// asks).
    #[serde(default)]
    pub gpu_sharing: Option<crate::gpu::GpuSharing>,
}

/// A stable digest of the host facts a hook acts on. `Debug` output of validated values from
/// this very binary: an upgraded charm runs upgrade-charm in full, which rewrites the record.
pub fn fingerprint(
    facts: &NodeFacts,
    inventory: &Inventory,
    device_files: &BTreeSet<String>,
) -> String {
    let text = format!("{facts:?}\n{inventory:?}\n{device_files:?}");
    digest(&[env!("CARGO_PKG_VERSION").as_bytes(), text.as_bytes()])
}

/// The record a full hook leaves behind, when it may be trusted: the controller answered, the
/// facts and GPUs were read, the status is active, no action ran and nothing was (re)started
/// (`restarted`: a restarted slurmd is checked again by the next hook). `None` otherwise (the
/// next update-status then runs in full and checks the controller again). `services` is asked
/// only when a record is kept; its answer is read as the steady check reads its own, so the
/// two fingerprints compare like with like.
pub fn record(
    obs: &Observed,
    status: &Status,
    restarted: bool,
    services: impl FnOnce() -> Result<Services, CharmError>,
) -> Result<Option<Steady>, CharmError> {
    let answering = matches!(obs.controller, Some(ControllerProbe::Answering));
    if restarted || !answering || status.kind != StatusKind::Active || obs.action.is_some() {
        return Ok(None);
    }
    let (Ok(facts), Ok(inventory)) = (obs.facts.as_ref(), obs.inventory.as_ref()) else {
        return Ok(None);
    };
    let services = services()?;
    Ok(Some(Steady {
        fingerprint: fingerprint(facts, inventory, &obs.device_files_present),
        services: Some(services.seen()),
        message: status.message.clone(),
        conf_server: match &obs.cluster_info {
            Some(Ok(info)) => Some(info.conf_server()),
            _ => None,
        },
        gpu_sharing: obs.gpu_sharing.as_ref().ok().copied(),
    }))
}

/// What systemd says of the node's daemons, as the steady fingerprint takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Services {
    /// slurmd runs, or was started and is not ready yet: its `ActiveState` is `active`,
    /// `reloading` (where `systemctl is-active` succeeds) or `activating` (a configless slurmd
    /// of 23.11+ still fetching its config).
    pub slurmd_active: bool,
    /// The main PIDs of slurmd and munged, space-separated (`unknown` when systemctl failed): a
    /// daemon restarted behind the charm's back (a new munge key, an operator's restart)
    /// changes them, and the next update-status then runs in full and checks the controller
    /// again.
    pub pids: String,
}

impl Services {
    /// What the record keeps and the steady check compares: both fields, as one line.
    pub fn seen(&self) -> String {
        format!("{} {}", self.slurmd_active, self.pids)
    }
}

/// [`Services`] from one `systemctl show --property=ActiveState,MainPID slurmd munge`.
pub fn services(host: &Host<'_>) -> Result<Services, CharmError> {
    Ok(services_of(host.run(&services_cmd())?))
}

/// The command [`services`] runs: both answers from one process.
fn services_cmd() -> Cmd {
    Cmd::new(
        "systemctl",
        ["show", "--property=ActiveState,MainPID", "slurmd", "munge"],
    )
}

/// [`Services`] from what [`services_cmd`] printed: one block of `KEY=value` lines per unit,
/// in the order the units were named, blocks separated by an empty line; systemd prints the
/// properties in its own order, so they are found by name.
fn services_of(out: CmdOutput) -> Services {
    if !out.success() {
        return Services {
            slurmd_active: false,
            pids: "unknown".to_owned(),
        };
    }
    let mut slurmd_active = false;
    let mut pids = Vec::new();
    for (unit, block) in out.stdout.split("\n\n").enumerate() {
        for (key, value) in block.lines().filter_map(|l| l.split_once('=')) {
            match key.trim() {
                "ActiveState" if unit == 0 => {
                    slurmd_active = crate::charms::common::systemd_state_runs(value);
                }
                "MainPID" => pids.push(value.trim()),
                _ => {}
            }
        }
    }
    Services {
        slurmd_active,
        pids: pids.join(" "),
    }
}

/// Writes `steady` (or removes the record when there is none to trust).
pub fn remember(host: &Host<'_>, steady: Option<&Steady>) -> Result<(), CharmError> {
    match steady.map(serde_json::to_vec) {
        Some(Ok(bytes)) => {
            host.write(STEADY_PATH, &bytes, 0o600, Some(Owner::ROOT))?;
        }
        _ => forget(host)?,
    }
    Ok(())
}

/// Removes the record (every full hook does this before its first write).
pub fn forget(host: &Host<'_>) -> Result<(), CharmError> {
    if host.exists(STEADY_PATH) {
        host.remove(STEADY_PATH)?;
    }
    Ok(())
}

/// What the steady check found.
#[derive(Debug, Default)]
pub struct SteadyCheck {
    /// The status to set again when the host is as the last full hook left it; `None` when
    /// anything differs or cannot be read (the hook then runs in full).
    pub status: Option<Status>,
    /// The `slurmd -C` result it asked for, so the full hook does not run (and wait for) the
    /// command a second time.
    pub slurmd_c: Option<Result<CmdOutput, HostError>>,
    /// The facts and GPUs it read, when the host is unchanged (a steady `detect-gpus` answers
    /// from them).
    pub seen: Option<(NodeFacts, Inventory)>,
    /// The record's [`Steady::gpu_sharing`], when the host is unchanged.
    pub gpu_sharing: Option<crate::gpu::GpuSharing>,
    /// What the health-check program last wrote (no XID held), when the host is unchanged:
    /// a steady `detect-gpus` reports its XIDs as the full hook does.
    pub program: Option<super::health_check_files::ProgramState>,
}

/// What a steady check compares with the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// update-status: the hardware, the daemons ([`services`]) and the controller's port.
    Node,
    /// `detect-gpus`: the hardware only (the facts, the GPUs, the device files), what the
    /// action reports.
    Hardware,
}

/// Checks whether this hook finds the host as the last full hook left it, within `scope`. The
/// commands (`slurmd -C`, and for [`Scope::Node`] the `systemctl show` of [`services`]) are
/// independent reads, so they run side by side ([`Host::run_all`]) while this process reads
/// the GPUs from NVML on a second thread; their answers are then judged in the order a
/// sequential check would have met them, so what is returned (and which error stops the hook)
/// is the same.
pub fn unchanged(host: &Host<'_>, scope: Scope) -> Result<SteadyCheck, CharmError> {
    let Some(raw) = host.read(STEADY_PATH)? else {
        return Ok(SteadyCheck::default());
    };
    let Ok(steady) = serde_json::from_slice::<Steady>(&raw) else {
        tracing::warn!("{STEADY_PATH} is unreadable; running the hook in full");
        return Ok(SteadyCheck::default());
    };
    // The health-check program holds an XID: the status must say so (a full hook).
    let program = super::health_check_files::ProgramState::read(host);
    if program.as_ref().is_some_and(|s| !s.held.is_empty()) {
        return Ok(SteadyCheck::default());
    }
    let slurmd_c_cmd = Cmd::new("slurmd", ["-C"]);
    let node = scope == Scope::Node;
    let opts = DetectOptions::from_host_root(host.root());
    let (detected, outputs, port) = std::thread::scope(|threads| {
        let nvml = threads.spawn(|| crate::gpu::detect(&opts));
        // the controller's port, on its own thread (a name lookup may take its 1 s limit)
        let port = steady
            .conf_server
            .as_deref()
            .filter(|_| node)
            .map(|server| threads.spawn(move || crate::charms::host::port_answers(server)));
        let outputs = if node {
            let [slurmd_c, services] = host.run_all(&[slurmd_c_cmd.clone(), services_cmd()]);
            (slurmd_c, Some(services))
        } else {
            (host.run(&slurmd_c_cmd), None)
        };
        (nvml.join(), outputs, port.map(|p| p.join()))
    });
    // A panic while reading the GPUs stays a panic of the hook, as when it ran inline.
    let detected = detected.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let port = port.map(|p| p.unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
    let (slurmd_c, services) = outputs;
    let slurmd_c = slurmd_c.and_then(|out| out.success_of(&slurmd_c_cmd));
    let differs = |slurmd_c| SteadyCheck {
        slurmd_c: Some(slurmd_c),
        ..SteadyCheck::default()
    };
    let facts = match &slurmd_c {
        Ok(out) => match parse_slurmd_c(&out.stdout) {
            Ok(facts) => facts,
            Err(_) => return Ok(differs(slurmd_c)),
        },
        Err(_) => return Ok(differs(slurmd_c)),
    };
    let Ok(inventory) = detected else {
        return Ok(differs(slurmd_c));
    };
    let devices = super::observe::device_files(host)?;
    let services = match services {
        Some(out) => Some(services_of(out?).seen()),
        None => None,
    };
    let now = fingerprint(&facts, &inventory, &devices);
    // a closed port: the controller is gone, the full hook asks it and says so; a name that
    // does not resolve here (`None`) says nothing new
    if now != steady.fingerprint
        || (node && services != steady.services)
        || port == Some(Some(false))
    {
        return Ok(differs(slurmd_c));
    }
    Ok(SteadyCheck {
        status: Some(Status::new(StatusKind::Active, steady.message)),
        slurmd_c: Some(slurmd_c),
        seen: Some((facts, inventory)),
        gpu_sharing: steady.gpu_sharing,
        program,
    })
}

#[cfg(test)]
mod tests {
    use super::{Services, services_of};
    use crate::charms::host::CmdOutput;

    fn shown(code: i32, stdout: &str) -> Services {
        services_of(CmdOutput {
            code: Some(code),
            stdout: stdout.to_owned(),
            stderr: String::new(),
        })
    }

    #[test]
    fn one_systemctl_show_says_whether_slurmd_runs_and_both_main_pids() {
        // systemd's own order (MainPID before ActiveState), one block per unit
        let running = shown(
            0,
            "MainPID=4321\nActiveState=active\n\nMainPID=812\nActiveState=active\n",
        );
        assert_eq!(
            running,
            Services {
                slurmd_active: true,
                pids: "4321 812".into()
            }
        );
        // a notify slurmd not ready yet counts as running; a stopped one does not, and
        // munge's state is not slurmd's
        let activating = shown(
            0,
            "ActiveState=activating\nMainPID=4321\n\nActiveState=active\nMainPID=812\n",
        );
        assert!(activating.slurmd_active);
        for state in ["inactive", "failed", "deactivating"] {
            let out =
                format!("MainPID=0\nActiveState={state}\n\nMainPID=812\nActiveState=active\n");
            assert_eq!(
                shown(0, &out),
                Services {
                    slurmd_active: false,
                    pids: "0 812".into()
                },
                "{state}"
            );
        }
        // systemctl itself failing says nothing is known
        assert_eq!(
            shown(1, ""),
            Services {
                slurmd_active: false,
                pids: "unknown".into()
            }
        );
    }
}
