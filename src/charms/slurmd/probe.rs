//! Asking the controller whether this node can talk to it: a TCP check of the config server's
//! port, then a munge-authenticated `scontrol ping` pointed at it. Part of what a slurmd hook
//! observes; [`super::plan`] turns the answer into a status.

use crate::charms::host::{Cmd, Host, HostError};
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

/// How long the controller's name may take to resolve.
const LOOKUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether a TCP connection to `addr` (`host:port`) opens within two seconds; `None` when the
/// name does not resolve here within [`LOOKUP_LIMIT`] (a resolver that does not answer must
/// not stall every hook for its 5 s timeout). An IP literal needs no lookup; a name is looked
/// up by `getent ahosts` (the same NSS resolver) in a child process that is killed at the
/// limit, so nothing of the lookup outlives this call (an in-process lookup cannot be
/// cancelled and would leave its thread behind).
pub(super) fn port_answers(addr: &str) -> Option<bool> {
    use std::net::{SocketAddr, TcpStream};
    let addrs: Vec<SocketAddr> = match addr.parse::<SocketAddr>() {
        Ok(a) => vec![a],
        Err(_) => lookup(addr)?,
    };
    if addrs.is_empty() {
        return None;
    }
    Some(
        addrs
            .iter()
            .any(|a| TcpStream::connect_timeout(a, std::time::Duration::from_secs(2)).is_ok()),
    )
}

/// Resolves `name:port` through `getent ahosts`, bounded by [`LOOKUP_LIMIT`].
fn lookup(addr: &str) -> Option<Vec<std::net::SocketAddr>> {
    use crate::charms::host::{Runner, SystemRunner};
    let (name, port) = addr.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let cmd = Cmd::new("getent", ["ahosts", name]).with_timeout(LOOKUP_LIMIT);
    let out = SystemRunner.run(&cmd).ok().filter(|o| o.success())?;
    let mut addrs: Vec<std::net::SocketAddr> = out
        .stdout
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .parse::<std::net::IpAddr>()
                .ok()
        })
        .map(|ip| std::net::SocketAddr::new(ip, port))
        .collect();
    addrs.dedup();
    Some(addrs)
}
