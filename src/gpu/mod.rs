//! NVIDIA GPU inventory from NVML, described the way Slurm describes GPUs.
//!
//! [`detect`] opens NVML (`libnvidia-ml.so.1`, or an injected path for tests), reads every GPU
//! (name, minor number, UUID, PCI bus id, memory, CPU affinity, NVLinks, MIG instances) and returns
//! an [`Inventory`]. [`Inventory::gres`] turns it into [`crate::slurm::GresLine`]s (gres.conf
//! records, the one GRES record type) and [`Inventory::gres_specs`] into slurm.conf `Gres=` items
//! ([`crate::slurm::GresSpec`]); NVML names become [`crate::slurm::types::GresType`] here, once; [`action_results`] builds the
//! `detect-gpus` action result map.
//!
//! Rules follow Slurm 22.05's NVML AutoDetect (`src/plugins/gpu/nvml/gpu_nvml.c`):
//! type = NVML name, ASCII-lowercased, each space → `_`; device file from the minor number;
//! `Cores=` from the CPU affinity; `Links=` from active NVLinks to other GPUs; MIG instances as
//! `MultipleFiles=` records with `<parent cut at first '-'>_<g>g.<mem>gb` types.
//!
//! Decisions where Slurm leaves room (each also documented on the item):
//! - **Cores**: the affinity mask's CPUs are mapped to Slurm core ids through
//!   `<root>/sys/devices/system/cpu/cpu*/topology` (cores numbered in (socket, core id) order, so
//!   hyperthread siblings share an id); without a readable topology the CPU ids are used as they
//!   are (right for `ThreadsPerCore=1`).
//! - **Links**: a GPU's NVLinks count only towards peers whose PCI bus id is the link's remote
//!   end, exactly like Slurm's NVML plugin; links to an NVSwitch count for nobody, so on an
//!   8-GPU NVSwitch board every row is `-1` plus zeros. Positions follow PCI bus id order (NVML's
//!   default index order). When any GPU of the node is in MIG mode no Links are emitted.
//! - **Grouping**: within a type, consecutive devices (PCI order) with equal Cores and no Links
//!   share one `File=` range record; otherwise one record per device.
//! - **Errors**: library missing / driver not loaded → zero GPUs (+ [`Finding::DriverNotLoaded`]
//!   when sysfs shows NVIDIA GPUs); RM version mismatch → zero GPUs + [`Finding::RebootRequired`];
//!   no permission, a library that is not NVML, other init or count failures → [`GpuError`]; a
//!   device or MIG instance that cannot be read → skipped with a finding.

mod action;
mod cores;
mod detect;
mod error;
mod finding;
mod gres;
mod host;
mod links;
mod model;
mod naming;

pub use action::action_results;
pub use detect::{DetectOptions, detect};
pub use error::GpuError;
pub use finding::Finding;
pub use model::{Gpu, Inventory, MigInstance};
pub use naming::{mig_profile, mig_type, slurm_type};
