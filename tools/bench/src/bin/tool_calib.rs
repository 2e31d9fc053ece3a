//! `tool-calib`: run as a hook's handler (`Simulator::run_hook_command`), it calls `is-leader`
//! `$1` times (default 200) the way a charm does (spawn, wait, read stdout) and prints one JSON
//! line `{"outer_ns": [...], "inner_ns": [...]}`: each call's wall time seen by this parent, and
//! the time `jujuc-timed` measured inside itself (from `$HOOK_BENCH_TOOL_LOG`, which must be set
//! and empty). Their difference is the per-call process cost `jujuc-timed` cannot see.

use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

fn main() -> ExitCode {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let Some(log) = std::env::var_os("HOOK_BENCH_TOOL_LOG") else {
        eprintln!("HOOK_BENCH_TOOL_LOG not set");
        return ExitCode::from(1);
    };
    let mut outer = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = Command::new("is-leader")
            .arg("--format=json")
            .stdin(Stdio::null())
            .output();
        outer.push(t.elapsed().as_nanos() as u64);
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                eprintln!("is-leader failed: {}", String::from_utf8_lossy(&o.stderr));
                return ExitCode::from(1);
            }
            Err(e) => {
                eprintln!("cannot run is-leader: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let inner: Vec<u64> = text
        .lines()
        .filter_map(|l| l.split('\t').nth(1)?.parse().ok())
        .collect();
    println!(
        "{}",
        serde_json::json!({"outer_ns": outer, "inner_ns": inner})
    );
    ExitCode::SUCCESS
}
