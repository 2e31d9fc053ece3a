//! Test-only Juju simulator: models a Juju model and plays the unit agent, running a charm's
//! real `dispatch` per hook with real hook-tool executables on `PATH`.
//!
//! * [`Simulator`]: the library API (deploy, integrate, config, actions, removal, resolve).
//! * `jujuc`: the multi-call hook-tool binary; it forwards each call over a Unix socket to the
//!   simulator, which executes it against the in-memory model ([`tools`]).
//! * `juju-sim run <scenario.yaml>`: the CLI ([`scenario`]).
//!
//! Not-Juju, test-only extensions: per-unit extra environment, extra `PATH` dirs and a command
//! prefix ([`model::UnitExtras`]).

pub mod actions;
pub mod charm;
pub mod context;
pub mod error;
pub mod flags;
mod jujuc;
pub mod model;
pub mod protocol;
pub mod report;
pub mod scenario;
mod server;
pub mod sim;
pub mod tools;

pub use error::{Result, SimError};
pub use jujuc::jujuc_path;
pub use model::{Bag, Status, UnitExtras};
pub use sim::{ActionResult, BenchResult, DeploySpec, Hook, HookRecord, SimOptions, Simulator};
