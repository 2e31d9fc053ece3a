//! Reading the GPUs from NVML.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError};
use nvml_wrapper::error::{NvmlError, nvml_sym, nvml_try};
use nvml_wrapper::{Device, Nvml};

use super::cores::{cpus_to_cores, mask_to_cpus};
use super::error::GpuError;
use super::finding::Finding;
use super::health::{DeviceHealth, Fault};
use super::host::{count_nvidia_pci, mig_minors};
use super::links::{links_row, normalize_bus_id};
use super::model::{Gpu, Inventory, MigInstance};
use super::naming::{mig_profile, mig_type, slurm_type};
use super::sanity::{drop_shared_minors, implausible_mig};
use crate::slurm::types::{CoreList, DevicePath, GresType, MultipleFiles, VocabError};

/// Highest NVLink index NVML knows (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;
/// 64-bit words asked for in `nvmlDeviceGetCpuAffinity` (4096 CPUs).
const AFFINITY_WORDS: usize = 64;

/// Where to find NVML and the host files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetectOptions {
    /// Explicit NVML library path; `None` = `libnvidia-ml.so.1` through the dlopen search
    /// (`LD_LIBRARY_PATH`, ld.so.cache, …).
    pub nvml_lib: Option<PathBuf>,
    /// Root of the host files: `<root>/sys/bus/pci/devices`, `<root>/sys/devices/system/cpu`,
    /// `<root>/proc/driver/nvidia-caps/mig-minors`. `/` in production.
    pub host_root: PathBuf,
}

impl Default for DetectOptions {
    fn default() -> Self {
        Self::from_host_root("/")
    }
}

impl DetectOptions {
    /// Default library search, host files under `root`.
    pub fn from_host_root(root: impl Into<PathBuf>) -> Self {
        DetectOptions {
            nvml_lib: None,
            host_root: root.into(),
        }
    }
}

/// Detects the GPUs. "No driver" (library missing, driver not loaded) and "reboot required" are
/// successful results with zero GPUs and a [`Finding`]; a device that fails mid-enumeration is
/// skipped with a finding. Only NVML-wide failures (no permission, broken library, …) are errors.
pub fn detect(opts: &DetectOptions) -> Result<Inventory, GpuError> {
    let mut builder = Nvml::builder();
    if let Some(path) = &opts.nvml_lib {
        builder.lib_path(path.as_os_str());
    }
    let nvml = match builder.init() {
        Ok(nvml) => nvml,
        Err(
            NvmlError::LibloadingError(_) | NvmlError::DriverNotLoaded | NvmlError::LibraryNotFound,
        ) => return Ok(no_driver(&opts.host_root)),
        Err(NvmlError::LibRmVersionMismatch) => {
            return Ok(Inventory {
                findings: vec![Finding::RebootRequired],
                ..Inventory::default()
            });
        }
        Err(NvmlError::NoPermission) => return Err(GpuError::NoPermission),
        Err(NvmlError::FailedToLoadSymbol(s)) => return Err(GpuError::BrokenLibrary(s)),
        Err(e) => return Err(GpuError::Init(e)),
    };
    let library = loaded_nvml();
    let inventory = read_all(&nvml, &opts.host_root).map(|mut inv| {
        inv.nvml_library = library;
        inv
    });
    // Errors from nvmlShutdown change nothing we report; dropping would also call it.
    let _ = nvml.shutdown();
    inventory
}

/// The NVML library this process has loaded (`/proc/self/maps`), if any: its directory's
/// `libnvidia-ml.so.1` when there is one, else the file itself.
fn loaded_nvml() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.find('/').map(|i| &l[i..]))
        .find(|p| {
            Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libnvidia-ml.so"))
        })
        .map(|p| {
            // the soname link survives a driver upgrade; the versioned file it names does not
            let link = Path::new(p).with_file_name("libnvidia-ml.so.1");
            if link.exists() {
                link
            } else {
                PathBuf::from(p)
            }
        })
}

/// Zero GPUs, plus `DriverNotLoaded` when sysfs shows NVIDIA GPUs.
fn no_driver(root: &Path) -> Inventory {
    let present = count_nvidia_pci(root);
    let findings = if present > 0 {
        vec![Finding::DriverNotLoaded { present }]
    } else {
        Vec::new()
    };
    Inventory {
        findings,
        ..Inventory::default()
    }
}

fn read_all(nvml: &Nvml, root: &Path) -> Result<Inventory, GpuError> {
    let count = match nvml.device_count() {
        Ok(n) => n,
        Err(NvmlError::NoPermission) => return Err(GpuError::NoPermission),
        Err(e) => return Err(GpuError::DeviceCount(e)),
    };
    let minors = mig_minors(root);
    let mut inv = Inventory {
        driver_version: nvml.sys_driver_version().ok(),
        cuda_version: nvml
            .sys_cuda_driver_version()
            .ok()
            .map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
        ..Inventory::default()
    };
    for index in 0..count {
        let lost = match read_gpu(nvml, index, root, &minors, &mut inv.findings) {
            Ok(gpu) => {
                inv.gpus.push(gpu);
                false
            }
            Err(skip) => {
                inv.findings
                    .push(skip.finding.unwrap_or(Finding::DeviceSkipped {
                        index,
                        reason: skip.reason,
                    }));
                skip.lost
            }
        };
        inv.health.push(probe_health(nvml, index, lost));
    }
    drop_shared_minors(&mut inv.gpus, &mut inv.findings);
    fill_links(&mut inv.gpus);
    Ok(inv)
}

/// Sets `links` on every GPU not in MIG mode, as Slurm's own NVML plugin does on every version
/// (`_nvml_get_nvlink_info`, proven by `tests/gpu_slurm_oracle.rs`): one entry per GPU of the
/// node, MIG-mode GPUs included, in PCI bus id order; `-1` for itself, the number of its active
/// NVLinks to each peer, `0` where there are none or NVLink state cannot be read. GPUs in MIG
/// mode get none: their MIG records carry no Links (Slurm 24.11+).
fn fill_links(gpus: &mut [Gpu]) {
    let mut bus_ids: Vec<String> = gpus
        .iter()
        .map(|g| normalize_bus_id(&g.pci_bus_id))
        .collect();
    bus_ids.sort();
    for gpu in gpus.iter_mut().filter(|g| g.mig.is_none()) {
        let me = normalize_bus_id(&gpu.pci_bus_id);
        if let Some(pos) = bus_ids.iter().position(|b| *b == me) {
            gpu.links = Some(links_row(&bus_ids, pos, &gpu.nvlink_remotes));
        }
    }
}

/// Why a GPU is left out of the inventory, and whether NVML said the GPU is lost.
struct Skip {
    reason: String,
    lost: bool,
    /// The finding to report instead of [`Finding::DeviceSkipped`].
    finding: Option<Finding>,
}

fn what(call: &str, e: NvmlError) -> Skip {
    Skip {
        lost: matches!(e, NvmlError::GpuLost),
        reason: format!("cannot read {call}: {e}"),
        finding: None,
    }
}

/// [`what`] as text, for MIG instances (their faults are not GPU health).
fn why(call: &str, e: NvmlError) -> String {
    what(call, e).reason
}

/// The health of NVML index `index` (`lost`: reading its inventory already met GPU_IS_LOST).
/// Counters NVML does not support on a GPU (no ECC, no row remapping) are not faults.
fn probe_health(nvml: &Nvml, index: u32, lost: bool) -> DeviceHealth {
    let mut health = DeviceHealth {
        index,
        pci_bus_id: None,
        uuid: None,
        serial: None,
        faults: Vec::new(),
    };
    let mut lost = lost;
    match nvml.device_by_index(index) {
        Ok(dev) => {
            let mut note = |e: &NvmlError| lost |= matches!(e, NvmlError::GpuLost);
            match dev.pci_info() {
                Ok(p) => health.pci_bus_id = Some(p.bus_id),
                Err(e) => note(&e),
            }
            match dev.uuid() {
                Ok(u) => health.uuid = Some(u),
                Err(e) => note(&e),
            }
            match dev.serial() {
                Ok(s) if !s.trim().is_empty() => health.serial = Some(s.trim().to_owned()),
                Ok(_) => {}
                Err(e) => note(&e),
            }
            match dev.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile) {
                Ok(count) if count > 0 => health.faults.push(Fault::UncorrectableEcc { count }),
                Ok(_) => {}
                Err(e) => note(&e),
            }
            match dev.are_pages_pending_retired() {
                Ok(true) => health.faults.push(Fault::RetiredPagesPending),
                Ok(false) => {}
                Err(e) => note(&e),
            }
            match row_remap_failed(nvml, &dev) {
                Ok(true) => health.faults.push(Fault::RowRemapFailure),
                Ok(false) => {}
                Err(e) => note(&e),
            }
        }
        Err(NvmlError::GpuLost) => lost = true,
        Err(e) => health.faults.push(Fault::CannotOpen {
            reason: e.to_string(),
        }),
    }
    if lost {
        health.faults.insert(0, Fault::Lost);
    }
    health
}

/// `failureOccurred` of `nvmlDeviceGetRemappedRows`, which nvml-wrapper 0.13 does not wrap.
fn row_remap_failed(nvml: &Nvml, dev: &Device<'_>) -> Result<bool, NvmlError> {
    let sym = nvml_sym(nvml.lib().nvmlDeviceGetRemappedRows.as_ref())?;
    let (mut corr, mut unc, mut pending, mut failure) = (0, 0, 0, 0);
    // SAFETY: `dev` is a live handle of this `nvml` (it borrows it); the four out-pointers
    // point to local `c_uint`s, as the NVML signature requires.
    unsafe {
        nvml_try(sym(
            dev.handle(),
            &mut corr,
            &mut unc,
            &mut pending,
            &mut failure,
        ))?;
    }
    Ok(failure != 0)
}

/// Reads one GPU; `Err` is the reason it is skipped.
fn read_gpu(
    nvml: &Nvml,
    index: u32,
    root: &Path,
    minors: &HashMap<String, u32>,
    findings: &mut Vec<Finding>,
) -> Result<Gpu, Skip> {
    let dev = nvml
        .device_by_index(index)
        .map_err(|e| what("the device handle", e))?;
    let name = dev.name().map_err(|e| what("the name", e))?;
    let minor = dev
        .minor_number()
        .map_err(|e| what("the minor number", e))?;
    let uuid = dev.uuid().map_err(|e| what("the UUID", e))?;
    let pci_bus_id = dev.pci_info().map_err(|e| what("the PCI info", e))?.bus_id;
    let memory_total_bytes = dev.memory_info().ok().map(|m| m.total);
    let cores = dev
        .cpu_affinity(AFFINITY_WORDS)
        .ok()
        .map(|words| mask_to_cpus(&words))
        .filter(|cpus| !cpus.is_empty())
        .and_then(|cpus| CoreList::from_ids(&cpus_to_cores(root, &cpus)));
    let nvlink_remotes = read_nvlinks(&dev);
    let mig = match dev.mig_mode() {
        Ok(mode) if mode.current == 1 => {
            let parent = MigParent {
                name: &name,
                minor,
                pci_bus_id: &pci_bus_id,
                memory_total_bytes,
            };
            let list = read_mig(nvml, &dev, &parent, minors, findings);
            if list.is_empty() {
                findings.push(Finding::MigWithoutInstances { index, minor });
            }
            Some(list)
        }
        Ok(_) | Err(NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)) => None,
        Err(e) => return Err(what("the MIG mode", e)),
    };
    let gres_type = GresType::try_from(slurm_type(&name)).map_err(|e| Skip {
        reason: e.to_string(),
        lost: false,
        finding: Some(Finding::UnusableName {
            index,
            pci_bus_id: pci_bus_id.clone(),
            name: format!("{name:?}"),
            reason: e.reason,
        }),
    })?;
    let gpu = Gpu {
        index,
        slurm_type: gres_type,
        name,
        minor,
        uuid,
        pci_bus_id,
        memory_total_bytes,
        cores,
        links: None,
        nvlink_remotes,
        mig,
    };
    Ok(gpu)
}

/// Remote PCI bus ids of the active NVLinks (none when NVLink state cannot be read).
fn read_nvlinks(dev: &Device<'_>) -> Vec<String> {
    let mut remotes = Vec::new();
    for link in 0..MAX_NVLINKS {
        let wrapper = dev.link_wrapper_for(link);
        if let Ok(true) = wrapper.is_active()
            && let Ok(pci) = wrapper.remote_pci_info()
        {
            remotes.push(pci.bus_id);
        }
    }
    remotes
}

/// The GPU a MIG instance belongs to, as far as its instances need it.
struct MigParent<'a> {
    name: &'a str,
    minor: u32,
    pci_bus_id: &'a str,
    memory_total_bytes: Option<u64>,
}

/// The MIG instances of a GPU in MIG mode, skipping empty slots (NOT_FOUND).
fn read_mig(
    nvml: &Nvml,
    dev: &Device<'_>,
    parent: &MigParent<'_>,
    minors: &HashMap<String, u32>,
    findings: &mut Vec<Finding>,
) -> Vec<MigInstance> {
    let minor = parent.minor;
    let max = match dev.mig_device_count() {
        Ok(n) => n,
        Err(e) => {
            findings.push(Finding::MigInstanceSkipped {
                minor,
                slot: 0,
                reason: why("the MIG device count", e),
            });
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for slot in 0..max {
        let mig = match dev.mig_device_by_index(slot) {
            Ok(m) => m,
            Err(NvmlError::NotFound) => continue,
            Err(e) => {
                findings.push(Finding::MigInstanceSkipped {
                    minor,
                    slot,
                    reason: why("the MIG device handle", e),
                });
                continue;
            }
        };
        match read_mig_instance(nvml, &mig, parent, minors) {
            Ok(inst) => out.push(inst),
            Err(MigSkip::Implausible(reason)) => findings.push(Finding::ImplausibleMig {
                pci_bus_id: parent.pci_bus_id.to_owned(),
                minor,
                slot,
                reason,
            }),
            Err(skip) => findings.push(Finding::MigInstanceSkipped {
                minor,
                slot,
                reason: skip.to_string(),
            }),
        }
    }
    out
}

/// Why a MIG instance is left out (the text becomes the finding's reason).
#[derive(Debug, thiserror::Error)]
enum MigSkip {
    /// NVML could not read it (or the nvidia-caps minors are missing).
    #[error("{0}")]
    Unreadable(String),
    /// NVML's attributes of it cannot be true ([`implausible_mig`]).
    #[error("{0}")]
    Implausible(String),
    /// Its profile makes no type Slurm accepts.
    #[error("no usable Slurm type: {0}")]
    NoSlurmType(#[source] VocabError),
    /// Its device files are not ones Slurm accepts.
    #[error("{0}")]
    DeviceFiles(#[source] VocabError),
}

impl From<String> for MigSkip {
    fn from(reason: String) -> Self {
        MigSkip::Unreadable(reason)
    }
}

fn read_mig_instance(
    nvml: &Nvml,
    mig: &Device<'_>,
    parent: &MigParent<'_>,
    minors: &HashMap<String, u32>,
) -> Result<MigInstance, MigSkip> {
    let (parent_name, minor) = (parent.name, parent.minor);
    let uuid = mig.uuid().map_err(|e| why("the MIG UUID", e))?;
    let attrs = mig.attributes().map_err(|e| why("the MIG attributes", e))?;
    if let Some(reason) = implausible_mig(
        attrs.gpu_instance_slice_count,
        attrs.compute_instance_slice_count,
        attrs.memory_size_mb,
        parent.memory_total_bytes,
    ) {
        return Err(MigSkip::Implausible(reason));
    }
    let (gi, ci) = instance_ids(nvml, mig).map_err(|e| why("the MIG instance ids", e))?;
    // Slurm takes the profile from the name when it can, and falls back to the attributes.
    let profile = mig_profile(
        mig.name().ok().as_deref(),
        attrs.gpu_instance_slice_count,
        attrs.compute_instance_slice_count,
        attrs.memory_size_mb,
    );
    let gi_key = format!("gpu{minor}/gi{gi}/access");
    let ci_key = format!("gpu{minor}/gi{gi}/ci{ci}/access");
    let (Some(gi_minor), Some(ci_minor)) = (minors.get(&gi_key), minors.get(&ci_key)) else {
        return Err(MigSkip::Unreadable(format!(
            "no {gi_key} / {ci_key} in /proc/driver/nvidia-caps/mig-minors \
             (is the nvidia-caps module loaded?)"
        )));
    };
    let slurm_type =
        GresType::try_from(mig_type(parent_name, &profile)).map_err(MigSkip::NoSlurmType)?;
    let files = MultipleFiles::new(vec![
        DevicePath::nvidia(minor),
        DevicePath::try_from(format!("/dev/nvidia-caps/nvidia-cap{gi_minor}"))
            .map_err(MigSkip::DeviceFiles)?,
        DevicePath::try_from(format!("/dev/nvidia-caps/nvidia-cap{ci_minor}"))
            .map_err(MigSkip::DeviceFiles)?,
    ])
    .map_err(MigSkip::DeviceFiles)?;
    Ok(MigInstance {
        uuid,
        gpu_instance_id: gi,
        compute_instance_id: ci,
        slices: attrs.gpu_instance_slice_count,
        memory_mb: attrs.memory_size_mb,
        profile,
        slurm_type,
        files,
    })
}

/// GPU and compute instance ids of a MIG handle (`nvmlDeviceGetGpuInstanceId`,
/// `nvmlDeviceGetComputeInstanceId`), which nvml-wrapper 0.13 does not wrap.
fn instance_ids(nvml: &Nvml, mig: &Device<'_>) -> Result<(u32, u32), NvmlError> {
    let lib = nvml.lib();
    let gi_fn = nvml_sym(lib.nvmlDeviceGetGpuInstanceId.as_ref())?;
    let ci_fn = nvml_sym(lib.nvmlDeviceGetComputeInstanceId.as_ref())?;
    let mut gi = 0;
    let mut ci = 0;
    // SAFETY: `mig` is a live handle of this `nvml` (it borrows it), and both out-pointers point
    // to local `c_uint`s, as the NVML signatures require.
    unsafe {
        nvml_try(gi_fn(mig.handle(), &mut gi))?;
        nvml_try(ci_fn(mig.handle(), &mut ci))?;
    }
    Ok((gi, ci))
}
