//! Test-only Juju simulator: models a Juju model and plays the unit agent, running a charm's
//! real `dispatch` per hook with real hook-tool executables on `PATH`.
//!
//! * [`Simulator`]: the library API (deploy, integrate, config, actions, removal, resolve).
//! * `jujuc`: the multi-call hook-tool binary; it forwards each call over a Unix socket to the
//!   simulator, which executes it against the in-memory model ([`tools`]).
//! * `juju-sim run <scenario.yaml>`: the CLI ([`scenario`]).
//! * Juju 3.6 secrets ([`secrets`]: tools, hooks, tracking, the clock) and `goal-state`.
//!
//! Not-Juju, test-only extensions: per-unit extra environment, extra `PATH` dirs and a command
//! prefix ([`model::UnitExtras`]).
//!
//! ```no_run
//! use juju_sim::{DeploySpec, Simulator};
//! use serde_json::json;
//!
//! # fn main() -> juju_sim::Result<()> {
//! let mut sim = Simulator::new()?;
//! sim.deploy(DeploySpec::new("ctl", "charms/ctl"))?;
//! sim.deploy(
//!     DeploySpec::new("node", "charms/node")
//!         .units(2)
//!         .config("gpus", 4)
//!         .env("SLURM_CHARMS_ROOT", "/tmp/roots/{unit_dash}"),
//! )?;
//! let rel = sim.integrate("node", "ctl")?; // runs every hook until settled
//! assert_eq!(sim.unit_status("ctl/0").unwrap().status, "active");
//! let node0 = sim.unit_bag(rel, "node/0");
//! let result = sim.run_action("node/0", "hello", json!({"name": "x"}))?;
//! assert_eq!(result.status, "completed");
//! for r in sim.records() {
//!     println!("{} {}: {} tool calls in {:?}", r.unit, r.hook, r.calls.len(), r.duration);
//! }
//! # let _ = node0;
//! # Ok(())
//! # }
//! ```

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
pub mod secrets;
mod server;
pub mod sim;
pub mod tool_client;
pub mod tools;

pub use error::{Result, SimError};
pub use jujuc::jujuc_path;
pub use model::{Bag, Status, UnitExtras};
pub use sim::{ActionResult, BenchResult, DeploySpec, Hook, HookRecord, SimOptions, Simulator};
