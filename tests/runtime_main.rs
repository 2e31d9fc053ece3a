//! The `slurm-charm` binary's outer contract: exit codes, and failures reported on stderr and to
//! `juju-log` at ERROR. Hook tools are recording shell fakes in a temp dir put on `PATH`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_slurm-charm");

fn fake_tool(dir: &Path, name: &str) {
    let path = dir.join(name);
    let log = dir.join("calls.log");
    let script = format!(
        "#!/bin/sh\n{{ printf '%s' '{name}'; for a in \"$@\"; do printf ' [%s]' \"$a\"; done; printf '\\n'; }} >> '{}'\n",
        log.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn outside_a_hook_exits_1_with_a_clear_message() {
    let out = Command::new(BIN)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("JUJU_DISPATCH_PATH is not set"), "{stderr}");
    // no hook to name: the report names the binary as it was started (argv[0])
    assert!(stderr.contains("ERROR slurm-charm failed: "), "{stderr}");
}

#[test]
fn unknown_charm_fails_the_hook_and_logs_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    let charm = tmp.path().join("charm");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::create_dir_all(&charm).unwrap();
    for tool in ["juju-log", "status-set", "is-leader", "config-get"] {
        fake_tool(&tools, tool);
    }
    std::fs::write(charm.join("metadata.yaml"), "name: bogus\n").unwrap();
    let out = Command::new(BIN)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", tools.display()))
        .env("JUJU_DISPATCH_PATH", "hooks/install")
        .env("JUJU_HOOK_NAME", "install")
        .env("JUJU_UNIT_NAME", "bogus/0")
        .env("JUJU_MODEL_NAME", "m")
        .env("JUJU_CHARM_DIR", &charm)
        .env("SLURM_CHARMS_ROOT", tmp.path())
        .current_dir(&charm)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bogus/0 hooks/install failed"), "{stderr}");
    assert!(stderr.contains("\"bogus\""), "{stderr}");
    let calls = std::fs::read_to_string(tools.join("calls.log")).unwrap();
    let logs: Vec<&str> = calls
        .lines()
        .filter(|l| l.starts_with("juju-log"))
        .collect();
    assert_eq!(logs.len(), 1, "{calls}");
    assert!(
        logs[0].starts_with("juju-log [--log-level] [ERROR] [--] [bogus/0 hooks/install failed"),
        "{calls}"
    );
}
