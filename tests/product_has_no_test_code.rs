//! The shipped binary holds no test code: the product's normal dependency tree has no testing
//! crate, and the `slurm-charm` binary contains none of the test doubles by name, neither as a
//! symbol nor as a string: the one `cargo test` builds here (debug, with debug info) and the one
//! operators get, the release build `charm/pack.sh` packs as `dispatch` in both `.charm` files
//! (built without the dev-dependencies, so cargo's feature unification for tests cannot hide a
//! difference).
//!
//! The checks can fail: with `std::hint::black_box("RecordingRunner");` added to `main` in
//! `src/main.rs`, both `binary_holds_no_test_double` and
//! `packed_release_binary_holds_no_test_double` failed (`... contains "RecordingRunner"`).

#[path = "common/required.rs"]
mod required;

use std::path::{Path, PathBuf};
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
    assert_no_test_double(Path::new(env!("CARGO_BIN_EXE_slurm-charm")));
}

/// The release binary as shipped: `charm/pack.sh` run as an operator runs it (it builds with
/// `cargo build --release --locked --bin slurm-charm`), and the `dispatch` of each `.charm` checked.
#[test]
fn packed_release_binary_holds_no_test_double() {
    let have = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> = ["zip", "unzip"].into_iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        required::skip(
            "product_has_no_test_code packed_release_binary_holds_no_test_double",
            &missing.join(", "),
            "apt-get install zip unzip (.ci/run installs them)",
        );
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let pack = Command::new(repo.join("charm/pack.sh"))
        .arg(out.path())
        .env_remove("SLURM_CHARM_BIN")
        .output()
        .expect("charm/pack.sh runs");
    assert!(
        pack.status.success(),
        "charm/pack.sh failed: {}",
        String::from_utf8_lossy(&pack.stderr)
    );
    for charm in ["slurmd", "slurmctld"] {
        let archive = out.path().join(format!("{charm}_amd64.charm"));
        let unzip = Command::new("unzip")
            .arg("-p")
            .arg(&archive)
            .arg("dispatch")
            .output()
            .expect("unzip runs");
        assert!(
            unzip.status.success() && !unzip.stdout.is_empty(),
            "no dispatch in {}",
            archive.display()
        );
        let dispatch = out.path().join(format!("{charm}-dispatch"));
        std::fs::write(&dispatch, &unzip.stdout).unwrap();
        assert_no_test_double(&dispatch);
    }
}

/// No test double in `bin`, by bytes (symbols, strings, debug info) and by its demangled symbol
/// table; with positive controls that the runtime is linked and named.
fn assert_no_test_double(bin: &Path) {
    let shown = bin.display();
    let bytes = std::fs::read(bin).expect("the binary is built");
    // Symbol names and strings are ASCII; a lossy view finds them with the fast `str` search.
    let text = String::from_utf8_lossy(&bytes);
    let contains = |needle: &str| text.contains(needle);
    // Positive control: the runtime's hook-tool client is linked, by name.
    assert!(contains("HookTools"), "{shown} has no HookTools symbol");
    for name in TEST_NAMES {
        assert!(!contains(name), "{shown} contains {name:?}");
    }
    // The same through the demangled symbol table, as an operator would check (`nm -C`).
    let nm = Command::new("nm")
        .args(["-C", "--defined-only"])
        .arg(bin)
        .output()
        .expect("nm (binutils) is installed");
    assert!(nm.status.success(), "nm failed on {shown}");
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(
        symbols.contains("juju_runtime::"),
        "no runtime symbols in {shown}"
    );
    for name in TEST_NAMES.into_iter().chain(UNUSED_API) {
        let hits: Vec<&str> = symbols.lines().filter(|l| l.contains(name)).collect();
        assert!(
            hits.is_empty(),
            "symbols naming {name} in {shown}: {hits:?}"
        );
    }
}
