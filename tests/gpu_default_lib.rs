//! The production path: `detect` with no explicit library opens `libnvidia-ml.so.1` through the
//! dlopen search, so `LD_LIBRARY_PATH` + `FAKE_NVML_CONFIG` give a subprocess fake GPUs (how the
//! simulator and end-to-end tests use the fake). The test re-runs itself as the child, because
//! `LD_LIBRARY_PATH` is only read when a process starts.

#[path = "fixtures/gpu/support.rs"]
mod support;

use std::process::Command;

use slurm_charms::gpu::{DetectOptions, detect};
use support::{Fake, fixture_text};

const CHILD: &str = "GPU_DEFAULT_LIB_CHILD";

fn run_child(test: &str, envs: &[(&str, &std::path::Path)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("CHILD-RESULT ").map(|(_, r)| r.trim()))
        .unwrap_or_else(|| panic!("no result in {stdout}"))
        .to_owned()
}

fn child_report() -> bool {
    if std::env::var_os(CHILD).is_none() {
        return false;
    }
    let inv = detect(&DetectOptions::default()).unwrap();
    println!("CHILD-RESULT {}", inv.gres_strings().join(","));
    true
}

#[test]
fn env_config_through_ld_library_path() {
    if child_report() {
        return;
    }
    // the sidecar says two T4; FAKE_NVML_CONFIG (mixed) must win
    let fake = Fake::fixture("two_t4");
    let cfg = fake.dir.path().join("mixed.json");
    std::fs::write(&cfg, fixture_text("mixed")).unwrap();
    let libdir = fake.lib.parent().unwrap();
    let got = run_child(
        "env_config_through_ld_library_path",
        &[("LD_LIBRARY_PATH", libdir), ("FAKE_NVML_CONFIG", &cfg)],
    );
    assert_eq!(got, "gpu:tesla_t4:2,gpu:nvidia_l40s:2");
}

#[test]
fn sidecar_config_through_ld_library_path() {
    if child_report() {
        return;
    }
    let fake = Fake::fixture("two_t4");
    let libdir = fake.lib.parent().unwrap();
    let got = run_child(
        "sidecar_config_through_ld_library_path",
        &[("LD_LIBRARY_PATH", libdir)],
    );
    assert_eq!(got, "gpu:tesla_t4:2");
}
