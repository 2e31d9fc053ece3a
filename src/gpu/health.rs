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
    /// The driver logged an XID of the drain class ([`super::XidClass::Drain`]) on this GPU
    /// in this boot.
    Xid {
        /// The XID.
        xid: u32,
        /// NVIDIA's meaning of it ([`super::classify`]).
        meaning: &'static str,
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
            Fault::Xid { xid, meaning } => write!(f, "XID {xid} ({meaning})"),
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
    /// Board serial number (`nvmlDeviceGetSerial`), when NVML could say.
    pub serial: Option<String>,
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
    /// Board serial number, for the operator (empty: unknown).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial: String,
}

/// [`GpuProblem::index`] of a GPU only known by its PCI bus id (an XID on a GPU NVML does not
/// list and no hook remembers); shown as `gpu ?`.
pub const UNKNOWN_INDEX: u32 = u32::MAX;

/// One failing GPU and why; its [`Display`](fmt::Display) is the drain reason's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProblem {
    /// NVML index (the remembered one for a GPU that disappeared).
    pub index: u32,
    /// PCI bus id, when known.
    pub pci_bus_id: Option<String>,
    /// Board serial number, when known.
    pub serial: Option<String>,
    /// What is wrong.
    pub fault: Fault,
}

impl fmt::Display for GpuProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let index = if self.index == UNKNOWN_INDEX {
            "?".to_owned()
        } else {
            self.index.to_string()
        };
        match (&self.pci_bus_id, &self.serial) {
            (Some(bus), Some(serial)) => {
                write!(f, "gpu {index} ({bus}, serial {serial}): {}", self.fault)
            }
            (Some(bus), None) => write!(f, "gpu {index} ({bus}): {}", self.fault),
            (None, _) => write!(f, "gpu {index}: {}", self.fault),
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
                serial: dev.serial.clone(),
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
                serial: known_serial(k),
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
                serial: d.serial.clone().unwrap_or_default(),
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
            serial: known_serial(k),
            fault: fault.clone(),
        })
        .collect();
    Some(HealthReport {
        problems,
        known: known.to_vec(),
    })
}

fn known_serial(k: &KnownGpu) -> Option<String> {
    (!k.serial.is_empty()).then(|| k.serial.clone())
}

/// Adds the held XIDs of the drain class ([`super::XidClass::Drain`]) to `report`: one
/// problem per GPU and XID, after NVML's own, named by the GPU's index and serial as NVML
/// lists it now (`now`) or as remembered (`known`); an XID on a bus id neither knows is named
/// by its bus id, with index [`UNKNOWN_INDEX`] (the text says `gpu ?`). This is the one place
/// the hook and the health-check program turn XIDs into a verdict.
pub fn add_xids(
    report: &mut HealthReport,
    held: &[super::XidEvent],
    now: &[DeviceHealth],
    known: &[KnownGpu],
) {
    let mut seen: Vec<(&str, u32)> = Vec::new();
    for x in held {
        let (class, meaning) = x.class();
        if class != super::XidClass::Drain || seen.contains(&(x.pci_bus_id.as_str(), x.xid)) {
            continue;
        }
        seen.push((x.pci_bus_id.as_str(), x.xid));
        let dev = now
            .iter()
            .find(|d| d.pci_bus_id.as_deref() == Some(x.pci_bus_id.as_str()));
        let remembered = known.iter().find(|k| k.pci_bus_id == x.pci_bus_id);
        let index = dev
            .map(|d| d.index)
            .or(remembered.map(|k| k.index))
            .unwrap_or(UNKNOWN_INDEX);
        let serial = dev
            .and_then(|d| d.serial.clone())
            .or_else(|| remembered.and_then(known_serial));
        report.problems.push(GpuProblem {
            index,
            pci_bus_id: Some(x.pci_bus_id.clone()),
            serial,
            fault: Fault::Xid {
                xid: x.xid,
                meaning,
            },
        });
    }
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
