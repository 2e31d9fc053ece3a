//! Committing a successful hook's deferred changes, and which relation-changed hooks that
//! causes on the other side.

use super::hooks::Hook;
use crate::context::{BagOwner, HookContext};
use crate::model::{Life, Model};

/// Apply a successful hook's deferred changes; returns the relation-changed hooks to queue.
pub(super) fn commit(model: &mut Model, ctx: &HookContext) -> Vec<(String, Hook)> {
    let mut notify = Vec::new();
    let writer_alive = model
        .units
        .get(&ctx.unit)
        .is_some_and(|u| u.life == Life::Alive);
    for ((rel_id, owner), changes) in &ctx.pending_bags {
        let Some(rel) = model.relations.get_mut(rel_id) else {
            continue;
        };
        let bag = match owner {
            BagOwner::Unit => rel.unit_bags.entry(ctx.unit.clone()).or_default(),
            BagOwner::App => rel.app_bags.entry(ctx.app.clone()).or_default(),
        };
        let mut changed = false;
        for (k, v) in changes {
            let before = bag.get(k).cloned();
            match v {
                Some(v) => {
                    bag.insert(k.clone(), v.clone());
                }
                None => {
                    bag.remove(k);
                }
            }
            changed |= bag.get(k) != before.as_ref();
        }
        if !changed {
            continue;
        }
        if *owner == BagOwner::App {
            *rel.app_bag_versions.entry(ctx.app.clone()).or_default() += 1;
        }
        if !writer_alive || rel.dying {
            continue;
        }
        let Some(remote_app) = rel.remote_app(&ctx.app).map(str::to_owned) else {
            continue;
        };
        let Some(app) = model.apps.get(&remote_app) else {
            continue;
        };
        for other in &app.units {
            if *other == ctx.unit {
                continue;
            }
            let alive = model
                .units
                .get(other)
                .is_some_and(|u| u.life == Life::Alive);
            let Some(part) = rel.scope.get(other) else {
                continue;
            };
            if !alive || part.broken {
                continue;
            }
            match owner {
                BagOwner::Unit if part.members.contains(&ctx.unit) => {
                    notify.push((
                        other.clone(),
                        Hook::RelationChanged(*rel_id, Some(ctx.unit.clone())),
                    ));
                }
                BagOwner::App if part.created => {
                    notify.push((other.clone(), Hook::RelationChanged(*rel_id, None)));
                }
                _ => {}
            }
        }
    }
    if let Some(u) = model.units.get_mut(&ctx.unit) {
        for (k, v) in &ctx.pending_state {
            match v {
                Some(v) => {
                    u.state.insert(k.clone(), v.clone());
                }
                None => {
                    u.state.remove(k);
                }
            }
        }
        for op in &ctx.pending_ports {
            if op.open {
                u.ports.insert(op.range.clone(), op.endpoints.clone());
            } else {
                u.ports.remove(&op.range);
            }
        }
        if ctx.reboot {
            u.reboots += 1;
        }
    }
    notify
}
