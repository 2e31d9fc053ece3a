//! GPU health: what NVML says is wrong with each GPU, and the comparison with the GPUs seen by
//! the previous hook (a GPU that vanished from NVML is a fault too).
//!
//! [`super::detect`] fills [`super::Inventory::health`] with one [`DeviceHealth`] per NVML
//! index (read in the same NVML session as the inventory); [`assess`] turns that and the
//! remembered [`KnownGpu`]s into [`GpuProblem`]s, whose text is what the slurmd charm puts in
//! the drain reason and the blocked status (`gpu 3 (00000000:3B:00.0): uncorrectable ECC errors`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::GpuError;

/// One thing wrong with one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `NVML_ERROR_GPU_IS_LOST` from any call: the GPU fell off the bus.
    Lost,
    /// Uncorrectable (double-bit) ECC errors since the driver loaded (volatile counter).
    UncorrectableEcc {
        /// `nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)`.
        count: u64,
    },
    /// Pages wait to be retired: the GPU must be reset before it is trustworthy again.
    RetiredPagesPending,
    /// Row remapping failed (`nvmlDeviceGetRemappedRows` `failureOccurred`).
    RowRemapFailure,
    /// NVML lists the GPU but can no longer open it (`nvmlDeviceGetHandleByIndex` fails).
    CannotOpen {
        /// NVML's error.
        reason: String,
    },
    /// A GPU seen by an earlier hook is not listed by NVML any more.
    Disappeared,
    /// NVML as a whole fails (it cannot start or count the GPUs), so no GPU seen by an earlier
    /// hook can be checked or used.
    Unreadable {
        /// What NVML said.
        reason: String,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Lost => write!(f, "GPU is lost (fallen off the bus)"),
            Fault::UncorrectableEcc { .. } => write!(f, "uncorrectable ECC errors"),
            Fault::RetiredPagesPending => write!(f, "retired pages pending (GPU reset needed)"),
            Fault::RowRemapFailure => write!(f, "row remapping failed"),
            Fault::CannotOpen { reason } => write!(f, "NVML cannot open it ({reason})"),
            Fault::Disappeared => write!(f, "disappeared since the last check"),
            Fault::Unreadable { reason } => write!(f, "NVML cannot read it ({reason})"),
        }
    }
}

/// What the health check read for one NVML index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceHealth {
    /// NVML index.
    pub index: u32,
    /// PCI bus id (`00000000:3B:00.0`), when NVML could say.
    pub pci_bus_id: Option<String>,
    /// `GPU-…` UUID, when NVML could say.
    pub uuid: Option<String>,
    /// Every fault found (empty: healthy).
    pub faults: Vec<Fault>,
}

/// A GPU remembered from an earlier hook (unit state), to notice one that disappears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownGpu {
    /// NVML index when it was seen.
    pub index: u32,
    /// PCI bus id, the identity compared.
    pub pci_bus_id: String,
    /// UUID, for the operator.
    #[serde(default)]
    pub uuid: String,
}

/// One failing GPU and why; its [`Display`](fmt::Display) is the drain reason's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProblem {
    /// NVML index (the remembered one for a GPU that disappeared).
    pub index: u32,
    /// PCI bus id, when known.
    pub pci_bus_id: Option<String>,
    /// What is wrong.
    pub fault: Fault,
}

impl fmt::Display for GpuProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pci_bus_id {
            Some(bus) => write!(f, "gpu {} ({bus}): {}", self.index, self.fault),
            None => write!(f, "gpu {}: {}", self.index, self.fault),
        }
    }
}

/// The health of the node's GPUs after comparing with the remembered ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HealthReport {
    /// Failing GPUs, in NVML index order, disappeared ones last.
    pub problems: Vec<GpuProblem>,
    /// What to remember for the next hook: every GPU seen now or before (a GPU that
    /// disappeared stays remembered until it comes back or the operator forgets it).
    pub known: Vec<KnownGpu>,
}

impl HealthReport {
    /// True when no GPU is failing.
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }

    /// All problems as one line (`; `-separated), for a drain reason or a status.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        parts.join("; ")
    }
}

/// Compares what NVML said now (`now`) with the GPUs remembered (`known`). A remembered GPU
/// whose PCI bus id is not seen now is [`Fault::Disappeared`], unless an index that cannot be
/// opened (no bus id) is its remembered index: then it is that GPU, reported as such.
pub fn assess(now: &[DeviceHealth], known: &[KnownGpu]) -> HealthReport {
    let mut problems = Vec::new();
    for dev in now {
        let bus = dev.pci_bus_id.clone().or_else(|| {
            known
                .iter()
                .find(|k| k.index == dev.index)
                .map(|k| k.pci_bus_id.clone())
        });
        for fault in &dev.faults {
            problems.push(GpuProblem {
                index: dev.index,
                pci_bus_id: bus.clone(),
                fault: fault.clone(),
            });
        }
    }
    let seen = |k: &KnownGpu| {
        now.iter().any(|d| {
            d.pci_bus_id.as_deref() == Some(k.pci_bus_id.as_str())
                || (d.pci_bus_id.is_none() && d.index == k.index)
        })
    };
    let mut remembered: Vec<KnownGpu> = Vec::new();
    for k in known {
        if !seen(k) {
            problems.push(GpuProblem {
                index: k.index,
                pci_bus_id: Some(k.pci_bus_id.clone()),
                fault: Fault::Disappeared,
            });
        }
        remembered.push(k.clone());
    }
    for d in now {
        if let Some(bus) = &d.pci_bus_id {
            let entry = KnownGpu {
                index: d.index,
                pci_bus_id: bus.clone(),
                uuid: d.uuid.clone().unwrap_or_default(),
            };
            match remembered.iter_mut().find(|k| k.pci_bus_id == *bus) {
                Some(k) => *k = entry,
                None => remembered.push(entry),
            }
        }
    }
    remembered.sort_by(|a, b| a.pci_bus_id.cmp(&b.pci_bus_id));
    HealthReport {
        problems,
        known: remembered,
    }
}

/// The health when NVML fails as a whole (`error`: it cannot start or count the GPUs): every
/// remembered GPU is failing, lost when NVML said so, unreadable otherwise. With none
/// remembered there is nothing to report (a node that never had a GPU, or a first hook).
pub fn assess_unreadable(error: &GpuError, known: &[KnownGpu]) -> Option<HealthReport> {
    if known.is_empty() {
        return None;
    }
    let fault = if error.gpu_lost() {
        Fault::Lost
    } else {
        Fault::Unreadable {
            reason: error.nvml_reason(),
        }
    };
    let problems = known
        .iter()
        .map(|k| GpuProblem {
            index: k.index,
            pci_bus_id: Some(k.pci_bus_id.clone()),
            fault: fault.clone(),
        })
        .collect();
    Some(HealthReport {
        problems,
        known: known.to_vec(),
    })
}

/// Parses the remembered GPUs from unit state (JSON list); empty or absent is none.
pub fn parse_known(raw: Option<&str>) -> Result<Vec<KnownGpu>, serde_json::Error> {
    match raw.filter(|r| !r.trim().is_empty()) {
        None => Ok(Vec::new()),
        Some(r) => serde_json::from_str(r),
    }
}

/// Encodes the remembered GPUs for unit state (see [`parse_known`]).
pub fn encode_known(known: &[KnownGpu]) -> String {
    serde_json::to_string(known).unwrap_or_else(|_| "[]".to_string())
}
