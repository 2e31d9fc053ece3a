//! `jujuc`: the multi-call hook-tool executable. Invoked through a symlink named after a hook
//! tool (`relation-get`, `status-set`, ...), it forwards the call to the simulator; the client
//! logic lives in [`juju_sim::tool_client`].

use juju_sim::tool_client;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let tool = tool_client::tool_name(&argv.next().unwrap_or_default());
    if tool == "jujuc" {
        return ExitCode::from(tool_client::fail(
            "jujuc must be invoked through a symlink named after a hook tool",
        ));
    }
    ExitCode::from(tool_client::run(&tool, argv.collect()))
}
