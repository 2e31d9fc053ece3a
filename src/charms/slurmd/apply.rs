//! Applies the slurmd charm's desired state: relation data only when changed, files only when
//! their bytes differ, restarts only when the config server, the key or the GPUs changed.

use super::desired::Desired;
use super::observe::Observed;
use super::{MUNGE_KEY, SLURMD_DEFAULTS};
use crate::charms::error::{CharmError, JujuResult};
use crate::charms::host::{Cmd, Host, Owner};
use crate::charms::util::{short, status};
use crate::interface::{NODE_KEY, PARTITION_KEY};
use crate::juju::backend::{Bag, ModelBackend, Status, StatusKind};

/// systemd drop-in for slurmd: Debian's unit has `ConditionPathExists=/etc/slurm/slurm.conf`,
/// which a configless node never has, so `systemctl start slurmd` would silently do nothing.
pub const SLURMD_DROP_IN: &str = "/etc/systemd/system/slurmd.service.d/10-slurm-charms.conf";

/// Content of [`SLURMD_DROP_IN`].
pub const DROP_IN: &str = "# Written by the slurmd charm: a configless slurmd has no /etc/slurm/slurm.conf.\n[Unit]\nConditionPathExists=\n";

const MUNGE: Owner = Owner {
    user: "munge",
    group: "munge",
};
const ROOT: Owner = Owner {
    user: "root",
    group: "root",
};

/// Applies `des`; returns the status to set.
pub fn apply<B: ModelBackend>(
    backend: &B,
    host: &Host<'_>,
    obs: &Observed,
    des: &Desired,
) -> Result<Status, CharmError> {
    for w in &des.warnings {
        tracing::warn!("{w}");
    }
    if let Some(rel) = &obs.relation {
        if let Some(raw) = &des.publish_node {
            tracing::info!("publishing this node's record");
            let bag = Bag::from([(NODE_KEY.to_string(), raw.clone())]);
            backend.relation_set(rel, false, &bag).juju()?;
        }
        if let Some(raw) = &des.publish_partition {
            tracing::info!("publishing partition {raw}");
            let bag = Bag::from([(PARTITION_KEY.to_string(), raw.clone())]);
            backend.relation_set(rel, true, &bag).juju()?;
        }
    }
    if obs.relation_broken && obs.relation.is_none() {
        tracing::info!("slurmctld relation removed: stopping slurmd");
        host.run_ok(&Cmd::new("systemctl", ["stop", "slurmd"]))?;
        host.remove(SLURMD_DEFAULTS)?;
        return Ok(des.status.clone());
    }
    let (Some(cluster), Some(defaults)) = (&des.cluster, &des.defaults) else {
        return Ok(des.status.clone());
    };
    let key_changed = host.write(MUNGE_KEY, &cluster.munge_key, 0o400, Some(MUNGE))?;
    if key_changed {
        tracing::info!("munge key changed: restarting munge");
        host.run_ok(&Cmd::new("systemctl", ["restart", "munge"]))?;
    }
    let server_changed = host.write(SLURMD_DEFAULTS, defaults.as_bytes(), 0o644, Some(ROOT))?;
    if host.write(SLURMD_DROP_IN, DROP_IN.as_bytes(), 0o644, Some(ROOT))? {
        host.run_ok(&Cmd::new("systemctl", ["daemon-reload"]))?;
    }
    let missing = ensure_device_files(host, &des.device_files)?;
    if !missing.is_empty() {
        return Ok(status(
            StatusKind::Blocked,
            format!(
                "GPU device files missing: {} (load the NVIDIA driver or run nvidia-modprobe; slurmd not started)",
                missing.join(",")
            ),
        ));
    }
    let why = if key_changed {
        Some("the munge key changed")
    } else if server_changed {
        Some("the config server changed")
    } else if des.gres_changed {
        Some("this node's GPUs changed")
    } else {
        None
    };
    // `--no-block`: from Slurm 23.11 the unit is Type=notify and a configless slurmd is ready
    // only once the controller serves it a config, which may be later (a new node, a wrong
    // munge key): a blocking restart would hold the hook for systemd's 90 s start timeout and
    // fail it (docs/slurm-versions.md). The status check below reports what became of it.
    let restart = Cmd::new("systemctl", ["restart", "--no-block", "slurmd"]);
    match why {
        Some(why) => {
            tracing::info!("restarting slurmd: {why}");
            host.run_ok(&restart)?;
        }
        None => {
            let state = host.run(&Cmd::new("systemctl", ["is-active", "slurmd"]))?;
            // "activating": started, waiting for its config (Type=notify, 23.11+)
            if !state.success() && state.stdout.trim() != "activating" {
                tracing::info!("slurmd is not running: starting it");
                host.run_ok(&restart)?;
            }
        }
    }
    if let Some(problem) = check_controller(host, &cluster.conf_server()) {
        return Ok(problem);
    }
    Ok(des.status.clone())
}

/// Asks the controller for a munge-authenticated answer (`scontrol ping`, pointed at the config
/// server `server` so it works before slurmd has a config cache). The port is tried first: a
/// closed port is "waiting" at once (a ping would hang ~10 s). A refusal while the port answers
/// means this node cannot authenticate: most likely a munge key that differs from the
/// controller's. Returns the status to show instead of the normal one, if any.
pub fn check_controller(host: &Host<'_>, server: &str) -> Option<Status> {
    let not_answering = |detail: &str| {
        Some(status(
            StatusKind::Waiting,
            format!("slurmctld at {server} is not answering{detail}"),
        ))
    };
    let port = port_answers(server);
    if port == Some(false) {
        return not_answering(" (port closed)");
    }
    let ping = Cmd::new("scontrol", ["ping"]).env("SLURM_CONF_SERVER", server);
    let out = match host.run(&ping) {
        Ok(out) if out.success() => return None,
        Ok(out) => out,
        Err(e) => {
            return Some(status(
                StatusKind::Blocked,
                format!("{e} (slurm-client provides scontrol)"),
            ));
        }
    };
    let said = format!("{} {}", out.stdout.trim(), out.stderr.trim());
    let said = short(said.trim(), 120);
    if port == Some(true) {
        tracing::warn!("scontrol ping fails while {server} answers: {said}");
        Some(status(
            StatusKind::Blocked,
            format!(
                "cannot authenticate to slurmctld at {server} (munge key mismatch? check /etc/munge/munge.key and munged's options): {said}"
            ),
        ))
    } else {
        not_answering(&format!(": {said}"))
    }
}

/// Whether a TCP connection to `addr` (`host:port`) opens within two seconds; `None` when the
/// name does not resolve here within a second (a resolver that does not answer must not stall
/// every hook for its 5 s timeout; the lookup thread is left behind and dies with the hook).
fn port_answers(addr: &str) -> Option<bool> {
    use std::net::{TcpStream, ToSocketAddrs};
    let (tx, rx) = std::sync::mpsc::channel();
    let name = addr.to_string();
    std::thread::spawn(move || {
        let resolved: Vec<_> = name
            .to_socket_addrs()
            .map(Iterator::collect)
            .unwrap_or_default();
        let _ = tx.send(resolved);
    });
    let addrs = rx.recv_timeout(std::time::Duration::from_secs(1)).ok()?;
    if addrs.is_empty() {
        return None;
    }
    Some(
        addrs
            .iter()
            .any(|a| TcpStream::connect_timeout(a, std::time::Duration::from_secs(2)).is_ok()),
    )
}

/// Makes sure every `/dev/nvidiaN` slurmd will be told about exists (slurmd exits when one is
/// missing); tries `nvidia-modprobe -c N` for missing ones. Returns those still missing.
pub fn ensure_device_files(host: &Host<'_>, files: &[String]) -> Result<Vec<String>, CharmError> {
    let mut missing = Vec::new();
    for f in files {
        if host.exists(f) {
            continue;
        }
        if let Some(minor) = f.strip_prefix("/dev/nvidia") {
            let out = host.run(&Cmd::new("nvidia-modprobe", ["-c", minor]));
            if let Err(e) = out {
                tracing::debug!("{e}");
            }
        }
        if !host.exists(f) {
            missing.push(f.clone());
        }
    }
    Ok(missing)
}
