//! Entry point for both charms: reads Juju's environment, runs one hook, maps errors to exit codes.
//! Which charm runs is decided by `slurm_charms::charms::run` from `$JUJU_CHARM_DIR/metadata.yaml`.
//! Exit 0: success (Juju commits the hook's changes); exit 1: hook error, reported on stderr and
//! to `juju-log` at ERROR (the error policy is `juju_runtime::run_hook`).

use juju_runtime::{HookContext, HookTools, fail_before_hook, install_logging, run_hook};
use std::process::ExitCode;

/// Tells glibc's allocator to keep the memory a hook frees for the hook's later allocations:
/// no block is given its own mapping (up to 32 MiB, glibc's ceiling) and the heap is never
/// trimmed. A hook is a process of a few milliseconds; every page it gets from the kernel is a
/// page fault, and a page given back and asked for again is a second one. Measured on the
/// benchmark machine (`target/release/page-probe`): a fresh page costs about 2.5 µs there, and
/// a controller `slurmd-relation-changed` at 10,000 units takes about 380 faults fewer
/// (docs/BENCHMARKS.md, issue 13, thirteenth pass). The memory goes back to the system when
/// the hook exits.
fn keep_freed_memory() {
    // SAFETY: `mallopt` only sets allocator parameters; it is called before any thread exists
    // and before this program allocates anything that depends on them. A refusal (return 0)
    // leaves glibc's defaults, which are correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    // A second subscriber cannot exist in this binary; if installing fails anyway, logs are lost
    // but the hook still runs and failures still reach stderr.
    let log = install_logging().unwrap_or_default();
    let backend = HookTools::new();
    let code = match HookContext::from_env() {
        Ok(ctx) => run_hook(&ctx, &backend, &log, slurm_charms::charms::run),
        Err(e) => fail_before_hook(&backend, &log, &e.to_string()),
    };
    ExitCode::from(code)
}
