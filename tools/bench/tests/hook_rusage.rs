//! `hook-rusage` passes the command's exit status on and appends one line of its usage per
//! run: peak RSS, minor faults, user and system CPU time (what `hook-bench` reports per hook).

use std::process::Command;

fn usage_lines(out: &std::path::Path) -> Vec<[u64; 4]> {
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(' ').map(|v| v.parse().unwrap()).collect();
            f.try_into().unwrap()
        })
        .collect()
}

/// Runs `script` under `/bin/sh` through `hook-rusage`, its usage appended to `out`.
fn run_sh(out: &std::path::Path, script: &str) -> Option<i32> {
    Command::new(env!("CARGO_BIN_EXE_hook-rusage"))
        .arg(out)
        .args(["/bin/sh", "-c", script])
        .status()
        .unwrap()
        .code()
}

#[test]
fn reports_usage_and_passes_the_status_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("usage.txt");
    // a child that spends about 100 ms of user time in a loop (few system calls) and exits 3
    let busy = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3";
    assert_eq!(run_sh(&out, busy), Some(3), "the command's exit status");
    // one that holds a 32 MiB string (fresh pages) made by children it waits for
    let big = "x=$(head -c 33554432 /dev/zero | tr '\\0' a); exit 0";
    assert_eq!(run_sh(&out, big), Some(0));
    let lines = usage_lines(&out);
    assert_eq!(lines.len(), 2, "one line per run, appended");
    let [_, _, user_us, sys_us] = lines[0];
    assert!(user_us > 20_000, "the loop's user time: {user_us} µs");
    assert!(
        user_us > 4 * sys_us,
        "the loop is user time: {user_us} µs user, {sys_us} µs system"
    );
    let [rss, faults, _, _] = lines[1];
    assert!(
        rss > 32 * 1024,
        "the 32 MiB string held by the shell: {rss} KiB"
    );
    assert!(faults > 1000, "fresh pages of that string: {faults}");
    assert!(
        lines[0][0] < 32 * 1024,
        "the loop holds little: {} KiB",
        lines[0][0]
    );
}

#[test]
fn a_missing_command_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("usage.txt");
    let st = Command::new(env!("CARGO_BIN_EXE_hook-rusage"))
        .arg(&out)
        .arg("/nonexistent/command")
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&st.stderr).contains("cannot run /nonexistent/command"));
    assert!(
        !out.exists(),
        "nothing recorded for a command that never ran"
    );
}
