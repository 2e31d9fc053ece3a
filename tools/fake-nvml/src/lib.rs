//! Fake `libnvidia-ml.so.1` for GPU-less CI (see `docs/fake-nvml.md` for what it implements
//! and its JSON format).
//!
//! The library exports the NVML C functions the charm calls, with the C signatures of the NVML 13
//! header; struct layouts are the `nvml-wrapper-sys` bindgen types nvml-wrapper itself reads.
//! Configuration comes from `$FAKE_NVML_CONFIG`, else `<path of this .so>.json`, else zero devices.
//! Every call can be made to return any NVML return code (`errors` maps, globally or per device).

#![allow(non_snake_case)]
// The exported functions are called by C code through raw pointers the caller owns.
#![allow(clippy::missing_safety_doc)]

mod clocks;
mod config;
mod exports;
mod rc;
mod state;

pub use clocks::*;
pub use exports::*;
