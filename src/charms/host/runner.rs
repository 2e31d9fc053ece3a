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

    /// This output when `cmd` exited 0, else [`HostError::Failed`] with the exit status and the
    /// tail of what it printed (stderr, or stdout when stderr is empty).
    pub fn success_of(self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        if self.success() {
            return Ok(self);
        }
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let tail: String = text
            .trim()
            .chars()
            .rev()
            .take(400)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Err(HostError::Failed {
            command: cmd.to_string(),
            status: self.code.map_or_else(
                || "killed by a signal".to_string(),
                |c| format!("exit code {c}"),
            ),
            stderr: tail,
        })
    }
}

/// Runs external commands. `Sync`, so a hook can check the host on one thread while it asks
/// Juju on another.
pub trait Runner: Sync {
    /// Runs `cmd` to completion and returns what it printed.
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError>;

    /// Runs independent commands (none reads what another writes) and returns their outcomes
    /// in the order given. This default runs them one after the other; [`SystemRunner`] runs
    /// them side by side, so a hook that needs several read-only answers from the host waits
    /// for the slowest rather than for the sum.
    fn run_all(&self, cmds: &[Cmd]) -> Vec<Result<CmdOutput, HostError>> {
        cmds.iter().map(|cmd| self.run(cmd)).collect()
    }
}

/// Runs commands for real, found on `PATH`, with no stdin, each bounded by [`Cmd::limit`]: a
/// command still running at its limit is killed (with its process group) and reported as
/// [`HostError::Timeout`]. Output goes to anonymous files rather than pipes, so no reader
/// thread is needed and a grandchild holding the output open cannot stall the hook: in-memory
/// files (`memfd_create`) where the kernel has them, else unnamed temp files (a temp file on
/// a busy ext4 `/tmp` costs an inode allocation each, two per command).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemRunner;

/// A command started by [`SystemRunner`] and not yet waited for.
struct Started<'c> {
    cmd: &'c Cmd,
    child: std::process::Child,
    stdout: std::fs::File,
    stderr: std::fs::File,
    since: std::time::Instant,
}

impl SystemRunner {
    fn start(cmd: &Cmd) -> Result<Started<'_>, HostError> {
        use std::os::unix::process::CommandExt;
        let spawn_err = |source| HostError::Spawn {
            command: cmd.to_string(),
            source,
        };
        let stdout = output_file().map_err(spawn_err)?;
        let stderr = output_file().map_err(spawn_err)?;
        let child = std::process::Command::new(&cmd.program)
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(std::process::Stdio::null())
            .stdout(stdout.try_clone().map_err(spawn_err)?)
            .stderr(stderr.try_clone().map_err(spawn_err)?)
            // Its own process group, so a timeout kills what it started too.
            .process_group(0)
            .spawn()
            .map_err(spawn_err)?;
        Ok(Started {
            cmd,
            child,
            stdout,
            stderr,
            since: std::time::Instant::now(),
        })
    }

    /// Waits for a started command until its limit (counted from its start) and reads back
    /// what it printed.
    fn finish(started: Started<'_>) -> Result<CmdOutput, HostError> {
        use wait_timeout::ChildExt;
        let Started {
            cmd,
            mut child,
            mut stdout,
            mut stderr,
            since,
        } = started;
        let limit = cmd.limit();
        let left = limit.saturating_sub(since.elapsed());
        let waited = child
            .wait_timeout(left)
            .map_err(|source| HostError::Spawn {
                command: cmd.to_string(),
                source,
            })?;
        let status = match waited {
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

impl Runner for SystemRunner {
    fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        Self::finish(Self::start(cmd)?)
    }

    /// Starts every command, then waits for each in turn (each against its own limit).
    fn run_all(&self, cmds: &[Cmd]) -> Vec<Result<CmdOutput, HostError>> {
        let started: Vec<_> = cmds.iter().map(Self::start).collect();
        started
            .into_iter()
            .map(|s| s.and_then(Self::finish))
            .collect()
    }
}

/// An anonymous file for a command's output: in memory (`memfd_create`), or an unnamed temp
/// file where the kernel refuses memfds (before Linux 3.17, or a seccomp filter).
fn output_file() -> std::io::Result<std::fs::File> {
    use rustix::fs::{MemfdFlags, memfd_create};
    match memfd_create("slurm-charm-output", MemfdFlags::CLOEXEC) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        Err(_) => tempfile::tempfile(),
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
