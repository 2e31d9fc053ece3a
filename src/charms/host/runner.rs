//! External commands: the [`Runner`] seam and the real runner (programs found on `PATH`).
//! Tests plug in their own runner (`tests/common`), so no test double ships in the binary.

use super::HostError;
use std::fmt;
use std::io::{Read, Seek};
use std::time::Duration;

/// A command line: program (looked up on `PATH`) and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    /// Program name, e.g. `systemctl`.
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Extra environment variables (not shown by `Display`).
    pub env: Vec<(String, String)>,
    /// How long it may run; `None`: the program's default ([`default_timeout`]).
    pub timeout: Option<Duration>,
}

/// How long a command may run unless its [`Cmd`] says otherwise: every external command is
/// bounded, so a hanging `systemctl`, `slurmd -C` or `scontrol` cannot hold a hook (and Juju's
/// queue) for long. `apt-get` may legitimately take minutes; the Slurm and systemd tools answer
/// in well under a second when healthy.
pub fn default_timeout(program: &str, first_arg: Option<&str>) -> Duration {
    let secs = match (program, first_arg) {
        ("apt-get", _) => 900,
        ("systemctl", _) => 30,
        ("scontrol", Some("reconfigure")) => 30,
        ("slurmd" | "slurmctld" | "scontrol" | "sinfo" | "nvidia-modprobe", _) => 10,
        ("getent", _) => 2,
        _ => 60,
    };
    Duration::from_secs(secs)
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
            timeout: None,
        }
    }

    /// Sets how long the command may run (instead of [`default_timeout`]).
    pub fn with_timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// How long the command may run: its own limit, else the program's default.
    pub fn limit(&self) -> Duration {
        self.timeout.unwrap_or_else(|| {
            default_timeout(&self.program, self.args.first().map(String::as_str))
        })
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

/// Runs commands for real, found on `PATH`, with no stdin, each bounded by [`Cmd::limit`]: a
/// command still running at its limit is killed (with its process group) and reported as
/// [`HostError::Timeout`]. Output goes to anonymous temp files rather than pipes, so no reader
/// thread is needed and a grandchild holding the output open cannot stall the hook.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRunner;

impl Runner for SystemRunner {
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        use std::os::unix::process::CommandExt;
        use wait_timeout::ChildExt;
        let spawn_err = |source| HostError::Spawn {
            command: cmd.to_string(),
            source,
        };
        let mut stdout = tempfile::tempfile().map_err(spawn_err)?;
        let mut stderr = tempfile::tempfile().map_err(spawn_err)?;
        let mut child = std::process::Command::new(&cmd.program)
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(stdout.try_clone().map_err(spawn_err)?)
            .stderr(stderr.try_clone().map_err(spawn_err)?)
            // Its own process group, so a timeout kills what it started too.
            .process_group(0)
            .spawn()
            .map_err(spawn_err)?;
        let limit = cmd.limit();
        let status = match child.wait_timeout(limit).map_err(spawn_err)? {
            Some(status) => status,
            None => {
                kill_group(child.id());
                let _ = child.kill();
                let _ = child.wait();
                return Err(HostError::Timeout {
                    command: cmd.to_string(),
                    limit,
                });
            }
        };
        Ok(CmdOutput {
            code: status.code(),
            stdout: read_back(&mut stdout),
            stderr: read_back(&mut stderr),
        })
    }
}

/// SIGKILL to the process group `pgid` (the child made itself its leader), through `kill(1)`
/// so no `unsafe` is needed; a failure only leaves grandchildren running.
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// What a command wrote to one of its output files, lossily decoded.
fn read_back(file: &mut std::fs::File) -> String {
    let mut bytes = Vec::new();
    if file.rewind().is_ok() {
        let _ = file.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
