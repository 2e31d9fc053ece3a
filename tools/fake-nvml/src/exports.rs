//! The exported NVML C functions.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ulonglong};

use nvml_wrapper_sys::bindings as b;

use crate::config;
use crate::rc;
use crate::state::{Kind, Node, STATE, State, with_node, with_state, with_state_mut};

/// `nvmlDevice_t` as the fake sees it.
pub(crate) type Handle = *const Node;

/// `nvmlMemory_v2_t.version` as set by nvml-wrapper (`NVML_STRUCT_VERSION(Memory, 2)`).
const MEMORY_V2: c_uint = 0x0200_0028;

// The fake writes the very structs nvml-wrapper reads; pin their sizes to the NVML 13 ABI.
const _: () = {
    assert!(size_of::<b::nvmlPciInfo_t>() == 16 + 5 * 4 + 32);
    assert!(size_of::<b::nvmlMemory_v2_t>() == 40);
    assert!(size_of::<b::nvmlDeviceAttributes_t>() == 8 * 4 + 8);
    assert!(size_of::<c_ulong>() == 8);
};

/// Writes `value` through `out`, or INVALID_ARGUMENT for a null pointer.
fn put<T>(out: *mut T, value: T) -> Result<(), c_int> {
    if out.is_null() {
        return Err(rc::INVALID_ARGUMENT);
    }
    // SAFETY: the caller passed a writable pointer to a `T` (NVML contract).
    unsafe { out.write(value) };
    Ok(())
}

/// Copies `s` as a C string into `buf` of `len` bytes (INSUFFICIENT_SIZE if it does not fit).
fn put_str(buf: *mut c_char, len: c_uint, s: &str) -> Result<(), c_int> {
    if buf.is_null() {
        return Err(rc::INVALID_ARGUMENT);
    }
    let bytes = s.as_bytes();
    if bytes.len() + 1 > len as usize {
        return Err(rc::INSUFFICIENT_SIZE);
    }
    // SAFETY: `buf` has room for `len` bytes, checked above against the string plus NUL.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

fn gpu_cfg(node: &Node) -> Result<&config::DeviceCfg, c_int> {
    match &node.kind {
        Kind::Gpu { cfg, .. } => Ok(cfg),
        Kind::Mig { .. } => Err(rc::NOT_SUPPORTED),
    }
}

fn parent_cfg<'a>(state: &'a State, node: &'a Node) -> &'a config::DeviceCfg {
    match &node.kind {
        Kind::Gpu { cfg, .. } => cfg,
        Kind::Mig { parent, .. } => match &state.gpus[*parent].kind {
            Kind::Gpu { cfg, .. } => cfg,
            Kind::Mig { .. } => unreachable_parent(),
        },
    }
}

fn unreachable_parent() -> ! {
    eprintln!("fake-nvml: internal error: MIG parent is not a GPU");
    std::process::abort()
}

/// Parses "DDDDDDDD:BB:DD.F" (or "DDDD:BB:DD.F") into domain, bus, device.
fn parse_bus_id(id: &str) -> (u32, u32, u32) {
    let mut parts = id.split(':');
    let domain = parts.next().and_then(|d| u32::from_str_radix(d, 16).ok());
    let bus = parts.next().and_then(|d| u32::from_str_radix(d, 16).ok());
    let dev = parts
        .next()
        .and_then(|d| d.split('.').next())
        .and_then(|d| u32::from_str_radix(d, 16).ok());
    (domain.unwrap_or(0), bus.unwrap_or(0), dev.unwrap_or(0))
}

fn pci_info(bus_id: &str, device_id: u32) -> b::nvmlPciInfo_t {
    let (domain, bus, device) = parse_bus_id(bus_id);
    let mut info = b::nvmlPciInfo_t {
        busIdLegacy: [0; 16],
        domain,
        bus,
        device,
        pciDeviceId: device_id,
        pciSubSystemId: 0,
        busId: [0; 32],
    };
    for (dst, src) in info.busId.iter_mut().zip(bus_id.bytes().take(31)) {
        *dst = src as c_char;
    }
    let legacy = format!("{domain:04x}:{bus:02x}:{device:02x}.0");
    for (dst, src) in info.busIdLegacy.iter_mut().zip(legacy.bytes().take(15)) {
        *dst = src as c_char;
    }
    info
}

fn init(call: &str) -> c_int {
    let mut guard = match STATE.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(state) = guard.as_mut() {
        state.delay(call);
        if let Some(code) = state.global_error(call).or(state.config.init_error) {
            return code;
        }
        state.refs += 1;
        return rc::SUCCESS;
    }
    let config = match config::load() {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("{msg}");
            return rc::UNKNOWN;
        }
    };
    if let Some(ms) = config.delay_ms.get(call) {
        std::thread::sleep(std::time::Duration::from_millis(*ms));
    }
    if let Some(code) = config.errors.get(call).copied().or(config.init_error) {
        return code;
    }
    match State::build(config) {
        Ok(state) => {
            *guard = Some(state);
            rc::SUCCESS
        }
        Err(msg) => {
            eprintln!("{msg}");
            rc::UNKNOWN
        }
    }
}

/// `nvmlReturn_t nvmlInit_v2(void)`
#[unsafe(no_mangle)]
pub extern "C" fn nvmlInit_v2() -> c_int {
    init("nvmlInit_v2")
}

/// `nvmlReturn_t nvmlInitWithFlags(unsigned int flags)` (flags are ignored).
#[unsafe(no_mangle)]
pub extern "C" fn nvmlInitWithFlags(_flags: c_uint) -> c_int {
    init("nvmlInitWithFlags")
}

/// `nvmlReturn_t nvmlShutdown(void)`
#[unsafe(no_mangle)]
pub extern "C" fn nvmlShutdown() -> c_int {
    let mut guard = match STATE.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    let Some(state) = guard.as_mut() else {
        return rc::UNINITIALIZED;
    };
    if let Some(code) = state.global_error("nvmlShutdown") {
        return code;
    }
    state.refs -= 1;
    if state.refs == 0 {
        *guard = None;
    }
    rc::SUCCESS
}

/// `const char *nvmlErrorString(nvmlReturn_t result)`
#[unsafe(no_mangle)]
pub extern "C" fn nvmlErrorString(result: c_int) -> *const c_char {
    rc::message(result).as_ptr().cast()
}

/// `nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(version: *mut c_char, length: c_uint) -> c_int {
    with_state(|s| {
        if let Some(code) = s.global_error("nvmlSystemGetDriverVersion") {
            return Err(code);
        }
        let v = s
            .config
            .driver_version
            .as_deref()
            .ok_or(rc::NOT_SUPPORTED)?;
        put_str(version, length, v)
    })
}

/// `nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)`: the NVML version
/// as real NVML spells it, `<CUDA major>.<driver version>` (`12.550.54.15`); NOT_SUPPORTED when
/// the configured driver or CUDA version is `null`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetNVMLVersion(version: *mut c_char, length: c_uint) -> c_int {
    with_state(|s| {
        if let Some(code) = s.global_error("nvmlSystemGetNVMLVersion") {
            return Err(code);
        }
        let driver = s
            .config
            .driver_version
            .as_deref()
            .ok_or(rc::NOT_SUPPORTED)?;
        let cuda = s.config.cuda_driver_version.ok_or(rc::NOT_SUPPORTED)?;
        put_str(version, length, &format!("{}.{driver}", cuda / 1000))
    })
}

fn cuda_version(call: &str, out: *mut c_int) -> c_int {
    with_state(|s| {
        if let Some(code) = s.global_error(call) {
            return Err(code);
        }
        put(out, s.config.cuda_driver_version.ok_or(rc::NOT_SUPPORTED)?)
    })
}

/// `nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(out: *mut c_int) -> c_int {
    cuda_version("nvmlSystemGetCudaDriverVersion_v2", out)
}

/// `nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion(out: *mut c_int) -> c_int {
    cuda_version("nvmlSystemGetCudaDriverVersion", out)
}

/// `nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(count: *mut c_uint) -> c_int {
    with_state(|s| {
        s.delay("nvmlDeviceGetCount_v2");
        if let Some(code) = s.global_error("nvmlDeviceGetCount_v2") {
            return Err(code);
        }
        put(count, s.gpus.len() as c_uint)
    })
}

/// `nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(
    index: c_uint,
    device: *mut Handle,
) -> c_int {
    const CALL: &str = "nvmlDeviceGetHandleByIndex_v2";
    with_state(|s| {
        let node = *s.gpus.get(index as usize).ok_or(rc::INVALID_ARGUMENT)?;
        s.node(CALL, node)?;
        put(device, node as Handle)
    })
}

/// `nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetIndex(device: Handle, index: *mut c_uint) -> c_int {
    with_node("nvmlDeviceGetIndex", device, |s, node| {
        let pos = s.gpus.iter().position(|g| std::ptr::eq(*g, node));
        put(index, pos.ok_or(rc::NOT_SUPPORTED)? as c_uint)
    })
}

/// `nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetName(
    device: Handle,
    name: *mut c_char,
    length: c_uint,
) -> c_int {
    with_node("nvmlDeviceGetName", device, |s, node| match &node.kind {
        Kind::Gpu { cfg, .. } => put_str(name, length, &cfg.name),
        Kind::Mig { cfg, .. } => {
            let fallback;
            let text = match &cfg.name {
                Some(n) => n.as_str(),
                None => {
                    fallback = format!("{} MIG", parent_cfg(s, node).name);
                    fallback.as_str()
                }
            };
            put_str(name, length, text)
        }
    })
}

/// `nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(
    device: Handle,
    uuid: *mut c_char,
    length: c_uint,
) -> c_int {
    with_node("nvmlDeviceGetUUID", device, |_, node| match &node.kind {
        Kind::Gpu { cfg, .. } => put_str(uuid, length, &cfg.uuid),
        Kind::Mig { cfg, .. } => put_str(uuid, length, &cfg.uuid),
    })
}

/// `nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMinorNumber(device: Handle, minor: *mut c_uint) -> c_int {
    with_node("nvmlDeviceGetMinorNumber", device, |_, node| {
        put(minor, gpu_cfg(node)?.minor)
    })
}

/// `nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(
    device: Handle,
    pci: *mut b::nvmlPciInfo_t,
) -> c_int {
    with_node("nvmlDeviceGetPciInfo_v3", device, |s, node| {
        let cfg = parent_cfg(s, node);
        put(pci, pci_info(&cfg.pci_bus_id, cfg.pci_device_id))
    })
}

/// `nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(
    device: Handle,
    memory: *mut b::nvmlMemory_v2_t,
) -> c_int {
    with_node("nvmlDeviceGetMemoryInfo_v2", device, |_, node| {
        if memory.is_null() {
            return Err(rc::INVALID_ARGUMENT);
        }
        // SAFETY: non-null pointer to the caller's struct; NVML reads the pre-set version first.
        let version = unsafe { (*memory).version };
        if version != MEMORY_V2 {
            return Err(rc::ARGUMENT_VERSION_MISMATCH);
        }
        let total = match &node.kind {
            Kind::Gpu { cfg, .. } => cfg.memory_total,
            Kind::Mig { cfg, .. } => cfg.memory_size_mb * 1024 * 1024,
        };
        put(
            memory,
            b::nvmlMemory_v2_t {
                version,
                total: total as c_ulonglong,
                reserved: 0,
                free: total as c_ulonglong,
                used: 0,
            },
        )
    })
}

/// `nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t, unsigned int cpuSetSize, unsigned long *cpuSet)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCpuAffinity(
    device: Handle,
    size: c_uint,
    set: *mut c_ulong,
) -> c_int {
    with_node("nvmlDeviceGetCpuAffinity", device, |s, node| {
        let cpus = parent_cfg(s, node)
            .cpu_affinity
            .as_ref()
            .ok_or(rc::NOT_SUPPORTED)?;
        if set.is_null() || size == 0 {
            return Err(rc::INVALID_ARGUMENT);
        }
        let mut words = vec![0 as c_ulong; size as usize];
        for &cpu in cpus {
            if let Some(w) = words.get_mut(cpu as usize / 64) {
                *w |= 1 << (cpu % 64);
            }
        }
        // SAFETY: the caller's array holds `size` words.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), set, words.len()) };
        Ok(())
    })
}

fn mig_cfg(node: &Node) -> Result<&config::MigCfg, c_int> {
    gpu_cfg(node)?.mig.as_ref().ok_or(rc::NOT_SUPPORTED)
}

/// `nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t, unsigned int *currentMode, unsigned int *pendingMode)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    device: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetMigMode", device, |_, node| {
        let mig = mig_cfg(node)?;
        put(current, mig.current)?;
        put(pending, mig.pending.unwrap_or(mig.current))
    })
}

/// `nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMaxMigDeviceCount(
    device: Handle,
    count: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetMaxMigDeviceCount", device, |_, node| {
        put(count, mig_cfg(node)?.max_devices)
    })
}

/// `nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t, unsigned int index, nvmlDevice_t *mig)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigDeviceHandleByIndex(
    device: Handle,
    index: c_uint,
    mig: *mut Handle,
) -> c_int {
    with_node("nvmlDeviceGetMigDeviceHandleByIndex", device, |_, node| {
        let Kind::Gpu { cfg, slots } = &node.kind else {
            return Err(rc::NOT_SUPPORTED);
        };
        let mode = cfg.mig.as_ref().ok_or(rc::NOT_SUPPORTED)?;
        if mode.current != 1 {
            return Err(rc::NOT_FOUND);
        }
        let slot = slots.get(index as usize).ok_or(rc::INVALID_ARGUMENT)?;
        let child = slot.ok_or(rc::NOT_FOUND)?;
        put(mig, child as Handle)
    })
}

/// `nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceIsMigDeviceHandle(device: Handle, is_mig: *mut c_uint) -> c_int {
    with_node("nvmlDeviceIsMigDeviceHandle", device, |_, node| {
        put(is_mig, matches!(node.kind, Kind::Mig { .. }) as c_uint)
    })
}

/// `nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *device)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle(
    device: Handle,
    parent: *mut Handle,
) -> c_int {
    with_node(
        "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
        device,
        |s, node| {
            let Kind::Mig { parent: p, .. } = &node.kind else {
                return Err(rc::INVALID_ARGUMENT);
            };
            put(parent, s.gpus[*p] as Handle)
        },
    )
}

fn mig_instance(node: &Node) -> Result<&config::MigInstanceCfg, c_int> {
    match &node.kind {
        Kind::Mig { cfg, .. } => Ok(cfg),
        Kind::Gpu { .. } => Err(rc::INVALID_ARGUMENT),
    }
}

/// `nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetAttributes_v2(
    device: Handle,
    attributes: *mut b::nvmlDeviceAttributes_t,
) -> c_int {
    with_node("nvmlDeviceGetAttributes_v2", device, |_, node| {
        let attrs = match &node.kind {
            Kind::Mig { cfg, .. } => b::nvmlDeviceAttributes_t {
                multiprocessorCount: cfg.multiprocessor_count,
                sharedCopyEngineCount: 0,
                sharedDecoderCount: 0,
                sharedEncoderCount: 0,
                sharedJpegCount: 0,
                sharedOfaCount: 0,
                gpuInstanceSliceCount: cfg.gpu_instance_slice_count,
                computeInstanceSliceCount: cfg
                    .compute_instance_slice_count
                    .unwrap_or(cfg.gpu_instance_slice_count),
                memorySizeMB: cfg.memory_size_mb as c_ulonglong,
            },
            Kind::Gpu { cfg, .. } => b::nvmlDeviceAttributes_t {
                multiprocessorCount: 0,
                sharedCopyEngineCount: 0,
                sharedDecoderCount: 0,
                sharedEncoderCount: 0,
                sharedJpegCount: 0,
                sharedOfaCount: 0,
                gpuInstanceSliceCount: 0,
                computeInstanceSliceCount: 0,
                memorySizeMB: (cfg.memory_total / (1024 * 1024)) as c_ulonglong,
            },
        };
        put(attributes, attrs)
    })
}

/// `nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGpuInstanceId(device: Handle, id: *mut c_uint) -> c_int {
    with_node("nvmlDeviceGetGpuInstanceId", device, |_, node| {
        put(id, mig_instance(node)?.gpu_instance_id)
    })
}

/// `nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeInstanceId(device: Handle, id: *mut c_uint) -> c_int {
    with_node("nvmlDeviceGetComputeInstanceId", device, |_, node| {
        put(id, mig_instance(node)?.compute_instance_id)
    })
}

fn nvlink(node: &Node, link: c_uint) -> Result<&Option<String>, c_int> {
    let links = gpu_cfg(node)?.nvlinks.as_ref().ok_or(rc::NOT_SUPPORTED)?;
    if link >= b::NVML_NVLINK_MAX_LINKS {
        return Err(rc::INVALID_ARGUMENT);
    }
    links.get(link as usize).ok_or(rc::INVALID_ARGUMENT)
}

/// `nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t, unsigned int link, nvmlEnableState_t *isActive)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkState(
    device: Handle,
    link: c_uint,
    active: *mut b::nvmlEnableState_t,
) -> c_int {
    with_node("nvmlDeviceGetNvLinkState", device, |_, node| {
        let remote = nvlink(node, link)?;
        put(active, remote.is_some() as b::nvmlEnableState_t)
    })
}

/// `nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t, unsigned int link, nvmlPciInfo_t *pci)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkRemotePciInfo_v2(
    device: Handle,
    link: c_uint,
    pci: *mut b::nvmlPciInfo_t,
) -> c_int {
    with_node("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, |_, node| {
        let remote = nvlink(node, link)?.as_deref().ok_or(rc::NOT_SUPPORTED)?;
        put(pci, pci_info(remote, 0))
    })
}

/// `nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t, nvmlMemoryErrorType_t errorType,
/// nvmlEccCounterType_t counterType, unsigned long long *eccCounts)`: `health.ecc_uncorrected`
/// for errorType 1 (uncorrected), `health.ecc_corrected` for 0, either counter type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTotalEccErrors(
    device: Handle,
    error_type: c_uint,
    counter_type: c_uint,
    count: *mut c_ulonglong,
) -> c_int {
    with_node("nvmlDeviceGetTotalEccErrors", device, |_, node| {
        let health = &gpu_cfg(node)?.health;
        if counter_type > 1 {
            return Err(rc::INVALID_ARGUMENT);
        }
        match error_type {
            0 => put(count, health.ecc_corrected),
            1 => put(count, health.ecc_uncorrected),
            _ => Err(rc::INVALID_ARGUMENT),
        }
    })
}

/// `nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t, nvmlEnableState_t *isPending)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRetiredPagesPendingStatus(
    device: Handle,
    pending: *mut c_uint,
) -> c_int {
    with_node(
        "nvmlDeviceGetRetiredPagesPendingStatus",
        device,
        |_, node| {
            put(
                pending,
                c_uint::from(gpu_cfg(node)?.health.retired_pages_pending),
            )
        },
    )
}

/// `nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t, unsigned int *corrRows, unsigned int
/// *uncRows, unsigned int *isPending, unsigned int *failureOccurred)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetRemappedRows(
    device: Handle,
    corr_rows: *mut c_uint,
    unc_rows: *mut c_uint,
    pending: *mut c_uint,
    failure: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetRemappedRows", device, |_, node| {
        let health = &gpu_cfg(node)?.health;
        put(corr_rows, 0)?;
        put(unc_rows, health.remapped_rows_uncorrectable)?;
        put(pending, c_uint::from(health.row_remap_pending))?;
        put(failure, c_uint::from(health.row_remap_failure))
    })
}

/// `nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t, char *serial, unsigned int length)`:
/// the device's `serial`, NOT_SUPPORTED without one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSerial(
    device: Handle,
    serial: *mut c_char,
    length: c_uint,
) -> c_int {
    with_node("nvmlDeviceGetSerial", device, |_, node| {
        let s = gpu_cfg(node)?.serial.as_deref().ok_or(rc::NOT_SUPPORTED)?;
        put_str(serial, length, s)
    })
}

/// `nvmlEventTypeXidCriticalError`.
const XID_EVENT: c_ulonglong = 8;

/// An `nvmlEventSet_t` as the fake hands it out: 1 + its index in `State::event_sets`.
type EventSet = usize;

/// `nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetCreate(set: *mut EventSet) -> c_int {
    with_state_mut(|state| {
        if let Some(code) = state.global_error("nvmlEventSetCreate") {
            return Err(code);
        }
        state.event_sets.push(Vec::new());
        put(set, state.event_sets.len())
    })
}

/// `nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t, unsigned long long *types)`:
/// XID critical errors only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedEventTypes(
    device: Handle,
    types: *mut c_ulonglong,
) -> c_int {
    with_node("nvmlDeviceGetSupportedEventTypes", device, |_, node| {
        gpu_cfg(node)?;
        put(types, XID_EVENT)
    })
}

/// `nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t, unsigned long long types, nvmlEventSet_t)`:
/// only `nvmlEventTypeXidCriticalError` is supported (other bits: NOT_SUPPORTED).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceRegisterEvents(
    device: Handle,
    types: c_ulonglong,
    set: EventSet,
) -> c_int {
    with_state_mut(|state| {
        let node = state.node("nvmlDeviceRegisterEvents", device)?;
        gpu_cfg(node)?;
        if types & !XID_EVENT != 0 {
            return Err(rc::NOT_SUPPORTED);
        }
        let index = state
            .gpus
            .iter()
            .position(|g| std::ptr::eq(*g, node))
            .ok_or(rc::INVALID_ARGUMENT)?;
        let members = set
            .checked_sub(1)
            .and_then(|i| state.event_sets.get_mut(i))
            .ok_or(rc::INVALID_ARGUMENT)?;
        if types & XID_EVENT != 0 && !members.contains(&index) {
            members.push(index);
        }
        Ok(())
    })
}

/// `nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t, nvmlEventData_t *data, unsigned int ms)`:
/// the next queued XID of a registered device (lowest index first), else TIMEOUT after
/// sleeping `ms` (at most 1 s, so a test stays quick).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetWait_v2(
    set: EventSet,
    data: *mut b::nvmlEventData_t,
    timeout_ms: c_uint,
) -> c_int {
    let code = with_state_mut(|state| {
        if let Some(code) = state.global_error("nvmlEventSetWait_v2") {
            return Err(code);
        }
        let members = set
            .checked_sub(1)
            .and_then(|i| state.event_sets.get(i))
            .ok_or(rc::INVALID_ARGUMENT)?
            .clone();
        for index in members {
            let Kind::Gpu { cfg, .. } = &state.gpus[index].kind else {
                continue;
            };
            let next = state.delivered[index];
            if let Some(xid) = cfg.xids.get(next) {
                let event = b::nvmlEventData_t {
                    device: state.gpus[index] as *const Node as b::nvmlDevice_t,
                    eventType: XID_EVENT,
                    eventData: *xid,
                    gpuInstanceId: u32::MAX,
                    computeInstanceId: u32::MAX,
                };
                put(data, event)?;
                state.delivered[index] += 1;
                return Ok(());
            }
        }
        Err(rc::TIMEOUT)
    });
    if code == rc::TIMEOUT {
        std::thread::sleep(std::time::Duration::from_millis(u64::from(
            timeout_ms.min(1000),
        )));
    }
    code
}

/// `nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlEventSetFree(set: EventSet) -> c_int {
    with_state_mut(|state| {
        let members = set
            .checked_sub(1)
            .and_then(|i| state.event_sets.get_mut(i))
            .ok_or(rc::INVALID_ARGUMENT)?;
        members.clear();
        Ok(())
    })
}
