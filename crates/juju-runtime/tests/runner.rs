//! The runner names the program the caller gives it, never one of its own, when a failure
//! happens before any hook could run.

use juju_runtime::{EXIT_HOOK_ERROR, JujuLogSubscriber, LogLevel, fail_before_hook, program_name};
use juju_runtime_testing::MemoryBackend;
use tracing::Level;

#[test]
fn a_failure_before_the_hook_names_the_callers_program() {
    let (subscriber, log) = JujuLogSubscriber::new(Level::INFO);
    let backend = MemoryBackend::new("app/0");
    let code = tracing::subscriber::with_default(subscriber, || {
        fail_before_hook("my-charm", &backend, &log, "JUJU_DISPATCH_PATH is not set")
    });
    assert_eq!(code, EXIT_HOOK_ERROR);
    assert_eq!(
        backend.logs(),
        [(
            LogLevel::Error,
            "my-charm failed: JUJU_DISPATCH_PATH is not set".to_owned()
        )],
        "reported at ERROR and flushed"
    );
}

#[test]
fn the_program_name_is_argv0s_file_name() {
    // cargo runs this test binary as `<target>/debug/deps/runner-<hash>`
    let name = program_name();
    assert!(name.starts_with("runner-"), "{name}");
    assert!(!name.contains('/'), "{name}");
}
