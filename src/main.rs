//! Entry point for both charms: reads Juju's environment, runs one hook, maps errors to exit codes.
//! Which charm runs is decided by `slurm_charms::charms::run` from `$JUJU_CHARM_DIR/metadata.yaml`.
//! Exit 0: success (Juju commits the hook's changes); exit 1: hook error, reported on stderr and
//! to `juju-log` at ERROR (see `juju::runner`).

use slurm_charms::juju::{HookContext, HookTools, logging, runner};
use std::process::ExitCode;

fn main() -> ExitCode {
    // A second subscriber cannot exist in this binary; if installing fails anyway, logs are lost
    // but the hook still runs and failures still reach stderr.
    let log = logging::install().unwrap_or_default();
    let backend = HookTools::new();
    let code = match HookContext::from_env() {
        Ok(ctx) => runner::run_hook(&ctx, &backend, &log, |ctx, backend| {
            slurm_charms::charms::run(ctx, backend)
        }),
        Err(e) => runner::fail_before_hook(&backend, &log, &e.to_string()),
    };
    ExitCode::from(code)
}
