//! Library state between `nvmlInit*` and the last `nvmlShutdown`, and the device handles.

use std::ffi::c_int;
use std::sync::Mutex;

use crate::config::{Config, DeviceCfg, MigInstanceCfg};
use crate::rc;

/// What a handle points at.
pub enum Kind {
    /// A physical GPU and its MIG slots (index → MIG node).
    Gpu {
        /// The configuration of the GPU.
        cfg: DeviceCfg,
        /// MIG devices by `nvmlDeviceGetMigDeviceHandleByIndex` index.
        slots: Vec<Option<&'static Node>>,
    },
    /// A MIG device.
    Mig {
        /// The configuration of the MIG device.
        cfg: MigInstanceCfg,
        /// Index of the parent GPU in `State::gpus`.
        parent: usize,
    },
}

/// What an `nvmlDevice_t` points at (leaked, so handles stay valid for the process).
pub struct Node {
    /// GPU or MIG device.
    pub kind: Kind,
}

impl Node {
    /// Injected return code for `call` on this node, if any.
    fn error(&self, call: &str) -> Option<c_int> {
        match &self.kind {
            Kind::Gpu { cfg, .. } => cfg.errors.get(call).copied(),
            Kind::Mig { cfg, .. } => cfg.errors.get(call).copied(),
        }
    }
}

/// The initialised library.
pub struct State {
    /// Init reference count (NVML allows nested init/shutdown pairs).
    pub refs: u32,
    /// Parsed configuration.
    pub config: Config,
    /// Physical GPUs in index order.
    pub gpus: Vec<&'static Node>,
    /// Every handle given out (GPUs and MIG devices), for validation.
    pub all: Vec<usize>,
    /// Event sets: per set, the GPU indexes registered for XID events.
    pub event_sets: Vec<Vec<usize>>,
    /// Per GPU index, how many of its queued XIDs were delivered.
    pub delivered: Vec<usize>,
}

/// Global state; `None` when not initialised.
pub static STATE: Mutex<Option<State>> = Mutex::new(None);

fn leak(node: Node) -> &'static Node {
    Box::leak(Box::new(node))
}

impl State {
    /// Builds the handles from a configuration.
    pub fn build(config: Config) -> Result<State, String> {
        let mut gpus = Vec::new();
        let mut all = Vec::new();
        for (gi, dev) in config.devices.iter().enumerate() {
            let mut slots: Vec<Option<&'static Node>> = Vec::new();
            if let Some(mig) = &dev.mig {
                slots = vec![None; mig.max_devices as usize];
                let mut next = 0usize;
                for inst in &mig.instances {
                    let slot = match inst.slot {
                        Some(s) => s as usize,
                        None => {
                            while next < slots.len() && slots[next].is_some() {
                                next += 1;
                            }
                            next
                        }
                    };
                    let Some(cell) = slots.get_mut(slot) else {
                        return Err(format!(
                            "fake-nvml: device {gi}: MIG slot {slot} is not below max_devices {}",
                            mig.max_devices
                        ));
                    };
                    if cell.is_some() {
                        return Err(format!(
                            "fake-nvml: device {gi}: MIG slot {slot} used twice"
                        ));
                    }
                    let node = leak(Node {
                        kind: Kind::Mig {
                            cfg: inst.clone(),
                            parent: gi,
                        },
                    });
                    all.push(node as *const Node as usize);
                    *cell = Some(node);
                }
            }
            let node = leak(Node {
                kind: Kind::Gpu {
                    cfg: dev.clone(),
                    slots,
                },
            });
            all.push(node as *const Node as usize);
            gpus.push(node);
        }
        let delivered = vec![0; gpus.len()];
        Ok(State {
            refs: 1,
            config,
            gpus,
            all,
            event_sets: Vec::new(),
            delivered,
        })
    }

    /// Global injected error for `call`.
    pub fn global_error(&self, call: &str) -> Option<c_int> {
        self.config.errors.get(call).copied()
    }

    /// Sleeps the configured `delay_ms` of `call`, if any (a hanging driver).
    pub fn delay(&self, call: &str) {
        if let Some(ms) = self.config.delay_ms.get(call) {
            std::thread::sleep(std::time::Duration::from_millis(*ms));
        }
    }

    /// Resolves a handle: known pointer, else INVALID_ARGUMENT; then injected errors.
    pub fn node(&self, call: &str, handle: *const Node) -> Result<&'static Node, c_int> {
        let addr = handle as usize;
        if !self.all.contains(&addr) {
            return Err(rc::INVALID_ARGUMENT);
        }
        self.delay(call);
        // SAFETY: the address is one of our leaked, never-freed nodes.
        let node: &'static Node = unsafe { &*handle };
        if let Some(code) = node.error(call).or_else(|| self.global_error(call)) {
            return Err(code);
        }
        Ok(node)
    }
}

/// Runs `f` with the initialised state, or returns UNINITIALIZED.
pub fn with_state(f: impl FnOnce(&State) -> Result<(), c_int>) -> c_int {
    let guard = match STATE.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    match guard.as_ref() {
        None => rc::UNINITIALIZED,
        Some(state) => match f(state) {
            Ok(()) => rc::SUCCESS,
            Err(code) => code,
        },
    }
}

/// Runs `f` on a validated device handle.
pub fn with_node(
    call: &str,
    handle: *const Node,
    f: impl FnOnce(&State, &'static Node) -> Result<(), c_int>,
) -> c_int {
    with_state(|state| {
        let node = state.node(call, handle)?;
        f(state, node)
    })
}

/// Runs `f` with the initialised state, mutably, or returns UNINITIALIZED.
pub fn with_state_mut(f: impl FnOnce(&mut State) -> Result<(), c_int>) -> c_int {
    let mut guard = match STATE.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    match guard.as_mut() {
        None => rc::UNINITIALIZED,
        Some(state) => match f(state) {
            Ok(()) => rc::SUCCESS,
            Err(code) => code,
        },
    }
}
