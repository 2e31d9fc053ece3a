/*!
Test support for [`juju_runtime`], kept out of the runtime crate so a charm binary holds no
test code (as `ops` ships its test harness as `ops[testing]`). Use it as a dev-dependency only.

[`MemoryBackend`] is an in-memory [`juju_runtime::ModelBackend`] (and
[`juju_runtime::NetworkBackend`]) that enforces the same rules Juju's hook tools do and fails
with the same [`juju_runtime::HookToolError`] variants; [`MemoryRelation`] and [`bag`] set up
relations the way a test reads.

# Example

```
use juju_runtime::{ModelBackend, RelationId, Status, StatusKind, StatusScope};
use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};

let backend = MemoryBackend::new("slurmctld/0")
    .leader(true)
    .relation(MemoryRelation::new("slurmd", 1, "compute").remote_unit("compute/0", bag([("k", "v")])));
let rel = RelationId::new("slurmd", 1);
assert_eq!(backend.relation_list(&rel).unwrap(), ["compute/0"]);
backend.status_set(StatusScope::Unit, &Status::new(StatusKind::Active, "ready")).unwrap();
assert_eq!(backend.unit_status().unwrap().kind, StatusKind::Active);
```
*/
#![deny(missing_docs)]

pub use crate::{
    memory::MemoryBackend,
    memory_relation::{MemoryRelation, bag},
    memory_secrets::MemorySecret,
};

mod memory;
mod memory_relation;
mod memory_secrets;
