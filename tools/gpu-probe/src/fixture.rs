//! The real NVML read into the fake library's JSON format (`docs/fake-nvml.md`).
//!
//! Every value the charm (`src/gpu/detect.rs`) and Slurm's `gpu_nvml.so` read is asked for with
//! the same call, and a call that fails is kept as its return code in the device's `errors`
//! map, so the fake fails where the real library failed (an H100 has no retired-pages counter,
//! a board without NVLink answers NOT_SUPPORTED, …).

use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError};
use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};
use nvml_wrapper::{Device, Nvml};
use serde_json::{Map, Value, json};
use slurm_charms::gpu::mask_to_cpus;

/// NVLink indexes NVML knows (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;
/// 64-bit words asked for in `nvmlDeviceGetCpuAffinity`, as the charm asks (4096 CPUs).
const AFFINITY_WORDS: usize = 64;

/// NVML's return code for an error nvml-wrapper mapped (`nvml.h`); `None` for the wrapper's own
/// errors, which no C function returns.
fn code(e: &NvmlError) -> Option<i64> {
    use NvmlError::*;
    Some(match e {
        Uninitialized => 1,
        InvalidArg => 2,
        NotSupported => 3,
        NoPermission => 4,
        NotFound => 6,
        InsufficientSize(_) => 7,
        InsufficientPower => 8,
        DriverNotLoaded => 9,
        Timeout => 10,
        IrqIssue => 11,
        LibraryNotFound => 12,
        FunctionNotFound => 13,
        CorruptedInfoROM => 14,
        GpuLost => 15,
        ResetRequired => 16,
        OperatingSystem => 17,
        LibRmVersionMismatch => 18,
        InUse => 19,
        InsufficientMemory => 20,
        NoData => 21,
        VgpuEccNotSupported => 22,
        Unknown => 999,
        _ => return None,
    })
}

/// Collects failed calls as `errors` entries, and what cannot be expressed as notes.
#[derive(Default)]
struct Errors {
    map: Map<String, Value>,
}

impl Errors {
    fn keep<T>(
        &mut self,
        call: &str,
        r: Result<T, NvmlError>,
        notes: &mut Vec<String>,
    ) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                match code(&e) {
                    Some(c) => {
                        self.map.insert(call.to_owned(), c.into());
                    }
                    None => notes.push(format!("{call}: {e} (no NVML return code; left out)")),
                }
                None
            }
        }
    }
}

/// The fake-nvml configuration that answers as `nvml` does, and notes on what it could not
/// express (printed by `gpu-probe`, kept beside the fixture).
pub fn nvml_fixture(nvml: &Nvml) -> (Value, Vec<String>) {
    let mut notes = Vec::new();
    let mut top = Map::new();
    top.insert(
        "driver_version".into(),
        nvml.sys_driver_version()
            .ok()
            .map_or(Value::Null, Value::from),
    );
    top.insert(
        "cuda_driver_version".into(),
        nvml.sys_cuda_driver_version()
            .ok()
            .map_or(Value::Null, Value::from),
    );
    let mut devices = Vec::new();
    match nvml.device_count() {
        Ok(n) => {
            for index in 0..n {
                match nvml.device_by_index(index) {
                    Ok(dev) => devices.push(device(nvml, &dev, &mut notes)),
                    Err(e) => notes.push(format!("device {index}: no handle: {e}")),
                }
            }
        }
        Err(e) => notes.push(format!("nvmlDeviceGetCount_v2: {e}")),
    }
    top.insert("devices".into(), Value::Array(devices));
    (Value::Object(top), notes)
}

fn device(nvml: &Nvml, dev: &Device<'_>, notes: &mut Vec<String>) -> Value {
    let mut errs = Errors::default();
    let name = errs.keep("nvmlDeviceGetName", dev.name(), notes);
    let uuid = errs.keep("nvmlDeviceGetUUID", dev.uuid(), notes);
    let pci = errs.keep("nvmlDeviceGetPciInfo_v3", dev.pci_info(), notes);
    let minor = errs.keep("nvmlDeviceGetMinorNumber", dev.minor_number(), notes);
    let memory = errs.keep("nvmlDeviceGetMemoryInfo_v2", dev.memory_info(), notes);
    let affinity = errs.keep(
        "nvmlDeviceGetCpuAffinity",
        dev.cpu_affinity(AFFINITY_WORDS),
        notes,
    );
    let mut out = Map::new();
    out.insert("name".into(), name.unwrap_or_default().into());
    out.insert("uuid".into(), uuid.unwrap_or_default().into());
    out.insert(
        "pci_bus_id".into(),
        pci.as_ref()
            .map(|p| p.bus_id.clone())
            .unwrap_or_default()
            .into(),
    );
    out.insert("minor".into(), minor.unwrap_or_default().into());
    if let Some(m) = memory {
        out.insert("memory_total".into(), m.total.into());
    }
    if let Some(p) = &pci {
        out.insert("pci_device_id".into(), p.pci_device_id.into());
    }
    if let Some(words) = affinity {
        out.insert("cpu_affinity".into(), mask_to_cpus(&words).into());
    }
    if let Some(links) = nvlinks(dev, &mut errs, notes) {
        out.insert("nvlinks".into(), links);
    }
    if let Some(mig) = mig(nvml, dev, &mut errs, notes) {
        out.insert("mig".into(), mig);
    }
    out.insert("health".into(), health(nvml, dev, &mut errs, notes));
    if !errs.map.is_empty() {
        out.insert("errors".into(), Value::Object(errs.map));
    }
    Value::Object(out)
}

/// One entry per link the real NVML answered for (remote bus id when active, `null` when not);
/// `None` when link 0 is NOT_SUPPORTED (the fake's "absent").
fn nvlinks(dev: &Device<'_>, errs: &mut Errors, notes: &mut Vec<String>) -> Option<Value> {
    let mut links = Vec::new();
    for link in 0..MAX_NVLINKS {
        let w = dev.link_wrapper_for(link);
        match w.is_active() {
            Ok(true) => match w.remote_pci_info() {
                Ok(p) => links.push(Value::from(p.bus_id)),
                Err(e) => {
                    errs.keep::<()>("nvmlDeviceGetNvLinkRemotePciInfo_v2", Err(e), notes);
                    links.push(Value::Null);
                }
            },
            Ok(false) => links.push(Value::Null),
            Err(NvmlError::NotSupported) if link == 0 => return None,
            Err(NvmlError::InvalidArg) => break,
            Err(e) => {
                notes.push(format!(
                    "nvmlDeviceGetNvLinkState link {link}: {e}; the list stops here"
                ));
                break;
            }
        }
    }
    Some(Value::Array(links))
}

fn mig(nvml: &Nvml, dev: &Device<'_>, errs: &mut Errors, notes: &mut Vec<String>) -> Option<Value> {
    let mode = match dev.mig_mode() {
        Ok(m) => m,
        Err(NvmlError::NotSupported) => return None,
        Err(e) => {
            errs.keep::<()>("nvmlDeviceGetMigMode", Err(e), notes);
            return None;
        }
    };
    let max = errs
        .keep(
            "nvmlDeviceGetMaxMigDeviceCount",
            dev.mig_device_count(),
            notes,
        )
        .unwrap_or(0);
    let mut instances = Vec::new();
    for slot in 0..max {
        match dev.mig_device_by_index(slot) {
            Ok(m) => instances.push(mig_instance(nvml, &m, slot, notes)),
            Err(NvmlError::NotFound) => {}
            Err(e) => notes.push(format!("MIG slot {slot}: {e}")),
        }
    }
    Some(json!({
        "current": mode.current,
        "pending": mode.pending,
        "max_devices": max,
        "instances": instances,
    }))
}

fn mig_instance(nvml: &Nvml, m: &Device<'_>, slot: u32, notes: &mut Vec<String>) -> Value {
    let mut errs = Errors::default();
    let mut out = Map::new();
    out.insert("slot".into(), slot.into());
    out.insert(
        "uuid".into(),
        errs.keep("nvmlDeviceGetUUID", m.uuid(), notes)
            .unwrap_or_default()
            .into(),
    );
    if let Some(name) = errs.keep("nvmlDeviceGetName", m.name(), notes) {
        out.insert("name".into(), name.into());
    }
    let (gi, ci) = instance_ids(nvml, m, &mut errs, notes);
    out.insert("gpu_instance_id".into(), gi.into());
    out.insert("compute_instance_id".into(), ci.into());
    let attrs = errs.keep("nvmlDeviceGetAttributes_v2", m.attributes(), notes);
    let (g, c, mb, sm) = attrs.map_or((0, 0, 0, 0), |a| {
        (
            a.gpu_instance_slice_count,
            a.compute_instance_slice_count,
            a.memory_size_mb,
            a.multiprocessor_count,
        )
    });
    out.insert("gpu_instance_slice_count".into(), g.into());
    out.insert("compute_instance_slice_count".into(), c.into());
    out.insert("memory_size_mb".into(), mb.into());
    out.insert("multiprocessor_count".into(), sm.into());
    if !errs.map.is_empty() {
        out.insert("errors".into(), Value::Object(errs.map));
    }
    Value::Object(out)
}

/// `nvmlDeviceGetGpuInstanceId` and `nvmlDeviceGetComputeInstanceId`, which nvml-wrapper 0.13
/// does not wrap.
fn instance_ids(
    nvml: &Nvml,
    m: &Device<'_>,
    errs: &mut Errors,
    notes: &mut Vec<String>,
) -> (u32, u32) {
    let lib = nvml.lib();
    let mut gi = 0;
    let mut ci = 0;
    let r = nvml_sym(lib.nvmlDeviceGetGpuInstanceId.as_ref())
        // SAFETY: `m` is a live handle of this `nvml`; the out-pointer is a local `c_uint`.
        .and_then(|f| unsafe { nvml_try(f(m.handle(), &mut gi)) });
    errs.keep("nvmlDeviceGetGpuInstanceId", r, notes);
    let r = nvml_sym(lib.nvmlDeviceGetComputeInstanceId.as_ref())
        // SAFETY: as above.
        .and_then(|f| unsafe { nvml_try(f(m.handle(), &mut ci)) });
    errs.keep("nvmlDeviceGetComputeInstanceId", r, notes);
    (gi, ci)
}

/// The counters the charm's health check reads, as the fake's `health` object.
fn health(nvml: &Nvml, dev: &Device<'_>, errs: &mut Errors, notes: &mut Vec<String>) -> Value {
    let unc = errs.keep(
        "nvmlDeviceGetTotalEccErrors",
        dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile),
        notes,
    );
    let corr = dev
        .total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile)
        .ok();
    let pending = errs.keep(
        "nvmlDeviceGetRetiredPagesPendingStatus",
        dev.are_pages_pending_retired(),
        notes,
    );
    let (mut c, mut u, mut p, mut f) = (0, 0, 0, 0);
    let r = nvml_sym(nvml.lib().nvmlDeviceGetRemappedRows.as_ref())
        // SAFETY: `dev` is a live handle of this `nvml`; the four out-pointers are local
        // `c_uint`s, as the NVML signature requires.
        .and_then(|sym| unsafe { nvml_try(sym(dev.handle(), &mut c, &mut u, &mut p, &mut f)) });
    let remapped = errs.keep("nvmlDeviceGetRemappedRows", r, notes).is_some();
    let mut h = Map::new();
    h.insert("ecc_uncorrected".into(), unc.unwrap_or(0).into());
    h.insert("ecc_corrected".into(), corr.unwrap_or(0).into());
    h.insert(
        "retired_pages_pending".into(),
        pending.unwrap_or(false).into(),
    );
    if remapped {
        h.insert("remapped_rows_uncorrectable".into(), u.into());
        h.insert("row_remap_pending".into(), (p != 0).into());
        h.insert("row_remap_failure".into(), (f != 0).into());
        if c != 0 {
            notes.push(format!(
                "nvmlDeviceGetRemappedRows: {c} corrected rows (the fake always answers 0)"
            ));
        }
    }
    Value::Object(h)
}
