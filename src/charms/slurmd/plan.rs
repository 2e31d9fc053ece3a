//! The slurmd charm's plan: a pure function of what the hook observed (the running action's
//! contribution included). It lists the files to write or remove, the service actions in the
//! order they run, the relation data and unit state to set, the action's outcome and the one
//! status to set. [`super::apply`] carries it out.

use super::actions::plan_action;
use super::desired::{Desired, desired};
use super::observe::Observed;
use super::plan_types::{ServiceAction, SlurmdPlan};
use super::{DROP_IN, MUNGE_KEY_SOURCE, SLURMD_DEFAULTS, SLURMD_DROP_IN};
use crate::charms::common::{MUNGE_KEY, SLURM_KEY};
use crate::charms::host::Owner;
use crate::charms::plan::{FileWrite, RelationWrite};
use crate::interface::{AuthKind, GresTypes, MungeKeyRef, NODE_KEY, PARTITION_KEY};
use juju_runtime::{Bag, Status, StatusKind};
use std::borrow::Cow;

/// Plans one slurmd hook or action: the reconcile, then the restart of a slurmd left retrying
/// the controller ([`super::recovery`]), the GPU health check's part
/// ([`super::health::plan_health`]: remembered GPUs, drain or resume, blocked status), the
/// driver install's, and the restart of a node Slurm drained for a GRES count mismatch
/// ([`super::gres_drain`]), then the order of a restart for new GRES names
/// ([`super::gres_order`]).
pub fn plan(obs: &Observed) -> SlurmdPlan {
    let mut plan = reconcile(obs);
    super::recovery::plan_recovery(obs, &mut plan);
    super::health::plan_health(obs, &mut plan);
    super::health_check_plan::plan_program(obs, &mut plan);
    super::driver::plan_driver(obs, &mut plan);
    super::gres_drain::plan_gres_drain(obs, &mut plan);
    hold_new_node(obs, &mut plan);
    let needed = plan.gres_names.take();
    super::gres_order::plan_gres_order(obs, needed.as_ref(), &mut plan);
    plan
}

/// A new node's slurmd is first started by `node-configured`, not before: while the node is
/// new (in the controller's `DownNodes` or not yet in its slurm.conf), a slurmd the plan would
/// (re)start is not started: a stopped one stays stopped, a running one (24.11's package starts
/// one without `--conf-server`) is stopped, and the status says so. Why (docs/slurm-versions.md,
/// "slurmd dies at start"): Slurm 22.05.8's slurmd dies when slurmctld's `scontrol reconfigure`
/// reaches it before its first registration, and the controller reconfigures right after the
/// restart that takes in a batch of new nodes; a slurmd that is not running cannot be reached.
/// It also spares the starts that fail while the controller has not listed the node yet
/// (`fatal: Unable to determine this slurmd's NodeName`). A running slurmd with nothing to
/// restart for is left alone.
fn hold_new_node(obs: &Observed, plan: &mut SlurmdPlan) {
    let configured_now = plan.action.as_ref().is_some_and(|a| a.configured);
    if !obs.new_node || configured_now {
        return;
    }
    let held = plan.drop_slurmd_restarts();
    if held && obs.slurmd_active {
        plan.services.push(ServiceAction::StopSlurmd(
            "new node: slurmd waits for node-configured",
        ));
    }
    if held && plan.status.kind == StatusKind::Active {
        plan.status = Status::new(
            StatusKind::Active,
            format!(
                "{}; new node: slurmd starts with node-configured",
                plan.status.message
            ),
        );
    }
}

fn reconcile(obs: &Observed) -> SlurmdPlan {
    let action = obs
        .action
        .as_ref()
        .map(|(name, params)| plan_action(name, params, obs));
    // The action's contribution is an input of the reconcile: a new view, `obs` stays as read.
    let view = match &action {
        Some(a) if a.overrides.is_some() || a.configured => {
            let mut view = obs.clone();
            if let Some(ov) = &a.overrides {
                view.overrides = Ok(ov.clone());
            }
            if a.configured {
                view.new_node = false;
            }
            Cow::Owned(view)
        }
        _ => Cow::Borrowed(obs),
    };
    let des = desired(&view);
    let mut plan = SlurmdPlan {
        forget_steady: obs.steady_recorded,
        files: Vec::new(),
        remove: Vec::new(),
        services: Vec::new(),
        relation_data: relation_data(obs, &des),
        state: action.as_ref().map(|a| a.state.clone()).unwrap_or_default(),
        action,
        warnings: des.warnings.clone(),
        status: des.status.clone(),
        gres_names: des
            .node
            .as_ref()
            .map(|n| GresTypes::new(n.node().gres.iter().map(|g| g.name.clone()))),
    };
    if obs.relation_broken && obs.relation.is_none() {
        plan.services
            .push(ServiceAction::StopSlurmd("slurmctld relation removed"));
        plan.remove.push(SLURMD_DEFAULTS);
        return plan;
    }
    let (Some(cluster), Some(defaults), Some(Ok(key))) =
        (&des.cluster, &des.defaults, &obs.munge_key)
    else {
        return plan;
    };
    let key_changed = obs.munge_key_on_disk.as_deref() != Some(key.bytes());
    let server_changed = obs.defaults_on_disk.as_deref() != Some(defaults.as_bytes());
    plan.files = vec![
        FileWrite::new(MUNGE_KEY, key.bytes().to_vec(), 0o400, Some(Owner::MUNGE)),
        FileWrite::new(SLURMD_DEFAULTS, defaults.as_str(), 0o644, Some(Owner::ROOT)),
        FileWrite::new(SLURMD_DROP_IN, DROP_IN, 0o644, Some(Owner::ROOT)),
    ];
    if let Some(Ok(info)) = &obs.cluster_info
        && let MungeKeyRef::Secret(id) = &info.munge_key
    {
        // Remembers that the key file holds this secret's key (see `MUNGE_KEY_SOURCE`).
        plan.files.push(FileWrite::new(
            MUNGE_KEY_SOURCE,
            id.to_string(),
            0o600,
            Some(Owner::ROOT),
        ));
    }
    // auth/slurm: the same key as slurm.key; a configless slurmd uses auth/slurm for its
    // first contact exactly when that file exists, so it must not linger under munge.
    let slurm_key_changed = match cluster.auth {
        AuthKind::Slurm => {
            plan.files.push(FileWrite::new(
                SLURM_KEY,
                key.bytes().to_vec(),
                0o600,
                Some(Owner::SLURM),
            ));
            obs.slurm_key_on_disk.as_deref() != Some(key.bytes())
        }
        AuthKind::Munge => {
            if obs.slurm_key_on_disk.is_some() {
                plan.remove.push(SLURM_KEY);
            }
            obs.slurm_key_on_disk.is_some()
        }
    };
    if key_changed {
        plan.services.push(ServiceAction::RestartMunge);
    }
    if obs.drop_in_on_disk.as_deref() != Some(DROP_IN.as_bytes()) {
        plan.services.push(ServiceAction::DaemonReload);
    }
    let missing: Vec<String> = des
        .device_files
        .iter()
        .filter(|f| !obs.device_files_present.contains(*f))
        .cloned()
        .collect();
    if !missing.is_empty() {
        plan.status = Status::new(
            StatusKind::Blocked,
            format!(
                "GPU device files missing: {} (load the NVIDIA driver or run nvidia-modprobe; slurmd not started)",
                missing.join(",")
            ),
        );
        plan.services
            .push(ServiceAction::CreateDeviceFiles(missing));
        return plan;
    }
    let why = if key_changed {
        Some("the munge key changed")
    } else if slurm_key_changed {
        Some("the auth/slurm key changed")
    } else if server_changed {
        Some("the config server changed")
    } else if des.gres_changed {
        Some("this node's GPUs changed")
    } else if !obs.slurmd_active {
        Some("slurmd is not running")
    } else {
        None
    };
    if let Some(why) = why {
        plan.services.push(ServiceAction::RestartSlurmd(why));
    }
    // A refusal measured with the old key says nothing about the key installed now.
    let probe = obs
        .controller
        .as_ref()
        .filter(|p| !(key_changed && matches!(p, super::probe::ControllerProbe::Refused(_))));
    if let Some(problem) = probe.and_then(|p| p.problem(&cluster.conf_server())) {
        plan.status = problem;
    }
    plan
}

fn relation_data(obs: &Observed, des: &Desired) -> Vec<RelationWrite> {
    let Some(rel) = &obs.relation else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(raw) = &des.publish_node {
        out.push(RelationWrite {
            relation: rel.clone(),
            app: false,
            data: Bag::from([(NODE_KEY.to_string(), raw.clone())]),
        });
    }
    if let Some(raw) = &des.publish_partition {
        out.push(RelationWrite {
            relation: rel.clone(),
            app: true,
            data: Bag::from([(PARTITION_KEY.to_string(), raw.clone())]),
        });
    }
    out
}
