//! `fs-probe [DIR] [ROUNDS] [BYTES]`: what replacing a file costs on DIR's file system (default:
//! a temp dir under `/var/tmp`, on the same file system as `/var/lib` on most machines), the
//! way the charms write them. Per round, each way rewrites a file of BYTES bytes (default
//! 3,000; the controller's relation cache is about 500,000 at 10,000 alike nodes) 50 times with
//! alternating content; prints the median per write (µs) of each way over ROUNDS rounds
//! (default 9), the ways interleaved so that the disk's background writeback weighs on all:
//!
//! * `temp+rename`: a new temp file beside it, written, renamed over it (no `fsync`):
//!   [`slurm_charms::charms::host::Host::write_unsynced`];
//! * `temp+fsync+rename`: the same with `fsync` of the temp file and the directory:
//!   [`slurm_charms::charms::host::Host::write`];
//! * `in place`: the bytes written over the file from offset 0 and its length cut:
//!   [`slurm_charms::charms::host::Host::overwrite_unsynced`].

use slurm_charms::charms::host::{Host, SetFile, SystemRunner};
use std::process::ExitCode;
use std::time::Instant;

#[path = "../stats.rs"]
mod stats;

use stats::Stat;

const WRITES: usize = 50;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let kept;
    let dir = match args.next() {
        Some(d) => std::path::PathBuf::from(d),
        None => match tempfile::Builder::new()
            .prefix("fs-probe")
            .tempdir_in("/var/tmp")
        {
            Ok(d) => {
                kept = d;
                kept.path().to_path_buf()
            }
            Err(e) => {
                eprintln!("fs-probe: cannot make a temp dir under /var/tmp: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(9).max(1);
    let bytes: usize = args
        .next()
        .and_then(|b| b.parse().ok())
        .unwrap_or(3000)
        .max(1);
    let runner = SystemRunner;
    let host = Host::new(&dir, &runner);
    let texts = [vec![b'a'; bytes], vec![b'b'; bytes]];
    type Way = (&'static str, fn(&Host<'_>, &[u8]) -> bool);
    let ways: [Way; 3] = [
        ("temp+rename", |h, b| {
            h.write_unsynced("/probe/renamed", b, 0o600, None).is_ok()
        }),
        ("temp+fsync+rename", |h, b| {
            h.write("/probe/synced", b, 0o600, None).is_ok()
        }),
        ("in place", |h, b| {
            let f = SetFile {
                path: "/probe/in-place",
                bytes: b,
                mode: 0o600,
                owner: None,
            };
            h.overwrite_unsynced(&[f]).is_ok()
        }),
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    for _ in 0..rounds {
        for (i, (name, write)) in ways.iter().enumerate() {
            let start = Instant::now();
            for k in 0..WRITES {
                if !write(&host, &texts[k % 2]) {
                    eprintln!("fs-probe: {name} failed under {}", dir.display());
                    return ExitCode::from(1);
                }
            }
            times[i].push(start.elapsed().as_secs_f64() * 1e6 / WRITES as f64);
        }
    }
    println!(
        "file system under {}: µs per {bytes}-byte file write over {rounds} rounds, median (p10–p90, or min–max under 5 rounds)",
        dir.display()
    );
    for ((name, _), t) in ways.iter().zip(times) {
        println!("{name:>18}: {}", Stat::of(&t).show(1));
    }
    ExitCode::SUCCESS
}
