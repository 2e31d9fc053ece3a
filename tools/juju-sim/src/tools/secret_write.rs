//! `secret-add`, `secret-set`, `secret-remove`, `secret-grant`, `secret-revoke`
//! [jujuc/secret-add.go, secret-set.go, secret-remove.go, secret-grant.go, secret-revoke.go;
//! context/context.go `CreateSecret` .. `RevokeSecret`]. Every change is recorded in the
//! hook's pending secrets and applied only when the hook exits 0.

use super::relation::relation_id;
use super::secret_read::{metadata, uri_arg};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::flags::{Flag, Parsed, parse};
use crate::secrets::clock::parse_expire;
use crate::secrets::pending::{AccessChange, PendingCreate, Upsert};
use crate::secrets::{GrantTarget, RotatePolicy, SecretId, SecretOwner, content};

const UPSERT_FLAGS: [Flag; 6] = [
    Flag::value(&["label"]),
    Flag::value(&["description"]),
    Flag::value(&["expire"]),
    Flag::value(&["rotate"]),
    Flag::value(&["file"]),
    Flag::value(&["owner"]),
];

/// The flags and content shared by `secret-add` and `secret-set` (all usage errors).
fn upsert_args(
    cx: &ToolCx<'_>,
    parsed: &Parsed,
    args: &[String],
) -> Result<(Upsert, String), ToolError> {
    let value = |k: &str| {
        parsed
            .value(k)
            .map(|g| g.value.clone())
            .filter(|v| !v.is_empty())
    };
    let expire = value("expire")
        .map(|spec| parse_expire(&spec, cx.model.now))
        .transpose()
        .map_err(ToolError::Usage)?;
    let rotate = value("rotate")
        .map(|p| {
            RotatePolicy::parse(&p)
                .ok_or_else(|| ToolError::Usage(format!("rotate policy {p:?} not valid")))
        })
        .transpose()?;
    let owner = value("owner").unwrap_or_else(|| "application".into());
    if owner != "application" && owner != "unit" {
        return Err(ToolError::Usage(format!(
            "secret owner {owner:?} not valid"
        )));
    }
    let file = value("file");
    let read = |p: &str| std::fs::read(cx.path(p)).map_err(|e| format!("cannot read {p:?}: {e}"));
    let data = if args.is_empty() && file.is_none() {
        None
    } else {
        Some(content::parse(args, file.as_deref(), &read).map_err(ToolError::Usage)?)
    };
    Ok((
        Upsert {
            content: data,
            label: value("label"),
            description: value("description"),
            rotate,
            expire,
        },
        owner,
    ))
}

/// `secret-add [key=value ...] [--file F] [--owner application|unit] [--label L]
/// [--description D] [--expire T] [--rotate P]`: prints `secret://<model-uuid>/<id>`.
pub fn secret_add(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&UPSERT_FLAGS, args)?;
    if parsed.positionals.is_empty() && parsed.value("file").is_none() {
        return Err(ToolError::Usage("missing secret value or filename".into()));
    }
    let (upsert, owner) = upsert_args(cx, &parsed, &parsed.positionals)?;
    if upsert.content.as_ref().is_none_or(|c| c.is_empty()) {
        return Err(ToolError::Runtime("empty secret value not valid".into()));
    }
    let owner = if owner == "unit" {
        SecretOwner::Unit(cx.hook.unit.clone())
    } else {
        if !cx.hook.leader {
            return Err(ToolError::Runtime("this unit is not the leader".into()));
        }
        SecretOwner::App(cx.hook.app.clone())
    };
    if let Some(l) = &upsert.label
        && cx
            .hook
            .secrets
            .creates
            .iter()
            .any(|c| c.upsert.label.as_deref() == Some(l.as_str()))
    {
        return Err(ToolError::Runtime(format!(
            "secret with label {l:?} already exists"
        )));
    }
    let id = SecretId::random().map_err(ToolError::Runtime)?;
    let uri = id.long_uri(&cx.model.uuid);
    cx.hook
        .secrets
        .creates
        .push(PendingCreate { id, owner, upsert });
    Ok(format!("{uri}\n").into_bytes())
}

/// `secret-set <ID> [key=value ...]` plus the `secret-add` flags (`--owner` is checked,
/// then ignored). Permission and existence are checked at commit, as Juju does.
pub fn secret_set(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&UPSERT_FLAGS, args)?;
    let Some((first, content_args)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("missing secret URI".into()));
    };
    let id = uri_arg(first)?;
    let (upsert, _) = upsert_args(cx, &parsed, content_args)?;
    if upsert.is_empty() {
        return Ok(Vec::new());
    }
    cx.hook.secrets.update(&id, upsert);
    Ok(Vec::new())
}

/// `secret-remove <ID> [--revision N]` (`N <= 0`: the whole secret).
pub fn secret_remove(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::value(&["revision"])], args)?;
    let Some((first, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("missing secret URI".into()));
    };
    let id = uri_arg(first)?;
    check_empty(rest)?;
    let revision = match parsed.value("revision") {
        None => None,
        Some(g) => {
            let n: i64 = g.value.parse().map_err(|_| {
                ToolError::Usage(format!(
                    "invalid value {:?} for option {}: strconv.ParseInt: parsing {:?}: invalid syntax",
                    g.value, g.written, g.value
                ))
            })?;
            u32::try_from(n).ok().filter(|n| *n > 0)
        }
    };
    cx.hook.secrets.remove(&id, revision);
    Ok(Vec::new())
}

/// `secret-grant <ID> -r <relation> [--unit U]`.
pub fn secret_grant(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[Flag::value(&["r", "relation"]), Flag::value(&["unit"])],
        args,
    )?;
    let Some((first, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("missing secret URI".into()));
    };
    let id = uri_arg(first)?;
    check_empty(rest)?;
    let rel = relation_id(cx, &parsed)?;
    let remote_app = cx
        .model
        .relations
        .get(&rel)
        .and_then(|r| r.remote_app(&cx.hook.app))
        .unwrap_or_default()
        .to_owned();
    let target = match parsed
        .value("unit")
        .map(|g| g.value.clone())
        .filter(|u| !u.is_empty())
    {
        Some(u) => {
            if u.split('/').next() != Some(remote_app.as_str()) {
                return Err(ToolError::Usage(format!(
                    "cannot specify unit {u:?} in relation to application {remote_app:?}"
                )));
            }
            GrantTarget::Unit(u)
        }
        None => GrantTarget::App(remote_app.clone()),
    };
    let Some(meta) = metadata(cx).remove(&id) else {
        return Err(ToolError::Runtime(format!(
            "secret {:?} not found",
            id.to_string()
        )));
    };
    for (existing, scope) in &meta.access {
        if *scope != rel {
            continue;
        }
        if *existing == target || matches!(existing, GrantTarget::App(_)) {
            return Ok(Vec::new());
        }
        if matches!(target, GrantTarget::App(_)) {
            return Err(ToolError::Runtime(
                "any unit level grants need to be revoked before granting access to the corresponding application".into(),
            ));
        }
    }
    cx.hook.secrets.grants.push(AccessChange {
        id,
        target,
        relation: rel,
    });
    Ok(Vec::new())
}

/// `secret-revoke <ID> [-r <relation>] [--app|--application A] [--unit U]` (`--unit` wins).
pub fn secret_revoke(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[
            Flag::value(&["r", "relation"]),
            Flag::value(&["app", "application"]),
            Flag::value(&["unit"]),
        ],
        args,
    )?;
    let Some((first, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("missing secret URI".into()));
    };
    let id = uri_arg(first)?;
    check_empty(rest)?;
    let given = |k: &str| {
        parsed
            .value(k)
            .map(|g| g.value.clone())
            .filter(|v| !v.is_empty())
    };
    let (app, unit) = (given("application"), given("unit"));
    let has_rel = parsed.value("relation").is_some() || cx.hook.relation.is_some();
    let (target, relation) = match (unit, app) {
        (Some(_), Some(_)) => {
            return Err(ToolError::Usage(
                "specify only one of application or unit".into(),
            ));
        }
        (Some(u), None) => (GrantTarget::Unit(u), 0),
        (None, Some(a)) => (GrantTarget::App(a), 0),
        (None, None) if has_rel => {
            let rel = relation_id(cx, &parsed)?;
            let remote = cx
                .model
                .relations
                .get(&rel)
                .and_then(|r| r.remote_app(&cx.hook.app))
                .unwrap_or_default()
                .to_owned();
            (GrantTarget::App(remote), rel)
        }
        (None, None) => {
            return Err(ToolError::Usage(
                "missing relation or application or unit".into(),
            ));
        }
    };
    cx.hook.secrets.revokes.push(AccessChange {
        id,
        target,
        relation,
    });
    Ok(Vec::new())
}
