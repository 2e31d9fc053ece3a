//! Non-fatal observations of GPU detection, each with an operator message.

use std::fmt;

/// Something the operator should know about; detection still returned an inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// NVIDIA display/3D PCI devices exist but NVML is unusable (library missing or driver not
    /// loaded). The charm should set a blocked status.
    DriverNotLoaded {
        /// NVIDIA GPUs seen in sysfs.
        present: usize,
    },
    /// NVML's library and the kernel module differ in version (NVML_ERROR_LIB_RM_VERSION_MISMATCH).
    RebootRequired,
    /// A GPU could not be read; it is left out of the inventory.
    DeviceSkipped {
        /// NVML index of the GPU.
        index: u32,
        /// What failed.
        reason: String,
    },
    /// A GPU is in MIG mode but has no MIG instances; it gets no GRES.
    MigWithoutInstances {
        /// NVML index of the GPU.
        index: u32,
        /// Minor number (`/dev/nvidia<minor>`).
        minor: u32,
    },
    /// One MIG instance could not be read or has no nvidia-caps devices; it is left out.
    MigInstanceSkipped {
        /// Minor number of the parent GPU.
        minor: u32,
        /// MIG device index on the parent.
        slot: u32,
        /// What failed.
        reason: String,
    },
    /// Two or more GPUs report one minor number, so one `/dev/nvidia<minor>` would stand for
    /// several GPUs; all of them are left out (`src/gpu/sanity.rs`).
    SharedMinor {
        /// The minor number they share.
        minor: u32,
        /// The PCI bus ids of the GPUs reporting it.
        pci_bus_ids: Vec<String>,
    },
    /// A GPU's NVML name gives no Slurm GRES type (empty, only spaces, only digits, a `:`…);
    /// the GPU is left out.
    UnusableName {
        /// NVML index of the GPU.
        index: u32,
        /// Its PCI bus id.
        pci_bus_id: String,
        /// The NVML name, quoted, escaped onto one line and abbreviated.
        name: String,
        /// Why the type derived from it is refused.
        reason: String,
    },
    /// NVML reports impossible attributes for a MIG instance (slices, memory); it is left out
    /// (`src/gpu/sanity.rs`).
    ImplausibleMig {
        /// PCI bus id of the parent GPU.
        pci_bus_id: String,
        /// Minor number of the parent GPU.
        minor: u32,
        /// MIG device index on the parent.
        slot: u32,
        /// What is impossible.
        reason: String,
    },
}

impl Finding {
    /// True for findings the charm should turn into a blocked status (GPUs unusable).
    pub fn is_blocking(&self) -> bool {
        matches!(
            self,
            Finding::DriverNotLoaded { .. }
                | Finding::RebootRequired
                | Finding::SharedMinor { .. }
                | Finding::UnusableName { .. }
                | Finding::ImplausibleMig { .. }
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::DriverNotLoaded { present: 1 } => {
                write!(f, "1 NVIDIA GPU present but the driver is not loaded")
            }
            Finding::DriverNotLoaded { present } => {
                write!(
                    f,
                    "{present} NVIDIA GPUs present but the driver is not loaded"
                )
            }
            Finding::RebootRequired => write!(
                f,
                "NVIDIA driver library and kernel module versions differ: reboot required"
            ),
            Finding::DeviceSkipped { index, reason } => {
                write!(f, "GPU {index} skipped: {reason}")
            }
            Finding::MigWithoutInstances { index, minor } => write!(
                f,
                "GPU {index} (/dev/nvidia{minor}) is in MIG mode but has no MIG instances; \
                 create instances with nvidia-smi mig or disable MIG"
            ),
            Finding::MigInstanceSkipped {
                minor,
                slot,
                reason,
            } => write!(
                f,
                "MIG device {slot} of /dev/nvidia{minor} skipped: {reason}"
            ),
            Finding::SharedMinor { minor, pci_bus_ids } => write!(
                f,
                "GPUs {} all report minor number {minor} (/dev/nvidia{minor}): none of them is \
                 given to Slurm; check the driver (nvidia-smi -q) and reboot",
                pci_bus_ids.join(", ")
            ),
            Finding::UnusableName {
                index,
                pci_bus_id,
                name,
                reason,
            } => write!(
                f,
                "GPU {index} ({pci_bus_id}) is not given to Slurm: its NVML name {name} gives no \
                 GRES type ({reason})"
            ),
            Finding::ImplausibleMig {
                pci_bus_id,
                minor,
                slot,
                reason,
            } => write!(
                f,
                "MIG device {slot} of GPU {pci_bus_id} (/dev/nvidia{minor}) is not given to \
                 Slurm: {reason}"
            ),
        }
    }
}
