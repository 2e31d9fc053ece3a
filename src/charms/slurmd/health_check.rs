//! The health-check program Slurm runs between hooks (`HealthCheckProgram`).
//!
//! The slurmd charm links [`super::keys::PROGRAM_PATH`] to its own binary and writes [`SETTINGS_PATH`] (the
//! node's name, the controller, the NVML library the hook used, the GPUs it remembers); the
//! controller names [`super::keys::PROGRAM_PATH`] in slurm.conf. slurmd then runs it as root every
//! `HealthCheckInterval` seconds, with an empty environment, and kills it after 60 s. Run under
//! the name [`PROGRAM_NAME`] (or as `slurm-charm health-check`), the binary:
//!
//! 1. reads NVML in a thread with a deadline ([`NVML_DEADLINE`]): a hang is a verdict (every
//!    remembered GPU unreadable), not a wait;
//! 2. reads the XIDs the kernel logged since its last run (`/dev/kmsg` after the remembered
//!    record number, [`crate::gpu::scan_kmsg`]; why the kernel log: `src/gpu/xid.rs`);
//! 3. judges both exactly as a hook does ([`crate::gpu::assess`], [`crate::gpu::add_xids`],
//!    [`super::health_verdict::decide`]): drains the node with the charm's reason, or resumes it only
//!    from a drain the charm set; an operator's drain is never touched;
//! 4. writes its small state file ([`STATE_PATH`]: the kernel log cursor, the drain-class XIDs
//!    held in this boot, the last [`super::health_check_files::RECENT_XIDS`] XIDs, a count per XID and per GPU and XID, the
//!    verdict), which the next hook reads for the status and `detect-gpus`;
//! 5. where node-exporter's textfile directory exists (the path the hook wrote in
//!    [`ProgramSettings::textfile_dir`]), writes the per-GPU XID counters for Prometheus
//!    ([`crate::charms::cos::write_xid_metrics`], `docs/observability.md`).
//!
//! A drain-class XID holds the node drained until the machine boots again (a new boot id):
//! NVIDIA's remedy for every one of them is a GPU reset or a reboot. Every step is bounded, the
//! program always exits 0 (a non-zero exit only makes slurmd log an error), and it never
//! touches slurmd itself.

use std::path::Path;

use std::time::{Duration, Instant};

use super::health_check_files::{ProgramSettings, ProgramState, STATE_PATH};
use super::health_verdict::{Decision, decide, verdict};
use super::keys::SETTINGS_PATH;
use super::node_state::{NodeDrain, parse_sinfo};
use super::plan_types::ServiceAction;
use crate::charms::host::{Cmd, Host, HostError, Owner, SystemRunner};
use crate::gpu::{DetectOptions, GpuError, Inventory, scan_kmsg};

/// The file name the program is run under (argv\[0\]'s last part).
pub const PROGRAM_NAME: &str = "slurmd-charm-health-check";
/// The kernel log, one record per read.
pub const KMSG_PATH: &str = "/dev/kmsg";
/// How long NVML may take before its silence is the verdict.
pub const NVML_DEADLINE: Duration = Duration::from_secs(15);
/// How long `sinfo` and `scontrol` may each take.
pub const SLURM_DEADLINE: Duration = Duration::from_secs(10);
/// Why the program could not do its work (it still exits 0; slurmd logs what it prints).
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// The settings file is missing: no hook has configured this node yet.
    #[error(
        "{SETTINGS_PATH} is missing: the slurmd charm writes it once the node is related to \
         slurmctld (run `juju status` to see the unit)"
    )]
    NotConfigured,
    /// The settings file cannot be read.
    #[error("cannot read {SETTINGS_PATH}: {0}; the next hook of the slurmd charm rewrites it")]
    Settings(String),
    /// The state could not be encoded (not expected: it is plain data).
    #[error("cannot encode the health-check state for {STATE_PATH}: {0}")]
    State(#[source] serde_json::Error),
    /// A host operation failed.
    #[error(transparent)]
    Host(#[from] HostError),
}

/// The outcome of one run, for its one output line and the tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The verdict (`healthy` or the problems).
    pub verdict: String,
    /// What was done in Slurm.
    pub decision: Decision,
    /// What could not be read (NVML silent, kernel log unreadable, `sinfo` failed).
    pub notes: Vec<String>,
}

/// Reads NVML with `opts` in a thread; `Err(GpuError::Timeout)` when it does not answer within
/// `deadline` (the thread is left behind: the process exits soon after).
pub fn detect_with_deadline(
    opts: DetectOptions,
    deadline: Duration,
) -> Result<Inventory, GpuError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("nvml".into())
        .spawn(move || {
            // the receiver may be gone after a timeout; nothing to do then
            let _ = tx.send(crate::gpu::detect(&opts));
        });
    if let Err(e) = spawned {
        return Err(GpuError::Thread(e.to_string()));
    }
    match rx.recv_timeout(deadline) {
        Ok(result) => result,
        Err(_) => Err(GpuError::Timeout {
            secs: deadline.as_secs(),
        }),
    }
}

/// One run of the program against `host` (its root is where the settings are found).
pub fn run_once(host: &Host<'_>, nvml_deadline: Duration) -> Result<Outcome, ProgramError> {
    let raw = host
        .read(SETTINGS_PATH)?
        .ok_or(ProgramError::NotConfigured)?;
    let settings: ProgramSettings =
        serde_json::from_slice(&raw).map_err(|e| ProgramError::Settings(e.to_string()))?;
    let mut notes = Vec::new();
    let boot_id = host
        .read(super::keys::BOOT_ID)?
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let mut state = ProgramState::read(host).unwrap_or_default();
    if state.boot_id != boot_id {
        state = ProgramState {
            boot_id: boot_id.clone(),
            ..ProgramState::default()
        };
    }
    let opts = DetectOptions {
        // a library that is gone (a driver upgrade) falls back to the default search
        nvml_lib: settings.nvml_lib.clone().filter(|p| p.exists()),
        host_root: host.root().to_path_buf(),
    };
    let inventory = detect_with_deadline(opts, nvml_deadline);
    if let Err(e) = &inventory {
        notes.push(e.to_string());
    }
    match scan_kmsg(&host.path(KMSG_PATH), state.kmsg_seq) {
        Ok(scan) => {
            state.record(&scan.xids);
            if scan.last_seq.is_some() {
                state.kmsg_seq = scan.last_seq;
            }
        }
        Err(e) => notes.push(format!(
            "cannot read the kernel log {KMSG_PATH} ({e}): XIDs are not checked"
        )),
    }
    if let Some(cleared) = settings.xids_cleared_through {
        state.held.retain(|x| x.seq > cleared);
    }
    let report = verdict(inventory.as_ref(), &settings.known, &state.held);
    state.verdict = if report.healthy() {
        "healthy".to_owned()
    } else {
        report.summary()
    };
    let node = read_node(host, &settings);
    let node = match node {
        Ok(n) => Some(n),
        Err(e) => {
            notes.push(e);
            None
        }
    };
    let decision = decide(&report, node.as_ref());
    match &decision {
        Decision::Drain { reason } => {
            act(
                host,
                &ServiceAction::DrainNode {
                    node: settings.node.clone(),
                    reason: reason.clone(),
                    server: settings.server.clone(),
                },
                &mut notes,
            );
        }
        Decision::Resume => act(
            host,
            &ServiceAction::ResumeNode {
                node: settings.node.clone(),
                server: settings.server.clone(),
                why: "GPUs healthy again",
            },
            &mut notes,
        ),
        Decision::Keep | Decision::LeaveOperators { .. } => {}
    }
    let bytes = serde_json::to_vec(&state).map_err(ProgramError::State)?;
    host.write_unsynced(STATE_PATH, &bytes, 0o644, Some(Owner::ROOT))?;
    if let Some(dir) = &settings.textfile_dir {
        let written = crate::charms::cos::write_xid_metrics(
            host,
            dir,
            &settings.node,
            &report.known,
            &state.gpu_counts,
        );
        if let Err(e) = written {
            notes.push(format!(
                "cannot write the XID metrics for node-exporter: {e}"
            ));
        }
    }
    Ok(Outcome {
        verdict: state.verdict,
        decision,
        notes,
    })
}

fn read_node(host: &Host<'_>, settings: &ProgramSettings) -> Result<NodeDrain, String> {
    let cmd = Cmd::new(
        "sinfo",
        ["-h", "-N", "-n", settings.node.as_str(), "-o", "%T|%E"],
    )
    .env("SLURM_CONF_SERVER", &settings.server)
    .with_timeout(SLURM_DEADLINE);
    let out = host
        .run(&cmd)
        .and_then(|o| o.success_of(&cmd))
        .map_err(|e| format!("cannot read the node's state: {e}"))?;
    parse_sinfo(&settings.node, &settings.server, &out.stdout).map_err(|e| e.to_string())
}

fn act(host: &Host<'_>, action: &ServiceAction, notes: &mut Vec<String>) {
    if let Err(e) = super::node_state::service_with_timeout(host, action, SLURM_DEADLINE) {
        notes.push(e.to_string());
    }
}

/// The program's `main`: sets a usable `PATH` (slurmd gives an empty environment), runs once,
/// prints one line, and exits 0 whatever happened (the process ends here, so a thread stuck
/// in NVML cannot keep it alive).
pub fn main_program() -> ! {
    let started = Instant::now();
    let runner = SystemRunner;
    let host = Host::new(Host::root_from_env(), &runner);
    let line = match run_once(&host, NVML_DEADLINE) {
        Ok(o) => {
            let notes = if o.notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", o.notes.join("; "))
            };
            format!("{}: {}{notes}", o.decision, o.verdict)
        }
        Err(e) => e.to_string(),
    };
    println!(
        "{PROGRAM_NAME}: {line} [{} ms]",
        started.elapsed().as_millis()
    );
    std::process::exit(0)
}

/// True when this process was started as the health-check program: under [`PROGRAM_NAME`],
/// or with `health-check` as its first argument.
pub fn invoked_as_program(args: &[std::ffi::OsString]) -> bool {
    let name = args
        .first()
        .map(Path::new)
        .and_then(Path::file_name)
        .is_some_and(|n| n == PROGRAM_NAME);
    name || args.get(1).is_some_and(|a| a == "health-check")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charms::slurmd::keys::PROGRAM_PATH;

    #[test]
    fn program_name_or_subcommand() {
        let a = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(invoked_as_program(&a(&[PROGRAM_PATH])));
        assert!(invoked_as_program(&a(&["/x/dispatch", "health-check"])));
        assert!(!invoked_as_program(&a(&["/x/dispatch"])));
    }
}
