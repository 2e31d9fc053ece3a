//! Builds a [`HookContext`] from the environment Juju gives a hook process (docs/juju-hook-tools.md §1.2–§1.3).
//!
//! The event comes from `JUJU_DISPATCH_PATH` (`hooks/<name>` or `actions/<name>`; a path whose
//! last two components are that, as a dispatch shell shim's `$0` fallback gives, is accepted
//! too).
//! Every other variable is cross-checked against it, so a mis-driven hook (a test harness or a
//! hand-run binary exporting the wrong things) fails loudly instead of reconciling against the
//! wrong relation. Rules, all from Juju's `HookVars`:
//! - hooks: `JUJU_HOOK_NAME` present and equal to the dispatch name; actions: it is empty or unset,
//!   and `JUJU_ACTION_NAME` equals the dispatch name, `JUJU_ACTION_UUID` is set.
//! - relation hooks: `JUJU_RELATION` = the hook's endpoint prefix, `JUJU_RELATION_ID` =
//!   `<that endpoint>:<N>`, `JUJU_REMOTE_APP` non-empty; `JUJU_REMOTE_UNIT` non-empty in joined and
//!   departed, present (possibly empty, the app-bag case) in changed, empty or unset in created and
//!   broken, and always a unit of `JUJU_REMOTE_APP`; `JUJU_DEPARTING_UNIT` set in departed only.
//! - storage hooks: `JUJU_STORAGE_ID` = `<the hook's storage prefix>/<N>`.
//! - secret hooks: `JUJU_SECRET_ID` set and a secret id ([`SecretId`]); `JUJU_SECRET_REVISION`
//!   (a number) for remove/expired.
//!
//! Relation variables in non-relation hooks are ignored (Juju never sets them there, and they
//! cannot change what the hook does).

use crate::backend::RelationId;
use crate::context_error::ContextError;
use crate::event::{ActionEvent, Event, HookContext, RelationEvent, SecretEvent, StorageEvent};
use crate::secrets::SecretId;
use std::collections::HashMap;
use std::path::PathBuf;

/// Read access to a hook environment; lets parsing work on the process env or a test map alike.
struct Env<'a> {
    vars: &'a HashMap<String, String>,
    /// The hook (or `actions/<name>`) being parsed, for error messages.
    hook: String,
}

impl Env<'_> {
    fn get(&self, var: &str) -> Option<&str> {
        self.vars.get(var).map(String::as_str)
    }

    /// A variable that must be present and non-empty.
    fn required(&self, var: &'static str) -> Result<String, ContextError> {
        match self.get(var) {
            Some(v) if !v.is_empty() => Ok(v.to_owned()),
            _ => Err(ContextError::MissingVar {
                var,
                hook: self.hook.clone(),
            }),
        }
    }

    /// A variable whose empty value means "none".
    fn optional(&self, var: &str) -> Option<String> {
        self.get(var).filter(|v| !v.is_empty()).map(str::to_owned)
    }

    /// A variable Juju exports empty or not at all in this hook.
    fn must_be_empty(&self, var: &'static str) -> Result<(), ContextError> {
        match self.optional(var) {
            None => Ok(()),
            Some(value) => Err(ContextError::UnexpectedVar {
                var,
                value,
                hook: self.hook.clone(),
            }),
        }
    }
}

/// Which kind of relation hook a name's suffix denotes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RelationKind {
    Created,
    Joined,
    Changed,
    Departed,
    Broken,
}

const RELATION_SUFFIXES: [(&str, RelationKind); 5] = [
    ("-relation-created", RelationKind::Created),
    ("-relation-joined", RelationKind::Joined),
    ("-relation-changed", RelationKind::Changed),
    ("-relation-departed", RelationKind::Departed),
    ("-relation-broken", RelationKind::Broken),
];

/// Whether the dispatch path names a hook or an action.
enum Dispatch {
    Hook(String),
    Action(String),
}

impl HookContext {
    /// Reads the process environment; the entry point `main` uses.
    pub fn from_env() -> Result<HookContext, ContextError> {
        let vars: HashMap<String, String> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Self::from_env_map(&vars)
    }

    /// Parses a hook environment given as a map (see the module doc for the rules); unit-testable
    /// without touching the process environment.
    pub fn from_env_map(vars: &HashMap<String, String>) -> Result<HookContext, ContextError> {
        let raw_path = vars
            .get("JUJU_DISPATCH_PATH")
            .filter(|v| !v.is_empty())
            .ok_or(ContextError::NotInHook)?;
        let dispatch = parse_dispatch_path(raw_path)?;
        let hook = match &dispatch {
            Dispatch::Hook(name) => name.clone(),
            Dispatch::Action(name) => format!("actions/{name}"),
        };
        let env = Env { vars, hook };

        let unit_name = env.required("JUJU_UNIT_NAME")?;
        let app_name = unit_app(&unit_name).ok_or_else(|| ContextError::InvalidVar {
            var: "JUJU_UNIT_NAME",
            value: unit_name.clone(),
            expected: "a unit name <application>/<number>, e.g. mysql/0",
        })?;
        let model_name = env.required("JUJU_MODEL_NAME")?;
        let charm_dir = match env.optional("JUJU_CHARM_DIR") {
            Some(dir) => dir,
            // CHARM_DIR is the legacy name Juju still exports beside JUJU_CHARM_DIR.
            None => env
                .optional("CHARM_DIR")
                .ok_or_else(|| ContextError::MissingVar {
                    var: "JUJU_CHARM_DIR",
                    hook: env.hook.clone(),
                })?,
        };

        let event = match dispatch {
            Dispatch::Hook(name) => {
                let hook_name = env.get("JUJU_HOOK_NAME").ok_or(ContextError::MissingVar {
                    var: "JUJU_HOOK_NAME",
                    hook: name.clone(),
                })?;
                if hook_name != name {
                    return Err(ContextError::HookNameMismatch {
                        dispatch: name,
                        hook_name: hook_name.to_owned(),
                    });
                }
                parse_hook(&env, &name)?
            }
            Dispatch::Action(name) => parse_action(&env, name)?,
        };

        Ok(HookContext {
            app_name: app_name.to_owned(),
            unit_name,
            model_name,
            charm_dir: PathBuf::from(charm_dir),
            event,
        })
    }
}

/// `hooks/<name>` or `actions/<name>`, possibly behind a directory prefix (the `$0` fallback).
fn parse_dispatch_path(value: &str) -> Result<Dispatch, ContextError> {
    let bad = || ContextError::BadDispatchPath {
        value: value.to_owned(),
    };
    let mut parts = value.rsplit('/');
    let name = parts.next().filter(|n| !n.is_empty()).ok_or_else(bad)?;
    match parts.next() {
        Some("hooks") => Ok(Dispatch::Hook(name.to_owned())),
        Some("actions") => Ok(Dispatch::Action(name.to_owned())),
        _ => Err(bad()),
    }
}

/// The application of a unit name `app/N`, if it is one.
fn unit_app(unit: &str) -> Option<&str> {
    let (app, number) = unit.split_once('/')?;
    let valid = !app.is_empty()
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && !app.contains(char::is_whitespace);
    valid.then_some(app)
}

fn parse_action(env: &Env<'_>, name: String) -> Result<Event, ContextError> {
    if let Some(hook_name) = env.optional("JUJU_HOOK_NAME") {
        return Err(ContextError::HookNameInAction {
            action: name,
            hook_name,
        });
    }
    let action_name = env.required("JUJU_ACTION_NAME")?;
    if action_name != name {
        return Err(ContextError::ActionNameMismatch {
            dispatch: name,
            action_name,
        });
    }
    let id = env.required("JUJU_ACTION_UUID")?;
    Ok(Event::Action(ActionEvent { name, id }))
}

fn parse_hook(env: &Env<'_>, name: &str) -> Result<Event, ContextError> {
    let event = match name {
        "install" => Event::Install,
        "start" => Event::Start,
        "stop" => Event::Stop,
        "remove" => Event::Remove,
        "config-changed" => Event::ConfigChanged,
        "upgrade-charm" => Event::UpgradeCharm,
        "update-status" => Event::UpdateStatus,
        "leader-elected" => Event::LeaderElected,
        "leader-settings-changed" => Event::LeaderSettingsChanged,
        "pre-series-upgrade" => Event::PreSeriesUpgrade {
            target_base: env.optional("JUJU_TARGET_BASE"),
        },
        "post-series-upgrade" => Event::PostSeriesUpgrade,
        "secret-changed" => Event::SecretChanged(parse_secret(env, false)?),
        "secret-rotate" => Event::SecretRotate(parse_secret(env, false)?),
        "secret-remove" => Event::SecretRemove(parse_secret(env, true)?),
        "secret-expired" => Event::SecretExpired(parse_secret(env, true)?),
        _ => return parse_prefixed_hook(env, name),
    };
    Ok(event)
}

/// Relation (`<endpoint>-relation-<kind>`) and storage (`<storage>-storage-<kind>`) hooks.
fn parse_prefixed_hook(env: &Env<'_>, name: &str) -> Result<Event, ContextError> {
    for (suffix, kind) in RELATION_SUFFIXES {
        if let Some(endpoint) = name.strip_suffix(suffix).filter(|e| !e.is_empty()) {
            let rel = parse_relation(env, endpoint, kind)?;
            return Ok(match kind {
                RelationKind::Created => Event::RelationCreated(rel),
                RelationKind::Joined => Event::RelationJoined(rel),
                RelationKind::Changed => Event::RelationChanged(rel),
                RelationKind::Departed => Event::RelationDeparted(rel),
                RelationKind::Broken => Event::RelationBroken(rel),
            });
        }
    }
    if let Some(storage) = name
        .strip_suffix("-storage-attached")
        .filter(|s| !s.is_empty())
    {
        return Ok(Event::StorageAttached(parse_storage(env, storage)?));
    }
    if let Some(storage) = name
        .strip_suffix("-storage-detaching")
        .filter(|s| !s.is_empty())
    {
        return Ok(Event::StorageDetaching(parse_storage(env, storage)?));
    }
    Err(ContextError::UnknownHook {
        name: name.to_owned(),
    })
}

fn parse_relation(
    env: &Env<'_>,
    endpoint: &str,
    kind: RelationKind,
) -> Result<RelationEvent, ContextError> {
    let prefix_mismatch = |var: &'static str, value: &str| ContextError::PrefixMismatch {
        var,
        value: value.to_owned(),
        hook: env.hook.clone(),
        prefix: endpoint.to_owned(),
    };
    let relation_name = env.required("JUJU_RELATION")?;
    if relation_name != endpoint {
        return Err(prefix_mismatch("JUJU_RELATION", &relation_name));
    }
    let raw_id = env.required("JUJU_RELATION_ID")?;
    let relation: RelationId = raw_id.parse().map_err(|_| ContextError::InvalidVar {
        var: "JUJU_RELATION_ID",
        value: raw_id.clone(),
        expected: "<endpoint>:<number>, e.g. db:3",
    })?;
    if relation.endpoint != endpoint {
        return Err(prefix_mismatch("JUJU_RELATION_ID", &raw_id));
    }
    let remote_app = env.required("JUJU_REMOTE_APP")?;

    let remote_unit = match kind {
        RelationKind::Joined | RelationKind::Departed => Some(env.required("JUJU_REMOTE_UNIT")?),
        RelationKind::Changed => {
            // Present but empty means the remote application's bag changed.
            if env.get("JUJU_REMOTE_UNIT").is_none() {
                return Err(ContextError::MissingVar {
                    var: "JUJU_REMOTE_UNIT",
                    hook: env.hook.clone(),
                });
            }
            env.optional("JUJU_REMOTE_UNIT")
        }
        RelationKind::Created | RelationKind::Broken => {
            env.must_be_empty("JUJU_REMOTE_UNIT")?;
            None
        }
    };
    if let Some(unit) = &remote_unit {
        match unit_app(unit) {
            Some(app) if app == remote_app => {}
            Some(_) => {
                return Err(ContextError::RemoteUnitAppMismatch {
                    unit: unit.clone(),
                    app: remote_app,
                });
            }
            None => {
                return Err(ContextError::InvalidVar {
                    var: "JUJU_REMOTE_UNIT",
                    value: unit.clone(),
                    expected: "a unit name <application>/<number> or the empty string",
                });
            }
        }
    }

    let departing_unit = if kind == RelationKind::Departed {
        let unit = env.required("JUJU_DEPARTING_UNIT")?;
        if unit_app(&unit).is_none() {
            return Err(ContextError::InvalidVar {
                var: "JUJU_DEPARTING_UNIT",
                value: unit,
                expected: "a unit name <application>/<number>",
            });
        }
        Some(unit)
    } else {
        env.must_be_empty("JUJU_DEPARTING_UNIT")?;
        None
    };

    Ok(RelationEvent {
        relation,
        remote_app,
        remote_unit,
        departing_unit,
    })
}

fn parse_storage(env: &Env<'_>, storage: &str) -> Result<StorageEvent, ContextError> {
    let id = env.required("JUJU_STORAGE_ID")?;
    let valid = id
        .split_once('/')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !valid {
        return Err(ContextError::InvalidVar {
            var: "JUJU_STORAGE_ID",
            value: id,
            expected: "<storage>/<number>, e.g. data/0",
        });
    }
    let name = id.split_once('/').map_or("", |(name, _)| name).to_owned();
    if name != storage {
        return Err(ContextError::PrefixMismatch {
            var: "JUJU_STORAGE_ID",
            value: id,
            hook: env.hook.clone(),
            prefix: storage.to_owned(),
        });
    }
    Ok(StorageEvent {
        name,
        id,
        location: env.get("JUJU_STORAGE_LOCATION").unwrap_or("").to_owned(),
        kind: env.get("JUJU_STORAGE_KIND").unwrap_or("").to_owned(),
    })
}

fn parse_secret(env: &Env<'_>, needs_revision: bool) -> Result<SecretEvent, ContextError> {
    let raw = env.required("JUJU_SECRET_ID")?;
    let id = SecretId::parse(&raw).map_err(|source| ContextError::InvalidSecretId {
        var: "JUJU_SECRET_ID",
        hook: env.hook.clone(),
        source,
    })?;
    let revision = if needs_revision {
        let raw = env.required("JUJU_SECRET_REVISION")?;
        Some(raw.parse::<u32>().map_err(|_| ContextError::InvalidVar {
            var: "JUJU_SECRET_REVISION",
            value: raw.clone(),
            expected: "a positive revision number",
        })?)
    } else {
        None
    };
    Ok(SecretEvent {
        id,
        label: env.optional("JUJU_SECRET_LABEL"),
        revision,
    })
}
