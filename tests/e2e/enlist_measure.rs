//! What the enlistment test (tests/e2e_enlist.rs) measures besides wall time: slurmctld
//! restarts and reconfigures by independent witnesses, and the hosts' resident memory.

use super::e2e::{self, Cluster};
use juju_sim::Simulator;
use std::path::PathBuf;
use std::time::Duration;

/// Lines of a file under a host's root (none when the file is missing).
fn log_lines(cluster: &Cluster, host: &str, rel: &str) -> Vec<String> {
    std::fs::read_to_string(cluster.root(host).join(rel))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// slurmctld restarts and reconfigures so far, counted by independent witnesses: restarts in
/// the systemctl stand-in's log; `scontrol reconfigure` runs in the controller's juju-log lines
/// (a restart is followed by one too), and on 22.05 also in slurmctld's own log (23.11+
/// re-executes slurmctld on reconfigure and words it differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reloads {
    pub restarts: usize,
    pub reconfigures: usize,
    /// `_slurm_rpc_reconfigure_controller: completed` lines in slurmctld.log.
    pub slurmctld_reconfigures: usize,
}

impl Reloads {
    pub fn read(cluster: &Cluster, sim: &Simulator, ctl: &str) -> Reloads {
        let restarts = log_lines(cluster, ctl, "var/log/e2e-systemctl.log")
            .iter()
            .filter(|l| l.ends_with("systemctl restart slurmctld"))
            .count();
        let reconfigures = sim
            .records()
            .iter()
            .filter(|r| r.unit == "slurmctld/0")
            .flat_map(|r| &r.calls)
            .filter(|c| c.tool == "juju-log")
            .filter(|c| {
                c.args.iter().any(|a| {
                    a.contains("changed: scontrol reconfigure")
                        || a.contains("restarting slurmctld, then reconfigure")
                })
            })
            .count();
        let slurmctld_reconfigures = log_lines(cluster, ctl, "var/log/slurm/slurmctld.log")
            .iter()
            .filter(|l| l.contains("_slurm_rpc_reconfigure_controller: completed"))
            .count();
        Reloads {
            restarts,
            reconfigures,
            slurmctld_reconfigures,
        }
    }

    pub fn since(self, before: Reloads) -> Reloads {
        Reloads {
            restarts: self.restarts - before.restarts,
            reconfigures: self.reconfigures - before.reconfigures,
            slurmctld_reconfigures: self.slurmctld_reconfigures - before.slurmctld_reconfigures,
        }
    }
}

/// How often the slurmd charm (re)started `host`'s slurmd: `systemctl restart --no-block
/// slurmd` lines in the systemctl stand-in's log of that host.
pub fn slurmd_starts(cluster: &Cluster, host: &str) -> usize {
    log_lines(cluster, host, "var/log/e2e-systemctl.log")
        .iter()
        .filter(|l| l.ends_with("systemctl restart --no-block slurmd"))
        .count()
}

/// Sum of VmRSS (KiB) of every process in the PID namespaces `ns` (`/proc/PID/ns/pid` link
/// targets of the hosts): daemons, and whatever runs there right now.
fn rss_kib(ns: &[PathBuf]) -> u64 {
    ns.iter()
        .flat_map(|n| e2e::processes_in_pid_ns(n))
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| {
                    v.split_whitespace()
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                })
        })
        .sum()
}

/// Samples [`rss_kib`] every 500 ms on a thread until dropped; `peak()` is the largest sample.
pub struct RssSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl RssSampler {
    pub fn start(cluster: &Cluster) -> RssSampler {
        let ns: Vec<PathBuf> = cluster
            .hosts()
            .iter()
            .filter_map(|h| std::fs::read_link(format!("/proc/{}/ns/pid", h.pid)).ok())
            .collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = 0;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(rss_kib(&ns));
                std::thread::sleep(Duration::from_millis(500));
            }
            peak.max(rss_kib(&ns))
        });
        RssSampler {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops sampling; the peak in KiB.
    pub fn peak(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread
            .take()
            .map_or(0, |t| t.join().expect("RSS sampler panicked"))
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
