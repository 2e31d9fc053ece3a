//! The health-check program Slurm runs between hooks (`HealthCheckProgram`).
//!
//! The slurmd charm links [`PROGRAM_PATH`] to its own binary and writes [`SETTINGS_PATH`] (the
//! node's name, the controller, the NVML library the hook used, the GPUs it remembers); the
//! controller names [`PROGRAM_PATH`] in slurm.conf. slurmd then runs it as root every
//! `HealthCheckInterval` seconds, with an empty environment, and kills it after 60 s. Run under
//! the name [`PROGRAM_NAME`] (or as `slurm-charm health-check`), the binary:
//!
//! 1. reads NVML in a thread with a deadline ([`NVML_DEADLINE`]): a hang is a verdict (every
//!    remembered GPU unreadable), not a wait;
//! 2. reads the XIDs the kernel logged since its last run (`/dev/kmsg` after the remembered
//!    record number, [`crate::gpu::scan_kmsg`]; why the kernel log: `src/gpu/xid.rs`);
//! 3. judges both exactly as a hook does ([`crate::gpu::assess`], [`crate::gpu::add_xids`],
//!    [`super::health::decide`]): drains the node with the charm's reason, or resumes it only
//!    from a drain the charm set; an operator's drain is never touched;
//! 4. writes its small state file ([`STATE_PATH`]: the kernel log cursor, the drain-class XIDs
//!    held in this boot, the last [`RECENT_XIDS`] XIDs, a count per XID and per GPU and XID, the
//!    verdict), which the next hook reads for the status and `detect-gpus`;
//! 5. where node-exporter's textfile directory exists (the path the hook wrote in
//!    [`ProgramSettings::textfile_dir`]), writes the per-GPU XID counters for Prometheus
//!    ([`crate::charms::cos::write_xid_metrics`], `docs/observability.md`).
//!
//! A drain-class XID holds the node drained until the machine boots again (a new boot id):
//! NVIDIA's remedy for every one of them is a GPU reset or a reboot. Every step is bounded, the
//! program always exits 0 (a non-zero exit only makes slurmd log an error), and it never
//! touches slurmd itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::health::{Decision, NodeDrain, decide, parse_sinfo};
use super::plan::ServiceAction;
use crate::charms::host::{Cmd, Host, HostError, Owner, SystemRunner};
use crate::gpu::{
    DetectOptions, GpuError, HealthReport, Inventory, KnownGpu, XidClass, XidCount, XidEvent,
    add_xids, assess, assess_unreadable, scan_kmsg,
};

/// The file name the program is run under (argv\[0\]'s last part).
pub const PROGRAM_NAME: &str = "slurmd-charm-health-check";
/// Where the slurmd charm links its binary for Slurm (`HealthCheckProgram`). Under
/// `/var/lib/slurm`, which the slurmd package creates on every node.
pub const PROGRAM_PATH: &str = "/var/lib/slurm/slurmd-charm/slurmd-charm-health-check";
/// What the hooks tell the program ([`ProgramSettings`], JSON).
pub const SETTINGS_PATH: &str = "/var/lib/slurm/slurmd-charm/health-check.json";
/// What the program remembers between runs ([`ProgramState`], JSON, under 8 KiB).
pub const STATE_PATH: &str = "/var/lib/slurm/slurmd-charm/health-state.json";
/// The kernel log, one record per read.
pub const KMSG_PATH: &str = "/dev/kmsg";
/// How long NVML may take before its silence is the verdict.
pub const NVML_DEADLINE: Duration = Duration::from_secs(15);
/// How long `sinfo` and `scontrol` may each take.
pub const SLURM_DEADLINE: Duration = Duration::from_secs(10);
/// How many XIDs of any class the state file keeps for `detect-gpus`.
pub const RECENT_XIDS: usize = 16;
/// How many drain-class XIDs are held at most (distinct GPU and XID pairs).
pub const MAX_HELD: usize = 32;
/// How many distinct GPU and XID pairs are counted at most (the state stays small; a pair
/// beyond it is still counted per XID in [`ProgramState::counts`]).
pub const MAX_COUNTED: usize = 32;

/// What a hook tells the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramSettings {
    /// This node's name in Slurm.
    pub node: String,
    /// The controller's config server (`host:port`, as `SLURM_CONF_SERVER`).
    pub server: String,
    /// The NVML library the hook loaded (`None`: the default search).
    #[serde(default)]
    pub nvml_lib: Option<PathBuf>,
    /// The GPUs the hook remembers (unit state `known-gpus`).
    #[serde(default)]
    pub known: Vec<KnownGpu>,
    /// XIDs logged up to this kernel log record no longer hold the node: the operator cleared
    /// them (`detect-gpus clear-xids=true`, after resetting the GPU).
    #[serde(default)]
    pub xids_cleared_through: Option<u64>,
    /// node-exporter's textfile directory as the hook sees it
    /// ([`crate::charms::cos::textfile_dir`]; the program gets no environment): where the XID
    /// counters are written, when it exists. `None` (settings of an older charm): not written.
    #[serde(default)]
    pub textfile_dir: Option<String>,
}

impl ProgramSettings {
    /// The settings as the last hook wrote them (`None`: absent or unreadable).
    pub fn parse(raw: Option<&[u8]>) -> Option<ProgramSettings> {
        serde_json::from_slice(raw?).ok()
    }
}

/// One XID in the state file's recent list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentXid {
    /// The XID as logged.
    #[serde(flatten)]
    pub event: XidEvent,
    /// Its class.
    pub class: XidClass,
    /// NVIDIA's meaning.
    pub meaning: String,
}

/// What the program remembers between runs (and what the hooks read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramState {
    /// The boot the rest belongs to.
    #[serde(default)]
    pub boot_id: String,
    /// The last kernel log record read.
    #[serde(default)]
    pub kmsg_seq: Option<u64>,
    /// Drain-class XIDs seen in this boot (each GPU and XID once).
    #[serde(default)]
    pub held: Vec<XidEvent>,
    /// The last [`RECENT_XIDS`] XIDs of any class, oldest first.
    #[serde(default)]
    pub recent: Vec<RecentXid>,
    /// How many times each XID was logged in this boot.
    #[serde(default)]
    pub counts: BTreeMap<u32, u64>,
    /// How many times each XID was logged for each GPU in this boot (at most [`MAX_COUNTED`]
    /// pairs, in the order first seen): the `slurm_node_gpu_xid_errors_total` counters.
    #[serde(default)]
    pub gpu_counts: Vec<XidCount>,
    /// The last verdict: `healthy` or the problems (the drain reason's text).
    #[serde(default)]
    pub verdict: String,
}

impl ProgramState {
    /// The state as last written, or `None` when absent or unreadable (then the program
    /// starts afresh; a hook ignores it).
    pub fn read(host: &Host<'_>) -> Option<ProgramState> {
        let raw = host.read(STATE_PATH).ok()??;
        serde_json::from_slice(&raw).ok()
    }

    /// The drain-class XIDs that hold in boot `boot_id` and were logged after record
    /// `cleared` (none from another boot; an empty boot id on either side cannot tell, and
    /// then the program's own word stands).
    pub fn held_in(&self, boot_id: &str, cleared: Option<u64>) -> Vec<XidEvent> {
        let other_boot = !boot_id.is_empty() && !self.boot_id.is_empty() && self.boot_id != boot_id;
        if other_boot {
            return Vec::new();
        }
        self.held
            .iter()
            .filter(|x| cleared.is_none_or(|c| x.seq > c))
            .cloned()
            .collect()
    }

    /// Adds newly logged XIDs: counted, kept in the recent list, drain-class ones held.
    fn record(&mut self, xids: &[XidEvent]) {
        for x in xids {
            let (class, meaning) = x.class();
            *self.counts.entry(x.xid).or_default() += 1;
            let counted = self
                .gpu_counts
                .iter()
                .position(|c| c.pci_bus_id == x.pci_bus_id && c.xid == x.xid);
            match counted {
                Some(i) => self.gpu_counts[i].count += 1,
                None if self.gpu_counts.len() < MAX_COUNTED => self.gpu_counts.push(XidCount {
                    pci_bus_id: x.pci_bus_id.clone(),
                    xid: x.xid,
                    count: 1,
                }),
                None => {}
            }
            self.recent.push(RecentXid {
                event: x.clone(),
                class,
                meaning: meaning.to_owned(),
            });
            let known = self
                .held
                .iter()
                .any(|h| h.pci_bus_id == x.pci_bus_id && h.xid == x.xid);
            if class == XidClass::Drain && !known && self.held.len() < MAX_HELD {
                self.held.push(x.clone());
            }
        }
        let excess = self.recent.len().saturating_sub(RECENT_XIDS);
        self.recent.drain(..excess);
    }
}

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
        .read(super::driver::BOOT_ID)?
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

/// The one verdict of the hook ([`super::health::report`]) and the program: NVML's health
/// judged against the remembered GPUs, plus the held drain-class XIDs.
pub fn verdict(
    inventory: Result<&Inventory, &GpuError>,
    known: &[KnownGpu],
    held: &[XidEvent],
) -> HealthReport {
    let (mut report, now) = match inventory {
        Ok(inv) => (assess(&inv.health, known), inv.health.as_slice()),
        Err(e) => (assess_unreadable(e, known).unwrap_or_default(), &[][..]),
    };
    add_xids(&mut report, held, now, known);
    report
}

/// The program's part of the hook's plan: the link to the charm's binary, and the settings
/// (once the node's name and the controller are known).
pub fn plan_program(obs: &super::observe::Observed, plan: &mut super::plan::SlurmdPlan) {
    if obs.health_program_link.as_deref() != Some(obs.charm_binary.as_path()) {
        plan.services
            .insert(0, ServiceAction::LinkHealthCheck(obs.charm_binary.clone()));
    }
    let (Ok(facts), Some(Ok(info))) = (&obs.facts, &obs.cluster_info) else {
        return;
    };
    let known = plan
        .state
        .get(super::health::KNOWN_GPUS_STATE)
        .map(String::as_str)
        .or(obs.known_gpus_raw.as_deref());
    let settings = ProgramSettings {
        xids_cleared_through: xids_cleared_through(obs),
        node: facts.node.name.as_ref().to_owned(),
        server: info.conf_server(),
        nvml_lib: obs
            .inventory
            .as_ref()
            .ok()
            .and_then(|inv| inv.nvml_library.clone()),
        known: crate::gpu::parse_known(known).unwrap_or_default(),
        textfile_dir: Some(crate::charms::cos::textfile_dir()),
    };
    let Ok(bytes) = serde_json::to_vec_pretty(&settings) else {
        return;
    };
    if obs.health_settings_on_disk.as_deref() != Some(bytes.as_slice()) {
        plan.files.push(crate::charms::plan::FileWrite::new(
            SETTINGS_PATH,
            bytes,
            0o644,
            Some(Owner::ROOT),
        ));
    }
}

/// The record up to which XIDs are cleared after this hook: everything the program has read
/// when this hook is `detect-gpus clear-xids=true`, else what the last hook wrote.
pub fn xids_cleared_through(obs: &super::observe::Observed) -> Option<u64> {
    let clearing = matches!(
        &obs.action,
        Some((name, params)) if name == "detect-gpus"
            && matches!(params.get("clear-xids"), Some(serde_json::Value::Bool(true)))
    );
    let before = ProgramSettings::parse(obs.health_settings_on_disk.as_deref())
        .and_then(|s| s.xids_cleared_through);
    if clearing {
        obs.health_state
            .as_ref()
            .and_then(|s| s.kmsg_seq)
            .or(before)
    } else {
        before
    }
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
    if let Err(e) = super::apply::service_with_timeout(host, action, SLURM_DEADLINE) {
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

    fn xid(bus: &str, xid: u32) -> XidEvent {
        XidEvent {
            seq: 1,
            pci_bus_id: bus.into(),
            xid,
        }
    }

    #[test]
    fn drain_class_is_held_once_others_only_counted() {
        let mut s = ProgramState::default();
        s.record(&[xid("a", 79), xid("a", 13), xid("a", 79), xid("b", 92)]);
        assert_eq!(s.held, vec![xid("a", 79)]);
        assert_eq!(s.counts[&79], 2);
        assert_eq!(s.recent.len(), 4);
        s.record(&vec![xid("c", 13); 40]);
        assert_eq!(s.recent.len(), RECENT_XIDS);
        s.boot_id = "a".into();
        assert!(s.held_in("b", None).is_empty());
        assert_eq!(s.held_in("a", None), vec![xid("a", 79)]);
        assert_eq!(s.held_in("", None), vec![xid("a", 79)]);
        assert!(s.held_in("a", Some(1)).is_empty());
    }

    #[test]
    fn program_name_or_subcommand() {
        let a = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(invoked_as_program(&a(&[PROGRAM_PATH])));
        assert!(invoked_as_program(&a(&["/x/dispatch", "health-check"])));
        assert!(!invoked_as_program(&a(&["/x/dispatch"])));
    }
}
