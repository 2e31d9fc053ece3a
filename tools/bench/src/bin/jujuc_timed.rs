//! `jujuc-timed`: the simulator's hook-tool client (same wire protocol and behaviour as
//! `juju-sim`'s `jujuc`) that also records how long each call took inside the process.
//!
//! When `$HOOK_BENCH_TOOL_LOG` is set, every call appends one line `<tool>\t<nanoseconds>\n`
//! (from the start of `main` to just before exit) to that file with a single `O_APPEND` write.
//! The time before `main` (exec, dynamic loading) and after it (teardown) is not visible here;
//! `tool-calib` measures it from a parent's point of view.

use juju_sim::protocol::{Request, Response};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::time::Instant;

fn fail(msg: &str) -> u8 {
    let _ = writeln!(std::io::stderr(), "ERROR {msg}");
    1
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
        if (prev_is_file && a == "-") || a == "--file=-" {
            return true;
        }
        prev_is_file = a == "--file";
    }
    false
}

fn run(tool: &str, args: Vec<String>) -> u8 {
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

fn main() -> ExitCode {
    let start = Instant::now();
    let mut argv = std::env::args();
    let argv0 = argv.next().unwrap_or_default();
    let tool = std::path::Path::new(&argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = argv.collect();
    let code = if tool == "jujuc-timed" || tool == "jujuc" {
        fail("jujuc must be invoked through a symlink named after a hook tool")
    } else {
        run(&tool, args)
    };
    let _ = std::io::stdout().flush();
    if let Some(log) = std::env::var_os("HOOK_BENCH_TOOL_LOG") {
        let line = format!("{tool}\t{}\n", start.elapsed().as_nanos());
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(log)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
    ExitCode::from(code)
}
