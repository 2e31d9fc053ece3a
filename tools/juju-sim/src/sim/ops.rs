//! Juju operations on existing applications (integrate, removal, config, upgrade, leadership,
//! update-status) and the hook sequences they cause (reference §4).

use super::Simulator;
use super::deploy::juju_keys;
use super::hooks::{Hook, Queued};
use crate::charm::{Charm, Role, check_option_value};
use crate::error::{Result, SimError};
use crate::model::{Life, Model, Participation, Relation, RelationSide};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Per relation: id, the dying unit's remote members, the units that see it depart.
type DeparturePlan = (u32, Vec<String>, Vec<String>);

pub(super) fn validate_config(charm: &Charm, config: &BTreeMap<String, Json>) -> Result<()> {
    for (k, v) in config {
        let opt = charm.options.get(k).ok_or_else(|| {
            SimError::Config(format!("unknown option {k:?} for charm {:?}", charm.name))
        })?;
        if !v.is_null() {
            check_option_value(opt.kind, v)
                .map_err(|m| SimError::Config(format!("option {k:?}: {m}")))?;
        }
    }
    Ok(())
}

/// Parse `app` or `app:endpoint`.
fn split_endpoint(s: &str) -> (&str, Option<&str>) {
    match s.split_once(':') {
        Some((a, e)) => (a, Some(e)),
        None => (s, None),
    }
}

impl Simulator {
    pub(super) fn app_units_alive(model: &Model, app: &str) -> Vec<String> {
        let mut v: Vec<String> = model
            .apps
            .get(app)
            .map(|a| {
                a.units
                    .iter()
                    .filter(|u| model.units.get(*u).is_some_and(|x| x.life == Life::Alive))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Relate two applications (`juju integrate a b`, each `app` or `app:endpoint`), run
    /// relation-created on every unit, then joined+changed per remote unit, and settle.
    /// Returns the relation id.
    pub fn integrate(&mut self, a: &str, b: &str) -> Result<u32> {
        let (app_a, ep_a) = split_endpoint(a);
        let (app_b, ep_b) = split_endpoint(b);
        let id = self.with_model_mut(|m| -> Result<u32> {
            let ca = &m
                .apps
                .get(app_a)
                .ok_or_else(|| SimError::AppNotFound(app_a.into()))?
                .charm;
            let cb = &m
                .apps
                .get(app_b)
                .ok_or_else(|| SimError::AppNotFound(app_b.into()))?
                .charm;
            let mut matches = Vec::new();
            for ea in ca.endpoints.values() {
                for eb in cb.endpoints.values() {
                    let roles_ok = matches!(
                        (ea.role, eb.role),
                        (Role::Provides, Role::Requires) | (Role::Requires, Role::Provides)
                    );
                    if roles_ok
                        && ea.interface == eb.interface
                        && ep_a.is_none_or(|e| e == ea.name)
                        && ep_b.is_none_or(|e| e == eb.name)
                    {
                        matches.push((ea.name.clone(), eb.name.clone(), ea.interface.clone()));
                    }
                }
            }
            let (na, nb, interface) = match matches.len() {
                0 => {
                    return Err(SimError::Relation(format!(
                        "no relations found between {a:?} and {b:?}"
                    )));
                }
                1 => matches.remove(0),
                _ => {
                    return Err(SimError::Relation(format!(
                        "ambiguous relation: {a:?} {b:?} could refer to {}; specify endpoints",
                        matches
                            .iter()
                            .map(|(x, y, _)| format!("\"{app_a}:{x} {app_b}:{y}\""))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )));
                }
            };
            let exists = m.relations.values().any(|r| {
                !r.dying
                    && r.sides.iter().any(|s| s.app == app_a && s.endpoint == na)
                    && r.sides.iter().any(|s| s.app == app_b && s.endpoint == nb)
            });
            if exists {
                return Err(SimError::Relation(format!(
                    "relation \"{app_a}:{na} {app_b}:{nb}\" already exists"
                )));
            }
            let id = m.next_relation_id;
            m.next_relation_id += 1;
            let mut rel = Relation {
                id,
                interface,
                sides: [
                    RelationSide {
                        app: app_a.into(),
                        endpoint: na,
                    },
                    RelationSide {
                        app: app_b.into(),
                        endpoint: nb,
                    },
                ],
                app_bags: [
                    (app_a.to_owned(), Default::default()),
                    (app_b.to_owned(), Default::default()),
                ]
                .into(),
                app_bag_versions: BTreeMap::new(),
                unit_bags: BTreeMap::new(),
                scope: BTreeMap::new(),
                dying: false,
                status_at: m.now,
                joined: false,
            };
            for app in [app_a, app_b] {
                for u in Self::app_units_alive(m, app) {
                    rel.unit_bags
                        .insert(u.clone(), juju_keys(&m.units[&u].address));
                    rel.scope.insert(
                        u,
                        Participation {
                            created: true,
                            ..Default::default()
                        },
                    );
                }
            }
            m.relations.insert(id, rel);
            Ok(id)
        })?;
        let (units_a, units_b) = self.with_model(|m| {
            (
                Self::app_units_alive(m, app_a),
                Self::app_units_alive(m, app_b),
            )
        });
        for u in units_a.iter().chain(&units_b) {
            self.enqueue(u, Hook::RelationCreated(id));
        }
        for u in &units_a {
            for r in &units_b {
                self.queue_join(u, id, r);
            }
        }
        for u in &units_b {
            for r in &units_a {
                self.queue_join(u, id, r);
            }
        }
        self.settle()?;
        Ok(id)
    }

    /// Remove a unit (`juju remove-unit`): departed on both sides (the departing unit already
    /// absent from `relation-list`), broken on the dying unit, stop, remove; a new leader is
    /// elected if it led. Settles.
    pub fn remove_unit(&mut self, unit: &str) -> Result<()> {
        self.queue_unit_removal(unit)?;
        self.settle().map(|_| ())
    }

    /// Queue a unit's teardown (see [`Simulator::remove_unit`]) without settling.
    fn queue_unit_removal(&mut self, unit: &str) -> Result<()> {
        let plan = self.with_model_mut(|m| -> Result<Vec<DeparturePlan>> {
            let u = m
                .units
                .get_mut(unit)
                .ok_or_else(|| SimError::UnitNotFound(unit.to_owned()))?;
            u.life = Life::Dying;
            let mut plan = Vec::new();
            for rel in m.relations.values() {
                let Some(part) = rel.scope.get(unit) else {
                    continue;
                };
                if part.broken {
                    continue;
                }
                let mine: Vec<String> = part.members.union(&part.joining).cloned().collect();
                let others: Vec<String> = rel
                    .scope
                    .iter()
                    .filter(|(o, p)| {
                        *o != unit && (p.members.contains(unit) || p.joining.contains(unit))
                    })
                    .map(|(o, _)| o.clone())
                    .collect();
                plan.push((rel.id, mine, others));
            }
            Ok(plan)
        })?;
        for (rel, mine, others) in plan {
            for o in others {
                self.enqueue(
                    &o,
                    Hook::RelationDeparted {
                        rel,
                        remote: unit.to_owned(),
                        departing: unit.to_owned(),
                    },
                );
            }
            for r in mine {
                self.enqueue(
                    unit,
                    Hook::RelationDeparted {
                        rel,
                        remote: r,
                        departing: unit.to_owned(),
                    },
                );
            }
            let peer = self.with_model(|m| m.relations.get(&rel).is_some_and(Relation::is_peer));
            if !peer {
                self.enqueue(unit, Hook::RelationBroken(rel));
            }
        }
        self.enqueue(unit, Hook::Stop);
        self.enqueue(unit, Hook::Remove);
        self.queue.push_back(Queued::FinalizeUnit(unit.to_owned()));
        Ok(())
    }

    /// Remove an application (`juju remove-application`): every unit is torn down as in
    /// [`Simulator::remove_unit`]; related units see departed for each of its units, then
    /// relation-broken; then the application and its relations are dropped. Settles.
    pub fn remove_application(&mut self, app: &str) -> Result<()> {
        let (units, rels) = self.with_model_mut(|m| -> Result<(Vec<String>, Vec<u32>)> {
            if !m.apps.contains_key(app) {
                return Err(SimError::AppNotFound(app.to_owned()));
            }
            let units = Self::app_units_alive(m, app);
            let mut rels = Vec::new();
            for rel in m.relations.values_mut() {
                if rel.side_of(app).is_some() && !rel.is_peer() && !rel.dying {
                    rel.dying = true;
                    rels.push(rel.id);
                }
            }
            Ok((units, rels))
        })?;
        for u in &units {
            self.queue_unit_removal(u)?;
        }
        for rel in rels {
            let remote_units: Vec<String> = self.with_model(|m| {
                m.relations
                    .get(&rel)
                    .map(|r| {
                        r.scope
                            .iter()
                            .filter(|(u, p)| {
                                !p.broken && m.units.get(*u).is_some_and(|x| x.app != app)
                            })
                            .map(|(u, _)| u.clone())
                            .collect()
                    })
                    .unwrap_or_default()
            });
            for u in remote_units {
                self.enqueue(&u, Hook::RelationBroken(rel));
            }
            self.queue.push_back(Queued::FinalizeRelation(rel));
        }
        self.queue.push_back(Queued::FinalizeApp(app.to_owned()));
        self.settle().map(|_| ())
    }

    /// Remove the relation between two applications (`juju remove-relation a b`): every unit
    /// gets departed for each remote unit, then broken. Settles.
    pub fn remove_relation(&mut self, a: &str, b: &str) -> Result<()> {
        let (app_a, _) = split_endpoint(a);
        let (app_b, _) = split_endpoint(b);
        let id = self.relation_id(app_a, app_b).ok_or_else(|| {
            SimError::Relation(format!("relation between {a:?} and {b:?} not found"))
        })?;
        self.remove_relation_id(id)
    }

    /// Remove a relation by id.
    pub fn remove_relation_id(&mut self, id: u32) -> Result<()> {
        let plan = self.with_model_mut(|m| -> Result<Vec<(String, Vec<String>)>> {
            let rel = m
                .relations
                .get_mut(&id)
                .ok_or_else(|| SimError::Relation(format!("relation {id} not found")))?;
            if rel.is_peer() {
                return Err(SimError::Relation("cannot remove a peer relation".into()));
            }
            rel.dying = true;
            Ok(rel
                .scope
                .iter()
                .filter(|(_, p)| !p.broken)
                .map(|(u, p)| (u.clone(), p.members.union(&p.joining).cloned().collect()))
                .collect())
        })?;
        for (unit, remotes) in plan {
            for r in remotes {
                self.enqueue(
                    &unit,
                    Hook::RelationDeparted {
                        rel: id,
                        remote: r.clone(),
                        departing: r,
                    },
                );
            }
            self.enqueue(&unit, Hook::RelationBroken(id));
        }
        self.queue.push_back(Queued::FinalizeRelation(id));
        self.settle().map(|_| ())
    }

    /// Change config (`juju config app k=v`; `null` resets to the default). Queues
    /// config-changed on every unit if the effective config changed, and settles.
    pub fn set_config(&mut self, app: &str, values: BTreeMap<String, Json>) -> Result<()> {
        let units = self.with_model_mut(|m| -> Result<Vec<String>> {
            let a = m
                .apps
                .get_mut(app)
                .ok_or_else(|| SimError::AppNotFound(app.to_owned()))?;
            validate_config(&a.charm, &values)?;
            let before = a.effective_config();
            for (k, v) in values {
                if v.is_null() {
                    a.config.remove(&k);
                } else {
                    a.config.insert(k, v);
                }
            }
            if a.effective_config() == before {
                return Ok(Vec::new());
            }
            Ok(Self::app_units_alive(m, app))
        })?;
        for u in units {
            self.enqueue(&u, Hook::ConfigChanged);
        }
        self.settle().map(|_| ())
    }

    /// Upgrade an application's charm (`juju refresh --path`), optionally from a new dir:
    /// upgrade-charm then config-changed on every unit. Settles.
    pub fn upgrade_charm(&mut self, app: &str, charm_dir: Option<PathBuf>) -> Result<()> {
        let units = self.with_model_mut(|m| -> Result<Vec<String>> {
            let a = m
                .apps
                .get_mut(app)
                .ok_or_else(|| SimError::AppNotFound(app.to_owned()))?;
            let dir = charm_dir.unwrap_or_else(|| a.charm.dir.clone());
            a.charm = Charm::load(&dir)?;
            Ok(Self::app_units_alive(m, app))
        })?;
        for u in units {
            self.enqueue(&u, Hook::UpgradeCharm);
            self.enqueue(&u, Hook::ConfigChanged);
        }
        self.settle().map(|_| ())
    }

    /// Make `unit` the leader of its application, as Juju does when the leader's lease lapses:
    /// leader-elected on `unit`; with [`super::SimOptions::leader_settings_changed`] (Juju
    /// <= 3.6) leader-settings-changed on every other alive unit of the application, the one
    /// that lost leadership included; in Juju 4 the former leader gets no hook and learns it
    /// from `is-leader` in its next one. Settles.
    pub fn set_leader(&mut self, unit: &str) -> Result<()> {
        let others = self.with_model_mut(|m| -> Result<Vec<String>> {
            let app = m
                .units
                .get(unit)
                .ok_or_else(|| SimError::UnitNotFound(unit.to_owned()))?
                .app
                .clone();
            if let Some(a) = m.apps.get_mut(&app) {
                a.leader = Some(unit.to_owned());
            }
            Ok(Self::app_units_alive(m, &app)
                .into_iter()
                .filter(|u| u != unit)
                .collect())
        })?;
        self.enqueue(unit, Hook::LeaderElected);
        self.tell_minions(&others);
        self.settle().map(|_| ())
    }

    /// leader-settings-changed on `units` (new minions of a leadership change) when the
    /// simulated Juju sends it ([`super::SimOptions::leader_settings_changed`]).
    pub(super) fn tell_minions(&mut self, units: &[String]) {
        if !self.opts.leader_settings_changed {
            return;
        }
        for u in units {
            self.enqueue(u, Hook::LeaderSettingsChanged);
        }
    }

    /// Run update-status on every unit (or the units of `app`). Settles.
    pub fn update_status(&mut self, app: Option<&str>) -> Result<()> {
        let units: Vec<String> = self.with_model(|m| {
            m.apps
                .keys()
                .filter(|a| app.is_none_or(|x| x == *a))
                .flat_map(|a| Self::app_units_alive(m, a))
                .collect()
        });
        for u in units {
            self.enqueue(&u, Hook::UpdateStatus);
        }
        self.settle().map(|_| ())
    }

    /// Queue an arbitrary hook on a unit without settling (for tests of unusual orders).
    pub fn queue_hook(&mut self, unit: &str, hook: Hook) {
        self.enqueue(unit, hook);
    }
}
