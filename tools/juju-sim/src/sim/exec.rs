//! Running one queued operation: preparing the context and environment, spawning the handler,
//! committing deferred changes on exit 0 (or putting the unit in error), and settling the queue.

use super::hooks::Hook;
use super::{HookRecord, Simulator, unit_number};
use crate::context::{HookContext, RelationInfo, SecretHookInfo};
use crate::error::{Result, SimError};
use crate::model::{Life, LogEntry, Model, UnitExtras};
use crate::secrets::SecretOwner;
use crate::server::lock;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Everything needed to spawn a handler.
pub(super) struct Prepared {
    pub ctx: HookContext,
    pub env: Vec<(String, String)>,
    pub charm_dir: PathBuf,
    pub handler: Option<PathBuf>,
    pub prefix: Vec<String>,
    pub remote_unit: String,
    /// Run this argv instead of the handler (`run_hook_command`).
    pub argv: Option<Vec<String>>,
}

impl Prepared {
    /// The process to run: prefix + handler (or the override argv); `None` = no handler.
    fn command(&self) -> Option<Command> {
        let mut argv: Vec<std::ffi::OsString> = Vec::new();
        argv.extend(self.prefix.iter().map(Into::into));
        match &self.argv {
            Some(a) => argv.extend(a.iter().map(Into::into)),
            None => argv.push(self.handler.as_ref()?.clone().into_os_string()),
        }
        let (prog, rest) = argv.split_first()?;
        let mut cmd = Command::new(prog);
        cmd.args(rest)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.charm_dir)
            .stdin(Stdio::null());
        Some(cmd)
    }
}

/// What came back from the handler.
pub(super) struct Outcome {
    pub ctx: HookContext,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
    pub env: Vec<(String, String)>,
    pub remote_unit: String,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Simulator {
    /// A fresh `JUJU_CONTEXT_ID`: `<unit>-<hook>-<32 hex>`.
    pub(super) fn new_context_id(&mut self, unit: &str, hook: &str) -> String {
        self.ctx_counter += 1;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let a = splitmix(self.ctx_counter ^ nanos);
        let b = splitmix(a ^ self.ctx_counter.rotate_left(17));
        format!("{unit}-{hook}-{a:016x}{b:016x}")
    }

    /// The environment Juju sets for every hook and action (reference §1.3).
    pub(super) fn base_env(
        &self,
        model: &Model,
        ctx: &HookContext,
        charm_dir: &Path,
        dispatch_path: &str,
        extras: &UnitExtras,
    ) -> Vec<(String, String)> {
        let unit = model.units.get(&ctx.unit);
        let machine = unit.map(|u| u.machine.clone()).unwrap_or_default();
        let dir = charm_dir.display().to_string();
        let mut path = vec![self.tools_dir.display().to_string()];
        path.extend(extras.path.iter().map(|p| p.display().to_string()));
        path.push("/usr/sbin:/usr/bin:/sbin:/bin".into());
        let hook_name = if ctx.action.is_some() {
            String::new()
        } else {
            ctx.hook_name.clone()
        };
        let mut env: Vec<(String, String)> = [
            ("JUJU_CHARM_DIR", dir.clone()),
            ("CHARM_DIR", dir),
            ("JUJU_CONTEXT_ID", ctx.id.clone()),
            ("JUJU_HOOK_NAME", hook_name),
            ("JUJU_DISPATCH_PATH", dispatch_path.to_owned()),
            (
                "JUJU_AGENT_SOCKET_ADDRESS",
                self.server.path().display().to_string(),
            ),
            ("JUJU_AGENT_SOCKET_NETWORK", "unix".into()),
            ("JUJU_UNIT_NAME", ctx.unit.clone()),
            ("JUJU_MODEL_UUID", model.uuid.clone()),
            ("JUJU_MODEL_NAME", model.name.clone()),
            ("JUJU_API_ADDRESSES", "10.0.0.254:17070".into()),
            ("JUJU_MACHINE_ID", machine),
            ("JUJU_PRINCIPAL_UNIT", String::new()),
            ("JUJU_AVAILABILITY_ZONE", String::new()),
            ("JUJU_VERSION", "3.6.8".into()),
            ("CLOUD_API_VERSION", String::new()),
            ("JUJU_CHARM_HTTP_PROXY", String::new()),
            ("JUJU_CHARM_HTTPS_PROXY", String::new()),
            ("JUJU_CHARM_FTP_PROXY", String::new()),
            ("JUJU_CHARM_NO_PROXY", String::new()),
            ("PATH", path.join(":")),
            ("LANG", "C.UTF-8".into()),
            ("DEBIAN_FRONTEND", "noninteractive".into()),
            ("APT_LISTCHANGES_FRONTEND", "none".into()),
            ("TERM", "tmux-256color".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        if let Some(r) = &ctx.relation {
            env.push(("JUJU_RELATION".into(), r.endpoint.clone()));
            env.push((
                "JUJU_RELATION_ID".into(),
                format!("{}:{}", r.endpoint, r.id),
            ));
            env.push(("JUJU_REMOTE_APP".into(), r.remote_app.clone()));
            env.push(("JUJU_REMOTE_UNIT".into(), r.remote_unit.clone()));
        }
        if let Some(s) = &ctx.secret {
            env.push(("JUJU_SECRET_ID".into(), s.id.short_uri()));
            env.push(("JUJU_SECRET_LABEL".into(), s.label.clone()));
            if let Some(r) = s.revision {
                env.push(("JUJU_SECRET_REVISION".into(), r.to_string()));
            }
        }
        if let Some(a) = &ctx.action {
            env.push(("JUJU_ACTION_NAME".into(), a.name.clone()));
            env.push(("JUJU_ACTION_UUID".into(), a.id.to_string()));
            env.push(("JUJU_ACTION_TAG".into(), format!("action-{}", a.id)));
        }
        for (k, v) in &extras.env {
            if let Some(slot) = env.iter_mut().find(|(ek, _)| ek == k) {
                slot.1 = v.clone();
            } else {
                env.push((k.clone(), v.clone()));
            }
        }
        env
    }

    /// Update membership and Juju-set statuses, build the context; `None` = skip this hook.
    pub(super) fn prepare_hook(&mut self, unit: &str, hook: &Hook) -> Option<Prepared> {
        let shared = self.shared.clone();
        let mut g = lock(&shared);
        let model = &mut g.model;
        let u = model.units.get(unit)?;
        let app_name = u.app.clone();
        let extras = u.extras.clone();
        let status_set = u.status_set_by_charm;
        let charm_dir = model.apps.get(&app_name)?.charm.dir.clone();
        let mut relation = None;
        let mut broken_relation = None;
        if let Some(rel_id) = hook.relation() {
            let rel = model.relations.get_mut(&rel_id)?;
            let endpoint = rel.side_of(&app_name)?.endpoint.clone();
            let remote_app = rel.remote_app(&app_name)?.to_owned();
            let part = rel.scope.get_mut(unit)?;
            if part.broken {
                return None;
            }
            let remote_unit = match hook {
                Hook::RelationCreated(_) => {
                    part.entered = true;
                    // Juju: a unit that enters scope as its application's leader sets the
                    // relation `joined` (relation/statetracker.go `joinRelation`), so the
                    // first leader of either side to enter is enough; `since` is kept after
                    // (state/status.go `setStatus` leaves an unchanged status alone).
                    let leads = model
                        .apps
                        .get(&app_name)
                        .is_some_and(|a| a.leader.as_deref() == Some(unit));
                    if leads && !rel.joined && !rel.is_peer() {
                        rel.joined = true;
                        rel.status_at = model.now;
                    }
                    String::new()
                }
                Hook::RelationJoined(_, r) => {
                    part.joining.remove(r);
                    part.members.insert(r.clone());
                    r.clone()
                }
                Hook::RelationChanged(_, Some(r)) => {
                    if !part.members.contains(r) {
                        return None;
                    }
                    r.clone()
                }
                Hook::RelationChanged(_, None) => String::new(),
                Hook::RelationDeparted { remote, .. } => {
                    part.joining.remove(remote);
                    part.members.remove(remote);
                    remote.clone()
                }
                Hook::RelationBroken(_) => {
                    part.broken = true;
                    part.members.clear();
                    broken_relation = Some(rel_id);
                    String::new()
                }
                _ => String::new(),
            };
            relation = Some(RelationInfo {
                id: rel_id,
                endpoint,
                remote_app,
                remote_unit,
            });
        }
        let mut secret = None;
        if let Some((id, revision)) = hook.secret() {
            let s = model.secrets.secrets.get(id)?;
            let owner_hook = !matches!(hook, Hook::SecretChanged(_));
            if owner_hook && !s.owner.managed_by(unit, &app_name, model.is_leader(unit)) {
                return None;
            }
            let consumer_label = model
                .secrets
                .tracking(unit, id)
                .and_then(|t| t.label.clone());
            // The owner label is the fallback only on the owner's side (owner unit, peers of
            // an app owner); another application's reader sees its own label or nothing.
            let owner_side = match &s.owner {
                SecretOwner::App(a) => *a == app_name,
                SecretOwner::Unit(u) => u == unit,
            };
            let owner_label = s.label.clone().filter(|_| owner_side);
            secret = Some(SecretHookInfo {
                id: id.clone(),
                label: consumer_label.or(owner_label).unwrap_or_default(),
                revision,
            });
        }
        match hook {
            Hook::Install if !status_set => {
                model.set_unit_status(unit, "maintenance", "installing charm software")
            }
            Hook::Stop => model.set_unit_status(unit, "maintenance", "stopping charm software"),
            Hook::Remove => {
                model.set_unit_status(unit, "maintenance", "cleaning up prior to charm deletion")
            }
            _ => {}
        }
        let endpoint = relation.as_ref().map(|r| r.endpoint.as_str()).unwrap_or("");
        let hook_name = hook.name(endpoint);
        let leader = model.is_leader(unit);
        drop(g);
        let id = self.new_context_id(unit, &hook_name);
        let mut ctx = HookContext::new(id, unit, &app_name, hook_name.clone(), leader);
        let remote_unit = relation
            .as_ref()
            .map(|r| r.remote_unit.clone())
            .unwrap_or_default();
        ctx.relation = relation;
        ctx.broken_relation = broken_relation;
        ctx.secret = secret;
        let g = lock(&shared);
        let mut env = self.base_env(
            &g.model,
            &ctx,
            &charm_dir,
            &format!("hooks/{hook_name}"),
            &extras,
        );
        drop(g);
        if let Hook::RelationDeparted { departing, .. } = hook {
            env.push(("JUJU_DEPARTING_UNIT".into(), departing.clone()));
        }
        let handler = find_handler(&charm_dir, "hooks", &hook_name);
        Some(Prepared {
            ctx,
            env,
            charm_dir,
            handler,
            prefix: extras.command_prefix,
            remote_unit,
            argv: None,
        })
    }

    /// Spawn the handler with the context installed in the tool server.
    pub(super) fn spawn(&mut self, p: Prepared) -> Result<Outcome> {
        let mut out = self.spawn_many(vec![p])?;
        out.pop()
            .ok_or_else(|| SimError::Jujuc("no outcome for a spawned hook".into()))
    }

    /// Spawn several handlers at once (different units), wait for all, in input order.
    pub(super) fn spawn_many(&mut self, ps: Vec<Prepared>) -> Result<Vec<Outcome>> {
        let mut jobs = Vec::with_capacity(ps.len());
        {
            let mut g = lock(&self.shared);
            for mut p in ps {
                let cmd = p.command();
                let ctx_id = p.ctx.id.clone();
                if cmd.is_some() {
                    let ctx = std::mem::replace(
                        &mut p.ctx,
                        HookContext::new(String::new(), "", "", String::new(), false),
                    );
                    g.contexts.insert(ctx_id.clone(), ctx);
                }
                jobs.push((p, cmd, ctx_id));
            }
        }
        let timeout = self.opts.hook_timeout;
        let run = |cmd: &mut Option<Command>| cmd.as_mut().map(|c| super::process::run(c, timeout));
        let mut cmds: Vec<Option<Command>> = jobs.iter_mut().map(|j| j.1.take()).collect();
        let results: Vec<_> = if cmds.len() == 1 {
            cmds.iter_mut().map(run).collect()
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = cmds.iter_mut().map(|c| s.spawn(move || run(c))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(None))
                    .collect()
            })
        };
        let mut outcomes = Vec::with_capacity(jobs.len());
        let mut first_err = None;
        let mut g = lock(&self.shared);
        for ((p, _, ctx_id), result) in jobs.into_iter().zip(results) {
            let Some(output) = result else {
                outcomes.push(Outcome {
                    ctx: p.ctx,
                    code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    duration: Duration::ZERO,
                    env: p.env,
                    remote_unit: p.remote_unit,
                });
                continue;
            };
            let Some(ctx) = g.contexts.remove(&ctx_id) else {
                first_err.get_or_insert(SimError::Jujuc("hook context vanished".into()));
                continue;
            };
            match output {
                Ok(output) => outcomes.push(Outcome {
                    ctx,
                    code: Some(output.status.and_then(|s| s.code()).unwrap_or(-1)),
                    stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                    duration: output.duration,
                    env: p.env,
                    remote_unit: p.remote_unit,
                }),
                Err(source) => {
                    first_err.get_or_insert(SimError::Spawn {
                        what: p
                            .handler
                            .as_ref()
                            .map(|h| h.display().to_string())
                            .unwrap_or_default(),
                        source,
                    });
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(outcomes),
        }
    }

    /// Commit or fail, log output, record. `hook` is `None` for actions. Returns whether the
    /// handler exited 0 and its changes committed.
    pub(super) fn finish(&mut self, o: Outcome, hook: Option<&Hook>) -> bool {
        let mut ok = o.code.is_none_or(|c| c == 0);
        let shared = self.shared.clone();
        let mut g = lock(&shared);
        let model = &mut g.model;
        if model.keep_logs {
            for (text, level) in [(&o.stdout, "DEBUG"), (&o.stderr, "WARNING")] {
                for line in text.lines() {
                    model.logs.push(LogEntry {
                        unit: o.ctx.unit.clone(),
                        hook: o.ctx.hook_name.clone(),
                        level: level.into(),
                        message: line.to_owned(),
                    });
                }
            }
        }
        let mut notify = Vec::new();
        let mut commit_error = None;
        if ok && let Err(e) = super::secrets::commit(model, &o.ctx) {
            ok = false;
            commit_error = Some(e.clone());
            if model.keep_logs {
                model.logs.push(LogEntry {
                    unit: o.ctx.unit.clone(),
                    hook: o.ctx.hook_name.clone(),
                    level: "ERROR".into(),
                    message: format!("committing requested changes failed: {e}"),
                });
            }
        }
        if ok {
            notify = super::commit::commit(model, &o.ctx);
            match hook {
                Some(Hook::Start) => {
                    let set = model
                        .units
                        .get(&o.ctx.unit)
                        .is_some_and(|u| u.status_set_by_charm);
                    if let Some(u) = model.units.get_mut(&o.ctx.unit) {
                        u.started = true;
                    }
                    if !set {
                        model.set_unit_status(&o.ctx.unit, "unknown", "");
                    }
                }
                Some(Hook::Remove) => model.set_unit_status(&o.ctx.unit, "terminated", ""),
                _ => {}
            }
        } else if hook.is_some() {
            let msg = format!("hook failed: {:?}", o.ctx.hook_name);
            let since = model.tick();
            if let Some(u) = model.units.get_mut(&o.ctx.unit) {
                u.error = Some(msg.clone());
                u.status_history
                    .push(crate::model::Status::new("error", &msg, since));
            }
        }
        drop(g);
        for (unit, hook) in notify {
            self.enqueue(&unit, hook);
        }
        self.drain_secret_events();
        self.records.push(HookRecord {
            unit: o.ctx.unit.clone(),
            hook: o.ctx.hook_name.clone(),
            action: hook.is_none(),
            remote_unit: o.remote_unit,
            env: if self.opts.record_env {
                o.env
            } else {
                Vec::new()
            },
            calls: o.ctx.calls,
            code: o.code,
            stdout: o.stdout,
            stderr: o.stderr,
            duration: o.duration,
            commit_error,
        });
        ok
    }

    pub(super) fn finalize_unit(&mut self, unit: &str) {
        let mut elect = None;
        let mut minions = Vec::new();
        self.with_model_mut(|m| {
            let Some(u) = m.units.remove(unit) else {
                return;
            };
            for rel in m.relations.values_mut() {
                rel.scope.remove(unit);
            }
            super::secrets::unit_gone(m, unit);
            if let Some(app) = m.apps.get_mut(&u.app) {
                app.units.remove(unit);
                if app.leader.as_deref() == Some(unit) {
                    let next = app
                        .units
                        .iter()
                        .filter(|n| m.units.get(*n).is_some_and(|x| x.life == Life::Alive))
                        .min_by_key(|n| unit_number(n))
                        .cloned();
                    app.leader = next.clone();
                    minions = app
                        .units
                        .iter()
                        .filter(|n| Some(*n) != next.as_ref())
                        .filter(|n| m.units.get(*n).is_some_and(|x| x.life == Life::Alive))
                        .cloned()
                        .collect();
                    elect = next;
                }
            }
        });
        if let Some(new) = elect {
            self.enqueue(&new, Hook::LeaderElected);
            self.tell_minions(&minions);
        }
    }
}

/// `dispatch` if present, else the legacy `<kind>/<name>` handler.
pub(super) fn find_handler(charm_dir: &Path, kind: &str, name: &str) -> Option<PathBuf> {
    let dispatch = charm_dir.join("dispatch");
    if dispatch.is_file() {
        return Some(dispatch);
    }
    let legacy = charm_dir.join(kind).join(name);
    legacy.is_file().then_some(legacy)
}
