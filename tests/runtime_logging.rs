//! `tracing` → `juju-log` batching, and the hook runner's exit codes and failure reports.

use juju_runtime::{
    EXIT_HOOK_ERROR, EXIT_OK, Event, HookContext, HookTools, JujuLogSubscriber, LogLevel,
    ModelBackend, Status, StatusKind, StatusScope, error_chain, group_by_level, run_hook,
};
use juju_runtime_testing::MemoryBackend;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use tracing::Level;

fn ctx() -> HookContext {
    HookContext {
        unit_name: "slurmd/0".to_owned(),
        app_name: "slurmd".to_owned(),
        model_name: "m".to_owned(),
        charm_dir: PathBuf::from("/charm"),
        event: Event::UpdateStatus,
    }
}

#[test]
fn one_juju_log_call_per_level_in_first_seen_order() {
    let (subscriber, handle) = JujuLogSubscriber::new(Level::INFO);
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!("one");
        tracing::warn!(node = "n1", count = 3, "bad data");
        tracing::debug!("filtered out at INFO");
        tracing::info!("two");
        tracing::error!("boom");
    });
    let backend = MemoryBackend::new("slurmd/0");
    assert_eq!(handle.flush(&backend).unwrap(), 3);
    assert_eq!(
        backend.logs(),
        vec![
            (LogLevel::Info, "one\ntwo".to_owned()),
            (LogLevel::Warning, "bad data node=\"n1\" count=3".to_owned()),
            (LogLevel::Error, "boom".to_owned()),
        ]
    );
    // The buffer is empty after a flush.
    assert_eq!(handle.flush(&backend).unwrap(), 0);
    assert_eq!(backend.call_count("juju-log"), 3);
}

#[test]
fn nothing_logged_means_no_juju_log_call() {
    let (subscriber, handle) = JujuLogSubscriber::new(Level::INFO);
    tracing::subscriber::with_default(subscriber, || tracing::debug!("only debug"));
    let backend = MemoryBackend::new("slurmd/0");
    assert_eq!(handle.flush(&backend).unwrap(), 0);
    assert!(backend.calls().is_empty());
}

#[test]
fn debug_is_forwarded_when_asked_for() {
    let (subscriber, handle) = JujuLogSubscriber::new(Level::DEBUG);
    tracing::subscriber::with_default(subscriber, || {
        tracing::debug!("dbg");
        tracing::trace!("never");
    });
    assert_eq!(handle.take(), vec![(LogLevel::Debug, "dbg".to_owned())]);
}

#[test]
fn grouping_keeps_order_within_a_level() {
    let grouped = group_by_level(vec![
        (LogLevel::Warning, "w1".into()),
        (LogLevel::Info, "i1".into()),
        (LogLevel::Warning, "w2".into()),
    ]);
    assert_eq!(
        grouped,
        vec![
            (LogLevel::Warning, "w1\nw2".to_owned()),
            (LogLevel::Info, "i1".to_owned())
        ]
    );
}

#[derive(Debug, thiserror::Error)]
#[error("config is bad")]
struct Outer(#[source] std::io::Error);

#[test]
fn runner_exit_codes_and_error_reports() {
    let (subscriber, handle) = JujuLogSubscriber::new(Level::INFO);
    tracing::subscriber::with_default(subscriber, || {
        let backend = MemoryBackend::new("slurmd/0");
        let ok = run_hook(&ctx(), &backend, &handle, |_, b: &MemoryBackend| {
            tracing::info!("reconciled");
            b.status_set(
                StatusScope::Unit,
                &Status {
                    kind: StatusKind::Active,
                    message: String::new(),
                },
            )
        });
        assert_eq!(ok, EXIT_OK);
        assert_eq!(
            backend.logs(),
            vec![(LogLevel::Info, "reconciled".to_owned())]
        );

        let backend = MemoryBackend::new("slurmd/0");
        let failed = run_hook(&ctx(), &backend, &handle, |_, _: &MemoryBackend| {
            Err(Outer(std::io::Error::other("disk full")))
        });
        assert_eq!(failed, EXIT_HOOK_ERROR);
        let logs = backend.logs();
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].0, LogLevel::Error);
        assert_eq!(
            logs[0].1,
            "slurmd/0 hooks/update-status failed: config is bad: disk full"
        );

        let backend = MemoryBackend::new("slurmd/0");
        let panicked = run_hook(
            &ctx(),
            &backend,
            &handle,
            |_, _: &MemoryBackend| -> Result<(), Outer> { panic!("bug here") },
        );
        assert_eq!(panicked, EXIT_HOOK_ERROR);
        assert!(backend.logs()[0].1.contains("panicked: bug here"));
    });
}

#[test]
fn error_chain_skips_sources_already_in_the_message() {
    #[derive(Debug, thiserror::Error)]
    #[error("wrapped: {0}")]
    struct Embeds(#[source] std::io::Error);
    let e = Embeds(std::io::Error::other("inner"));
    assert_eq!(error_chain(&e), "wrapped: inner");
}

/// The budget from the issue: a hook that only sets status spawns exactly one hook-tool process
/// and no `juju-log` when it logs nothing at INFO or above.
#[test]
fn status_only_hook_spawns_one_process() {
    let dir = tempfile::tempdir().unwrap();
    for tool in ["status-set", "juju-log"] {
        let path = dir.path().join(tool);
        let script = format!("#!/bin/sh\nprintf x >> '{}/spawns'\n", dir.path().display());
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (subscriber, handle) = JujuLogSubscriber::new(Level::INFO);
    let backend = HookTools::with_tools_dir(dir.path());
    let code = tracing::subscriber::with_default(subscriber, || {
        run_hook(&ctx(), &backend, &handle, |_, b: &HookTools| {
            tracing::debug!("not forwarded");
            b.status_set(
                StatusScope::Unit,
                &Status {
                    kind: StatusKind::Active,
                    message: "ready".to_owned(),
                },
            )
        })
    });
    assert_eq!(code, EXIT_OK);
    let spawns = std::fs::read(dir.path().join("spawns")).unwrap();
    assert_eq!(spawns.len(), 1, "hook-tool processes started");
}
