//! What a slurmd hook looks at (reads only): config, leadership, the relation's bags, unit
//! state, the action's parameters, the node's facts (`slurmd -C`, GPUs), the files the charm
//! manages, which GPU device files exist, whether slurmd runs, and the controller's answer.

use super::driver_source::{DriverSource, DriverSourceError};
use super::errors::{
    FactsError, MungeKeyError, NodeDrainError, StoredStateError, StoredValueError,
};
use super::facts::{NodeFacts, NodeOverrides, parse_slurmd_c};
use super::keys::{BOOT_ID, DRIVER_STATE, KNOWN_GPUS_STATE};
use super::node_state::{NodeDrain, read_node_drain};
use super::probe::{ControllerProbe, probe_controller};
use super::{MUNGE_KEY_SOURCE, NEW_NODE_STATE, NODE_CONFIG_STATE, SLURMD_DEFAULTS, SLURMD_DROP_IN};
use crate::charms::common::{MUNGE_KEY, SLURM_KEY};
use crate::charms::error::CharmError;
use crate::charms::host::{Cmd, CmdOutput, Host, HostError};
use crate::charms::util::config_str;
use crate::gpu::{DetectOptions, GpuError, Inventory};
use crate::interface::AuthKind;
use crate::interface::{
    CLUSTER_INFO_KEY, ClusterInfo, GRES_TYPES_KEY, GresTypes, InterfaceError, NODE_KEY,
    PARTITION_KEY, SLURMD_ENDPOINT, VERDICTS_KEY, Verdicts,
};
use crate::interface::{MUNGE_KEY_SECRET_FIELD, MungeKey, MungeKeyRef};
use juju_runtime::{BagOwner, Event, HookContext, RelationId, SecretBackend};
use juju_runtime::{SecretRead, SecretRef};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Everything the plan needs.
#[derive(Debug, Clone)]
pub struct Observed {
    /// This unit's application name (the partition name).
    pub app_name: String,
    /// Leadership.
    pub leader: bool,
    /// `partition-config`.
    pub partition_config: String,
    /// The slurmctld relation, if any (absent in its own relation-broken).
    pub relation: Option<RelationId>,
    /// Our published `node` value.
    pub own_node_raw: Option<String>,
    /// Our app's published `partition` value (leader only).
    pub own_partition_raw: Option<String>,
    /// The controller's `cluster_info`, parsed (absent when not published yet).
    pub cluster_info: Option<Result<ClusterInfo, InterfaceError>>,
    /// `new_node` from unit state (true until `node-configured`).
    pub new_node: bool,
    /// Operator overrides from `node-config`.
    pub overrides: Result<NodeOverrides, StoredStateError>,
    /// `slurmd -C` facts.
    pub facts: Result<NodeFacts, FactsError>,
    /// GPU inventory (an error is an operator problem such as no permission).
    pub inventory: Result<Inventory, Arc<GpuError>>,
    /// The action being run and its parameters (`action-get`), if this is an action.
    pub action: Option<(String, Map<String, Value>)>,
    /// Current munge key file.
    pub munge_key_on_disk: Option<Vec<u8>>,
    /// The cluster's munge key, read from the controller's secret (or, old shape, from
    /// `cluster_info`); `None` while `cluster_info` is absent or bad. An error names the
    /// secret and what Juju said, never the key (a read refused in the secret's own
    /// `secret-changed` is never here: it fails the hook, [`CharmError::KeyRefresh`]).
    pub munge_key: Option<Result<MungeKey, MungeKeyError>>,
    /// Current `/etc/slurm/slurm.key` (auth/slurm).
    pub slurm_key_on_disk: Option<Vec<u8>>,
    /// Current `/etc/default/slurmd`.
    pub defaults_on_disk: Option<Vec<u8>>,
    /// Current systemd drop-in for slurmd.
    pub drop_in_on_disk: Option<Vec<u8>>,
    /// GPU device files (`/dev/nvidia*`) that exist.
    pub device_files_present: BTreeSet<String>,
    /// `systemctl is-active slurmd` (asked only once the controller is known): running, or
    /// started and not ready yet (`activating`).
    pub slurmd_active: bool,
    /// `systemctl is-active slurmd` said `activating`: started, not ready (a configless slurmd
    /// of 23.11+ still fetching its config, retrying every 10 s).
    pub slurmd_activating: bool,
    /// The last full hook's controller check failed (unit state
    /// [`super::keys::CONTROLLER_FAILING_STATE`]).
    pub controller_failed_before: bool,
    /// The controller's answer at the config server `cluster_info` names, when it is valid.
    pub controller: Option<ControllerProbe>,
    /// True when the relation is being removed in this hook.
    pub relation_broken: bool,
    /// Why the controller left this unit's node out of slurm.conf (its `verdicts`), if it did.
    pub verdict: Option<String>,
    /// The GRES names slurmctld runs (its `gres_types`; `None` from a controller that does not
    /// publish them) ([`super::gres_order`]).
    pub controller_gres_types: Option<Result<GresTypes, InterfaceError>>,
    /// A slurmd restart is held until slurmctld runs this node's GRES names (unit state
    /// [`super::keys::HELD_STATE`]).
    pub gres_restart_held: bool,
    /// `slurmd -V`, asked only while a restart is held (`None` otherwise, or when it cannot
    /// be read: [`super::gres_order`] then restarts, which every version takes).
    pub slurmd_version: Option<crate::slurm::SlurmVersion>,

    /// `gpu-features`: publish node Features derived from the GPUs (default true).
    pub gpu_features: bool,
    /// `dcgm-exporter`: run NVIDIA's DCGM exporter ([`super::dcgm`]; default false).
    pub dcgm_exporter: bool,
    /// The record a GRES-mismatch restart was made for (unit state
    /// [`super::keys::GRES_RESTART_STATE`], a digest).
    pub gres_restart_raw: Option<String>,
    /// `gpu-sharing`, parsed (shard/mps GRES on the whole GPUs).
    pub gpu_sharing: Result<crate::gpu::GpuSharing, crate::gpu::SharingError>,
    /// `memory-headroom`, parsed: how far below `slurmd -C`'s `RealMemory` the node is
    /// published.
    pub memory_headroom: Result<super::memory::MemoryHeadroom, super::memory::HeadroomError>,
    /// `nvidia-driver`, parsed.
    pub driver_source: Result<DriverSource, DriverSourceError>,
    /// The driver install already tried (unit state `driver-install`, raw).
    pub driver_attempt: Option<String>,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`; empty when unreadable).
    pub boot_id: String,
    /// The GPUs remembered by the last hook (unit state `known-gpus`, raw JSON).
    pub known_gpus_raw: Option<String>,
    /// This node's drain state and reason in Slurm (asked only while the controller answers).
    pub node_drain: Option<Result<NodeDrain, NodeDrainError>>,
    /// The health-check program's state file (`None`: absent or unreadable).
    pub health_state: Option<super::health_check_files::ProgramState>,
    /// The health-check program's settings file as on disk.
    pub health_settings_on_disk: Option<Vec<u8>>,
    /// Where [`super::keys::PROGRAM_PATH`] links to (`None`: no link there).
    pub health_program_link: Option<std::path::PathBuf>,
    /// The charm's binary (`$JUJU_CHARM_DIR/dispatch`), which the health-check program runs.
    pub charm_binary: std::path::PathBuf,

    /// A steady record ([`super::steady`]) is on disk: the plan has apply remove it first.
    pub steady_recorded: bool,
}

/// What the hook read before [`observe`] (the steady check's `slurmd -C`, `detect-gpus`'s
/// parameters and the config), handed over so nothing is asked twice. `None`: not read yet.
#[derive(Debug, Default)]
pub struct ReadBefore {
    /// `slurmd -C`, as [`Host::run_ok`] returned it.
    pub slurmd_c: Option<Result<CmdOutput, HostError>>,
    /// `action-get`, as the backend returned it.
    pub action_params: Option<Result<Map<String, Value>, juju_runtime::HookToolError>>,
}

/// Reads the model and the host.
pub fn observe<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    host: &Host<'_>,
    before: ReadBefore,
) -> Result<Observed, CharmError> {
    let ReadBefore {
        slurmd_c,
        action_params,
    } = before;
    let leader = backend.is_leader()?;
    let config = backend.config_get()?;
    let state = backend.state_get()?;
    let relation = backend.relation_ids(SLURMD_ENDPOINT)?.into_iter().next();
    let action = match &ctx.event {
        Event::Action(a) if a.name == "node-config" || a.name == "detect-gpus" => {
            let params = match action_params {
                Some(params) => params?,
                None => backend.action_get()?,
            };
            Some((a.name.clone(), params))
        }
        Event::Action(a) => Some((a.name.clone(), Map::new())),
        _ => None,
    };
    let mut own_node_raw = None;
    let mut own_partition_raw = None;
    let mut cluster_info = None;
    let mut verdict = None;
    let mut controller_gres_types = None;
    if let Some(rel) = &relation {
        let own = backend.relation_get(rel, &BagOwner::Unit(ctx.unit_name.clone()))?;
        own_node_raw = own.get(NODE_KEY).cloned();
        if leader {
            let app = backend.relation_get(rel, &BagOwner::App(ctx.app_name.clone()))?;
            own_partition_raw = app.get(PARTITION_KEY).cloned();
        }
        let remote_app = match &ctx.event {
            Event::RelationChanged(r)
            | Event::RelationJoined(r)
            | Event::RelationCreated(r)
            | Event::RelationDeparted(r)
                if r.relation == *rel =>
            {
                r.remote_app.clone()
            }
            _ => backend.relation_remote_app(rel)?,
        };
        let remote = backend.relation_get(rel, &BagOwner::App(remote_app))?;
        verdict = remote
            .get(VERDICTS_KEY)
            .and_then(|raw| Verdicts::from_relation_value(raw).0.remove(&ctx.unit_name));
        controller_gres_types = remote
            .get(GRES_TYPES_KEY)
            .filter(|v| !v.is_empty())
            .map(|raw| GresTypes::from_relation_value(raw));
        cluster_info = remote
            .get(CLUSTER_INFO_KEY)
            .filter(|v| !v.is_empty())
            .map(|raw| ClusterInfo::from_relation_value(raw));
    }
    let munge_key_on_disk = host.read(MUNGE_KEY)?;
    let munge_key_source = host.read(MUNGE_KEY_SOURCE)?;
    let munge_key = match &cluster_info {
        Some(Ok(info)) => {
            let key = read_munge_key(
                ctx,
                backend,
                &info.munge_key,
                munge_key_on_disk.as_deref(),
                munge_key_source.as_deref(),
            );
            // A refresh Juju refused fails the hook: exiting 0 would consume `secret-changed`,
            // and every later hook reads the tracked (old) revision or trusts the key file.
            if let Err(e @ MungeKeyError::Read { .. }) = &key
                && refresh_of(&ctx.event, &info.munge_key) == SecretRead::Refresh
            {
                return Err(CharmError::KeyRefresh(e.clone()));
            }
            Some(key)
        }
        _ => None,
    };
    // `slurmd -C` once per hook: the steady check may have asked it already.
    let slurmd_c = match slurmd_c {
        Some(out) => out,
        None => host.run_ok(&Cmd::new("slurmd", ["-C"])),
    };
    let facts = match slurmd_c {
        Ok(out) => parse_slurmd_c(&out.stdout).map_err(FactsError::Output),
        Err(e) => Err(FactsError::Run(Arc::new(e))),
    };
    let inventory =
        crate::gpu::detect(&DetectOptions::from_host_root(host.root())).map_err(Arc::new);
    let slurm_key_on_disk = host.read(SLURM_KEY)?;
    let (slurmd_active, slurmd_activating, controller) = match &cluster_info {
        Some(Ok(info)) => {
            // "activating": started and waiting for its config (Type=notify, 23.11+)
            let state = host.run(&Cmd::new("systemctl", ["is-active", "slurmd"]))?;
            let activating = !state.success() && state.stdout.trim() == "activating";
            // Asked only once this host holds the cluster's key where the cluster's
            // authentication reads it: a ping made with another key cannot authenticate, and
            // only makes slurmctld log an authentication error (a new node's first hook, before
            // this hook writes the key). The next hook asks.
            let on_disk = match info.auth {
                AuthKind::Munge => munge_key_on_disk.as_deref(),
                AuthKind::Slurm => slurm_key_on_disk.as_deref(),
            };
            let key_in_place = matches!(&munge_key, Some(Ok(key)) if on_disk == Some(key.bytes()));
            (
                state.success() || activating,
                activating,
                key_in_place.then(|| probe_controller(host, &info.conf_server())),
            )
        }
        _ => (false, false, None),
    };
    // A node that has never had a GPU has no GPU health to act on: Slurm is not asked.
    let has_gpus = inventory.as_ref().is_ok_and(|inv| !inv.health.is_empty())
        || state
            .get(KNOWN_GPUS_STATE)
            .is_some_and(|k| !k.trim().is_empty() && k.trim() != "[]");
    let node_drain = match (&controller, &facts, &cluster_info) {
        (Some(ControllerProbe::Answering), Ok(f), Some(Ok(info))) if has_gpus => Some(
            read_node_drain(host, f.node.name.as_ref(), &info.conf_server()),
        ),
        _ => None,
    };
    let gres_restart_held = state
        .get(super::keys::HELD_STATE)
        .is_some_and(|v| !v.is_empty());
    let slurmd_version = if gres_restart_held {
        host.run_ok(&Cmd::new("slurmd", ["-V"]))
            .ok()
            .and_then(|out| {
                crate::slurm::SlurmVersion::parse_v_output(&out.stdout, "slurmd -V").ok()
            })
    } else {
        None
    };
    Ok(Observed {
        gres_restart_held,
        slurmd_version,
        node_drain,
        health_state: super::health_check_files::ProgramState::read(host),
        health_settings_on_disk: host.read(super::keys::SETTINGS_PATH)?,
        health_program_link: std::fs::read_link(host.path(super::keys::PROGRAM_PATH)).ok(),
        charm_binary: ctx.charm_dir.join("dispatch"),
        driver_source: DriverSource::parse(&config_str(&config, "nvidia-driver")),
        gres_restart_raw: state.get(super::keys::GRES_RESTART_STATE).cloned(),
        gpu_sharing: crate::gpu::GpuSharing::parse(&config_str(&config, "gpu-sharing")),
        memory_headroom: super::memory::MemoryHeadroom::parse(&config_str(
            &config,
            "memory-headroom",
        )),
        driver_attempt: state.get(DRIVER_STATE).cloned(),
        boot_id: host
            .read(BOOT_ID)?
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default(),
        gpu_features: !matches!(config.get("gpu-features"), Some(Value::Bool(false))),
        dcgm_exporter: super::dcgm_option::wanted(&config),
        known_gpus_raw: state.get(KNOWN_GPUS_STATE).cloned(),
        app_name: ctx.app_name.clone(),
        leader,
        partition_config: config_str(&config, "partition-config"),
        relation,
        own_node_raw,
        own_partition_raw,
        cluster_info,
        new_node: state.get(NEW_NODE_STATE).map(String::as_str) != Some("false"),
        overrides: read_overrides(state.get(NODE_CONFIG_STATE)),
        facts,
        inventory,
        action,
        munge_key_on_disk,
        munge_key,
        slurm_key_on_disk,
        defaults_on_disk: host.read(SLURMD_DEFAULTS)?,
        drop_in_on_disk: host.read(SLURMD_DROP_IN)?,
        device_files_present: device_files(host)?,
        slurmd_active,
        slurmd_activating,
        controller_failed_before: super::keys::failed_before(
            state
                .get(super::keys::CONTROLLER_FAILING_STATE)
                .map(String::as_str),
        ),
        controller,
        relation_broken: matches!(ctx.event, Event::RelationBroken(_)),
        verdict,
        controller_gres_types,
        steady_recorded: host.exists(super::keys::STEADY_PATH),
    })
}

/// Whether this hook must ask Juju for the key: hooks that cannot bring a new key (update-status,
/// actions, a unit bag changing) trust the key file when there is one.
fn must_read_secret(event: &Event, on_disk: bool) -> bool {
    let quiet = match event {
        Event::UpdateStatus | Event::Action(_) => true,
        Event::RelationJoined(r) | Event::RelationChanged(r) | Event::RelationDeparted(r) => {
            r.remote_unit.is_some()
        }
        _ => false,
    };
    !(quiet && on_disk)
}

/// How this hook reads the key secret: with `--refresh` in that secret's own `secret-changed`
/// (the unit moves to the new revision when the hook succeeds), else at the tracked revision.
fn refresh_of(event: &Event, key: &MungeKeyRef) -> SecretRead {
    match (event, key) {
        (Event::SecretChanged(s), MungeKeyRef::Secret(id)) if s.id == *id => SecretRead::Refresh,
        _ => SecretRead::Tracked,
    }
}

/// The munge key `cluster_info` points at. A key from the secret is read with `--refresh` in
/// `secret-changed` for that secret (the unit moves to the new revision), else at the revision
/// this unit tracks (the first read tracks the latest).
fn read_munge_key<B: SecretBackend>(
    ctx: &HookContext,
    backend: &B,
    key: &MungeKeyRef,
    on_disk: Option<&[u8]>,
    on_disk_source: Option<&[u8]>,
) -> Result<MungeKey, MungeKeyError> {
    let id = match key {
        MungeKeyRef::Inline(key) => return Ok(key.clone()),
        MungeKeyRef::Secret(id) => id,
    };
    // The file on disk is this secret's key only if the charm wrote it from this secret.
    let from_this_secret = on_disk_source == Some(id.to_string().as_bytes());
    if from_this_secret && !must_read_secret(&ctx.event, on_disk.is_some()) {
        if let Some(Ok(key)) = on_disk.map(|b| MungeKey::new(b.to_vec(), "munge.key")) {
            return Ok(key);
        }
    }
    let read = refresh_of(&ctx.event, key);
    let content = backend
        .secret_get(&SecretRef::Id(id.clone()), &[MUNGE_KEY_SECRET_FIELD], read)
        .map_err(|source| MungeKeyError::Read {
            secret: id.clone(),
            source: Arc::new(source),
        })?;
    let bytes = content
        .get(MUNGE_KEY_SECRET_FIELD)
        .cloned()
        .unwrap_or_default();
    MungeKey::new(bytes, "the munge key secret").map_err(|source| MungeKeyError::Invalid {
        secret: id.clone(),
        source,
    })
}

/// The `/dev/nvidia*` files that exist on the host.
pub fn device_files(host: &Host<'_>) -> Result<BTreeSet<String>, CharmError> {
    let dir = host.path("/dev");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(source) => return Err(HostError::Read { path: dir, source }.into()),
    };
    Ok(entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.starts_with("nvidia"))
        .map(|name| format!("/dev/{name}"))
        .collect())
}

/// Decodes the stored `node-config` overrides, `{"params": {"Key": "value", ...}}`, checking
/// each pair by the rules the action's text is parsed with ([`crate::slurm::node_override`],
/// [`NodeOverrides::insert`]): this is where they come back in.
pub fn read_overrides(raw: Option<&String>) -> Result<NodeOverrides, StoredStateError> {
    #[derive(serde::Deserialize)]
    struct Stored {
        params: BTreeMap<String, String>,
    }
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(NodeOverrides::default());
    };
    let unreadable = |source| StoredStateError {
        key: NODE_CONFIG_STATE,
        source,
    };
    let stored: Stored =
        serde_json::from_str(raw).map_err(|e| unreadable(StoredValueError::Json(Arc::new(e))))?;
    let mut ov = NodeOverrides::default();
    for (key, value) in &stored.params {
        let o = crate::slurm::node_override(key, value).map_err(|source| {
            unreadable(StoredValueError::Override {
                key: crate::slurm::types::shown(key),
                source,
            })
        })?;
        ov.insert(o).map_err(|e| unreadable(e.into()))?;
    }
    Ok(ov)
}

/// Encodes overrides for unit state (see [`read_overrides`]): each value as it was written.
pub fn write_overrides(ov: &NodeOverrides) -> String {
    let params: BTreeMap<&str, &str> = ov.iter().map(|o| (o.key(), o.value())).collect();
    serde_json::json!({ "params": params }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(json: &str) -> Result<NodeOverrides, StoredStateError> {
        read_overrides(Some(&json.to_string()))
    }

    #[test]
    fn stored_overrides_read_back_as_written() {
        let json = r#"{"params":{"Features":"ib,a","Weight":"200"}}"#;
        let ov = stored(json).unwrap();
        assert_eq!(write_overrides(&ov), json);
        // Keys are case-insensitive, as in the action's text.
        let ov = stored(r#"{"params":{"weight":"7"}}"#).unwrap();
        assert_eq!(write_overrides(&ov), r#"{"params":{"Weight":"7"}}"#);
        assert!(stored("").unwrap().is_empty());
        assert!(read_overrides(None).unwrap().is_empty());
        assert_eq!(
            write_overrides(&NodeOverrides::default()),
            r#"{"params":{}}"#
        );
    }

    #[test]
    fn a_stored_value_slurm_refuses_blames_the_stored_state() {
        for (json, key, value) in [
            (r#"{"params":{"Weight":"abc"}}"#, "Weight", "abc"),
            (r#"{"params":{"CPUs":"70000"}}"#, "CPUs", "70000"),
            (r#"{"params":{"Features":"a&b"}}"#, "Features", "a&b"),
            (
                r#"{"params":{"NodeName":"x"}}"#,
                "NodeName",
                "set by the charm",
            ),
        ] {
            let e = stored(json).unwrap_err();
            assert!(
                matches!(e.source, StoredValueError::Override { .. }),
                "{json}: {e:?}"
            );
            let msg = e.to_string();
            for word in [
                "stored node-config",
                key,
                value,
                "run `node-config reset=true`",
            ] {
                assert!(msg.contains(word), "{json}: {word} not in {msg}");
            }
            assert!(!msg.contains("node_parameters"), "{msg}");
        }
        let e = stored(r#"{"params":{"State":"DRAIN"}}"#).unwrap_err();
        assert!(matches!(e.source, StoredValueError::Key(_)), "{e:?}");
        assert!(
            e.to_string().contains("State is not a node parameter"),
            "{e}"
        );
        let e = stored(r#"{"params":"Weight=1"}"#).unwrap_err();
        assert!(matches!(e.source, StoredValueError::Json(_)), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("stored node-config is unreadable"),
            "{e}"
        );
    }
}
