//! Entry point for both charms, and for the health-check program Slurm runs on each node
//! (started as `slurmd-charm-health-check` or `slurm-charm health-check`:
//! `slurm_charms::charms::slurmd::health_check`). For the charms: reads Juju's environment, runs one hook, maps errors to exit codes.
//! Which charm runs is decided by `slurm_charms::charms::run` from `$JUJU_CHARM_DIR/metadata.yaml`.
//! Exit 0: success (Juju commits the hook's changes); exit 1: hook error, reported on stderr and
//! to `juju-log` at ERROR (the error policy is `juju_runtime::run_hook`).

use juju_runtime::{
    HookContext, HookTools, fail_before_hook, install_logging, program_name, run_hook,
};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if slurm_charms::charms::slurmd::health_check::invoked_as_program(&args) {
        // slurmd runs HealthCheckProgram with an empty environment: give the Slurm tools a PATH.
        if std::env::var_os("PATH").is_none() {
            // SAFETY: no other thread exists yet in this process.
            unsafe {
                std::env::set_var(
                    "PATH",
                    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                );
            }
        }
        slurm_charms::charms::slurmd::health_check::main_program();
    }
    // A second subscriber cannot exist in this binary; if installing fails anyway, logs are lost
    // but the hook still runs and failures still reach stderr.
    let log = install_logging().unwrap_or_default();
    let backend = HookTools::new();
    let code = match HookContext::from_env() {
        Ok(ctx) => run_hook(&ctx, &backend, &log, slurm_charms::charms::run),
        Err(e) => fail_before_hook(&program_name(), &backend, &log, &e.to_string()),
    };
    ExitCode::from(code)
}
