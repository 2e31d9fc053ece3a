//! `jujuc`: the multi-call hook-tool executable. Invoked through a symlink named after a hook
//! tool (`relation-get`, `status-set`, ...), it forwards its argv, cwd and (when the tool reads
//! it) stdin to the simulator over `JUJU_AGENT_SOCKET_ADDRESS`, like Juju's own jujuc, and
//! reproduces the reply's stdout, stderr and exit code.

use juju_sim::protocol::{Request, Response};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;

fn fail(msg: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "ERROR {msg}");
    ExitCode::from(1)
}

/// Whether the invocation reads standard input (`--file -` on relation-set/state-set).
fn wants_stdin(tool: &str, args: &[String]) -> bool {
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

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let argv0 = argv.next().unwrap_or_default();
    let tool = std::path::Path::new(&argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = argv.collect();
    if tool == "jujuc" {
        return fail("jujuc must be invoked through a symlink named after a hook tool");
    }
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
    if wants_stdin(&tool, &args) && std::io::stdin().read_to_end(&mut stdin).is_err() {
        return fail("cannot read standard input");
    }
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let req = Request {
        context_id,
        cwd,
        tool,
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
    ExitCode::from(u8::try_from(resp.code).unwrap_or(1))
}
