//! The log sent from beside the hook (`LogHandle::send_in_background`, what `run_hook` does with
//! a backend that has a `juju_log_sender`): records reach `juju-log` while the hook still runs,
//! nothing is lost or reordered within a level, and what is sent is what the end-of-hook flush
//! would have sent.

use juju_runtime::{LogHandle, LogLevel, SendLog, group_by_level};
use juju_runtime_testing::MemoryBackend;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every `juju-log` call's (level, text), in order.
type Calls = Arc<Mutex<Vec<(LogLevel, String)>>>;

/// A `juju-log` stand-in: its calls, and a channel that says a call was made.
fn recording() -> (SendLog, Calls, Receiver<()>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (made, call_made) = channel();
    let made = Mutex::new(made);
    let seen = Arc::clone(&calls);
    let send: SendLog = Arc::new(move |level, text: &str| {
        seen.lock().unwrap().push((level, text.to_owned()));
        let _ = made.lock().unwrap().send(());
        Ok(())
    });
    (send, calls, call_made)
}

/// Each level's lines in the order they were sent, whatever the batches.
fn lines_per_level(calls: &[(LogLevel, String)]) -> Vec<(LogLevel, Vec<String>)> {
    let mut out: Vec<(LogLevel, Vec<String>)> = Vec::new();
    for (level, text) in calls {
        let lines = text.lines().map(str::to_owned);
        match out.iter_mut().find(|(l, _)| l == level) {
            Some((_, all)) => all.extend(lines),
            None => out.push((*level, lines.collect())),
        }
    }
    out.sort_by_key(|(l, _)| format!("{l:?}"));
    out
}

#[test]
fn the_first_record_is_sent_while_the_hook_still_runs() {
    let log = LogHandle::default();
    let (send, calls, call_made) = recording();
    log.send_in_background(send);
    log.push(LogLevel::Info, "about to reconfigure".into());
    // the hook has not finished: the sender thread makes the call on its own
    call_made
        .recv_timeout(Duration::from_secs(10))
        .expect("juju-log called before the hook ended");
    assert_eq!(
        *calls.lock().unwrap(),
        [(LogLevel::Info, "about to reconfigure".to_owned())]
    );
    log.push(LogLevel::Warning, "later".into());
    log.finish(&MemoryBackend::new("app/0"));
    assert_eq!(
        calls.lock().unwrap().len(),
        2,
        "{:?}",
        calls.lock().unwrap()
    );
    assert!(log.take().is_empty(), "everything was sent");
}

#[test]
fn a_hook_that_logs_nothing_makes_no_call() {
    let log = LogHandle::default();
    let (send, calls, _) = recording();
    log.send_in_background(send);
    let backend = MemoryBackend::new("app/0");
    log.finish(&backend);
    assert!(calls.lock().unwrap().is_empty());
    assert!(backend.logs().is_empty());
}

/// Differential: many records from two threads, sent as they come, arrive as the one flush at
/// the end of the hook would have sent them (each level's lines in the order they were logged),
/// and nothing is left over.
#[test]
fn what_is_sent_in_batches_is_what_one_flush_would_send() {
    let levels = [
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Info,
    ];
    for round in 0..20 {
        let log = LogHandle::default();
        let (send, calls, _) = recording();
        log.send_in_background(send);
        let mut logged = Vec::new();
        std::thread::scope(|scope| {
            let other = log.clone();
            let worker = scope.spawn(move || {
                let mut mine = Vec::new();
                for i in 0..50 {
                    let record = (LogLevel::Warning, format!("worker {round} {i}"));
                    other.push(record.0, record.1.clone());
                    mine.push(record);
                }
                mine
            });
            for i in 0..200 {
                let record = (levels[i % levels.len()], format!("main {round} {i}"));
                log.push(record.0, record.1.clone());
                logged.push(record);
                if i % 37 == 0 {
                    std::thread::yield_now();
                }
            }
            let theirs = worker.join().unwrap();
            // the worker's lines are in its own order; interleaving with main's is free
            logged.extend(theirs);
        });
        log.finish(&MemoryBackend::new("app/0"));
        let sent = calls.lock().unwrap().clone();
        let mut expected = lines_per_level(&group_by_level(logged));
        let mut got = lines_per_level(&sent);
        // main's and the worker's warnings interleave freely: compare each writer's own order
        for (_, lines) in expected.iter_mut().chain(got.iter_mut()) {
            lines.sort_by_key(|l| l.starts_with("worker"));
        }
        for (_, lines) in &got {
            let worker: Vec<_> = lines.iter().filter(|l| l.starts_with("worker")).collect();
            let mut sorted = worker.clone();
            sorted.sort_by_key(|l| l.rsplit(' ').next().unwrap().parse::<u32>().unwrap());
            assert_eq!(worker, sorted, "the worker's lines keep their order");
        }
        assert_eq!(got, expected, "round {round}");
        assert!(log.take().is_empty());
    }
}

#[test]
fn after_a_failed_call_the_rest_goes_to_stderr_not_to_juju_log() {
    let log = LogHandle::default();
    let attempts = Arc::new(Mutex::new(0));
    let counted = Arc::clone(&attempts);
    log.send_in_background(Arc::new(move |_, _: &str| {
        *counted.lock().unwrap() += 1;
        Err(juju_runtime::HookToolError::ToolMissing {
            tool: "juju-log".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }));
    log.push(LogLevel::Info, "first".into());
    std::thread::sleep(Duration::from_millis(50));
    log.push(LogLevel::Info, "second".into());
    log.finish(&MemoryBackend::new("app/0"));
    assert_eq!(
        *attempts.lock().unwrap(),
        1,
        "a broken juju-log is not asked again"
    );
    assert!(log.take().is_empty(), "nothing is left behind");
}

/// One handle, two hooks (as a test process may run them): the second hook's records are sent
/// while it runs too, although the first one closed the buffer.
#[test]
fn a_handle_sends_again_after_it_finished() {
    let log = LogHandle::default();
    let backend = MemoryBackend::new("app/0");
    for hook in ["first", "second"] {
        let (send, calls, call_made) = recording();
        log.send_in_background(send);
        for n in 1..=2 {
            log.push(LogLevel::Info, format!("{hook} hook, record {n}"));
            call_made
                .recv_timeout(Duration::from_secs(5))
                .expect("sent while the hook runs");
        }
        log.finish(&backend);
        assert_eq!(calls.lock().unwrap().len(), 2, "{hook}");
    }
}
