//! Typed errors of hook-tool calls. Juju's tools report failures as an exit code (2 for usage,
//! 1 for runtime errors) plus `ERROR <message>` on stderr (docs/juju-hook-tools.md §2.0); charm code needs to tell
//! a few of them apart (a relation that went away, a lost leadership, an action tool outside an
//! action), so stderr is classified here, the way ops' `_ModelBackend` does. Both backends (the
//! hook-tool client and the in-memory one) return this type, so charm code and its tests match on
//! the same variants.

/// A failed hook-tool call. Every variant names the tool and carries Juju's message.
#[derive(Debug, thiserror::Error)]
pub enum HookToolError {
    /// The tool could not be started (not on `PATH`, or not executable): the process is not
    /// running inside a Juju hook context.
    #[error(
        "cannot run hook tool {tool}: {source} (is this process running inside a Juju hook, \
         with the unit's tools directory on PATH?)"
    )]
    ToolMissing {
        /// Tool name.
        tool: String,
        /// The spawn error.
        #[source]
        source: std::io::Error,
    },
    /// Talking to the started tool failed (writing its stdin or reading its output).
    #[error("hook tool {tool}: I/O error while talking to it: {source}")]
    Io {
        /// Tool name.
        tool: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The relation does not exist (any more): `relation not found` / `unknown relation id`.
    #[error("{tool}: relation not found: {stderr}")]
    RelationNotFound {
        /// Tool name.
        tool: String,
        /// Juju's message, `ERROR ` prefix removed.
        stderr: String,
    },
    /// Juju refused a read (e.g. a non-leader reading its own application bag).
    #[error("{tool}: permission denied: {stderr}")]
    PermissionDenied {
        /// Tool name.
        tool: String,
        /// Juju's message.
        stderr: String,
    },
    /// The call needs leadership and this unit is not (or no longer) the leader.
    #[error("{tool}: this unit is not the leader: {stderr}")]
    NotLeader {
        /// Tool name.
        tool: String,
        /// Juju's message.
        stderr: String,
    },
    /// An action tool was called outside an action.
    #[error("{tool}: not running an action: {stderr}")]
    NotInAction {
        /// Tool name.
        tool: String,
        /// Juju's message.
        stderr: String,
    },
    /// Juju rejected the arguments (exit 2): a bug in the caller, or an unsupported Juju version.
    #[error("{tool}: invalid arguments: {stderr}")]
    Usage {
        /// Tool name.
        tool: String,
        /// Juju's message.
        stderr: String,
    },
    /// The tool succeeded but printed something that is not the expected JSON.
    #[error("{tool}: unexpected output {output:?}: {source}")]
    BadOutput {
        /// Tool name.
        tool: String,
        /// What the tool printed (truncated to 200 characters).
        output: String,
        /// Why it did not parse.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The charm asked for something the runtime refuses before calling Juju (e.g. an argument
    /// too large for argv, a value Juju would misparse).
    #[error("{tool}: refused before calling Juju: {reason}")]
    InvalidArgument {
        /// Tool name.
        tool: String,
        /// What is wrong with the argument.
        reason: String,
    },
    /// Any other failure.
    #[error("{tool} failed ({status}): {stderr}")]
    Other {
        /// Tool name.
        tool: String,
        /// `exit code N` or `killed by signal N`.
        status: String,
        /// Juju's message.
        stderr: String,
    },
}

impl HookToolError {
    /// The tool the error came from; handy in logs.
    pub fn tool(&self) -> &str {
        match self {
            HookToolError::ToolMissing { tool, .. }
            | HookToolError::Io { tool, .. }
            | HookToolError::RelationNotFound { tool, .. }
            | HookToolError::PermissionDenied { tool, .. }
            | HookToolError::NotLeader { tool, .. }
            | HookToolError::NotInAction { tool, .. }
            | HookToolError::Usage { tool, .. }
            | HookToolError::BadOutput { tool, .. }
            | HookToolError::InvalidArgument { tool, .. }
            | HookToolError::Other { tool, .. } => tool,
        }
    }

    /// Classifies a failed run from its exit code (`None`: killed by a signal) and stderr.
    /// Message patterns come first (Juju reports `relation not found` as an exit-2 flag error),
    /// then exit 2 means usage, anything else is [`HookToolError::Other`].
    pub fn classify(tool: &str, code: Option<i32>, stderr: &str) -> HookToolError {
        let message = clean_stderr(stderr);
        let lower = message.to_ascii_lowercase();
        let tool = tool.to_owned();
        let stderr = message;
        if lower.contains("relation not found") || lower.contains("unknown relation id") {
            HookToolError::RelationNotFound { tool, stderr }
        } else if lower.contains("not running an action") {
            HookToolError::NotInAction { tool, stderr }
        } else if lower.contains("cannot write relation settings")
            || lower.contains("not the leader")
        {
            HookToolError::NotLeader { tool, stderr }
        } else if lower.contains("permission denied") || lower.contains("unauthorized access") {
            HookToolError::PermissionDenied { tool, stderr }
        } else if code == Some(2) {
            HookToolError::Usage { tool, stderr }
        } else {
            let status = match code {
                Some(c) => format!("exit code {c}"),
                None => "killed by a signal".to_owned(),
            };
            HookToolError::Other {
                tool,
                status,
                stderr,
            }
        }
    }
}

/// Juju's stderr without the `ERROR ` prefix and trailing newline; several lines are joined by
/// `; ` so the message stays one log line.
fn clean_stderr(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(|l| l.strip_prefix("ERROR ").unwrap_or(l).trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        "(no message on stderr)".to_owned()
    } else {
        lines.join("; ")
    }
}
