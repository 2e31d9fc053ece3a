//! `jujuc-timed`: `juju-sim`'s `jujuc` (the same `juju_sim::tool_client::run`) that also records
//! how long each call took inside the process.
//!
//! When `$HOOK_BENCH_TOOL_LOG` is set, every call appends one line `<tool>\t<nanoseconds>\n`
//! (from the start of `main` to just before exit) to that file with a single `O_APPEND` write.
//! The time before `main` (exec, dynamic loading) and after it (teardown) is not visible here;
//! `tool-calib` measures it from a parent's point of view.

use juju_sim::tool_client;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let start = Instant::now();
    let mut argv = std::env::args();
    let tool = tool_client::tool_name(&argv.next().unwrap_or_default());
    let args: Vec<String> = argv.collect();
    let code = if tool == "jujuc-timed" || tool == "jujuc" {
        tool_client::fail("jujuc must be invoked through a symlink named after a hook tool")
    } else {
        tool_client::run(&tool, args)
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
