//! `tracing` → `juju-log`, batched: a [`tracing::Subscriber`] that buffers every record, and a
//! [`LogHandle`] that sends the buffer to `juju-log`, from a thread of its own while the hook
//! runs ([`LogHandle::send_in_background`], what [`crate::run_hook`] does) or in one go
//! ([`LogHandle::flush`]).
//!
//! Why batch: `juju-log` is a process (and a round trip to the unit agent) per call. One call per
//! log line would dominate a short hook's cost and make a chatty code path O(lines) processes.
//!
//! Why a thread of its own: a hook's log says what it is about to do before it does it (a
//! reconfigure, a restart), so the record is there while the hook still has work to do and
//! processes to wait for. Sent from beside the hook, the `juju-log` process runs while the hook
//! waits on those, instead of after them: the hook's wall time no longer pays for its own log
//! (docs/BENCHMARKS.md, issue 38, thirteenth pass). The thread is started by the hook's first
//! record (a hook that logs nothing starts none), and the runner waits for its last call before
//! the hook exits ([`LogHandle::finish`]), so nothing is lost and Juju sees every record inside
//! the hook.
//!
//! The choice: **one `juju-log` call per level that has records, per batch**, in the order the
//! levels first appeared; the call's message is that level's lines joined by newlines (split
//! only if it would exceed the kernel's 128 KiB per-argument limit). A batch is what was
//! buffered when the sender got to it: the first record of a hook is sent at once, and records
//! that arrive while a call runs go together in the next. Levels stay exact, so
//! `juju debug-log --level WARNING` still filters correctly; a hook that logs at INFO once costs
//! one process, and a hook that logs nothing costs none. The price is that records of different
//! levels within a batch are regrouped; within a level the order is kept, and batches keep
//! theirs.
//!
//! Filter: records up to INFO by default ([`DEFAULT_MAX_LEVEL`]). Juju's default model
//! `logging-config` drops unit DEBUG output anyway, so forwarding it would spend a process for
//! nothing; tests and debugging can raise it with [`JujuLogSubscriber::new`].
//!
//! stderr: records are **not** echoed to stderr. Juju already logs a hook's stderr at WARNING in
//! the same `debug-log`, so echoing would duplicate every line at the wrong level. stderr is used
//! only where `juju-log` cannot be: records beyond the buffer cap ([`BUFFER_CAP_BYTES`]) and,
//! once a `juju-log` call fails (e.g. the binary is run outside a hook), that batch and every
//! record after it. Fatal hook errors are written to stderr by the runner as well, so they
//! survive even a broken `juju-log`.

use crate::backend::{LogLevel, ModelBackend};
use crate::hook_tools::level_word;
use crate::tool_error::HookToolError;
use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
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
    /// [`LogHandle::finish`] was called: the sender sends what is left and returns.
    closed: bool,
    /// A `juju-log` call failed: later records go to stderr (a broken tool stays broken).
    broken: bool,
}

/// Sends one batch's text at one level (`juju-log`, through a backend the sender thread owns).
pub type SendLog = Arc<dyn Fn(LogLevel, &str) -> Result<(), HookToolError> + Send + Sync>;

/// The thread that sends records while the hook runs.
#[derive(Default)]
enum Sender {
    /// Records stay buffered until [`LogHandle::flush`].
    #[default]
    Off,
    /// The first record starts the thread with this.
    Armed(SendLog),
    /// Started (with what it sends through, for what is left when it ends).
    Running(std::thread::JoinHandle<()>, SendLog),
}

impl fmt::Debug for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sender::Off => "Off",
            Sender::Armed(_) => "Armed",
            Sender::Running(..) => "Running",
        })
    }
}

/// Shared access to the buffer: sends it to `juju-log` while the hook runs
/// ([`LogHandle::send_in_background`]) or at once ([`LogHandle::flush`]).
#[derive(Debug, Clone, Default)]
pub struct LogHandle {
    shared: Arc<(Mutex<Buffer>, Condvar)>,
    sender: Arc<Mutex<Sender>>,
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
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Buffers one record (or, past the cap, writes it to stderr at once) and wakes the sender,
    /// starting it if this is the first record since [`LogHandle::send_in_background`].
    pub fn push(&self, level: LogLevel, line: String) {
        let mut buffer = self.lock();
        if buffer.bytes + line.len() > BUFFER_CAP_BYTES {
            drop(buffer);
            let _ = writeln!(std::io::stderr(), "{}: {line}", level_word(level));
            return;
        }
        buffer.bytes += line.len() + 1;
        buffer.records.push((level, line));
        drop(buffer);
        let mut sender = self.sender();
        match std::mem::take(&mut *sender) {
            Sender::Armed(send) => {
                let handle = self.clone();
                let started = std::thread::Builder::new().name("juju-log".into()).spawn({
                    let send = Arc::clone(&send);
                    move || handle.send_until_closed(&*send)
                });
                // a thread that cannot be started leaves the records to [`LogHandle::finish`]
                *sender = match started {
                    Ok(thread) => Sender::Running(thread, send),
                    Err(_) => Sender::Armed(send),
                };
            }
            other => {
                *sender = other;
                self.shared.1.notify_one();
            }
        }
    }

    fn sender(&self) -> MutexGuard<'_, Sender> {
        self.sender.lock().unwrap_or_else(|e| e.into_inner())
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
        let records = self.take();
        self.send(&|level, text: &str| backend.juju_log(level, text), records)
    }

    /// From now on, records are sent with `send` as they come, batch after batch (see the module
    /// doc), from a thread the next record starts; [`LogHandle::finish`] waits for it.
    pub fn send_in_background(&self, send: SendLog) {
        self.lock().closed = false;
        *self.sender() = Sender::Armed(send);
    }

    /// Sends what is buffered: waits until the sender of [`LogHandle::send_in_background`] has
    /// sent everything (what a sender that could not be started left is sent from here, what
    /// one that panicked left goes to stderr), or, without one, [`LogHandle::flush`]es through
    /// `backend`.
    pub fn finish<B: ModelBackend>(&self, backend: &B) {
        self.lock().closed = true;
        self.shared.1.notify_all();
        let send = match std::mem::take(&mut *self.sender()) {
            Sender::Running(thread, send) => {
                if thread.join().is_err() {
                    write_to_stderr(&group_by_level(self.take()));
                }
                send
            }
            Sender::Armed(send) => send,
            Sender::Off => {
                let _ = self.flush(backend);
                return;
            }
        };
        // what a sender that never started left, or what was logged after the thread had
        // finished (nothing, normally)
        let _ = self.send(&*send, self.take());
    }

    /// The sender thread: sends batch after batch until [`LogHandle::finish`] closes the buffer
    /// and it is empty.
    fn send_until_closed(&self, send: &dyn Fn(LogLevel, &str) -> Result<(), HookToolError>) {
        loop {
            let records = {
                let mut buffer = self.lock();
                while buffer.records.is_empty() && !buffer.closed {
                    buffer = self
                        .shared
                        .1
                        .wait(buffer)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if buffer.records.is_empty() {
                    return;
                }
                buffer.bytes = 0;
                std::mem::take(&mut buffer.records)
            };
            // a failure has written the records to stderr and marked the handle broken
            let _ = self.send(send, records);
        }
    }

    /// One batch to `juju-log`, or to stderr once a call has failed.
    fn send(
        &self,
        send: &dyn Fn(LogLevel, &str) -> Result<(), HookToolError>,
        records: Vec<(LogLevel, String)>,
    ) -> Result<usize, HookToolError> {
        let batches = group_by_level(records);
        if self.lock().broken {
            write_to_stderr(&batches);
            return Ok(0);
        }
        let mut calls = 0;
        for (i, (level, text)) in batches.iter().enumerate() {
            if let Err(e) = send(*level, text) {
                self.lock().broken = true;
                let _ = writeln!(
                    std::io::stderr(),
                    "juju-log failed ({e}); buffered log records follow:"
                );
                write_to_stderr(&batches[i..]);
                return Err(e);
            }
            calls += 1;
        }
        Ok(calls)
    }
}

/// Records that cannot go to `juju-log`, one line each, prefixed with their level.
fn write_to_stderr(batches: &[(LogLevel, String)]) {
    let mut stderr = std::io::stderr().lock();
    for (level, text) in batches {
        for line in text.lines() {
            let _ = writeln!(stderr, "{}: {line}", level_word(*level));
        }
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
