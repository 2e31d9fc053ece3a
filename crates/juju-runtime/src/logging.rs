//! `tracing` → `juju-log`, batched: a [`tracing::Subscriber`] that buffers every record during
//! the hook and a [`LogHandle`] that flushes the buffer when the hook ends.
//!
//! Why batch: `juju-log` is a process (and a round trip to the unit agent) per call. One call per
//! log line would dominate a short hook's cost and make a chatty code path O(lines) processes.
//!
//! The choice: at the end of the hook, **one `juju-log` call per level that has records**, in the
//! order the levels first appeared; the call's message is that level's lines joined by newlines
//! (split only if it would exceed the kernel's 128 KiB per-argument limit). Levels stay exact, so
//! `juju debug-log --level WARNING` still filters correctly; a typical hook that logs at INFO
//! only costs one process, and a hook that logs nothing costs none. The price is that records of
//! different levels are regrouped; within a level the order is kept.
//!
//! Filter: records up to INFO by default ([`DEFAULT_MAX_LEVEL`]). Juju's default model
//! `logging-config` drops unit DEBUG output anyway, so forwarding it would spend a process for
//! nothing; tests and debugging can raise it with [`JujuLogSubscriber::new`].
//!
//! stderr: records are **not** echoed to stderr. Juju already logs a hook's stderr at WARNING in
//! the same `debug-log`, so echoing would duplicate every line at the wrong level. stderr is used
//! only where `juju-log` cannot be: records beyond the buffer cap ([`BUFFER_CAP_BYTES`]) and, if
//! the final flush fails (e.g. the binary is run outside a hook), everything still buffered.
//! Fatal hook errors are written to stderr by the runner as well, so they survive even a broken
//! `juju-log`.

use crate::backend::{LogLevel, ModelBackend};
use crate::hook_tools::level_word;
use crate::tool_error::HookToolError;
use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Records above this level of verbosity are not forwarded unless asked for.
pub const DEFAULT_MAX_LEVEL: Level = Level::INFO;

/// Buffered text beyond which further records go straight to stderr instead of the buffer.
pub const BUFFER_CAP_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Default)]
struct Buffer {
    records: Vec<(LogLevel, String)>,
    bytes: usize,
}

/// Shared access to the buffer: flushes it to `juju-log` at the end of the hook.
#[derive(Debug, Clone, Default)]
pub struct LogHandle {
    buffer: Arc<Mutex<Buffer>>,
}

/// The subscriber that fills a [`LogHandle`]'s buffer.
#[derive(Debug)]
pub struct JujuLogSubscriber {
    handle: LogHandle,
    max_level: Level,
    next_span: AtomicU64,
}

/// Installing the global subscriber failed (another one is already installed).
#[derive(Debug, thiserror::Error)]
#[error("cannot install the juju-log tracing subscriber: {0}")]
pub struct LogInstallError(#[from] tracing::subscriber::SetGlobalDefaultError);

/// The handle of the subscriber [`install_logging`] made process-wide, kept by the runtime
/// itself so it can be found again without asking `tracing` which subscriber is in use (a
/// downcast that breaks as soon as the subscriber is wrapped or layered).
static INSTALLED: OnceLock<LogHandle> = OnceLock::new();

/// Installs a [`JujuLogSubscriber`] at [`DEFAULT_MAX_LEVEL`] as the process-wide subscriber and
/// returns the handle `main` flushes at the end of the hook. The runtime keeps a clone
/// ([`installed_log_handle`]). A second call fails and leaves the first handle in place.
pub fn install_logging() -> Result<LogHandle, LogInstallError> {
    let (subscriber, handle) = JujuLogSubscriber::new(DEFAULT_MAX_LEVEL);
    tracing::subscriber::set_global_default(subscriber)?;
    // The global default can be set once per process, so this is the first and only set.
    let _ = INSTALLED.set(handle.clone());
    Ok(handle)
}

/// The handle of the subscriber [`install_logging`] installed, if it did: lets a charm send
/// what it has logged so far while it still has work that needs no hook tool (e.g. writing its
/// caches), instead of waiting for the runner's flush at the end. `None` when logging was not
/// installed (a test with a scoped [`JujuLogSubscriber`] holds its own handle instead).
pub fn installed_log_handle() -> Option<LogHandle> {
    INSTALLED.get().cloned()
}

fn to_juju_level(level: &Level) -> LogLevel {
    match *level {
        Level::ERROR => LogLevel::Error,
        Level::WARN => LogLevel::Warning,
        Level::INFO => LogLevel::Info,
        _ => LogLevel::Debug,
    }
}

impl JujuLogSubscriber {
    /// A subscriber forwarding records up to `max_level`, and the handle that flushes them.
    pub fn new(max_level: Level) -> (Self, LogHandle) {
        let handle = LogHandle::default();
        let subscriber = JujuLogSubscriber {
            handle: handle.clone(),
            max_level,
            next_span: AtomicU64::new(1),
        };
        (subscriber, handle)
    }
}

impl Subscriber for JujuLogSubscriber {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max_level
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::from_level(
            self.max_level,
        ))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        // Spans carry no output here; they only need distinct non-zero ids.
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed).max(1))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = LineVisitor::default();
        event.record(&mut line);
        self.handle
            .push(to_juju_level(event.metadata().level()), line.finish());
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// Formats an event as `message key=value ...`.
#[derive(Default)]
struct LineVisitor {
    message: String,
    fields: String,
}

impl LineVisitor {
    fn finish(self) -> String {
        match (self.message.is_empty(), self.fields.is_empty()) {
            (_, true) => self.message,
            (true, false) => self.fields,
            (false, false) => format!("{} {}", self.message, self.fields),
        }
    }

    fn field_sep(&mut self) {
        if !self.fields.is_empty() {
            self.fields.push(' ');
        }
    }
}

impl Visit for LineVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.field_sep();
            let _ = write!(self.fields, "{}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.field_sep();
            let _ = write!(self.fields, "{}={value:?}", field.name());
        }
    }
}

impl LogHandle {
    fn lock(&self) -> MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Buffers one record (or, past the cap, writes it to stderr at once).
    pub fn push(&self, level: LogLevel, line: String) {
        let mut buffer = self.lock();
        if buffer.bytes + line.len() > BUFFER_CAP_BYTES {
            drop(buffer);
            let _ = writeln!(std::io::stderr(), "{}: {line}", level_word(level));
            return;
        }
        buffer.bytes += line.len() + 1;
        buffer.records.push((level, line));
    }

    /// Takes the buffered records, oldest first, leaving the buffer empty.
    pub fn take(&self) -> Vec<(LogLevel, String)> {
        let mut buffer = self.lock();
        buffer.bytes = 0;
        std::mem::take(&mut buffer.records)
    }

    /// Sends the buffered records to `juju-log`: one call per level present (see the module doc).
    /// Returns the number of calls made. On failure the records of the failed batch and all
    /// later ones are written to stderr, so nothing is lost, and the error is returned.
    pub fn flush<B: ModelBackend>(&self, backend: &B) -> Result<usize, HookToolError> {
        let batches = group_by_level(self.take());
        let mut calls = 0;
        for (i, (level, text)) in batches.iter().enumerate() {
            if let Err(e) = backend.juju_log(*level, text) {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(
                    stderr,
                    "juju-log failed ({e}); buffered log records follow:"
                );
                for (level, text) in &batches[i..] {
                    for line in text.lines() {
                        let _ = writeln!(stderr, "{}: {line}", level_word(*level));
                    }
                }
                return Err(e);
            }
            calls += 1;
        }
        Ok(calls)
    }
}

/// Groups records by level, levels in order of first appearance, lines joined by `\n`.
pub fn group_by_level(records: Vec<(LogLevel, String)>) -> Vec<(LogLevel, String)> {
    let mut batches: Vec<(LogLevel, String)> = Vec::new();
    for (level, line) in records {
        match batches.iter_mut().find(|(l, _)| *l == level) {
            Some((_, text)) => {
                text.push('\n');
                text.push_str(&line);
            }
            None => batches.push((level, line)),
        }
    }
    batches
}
