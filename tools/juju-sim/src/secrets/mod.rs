//! Juju secrets in the model (Juju 3.6): ids, owners, revisions, grants and each reader's
//! tracking record. The hook tools live in `tools/secret_*.rs`; committing a hook's secret
//! changes and the secret hooks they cause live in `sim/secrets.rs`.

pub mod clock;
pub mod content;
pub mod id;
pub mod pending;

use std::collections::{BTreeMap, BTreeSet};

pub use id::{SecretId, parse_uri};

/// Who owns a secret: an application (managed by its leader) or one unit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretOwner {
    /// Application-owned (`--owner application`, the default).
    App(String),
    /// Unit-owned (`--owner unit`).
    Unit(String),
}

impl SecretOwner {
    /// `application` or `unit`, as `secret-info-get` prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            SecretOwner::App(_) => "application",
            SecretOwner::Unit(_) => "unit",
        }
    }

    /// Whether `unit` (of `app`, leader or not) manages secrets of this owner.
    pub fn managed_by(&self, unit: &str, app: &str, leader: bool) -> bool {
        match self {
            SecretOwner::App(a) => a == app && leader,
            SecretOwner::Unit(u) => u == unit,
        }
    }

    /// The label namespace entity of this owner (`app` or `unit` name).
    pub fn entity(&self) -> LabelEntity {
        match self {
            SecretOwner::App(a) => LabelEntity::App(a.clone()),
            SecretOwner::Unit(u) => LabelEntity::Unit(u.clone()),
        }
    }
}

/// An entity that holds labels (owner labels of its secrets, consumer labels of a unit).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LabelEntity {
    /// An application (labels of its app-owned secrets).
    App(String),
    /// A unit (labels of its unit-owned secrets and its consumer labels).
    Unit(String),
}

/// A rotation policy (`--rotate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RotatePolicy {
    /// `never`
    Never,
    /// `hourly`
    Hourly,
    /// `daily`
    Daily,
    /// `weekly`
    Weekly,
    /// `monthly`
    Monthly,
    /// `quarterly`
    Quarterly,
    /// `yearly`
    Yearly,
}

impl RotatePolicy {
    /// Parse a policy name (`rotate policy "x" not valid` otherwise).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "never" => RotatePolicy::Never,
            "hourly" => RotatePolicy::Hourly,
            "daily" => RotatePolicy::Daily,
            "weekly" => RotatePolicy::Weekly,
            "monthly" => RotatePolicy::Monthly,
            "quarterly" => RotatePolicy::Quarterly,
            "yearly" => RotatePolicy::Yearly,
            _ => return None,
        })
    }

    /// The policy's name.
    pub fn name(self) -> &'static str {
        match self {
            RotatePolicy::Never => "never",
            RotatePolicy::Hourly => "hourly",
            RotatePolicy::Daily => "daily",
            RotatePolicy::Weekly => "weekly",
            RotatePolicy::Monthly => "monthly",
            RotatePolicy::Quarterly => "quarterly",
            RotatePolicy::Yearly => "yearly",
        }
    }

    /// Seconds between rotations (`None` for `never`) [core/secrets/rotate.go].
    pub fn interval(self) -> Option<i64> {
        const H: i64 = 3600;
        match self {
            RotatePolicy::Never => None,
            RotatePolicy::Hourly => Some(H),
            RotatePolicy::Daily => Some(24 * H),
            RotatePolicy::Weekly => Some(7 * 24 * H),
            RotatePolicy::Monthly => Some(30 * 24 * H),
            RotatePolicy::Quarterly => Some(90 * 24 * H),
            RotatePolicy::Yearly => Some(365 * 24 * H),
        }
    }
}

/// Retry delay of `secret-rotate` and `secret-expired` while the charm has not resolved them.
pub const RETRY_SECS: i64 = 300;

/// Secret content: key -> base64 of the value (as Juju stores it).
pub type Content = BTreeMap<String, String>;

/// One revision of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// Content (base64 values).
    pub content: Content,
    /// Expiry (sim wall-clock seconds), if any.
    pub expire: Option<i64>,
    /// `secret-expired` is due again at this time (after the first firing).
    pub expire_retry: Option<i64>,
}

/// Where a grant applies: a whole application or one unit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantTarget {
    /// All units of an application.
    App(String),
    /// One unit.
    Unit(String),
}

impl GrantTarget {
    /// The Juju tag (`application-mysql`, `unit-mysql-0`).
    pub fn tag(&self) -> String {
        match self {
            GrantTarget::App(a) => format!("application-{a}"),
            GrantTarget::Unit(u) => format!("unit-{}", u.replace('/', "-")),
        }
    }
}

/// A committed secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The 20-character id.
    pub id: SecretId,
    /// Owner.
    pub owner: SecretOwner,
    /// Owner label.
    pub label: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Rotation policy (`None`: never set).
    pub rotate: Option<RotatePolicy>,
    /// Next `secret-rotate` (sim wall-clock seconds).
    pub next_rotate: Option<i64>,
    /// Revisions still stored, by number.
    pub revisions: BTreeMap<u32, Revision>,
    /// The latest revision number.
    pub latest: u32,
    /// View grants: target -> relation id the grant is scoped to.
    pub grants: BTreeMap<GrantTarget, u32>,
    /// Revisions already reported obsolete (`secret-remove` queued once each).
    pub obsolete: BTreeSet<u32>,
}

impl Secret {
    /// The latest revision's expiry.
    pub fn latest_expire(&self) -> Option<i64> {
        self.revisions.get(&self.latest).and_then(|r| r.expire)
    }
}

/// A reader's record of a secret (owner, peers and grantees alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracking {
    /// The revision a plain `secret-get` returns.
    pub current: u32,
    /// The reader's consumer label.
    pub label: Option<String>,
    /// The latest revision this unit was told about with `secret-changed` (or first read).
    pub notified: u32,
}

/// A secret hook the model wants run; the simulator drains these into its queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretEvent {
    /// `secret-changed` on a reader.
    Changed {
        /// The reader.
        unit: String,
        /// The secret.
        id: SecretId,
    },
    /// `secret-remove` on the owner (the leader for app secrets) for an obsolete revision.
    Remove {
        /// The owner unit.
        unit: String,
        /// The secret.
        id: SecretId,
        /// The obsolete revision.
        revision: u32,
    },
}

/// All secrets of the model, with every reader's tracking record. Records are indexed by
/// unit, by secret and by tracked revision so that each hook-tool call costs O(log n) in the
/// model size (a reader's first read, refresh, label; obsolescence checks).
#[derive(Debug, Clone, Default)]
pub struct SecretStore {
    /// Secrets by id.
    pub secrets: BTreeMap<SecretId, Secret>,
    /// Tracking records by (reader unit, secret id).
    tracking: BTreeMap<(String, SecretId), Tracking>,
    /// The same records by (secret id, reader unit).
    by_secret: BTreeSet<(SecretId, String)>,
    /// How many readers track each (secret, revision).
    counts: BTreeMap<(SecretId, u32), usize>,
    /// Secret hooks to queue.
    pub outbox: Vec<SecretEvent>,
}

impl SecretStore {
    /// A reader's record.
    pub fn tracking(&self, unit: &str, id: &SecretId) -> Option<&Tracking> {
        self.tracking.get(&(unit.to_owned(), id.clone()))
    }

    /// Every record, by (unit, secret).
    pub fn all_tracking(&self) -> impl Iterator<Item = (&(String, SecretId), &Tracking)> {
        self.tracking.iter()
    }

    /// A unit's records.
    pub fn unit_tracking<'a>(
        &'a self,
        unit: &'a str,
    ) -> impl Iterator<Item = (&'a SecretId, &'a Tracking)> + 'a {
        self.tracking
            .range((unit.to_owned(), SecretId::min())..)
            .take_while(move |((u, _), _)| u == unit)
            .map(|((_, id), t)| (id, t))
    }

    /// The units that track a secret.
    pub fn readers(&self, id: &SecretId) -> Vec<String> {
        self.by_secret
            .range((id.clone(), String::new())..)
            .take_while(|(s, _)| s == id)
            .map(|(_, u)| u.clone())
            .collect()
    }

    fn count(&mut self, id: &SecretId, revision: u32, delta: isize) {
        let key = (id.clone(), revision);
        let n = self.counts.get(&key).copied().unwrap_or(0);
        let n = n.saturating_add_signed(delta);
        if n == 0 {
            self.counts.remove(&key);
        } else {
            self.counts.insert(key, n);
        }
    }

    /// Create or replace a reader's record.
    pub fn track(&mut self, unit: &str, id: &SecretId, record: Tracking) {
        let key = (unit.to_owned(), id.clone());
        if let Some(old) = self.tracking.get(&key) {
            let current = old.current;
            self.count(id, current, -1);
        }
        self.count(id, record.current, 1);
        self.by_secret.insert((id.clone(), unit.to_owned()));
        self.tracking.insert(key, record);
    }

    /// Change a reader's record in place (the tracked-revision index follows).
    pub fn update_tracking(&mut self, unit: &str, id: &SecretId, f: impl FnOnce(&mut Tracking)) {
        if let Some(mut t) = self.tracking(unit, id).cloned() {
            f(&mut t);
            self.track(unit, id, t);
        }
    }

    /// Drop every record of a unit; returns the secrets it tracked.
    pub fn untrack_unit(&mut self, unit: &str) -> Vec<SecretId> {
        let ids: Vec<SecretId> = self.unit_tracking(unit).map(|(id, _)| id.clone()).collect();
        for id in &ids {
            if let Some(t) = self.tracking.remove(&(unit.to_owned(), id.clone())) {
                self.count(id, t.current, -1);
            }
            self.by_secret.remove(&(id.clone(), unit.to_owned()));
        }
        ids
    }

    /// Delete a whole secret and every reader's record.
    pub fn delete(&mut self, id: &SecretId) {
        self.secrets.remove(id);
        for unit in self.readers(id) {
            self.tracking.remove(&(unit.clone(), id.clone()));
            self.by_secret.remove(&(id.clone(), unit));
        }
        let revs: Vec<(SecretId, u32)> = self
            .counts
            .range((id.clone(), 0)..)
            .take_while(|((s, _), _)| s == id)
            .map(|(k, _)| k.clone())
            .collect();
        for k in revs {
            self.counts.remove(&k);
        }
    }

    /// Mark revisions nobody tracks (other than the latest) obsolete, queueing one
    /// `secret-remove` each to `owner_unit` [state/secrets.go `markObsoleteRevisionOps`].
    pub fn mark_obsolete(&mut self, id: &SecretId, owner_unit: Option<&str>) {
        let Some(s) = self.secrets.get(id) else {
            return;
        };
        let newly: Vec<u32> = s
            .revisions
            .keys()
            .copied()
            .filter(|r| {
                *r != s.latest
                    && !s.obsolete.contains(r)
                    && !self.counts.contains_key(&(id.clone(), *r))
            })
            .collect();
        let Some(s) = self.secrets.get_mut(id) else {
            return;
        };
        for revision in newly {
            s.obsolete.insert(revision);
            if let Some(unit) = owner_unit {
                self.outbox.push(SecretEvent::Remove {
                    unit: unit.to_owned(),
                    id: id.clone(),
                    revision,
                });
            }
        }
    }

    /// Whether `label` is taken in `entity`'s namespace (an app's labels clash with its
    /// units' labels and vice versa), ignoring secret `except`. `app_of` names a unit's
    /// application, `units_of` an application's units.
    pub fn label_taken(
        &self,
        entity: &LabelEntity,
        app_of: &dyn Fn(&str) -> Option<String>,
        units_of: &dyn Fn(&str) -> Vec<String>,
        label: &str,
        except: Option<&SecretId>,
    ) -> bool {
        let clashes = |other: &LabelEntity| -> bool {
            match (entity, other) {
                (a, b) if a == b => true,
                (LabelEntity::App(a), LabelEntity::Unit(u))
                | (LabelEntity::Unit(u), LabelEntity::App(a)) => {
                    app_of(u).as_deref() == Some(a.as_str())
                }
                _ => false,
            }
        };
        let owner_clash = self.secrets.values().any(|s| {
            Some(&s.id) != except && s.label.as_deref() == Some(label) && clashes(&s.owner.entity())
        });
        let units = match entity {
            LabelEntity::Unit(u) => vec![u.clone()],
            LabelEntity::App(a) => units_of(a),
        };
        let consumer_clash = units.iter().any(|u| {
            self.unit_tracking(u)
                .any(|(id, t)| Some(id) != except && t.label.as_deref() == Some(label))
        });
        owner_clash || consumer_clash
    }

    /// Whether `unit` of `app` may read secret `s` (owner, peer of an app owner, or granted
    /// on a live relation).
    pub fn can_read(s: &Secret, unit: &str, app: &str) -> bool {
        match &s.owner {
            SecretOwner::App(a) if a == app => return true,
            SecretOwner::Unit(u) if u == unit => return true,
            _ => {}
        }
        s.grants.contains_key(&GrantTarget::App(app.to_owned()))
            || s.grants.contains_key(&GrantTarget::Unit(unit.to_owned()))
    }
}
