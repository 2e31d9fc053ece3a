//! Skipping a check loudly, or failing it where the checks are required: CI sets `E2E_REQUIRED=1`
//! (`.ci/run`), and a machine without what a check needs is then a failure, never a skip (the
//! same rule as `e2e::should_run_on`). Included with `#[path = "common/required.rs"] mod required;`
//! by tests that need a tool, a package or root but no namespaced cluster.
#![allow(dead_code)]

/// Whether a check that cannot run here must fail instead of skipping: `E2E_REQUIRED` or
/// `SLURM_ACCEPTANCE_REQUIRED` set to anything but `0`, or `CI` to anything but `0` or `false`.
/// The one copy of this rule: the e2e harness, the NVML and slurmctld oracles and every other
/// test that needs something from outside include this file.
pub fn required() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| v != "0");
    set("E2E_REQUIRED")
        || set("SLURM_ACCEPTANCE_REQUIRED")
        || std::env::var_os("CI").is_some_and(|v| v != "0" && v != "false")
}

/// Call where `test` cannot run because `missing` is absent (`install` says how to get it):
/// panics where the checks are required, else prints a loud `SKIPPED` banner; the caller returns.
pub fn skip(test: &str, missing: &str, install: &str) {
    assert!(
        !required(),
        "{test} cannot run, missing: {missing} (E2E_REQUIRED/CI is set: a skip is a failure; \
         {install})"
    );
    eprintln!(
        "\n\
         ************************************************************************\n\
         ** SKIPPED {test}\n\
         ** missing: {missing}\n\
         ** install: {install}\n\
         ** (with E2E_REQUIRED=1, as .ci/run sets, this is a failure)\n\
         ************************************************************************\n"
    );
}
