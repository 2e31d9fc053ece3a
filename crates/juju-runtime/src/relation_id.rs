//! Parsing of relation ids as Juju prints them (`endpoint:N`). Juju hands out relation ids in this
//! form (`JUJU_RELATION_ID`, `relation-ids` output), and the runtime passes them back to `-r`
//! unchanged, so the parse must accept exactly what Juju writes and reject anything else.

use crate::backend::RelationId;
use std::str::FromStr;

/// A string that is not of the form `endpoint:N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("relation id {0:?} is not of the form <endpoint>:<number> (e.g. \"db:3\")")]
pub struct RelationIdError(pub String);

impl FromStr for RelationId {
    type Err = RelationIdError;

    /// Splits at the last `:` as Juju and ops do; the endpoint must be non-empty and the id a
    /// non-negative integer.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RelationIdError(s.to_owned());
        let (endpoint, id) = s.rsplit_once(':').ok_or_else(bad)?;
        if endpoint.is_empty() || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let id = id.parse::<u32>().map_err(|_| bad())?;
        Ok(RelationId {
            endpoint: endpoint.to_owned(),
            id,
        })
    }
}

impl RelationId {
    /// Builds a relation id from its parts; saves callers a struct literal.
    pub fn new(endpoint: impl Into<String>, id: u32) -> Self {
        RelationId {
            endpoint: endpoint.into(),
            id,
        }
    }
}
