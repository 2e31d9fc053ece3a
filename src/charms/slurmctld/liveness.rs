//! Is slurmctld running when it should? Every leader hook finds out, update-status and relation
//! events included: a slurmctld killed between hooks (OOM, a crash) is otherwise never noticed,
//! and the status keeps reporting the cluster as active. A hook asks systemd (`systemctl
//! is-active slurmctld`, one command) before it plans, except a relation event that changed
//! the store, which reconfigures slurmctld in the usual case: slurmctld answering that
//! `scontrol reconfigure` is the proof it runs, and the process saved is most of that hook's
//! time on a small cluster (docs/BENCHMARKS.md, issue 38, sixteenth pass). Such a hook plans
//! with slurmctld [`Liveness::assumed`] to run and checks in apply: a reconfigure that gets
//! no answer while systemd says slurmctld is not running, or any other decision (asked of
//! systemd before anything is written), finds it not running, and the hook then observes and
//! plans again, asking first, so it follows the rule below as any other hook
//! ([`super::apply::Outcome::found_not_running`]).
//!
//! The rule (docs/charms.md, "slurmctld liveness"):
//!
//! * slurmctld should run whenever slurm.conf has nodes (without any it is stopped on purpose,
//!   [`super::decide::Reload::Stop`]);
//! * a hook that finds it not running restarts it, once, and waits until it answers `scontrol
//!   ping` (the ≤ 20 s wait of every restart). It answers: the status says it was restarted,
//!   a warning with the last lines of its log goes to juju-log, and the [`REVIVED`] marker is
//!   written. It does not answer: blocked with the last line of its log (the last lines in
//!   juju-log), and no marker (the next hook tries once more; one that starts it is a first
//!   revival);
//! * a hook that finds it not running **again** while the marker is there (no hook in between
//!   found it running since the charm restarted it) restarts it once more but blocks: it keeps
//!   dying, and restarting is not a fix. The last lines of its log from before the restart
//!   (what it said as it died) are in the status, in short, and in juju-log;
//! * a hook that finds it running removes the marker, so the status is the usual one again.
//!
//! When the files changed as well, the restart takes them in (a restart reads them), and a
//! slurmctld that does not start on them is the usual refusal: the last accepted files are put
//! back and it is started on them ([`super::apply`]).

use super::decide::{Decision, Reload};
use crate::charms::host::{Cmd, CmdOutput, Host};
use crate::charms::util::short;
use juju_runtime::{Status, StatusKind};

/// Marker beside the store: the last leader hook that found slurmctld not running restarted it.
pub const REVIVED: &str = "/var/lib/slurm-charms/slurmctld/revived";

/// slurmctld's log (`SlurmctldLogFile`, a key the charm owns).
pub const SLURMCTLD_LOG: &str = "/var/log/slurm/slurmctld.log";

/// How many of the log's last lines go to juju-log.
pub const LOG_LINES: usize = 10;

/// What a leader hook saw of slurmctld before doing anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Liveness {
    /// `systemctl is-active slurmctld` says it runs (`active`, or `activating`/`reloading`: a
    /// start or a re-exec under way is not a death).
    pub running: bool,
    /// The [`REVIVED`] marker is there.
    pub revived_before: bool,
    /// The last [`LOG_LINES`] lines of [`SLURMCTLD_LOG`], read only when it is not running.
    pub log_tail: Vec<String>,
    /// Not asked: the hook plans with slurmctld running and proves it in apply (see the
    /// module doc).
    pub assumed: bool,
}

/// Whether `systemctl is-active slurmctld` says it runs: `active`, or `activating`/`reloading`
/// (a start or a re-exec under way is not a death).
pub fn says_running(out: &CmdOutput) -> bool {
    out.success() || crate::charms::common::systemd_state_runs(&out.stdout)
}

impl Liveness {
    /// Asks systemd, looks for the marker, and reads the log's end when slurmctld is not
    /// running. A `systemctl` that cannot be run or does not answer in time is no evidence of
    /// a death: logged, and slurmctld counted as running (nothing is restarted on a guess).
    pub fn observe(host: &Host<'_>) -> Liveness {
        let running = match host.run(&Cmd::new("systemctl", ["is-active", "slurmctld"])) {
            Ok(out) => says_running(&out),
            Err(e) => {
                tracing::warn!("cannot tell whether slurmctld runs: {e}");
                true
            }
        };
        Liveness {
            running,
            revived_before: host.exists(REVIVED),
            log_tail: if running { Vec::new() } else { log_tail(host) },
            assumed: false,
        }
    }

    /// slurmctld taken to run, not asked: for a hook whose reconfigure will prove it, where no
    /// [`REVIVED`] marker waits to be cleared (the caller checks).
    pub fn assumed() -> Liveness {
        Liveness {
            running: true,
            revived_before: false,
            log_tail: Vec::new(),
            assumed: true,
        }
    }

    /// Whether a hook may skip the plan: slurmctld runs and no revival is to be cleared.
    pub fn settled(&self) -> bool {
        self.running && !self.revived_before
    }
}

/// The last [`LOG_LINES`] lines of slurmctld's log (none when it cannot be read).
pub fn log_tail(host: &Host<'_>) -> Vec<String> {
    let text = host
        .read(SLURMCTLD_LOG)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(LOG_LINES)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

/// The last line of `tail`, short, for a status (or where the log says nothing).
pub fn last_line(tail: &[String]) -> String {
    match tail.last() {
        Some(l) => short(l.trim(), 160),
        None => format!("nothing in {SLURMCTLD_LOG}"),
    }
}

/// What a hook that found slurmctld not running does instead of `decision`, when it should run
/// (`should_run`: slurm.conf has nodes): nothing or a resume becomes [`Reload::Revive`] (a
/// restart on the files it ran), a reconfigure or restart becomes a restart (which reads the
/// new files). `None` when it should not run or the decision already stops it.
pub fn revive(decision: &Decision, should_run: bool) -> Option<Decision> {
    if !should_run {
        return None;
    }
    let reload = match decision.reload {
        Reload::Nothing | Reload::Resume | Reload::Revive => Reload::Revive,
        Reload::Reconfigure | Reload::Restart => Reload::Restart,
        Reload::Stop => return None,
    };
    Some(Decision {
        reload,
        ..decision.clone()
    })
}

/// What the [`REVIVED`] marker becomes in this hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Left as it is.
    Keep,
    /// Written: this hook restarted a slurmctld it found not running.
    Write,
    /// Removed: this hook found slurmctld running.
    Remove,
}

/// The status of a hook that restarted a slurmctld it found not running, from the one it would
/// have set otherwise (`usual`): blocked when it had been restarted by the last hook already
/// ([`Liveness::revived_before`]), else the usual status with the warning appended.
pub fn revived_status(live: &Liveness, usual: &Status) -> Status {
    if live.revived_before {
        return Status::new(
            StatusKind::Blocked,
            short(
                &format!(
                    "slurmctld stopped again after the charm restarted it (restarted once more; \
                     see juju debug-log): {}",
                    last_line(&live.log_tail)
                ),
                300,
            ),
        );
    }
    Status::new(
        usual.kind,
        short(
            &format!("{}; slurmctld was not running: restarted it", usual.message),
            300,
        ),
    )
}

/// The status when a restarted slurmctld does not answer (`tail`: its log after the try).
pub fn dead_status(tail: &[String]) -> Status {
    Status::new(
        StatusKind::Blocked,
        short(
            &format!(
                "slurmctld does not start (see juju debug-log; fix, then `systemctl start \
                 slurmctld` or wait for the next hook): {}",
                last_line(tail)
            ),
            300,
        ),
    )
}

/// `what` with `tail`, each line in full: one log record.
pub fn with_log(what: &str, tail: &[String]) -> String {
    if tail.is_empty() {
        format!("{what}; nothing in {SLURMCTLD_LOG}")
    } else {
        format!(
            "{what}; last lines of {SLURMCTLD_LOG}:\n{}",
            tail.join("\n")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(reload: Reload) -> Decision {
        Decision {
            reload,
            resume: vec!["n1".into()],
            gres_changed: Vec::new(),
        }
    }

    #[test]
    fn a_dead_slurmctld_is_restarted_on_what_it_should_run() {
        for (before, after) in [
            (Reload::Nothing, Some(Reload::Revive)),
            (Reload::Resume, Some(Reload::Revive)),
            (Reload::Reconfigure, Some(Reload::Restart)),
            (Reload::Restart, Some(Reload::Restart)),
            (Reload::Stop, None),
        ] {
            let d = revive(&decision(before.clone()), true);
            assert_eq!(d.as_ref().map(|d| d.reload.clone()), after, "{before:?}");
            if let Some(d) = d {
                assert_eq!(d.resume, ["n1"], "the resume is kept");
            }
        }
        assert_eq!(revive(&decision(Reload::Nothing), false), None);
    }

    #[test]
    fn a_second_death_blocks_with_the_log() {
        let usual = Status::new(StatusKind::Active, "2 nodes, 14 GPUs");
        let mut live = Liveness {
            running: false,
            revived_before: false,
            log_tail: vec!["a".into(), "fatal: out of memory".into()],
            assumed: false,
        };
        let s = revived_status(&live, &usual);
        assert_eq!(s.kind, StatusKind::Active);
        assert_eq!(
            s.message,
            "2 nodes, 14 GPUs; slurmctld was not running: restarted it"
        );
        live.revived_before = true;
        let s = revived_status(&live, &usual);
        assert_eq!(s.kind, StatusKind::Blocked);
        assert!(s.message.ends_with("fatal: out of memory"), "{}", s.message);
        assert!(
            dead_status(&[])
                .message
                .contains("nothing in /var/log/slurm")
        );
    }
}
