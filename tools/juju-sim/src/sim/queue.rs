//! The operation queue: coalescing, choosing what runs next (per-unit order, units in error
//! wait, optional parallel batches), settling, resolving, and running one entry.

use super::hooks::{Hook, Queued};
use super::{HookRecord, Simulator};
use crate::error::{Result, SimError};
use std::collections::HashSet;

impl Simulator {
    /// Queue a hook (relation-changed entries are coalesced while still queued).
    ///
    /// An application-level relation-changed goes before the unit's queued relation-joined
    /// hooks of that relation, as Juju runs a remote application's change before joining its
    /// units (`internal/worker/uniter/relation/resolver.go` `nextHookForRelation`: "trigger
    /// all app hooks first"). A join's own relation-changed still follows its join at once:
    /// the app change is put before a join, never between a join and its change.
    pub(crate) fn enqueue(&mut self, unit: &str, hook: Hook) {
        if let Hook::RelationChanged(rel, remote) = &hook
            && !self
                .queued_changed
                .insert((unit.to_owned(), *rel, remote.clone()))
        {
            return;
        }
        let before_join = match &hook {
            Hook::RelationChanged(rel, None) => self.queue.iter().position(|q| {
                matches!(q, Queued::Hook { unit: u, hook: Hook::RelationJoined(r, _) }
                    if u == unit && r == rel)
            }),
            _ => None,
        };
        let entry = Queued::Hook {
            unit: unit.to_owned(),
            hook,
        };
        match before_join {
            Some(i) => self.queue.insert(i, entry),
            None => self.queue.push_back(entry),
        }
    }

    fn next_runnable(&self) -> Option<usize> {
        for (i, q) in self.queue.iter().enumerate() {
            match q {
                Queued::FinalizeRelation(rel) => {
                    let busy = self.queue.iter().enumerate().any(|(j, o)| {
                        j != i && matches!(o, Queued::Hook { hook, .. } if hook.relation() == Some(*rel))
                    }) || self.failed.values().any(
                        |f| matches!(f, Queued::Hook { hook, .. } if hook.relation() == Some(*rel)),
                    );
                    if !busy {
                        return Some(i);
                    }
                }
                Queued::FinalizeApp(app) => {
                    let empty =
                        self.with_model(|m| m.apps.get(app).is_none_or(|a| a.units.is_empty()));
                    if empty {
                        return Some(i);
                    }
                }
                other => {
                    if other.unit().is_some_and(|u| !self.failed.contains_key(u)) {
                        return Some(i);
                    }
                }
            }
        }
        None
    }

    /// Indices of the next queue entries to run together: hooks on distinct units that are
    /// each the first queued entry of their unit (at most `parallelism`), or a single
    /// finalize entry.
    fn next_batch(&self) -> Vec<usize> {
        let limit = self.opts.parallelism.max(1);
        if limit == 1 {
            return self.next_runnable().into_iter().collect();
        }
        let mut batch = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for (i, q) in self.queue.iter().enumerate() {
            let Queued::Hook { unit, .. } = q else {
                if batch.is_empty() {
                    return self.next_runnable().into_iter().collect();
                }
                break;
            };
            if !seen.insert(unit.as_str()) || self.failed.contains_key(unit) {
                continue;
            }
            batch.push(i);
            if batch.len() >= limit {
                break;
            }
        }
        batch
    }

    /// Run queued hooks until nothing runnable is left (units in error keep their hooks queued).
    /// Returns the number of operations run.
    pub fn settle(&mut self) -> Result<usize> {
        let mut ran = 0;
        loop {
            let batch = self.next_batch();
            if batch.is_empty() {
                break;
            }
            ran += batch.len();
            if ran > self.opts.max_hooks_per_settle {
                return Err(SimError::NotQuiescent(ran - batch.len()));
            }
            let mut items = Vec::with_capacity(batch.len());
            for i in batch.into_iter().rev() {
                if let Some(item) = self.queue.remove(i) {
                    items.push(item);
                }
            }
            items.reverse();
            if items.len() == 1 {
                if let Some(item) = items.pop() {
                    self.run_queued(item)?;
                }
            } else {
                self.run_parallel(items)?;
            }
        }
        Ok(ran)
    }

    /// Run hooks on distinct units at once; commit in queue order.
    fn run_parallel(&mut self, items: Vec<Queued>) -> Result<()> {
        let mut prepared = Vec::new();
        let mut hooks = Vec::new();
        for item in items {
            let Queued::Hook { unit, hook } = item else {
                self.run_queued(item)?;
                continue;
            };
            if let Hook::RelationChanged(rel, remote) = &hook {
                self.queued_changed
                    .remove(&(unit.clone(), *rel, remote.clone()));
            }
            if let Some(p) = self.prepare_hook(&unit, &hook) {
                prepared.push(p);
                hooks.push((unit, hook));
            }
        }
        let outcomes = self.spawn_many(prepared)?;
        for (outcome, (unit, hook)) in outcomes.into_iter().zip(hooks) {
            if !self.finish(outcome, Some(&hook)) {
                self.failed
                    .insert(unit.clone(), Queued::Hook { unit, hook });
            }
        }
        Ok(())
    }

    /// Run `argv` (after the unit's command prefix) as the handler of `hook` on `unit`, with
    /// exactly the context and environment the hook would get (like `juju exec` inside a hook
    /// context). Membership and commit rules apply as for the real hook; a non-zero exit puts
    /// the unit in error. Settles afterwards and returns the hook's record.
    pub fn run_hook_command(
        &mut self,
        unit: &str,
        hook: Hook,
        argv: &[&str],
    ) -> Result<HookRecord> {
        self.settle()?;
        let mut prepared = self.prepare_hook(unit, &hook).ok_or_else(|| {
            SimError::Relation(format!("hook {hook:?} cannot run on unit {unit:?} now"))
        })?;
        prepared.argv = Some(argv.iter().map(|a| a.to_string()).collect());
        let outcome = self.spawn(prepared)?;
        let index = self.records.len();
        let ok = self.finish(outcome, Some(&hook));
        if !ok {
            self.failed.insert(
                unit.to_owned(),
                Queued::Hook {
                    unit: unit.to_owned(),
                    hook,
                },
            );
        }
        let record = self.records.get(index).cloned();
        self.settle()?;
        record.ok_or_else(|| SimError::Jujuc("hook record missing".into()))
    }

    /// Retry a unit's failed hook (like `juju resolve`), then settle.
    pub fn resolve(&mut self, unit: &str) -> Result<()> {
        self.resolve_with(unit, true)
    }

    /// `juju resolve [--no-retry]`: clear the error and retry the hook (`retry`) or skip it.
    pub fn resolve_with(&mut self, unit: &str, retry: bool) -> Result<()> {
        let failed = self.failed.remove(unit);
        self.with_model_mut(|m| {
            if let Some(u) = m.units.get_mut(unit) {
                u.error = None;
            }
        });
        if let (Some(item), true) = (failed, retry) {
            if let Queued::Hook {
                hook: Hook::RelationChanged(rel, remote),
                ..
            } = &item
            {
                self.queued_changed
                    .insert((unit.to_owned(), *rel, remote.clone()));
            }
            self.queue.push_front(item);
        }
        self.settle().map(|_| ())
    }

    fn run_queued(&mut self, item: Queued) -> Result<()> {
        match item {
            Queued::Hook { unit, hook } => {
                if let Hook::RelationChanged(rel, remote) = &hook {
                    self.queued_changed
                        .remove(&(unit.clone(), *rel, remote.clone()));
                }
                let Some(prepared) = self.prepare_hook(&unit, &hook) else {
                    return Ok(());
                };
                let outcome = self.spawn(prepared)?;
                if !self.finish(outcome, Some(&hook)) {
                    self.failed
                        .insert(unit.clone(), Queued::Hook { unit, hook });
                }
                Ok(())
            }
            Queued::FinalizeUnit(unit) => {
                self.finalize_unit(&unit);
                Ok(())
            }
            Queued::FinalizeRelation(rel) => {
                self.with_model_mut(|m| {
                    m.relations.remove(&rel);
                    super::secrets::relation_gone(m, rel);
                });
                Ok(())
            }
            Queued::FinalizeApp(app) => {
                self.with_model_mut(|m| {
                    m.apps.remove(&app);
                    super::secrets::app_gone(m, &app);
                    let peers: Vec<u32> = m
                        .relations
                        .values()
                        .filter(|r| r.is_peer() && r.sides[0].app == app)
                        .map(|r| r.id)
                        .collect();
                    for id in peers {
                        m.relations.remove(&id);
                    }
                });
                self.app_templates.remove(&app);
                Ok(())
            }
        }
    }
}
