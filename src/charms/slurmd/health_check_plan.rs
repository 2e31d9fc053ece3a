//! The health-check program's part of the hook's plan: the link to the charm's binary and the
//! settings the program reads ([`super::health_check`] is the program).

use super::health_check_files::ProgramSettings;
use super::keys::SETTINGS_PATH;
use super::plan_types::ServiceAction;
use crate::charms::host::Owner;

/// The program's part of the hook's plan: the link to the charm's binary, and the settings
/// (once the node's name and the controller are known).
pub fn plan_program(obs: &super::observe::Observed, plan: &mut super::plan_types::SlurmdPlan) {
    if obs.health_program_link.as_deref() != Some(obs.charm_binary.as_path()) {
        plan.services
            .insert(0, ServiceAction::LinkHealthCheck(obs.charm_binary.clone()));
    }
    let (Ok(facts), Some(Ok(info))) = (&obs.facts, &obs.cluster_info) else {
        return;
    };
    let known = plan
        .state
        .get(super::keys::KNOWN_GPUS_STATE)
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

/// True for `detect-gpus clear-xids=true`: the program forgets the XIDs it has read so far
/// (after the operator reset the GPU), so the action changes what the node remembers.
pub fn clears_xids(params: &serde_json::Map<String, serde_json::Value>) -> bool {
    matches!(
        params.get("clear-xids"),
        Some(serde_json::Value::Bool(true))
    )
}

/// The record up to which XIDs are cleared after this hook: everything the program has read
/// when this hook is `detect-gpus clear-xids=true`, else what the last hook wrote.
pub fn xids_cleared_through(obs: &super::observe::Observed) -> Option<u64> {
    let clearing = matches!(
        &obs.action,
        Some((name, params)) if name == "detect-gpus" && clears_xids(params)
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
