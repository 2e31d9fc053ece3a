//! Shared helpers for the simulator's conformance tests.
#![allow(dead_code)]

use juju_sim::{DeploySpec, SimOptions, Simulator};
use std::path::{Path, PathBuf};

/// The probe charm directory.
pub fn probe_charm() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/charms/probe")
}

/// A simulator using this package's freshly built jujuc.
pub fn sim() -> Simulator {
    Simulator::with_options(SimOptions {
        jujuc: Some(PathBuf::from(env!("CARGO_BIN_EXE_jujuc"))),
        ..SimOptions::default()
    })
    .unwrap()
}

/// A probe test: a temp dir with hook scripts, and a simulator.
pub struct Probe {
    pub dir: tempfile::TempDir,
    pub sim: Simulator,
}

impl Probe {
    pub fn new() -> Self {
        Probe {
            dir: tempfile::tempdir().unwrap(),
            sim: sim(),
        }
    }

    /// Write the script run for `hook` (hook name, action name, or `any`).
    pub fn script(&self, hook: &str, body: &str) -> &Self {
        std::fs::write(self.dir.path().join(hook), body).unwrap();
        self
    }

    /// A deploy spec for the probe charm pointing at this probe's scripts.
    pub fn spec(&self, app: &str, units: u32) -> DeploySpec {
        DeploySpec::new(app, probe_charm())
            .units(units)
            .env("PROBE_DIR", self.dir.path().to_str().unwrap())
            .env("OUT", self.dir.path().to_str().unwrap())
    }

    /// Read a file written by a script (relative to the probe dir).
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// A `run LABEL cmd` result: (stdout, stderr, exit code).
    pub fn result(&self, label: &str) -> (String, String, i32) {
        let code = self.read(&format!("{label}.code"));
        assert!(
            !code.is_empty(),
            "no result for {label:?}; hooks: {:?}",
            self.hooks()
        );
        (
            self.read(&format!("{label}.out")),
            self.read(&format!("{label}.err")),
            code.trim().parse().unwrap(),
        )
    }

    /// Deploy `a` (1 unit) and `b` (`nb` units) and relate `a:db` with `b:backend`.
    pub fn pair(&mut self, nb: u32) -> u32 {
        self.sim.deploy(self.spec("a", 1)).unwrap();
        self.sim.deploy(self.spec("b", nb)).unwrap();
        self.sim.integrate("a:db", "b:backend").unwrap()
    }

    /// The hooks log lines: `<unit> <hook> <remote-unit>`.
    pub fn hooks(&self) -> Vec<String> {
        self.read("hooks.log")
            .lines()
            .map(|l| l.trim_end().to_owned())
            .collect()
    }

    /// Clear the hooks log.
    pub fn clear(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("hooks.log"));
    }
}
