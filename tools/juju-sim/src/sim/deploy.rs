//! Deploying applications and adding units: the start-up hook sequence and the joins with
//! the units already related.

use super::hooks::Hook;
use super::ops::validate_config;
use super::{ExtrasFn, Simulator, unit_number};
use crate::charm::{Charm, Role};
use crate::error::{Result, SimError};
use crate::model::{
    Application, Life, Participation, Relation, RelationSide, Status, Unit, UnitExtras,
};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

/// What to deploy.
#[derive(Clone)]
pub struct DeploySpec {
    /// Application name.
    pub app: String,
    /// Charm directory.
    pub charm_dir: PathBuf,
    /// Number of units.
    pub units: u32,
    /// Config values (checked against config.yaml).
    pub config: BTreeMap<String, Json>,
    /// Test-only extras for every unit; `{unit}`, `{unit_dash}` (`app-0`) and `{n}` in env
    /// values, PATH entries and prefix arguments are replaced per unit.
    pub extras: UnitExtras,
    /// Optional per-unit extras function, applied after `extras` (its env/path/prefix win).
    pub extras_fn: Option<ExtrasFn>,
}

impl std::fmt::Debug for DeploySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeploySpec")
            .field("app", &self.app)
            .field("charm_dir", &self.charm_dir)
            .field("units", &self.units)
            .finish()
    }
}

impl DeploySpec {
    /// Deploy `app` from `charm_dir` with one unit.
    pub fn new(app: &str, charm_dir: impl Into<PathBuf>) -> Self {
        DeploySpec {
            app: app.to_owned(),
            charm_dir: charm_dir.into(),
            units: 1,
            config: BTreeMap::new(),
            extras: UnitExtras::default(),
            extras_fn: None,
        }
    }
    /// Number of units.
    pub fn units(mut self, n: u32) -> Self {
        self.units = n;
        self
    }
    /// One config value.
    pub fn config(mut self, key: &str, value: impl Into<Json>) -> Self {
        self.config.insert(key.to_owned(), value.into());
        self
    }
    /// One extra environment variable for every unit (templated, see [`DeploySpec::extras`]).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.extras.env.insert(key.to_owned(), value.to_owned());
        self
    }
    /// One extra PATH directory for every unit.
    pub fn path_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extras.path.push(dir.into());
        self
    }
    /// A command prefix for every unit's handler.
    pub fn command_prefix(mut self, argv: &[&str]) -> Self {
        self.extras.command_prefix = argv.iter().map(|s| s.to_string()).collect();
        self
    }
    /// Per-unit extras computed from the unit name.
    pub fn extras_fn(mut self, f: impl Fn(&str) -> UnitExtras + Send + Sync + 'static) -> Self {
        self.extras_fn = Some(Arc::new(f));
        self
    }
}

fn template(s: &str, unit: &str) -> String {
    s.replace("{unit}", unit)
        .replace("{unit_dash}", &unit.replace('/', "-"))
        .replace("{n}", &unit_number(unit).to_string())
}

fn unit_extras(base: &UnitExtras, f: Option<&ExtrasFn>, unit: &str) -> UnitExtras {
    let mut e = UnitExtras {
        env: base
            .env
            .iter()
            .map(|(k, v)| (k.clone(), template(v, unit)))
            .collect(),
        path: base
            .path
            .iter()
            .map(|p| PathBuf::from(template(&p.display().to_string(), unit)))
            .collect(),
        command_prefix: base
            .command_prefix
            .iter()
            .map(|a| template(a, unit))
            .collect(),
    };
    if let Some(f) = f {
        let more = f(unit);
        e.env.extend(more.env);
        e.path.extend(more.path);
        if !more.command_prefix.is_empty() {
            e.command_prefix = more.command_prefix;
        }
    }
    e
}

fn address_for(machine: u32) -> String {
    let host = machine % 254 + 1;
    let net = machine / 254;
    format!("10.{}.{}.{host}", (net / 256) % 256, net % 256)
}

pub(super) fn juju_keys(address: &str) -> crate::model::Bag {
    [
        ("private-address", address.to_owned()),
        ("ingress-address", address.to_owned()),
        ("egress-subnets", format!("{address}/32")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

impl Simulator {
    /// Deploy an application (`juju deploy`), run install → leader-elected → config-changed →
    /// start on each unit (and peer relation hooks), and settle.
    pub fn deploy(&mut self, spec: DeploySpec) -> Result<Vec<String>> {
        let charm = Charm::load(&spec.charm_dir)?;
        validate_config(&charm, &spec.config)?;
        let peers: Vec<(String, String)> = charm
            .endpoints
            .values()
            .filter(|e| e.role == Role::Peers)
            .map(|e| (e.name.clone(), e.interface.clone()))
            .collect();
        self.with_model_mut(|m| {
            if m.apps.contains_key(&spec.app) {
                return Err(SimError::AppExists(spec.app.clone()));
            }
            m.apps.insert(
                spec.app.clone(),
                Application {
                    name: spec.app.clone(),
                    charm,
                    config: spec.config.clone(),
                    next_unit: 0,
                    leader: None,
                    status: None,
                    status_history: Vec::new(),
                    units: BTreeSet::new(),
                },
            );
            for (ep, interface) in peers {
                let id = m.next_relation_id;
                m.next_relation_id += 1;
                let side = RelationSide {
                    app: spec.app.clone(),
                    endpoint: ep,
                };
                m.relations.insert(
                    id,
                    Relation {
                        id,
                        interface,
                        sides: [side.clone(), side],
                        app_bags: [(spec.app.clone(), Default::default())].into(),
                        app_bag_versions: BTreeMap::new(),
                        unit_bags: BTreeMap::new(),
                        scope: BTreeMap::new(),
                        dying: false,
                        status_at: m.now,
                        joined: false,
                    },
                );
            }
            Ok(())
        })?;
        self.app_templates.insert(
            spec.app.clone(),
            (spec.extras.clone(), spec.extras_fn.clone()),
        );
        self.add_unit(&spec.app, spec.units)
    }

    /// Add `n` units to an application (`juju add-unit`) and settle. Returns the new unit names.
    pub fn add_unit(&mut self, app: &str, n: u32) -> Result<Vec<String>> {
        let (base, f) = self
            .app_templates
            .get(app)
            .cloned()
            .ok_or_else(|| SimError::AppNotFound(app.to_owned()))?;
        let mut created = Vec::new();
        for _ in 0..n {
            let name = self.with_model_mut(|m| -> Result<String> {
                let machine = m.next_machine;
                m.next_machine += 1;
                let a = m
                    .apps
                    .get_mut(app)
                    .ok_or_else(|| SimError::AppNotFound(app.to_owned()))?;
                let name = format!("{app}/{}", a.next_unit);
                a.next_unit += 1;
                a.units.insert(name.clone());
                let elect = a.leader.is_none();
                if elect {
                    a.leader = Some(name.clone());
                }
                let since = m.tick();
                let initial = Status::new("waiting", "agent initialising", since);
                let address = address_for(machine);
                m.units.insert(
                    name.clone(),
                    Unit {
                        name: name.clone(),
                        app: app.to_owned(),
                        machine: machine.to_string(),
                        address: address.clone(),
                        status: initial.clone(),
                        status_set_by_charm: false,
                        status_history: vec![initial],
                        status_at: m.now,
                        error: None,
                        workload_version: String::new(),
                        state: Default::default(),
                        ports: Default::default(),
                        life: Life::Alive,
                        started: false,
                        reboots: 0,
                        extras: unit_extras(&base, f.as_ref(), &name),
                    },
                );
                Ok(name)
            })?;
            created.push(name);
        }
        let mut joins = Vec::new();
        for name in &created {
            joins.push(self.queue_unit_start(name));
        }
        for (name, (app, rels)) in created.iter().zip(joins) {
            self.queue_unit_joins(name, &app, rels);
        }
        self.settle()?;
        Ok(created)
    }

    /// Enter scope of every relation of the unit's app and queue its start-up hooks; returns
    /// the app and the relations entered, for [`Simulator::queue_unit_joins`].
    fn queue_unit_start(&mut self, unit: &str) -> (String, Vec<u32>) {
        let (app, leader, rels) = self.with_model_mut(|m| {
            let app = m.units[unit].app.clone();
            let address = m.units[unit].address.clone();
            let leader = m.apps[&app].leader.as_deref() == Some(unit);
            let mut rels = Vec::new();
            for rel in m.relations.values_mut() {
                if rel.side_of(&app).is_none() || rel.dying {
                    continue;
                }
                rel.unit_bags.insert(unit.to_owned(), juju_keys(&address));
                rel.scope.insert(
                    unit.to_owned(),
                    Participation {
                        created: true,
                        ..Default::default()
                    },
                );
                rels.push(rel.id);
            }
            (app, leader, rels)
        });
        self.enqueue(unit, Hook::Install);
        for rel in &rels {
            self.enqueue(unit, Hook::RelationCreated(*rel));
        }
        if leader {
            self.enqueue(unit, Hook::LeaderElected);
        } else if self.opts.leader_settings_changed {
            self.enqueue(unit, Hook::LeaderSettingsChanged);
        }
        self.enqueue(unit, Hook::ConfigChanged);
        self.enqueue(unit, Hook::Start);
        (app, rels)
    }

    /// Queue the joins between a started unit and the remote units of each relation.
    fn queue_unit_joins(&mut self, unit: &str, app: &str, rels: Vec<u32>) {
        for rel in rels {
            // Pending app data of the remote side first, then joins both ways.
            let (remote_units, remote_app_written) = self.with_model(|m| {
                let r = &m.relations[&rel];
                let remote_app = r.remote_app(app).unwrap_or_default().to_owned();
                let units: Vec<String> = Self::app_units_alive(m, &remote_app)
                    .into_iter()
                    .filter(|u| u != unit && r.scope.contains_key(u))
                    .collect();
                let written = r.app_bag_versions.get(&remote_app).copied().unwrap_or(0) > 0
                    && !(r.is_peer() && m.apps[app].leader.as_deref() == Some(unit));
                (units, written)
            });
            if remote_app_written {
                self.enqueue(unit, Hook::RelationChanged(rel, None));
            }
            for r in &remote_units {
                self.queue_join(unit, rel, r);
            }
            for r in &remote_units {
                self.queue_join(r, rel, unit);
            }
        }
    }

    /// Queue joined + changed on `unit` for `remote` (once: not if already joined or joining).
    pub(super) fn queue_join(&mut self, unit: &str, rel: u32, remote: &str) {
        let fresh = self.with_model_mut(|m| {
            match m
                .relations
                .get_mut(&rel)
                .and_then(|r| r.scope.get_mut(unit))
            {
                Some(p) if !p.members.contains(remote) => p.joining.insert(remote.to_owned()),
                _ => false,
            }
        });
        if !fresh {
            return;
        }
        self.enqueue(unit, Hook::RelationJoined(rel, remote.to_owned()));
        self.enqueue(unit, Hook::RelationChanged(rel, Some(remote.to_owned())));
    }
}
