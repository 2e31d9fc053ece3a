//! NVIDIA GPU inventory from NVML, described the way Slurm describes GPUs.
//!
//! [`detect`] opens NVML (`libnvidia-ml.so.1`, or an injected path for tests), reads every GPU
//! (name, minor number, UUID, PCI bus id, memory, CPU affinity, NVLinks, MIG instances) and returns
//! an [`Inventory`]. [`Inventory::gres`] turns it into [`crate::slurm::GresLine`]s (gres.conf
//! records, the one GRES record type) and [`Inventory::gres_specs`] into slurm.conf `Gres=` items
//! ([`crate::slurm::GresSpec`]); NVML names become [`crate::slurm::types::GresType`] here, once; [`action_results`] builds the
//! `detect-gpus` action result map.
//!
//! Rules follow Slurm's own NVML AutoDetect, checked against it on 22.05, 24.11 and 26.05 by
//! `tests/gpu_slurm_oracle.rs` (`docs/gpu-oracle.md`):
//! type = NVML name, ASCII-lowercased, each space → `_`; device file from the minor number;
//! `Cores=` from the CPU affinity; `Links=` from active NVLinks to other GPUs; MIG instances as
//! `MultipleFiles=` records with `<parent cut at first '-'>_<profile>` types, the profile taken
//! from the MIG device's name as Slurm 23.02+ does (`1g.5gb`, `1c.3g.20gb`; [`mig_profile`]).
//!
//! [`GpuSharing`] (the slurmd `gpu-sharing` option, parsed once) adds Slurm's shared GRES
//! (`shard`, `mps`) on the whole GPUs' records (`sharing.rs`).
//!
//! Decisions where Slurm leaves room (each also documented on the item):
//! - **Cores**: the affinity mask's CPUs are mapped to Slurm core ids through
//!   `<root>/sys/devices/system/cpu/cpu*/topology` (cores numbered in (socket, core id) order, so
//!   hyperthread siblings share an id); without a readable topology the CPU ids are used as they
//!   are (right for `ThreadsPerCore=1`).
//! - **Links**: every whole GPU gets a row, as Slurm's own NVML plugin gives it: one entry per
//!   GPU of the node in PCI bus id order, `-1` for itself, the number of its active NVLinks whose
//!   remote PCI bus id is that peer, `0` otherwise (links to an NVSwitch count for nobody, so on
//!   an 8-GPU NVSwitch board every row is `-1` plus zeros; NVLink unsupported gives zeros too).
//!   MIG instances get no Links (Slurm 24.11+).
//! - **Order**: whole GPUs in PCI order, then MIG instances in natural order of their files,
//!   grouped by type (types in order of first appearance), because slurmd loads an explicit
//!   gres.conf type by type in slurm.conf's `Gres=` order (`docs/gpu-oracle.md`). Whole GPUs
//!   therefore get one record each; `File=` ranges only appear for inventories without Links.
//! - **Errors**: library missing / driver not loaded → zero GPUs (+ [`Finding::DriverNotLoaded`]
//!   when sysfs shows NVIDIA GPUs); RM version mismatch → zero GPUs + [`Finding::RebootRequired`];
//!   no permission, a library that is not NVML, other init or count failures → [`GpuError`]; a
//!   device or MIG instance that cannot be read → skipped with a finding.
//! - **Health** ([`DeviceHealth`], [`assess`]): per NVML index, GPU lost (`GPU_IS_LOST` from any
//!   call), uncorrectable ECC errors (volatile counter), retired pages pending, a row-remap
//!   failure, a handle NVML cannot open; [`assess`] adds GPUs remembered from the last hook that
//!   NVML no longer lists; [`assess_unreadable`] makes every remembered GPU failing when NVML
//!   fails as a whole (a [`GpuError`], e.g. `GPU_IS_LOST` from `nvmlDeviceGetCount`).
//! - **XIDs** ([`scan_kmsg`], [`classify`]): the driver's XID reports read from the kernel
//!   log after a cursor, classed by NVIDIA's XID catalog ([`XID_CATALOG`]: drain, count,
//!   application); [`add_xids`] turns held drain-class XIDs into problems (`src/gpu/xid.rs`
//!   says why the kernel log and not NVML's event API).
//! - **Sanity** (`src/gpu/sanity.rs`): GPUs sharing a minor number, MIG instances with
//!   impossible sizes and names that give no Slurm type are left out with a blocking
//!   [`Finding`] naming them.

mod action;
mod cores;
mod detect;
mod error;
mod features;
mod finding;
mod gres;
mod health;
mod host;
mod links;
mod model;
mod naming;
mod sanity;
mod sharing;
mod xid;

pub use action::action_results;
pub use cores::mask_to_cpus;
pub use detect::{DetectOptions, detect};
pub use error::GpuError;
pub use features::{GpuFeatures, gpu_features, merge_features};
pub use finding::Finding;
pub use health::{
    DeviceHealth, Fault, GpuProblem, HealthReport, KnownGpu, UNKNOWN_INDEX, add_xids, assess,
    assess_unreadable, encode_known, parse_known,
};
pub use model::{Gpu, Inventory, MigInstance};
pub use naming::{mig_profile, mig_type, slurm_type};
pub use sharing::{GpuSharing, MAX_SHARES_PER_GPU, SharingError, SharingOutcome};
pub use xid::{
    KmsgScan, MAX_RECORDS, XID_CATALOG, XidClass, XidCount, XidEvent, XidRow, classify,
    drain_class_codes, parse_xid, scan_kmsg,
};
