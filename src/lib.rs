//! Juju machine charms for Slurm GPU clusters: `slurmd` (compute node) and `slurmctld`
//! (controller), served by one binary. The design is in `docs/charms.md`.
//!
//! Module map:
//! - [`gpu`]: NVML inventory and the GRES records Slurm expects.
//! - [`slurm`]: slurm.conf / gres.conf model, parser, renderer and hostlists.
//! - [`interface`]: the `slurmd` relation protocol (phase A data shapes), validated.
//! - [`charms`]: the two charms, each `observe -> plan -> apply -> status -> persist`.
//!
//! The charm runtime (typed events, the hook-tool client, logging to `juju-log`, the error
//! policy) is the separate `juju-runtime` crate (`crates/juju-runtime`).

pub mod charms;
pub mod gpu;
pub mod interface;
pub mod slurm;
