//! The charm runtime ("ops for Rust"): turns Juju's environment into a typed event and gives
//! charm code a typed model backed by the real hook tools (see `../shared/reference/juju-hook-tools.md`).
//!
//! - [`context`]: [`HookContext::from_env`](event::HookContext::from_env), the event from the environment.
//! - [`backend`]: the [`ModelBackend`] seam; [`network`] extends it.
//! - [`hook_tools`]: the production backend (runs Juju's hook tools); [`memory`]: the test one.
//! - [`action_results`]: nested results to validated `action-set` keys.
//! - [`logging`]: `tracing` records to `juju-log`, batched per hook.
//! - [`runner`]: runs one hook with a handler and maps its outcome to an exit code.

pub mod action_results;
pub mod backend;
pub mod context;
pub mod context_error;
pub mod event;
pub mod event_name;
pub mod hook_tools;
pub mod logging;
pub mod memory;
pub mod memory_relation;
pub mod network;
pub mod relation_id;
pub mod runner;
pub mod tool_error;
pub mod tool_runner;

pub use backend::{
    Bag, BagOwner, LogLevel, ModelBackend, RelationId, Status, StatusKind, StatusScope,
};
pub use context_error::ContextError;
pub use event::{ActionEvent, Event, HookContext, RelationEvent, SecretEvent, StorageEvent};
pub use hook_tools::HookTools;
pub use logging::LogHandle;
pub use memory::MemoryBackend;
pub use memory_relation::{MemoryRelation, bag};
pub use network::{NetworkBackend, NetworkInfo, Port, Protocol};
pub use tool_error::HookToolError;
