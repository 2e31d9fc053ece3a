//! The `juju-sim run` CLI against the demo scenario.

use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_juju-sim"))
        .args(args)
        .env("JUJU_SIM_JUJUC", env!("CARGO_BIN_EXE_jujuc"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap()
}

#[test]
fn demo_scenario_runs_and_prints_the_log() {
    let out = run(&["run", "tools/juju-sim/tests/scenarios/demo-shell.yaml"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("ctl/0 nodes-relation-changed (remote node/1): exit 0"),
        "{stdout}"
    );
    assert!(stdout.contains("$ relation-set --file -"));
    assert!(stdout.contains("action hello on node/0: completed"));
    assert!(stdout.contains("greeting: hello juju"));
    assert!(stdout.contains("expectations met"));
    assert!(stdout.contains("unit node/1: {"));
}

#[test]
fn failing_expectation_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let charm = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/charms/demo-ctl");
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        format!("steps:\n  - deploy: {{app: c, charm: {charm}}}\n  - expect: {{status: {{c/0: blocked}}}}\n"),
    )
    .unwrap();
    let out = run(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected c/0 to be blocked"));
}

#[test]
fn usage_error_exits_2() {
    assert_eq!(run(&["bogus"]).status.code(), Some(2));
}

#[test]
fn sh_step_sees_scenario_variables_and_fails_the_run_on_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        "steps:\n  - sh: 'echo wd=$WORKDIR; test -d \"$SCENARIO_DIR\"'\n  - sh: 'exit 3'\n",
    )
    .unwrap();
    let out = run(&["run", file.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("  | wd=/"), "{stdout}");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sh step failed"));
}

#[test]
fn advance_time_step_fires_due_secret_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let charm = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/charms/probe");
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        format!(
            r#"steps:
  - sh: 'echo "secret-add --rotate hourly pass=x >/dev/null" > $WORKDIR/install; echo "status-set blocked rotated" > $WORKDIR/secret-rotate'
  - deploy: {{app: a, charm: {charm}, env: {{PROBE_DIR: "${{WORKDIR}}", OUT: "${{WORKDIR}}"}}}}
  - advance-time: 59m
  - expect: {{status: {{a/0: unknown}}}}
  - advance-time: 1m
  - expect: {{status: {{a/0: blocked}}}}
  - show: secrets
"#
        ),
    )
    .unwrap();
    let out = run(&["run", file.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("a/0 secret-rotate"), "{stdout}");
    assert!(
        stdout.contains("owner=App(\"a\") label=\"\" latest=1"),
        "{stdout}"
    );
    let shown = stdout.split("owner=App").nth(1).unwrap_or_default();
    assert!(
        !shown.contains("eA=="),
        "show: secrets must not print content: {shown}"
    );
}

/// `juju-sim run s.yaml` from the scenario's own directory: the scenario directory is taken
/// from the absolute path, so `sh` steps run there and relative charm paths resolve against it,
/// instead of failing with `cannot run /bin/sh` (an empty directory). Follows how Juju reads a
/// local bundle given by a relative path, e.g. `juju deploy bundle.yaml`: Juju 4.0
/// `domain/deployment/charm/bundledatasrc.go` `LocalBundleDataSource` (3.6: the same function
/// in `github.com/juju/charm/v12`) keeps `basePath: filepath.Dir(absPath)` with `absPath, err :=
/// filepath.Abs(path)`, and `cmd/juju/application/deployer/bundlehandler.go`
/// `bundleHandler.addLocalCharm` joins a relative charm path to that directory.
#[test]
fn a_relative_scenario_path_runs_from_any_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let charm = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/charms/demo-ctl");
    std::os::unix::fs::symlink(charm, sub.join("ctl")).unwrap();
    std::fs::write(
        sub.join("s.yaml"),
        "steps:\n  - sh: 'echo cwd=$(pwd) dir=$SCENARIO_DIR'\n  - deploy: {app: c, charm: ctl}\n",
    )
    .unwrap();
    let real = std::fs::canonicalize(&sub).unwrap();
    for (cwd, arg) in [
        (sub.clone(), "s.yaml"),
        (sub.clone(), "./s.yaml"),
        (dir.path().to_owned(), "sub/s.yaml"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_juju-sim"))
            .args(["run", arg])
            .env("JUJU_SIM_JUJUC", env!("CARGO_BIN_EXE_jujuc"))
            .current_dir(&cwd)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{arg}: {stdout}\n{stderr}");
        let want = format!("  | cwd={0} dir={0}", real.display());
        assert!(stdout.contains(&want), "{arg}: {stdout}");
        assert!(stdout.contains("c/0 install"), "{arg}: {stdout}");
    }
}
