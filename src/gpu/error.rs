//! Errors of GPU detection that the operator must act on.

use nvml_wrapper::error::NvmlError;

/// NVML failed in a way that is not "no GPUs" and not a per-device problem.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// NVML refused access (NVML_ERROR_NO_PERMISSION).
    #[error(
        "NVML denied access to the GPUs (no permission): run the charm as root and check the \
         permissions of /dev/nvidiactl and /dev/nvidia*"
    )]
    NoPermission,
    /// The library was found but is not a usable NVML (a symbol is missing).
    #[error(
        "the NVIDIA management library is incomplete ({0}): reinstall the NVIDIA driver \
         packages so libnvidia-ml.so.1 matches the kernel module"
    )]
    BrokenLibrary(String),
    /// NVML initialisation failed for another reason.
    #[error("NVML initialisation failed: {0}; check the NVIDIA driver with `nvidia-smi`")]
    Init(NvmlError),
    /// The GPU count could not be read.
    #[error("NVML could not count the GPUs: {0}; check the NVIDIA driver with `nvidia-smi`")]
    DeviceCount(NvmlError),
    /// NVML did not answer in time (the health-check program's deadline): a GPU or the driver
    /// hangs.
    #[error(
        "NVML did not answer within {secs} s: a GPU or the driver hangs; check `nvidia-smi` \
         and the kernel log (`dmesg | grep NVRM`)"
    )]
    Timeout {
        /// The deadline, in seconds.
        secs: u64,
    },
    /// The thread that reads NVML could not be started.
    #[error("cannot start the NVML reader thread: {0}; the machine is out of threads or memory")]
    Thread(String),
}

impl GpuError {
    /// True when NVML said a GPU fell off the bus (`NVML_ERROR_GPU_IS_LOST`).
    pub fn gpu_lost(&self) -> bool {
        matches!(
            self,
            GpuError::Init(NvmlError::GpuLost) | GpuError::DeviceCount(NvmlError::GpuLost)
        )
    }

    /// What NVML said, without the advice: short enough for a drain reason per GPU.
    pub fn nvml_reason(&self) -> String {
        match self {
            GpuError::NoPermission => "no permission".to_string(),
            GpuError::BrokenLibrary(symbol) => format!("incomplete library: {symbol}"),
            GpuError::Init(e) | GpuError::DeviceCount(e) => e.to_string(),
            GpuError::Timeout { secs } => format!("no answer within {secs} s"),
            GpuError::Thread(e) => format!("no reader thread: {e}"),
        }
    }
}
