//! Asking the controller whether this node can talk to it: a TCP check of the config server's
//! port, then a munge-authenticated `scontrol ping` pointed at it. Part of what a slurmd hook
//! observes; [`super::plan`] turns the answer into a status.

use crate::charms::host::{Cmd, Host, HostError, port_answers};
use crate::charms::util::short;
use juju_runtime::{Status, StatusKind};

/// What the controller answered.
#[derive(Debug, Clone)]
pub enum ControllerProbe {
    /// `scontrol ping` succeeded.
    Answering,
    /// The port is closed or the ping found no controller; the detail says which.
    NotAnswering(String),
    /// The port answers but the ping is refused: this node cannot authenticate (most likely a
    /// munge key that differs from the controller's). Holds what `scontrol` said.
    Refused(String),
    /// `scontrol` could not be run at all (shared: the observation is cloned).
    NoScontrol(std::sync::Arc<HostError>),
}

impl ControllerProbe {
    /// The status to show instead of the normal one, if any.
    pub fn problem(&self, server: &str) -> Option<Status> {
        match self {
            ControllerProbe::Answering => None,
            ControllerProbe::NotAnswering(detail) => Some(Status::new(
                StatusKind::Waiting,
                format!("slurmctld at {server} is not answering{detail}"),
            )),
            ControllerProbe::Refused(said) => Some(Status::new(
                StatusKind::Blocked,
                format!(
                    "cannot authenticate to slurmctld at {server} (munge key mismatch? check /etc/munge/munge.key and munged's options): {said}"
                ),
            )),
            ControllerProbe::NoScontrol(e) => Some(Status::new(
                StatusKind::Blocked,
                format!("{e} (slurm-client provides scontrol)"),
            )),
        }
    }
}

/// Probes the controller at `server` (`host:port`). The port is tried first: a closed port is
/// "not answering" at once (a ping would hang ~10 s).
pub fn probe_controller(host: &Host<'_>, server: &str) -> ControllerProbe {
    let port = port_answers(server);
    if port == Some(false) {
        return ControllerProbe::NotAnswering(" (port closed)".into());
    }
    let ping = Cmd::new("scontrol", ["ping"]).env("SLURM_CONF_SERVER", server);
    let out = match host.run(&ping) {
        Ok(out) if out.success() => return ControllerProbe::Answering,
        Ok(out) => out,
        Err(e) => return ControllerProbe::NoScontrol(std::sync::Arc::new(e)),
    };
    let said = format!("{} {}", out.stdout.trim(), out.stderr.trim());
    let said = short(said.trim(), 120);
    if port == Some(true) {
        tracing::warn!("scontrol ping fails while {server} answers: {said}");
        ControllerProbe::Refused(said)
    } else {
        ControllerProbe::NotAnswering(format!(": {said}"))
    }
}
