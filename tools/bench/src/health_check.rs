//! The health-check program Slurm runs on each node (`HealthCheckProgram`, issue 40): one run
//! of `slurm-charm health-check` on the 8-GPU node, started as slurmd starts it (an empty
//! environment; `PATH` given here so that `sinfo`/`scontrol` are `bench-fake`), and the same
//! with NVML hanging, which the program's own deadline (`NVML_DEADLINE`, 15 s) must bound.
//!
//! The program gets a host root of its own: the settings file the slurmd unit's hooks wrote
//! (its node, controller, NVML library, the 8 GPUs it remembers), the unit's device files, a
//! boot id, a kernel log of [`KMSG_RECORDS`] records (as a booted GPU server has; the program
//! reads all of it every run, as it reads the real `/dev/kmsg` from its start) with three XIDs
//! that drain nothing, and `sinfo.txt`, what `bench-fake sinfo` prints (`idle|none`).

use crate::env::World;
use crate::{BenchError, Result, Sample};
use slurm_charms::charms::slurmd::health_check::{NVML_DEADLINE, SETTINGS_PATH};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Records in the fake kernel log.
pub const KMSG_RECORDS: u64 = 2_000;

/// The program's world: its host root and the two fake NVML configurations.
pub struct Program {
    charm: PathBuf,
    rusage: PathBuf,
    root: PathBuf,
    path: String,
    nvml_config: PathBuf,
    hang_config: PathBuf,
}

fn io(what: &str, p: &Path, e: std::io::Error) -> BenchError {
    BenchError::Setup(format!("{what} {}: {e}", p.display()))
}

fn write(p: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("mkdir", dir, e))?;
    }
    std::fs::write(p, bytes).map_err(|e| io("write", p, e))
}

/// A kernel log of `n` records like a GPU server's after boot, with three XIDs that drain
/// nothing (13 and 43: the application's fault; 63: counted) on the fixture's GPUs.
fn kernel_log(n: u64) -> String {
    let mut out = String::new();
    for seq in 0..n {
        let usec = seq * 3_517;
        let msg = match seq {
            900 => "NVRM: Xid (PCI:0000:18:00): 13, pid=41234, name=python3, Graphics Exception: ESR 0x404600=0x80000001".to_owned(),
            1400 => "NVRM: Xid (PCI:0000:2a:00): 43, pid=41990, name=python3, Ch 00000018".to_owned(),
            1900 => "NVRM: Xid (PCI:0000:3a:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping".to_owned(),
            s if s % 7 == 0 => format!("systemd[1]: Started session-{s}.scope - Session {s} of User slurm."),
            s if s % 5 == 0 => format!("EXT4-fs (nvme0n1p{}): mounted filesystem with ordered data mode. Quota mode: none.", s % 4),
            s => format!("mlx5_core 0000:{:02x}:00.0: mlx5_pcie_event:301: PCIe slot advertised sufficient power (75W).", s % 256),
        };
        out.push_str(&format!("6,{seq},{usec},-;{msg}\n"));
    }
    out
}

impl Program {
    /// Builds the program's root from the slurmd unit's root (`unit_root`, after its hooks ran).
    pub fn prepare(world: &World, unit_root: &Path, fixture: &Path) -> Result<Program> {
        let root = world.dir.path().join("health-root");
        let rel = SETTINGS_PATH.trim_start_matches('/');
        let settings = std::fs::read(unit_root.join(rel)).map_err(|e| {
            BenchError::Setup(format!(
                "the slurmd unit wrote no {SETTINGS_PATH} ({e}): is it related to the controller?"
            ))
        })?;
        write(&root.join(rel), settings)?;
        let dev = unit_root.join("dev");
        for entry in std::fs::read_dir(&dev).map_err(|e| io("read", &dev, e))? {
            let entry = entry.map_err(|e| io("read", &dev, e))?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("nvidia") {
                write(&root.join("dev").join(&name), "")?;
            }
        }
        write(
            &root.join("proc/sys/kernel/random/boot_id"),
            "0b6e1d3c-4a51-4c51-9a0e-5e2b7d1c0a01\n",
        )?;
        write(&root.join("dev/kmsg"), kernel_log(KMSG_RECORDS))?;
        write(&root.join("sinfo.txt"), "idle|none\n")?;
        let text = std::fs::read_to_string(fixture).map_err(|e| io("read", fixture, e))?;
        let mut hang: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| BenchError::Setup(e.to_string()))?;
        // a driver that never answers: ten minutes, far past the program's deadline
        hang["delay_ms"] = serde_json::json!({"nvmlDeviceGetCount_v2": 600_000});
        let hang_config = root.join("fake-nvml-hang.json");
        write(&hang_config, hang.to_string())?;
        Ok(Program {
            charm: world.built.charm.clone(),
            rusage: world.built.rusage.clone(),
            path: format!("{}:/usr/bin:/bin", world.fakes.display()),
            nvml_config: fixture.to_path_buf(),
            hang_config,
            root,
        })
    }

    /// The program's command as slurmd starts it: no environment but `PATH` (fakes first),
    /// the host root and the fake NVML's configuration.
    fn command(&self, hang: bool, prefix: &[&Path]) -> Command {
        let mut argv: Vec<&Path> = prefix.to_vec();
        argv.push(&self.charm);
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..])
            .arg("health-check")
            .env_clear()
            .env("PATH", &self.path)
            .env("SLURM_CHARMS_ROOT", &self.root)
            .env(
                "FAKE_NVML_CONFIG",
                if hang {
                    &self.hang_config
                } else {
                    &self.nvml_config
                },
            );
        cmd
    }

    /// One run: its wall time (spawn to exit), after checking that it took the path measured
    /// (healthy, or NVML's silence judged at the deadline).
    pub fn run(&self, hang: bool) -> Result<Sample> {
        let started = Instant::now();
        let out = self
            .command(hang, &[])
            .output()
            .map_err(|e| BenchError::Setup(format!("health-check: {e}")))?;
        let wall_ms = started.elapsed().as_secs_f64() * 1e3;
        let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let want = if hang {
            format!("no answer within {} s", NVML_DEADLINE.as_secs())
        } else {
            "no change: healthy [".to_owned()
        };
        if !out.status.success() || !line.contains(&want) {
            return Err(BenchError::Setup(format!(
                "health-check ({}) printed {line:?} (exit {:?}), expected {want:?}; stderr: {}",
                if hang { "NVML hanging" } else { "healthy" },
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(Sample {
            wall_ms,
            calls: 0,
            tools_inner_ms: 0.0,
        })
    }

    /// `n` runs after one warm-up run (page cache), not counted.
    pub fn samples(&self, hang: bool, n: usize) -> Result<Vec<Sample>> {
        if !hang {
            self.run(hang)?;
        }
        (0..n).map(|_| self.run(hang)).collect()
    }

    /// Peak RSS (KiB, the maximum) and the median minor faults of `runs` healthy runs under
    /// `hook-rusage`.
    pub fn usage(&self, runs: usize) -> Result<(u64, u64)> {
        let out = self.root.join("rusage.txt");
        let _ = std::fs::remove_file(&out);
        for _ in 0..runs.max(1) {
            let status = self
                .command(false, &[&self.rusage, &out])
                .output()
                .map_err(|e| BenchError::Setup(format!("hook-rusage health-check: {e}")))?
                .status;
            if !status.success() {
                return Err(BenchError::Setup(format!(
                    "hook-rusage health-check: {status}"
                )));
            }
        }
        let text = std::fs::read_to_string(&out).map_err(|e| io("read", &out, e))?;
        let rows: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(' ').filter_map(|v| v.parse().ok()).collect())
            .filter(|f: &Vec<u64>| f.len() == 4)
            .collect();
        let rss = rows.iter().map(|r| r[0]).max().unwrap_or_default();
        let mut faults: Vec<u64> = rows.iter().map(|r| r[1]).collect();
        faults.sort_unstable();
        Ok((
            rss,
            faults.get(faults.len() / 2).copied().unwrap_or_default(),
        ))
    }
}
