//! The hook-tool client side of the simulator: what a hook-tool process does. It forwards its
//! argv, cwd and (when the tool reads it) stdin to the simulator over `JUJU_AGENT_SOCKET_ADDRESS`,
//! like Juju's own jujuc, and reproduces the reply's stdout, stderr and exit code. Shared by the
//! `jujuc` binary and the benchmark's timed variant so both behave identically.

use crate::protocol::{Request, Response};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// The tool a multi-call binary was invoked as: the basename of `argv[0]`.
pub fn tool_name(argv0: &str) -> String {
    std::path::Path::new(argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Prints `ERROR <msg>` to stderr, as Juju's tools do, and returns exit code 1.
pub fn fail(msg: &str) -> u8 {
    let _ = writeln!(std::io::stderr(), "ERROR {msg}");
    1
}

/// Whether the invocation reads standard input (`--file -` or `--file /dev/stdin` on
/// relation-set/state-set).
pub fn wants_stdin(tool: &str, args: &[String]) -> bool {
    if tool != "relation-set" && tool != "state-set" {
        return false;
    }
    let mut prev_is_file = false;
    for a in args {
        if a == "--" {
            break;
        }
        let stdin_name = |v: &str| v == "-" || v == "/dev/stdin";
        if (prev_is_file && stdin_name(a)) || a.strip_prefix("--file=").is_some_and(stdin_name) {
            return true;
        }
        prev_is_file = a == "--file";
    }
    false
}

/// Runs one hook-tool call against the simulator named by the environment and writes its
/// output; returns the exit code the tool process should exit with.
pub fn run(tool: &str, args: Vec<String>) -> u8 {
    let Ok(context_id) = std::env::var("JUJU_CONTEXT_ID") else {
        return fail("JUJU_CONTEXT_ID not set");
    };
    let Ok(addr) = std::env::var("JUJU_AGENT_SOCKET_ADDRESS") else {
        return fail("JUJU_AGENT_SOCKET_ADDRESS not set");
    };
    match std::env::var("JUJU_AGENT_SOCKET_NETWORK").as_deref() {
        Ok("unix") => {}
        Ok(other) => return fail(&format!("unsupported socket network {other:?}")),
        Err(_) => return fail("JUJU_AGENT_SOCKET_NETWORK not set"),
    }
    let mut stdin = Vec::new();
    if wants_stdin(tool, &args) && std::io::stdin().read_to_end(&mut stdin).is_err() {
        return fail("cannot read standard input");
    }
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let req = Request {
        context_id,
        cwd,
        tool: tool.to_owned(),
        args,
        stdin,
    };
    let mut stream = match UnixStream::connect(&addr) {
        Ok(s) => s,
        Err(e) => return fail(&format!("cannot connect to agent socket {addr}: {e}")),
    };
    if let Err(e) = req.write_to(&mut stream) {
        return fail(&format!("cannot send request: {e}"));
    }
    let resp = match Response::read_from(&mut stream) {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot read response: {e}")),
    };
    let _ = std::io::stdout().write_all(&resp.stdout);
    let _ = std::io::stderr().write_all(&resp.stderr);
    u8::try_from(resp.code).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stdin_only_for_file_dash_or_dev_stdin_on_set_tools() {
        assert!(wants_stdin("relation-set", &args(&["--file", "-"])));
        assert!(wants_stdin("state-set", &args(&["--file=/dev/stdin"])));
        assert!(wants_stdin(
            "relation-set",
            &args(&["-r", "1", "--file", "/dev/stdin"])
        ));
        assert!(!wants_stdin("relation-set", &args(&["--file", "x.yaml"])));
        assert!(!wants_stdin("relation-set", &args(&["--", "--file", "-"])));
        assert!(!wants_stdin("relation-get", &args(&["--file", "-"])));
    }

    #[test]
    fn tool_name_is_the_basename() {
        assert_eq!(tool_name("/tmp/tools/relation-get"), "relation-get");
        assert_eq!(tool_name("status-set"), "status-set");
    }
}
