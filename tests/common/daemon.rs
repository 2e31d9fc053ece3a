//! A daemon started by a test (a real slurmctld), stopped when the guard is dropped: TERM,
//! then KILL after 5 s, so a failing assertion never leaves a daemon behind.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Owns a running daemon's process; dropping it stops the daemon.
pub struct Daemon(pub Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.0.try_wait() {
            return;
        }
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
