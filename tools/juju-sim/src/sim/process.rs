//! Running one handler process: capture stdout/stderr, enforce the hook timeout, and do not
//! hang when a daemon started by the hook keeps the output pipes open.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long to keep reading output after the handler exited (a daemon it started may hold
/// the pipes open forever; Juju would hang, the simulator moves on and says so).
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// A finished handler.
#[derive(Debug)]
pub struct Finished {
    /// Exit status (`None` when killed for the timeout).
    pub status: Option<ExitStatus>,
    /// Captured stdout.
    pub stdout: Vec<u8>,
    /// Captured stderr (plus simulator notes).
    pub stderr: Vec<u8>,
    /// Wall time until the handler exited.
    pub duration: Duration,
}

fn reader(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// Run `cmd` to completion (or until `timeout`, then kill it).
pub fn run(cmd: &mut Command, timeout: Option<Duration>) -> std::io::Result<Finished> {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let out_rx = child.stdout.take().map(reader);
    let err_rx = child.stderr.take().map(reader);
    let mut killed = false;
    let status = if timeout.is_none() {
        Some(child.wait()?)
    } else {
        loop {
            if let Some(s) = child.try_wait()? {
                break Some(s);
            }
            if timeout.is_some_and(|t| start.elapsed() > t) {
                let _ = child.kill();
                let _ = child.wait();
                killed = true;
                break None;
            }
            std::thread::sleep(
                (start.elapsed() / 50).clamp(Duration::from_micros(200), Duration::from_millis(20)),
            );
        }
    };
    let duration = start.elapsed();
    let deadline = Instant::now() + OUTPUT_GRACE;
    let collect = |rx: Option<mpsc::Receiver<Vec<u8>>>, note: &mut Vec<u8>| {
        let Some(rx) = rx else { return Vec::new() };
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(b) => b,
            Err(_) => {
                note.extend_from_slice(
                    b"juju-sim: output pipe still held open after the hook exited (a daemon started by the hook?); output truncated\n",
                );
                Vec::new()
            }
        }
    };
    let mut notes = Vec::new();
    let stdout = collect(out_rx, &mut notes);
    let mut stderr = collect(err_rx, &mut notes);
    stderr.extend_from_slice(&notes);
    if killed {
        stderr.extend_from_slice(
            format!("juju-sim: hook killed after the timeout of {timeout:?}\n").as_bytes(),
        );
    }
    Ok(Finished {
        status,
        stdout,
        stderr,
        duration,
    })
}
