//! The hook-tool server: a thread accepting `jujuc` connections on a Unix socket and executing
//! each request against the shared model, one at a time (like Juju's per-context mutex).

use crate::context::HookContext;
use crate::model::Model;
use crate::protocol::{Request, Response};
use std::collections::HashMap;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// The state the server and the simulator share.
#[derive(Debug, Default)]
pub struct Shared {
    /// The model.
    pub model: Model,
    /// The running hooks by `JUJU_CONTEXT_ID` (several when hooks run in parallel).
    pub contexts: HashMap<String, HookContext>,
}

/// Lock the shared state, recovering from a poisoned lock (a panicking tool must not wedge tests).
pub fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running tool server; stops when dropped.
#[derive(Debug)]
pub struct Server {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

fn handle(shared: &Mutex<Shared>, mut stream: UnixStream) {
    let Ok(req) = Request::read_from(&mut stream) else {
        return;
    };
    let resp = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = lock(shared);
        let Shared { model, contexts } = &mut *guard;
        crate::tools::execute(model, contexts.get_mut(&req.context_id), &req)
    }))
    .unwrap_or_else(|_| Response {
        code: 1,
        stdout: Vec::new(),
        stderr: format!("ERROR internal simulator error running {}\n", req.tool).into_bytes(),
    });
    let _ = Response::write_to(&resp, &mut stream);
}

impl Server {
    /// Bind `path` and start serving.
    pub fn start(path: &Path, shared: Arc<Mutex<Shared>>) -> std::io::Result<Server> {
        let listener = UnixListener::bind(path)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("juju-sim-tools".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop2.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(s) = stream {
                        handle(&shared, s);
                    }
                }
            })?;
        Ok(Server {
            path: path.to_owned(),
            stop,
            thread: Some(thread),
        })
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = UnixStream::connect(&self.path);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
