//! Runs one hook: calls the charm's handler, turns its outcome (error or panic included) into
//! the process exit code Juju understands, and sends the log to `juju-log` from a thread beside
//! the handler (waited for before the hook exits). Kept apart from
//! `main.rs` so the mapping is unit-testable with the in-memory backend and any handler.
//!
//! Exit codes: [`EXIT_OK`] (Juju commits the hook's relation/state changes) or [`EXIT_HOOK_ERROR`]
//! (Juju discards them, marks the unit `error` and retries). A failure is reported twice on
//! purpose: as a `juju-log` ERROR record (exact level, sent with the other records) and on
//! stderr (Juju logs it at WARNING), which still works when `juju-log` itself is broken.

use crate::backend::ModelBackend;
use crate::event::HookContext;
use crate::logging::LogHandle;
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The hook succeeded.
pub const EXIT_OK: u8 = 0;
/// The hook failed (or the environment could not be parsed).
pub const EXIT_HOOK_ERROR: u8 = 1;

/// Runs `handler` for `ctx`, reports a failure, and returns the exit code. What the handler logs
/// is sent while it runs, where `backend` has a [`ModelBackend::juju_log_sender`]
/// ([`LogHandle::send_in_background`]), else when it returns; either way all of it has been sent
/// (or written to stderr) when this returns.
pub fn run_hook<B, E, F>(ctx: &HookContext, backend: &B, log: &LogHandle, handler: F) -> u8
where
    B: ModelBackend,
    E: std::error::Error,
    F: FnOnce(&HookContext, &B) -> Result<(), E>,
{
    if let Some(send) = backend.juju_log_sender() {
        log.send_in_background(send);
    }
    let code = outcome_code(ctx, backend, handler);
    log.finish(backend);
    code
}

/// The exit code of `handler`'s outcome, its failure (error or panic) reported.
fn outcome_code<B, E, F>(ctx: &HookContext, backend: &B, handler: F) -> u8
where
    E: std::error::Error,
    F: FnOnce(&HookContext, &B) -> Result<(), E>,
{
    let outcome = catch_unwind(AssertUnwindSafe(|| handler(ctx, backend)));
    match outcome {
        Ok(Ok(())) => EXIT_OK,
        Ok(Err(e)) => {
            report_failure(&ctx.label(), &error_chain(&e));
            EXIT_HOOK_ERROR
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".to_owned());
            report_failure(&ctx.label(), &format!("panicked: {what}"));
            EXIT_HOOK_ERROR
        }
    }
}

/// Reports a failure that happened before a hook could run (e.g. a bad environment), flushes the
/// logs, and returns [`EXIT_HOOK_ERROR`]. There is no hook to name yet, so the report names
/// `program`: the charm binary, as the caller calls it ([`program_name`] reads it from argv).
pub fn fail_before_hook<B: ModelBackend>(
    program: &str,
    backend: &B,
    log: &LogHandle,
    message: &str,
) -> u8 {
    report_failure(program, message);
    let _ = log.flush(backend);
    EXIT_HOOK_ERROR
}

/// The name this process was started as (the file name of `argv[0]`), for reports that have no
/// hook to name ([`fail_before_hook`]): the runtime serves any charm binary, so it cannot know
/// the name itself. `"charm"` when argv is empty or not UTF-8.
pub fn program_name() -> String {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_name)
        .and_then(|name| name.to_str())
        .filter(|name| !name.is_empty())
        .unwrap_or("charm")
        .to_owned()
}

fn report_failure(label: &str, message: &str) {
    tracing::error!("{label} failed: {message}");
    let _ = writeln!(std::io::stderr(), "ERROR {label} failed: {message}");
}

/// The error's message followed by each source's, skipping a source whose text the message
/// already contains (thiserror messages often embed their source).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}
