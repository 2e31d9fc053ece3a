//! Clock and process-accounting functions. The charm never calls them, but Slurm's own NVML
//! plugin (`gpu_nvml.so`, used as the judge in `tests/gpu_slurm_oracle.rs`) does: 22.05 and
//! 24.11 list and read the application clocks while detecting GPUs, 26.05 reads the current
//! clocks and sets locked clocks, and 24.11+ read running processes for job accounting.
//! Every GPU reports the same fixed clock tables ([`MEMORY_MHZ`], [`GRAPHICS_MHZ`]); setting
//! and resetting clocks succeeds and changes nothing; no process ever runs.

use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

use crate::exports::Handle;
use crate::rc;
use crate::state::{Kind, Node, with_node};

/// Supported memory clocks (MHz), highest first, as `nvmlDeviceGetSupportedMemoryClocks` lists.
pub const MEMORY_MHZ: [c_uint; 1] = [1215];
/// Supported graphics clocks (MHz) for every memory clock, highest first.
pub const GRAPHICS_MHZ: [c_uint; 5] = [1410, 1200, 900, 600, 210];

/// `nvmlClockType_t` values.
const CLOCK_GRAPHICS: c_uint = 0;
const CLOCK_SM: c_uint = 1;
const CLOCK_MEM: c_uint = 2;
const CLOCK_VIDEO: c_uint = 3;

fn whole_gpu(node: &Node) -> Result<(), c_int> {
    match node.kind {
        Kind::Gpu { .. } => Ok(()),
        Kind::Mig { .. } => Err(rc::NOT_SUPPORTED),
    }
}

/// Copies `table` into the caller's array of `*count` entries (NVML's size protocol: too small
/// → INSUFFICIENT_SIZE with `*count` set to the size needed; a null array only asks the size).
fn put_table(table: &[c_uint], count: *mut c_uint, out: *mut c_uint) -> Result<(), c_int> {
    if count.is_null() {
        return Err(rc::INVALID_ARGUMENT);
    }
    // SAFETY: non-null pointer to the caller's count (NVML contract).
    let room = unsafe { count.read() } as usize;
    // SAFETY: as above.
    unsafe { count.write(table.len() as c_uint) };
    if out.is_null() || room < table.len() {
        return Err(rc::INSUFFICIENT_SIZE);
    }
    // SAFETY: the caller's array holds `room >= table.len()` entries.
    unsafe { std::ptr::copy_nonoverlapping(table.as_ptr(), out, table.len()) };
    Ok(())
}

fn clock_of(kind: c_uint) -> Result<c_uint, c_int> {
    match kind {
        CLOCK_GRAPHICS | CLOCK_SM | CLOCK_VIDEO => Ok(GRAPHICS_MHZ[0]),
        CLOCK_MEM => Ok(MEMORY_MHZ[0]),
        _ => Err(rc::INVALID_ARGUMENT),
    }
}

fn write_clock(out: *mut c_uint, value: c_uint) -> Result<(), c_int> {
    if out.is_null() {
        return Err(rc::INVALID_ARGUMENT);
    }
    // SAFETY: non-null pointer to the caller's value (NVML contract).
    unsafe { out.write(value) };
    Ok(())
}

/// `nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t, unsigned int *count, unsigned int *clocksMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedMemoryClocks(
    device: Handle,
    count: *mut c_uint,
    clocks: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetSupportedMemoryClocks", device, |_, node| {
        whole_gpu(node)?;
        put_table(&MEMORY_MHZ, count, clocks)
    })
}

/// `nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t, unsigned int memoryClockMHz, unsigned int *count, unsigned int *clocksMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetSupportedGraphicsClocks(
    device: Handle,
    memory_mhz: c_uint,
    count: *mut c_uint,
    clocks: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetSupportedGraphicsClocks", device, |_, node| {
        whole_gpu(node)?;
        if !MEMORY_MHZ.contains(&memory_mhz) {
            return Err(rc::NOT_FOUND);
        }
        put_table(&GRAPHICS_MHZ, count, clocks)
    })
}

/// `nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t, nvmlClockType_t, unsigned int *clockMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetApplicationsClock(
    device: Handle,
    kind: c_uint,
    mhz: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetApplicationsClock", device, |_, node| {
        whole_gpu(node)?;
        write_clock(mhz, clock_of(kind)?)
    })
}

/// `nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t, nvmlClockType_t, unsigned int *clock)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: Handle,
    kind: c_uint,
    mhz: *mut c_uint,
) -> c_int {
    with_node("nvmlDeviceGetClockInfo", device, |_, node| {
        whole_gpu(node)?;
        write_clock(mhz, clock_of(kind)?)
    })
}

/// `nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t, unsigned int memClockMHz, unsigned int graphicsClockMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceSetApplicationsClocks(
    device: Handle,
    _memory_mhz: c_uint,
    _graphics_mhz: c_uint,
) -> c_int {
    with_node("nvmlDeviceSetApplicationsClocks", device, |_, node| {
        whole_gpu(node)
    })
}

/// `nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceResetApplicationsClocks(device: Handle) -> c_int {
    with_node("nvmlDeviceResetApplicationsClocks", device, |_, node| {
        whole_gpu(node)
    })
}

/// `nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceSetGpuLockedClocks(
    device: Handle,
    _min_mhz: c_uint,
    _max_mhz: c_uint,
) -> c_int {
    with_node("nvmlDeviceSetGpuLockedClocks", device, |_, node| {
        whole_gpu(node)
    })
}

/// `nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceResetGpuLockedClocks(device: Handle) -> c_int {
    with_node("nvmlDeviceResetGpuLockedClocks", device, |_, node| {
        whole_gpu(node)
    })
}

/// `nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t, unsigned int minMemClockMHz, unsigned int maxMemClockMHz)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceSetMemoryLockedClocks(
    device: Handle,
    _min_mhz: c_uint,
    _max_mhz: c_uint,
) -> c_int {
    with_node("nvmlDeviceSetMemoryLockedClocks", device, |_, node| {
        whole_gpu(node)
    })
}

/// `nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t)`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceResetMemoryLockedClocks(device: Handle) -> c_int {
    with_node("nvmlDeviceResetMemoryLockedClocks", device, |_, node| {
        whole_gpu(node)
    })
}

fn no_processes(count: *mut c_uint) -> Result<(), c_int> {
    if count.is_null() {
        return Err(rc::INVALID_ARGUMENT);
    }
    // SAFETY: non-null pointer to the caller's count (NVML contract).
    unsafe { count.write(0) };
    Ok(())
}

/// `nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t, unsigned int *infoCount, nvmlProcessInfo_t *infos)`:
/// no process runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetComputeRunningProcesses_v3(
    device: Handle,
    count: *mut c_uint,
    _infos: *mut c_void,
) -> c_int {
    with_node("nvmlDeviceGetComputeRunningProcesses_v3", device, |_, _| {
        no_processes(count)
    })
}

/// `nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t, unsigned int *infoCount, nvmlProcessInfo_t *infos)`:
/// no process runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetGraphicsRunningProcesses_v3(
    device: Handle,
    count: *mut c_uint,
    _infos: *mut c_void,
) -> c_int {
    with_node(
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        device,
        |_, _| no_processes(count),
    )
}

/// `nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t, nvmlProcessUtilizationSample_t *utilization, unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp)`:
/// no samples.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetProcessUtilization(
    device: Handle,
    _samples: *mut c_void,
    count: *mut c_uint,
    _last_seen: c_ulonglong,
) -> c_int {
    with_node("nvmlDeviceGetProcessUtilization", device, |_, _| {
        no_processes(count)
    })
}
