//! The slurmd (compute node) charm.
//!
//! Every hook: [`observe`] (config, leadership, relation bags, unit state, action parameters,
//! `slurmd -C`, GPUs, files, device files, slurmd's state, the controller's answer; reads only)
//! → [`plan::plan`] (pure: the `node` and `partition` records, munge key, configless settings,
//! service actions, unit state, the action's outcome, the status) → [`apply`] (writes only,
//! fixed order, the old steady record removed first) → `status-set` once → the steady record
//! ([`steady`]: an update-status that finds the host unchanged sets that status again and does
//! nothing else). `install` first installs the packages. An action adds to
//! the plan (overrides, the configured flag, unit state, results), so its effect is published
//! in the same hook.

pub mod actions;
pub mod apply;
pub mod dcgm;
pub mod dcgm_option;
pub mod desired;
pub mod driver;
pub mod driver_source;
pub mod errors;
pub mod facts;
pub mod gres_drain;
pub mod gres_order;
pub mod health;
pub mod health_check;
pub mod health_check_files;
pub mod health_check_plan;
pub mod health_verdict;
pub mod keys;
pub mod memory;
pub mod node_state;
pub mod observe;
pub mod plan;
pub mod plan_types;
pub mod probe;
pub mod recovery;
pub mod sharing;
pub mod steady;

use crate::charms::common::{install, set_version};
use crate::charms::error::CharmError;
use crate::charms::host::Host;

use juju_runtime::{Event, HookContext};
use juju_runtime::{NetworkBackend, SecretBackend, StatusScope};

/// Which secret the munge key file was written from (its id): the key file is trusted without
/// asking Juju only when it came from the secret `cluster_info` names, never the key the munge
/// package generated at install.
pub const MUNGE_KEY_SOURCE: &str = "/var/lib/slurm-charms/slurmd/munge-key-source";
/// slurmd's environment file (Debian's unit reads `SLURMD_OPTIONS` from it).
pub const SLURMD_DEFAULTS: &str = "/etc/default/slurmd";
/// systemd drop-in for slurmd: Debian's unit has `ConditionPathExists=/etc/slurm/slurm.conf`,
/// which a configless node never has, so `systemctl start slurmd` would silently do nothing.
pub const SLURMD_DROP_IN: &str = "/etc/systemd/system/slurmd.service.d/10-slurm-charms.conf";

/// Content of [`SLURMD_DROP_IN`].
pub const DROP_IN: &str = "# Written by the slurmd charm: a configless slurmd has no /etc/slurm/slurm.conf.\n[Unit]\nConditionPathExists=\n";
/// Unit-state key: `"false"` once `node-configured` ran.
pub const NEW_NODE_STATE: &str = "new-node";
/// Unit-state key: the `node-config` overrides (JSON).
pub const NODE_CONFIG_STATE: &str = "node-config";
/// Packages the install hook installs.
pub const PACKAGES: &[&str] = &["slurmd", "munge", "slurm-client"];

/// Runs one slurmd hook or action.
pub fn handle<B: SecretBackend + NetworkBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
) -> Result<(), CharmError> {
    match &ctx.event {
        Event::Install => {
            install(backend, host, PACKAGES, "slurmd")?;
        }
        Event::UpgradeCharm => set_version(backend, host, "slurmd"),
        Event::Stop | Event::Remove => {
            // Nothing to converge: the machine is going away.
            return Ok(());
        }
        _ => {}
    }
    let mut before = observe::ReadBefore::default();
    let detect_gpus = matches!(&ctx.event, Event::Action(a) if a.name == "detect-gpus");
    if matches!(ctx.event, Event::UpdateStatus) || detect_gpus {
        let (check, params) = if detect_gpus {
            // detect-gpus asks Juju for its parameters while the host is checked (the check's
            // commands and NVML wait on the host, the hook tool on the agent); outcomes are
            // judged in the order of the sequential hook: the check first.
            let (check, params) = std::thread::scope(|scope| {
                let check = scope.spawn(|| steady::unchanged(host, steady::Scope::Hardware));
                let params = backend.action_get();
                (check.join(), params)
            });
            let check = check.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (check?, Some(params))
        } else {
            (steady::unchanged(host, steady::Scope::Node)?, None)
        };
        match (check.status, check.seen, params) {
            (Some(status), _, None) => {
                return Ok(backend.status_set(StatusScope::Unit, &status)?);
            }
            (Some(_), Some((facts, inventory)), Some(params)) => {
                // A read-only detect-gpus on an unchanged host: the results (the sharing the
                // last full hook ran with), nothing else. `accept-missing=true` changes the
                // remembered GPUs and `clear-xids=true` the XIDs the program holds on to, so
                // they run in full.
                let params = params?;
                if !health::accepts_missing(&params) && !health_check_plan::clears_xids(&params) {
                    let sharing = match check.gpu_sharing {
                        Some(sharing) => Ok(sharing),
                        None => crate::gpu::GpuSharing::parse(&crate::charms::util::config_str(
                            &backend.config_get()?,
                            "gpu-sharing",
                        )),
                    };
                    let results = actions::steady_detect_results(
                        &facts,
                        &inventory,
                        &sharing,
                        check.program.as_ref(),
                    );
                    let flat = juju_runtime::flatten_action_results(&results)?;
                    return Ok(backend.action_set(&flat)?);
                }
                before.action_params = Some(Ok(params));
            }
            (_, _, params) => before.action_params = params,
        }
        before.slurmd_c = check.slurmd_c;
    }
    let obs = match observe::observe(ctx, backend, host, before) {
        Ok(obs) => obs,
        Err(e) => {
            // No plan, so no apply to remove the steady record: the event may bring a change
            // (Juju retries it, unless the operator skips it with `juju resolved --no-retry`), so
            // the next update-status must not trust a record made before it.
            if let Err(forget) = steady::forget(host) {
                tracing::warn!("cannot remove the steady record: {forget}");
            }
            return Err(e);
        }
    };
    let plan = plan::plan(&obs);
    if let (Some(report), Ok(facts)) = (health::report(&obs), &obs.facts) {
        crate::charms::cos::write_node_metrics(host, facts.node.name.as_ref(), &report);
    }
    let outcome = apply::apply(backend, host, &plan)?;
    let status = outcome.unwrap_or_else(|| plan.status.clone());
    // NVIDIA's DCGM exporter (`dcgm-exporter`): never changes the node, only notes a problem
    let status = dcgm::with_note(status, dcgm::converge(ctx, host, &obs).as_deref());
    backend.status_set(StatusScope::Unit, &status)?;
    let restarted = !plan.services.is_empty();
    let record = steady::record(&obs, &status, restarted, || steady::services(host))?;
    steady::remember(host, record.as_ref())
}
