//! Hook-tool semantics, executed inside the simulator against the in-memory model.
//!
//! Every tool is a function of the model, the running hook's context and the argv; the
//! `jujuc` executable only forwards the call here.

pub mod action;
mod goal_state;
mod misc;
mod network;
pub mod output;
mod relation;
mod secret_read;
mod secret_write;
mod state;
mod status;

use crate::context::{HookContext, ToolCall};
use crate::model::Model;
use crate::protocol::{Request, Response};
use std::path::{Path, PathBuf};

/// A tool failure, mapped to Juju's exit codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// Option or argument error (exit 2).
    Usage(String),
    /// Runtime error (exit 1).
    Runtime(String),
    /// `-h/--help` was given (exit 0, help on stdout).
    Help,
}

/// Result of a tool: the bytes for stdout.
pub type ToolResult = Result<Vec<u8>, ToolError>;

/// Everything a tool may read or change.
pub struct ToolCx<'a> {
    /// The model.
    pub model: &'a mut Model,
    /// The running hook.
    pub hook: &'a mut HookContext,
    /// The caller's working directory.
    pub cwd: PathBuf,
    /// The caller's stdin (only sent for `--file -`).
    pub stdin: &'a [u8],
    /// Warnings for stderr (deprecated options etc.).
    pub warnings: Vec<u8>,
}

impl ToolCx<'_> {
    /// Resolve a path relative to the caller's cwd.
    pub fn path(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_owned()
        } else {
            self.cwd.join(p)
        }
    }
}

/// Names of all tools the simulator provides (symlinks in the tools dir).
pub const TOOL_NAMES: &[&str] = &[
    "action-fail",
    "action-get",
    "action-log",
    "action-set",
    "application-version-set",
    "close-port",
    "config-get",
    "goal-state",
    "is-leader",
    "juju-log",
    "juju-reboot",
    "network-get",
    "open-port",
    "opened-ports",
    "relation-get",
    "relation-ids",
    "relation-list",
    "relation-set",
    "secret-add",
    "secret-get",
    "secret-grant",
    "secret-ids",
    "secret-info-get",
    "secret-remove",
    "secret-revoke",
    "secret-set",
    "state-delete",
    "state-get",
    "state-set",
    "status-get",
    "status-set",
    "unit-get",
];

fn run_tool(cx: &mut ToolCx<'_>, tool: &str, args: &[String]) -> ToolResult {
    match tool {
        "relation-ids" => relation::relation_ids(cx, args),
        "relation-list" => relation::relation_list(cx, args),
        "relation-get" => relation::relation_get(cx, args),
        "relation-set" => relation::relation_set(cx, args),
        "config-get" => misc::config_get(cx, args),
        "is-leader" => misc::is_leader(cx, args),
        "juju-log" => misc::juju_log(cx, args),
        "juju-reboot" => misc::juju_reboot(cx, args),
        "status-set" => status::status_set(cx, args),
        "status-get" => status::status_get(cx, args),
        "application-version-set" => status::application_version_set(cx, args),
        "action-get" => action::action_get(cx, args),
        "action-set" => action::action_set(cx, args),
        "action-fail" => action::action_fail(cx, args),
        "action-log" => action::action_log(cx, args),
        "state-get" => state::state_get(cx, args),
        "state-set" => state::state_set(cx, args),
        "state-delete" => state::state_delete(cx, args),
        "network-get" => network::network_get(cx, args),
        "unit-get" => network::unit_get(cx, args),
        "open-port" => network::open_port(cx, args, true),
        "close-port" => network::open_port(cx, args, false),
        "opened-ports" => network::opened_ports(cx, args),
        "goal-state" => goal_state::goal_state(cx, args),
        "secret-add" => secret_write::secret_add(cx, args),
        "secret-set" => secret_write::secret_set(cx, args),
        "secret-remove" => secret_write::secret_remove(cx, args),
        "secret-grant" => secret_write::secret_grant(cx, args),
        "secret-revoke" => secret_write::secret_revoke(cx, args),
        "secret-get" => secret_read::secret_get(cx, args),
        "secret-info-get" => secret_read::secret_info_get(cx, args),
        "secret-ids" => secret_read::secret_ids(cx, args),
        other => Err(ToolError::Runtime(format!(
            "bad request: unknown command {other:?}"
        ))),
    }
}

/// Execute one request against the model and the running hook (`None` when no hook runs).
pub fn execute(model: &mut Model, hook: Option<&mut HookContext>, req: &Request) -> Response {
    let Some(hook) = hook.filter(|h| h.id == req.context_id) else {
        return Response {
            code: 1,
            stdout: Vec::new(),
            stderr: format!(
                "ERROR bad request: wrong context ID; got {:?}\n",
                req.context_id
            )
            .into_bytes(),
        };
    };
    let mut cx = ToolCx {
        model,
        hook,
        cwd: PathBuf::from(&req.cwd),
        stdin: &req.stdin,
        warnings: Vec::new(),
    };
    let injected = cx
        .model
        .injected_failures
        .iter()
        .position(|(unit, tool)| *unit == cx.hook.unit && *tool == req.tool);
    let result = match injected {
        Some(i) => {
            cx.model.injected_failures.remove(i);
            Err(ToolError::Runtime(format!(
                "{} failed (failure injected by the simulator)",
                req.tool
            )))
        }
        None => run_tool(&mut cx, &req.tool, &req.args),
    };
    let mut stderr = std::mem::take(&mut cx.warnings);
    let (code, stdout) = match result {
        Ok(out) => (0, out),
        Err(ToolError::Help) => (0, format!("Usage: {} [options]\n", req.tool).into_bytes()),
        Err(ToolError::Usage(m)) => {
            stderr.extend_from_slice(format!("ERROR {m}\n").as_bytes());
            (2, Vec::new())
        }
        Err(ToolError::Runtime(m)) => {
            stderr.extend_from_slice(format!("ERROR {m}\n").as_bytes());
            (1, Vec::new())
        }
    };
    cx.hook.calls.push(ToolCall {
        tool: req.tool.clone(),
        args: req.args.clone(),
        code,
    });
    Response {
        code,
        stdout,
        stderr,
    }
}

/// `unrecognized args: ["x"]` when there are extra positionals.
pub fn check_empty(rest: &[String]) -> Result<(), ToolError> {
    if rest.is_empty() {
        Ok(())
    } else {
        let quoted: Vec<String> = rest.iter().map(|s| format!("{s:?}")).collect();
        Err(ToolError::Usage(format!(
            "unrecognized args: [{}]",
            quoted.join(" ")
        )))
    }
}

/// Parse `key=value` arguments (Juju's `keyvalues.Parse`, empty values allowed).
pub fn parse_key_values(
    args: &[String],
) -> Result<std::collections::BTreeMap<String, String>, ToolError> {
    let mut out = std::collections::BTreeMap::new();
    for a in args {
        let Some((k, v)) = a.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(ToolError::Usage(format!(
                "expected \"key=value\", got {a:?}"
            )));
        };
        if out.insert(k.to_owned(), v.to_owned()).is_some() {
            return Err(ToolError::Usage(format!(
                "key {k:?} specified more than once"
            )));
        }
    }
    Ok(out)
}

/// Read a `--file` (path or `-` for stdin) as a YAML/JSON map of strings.
pub fn read_settings_file(
    cx: &ToolCx<'_>,
    file: &str,
) -> Result<std::collections::BTreeMap<String, String>, ToolError> {
    let text = if file == "-" || file == "/dev/stdin" {
        String::from_utf8_lossy(cx.stdin).into_owned()
    } else {
        std::fs::read_to_string(cx.path(file))
            .map_err(|e| ToolError::Runtime(format!("cannot read {file}: {e}")))?
    };
    if text.trim().is_empty() {
        return Ok(Default::default());
    }
    let value: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|e| ToolError::Runtime(format!("cannot parse settings file: {e}")))?;
    let mut out = std::collections::BTreeMap::new();
    match value {
        serde_yaml::Value::Null => {}
        serde_yaml::Value::Mapping(m) => {
            for (k, v) in m {
                let key = yaml_scalar(&k).ok_or_else(|| {
                    ToolError::Runtime("settings file keys must be strings".into())
                })?;
                let val = yaml_scalar(&v).ok_or_else(|| {
                    ToolError::Runtime(format!("value of {key:?} must be a string"))
                })?;
                out.insert(key, val);
            }
        }
        _ => {
            return Err(ToolError::Runtime(
                "settings file must contain a map of strings".into(),
            ));
        }
    }
    Ok(out)
}

fn yaml_scalar(v: &serde_yaml::Value) -> Option<String> {
    match v {
        serde_yaml::Value::String(s) => Some(s.clone()),
        serde_yaml::Value::Number(n) => Some(n.to_string()),
        serde_yaml::Value::Bool(b) => Some(b.to_string()),
        serde_yaml::Value::Null => Some(String::new()),
        _ => None,
    }
}
