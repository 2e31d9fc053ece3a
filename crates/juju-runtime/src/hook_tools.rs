//! The production [`ModelBackend`]: every call runs the matching Juju hook tool, with the argv
//! ops ≥3 uses (docs/juju-hook-tools.md §2, "ops calls it as"): `--format=json` wherever the tool prints,
//! `-r <endpoint>:<id>`, `--` before free text, and data for `relation-set`/`state-set` as JSON on
//! stdin via `--file -` (never on argv, so large bags cannot hit argument limits).
//!
//! Cost: one process per call and none for no-op writes (an empty `relation-set`, `state-set` or
//! `action-set` spawns nothing). Within one hook, `config-get` is asked once and cached (config
//! cannot change during a hook), and `is-leader` is cached like ops does: `false` for the rest of
//! the hook (Juju keeps a unit that learnt it is a minion a minion), `true` for 30 seconds (Juju's
//! leadership guarantee).

use crate::action_results::validate_action_result_key;
use crate::backend::{Bag, BagOwner, LogLevel, ModelBackend, RelationId, Status, StatusScope};
use crate::goal_state::GoalState;
use crate::network::{NetworkBackend, NetworkInfo, Port};
use crate::tool_error::HookToolError;
use crate::tool_runner::{MAX_ARG_BYTES, ToolRunner};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a `true` from `is-leader` is trusted (Juju guarantees leadership for ~30 s).
const LEADER_TTL: Duration = Duration::from_secs(30);

/// The hook-tool client. Build one per hook with [`HookTools::new`] (tools from `PATH`) or, in
/// tests, [`HookTools::with_tools_dir`].
#[derive(Debug, Default)]
pub struct HookTools {
    pub(crate) runner: ToolRunner,
    config: OnceLock<Map<String, Value>>,
    leader: Mutex<Option<(bool, Instant)>>,
}

impl HookTools {
    /// A client that finds the tools on `PATH`, as inside a real Juju hook.
    pub fn new() -> Self {
        Self::default()
    }

    /// A client that runs `dir/<tool>`; tests point it at fake tools or a simulator's tools dir
    /// without touching the process environment.
    pub fn with_tools_dir(dir: impl Into<PathBuf>) -> Self {
        let mut tools = Self::default();
        tools.runner.set_tools_dir(dir.into());
        tools
    }

    /// Adds a variable to every tool process's environment (e.g. a simulator's
    /// `JUJU_AGENT_SOCKET_ADDRESS` and `JUJU_CONTEXT_ID` when the test process is not itself a hook).
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.runner.add_env(key.into(), value.into());
        self
    }

    pub(crate) fn run(&self, tool: &str, args: &[&str]) -> Result<Vec<u8>, HookToolError> {
        self.runner.run(tool, args, None)
    }

    fn run_json<T: DeserializeOwned>(&self, tool: &str, args: &[&str]) -> Result<T, HookToolError> {
        let out = self.run(tool, args)?;
        parse_json(tool, &out)
    }

    fn run_with_stdin_json(
        &self,
        tool: &str,
        args: &[&str],
        data: &BTreeMap<String, String>,
    ) -> Result<(), HookToolError> {
        let body = serde_json::to_vec(data).map_err(|source| HookToolError::BadOutput {
            tool: tool.to_owned(),
            output: "(encoding the data to send)".to_owned(),
            source: source.into(),
        })?;
        self.runner.run(tool, args, Some(&body)).map(drop)
    }
}

/// Parses a tool's JSON output; `null` becomes the type's default via `Option`.
pub(crate) fn parse_json<T: DeserializeOwned>(tool: &str, out: &[u8]) -> Result<T, HookToolError> {
    serde_json::from_slice(out).map_err(|source| HookToolError::BadOutput {
        tool: tool.to_owned(),
        output: String::from_utf8_lossy(out).chars().take(200).collect(),
        source: source.into(),
    })
}

/// `--format=json` maps that Juju may print as `null` when empty (Juju 4 `state-get`).
fn parse_map_or_null<T: DeserializeOwned + Default>(
    tool: &str,
    out: &[u8],
) -> Result<T, HookToolError> {
    let value: Option<T> = parse_json(tool, out)?;
    Ok(value.unwrap_or_default())
}

/// The `--log-level` word juju-log understands.
pub(crate) fn level_word(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "DEBUG",
        LogLevel::Info => "INFO",
        LogLevel::Warning => "WARNING",
        LogLevel::Error => "ERROR",
    }
}

/// Splits text into pieces that each fit one argv string, preferring line breaks, never
/// splitting a UTF-8 character.
pub(crate) fn split_for_argv(text: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Some(nl) = rest[..cut].rfind('\n').filter(|&i| i > 0) {
            cut = nl + 1;
        }
        let (head, tail) = rest.split_at(cut);
        pieces.push(head.strip_suffix('\n').unwrap_or(head));
        rest = tail;
    }
    pieces.push(rest);
    pieces
}

impl ModelBackend for HookTools {
    fn relation_ids(&self, endpoint: &str) -> Result<Vec<RelationId>, HookToolError> {
        let tool = "relation-ids";
        let raw: Option<Vec<String>> = self.run_json(tool, &[endpoint, "--format=json"])?;
        raw.unwrap_or_default()
            .iter()
            .map(|s| {
                s.parse::<RelationId>()
                    .map_err(|e| HookToolError::BadOutput {
                        tool: tool.to_owned(),
                        output: s.clone(),
                        source: e.into(),
                    })
            })
            .collect()
    }

    fn relation_list(&self, rel: &RelationId) -> Result<Vec<String>, HookToolError> {
        let id = rel.to_string();
        let out = self.run("relation-list", &["--format=json", "-r", &id])?;
        parse_map_or_null("relation-list", &out)
    }

    fn relation_remote_app(&self, rel: &RelationId) -> Result<String, HookToolError> {
        let id = rel.to_string();
        self.run_json("relation-list", &["--format=json", "--app", "-r", &id])
    }

    fn relation_get(&self, rel: &RelationId, owner: &BagOwner) -> Result<Bag, HookToolError> {
        let id = rel.to_string();
        let out = match owner {
            BagOwner::Unit(unit) => {
                self.run("relation-get", &["--format=json", "-r", &id, "-", unit])?
            }
            BagOwner::App(app) => self.run(
                "relation-get",
                &["--format=json", "-r", &id, "--app", "-", app],
            )?,
        };
        parse_map_or_null("relation-get", &out)
    }

    fn relation_set(&self, rel: &RelationId, app: bool, data: &Bag) -> Result<(), HookToolError> {
        if data.is_empty() {
            return Ok(());
        }
        let id = rel.to_string();
        let args: &[&str] = if app {
            &["-r", &id, "--app", "--file", "-"]
        } else {
            &["-r", &id, "--file", "-"]
        };
        self.run_with_stdin_json("relation-set", args, data)
    }

    fn config_get(&self) -> Result<Map<String, Value>, HookToolError> {
        if let Some(config) = self.config.get() {
            return Ok(config.clone());
        }
        let out = self.run("config-get", &["--format=json"])?;
        let config: Map<String, Value> = parse_map_or_null("config-get", &out)?;
        Ok(self.config.get_or_init(|| config).clone())
    }

    fn is_leader(&self) -> Result<bool, HookToolError> {
        let mut cached = self.leader.lock().unwrap_or_else(|e| e.into_inner());
        match *cached {
            Some((false, _)) => return Ok(false),
            Some((true, at)) if at.elapsed() < LEADER_TTL => return Ok(true),
            _ => {}
        }
        let leader: bool = self.run_json("is-leader", &["--format=json"])?;
        *cached = Some((leader, Instant::now()));
        Ok(leader)
    }

    fn status_set(&self, scope: StatusScope, status: &Status) -> Result<(), HookToolError> {
        let application = match scope {
            StatusScope::Unit => "--application=False",
            StatusScope::Application => "--application=True",
        };
        self.run(
            "status-set",
            &[application, status.kind.as_str(), "--", &status.message],
        )
        .map(drop)
    }

    fn application_version_set(&self, version: &str) -> Result<(), HookToolError> {
        self.run("application-version-set", &["--", version])
            .map(drop)
    }

    fn juju_log(&self, level: LogLevel, message: &str) -> Result<(), HookToolError> {
        juju_log_with(&self.runner, level, message)
    }

    fn juju_log_sender(&self) -> Option<crate::logging::SendLog> {
        let runner = self.runner.clone();
        Some(std::sync::Arc::new(move |level, message: &str| {
            juju_log_with(&runner, level, message)
        }))
    }

    fn action_get(&self) -> Result<Map<String, Value>, HookToolError> {
        let out = self.run("action-get", &["--format=json"])?;
        parse_map_or_null("action-get", &out)
    }

    fn action_set(&self, results: &BTreeMap<String, String>) -> Result<(), HookToolError> {
        if results.is_empty() {
            return Ok(());
        }
        let mut args = Vec::with_capacity(results.len());
        for (key, value) in results {
            validate_action_result_key(key).map_err(|e| HookToolError::InvalidArgument {
                tool: "action-set".to_owned(),
                reason: e.to_string(),
            })?;
            args.push(format!("{key}={value}"));
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run("action-set", &argv).map(drop)
    }

    fn action_fail(&self, message: &str) -> Result<(), HookToolError> {
        self.run("action-fail", &["--", message]).map(drop)
    }

    fn action_log(&self, message: &str) -> Result<(), HookToolError> {
        self.run("action-log", &["--", message]).map(drop)
    }

    fn state_get(&self) -> Result<BTreeMap<String, String>, HookToolError> {
        let out = self.run("state-get", &["--format=json"])?;
        parse_map_or_null("state-get", &out)
    }

    fn state_set(&self, data: &BTreeMap<String, String>) -> Result<(), HookToolError> {
        if data.is_empty() {
            return Ok(());
        }
        self.run_with_stdin_json("state-set", &["--file", "-"], data)
    }

    fn state_delete(&self, key: &str) -> Result<(), HookToolError> {
        // ops passes the key bare; a key that looks like a flag needs `--` first.
        let args: &[&str] = if key.starts_with('-') {
            &["--", key]
        } else {
            &[key]
        };
        self.run("state-delete", args).map(drop)
    }

    fn goal_state(&self) -> Result<GoalState, HookToolError> {
        let out = self.run("goal-state", &["--format=json"])?;
        GoalState::from_json("goal-state", &out)
    }
}

impl NetworkBackend for HookTools {
    fn network_get(
        &self,
        binding: &str,
        relation: Option<&RelationId>,
    ) -> Result<NetworkInfo, HookToolError> {
        let out = match relation {
            Some(rel) => {
                let id = rel.to_string();
                self.run("network-get", &["--format=json", "-r", &id, binding])?
            }
            None => self.run("network-get", &["--format=json", binding])?,
        };
        parse_map_or_null("network-get", &out)
    }

    fn open_port(&self, port: Port) -> Result<(), HookToolError> {
        self.run("open-port", &[&port.to_string()]).map(drop)
    }

    fn close_port(&self, port: Port) -> Result<(), HookToolError> {
        self.run("close-port", &[&port.to_string()]).map(drop)
    }

    fn opened_ports(&self) -> Result<Vec<Port>, HookToolError> {
        let tool = "opened-ports";
        let raw: Option<Vec<String>> = self.run_json(tool, &["--format=json"])?;
        raw.unwrap_or_default()
            .iter()
            .map(|s| {
                s.parse::<Port>().map_err(|e| HookToolError::BadOutput {
                    tool: tool.to_owned(),
                    output: s.clone(),
                    source: e.into(),
                })
            })
            .collect()
    }

    fn juju_reboot(&self, now: bool) -> Result<(), HookToolError> {
        let args: &[&str] = if now { &["--now"] } else { &[] };
        self.run("juju-reboot", args).map(drop)
    }
}

/// `juju-log` through `runner`, split where one argument would exceed the kernel's limit.
fn juju_log_with(runner: &ToolRunner, level: LogLevel, message: &str) -> Result<(), HookToolError> {
    for piece in split_for_argv(message, MAX_ARG_BYTES) {
        runner.run(
            "juju-log",
            &["--log-level", level_word(level), "--", piece],
            None,
        )?;
    }
    Ok(())
}
