//! The shipped binary holds no test code: the product's normal dependency tree has no testing
//! crate, and the `slurm-charm` binary (built here from the same dependency graph `charm/pack.sh`
//! packs) contains none of the test doubles by name, neither as a symbol nor as a string.

use std::process::Command;

/// Crates that exist only for tests; none may be a normal dependency of the product.
const TEST_CRATES: [&str; 6] = [
    "juju-runtime-testing",
    "juju-sim",
    "fake-nvml",
    "gpu-probe",
    "proptest",
    "criterion",
];

/// Names of test doubles: not a byte of them may be in the product (symbols, strings, debug info).
const TEST_NAMES: [&str; 5] = [
    "MemoryBackend",
    "MemoryRelation",
    "RecordingRunner",
    "juju_runtime_testing",
    "gpu_probe",
];

/// Runtime API no charm calls (`NetworkBackend`): it may be described by the debug info of a
/// debug build, but no code for it may be linked. (`juju_reboot` is called: the slurmd driver
/// install requests a reboot, issue 15.)
const UNUSED_API: [&str; 2] = ["network_get", "opened_ports"];

#[test]
fn normal_dependency_tree_has_no_testing_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "-p",
            "slurm-charms",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        crates.contains(&"juju-runtime"),
        "the product depends on the runtime crate:\n{tree}"
    );
    for test_crate in TEST_CRATES {
        assert!(
            !crates.contains(&test_crate),
            "{test_crate} is a normal dependency of the product:\n{tree}"
        );
    }
}

#[test]
fn binary_holds_no_test_double() {
    let bin = env!("CARGO_BIN_EXE_slurm-charm");
    let bytes = std::fs::read(bin).expect("the binary is built");
    // Symbol names and strings are ASCII; a lossy view finds them with the fast `str` search.
    let text = String::from_utf8_lossy(&bytes);
    let contains = |needle: &str| text.contains(needle);
    // Positive control: the runtime's hook-tool client is linked, by name.
    assert!(contains("HookTools"), "{bin} has no HookTools symbol");
    for name in TEST_NAMES {
        assert!(!contains(name), "{bin} contains {name:?}");
    }
    // The same through the demangled symbol table, as an operator would check (`nm -C`).
    let nm = Command::new("nm")
        .args(["-C", "--defined-only", bin])
        .output()
        .expect("nm (binutils) is installed");
    assert!(nm.status.success(), "nm failed on {bin}");
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(symbols.contains("juju_runtime::"), "no runtime symbols");
    for name in TEST_NAMES.into_iter().chain(UNUSED_API) {
        let hits: Vec<&str> = symbols.lines().filter(|l| l.contains(name)).collect();
        assert!(hits.is_empty(), "symbols naming {name}: {hits:?}");
    }
}
