//! The detected GPUs.

use serde::Serialize;

use super::finding::Finding;
use super::health::DeviceHealth;
use crate::slurm::types::{CoreList, GresType, MultipleFiles};

/// What [`super::detect`] found on this machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    /// GPUs in NVML index order (skipped devices are absent; see `findings`).
    pub gpus: Vec<Gpu>,
    /// NVIDIA driver version (e.g. `550.54.15`), when NVML was usable.
    pub driver_version: Option<String>,
    /// CUDA version the driver supports (e.g. `12.4`), when NVML was usable.
    pub cuda_version: Option<String>,
    /// Problems the operator should see (driver not loaded, skipped devices, …).
    pub findings: Vec<Finding>,
    /// The health check of every NVML index (skipped devices included), read in the same
    /// NVML session; judged against the remembered GPUs by [`super::assess`].
    pub health: Vec<DeviceHealth>,
    /// The NVML library file that was loaded (from `/proc/self/maps`), so the health-check
    /// program loads the very same one; `None` when none was loaded or it cannot be told.
    pub nvml_library: Option<std::path::PathBuf>,
}

/// One physical GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// NVML index.
    pub index: u32,
    /// NVML name, e.g. `NVIDIA A100-SXM4-80GB`.
    pub name: String,
    /// Slurm type, e.g. `nvidia_a100-sxm4-80gb`.
    pub slurm_type: GresType,
    /// Minor number: the device file is `/dev/nvidia<minor>`.
    pub minor: u32,
    /// `GPU-…` UUID.
    pub uuid: String,
    /// PCI bus id as NVML reports it (`00000000:3B:00.0`).
    pub pci_bus_id: String,
    /// Total memory in bytes; `None` when NVML could not say.
    pub memory_total_bytes: Option<u64>,
    /// Slurm abstract core ids close to this GPU (gres.conf `Cores=`); `None` when affinity is
    /// unsupported or names no core.
    pub cores: Option<CoreList>,
    /// Slurm `Links=` entries, one per GPU in PCI bus id order (`-1` self, `0` none, `n` links);
    /// `None` when NVLink is unsupported (or any GPU of the node is in MIG mode).
    pub links: Option<Vec<i32>>,
    /// Remote PCI bus ids of active NVLinks (GPU peers or NVSwitches), one per active link.
    pub nvlink_remotes: Vec<String>,
    /// `None`: MIG off or unsupported. `Some(list)`: MIG mode on, with these instances.
    pub mig: Option<Vec<MigInstance>>,
}

impl Gpu {
    /// The device file, `/dev/nvidia<minor>`.
    pub fn device_file(&self) -> String {
        format!("/dev/nvidia{}", self.minor)
    }
}

/// One MIG device (a GPU instance with one compute instance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MigInstance {
    /// `MIG-…` UUID.
    pub uuid: String,
    /// GPU instance id.
    pub gpu_instance_id: u32,
    /// Compute instance id.
    pub compute_instance_id: u32,
    /// GPU instance slice count (the `g` of the profile).
    pub slices: u32,
    /// Instance memory in MiB.
    pub memory_mb: u64,
    /// Profile as Slurm (23.02+) names it, e.g. `1g.5gb` or `1c.3g.20gb` ([`super::mig_profile`]).
    pub profile: String,
    /// Slurm type, e.g. `nvidia_a100_1g.5gb`.
    pub slurm_type: GresType,
    /// `MultipleFiles=`: `/dev/nvidia<minor>` and the two nvidia-caps devices.
    pub files: MultipleFiles,
}
