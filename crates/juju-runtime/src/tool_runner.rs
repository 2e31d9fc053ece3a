//! Runs one hook-tool process: no shell, one `fork+exec` per call, stdin only when the tool reads
//! data (`--file -`), stdout and stderr captured. Failures become [`HookToolError`]s.
//!
//! Argument sizes: Linux limits a single argv string to 128 KiB (`MAX_ARG_STRLEN`) and argv plus
//! environment to `ARG_MAX` (usually 2 MiB). Oversized arguments are refused here with a clear
//! [`HookToolError::InvalidArgument`] instead of the kernel's bare `E2BIG`. Data-carrying tools
//! that accept `--file -` (relation-set, state-set) never put data on argv; `action-set` has no
//! such option, so large action results are bounded by these limits (see `action_results`).

use crate::tool_error::HookToolError;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Longest single argument the kernel accepts (`MAX_ARG_STRLEN` = 32 pages, including the NUL).
pub const MAX_ARG_BYTES: usize = 128 * 1024 - 1;

/// Budget for the sum of all arguments of one call; leaves room under the usual 2 MiB `ARG_MAX`
/// for Juju's hook environment.
pub const MAX_ARGV_TOTAL_BYTES: usize = 1024 * 1024;

/// `E2BIG` on Linux: argument list too long.
const E2BIG: i32 = 7;

/// Where the tools live and what extra environment they get.
#[derive(Debug, Default, Clone)]
pub struct ToolRunner {
    /// `None`: look tools up on `PATH` (production). `Some(dir)`: run `dir/<tool>`.
    tools_dir: Option<PathBuf>,
    /// Extra variables for the tool processes (e.g. a simulator's socket address in tests).
    env: Vec<(OsString, OsString)>,
}

impl ToolRunner {
    /// Runs tools from `dir` instead of searching `PATH`.
    pub fn set_tools_dir(&mut self, dir: PathBuf) {
        self.tools_dir = Some(dir);
    }

    /// Adds a variable to every tool's environment.
    pub fn add_env(&mut self, key: OsString, value: OsString) {
        self.env.push((key, value));
    }

    /// Runs `tool args...`, feeding `stdin` if given, and returns its stdout on exit 0.
    pub fn run(
        &self,
        tool: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
    ) -> Result<Vec<u8>, HookToolError> {
        check_argv(tool, args)?;
        let program = match &self.tools_dir {
            Some(dir) => dir.join(tool).into_os_string(),
            None => OsString::from(tool),
        };
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|source| {
            if source.raw_os_error() == Some(E2BIG) {
                HookToolError::InvalidArgument {
                    tool: tool.to_owned(),
                    reason: format!("argument list too long for the kernel ({source})"),
                }
            } else {
                HookToolError::ToolMissing {
                    tool: tool.to_owned(),
                    source,
                }
            }
        })?;

        if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A tool that fails before reading stdin closes the pipe; its exit status and stderr
            // say why, so a broken pipe here is not the error to report.
            match pipe.write_all(data) {
                Err(source) if source.kind() != std::io::ErrorKind::BrokenPipe => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(HookToolError::Io {
                        tool: tool.to_owned(),
                        source,
                    });
                }
                _ => {}
            }
        }
        let output = child
            .wait_with_output()
            .map_err(|source| HookToolError::Io {
                tool: tool.to_owned(),
                source,
            })?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            Err(HookToolError::classify(tool, output.status.code(), &stderr))
        }
    }
}

/// Refuses argument vectors the kernel would reject, naming the tool and the limit.
fn check_argv(tool: &str, args: &[&str]) -> Result<(), HookToolError> {
    let mut total = 0usize;
    for arg in args {
        if arg.len() > MAX_ARG_BYTES {
            return Err(HookToolError::InvalidArgument {
                tool: tool.to_owned(),
                reason: format!(
                    "an argument of {} bytes exceeds the kernel's {MAX_ARG_BYTES}-byte limit per argument",
                    arg.len()
                ),
            });
        }
        if arg.contains('\0') {
            return Err(HookToolError::InvalidArgument {
                tool: tool.to_owned(),
                reason: "an argument contains a NUL byte".to_owned(),
            });
        }
        total += arg.len() + 1;
    }
    if total > MAX_ARGV_TOTAL_BYTES {
        return Err(HookToolError::InvalidArgument {
            tool: tool.to_owned(),
            reason: format!(
                "arguments total {total} bytes, over the {MAX_ARGV_TOTAL_BYTES}-byte budget kept under ARG_MAX"
            ),
        });
    }
    Ok(())
}
