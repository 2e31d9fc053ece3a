//! The charm runtime ("ops for Rust"): turns Juju's environment into a typed event and gives
//! charm code a typed model backed by the real hook tools (see `../shared/reference/juju-hook-tools.md`).

pub mod backend;
pub mod event;
