//! Free TCP ports for the real daemons a test starts (slurmctld's `SlurmctldPort`), never the
//! same one twice in one test process.
//!
//! A port is found by binding port 0 and closing the socket; the daemon binds it later. Test
//! functions of one file run in parallel threads, so without a record two daemons started at
//! the same moment could be handed the same port (the kernel may offer a port again as soon as
//! it is closed), and the second would die with "Address already in use".

use std::collections::BTreeSet;
use std::sync::Mutex;

/// Ports already handed out by [`free_port`] in this process.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A TCP port on 127.0.0.1 that was free a moment ago and that no other caller in this process
/// got.
pub fn free_port() -> u16 {
    let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        if handed.insert(port) {
            return port;
        }
    }
}
