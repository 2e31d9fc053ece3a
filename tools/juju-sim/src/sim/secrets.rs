//! Secrets on the agent side: committing a hook's secret changes in Juju's order, the secret
//! hooks that follows (`secret-changed`, `secret-remove`), the clock that fires
//! `secret-rotate` and `secret-expired`, and clean-up when relations and units go away
//! [apiserver/facades/agent/uniter/uniter.go `commitHookChanges`; state/secrets.go;
//! worker/uniter/secrets/resolver.go].

use super::Simulator;
use super::hooks::{Hook, Queued};
use crate::context::HookContext;
use crate::model::{Life, Model};
use crate::secrets::{
    GrantTarget, LabelEntity, RETRY_SECS, Revision, Secret, SecretEvent, SecretId, SecretOwner,
    SecretStore, Tracking,
};
use std::collections::BTreeMap;
use std::time::Duration;

fn label_clash(
    model: &Model,
    entity: &LabelEntity,
    label: &str,
    except: Option<&SecretId>,
) -> bool {
    let app_of = |u: &str| model.app_of(u);
    let units_of = |a: &str| model.units_of_app(a);
    model
        .secrets
        .label_taken(entity, &app_of, &units_of, label, except)
}

/// Check that the hook's unit manages `id`; the error is what the commit reports.
fn check_manager(
    model: &Model,
    ctx: &HookContext,
    id: &SecretId,
    step: &str,
) -> Result<(), String> {
    let s = model
        .secrets
        .secrets
        .get(id)
        .ok_or_else(|| format!("{step}: secret {:?} not found", id.short_uri()))?;
    if s.owner.managed_by(&ctx.unit, &ctx.app, ctx.leader) {
        return Ok(());
    }
    Err(match &s.owner {
        SecretOwner::App(a) if *a == ctx.app => {
            format!("{step}: {:?} is not leader of {a:?}", ctx.unit)
        }
        _ => format!("{step}: permission denied"),
    })
}

/// Queue `secret-changed` for every reader whose last notice is older than the latest
/// revision (owner included), then mark revisions nobody tracks obsolete.
fn after_new_revision(model: &mut Model, id: &SecretId) {
    let Some(s) = model.secrets.secrets.get(id) else {
        return;
    };
    let (latest, owner) = (s.latest, s.owner.clone());
    let readers: Vec<String> = model
        .secrets
        .readers(id)
        .into_iter()
        .filter(|u| {
            model
                .secrets
                .tracking(u, id)
                .is_some_and(|t| t.notified != latest)
        })
        .collect();
    for unit in readers {
        let alive = model
            .units
            .get(&unit)
            .is_some_and(|u| u.life == Life::Alive);
        let app = model.app_of(&unit).unwrap_or_default();
        let readable = model
            .secrets
            .secrets
            .get(id)
            .is_some_and(|s| SecretStore::can_read(s, &unit, &app));
        model
            .secrets
            .update_tracking(&unit, id, |t| t.notified = latest);
        if alive && readable {
            model.secrets.outbox.push(SecretEvent::Changed {
                unit,
                id: id.clone(),
            });
        }
    }
    let owner_unit = model.secret_owner_unit(&owner);
    model.secrets.mark_obsolete(id, owner_unit.as_deref());
}

/// Apply a successful hook's secret changes: creates, updates, track-latest, grants, revokes,
/// deletes. Not transactional (as Juju): on the first error the earlier steps stay applied
/// and the error fails the hook.
pub(super) fn commit(model: &mut Model, ctx: &HookContext) -> Result<(), String> {
    let p = &ctx.secrets;
    let now = model.now;
    for c in &p.creates {
        if let Some(l) = &c.upsert.label
            && label_clash(model, &c.owner.entity(), l, None)
        {
            return Err(format!(
                "creating secrets: secret with label {l:?} already exists"
            ));
        }
        let rotate = c.upsert.rotate;
        let secret = Secret {
            id: c.id.clone(),
            owner: c.owner.clone(),
            label: c.upsert.label.clone(),
            description: c.upsert.description.clone(),
            rotate,
            next_rotate: rotate.and_then(|r| r.interval()).map(|i| now + i),
            revisions: BTreeMap::from([(
                1,
                Revision {
                    content: c.upsert.content.clone().unwrap_or_default(),
                    expire: c.upsert.expire,
                    expire_retry: None,
                },
            )]),
            latest: 1,
            grants: BTreeMap::new(),
            obsolete: Default::default(),
        };
        model.secrets.secrets.insert(c.id.clone(), secret);
    }
    for (id, up) in &p.updates {
        check_manager(model, ctx, id, "updating secrets")?;
        if let Some(l) = &up.label {
            let entity = model.secrets.secrets[id].owner.entity();
            if label_clash(model, &entity, l, Some(id)) {
                return Err(format!(
                    "updating secrets: secret with label {l:?} already exists"
                ));
            }
        }
        let Some(s) = model.secrets.secrets.get_mut(id) else {
            continue;
        };
        if up.label.is_some() {
            s.label = up.label.clone();
        }
        if up.description.is_some() {
            s.description = up.description.clone();
        }
        if let Some(r) = up.rotate {
            s.rotate = Some(r);
            s.next_rotate = r.interval().map(|i| now + i);
        }
        let changed = up
            .content
            .as_ref()
            .is_some_and(|c| s.revisions.get(&s.latest).is_none_or(|r| r.content != *c));
        if changed {
            s.latest += 1;
            let rev = Revision {
                content: up.content.clone().unwrap_or_default(),
                expire: up.expire,
                expire_retry: None,
            };
            s.revisions.insert(s.latest, rev);
            if let Some(i) = s.rotate.and_then(|r| r.interval()) {
                s.next_rotate = Some(now + i);
            }
            after_new_revision(model, id);
        } else if let Some(e) = up.expire
            && let Some(rev) = s.revisions.get_mut(&s.latest)
        {
            rev.expire = Some(e);
            rev.expire_retry = None;
        }
    }
    for id in &p.track_latest {
        let Some(s) = model.secrets.secrets.get(id) else {
            continue;
        };
        let (latest, owner) = (s.latest, s.owner.clone());
        let label = model
            .secrets
            .tracking(&ctx.unit, id)
            .and_then(|t| t.label.clone());
        model.secrets.track(
            &ctx.unit,
            id,
            Tracking {
                current: latest,
                label,
                notified: latest,
            },
        );
        let owner_unit = model.secret_owner_unit(&owner);
        model.secrets.mark_obsolete(id, owner_unit.as_deref());
    }
    for g in &p.grants {
        check_manager(model, ctx, &g.id, "granting secrets access")?;
        if let Some(s) = model.secrets.secrets.get_mut(&g.id) {
            let app_wide = match &g.target {
                GrantTarget::Unit(u) => {
                    let app = u.split('/').next().unwrap_or_default().to_owned();
                    s.grants.contains_key(&GrantTarget::App(app))
                }
                GrantTarget::App(_) => false,
            };
            if !app_wide {
                s.grants.insert(g.target.clone(), g.relation);
            }
        }
    }
    for r in &p.revokes {
        check_manager(model, ctx, &r.id, "revoking secrets access")?;
        if let Some(s) = model.secrets.secrets.get_mut(&r.id) {
            s.grants.remove(&r.target);
        }
    }
    for d in &p.deletes {
        check_manager(model, ctx, &d.id, "removing secrets")?;
        match d.revision {
            None => delete_secret(&mut model.secrets, &d.id),
            Some(rev) => {
                let Some(s) = model.secrets.secrets.get_mut(&d.id) else {
                    continue;
                };
                if s.revisions.remove(&rev).is_none() {
                    // Juju 3.6-rc1's text, typo included.
                    return Err(format!(
                        "removing secrets: revison {rev} for secret {:?} not found",
                        d.id.short_uri()
                    ));
                }
                if s.revisions.is_empty() {
                    delete_secret(&mut model.secrets, &d.id);
                }
            }
        }
    }
    Ok(())
}

/// Delete a whole secret and every reader's record (no consumer hook).
fn delete_secret(store: &mut SecretStore, id: &SecretId) {
    store.delete(id);
}

/// Drop grants scoped to a relation that has ended.
pub(super) fn relation_gone(model: &mut Model, rel: u32) {
    for s in model.secrets.secrets.values_mut() {
        s.grants.retain(|_, r| *r != rel);
    }
}

/// A unit has gone: its unit-owned secrets and its reader records go with it; revisions only
/// it tracked become obsolete.
pub(super) fn unit_gone(model: &mut Model, unit: &str) {
    let owned: Vec<SecretId> = model
        .secrets
        .secrets
        .values()
        .filter(|s| s.owner == SecretOwner::Unit(unit.to_owned()))
        .map(|s| s.id.clone())
        .collect();
    for id in owned {
        delete_secret(&mut model.secrets, &id);
    }
    let tracked = model.secrets.untrack_unit(unit);
    for id in tracked {
        let owner = model.secrets.secrets.get(&id).map(|s| s.owner.clone());
        if let Some(owner) = owner {
            let owner_unit = model.secret_owner_unit(&owner);
            model.secrets.mark_obsolete(&id, owner_unit.as_deref());
        }
    }
}

/// An application has gone: its app-owned secrets go with it.
pub(super) fn app_gone(model: &mut Model, app: &str) {
    let owned: Vec<SecretId> = model
        .secrets
        .secrets
        .values()
        .filter(|s| s.owner == SecretOwner::App(app.to_owned()))
        .map(|s| s.id.clone())
        .collect();
    for id in owned {
        delete_secret(&mut model.secrets, &id);
    }
}

/// Juju's priority among a unit's pending operations, as far as secret hooks are concerned.
fn rank(hook: &Hook) -> u8 {
    match hook {
        Hook::UpgradeCharm => 0,
        Hook::RelationCreated(_) => 1,
        Hook::LeaderElected | Hook::LeaderSettingsChanged => 2,
        Hook::SecretExpired(..) => 3,
        Hook::SecretRotate(_) => 4,
        Hook::SecretChanged(_) => 5,
        Hook::SecretRemove(..) => 6,
        _ => 10,
    }
}

impl Simulator {
    /// Queue a secret hook unless the same one is already queued for the unit, in Juju's
    /// order: after the unit's queued upgrade, relation-created and leader hooks and its
    /// earlier secret hooks (expired, rotate, changed, remove), before everything else. Not
    /// before a queued install, and never on a dying unit [worker/uniter/resolver.go].
    fn enqueue_secret_hook(&mut self, unit: &str, hook: Hook) {
        let dying = self.with_model(|m| m.units.get(unit).is_none_or(|u| u.life != Life::Alive));
        let mine = |q: &Queued| matches!(q, Queued::Hook { unit: u, .. } if u == unit);
        let queued = self
            .queue
            .iter()
            .any(|q| matches!(q, Queued::Hook { unit: u, hook: h } if u == unit && *h == hook));
        if dying || queued {
            return;
        }
        let installing = self
            .queue
            .iter()
            .any(|q| matches!(q, Queued::Hook { unit: u, hook: Hook::Install } if u == unit));
        let rank = rank(&hook);
        let at = self.queue.iter().position(|q| {
            mine(q) && matches!(q, Queued::Hook { hook: h, .. } if self::rank(h) > rank)
        });
        match at {
            Some(i) if !installing => self.queue.insert(
                i,
                Queued::Hook {
                    unit: unit.to_owned(),
                    hook,
                },
            ),
            _ => self.enqueue(unit, hook),
        }
    }

    /// Move the secret hooks the model asked for into the queue.
    pub(super) fn drain_secret_events(&mut self) {
        let events = self.with_model_mut(|m| std::mem::take(&mut m.secrets.outbox));
        for e in events {
            match e {
                SecretEvent::Changed { unit, id } => {
                    self.enqueue_secret_hook(&unit, Hook::SecretChanged(id))
                }
                SecretEvent::Remove { unit, id, revision } => {
                    self.enqueue_secret_hook(&unit, Hook::SecretRemove(id, revision))
                }
            }
        }
    }

    /// The simulator's wall clock (seconds since the Unix epoch).
    pub fn now(&self) -> i64 {
        self.with_model(|m| m.now)
    }

    /// Move the wall clock on, queue the `secret-rotate` and `secret-expired` hooks that
    /// became due (each repeats every 5 minutes until the charm resolves it), and settle.
    pub fn advance_time(&mut self, by: Duration) -> crate::Result<()> {
        let due = self.with_model_mut(|m| {
            m.now += by.as_secs() as i64;
            let now = m.now;
            let mut due = Vec::new();
            let owners: Vec<(SecretId, Option<String>)> = m
                .secrets
                .secrets
                .values()
                .map(|s| (s.id.clone(), m.secret_owner_unit(&s.owner)))
                .collect();
            for (id, owner_unit) in owners {
                let (Some(unit), Some(s)) = (owner_unit, m.secrets.secrets.get_mut(&id)) else {
                    continue;
                };
                if s.next_rotate.is_some_and(|t| t <= now) {
                    s.next_rotate = Some(now + RETRY_SECS);
                    due.push((unit.clone(), Hook::SecretRotate(id.clone())));
                }
                let latest = s.latest;
                if let Some(rev) = s.revisions.get_mut(&latest)
                    && rev.expire.is_some_and(|t| t <= now)
                    && rev.expire_retry.is_none_or(|t| t <= now)
                {
                    rev.expire_retry = Some(now + RETRY_SECS);
                    due.push((unit, Hook::SecretExpired(id.clone(), latest)));
                }
            }
            due
        });
        for (unit, hook) in due {
            self.enqueue_secret_hook(&unit, hook);
        }
        self.settle().map(|_| ())
    }
}
