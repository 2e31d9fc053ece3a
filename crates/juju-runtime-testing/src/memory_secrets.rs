//! Secrets for the in-memory backend: the unit's own view of Juju's secret store, with the rules
//! charm code runs into (the same texts the simulator and Juju print):
//! - only the leader adds, sets, grants, revokes, removes or lists application-owned secrets
//!   (`NotLeader`); other units read them;
//! - a consumer reads only what it was granted (`PermissionDenied`); unknown ids are `not found`;
//! - a reader tracks a revision: the first read tracks the latest, `--refresh` moves to the
//!   latest, `--peek` reads the latest without tracking;
//! - an identical `secret-set` makes no revision; content is replaced, not merged.
//!
//! There is no commit step (as for relation data): writes are there at once to inspect.

use crate::memory::{MemoryBackend, Model};
use juju_runtime::{
    HookToolError, RelationId, RotatePolicy, SecretBackend, SecretContent, SecretId, SecretInfo,
    SecretOptions, SecretOwner, SecretRead, SecretRef, check_secret_content,
};
use std::collections::BTreeMap;

/// One secret as the unit under test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySecret {
    /// `application`/`unit` owned by this unit's app/unit, or `None`: owned by another
    /// application that granted it to this unit.
    pub owner: Option<SecretOwner>,
    /// Owner label (own secrets) or consumer label.
    pub label: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Expiry as passed.
    pub expire: Option<String>,
    /// Rotation policy.
    pub rotate: Option<RotatePolicy>,
    /// Revisions still present: revision number → content.
    pub revisions: BTreeMap<u32, SecretContent>,
    /// The latest revision number.
    pub latest: u32,
    /// The revision this unit tracks; `None` before its first read.
    pub tracked: Option<u32>,
    /// Grants made: relation and optional unit.
    pub grants: Vec<(RelationId, Option<String>)>,
    /// A consumer without a grant (to test `permission denied`).
    pub granted: bool,
}

impl MemorySecret {
    /// A secret of another application, granted to this unit, at revision 1.
    pub fn consumed(content: SecretContent) -> Self {
        MemorySecret {
            owner: None,
            label: None,
            description: None,
            expire: None,
            rotate: None,
            revisions: BTreeMap::from([(1, content)]),
            latest: 1,
            tracked: None,
            grants: Vec::new(),
            granted: true,
        }
    }
}

/// The store: secrets by id, plus the counter that makes new ids.
#[derive(Debug, Default)]
pub(crate) struct MemorySecrets {
    secrets: BTreeMap<SecretId, MemorySecret>,
    next: u64,
}

const XID_ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

impl MemorySecrets {
    fn new_id(&mut self) -> SecretId {
        self.next += 1;
        let mut n = self.next;
        let mut id = [b'0'; 20];
        for slot in id.iter_mut().rev() {
            *slot = XID_ALPHABET[(n % 32) as usize];
            n /= 32;
        }
        // Always valid: 20 characters of the xid alphabet.
        SecretId::parse(&String::from_utf8_lossy(&id)).unwrap_or_else(|_| unreachable!())
    }
}

fn not_found(tool: &str, shown: &str) -> HookToolError {
    HookToolError::Other {
        tool: tool.to_owned(),
        status: "exit code 1".to_owned(),
        stderr: format!("secret {shown:?} not found"),
    }
}

fn not_leader(tool: &str, m: &Model) -> HookToolError {
    HookToolError::NotLeader {
        tool: tool.to_owned(),
        stderr: format!(
            "{:?} is not leader of {:?}: this unit is not the leader",
            m.unit, m.app
        ),
    }
}

/// Finds a secret by reference; label lookups match owner and consumer labels alike.
fn find(m: &Model, secret: &SecretRef) -> Option<SecretId> {
    match secret {
        SecretRef::Id(id) | SecretRef::IdWithLabel(id, _) => {
            m.secrets.secrets.contains_key(id).then(|| id.clone())
        }
        SecretRef::Label(l) => m
            .secrets
            .secrets
            .iter()
            .find(|(_, s)| s.label.as_deref() == Some(l.as_str()))
            .map(|(id, _)| id.clone()),
    }
}

/// The secret for a management call (set, grant, revoke, remove), with the ownership checks.
fn managed<'m>(
    tool: &str,
    m: &'m mut Model,
    id: &SecretId,
) -> Result<&'m mut MemorySecret, HookToolError> {
    let leader = m.leader;
    let denied = match m.secrets.secrets.get(id) {
        None => return Err(not_found(tool, &id.uri())),
        Some(s) => match s.owner {
            None => Some(HookToolError::PermissionDenied {
                tool: tool.to_owned(),
                stderr: "permission denied".to_owned(),
            }),
            Some(SecretOwner::Application) if !leader => Some(not_leader(tool, m)),
            _ => None,
        },
    };
    if let Some(e) = denied {
        return Err(e);
    }
    m.secrets
        .secrets
        .get_mut(id)
        .ok_or_else(|| not_found(tool, &id.uri()))
}

impl MemoryBackend {
    /// Seeds a secret with a known id (e.g. one another application granted to this unit).
    pub fn secret(self, id: &SecretId, secret: MemorySecret) -> Self {
        self.with(|m| {
            m.secrets.secrets.insert(id.clone(), secret);
        })
    }

    /// Publishes a new revision of a seeded secret, as its remote owner would.
    pub fn publish_revision(&self, id: &SecretId, content: SecretContent) {
        if let Some(s) = self.model().secrets.secrets.get_mut(id) {
            s.latest += 1;
            let latest = s.latest;
            s.revisions.insert(latest, content);
        }
    }

    /// One secret's current view (content, revisions, tracking, grants).
    pub fn secret_view(&self, id: &SecretId) -> Option<MemorySecret> {
        self.model().secrets.secrets.get(id).cloned()
    }

    /// Every secret id this unit knows of, with its view.
    pub fn secrets(&self) -> BTreeMap<SecretId, MemorySecret> {
        self.model().secrets.secrets.clone()
    }
}

impl SecretBackend for MemoryBackend {
    fn secret_add(
        &self,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<SecretId, HookToolError> {
        let tool = "secret-add";
        let mut m = self.call(tool);
        check_secret_content(tool, content)?;
        if options.owner == SecretOwner::Application && !m.leader {
            return Err(not_leader(tool, &m));
        }
        if let Some(l) = &options.label
            && m.secrets
                .secrets
                .values()
                .any(|s| s.owner.is_some() && s.label.as_ref() == Some(l))
        {
            return Err(HookToolError::Other {
                tool: tool.to_owned(),
                status: "exit code 1".to_owned(),
                stderr: format!("secret with label {l:?} already exists"),
            });
        }
        let id = m.secrets.new_id();
        let secret = MemorySecret {
            owner: Some(options.owner),
            label: options.label.clone(),
            description: options.description.clone(),
            expire: options.expire.clone(),
            rotate: options.rotate,
            revisions: BTreeMap::from([(1, content.clone())]),
            latest: 1,
            tracked: None,
            grants: Vec::new(),
            granted: true,
        };
        m.secrets.secrets.insert(id.clone(), secret);
        Ok(id)
    }

    fn secret_get(
        &self,
        secret: &SecretRef,
        keys: &[&str],
        read: SecretRead,
    ) -> Result<SecretContent, HookToolError> {
        let tool = "secret-get";
        let mut m = self.call(tool);
        let shown = match secret {
            SecretRef::Id(id) | SecretRef::IdWithLabel(id, _) => id.uri(),
            SecretRef::Label(l) => l.clone(),
        };
        let Some(id) = find(&m, secret) else {
            return Err(match secret {
                SecretRef::Label(l) => HookToolError::Other {
                    tool: tool.to_owned(),
                    status: "exit code 1".to_owned(),
                    stderr: format!("consumer label {l:?} not found"),
                },
                _ => not_found(tool, &shown),
            });
        };
        let s = m
            .secrets
            .secrets
            .get_mut(&id)
            .ok_or_else(|| not_found(tool, &shown))?;
        if !s.granted {
            return Err(HookToolError::PermissionDenied {
                tool: tool.to_owned(),
                stderr: "permission denied".to_owned(),
            });
        }
        if let SecretRef::IdWithLabel(_, l) = secret {
            s.label = Some(l.clone());
        }
        let revision = match (read, s.tracked) {
            (SecretRead::Peek, _) => s.latest,
            (SecretRead::Refresh, _) | (SecretRead::Tracked, None) => {
                s.tracked = Some(s.latest);
                s.latest
            }
            (SecretRead::Tracked, Some(t)) => t,
        };
        let content = s
            .revisions
            .get(&revision)
            .ok_or_else(|| not_found(tool, &shown))?;
        keys.iter()
            .map(|k| match content.get(*k) {
                Some(v) => Ok(((*k).to_owned(), v.clone())),
                None => Err(HookToolError::Other {
                    tool: tool.to_owned(),
                    status: "exit code 1".to_owned(),
                    stderr: format!("secret key value {k:?} not found"),
                }),
            })
            .collect()
    }

    fn secret_info_get(&self, secret: &SecretRef) -> Result<Option<SecretInfo>, HookToolError> {
        let m = self.call("secret-info-get");
        let Some(id) = find(&m, secret) else {
            return Ok(None);
        };
        let Some(s) = m.secrets.secrets.get(&id) else {
            return Ok(None);
        };
        let owner = match s.owner {
            None => return Ok(None),
            Some(SecretOwner::Application) if !m.leader => return Ok(None),
            Some(SecretOwner::Application) => "application",
            Some(SecretOwner::Unit) => "unit",
        };
        Ok(Some(SecretInfo {
            id,
            revision: s.latest,
            label: s.label.clone(),
            owner: owner.to_owned(),
            description: s.description.clone(),
            rotation: s.rotate,
            expiry: s.expire.clone(),
        }))
    }

    fn secret_set(
        &self,
        id: &SecretId,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<(), HookToolError> {
        let tool = "secret-set";
        let mut m = self.call(tool);
        check_secret_content(tool, content)?;
        let s = managed(tool, &mut m, id)?;
        if s.revisions.get(&s.latest) != Some(content) {
            s.latest += 1;
            let latest = s.latest;
            s.revisions.insert(latest, content.clone());
            s.expire = options.expire.clone();
        }
        if let Some(l) = &options.label {
            s.label = Some(l.clone());
        }
        if let Some(d) = &options.description {
            s.description = Some(d.clone());
        }
        if let Some(r) = options.rotate {
            s.rotate = Some(r);
        }
        Ok(())
    }

    fn secret_grant(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError> {
        let tool = "secret-grant";
        let mut m = self.call(tool);
        let remote_app = m
            .relations
            .get(relation)
            .map(|r| r.remote_app.clone())
            .ok_or_else(|| HookToolError::RelationNotFound {
                tool: tool.to_owned(),
                stderr: format!("invalid value \"{relation}\" for option -r: relation not found"),
            })?;
        if let Some(u) = unit
            && u.split_once('/').map(|(a, _)| a) != Some(remote_app.as_str())
        {
            return Err(HookToolError::Usage {
                tool: tool.to_owned(),
                stderr: format!(
                    "cannot specify unit {u:?} in relation to application {remote_app:?}"
                ),
            });
        }
        let s = managed(tool, &mut m, id)?;
        let grant = (relation.clone(), unit.map(str::to_owned));
        if !s.grants.contains(&grant) {
            s.grants.push(grant);
        }
        Ok(())
    }

    fn secret_revoke(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError> {
        let tool = "secret-revoke";
        let mut m = self.call(tool);
        let s = managed(tool, &mut m, id)?;
        let grant = (relation.clone(), unit.map(str::to_owned));
        s.grants.retain(|g| *g != grant);
        Ok(())
    }

    fn secret_remove(&self, id: &SecretId, revision: Option<u32>) -> Result<(), HookToolError> {
        let tool = "secret-remove";
        let mut m = self.call(tool);
        let s = managed(tool, &mut m, id)?;
        match revision.filter(|r| *r > 0) {
            Some(r) => {
                if s.revisions.remove(&r).is_none() {
                    return Err(HookToolError::Other {
                        tool: tool.to_owned(),
                        status: "exit code 1".to_owned(),
                        stderr: format!("revision {r} of secret {:?} not found", id.uri()),
                    });
                }
            }
            None => {
                m.secrets.secrets.remove(id);
            }
        }
        Ok(())
    }

    fn secret_ids(&self) -> Result<Vec<SecretId>, HookToolError> {
        let m = self.call("secret-ids");
        Ok(m.secrets
            .secrets
            .iter()
            .filter(|(_, s)| match s.owner {
                Some(SecretOwner::Application) => m.leader,
                Some(SecretOwner::Unit) => true,
                None => false,
            })
            .map(|(id, _)| id.clone())
            .collect())
    }
}
