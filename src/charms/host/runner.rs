//! External commands: the [`Runner`] seam and the real runner (programs found on `PATH`).
//! Tests plug in their own runner (`tests/common`), so no test double ships in the binary.

use super::HostError;
use std::fmt;

/// A command line: program (looked up on `PATH`) and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    /// Program name, e.g. `systemctl`.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Extra environment variables (not shown by `Display`).
    pub env: Vec<(String, String)>,
}

impl Cmd {
    /// Builds a command from a program and its arguments.
    pub fn new<I, S>(program: &str, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            program: program.to_string(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// Adds an environment variable for the command.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program)?;
        for a in &self.args {
            if a.is_empty() || a.chars().any(|c| c.is_whitespace() || c == '"') {
                write!(f, " {a:?}")?;
            } else {
                write!(f, " {a}")?;
            }
        }
        Ok(())
    }
}

/// What a finished command printed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CmdOutput {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl CmdOutput {
    /// True for exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Runs external commands.
pub trait Runner {
    /// Runs `cmd` to completion and returns what it printed.
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError>;
}

/// Runs commands for real, found on `PATH`, with no stdin.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRunner;

impl Runner for SystemRunner {
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        let out = std::process::Command::new(&cmd.program)
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|source| HostError::Spawn {
                command: cmd.to_string(),
                source,
            })?;
        Ok(CmdOutput {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
