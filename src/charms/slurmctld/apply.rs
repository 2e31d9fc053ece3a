//! Applies the controller's desired state: munge key and `cluster_info`, both files (atomic,
//! skipped when identical), then restart/reconfigure/resume as [`super::desired::decide`] says,
//! then the cache. Returns the status to set.

use super::cache::CACHE_PATH;
use super::decide::{Decision, Reload, decide};
use super::desired::{CGROUP_CONF_TEXT, Plan};
use super::observe::Observed;
use super::{CGROUP_CONF, GRES_CONF, SLURM_CONF};
use crate::charms::error::{CharmError, JujuResult};
use crate::charms::host::{Cmd, Host, Owner};
use crate::charms::slurmd::MUNGE_KEY;
use crate::charms::util::{short, status};
use crate::interface::cluster_info::MIN_MUNGE_KEY_LEN;
use crate::interface::{CLUSTER_INFO_KEY, ClusterInfo};
use crate::juju::backend::{Bag, ModelBackend, RelationId, Status, StatusKind};

const MUNGE: Owner = Owner {
    user: "munge",
    group: "munge",
};
const SLURM: Owner = Owner {
    user: "slurm",
    group: "slurm",
};
const ROOT: Owner = Owner {
    user: "root",
    group: "root",
};

/// Size of a generated munge key (bytes), as `mungekey` makes it.
pub const MUNGE_KEY_LEN: usize = 1024;

/// The munge key: the one this application already shares in `cluster_info` (so a new leader,
/// whose package-generated key differs, keeps the cluster's); else the one on disk (Debian's
/// munge package generates one); else 1024 new random bytes. Written 0400 munge:munge; munge is
/// restarted when the file changed.
pub fn ensure_munge_key(host: &Host<'_>, obs: &Observed) -> Result<Vec<u8>, CharmError> {
    let published = obs
        .cache
        .relations
        .values()
        .filter_map(|r| r.cluster_info_published.as_deref())
        .find_map(|raw| ClusterInfo::from_relation_value(raw).ok())
        .map(|c| c.munge_key);
    let on_disk = host
        .read(MUNGE_KEY)?
        .filter(|k| k.len() >= MIN_MUNGE_KEY_LEN);
    let key = match (published, on_disk) {
        (Some(k), disk) => {
            if disk.as_deref() != Some(k.as_slice()) {
                tracing::info!("installing the munge key this application already shares");
            }
            k
        }
        (None, Some(k)) => k,
        (None, None) => {
            tracing::info!("generating a new munge key");
            host.random_bytes(MUNGE_KEY_LEN)?
        }
    };
    if host.write(MUNGE_KEY, &key, 0o400, Some(MUNGE))? {
        host.run_ok(&Cmd::new("systemctl", ["restart", "munge"]))?;
    }
    Ok(key)
}

/// Publishes `cluster_info` on every relation where it differs from what was published.
pub fn publish_cluster_info<B: ModelBackend>(
    backend: &B,
    obs: &mut Observed,
    key: Vec<u8>,
) -> Result<(), CharmError> {
    let info = ClusterInfo {
        munge_key: key,
        slurmctld_host: obs.settings.hostname.clone(),
        nhc_params: String::new(),
    };
    let raw = info.to_relation_value();
    for rel in obs.cache.relations.values_mut() {
        if rel.cluster_info_published.as_deref() == Some(raw.as_str()) {
            continue;
        }
        let id = RelationId::new(rel.endpoint.clone(), rel.id);
        let bag = Bag::from([(CLUSTER_INFO_KEY.to_string(), raw.clone())]);
        backend.relation_set(&id, true, &bag).juju()?;
        rel.cluster_info_published = Some(raw.clone());
    }
    Ok(())
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
    Err(CharmError::Host(crate::charms::host::HostError::Failed {
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

/// Writes the files and reloads slurmctld as needed; moves `plan.applied` into
/// `obs.cache.applied`.
pub fn apply_files(
    host: &Host<'_>,
    obs: &mut Observed,
    plan: Plan,
) -> Result<Decision, CharmError> {
    let (Some(slurm), Some(gres)) = (&plan.slurm_conf, &plan.gres_conf) else {
        return Ok(Decision {
            reload: Reload::Nothing,
            resume: Vec::new(),
            gres_changed: Vec::new(),
        });
    };
    let cgroup = CGROUP_CONF_TEXT.as_bytes();
    let cgroup_changed = host.write(CGROUP_CONF, cgroup, 0o644, Some(SLURM))?;
    let gres_changed = host.write(GRES_CONF, gres.as_bytes(), 0o644, Some(SLURM))?;
    let slurm_changed = host.write(SLURM_CONF, slurm.as_bytes(), 0o644, Some(SLURM))?;
    let decision = decide(
        obs.cache.applied.as_ref(),
        &plan.applied,
        cgroup_changed || gres_changed || slurm_changed,
    );
    match decision.reload {
        Reload::Nothing => {}
        Reload::Reconfigure => {
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
    if decision.reload == Reload::Restart && !decision.gres_changed.is_empty() {
        clear_gres_drains(host, &decision.gres_changed);
    }
    obs.cache.applied = Some(plan.applied);
    Ok(decision)
}

/// Saves the cache (last step before the status: every hook tool call has succeeded), unless
/// it is byte for byte the file this hook read.
pub fn save_cache(host: &Host<'_>, obs: &Observed) -> Result<(), CharmError> {
    let bytes = obs.cache.to_bytes();
    if obs.cache_file.as_deref() == Some(bytes.as_slice()) {
        return Ok(());
    }
    host.write(CACHE_PATH, &bytes, 0o600, Some(ROOT))?;
    Ok(())
}

/// The leader's status message.
pub fn plan_status(obs: &Observed, plan: &Plan) -> Status {
    for (who, why) in &plan.rejected {
        tracing::warn!("left out {who}: {why}");
    }
    if let Some(e) = &plan.render_error {
        tracing::error!("not writing slurm.conf/gres.conf: {e}");
        return status(
            StatusKind::Blocked,
            short(&format!("config not written: {e}"), 240),
        );
    }
    if obs.cache.relations.is_empty() {
        return status(StatusKind::Blocked, "Need relation: slurmd");
    }
    if plan.nodes.is_empty() {
        let mut msg = "Waiting for slurmd nodes".to_string();
        push_problems(&mut msg, plan);
        return status(StatusKind::Waiting, short(&msg, 300));
    }
    let gpus: u64 = plan
        .nodes
        .values()
        .flat_map(|n| n.record.node().gres.iter())
        .map(|g| g.count)
        .sum();
    let n = plan.nodes.len();
    let mut msg = format!(
        "{n} node{}, {gpus} GPU{}",
        if n == 1 { "" } else { "s" },
        if gpus == 1 { "" } else { "s" }
    );
    if !plan.applied.down.is_empty() {
        msg.push_str(&format!(
            ", {} new (run node-configured on the slurmd unit)",
            plan.applied.down.len()
        ));
    }
    push_problems(&mut msg, plan);
    status(StatusKind::Active, short(&msg, 300))
}

/// Appends rejected units and applications waiting for their partition to a status message.
fn push_problems(msg: &mut String, plan: &Plan) {
    msg.push_str(&plan.problems());
}
