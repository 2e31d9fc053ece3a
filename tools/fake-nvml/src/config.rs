//! The fake's JSON configuration (documented in `docs/fake-nvml.md`).

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;

use serde::Deserialize;

/// Whole-library configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Return code of `nvmlInit_v2` / `nvmlInitWithFlags` (e.g. 9 = driver not loaded).
    #[serde(default)]
    pub init_error: Option<c_int>,
    /// `nvmlSystemGetDriverVersion`; `null` makes the call return NOT_SUPPORTED.
    #[serde(default = "default_driver")]
    pub driver_version: Option<String>,
    /// `nvmlSystemGetCudaDriverVersion_v2` (e.g. 12040); `null` → NOT_SUPPORTED.
    #[serde(default = "default_cuda")]
    pub cuda_driver_version: Option<c_int>,
    /// Return code per C function name, for every handle (device-level `errors` win).
    #[serde(default)]
    pub errors: HashMap<String, c_int>,
    /// Physical GPUs in NVML index order.
    #[serde(default)]
    pub devices: Vec<DeviceCfg>,
    /// Milliseconds to sleep in a C function before it answers, per function name: a hanging
    /// driver (`{"nvmlDeviceGetCount_v2": 600000}`). Honoured by `nvmlInit*`,
    /// `nvmlDeviceGetCount_v2` and every call that takes a device handle.
    #[serde(default)]
    pub delay_ms: HashMap<String, u64>,
}

fn default_driver() -> Option<String> {
    Some("550.54.15".to_owned())
}

fn default_cuda() -> Option<c_int> {
    Some(12040)
}

/// One physical GPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCfg {
    /// `nvmlDeviceGetName`, e.g. "NVIDIA A100-SXM4-40GB".
    pub name: String,
    /// `nvmlDeviceGetUUID`, e.g. "GPU-…".
    pub uuid: String,
    /// `nvmlPciInfo_t.busId`, e.g. "00000000:07:00.0".
    pub pci_bus_id: String,
    /// `nvmlDeviceGetMinorNumber` (the N of /dev/nvidiaN).
    pub minor: u32,
    /// Total framebuffer bytes (`nvmlDeviceGetMemoryInfo_v2`).
    #[serde(default)]
    pub memory_total: u64,
    /// `pciDeviceId` (e.g. 0x20B010DE).
    #[serde(default)]
    pub pci_device_id: u32,
    /// CPU ids in the device's affinity mask; absent → NOT_SUPPORTED.
    #[serde(default)]
    pub cpu_affinity: Option<Vec<u32>>,
    /// MIG state; absent → every MIG call returns NOT_SUPPORTED.
    #[serde(default)]
    pub mig: Option<MigCfg>,
    /// One entry per NVLink: remote PCI bus id when active, `null` when inactive.
    /// Absent → NOT_SUPPORTED; links past the end → INVALID_ARGUMENT.
    #[serde(default)]
    pub nvlinks: Option<Vec<Option<String>>>,
    /// Health counters the charm's GPU health check reads (all healthy by default).
    #[serde(default)]
    pub health: HealthCfg,
    /// Return code per C function name for this device only.
    #[serde(default)]
    pub errors: HashMap<String, c_int>,
    /// `nvmlDeviceGetSerial`; absent → NOT_SUPPORTED.
    #[serde(default)]
    pub serial: Option<String>,
    /// XIDs queued for `nvmlEventSetWait_v2` (event type `nvmlEventTypeXidCriticalError`,
    /// `eventData` = the XID), delivered in order, each once per process, to an event set this
    /// device registered XID events with.
    #[serde(default)]
    pub xids: Vec<u64>,
}

/// Health counters of one GPU (`docs/fake-nvml.md`, "Injecting GPU faults").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthCfg {
    /// `nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)`; the aggregate counter returns it too.
    #[serde(default)]
    pub ecc_uncorrected: u64,
    /// `nvmlDeviceGetTotalEccErrors(CORRECTED, *)`.
    #[serde(default)]
    pub ecc_corrected: u64,
    /// `nvmlDeviceGetRetiredPagesPendingStatus`: pages wait for retirement (a GPU reset).
    #[serde(default)]
    pub retired_pages_pending: bool,
    /// `nvmlDeviceGetRemappedRows` `uncRows`.
    #[serde(default)]
    pub remapped_rows_uncorrectable: u32,
    /// `nvmlDeviceGetRemappedRows` `isPending`.
    #[serde(default)]
    pub row_remap_pending: bool,
    /// `nvmlDeviceGetRemappedRows` `failureOccurred`.
    #[serde(default)]
    pub row_remap_failure: bool,
}

/// MIG mode and instances of one GPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigCfg {
    /// Current MIG mode (1 = enabled).
    #[serde(default = "one")]
    pub current: u32,
    /// Pending MIG mode (defaults to `current`).
    #[serde(default)]
    pub pending: Option<u32>,
    /// `nvmlDeviceGetMaxMigDeviceCount` (default 7).
    #[serde(default = "seven")]
    pub max_devices: u32,
    /// MIG devices; each sits at `slot` (default: next free index).
    #[serde(default)]
    pub instances: Vec<MigInstanceCfg>,
}

fn one() -> u32 {
    1
}

fn seven() -> u32 {
    7
}

/// One MIG device (GPU instance + compute instance).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigInstanceCfg {
    /// Index for `nvmlDeviceGetMigDeviceHandleByIndex`; gaps return NOT_FOUND.
    #[serde(default)]
    pub slot: Option<u32>,
    /// `nvmlDeviceGetUUID` on the MIG handle ("MIG-…").
    pub uuid: String,
    /// `nvmlDeviceGetName` on the MIG handle (e.g. "NVIDIA A100-SXM4-40GB MIG 1g.5gb").
    #[serde(default)]
    pub name: Option<String>,
    /// `nvmlDeviceGetGpuInstanceId`.
    pub gpu_instance_id: u32,
    /// `nvmlDeviceGetComputeInstanceId`.
    #[serde(default)]
    pub compute_instance_id: u32,
    /// `nvmlDeviceAttributes_t.gpuInstanceSliceCount` (the "g" of the profile).
    pub gpu_instance_slice_count: u32,
    /// `computeInstanceSliceCount` (defaults to the GPU instance slices).
    #[serde(default)]
    pub compute_instance_slice_count: Option<u32>,
    /// `memorySizeMB` of the instance (e.g. 4864 for 1g.5gb on A100-40GB).
    pub memory_size_mb: u64,
    /// `multiprocessorCount`.
    #[serde(default)]
    pub multiprocessor_count: u32,
    /// Return code per C function name for this MIG handle only.
    #[serde(default)]
    pub errors: HashMap<String, c_int>,
}

#[repr(C)]
struct DlInfo {
    dli_fname: *const c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const c_char,
    dli_saddr: *mut c_void,
}

unsafe extern "C" {
    fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
}

/// Path of this shared object, found with `dladdr` on one of its own functions.
fn own_path() -> Option<PathBuf> {
    let mut info = DlInfo {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    let addr = own_path as *const c_void;
    // SAFETY: dladdr only reads `addr` and writes into `info`.
    let ok = unsafe { dladdr(addr, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the dynamic loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(name.to_string_lossy().into_owned()))
}

/// Where the configuration comes from: `$FAKE_NVML_CONFIG`, else `<this .so>.json`, else none.
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAKE_NVML_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let mut sidecar = own_path()?.into_os_string();
    sidecar.push(".json");
    let sidecar = PathBuf::from(sidecar);
    sidecar.is_file().then_some(sidecar)
}

/// Reads the configuration; no file means zero devices.
pub fn load() -> Result<Config, String> {
    let Some(path) = config_path() else {
        return Ok(Config::default_empty());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("fake-nvml: cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("fake-nvml: invalid config {}: {e}", path.display()))
}

impl Config {
    /// The configuration used when no file is found: default versions, no devices.
    fn default_empty() -> Self {
        Config {
            init_error: None,
            driver_version: default_driver(),
            cuda_driver_version: default_cuda(),
            errors: HashMap::new(),
            devices: Vec::new(),
            delay_ms: HashMap::new(),
        }
    }
}
