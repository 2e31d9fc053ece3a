//! NVIDIA driver install: GPUs on the PCI bus but no driver loaded ([`Finding::DriverNotLoaded`])
//! → install the driver once (`ubuntu-drivers install --gpgpu`, as Ubuntu recommends for compute
//! servers, or the package named in the `nvidia-driver` config; `none` turns this off), load it
//! with `modprobe nvidia`, and when that fails request a reboot through `juju-reboot`. The
//! attempt is remembered in unit state ([`DRIVER_STATE`]) before anything runs, so the charm
//! never loops: a second hook that still finds no driver blocks instead of installing again.
//! After the reboot, detection finds the GPUs and the node is enlisted as usual.

use super::driver_source::{DriverAttempt, DriverSource};
use super::keys::DRIVER_STATE;
use super::observe::Observed;
use super::plan_types::{ServiceAction, SlurmdPlan};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, Host};
use crate::gpu::Finding;
use juju_runtime::{ModelBackend, NetworkBackend, Status, StatusKind, StatusScope};
use std::collections::BTreeMap;

/// Adds the driver install to `plan` when GPUs are present without a driver (hooks only: a
/// reboot cannot be requested from an action).
pub fn plan_driver(obs: &Observed, plan: &mut SlurmdPlan) {
    let Ok(inv) = &obs.inventory else {
        return;
    };
    let Some(present) = inv.findings.iter().find_map(|f| match f {
        Finding::DriverNotLoaded { present } => Some(*present),
        _ => None,
    }) else {
        return;
    };
    let source = match &obs.driver_source {
        Ok(DriverSource::Off) => return,
        Ok(s) => s,
        Err(e) => {
            plan.status = Status::new(StatusKind::Blocked, e.to_string());
            return;
        }
    };
    if obs.action.is_some() {
        return;
    }
    let attempt = obs.driver_attempt.as_deref().map(DriverAttempt::parse);
    if let Some(a) = attempt.filter(|a| a.source == source.to_string()) {
        if let Some(why) = a.outcome.strip_prefix("failed: ") {
            plan.status = failed_status(source, why);
            return;
        }
        if a.boot_id == obs.boot_id
            && matches!(a.outcome.as_str(), "reboot-requested" | "installing")
        {
            // juju-reboot reboots once the hook ends; hooks queued before that land here.
            plan.status = Status::new(
                StatusKind::Maintenance,
                format!("NVIDIA driver installed (`{source}`); waiting for the reboot"),
            );
            return;
        }
        plan.status = Status::new(
            StatusKind::Blocked,
            format!(
                "{present} NVIDIA GPU(s) present, driver still not loaded after `{source}`: see \
                 juju debug-log and dmesg (Secure Boot, kernel headers); set \
                 nvidia-driver to another package or none"
            ),
        );
        return;
    }
    plan.services.push(ServiceAction::InstallDriver {
        source: source.clone(),
        boot_id: obs.boot_id.clone(),
    });
    plan.status = Status::new(
        StatusKind::Maintenance,
        format!("NVIDIA driver installed (`{source}`); loading it, or rebooting if it needs one"),
    );
}

/// The blocked status after a failed install (never retried with the same source).
fn failed_status(source: &DriverSource, why: &str) -> Status {
    Status::new(
        StatusKind::Blocked,
        crate::charms::util::short(
            &format!(
                "NVIDIA driver install (`{source}`) failed: {why}; fix it, then set nvidia-driver \
                 to another package (or none)"
            ),
            250,
        ),
    )
}

/// Stores the attempt with its outcome so far.
fn remember<B: ModelBackend>(
    backend: &B,
    source: &DriverSource,
    boot_id: &str,
    outcome: &str,
) -> Result<(), CharmError> {
    let attempt = DriverAttempt {
        source: source.to_string(),
        boot_id: boot_id.to_string(),
        outcome: outcome.to_string(),
    };
    let raw = serde_json::to_string(&attempt).unwrap_or_else(|_| source.to_string());
    backend.state_set(&BTreeMap::from([(DRIVER_STATE.to_string(), raw)]))?;
    Ok(())
}

/// Runs the install: remembers the attempt first, installs, loads the module, and requests a
/// reboot when the module cannot load without one. Statuses on the way say which step runs.
/// A failing install does not fail the hook (a retry would loop): it is remembered and the
/// returned status (blocked) replaces the planned one; so does the reboot's.
pub fn install_driver<B: ModelBackend + NetworkBackend>(
    backend: &B,
    host: &Host<'_>,
    source: &DriverSource,
    boot_id: &str,
) -> Result<Option<Status>, CharmError> {
    let Some(cmd) = source.command() else {
        return Ok(None);
    };
    remember(backend, source, boot_id, "installing")?;
    backend.status_set(
        StatusScope::Unit,
        &Status::new(
            StatusKind::Maintenance,
            format!("installing the NVIDIA driver (`{source}`)"),
        ),
    )?;
    tracing::info!("NVIDIA GPUs without a driver: {source}");
    if let Err(e) = host.run_ok(&cmd) {
        let why = e.to_string();
        tracing::warn!("NVIDIA driver install failed: {why}");
        remember(backend, source, boot_id, &format!("failed: {why}"))?;
        return Ok(Some(failed_status(source, &why)));
    }
    let loaded = host.run(&Cmd::new("modprobe", ["nvidia"]));
    if loaded.as_ref().is_ok_and(|o| o.success()) {
        tracing::info!("nvidia module loaded without a reboot");
        remember(backend, source, boot_id, "loaded")?;
        return Ok(None);
    }
    remember(backend, source, boot_id, "reboot-requested")?;
    let rebooting = Status::new(
        StatusKind::Maintenance,
        "NVIDIA driver installed; rebooting to load it",
    );
    backend.status_set(StatusScope::Unit, &rebooting)?;
    let said = match &loaded {
        Ok(out) => out.stderr.trim().to_string(),
        Err(e) => e.to_string(),
    };
    tracing::warn!("modprobe nvidia failed ({said}): requesting a reboot");
    backend.juju_reboot(false)?;
    Ok(Some(rebooting))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sources() {
        assert_eq!(DriverSource::parse(""), Ok(DriverSource::UbuntuDrivers));
        assert_eq!(DriverSource::parse("auto"), Ok(DriverSource::UbuntuDrivers));
        assert_eq!(DriverSource::parse("none"), Ok(DriverSource::Off));
        assert_eq!(
            DriverSource::parse("nvidia-driver-550-server"),
            Ok(DriverSource::Package("nvidia-driver-550-server".into()))
        );
        for bad in ["x", "Nvidia", "a b", "-x", "pkg;rm", "nvidia_driver"] {
            let e = DriverSource::parse(bad).unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("nvidia-driver"), "{bad}: {e}");
        }
    }
}
