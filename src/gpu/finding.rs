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
}

impl Finding {
    /// True for findings the charm should turn into a blocked status (GPUs unusable).
    pub fn is_blocking(&self) -> bool {
        matches!(
            self,
            Finding::DriverNotLoaded { .. } | Finding::RebootRequired
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
        }
    }
}
