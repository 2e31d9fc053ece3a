//! `install_logging` keeps the handle of the subscriber it installs, and `installed_log_handle`
//! finds it there, not by asking `tracing` for the subscriber in use. One test in its own
//! process: the global subscriber can be set once per process.

use juju_runtime::{LogLevel, install_logging, installed_log_handle};

/// Sends what the installed subscriber buffered, if one is installed: the number of calls.
fn flush_installed(backend: &MemoryBackend) -> usize {
    match installed_log_handle() {
        Some(log) => log.flush(backend).expect("juju-log answers"),
        None => 0,
    }
}
use juju_runtime_testing::MemoryBackend;

#[test]
fn the_installed_handle_is_kept_and_used() {
    let backend = MemoryBackend::new("app/0");
    // before: no handle, and nothing is sent
    assert!(installed_log_handle().is_none());
    assert_eq!(flush_installed(&backend), 0);
    assert_eq!(backend.call_count("juju-log"), 0);

    let log = install_logging().expect("the first subscriber of this process");
    assert!(installed_log_handle().is_some());
    tracing::info!("before the work");
    tracing::debug!("below the default level");
    assert_eq!(flush_installed(&backend), 1);
    assert_eq!(
        backend.logs(),
        [(LogLevel::Info, "before the work".to_owned())],
        "what the installed subscriber buffered went out through the kept handle"
    );

    // a second install fails and the kept handle is still the first one: a record logged now
    // is in the buffer `log` (the first handle) flushes
    assert!(install_logging().is_err());
    tracing::warn!("after");
    let kept = installed_log_handle().expect("still installed");
    assert_eq!(kept.take(), [(LogLevel::Warning, "after".to_owned())]);
    assert!(log.take().is_empty(), "the two handles share one buffer");
}
