//! NVIDIA GPU inventory from NVML, described the way Slurm describes GPUs.
//!
//! [`detect`] opens NVML (`libnvidia-ml.so.1`, or an injected path for tests), reads every GPU
//! (name, minor number, UUID, PCI bus id, memory, CPU affinity, NVLinks, MIG instances) and returns
//! an [`Inventory`]. [`Inventory::gres`] turns it into [`GresRecord`]s (gres.conf lines) and
//! [`Inventory::gres_strings`] into slurm.conf `Gres=` items; [`action_results`] builds the
//! `detect-gpus` action result map.
//!
//! Rules follow Slurm 22.05's NVML AutoDetect (`../shared/reference/slurm-gres.md` §3):
//! type = NVML name, ASCII-lowercased, each space → `_`; device file from the minor number;
//! `Cores=` from the CPU affinity; `Links=` from active NVLinks to other GPUs; MIG instances as
//! `MultipleFiles=` records with `<parent cut at first '-'>_<g>g.<mem>gb` types.

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
mod ranges;

pub use action::action_results;
pub use detect::{DetectOptions, detect};
pub use error::GpuError;
pub use finding::Finding;
pub use gres::{GresFiles, GresRecord};
pub use model::{Gpu, Inventory, MigInstance};
pub use naming::{mig_profile, mig_type, slurm_type};
pub use ranges::compress_ranges;
