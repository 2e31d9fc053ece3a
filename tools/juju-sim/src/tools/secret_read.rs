//! `secret-get`, `secret-info-get`, `secret-ids` [jujuc/secret-get.go, secret-info-get.go,
//! secret-ids.go; apiserver/facades/agent/secretsmanager/secrets.go `getSecretContent`].
//!
//! Reads see this hook's pending creates and updates; a first read, `--peek`, `--refresh` and
//! `--label` change the model at once (they survive a failed hook).

use super::output::{check_format, check_yaml_json, emit, emit_typed};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::flags::{FORMAT, Flag, OUTPUT, parse};
use crate::secrets::clock::rfc3339;
use crate::secrets::content::decode;
use crate::secrets::{
    Content, GrantTarget, LabelEntity, RotatePolicy, SecretId, SecretOwner, SecretStore, Tracking,
    parse_uri,
};
use std::collections::BTreeMap;

/// Parse a secret URI argument (`secret URI "x" not valid`, exit 2).
pub(super) fn uri_arg(s: &str) -> Result<SecretId, ToolError> {
    parse_uri(s).ok_or_else(|| ToolError::Usage(format!("secret URI {s:?} not valid")))
}

/// One secret as this unit's hook metadata shows it (owned secrets, app secrets on the
/// leader only, pending creates and updates folded in, pending removals left out).
#[derive(Debug, Clone)]
pub(super) struct Meta {
    pub owner: SecretOwner,
    pub label: Option<String>,
    pub description: Option<String>,
    pub rotate: Option<RotatePolicy>,
    pub next_rotate: Option<i64>,
    pub latest: u32,
    pub expire: Option<i64>,
    pub access: Vec<(GrantTarget, u32)>,
}

/// The hook metadata of the running unit [apiserver/common/secrets `GetSecretMetadata`].
pub(super) fn metadata(cx: &ToolCx<'_>) -> BTreeMap<SecretId, Meta> {
    let (unit, app, leader) = (&cx.hook.unit, &cx.hook.app, cx.hook.leader);
    let pending = &cx.hook.secrets;
    let mut out = BTreeMap::new();
    for s in cx.model.secrets.secrets.values() {
        if !s.owner.managed_by(unit, app, leader) || pending.removing(&s.id) {
            continue;
        }
        let mut m = Meta {
            owner: s.owner.clone(),
            label: s.label.clone(),
            description: s.description.clone(),
            rotate: Some(s.rotate.unwrap_or(RotatePolicy::Never)),
            next_rotate: s.next_rotate,
            latest: s.latest,
            expire: s.latest_expire(),
            access: s.grants.iter().map(|(t, r)| (t.clone(), *r)).collect(),
        };
        if let Some(u) = pending.updates.get(&s.id) {
            m.label = u.label.clone().or(m.label);
            m.description = u.description.clone().or(m.description);
            m.rotate = u.rotate.or(m.rotate);
            m.expire = u.expire.or(m.expire);
        }
        out.insert(s.id.clone(), m);
    }
    for c in &pending.creates {
        out.insert(
            c.id.clone(),
            Meta {
                owner: c.owner.clone(),
                label: c.upsert.label.clone(),
                description: c.upsert.description.clone(),
                rotate: c.upsert.rotate,
                next_rotate: None,
                latest: 1,
                expire: c.upsert.expire,
                access: Vec::new(),
            },
        );
    }
    for g in &pending.grants {
        if let Some(m) = out.get_mut(&g.id)
            && !m.access.iter().any(|(t, _)| *t == g.target)
        {
            m.access.push((g.target.clone(), g.relation));
        }
    }
    out
}

/// `secret-ids [--format smart|yaml|json]`: bare ids, `null` in JSON when there are none.
pub fn secret_ids(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    check_empty(&parsed.positionals)?;
    let ids: Vec<serde_json::Value> = metadata(cx)
        .keys()
        .map(|id| serde_json::Value::String(id.to_string()))
        .collect();
    let value = if ids.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::Value::Array(ids)
    };
    emit(cx, &parsed, &value)
}

#[derive(serde::Serialize)]
struct Access {
    target: String,
    scope: String,
    role: &'static str,
}

#[derive(serde::Serialize)]
struct InfoDisplay {
    revision: u32,
    label: String,
    owner: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rotation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rotates: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    access: Vec<Access>,
}

/// `relation-<key>` of a relation, Juju's key being `requirer:ep provider:ep`.
fn relation_scope(cx: &ToolCx<'_>, rel: u32) -> String {
    let Some(r) = cx.model.relations.get(&rel) else {
        return format!("relation-{rel}");
    };
    let role_of = |app: &str, ep: &str| {
        cx.model
            .apps
            .get(app)
            .and_then(|a| a.charm.endpoints.get(ep))
            .map(|e| e.role)
    };
    let mut sides: Vec<_> = r.sides.iter().collect();
    sides.sort_by_key(|s| role_of(&s.app, &s.endpoint) != Some(crate::charm::Role::Requires));
    let key: Vec<String> = sides
        .iter()
        .map(|s| format!("{}.{}", s.app, s.endpoint))
        .collect();
    format!("relation-{}", key.join("#"))
}

/// `secret-info-get <ID> | --label L [--format yaml|json]`.
pub fn secret_info_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::value(&["label"]), FORMAT, OUTPUT], args)?;
    check_yaml_json(&parsed, "yaml")?;
    let mut rest = parsed.positionals.as_slice();
    let mut uri = None;
    if let Some((first, tail)) = rest.split_first() {
        uri = Some(uri_arg(first)?);
        rest = tail;
    }
    let label = parsed
        .value("label")
        .map(|g| g.value.clone())
        .filter(|l| !l.is_empty());
    match (&uri, &label) {
        (None, None) => {
            return Err(ToolError::Usage(
                "require either a secret URI or label".into(),
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ToolError::Usage(
                "specify either a secret URI or label but not both".into(),
            ));
        }
        _ => {}
    }
    check_empty(rest)?;
    let all = metadata(cx);
    let found = match (&uri, &label) {
        (Some(id), _) => all.get_key_value(id),
        (_, Some(l)) => all
            .iter()
            .find(|(_, m)| m.label.as_deref() == Some(l.as_str())),
        _ => None,
    };
    let Some((id, m)) = found else {
        let want = uri.map(|u| u.to_string()).or(label).unwrap_or_default();
        return Err(ToolError::Runtime(format!("secret {want:?} not found")));
    };
    let display = InfoDisplay {
        revision: m.latest,
        label: m.label.clone().unwrap_or_default(),
        owner: m.owner.kind(),
        description: m.description.clone().filter(|d| !d.is_empty()),
        rotation: m.rotate.map(RotatePolicy::name),
        expiry: m.expire.map(rfc3339),
        rotates: m.next_rotate.map(rfc3339),
        access: m
            .access
            .iter()
            .map(|(t, rel)| Access {
                target: t.tag(),
                scope: relation_scope(cx, *rel),
                role: "view",
            })
            .collect(),
    };
    let map: BTreeMap<String, InfoDisplay> = [(id.to_string(), display)].into();
    emit_typed(cx, &parsed, &map, "yaml")
}

/// Find a secret by label for `secret-get --label L`: pending creates/updates, then owned
/// metadata, then owner labels the unit can read as owner or peer, then consumer labels.
fn lookup_label(cx: &ToolCx<'_>, label: &str) -> Option<SecretId> {
    let p = &cx.hook.secrets;
    if let Some(c) = p
        .creates
        .iter()
        .find(|c| c.upsert.label.as_deref() == Some(label))
    {
        return Some(c.id.clone());
    }
    if let Some((id, _)) = p
        .updates
        .iter()
        .find(|(_, u)| u.label.as_deref() == Some(label))
    {
        return Some(id.clone());
    }
    if let Some((id, _)) = metadata(cx)
        .into_iter()
        .find(|(_, m)| m.label.as_deref() == Some(label))
    {
        return Some(id);
    }
    let (unit, app) = (&cx.hook.unit, &cx.hook.app);
    let store = &cx.model.secrets;
    if let Some(s) = store.secrets.values().find(|s| {
        s.label.as_deref() == Some(label)
            && match &s.owner {
                SecretOwner::App(a) => a == app,
                SecretOwner::Unit(u) => u == unit,
            }
    }) {
        return Some(s.id.clone());
    }
    store
        .unit_tracking(unit)
        .find(|(_, t)| t.label.as_deref() == Some(label))
        .map(|(id, _)| id.clone())
}

/// Apply `secret-get <ID> --label L` at once: the owner renames the secret, a non-leader
/// peer of an app secret is ignored, any other reader sets its consumer label.
fn apply_label(cx: &mut ToolCx<'_>, id: &SecretId, label: &str) -> Result<(), ToolError> {
    let (unit, app, leader) = (cx.hook.unit.clone(), cx.hook.app.clone(), cx.hook.leader);
    let Some(s) = cx.model.secrets.secrets.get(id) else {
        return Ok(());
    };
    let owner = s.owner.clone();
    let (entity, is_owner) = if owner.managed_by(&unit, &app, leader) {
        (owner.entity(), true)
    } else if owner == SecretOwner::App(app.clone()) {
        return Ok(());
    } else {
        (LabelEntity::Unit(unit.clone()), false)
    };
    let model = &*cx.model;
    let app_of = |u: &str| model.app_of(u);
    let units_of = |a: &str| model.units_of_app(a);
    if model
        .secrets
        .label_taken(&entity, &app_of, &units_of, label, Some(id))
    {
        return Err(ToolError::Runtime(format!(
            "secret with label {label:?} already exists"
        )));
    }
    let store = &mut cx.model.secrets;
    if is_owner {
        if let Some(s) = store.secrets.get_mut(id) {
            s.label = Some(label.to_owned());
        }
    } else {
        store.update_tracking(&unit, id, |t| t.label = Some(label.to_owned()));
    }
    Ok(())
}

/// `secret-get <ID> [key[#base64]] [--label L] [--peek|--refresh] [--format yaml|json]`.
pub fn secret_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[
            Flag::value(&["label"]),
            Flag::boolean(&["peek"]),
            Flag::boolean(&["refresh"]),
            FORMAT,
            OUTPUT,
        ],
        args,
    )?;
    check_yaml_json(&parsed, "yaml")?;
    let (peek, refresh) = (parsed.flag("peek"), parsed.flag("refresh"));
    let label = parsed
        .value("label")
        .map(|g| g.value.clone())
        .filter(|l| !l.is_empty());
    let mut rest = parsed.positionals.as_slice();
    let mut given = None;
    if let Some((first, tail)) = rest.split_first() {
        given = Some((first.clone(), uri_arg(first)?));
        rest = tail;
    }
    let (key, rest) = match rest.split_first() {
        Some((k, tail)) => (Some(k.clone()), tail),
        None => (None, rest),
    };
    check_empty(rest)?;
    if given.is_none() && label.is_none() {
        return Err(ToolError::Usage(
            "require either a secret URI or label".into(),
        ));
    }
    if peek && refresh {
        return Err(ToolError::Usage(
            "specify one of --peek or --refresh but not both".into(),
        ));
    }
    let id = match &given {
        Some((_, id)) => id.clone(),
        None => {
            let l = label.clone().unwrap_or_default();
            lookup_label(cx, &l)
                .ok_or_else(|| ToolError::Runtime(format!("consumer label {l:?} not found")))?
        }
    };
    let content = read_content(cx, &id, given.as_ref().map(|g| g.0.as_str()), peek, refresh)?;
    if let (Some(l), Some(_)) = (&label, &given) {
        apply_label(cx, &id, l)?;
    }
    match key {
        Some(k) => {
            let (name, raw) = match k.strip_suffix("#base64") {
                Some(n) => (n, true),
                None => (k.as_str(), false),
            };
            let v = content.get(name).ok_or_else(|| {
                ToolError::Runtime(format!("secret key value {name:?} not found"))
            })?;
            let out = if raw { v.clone() } else { decode(v) };
            emit_typed(cx, &parsed, &out, "yaml")
        }
        None => {
            let map: BTreeMap<&String, String> =
                content.iter().map(|(k, v)| (k, decode(v))).collect();
            emit_typed(cx, &parsed, &map, "yaml")
        }
    }
}

/// The content a read returns, with its tracking side effects.
fn read_content(
    cx: &mut ToolCx<'_>,
    id: &SecretId,
    as_passed: Option<&str>,
    peek: bool,
    refresh: bool,
) -> Result<Content, ToolError> {
    if let Some(c) = cx.hook.secrets.created(id) {
        let content = c.upsert.content.clone().unwrap_or_default();
        if refresh {
            cx.hook.secrets.track_latest.insert(id.clone());
        }
        return Ok(content);
    }
    let (unit, app) = (cx.hook.unit.clone(), cx.hook.app.clone());
    let Some(s) = cx.model.secrets.secrets.get(id) else {
        let shown = as_passed
            .map(str::to_owned)
            .unwrap_or_else(|| id.short_uri());
        return Err(ToolError::Runtime(format!("secret {shown:?} not found")));
    };
    if !SecretStore::can_read(s, &unit, &app) {
        return Err(ToolError::Runtime("permission denied".into()));
    }
    let (latest, owner) = (s.latest, s.owner.clone());
    let pending = cx
        .hook
        .secrets
        .updates
        .get(id)
        .and_then(|u| u.content.clone());
    let store = &mut cx.model.secrets;
    let revision = match store.tracking(&unit, id) {
        None => {
            store.track(
                &unit,
                id,
                Tracking {
                    current: latest,
                    label: None,
                    notified: latest,
                },
            );
            latest
        }
        Some(_) if peek => {
            if let Some(p) = pending {
                return Ok(p);
            }
            latest
        }
        Some(_) if refresh => {
            if let Some(p) = pending {
                cx.hook.secrets.track_latest.insert(id.clone());
                return Ok(p);
            }
            store.update_tracking(&unit, id, |t| {
                t.current = latest;
                t.notified = t.notified.max(latest);
            });
            let owner_unit = cx.model.secret_owner_unit(&owner);
            cx.model.secrets.mark_obsolete(id, owner_unit.as_deref());
            latest
        }
        Some(t) => t.current,
    };
    cx.model
        .secrets
        .secrets
        .get(id)
        .and_then(|s| s.revisions.get(&revision))
        .map(|r| r.content.clone())
        .ok_or_else(|| {
            ToolError::Runtime(format!(
                "secret revision {revision} for {:?} not found",
                id.short_uri()
            ))
        })
}
