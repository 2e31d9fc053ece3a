//! The reads every leader relation event starts with, asked of Juju at once: `is-leader`, the
//! event's bag (`relation-get`) and `config-get` run concurrently instead of one after another.
//!
//! Why: each hook tool is a process and a round trip to the unit agent (about 1–1.5 ms here),
//! and a node's `slurmd-relation-changed` on a small cluster is mostly those round trips
//! (issue 13: every controller hook ≥ 20× faster than the ops baseline). The three are reads,
//! independent of each other, and Juju's agent runs the hook tools of one hook one at a time
//! whatever the order they arrive in (`jujuc/server.go`: "A single command is run at a time",
//! a mutex around each request), so asking at once changes no outcome: only the waiting
//! overlaps. Writes (`relation-set`, `status-set`, secrets) stay sequential, in apply's order.
//!
//! Only `slurmd-relation-joined`/`-changed` prefetch: the controller's busiest events, and the
//! ones whose bag the quick path needs. `config-get` is asked too because every leader hook
//! that is not unchanged reads the config; on an unchanged event, and on a non-leader, that
//! read is spent for nothing but costs no waiting.

use crate::interface::SLURMCTLD_ENDPOINT;
use juju_runtime::{Bag, BagOwner, Event, HookContext, HookToolError, ModelBackend};
use serde_json::{Map, Value};

/// What the first reads found.
#[derive(Debug)]
pub struct FirstReads {
    /// `is-leader`.
    pub leader: bool,
    /// The reads asked with it (empty for events that do not prefetch).
    pub prefetched: Prefetched,
}

/// Reads asked before the leader knew it needed them. Their errors are the leader's to report
/// (when observe needs the value): a non-leader never looks at them.
#[derive(Debug, Default)]
pub struct Prefetched {
    /// The event's bag.
    pub event_bag: Option<Result<Bag, HookToolError>>,
    /// `config-get`.
    pub config: Option<Result<Map<String, Value>, HookToolError>>,
}

/// The bag a relation event of the `slurmctld` endpoint is about: the remote unit's, or the
/// remote application's when no unit is named.
fn event_bag_owner(ctx: &HookContext) -> Option<(&juju_runtime::RelationId, BagOwner)> {
    let (Event::RelationJoined(r) | Event::RelationChanged(r)) = &ctx.event else {
        return None;
    };
    if r.relation.endpoint != SLURMCTLD_ENDPOINT {
        return None;
    }
    let owner = match &r.remote_unit {
        Some(unit) => BagOwner::Unit(unit.clone()),
        None => BagOwner::App(r.remote_app.clone()),
    };
    Some((&r.relation, owner))
}

/// Asks `is-leader`, and for a relation event of the `slurmctld` endpoint the event's bag and
/// the config at the same time. Only a failing `is-leader` is an error here.
pub fn first_reads<B: ModelBackend + Sync>(
    ctx: &HookContext,
    backend: &B,
) -> Result<FirstReads, HookToolError> {
    let Some((relation, owner)) = event_bag_owner(ctx) else {
        return Ok(FirstReads {
            leader: backend.is_leader()?,
            prefetched: Prefetched::default(),
        });
    };
    let (leader, bag, config) = std::thread::scope(|scope| {
        let bag = scope.spawn(|| backend.relation_get(relation, &owner));
        let config = scope.spawn(|| backend.config_get());
        let leader = backend.is_leader();
        (leader, bag.join(), config.join())
    });
    Ok(FirstReads {
        leader: leader?,
        prefetched: Prefetched {
            event_bag: Some(joined(bag)),
            config: Some(joined(config)),
        },
    })
}

/// A scoped thread's answer; a panic there is the hook's panic.
fn joined<T>(answer: std::thread::Result<T>) -> T {
    answer.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
