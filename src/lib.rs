//! Juju machine charms for Slurm GPU clusters: `slurmd` (compute node) and `slurmctld`
//! (controller), served by one binary. See `../shared/ARCHITECTURE.md` for the design.
//!
//! Module map:
//! - [`juju`]: the charm runtime ("ops for Rust"): typed events, hook-tool client, model backend seam.
//! - [`gpu`]: NVML inventory and the GRES records Slurm expects.
//! - [`slurm`]: slurm.conf / gres.conf model, parser, renderer and hostlists.
//! - [`interface`]: the `slurmd` relation protocol (phase A data shapes), validated.
//! - [`charms`]: the two charms, each `observe -> desired -> apply`.

pub mod charms;
pub mod gpu;
pub mod interface;
pub mod juju;
pub mod slurm;
