//! The vocabulary both charms' plans are written in: a file to write and a relation bag to
//! update. A plan is data; only the charms' `apply` steps turn it into writes.

use super::host::Owner;
use juju_runtime::{Bag, RelationId};

/// A host file with its exact desired bytes, mode and owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// Host path, e.g. `/etc/slurm/slurm.conf` (under `SLURM_CHARMS_ROOT`).
    pub path: &'static str,
    /// The whole content.
    pub bytes: Vec<u8>,
    /// Permission bits.
    pub mode: u32,
    /// Owner, when it matters.
    pub owner: Option<Owner>,
}

impl FileWrite {
    /// A file to write.
    pub fn new(
        path: &'static str,
        bytes: impl Into<Vec<u8>>,
        mode: u32,
        owner: Option<Owner>,
    ) -> Self {
        FileWrite {
            path,
            bytes: bytes.into(),
            mode,
            owner,
        }
    }
}

/// Keys to merge into one of this unit's (or, leader only, this application's) relation bags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationWrite {
    /// The relation.
    pub relation: RelationId,
    /// The application bag (`relation-set --app`) rather than the unit's.
    pub app: bool,
    /// The keys and values.
    pub data: Bag,
}
