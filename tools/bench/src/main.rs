//! `hook-bench`: whole-hook benchmarks through the Juju simulator (issue 7, and issue 2's
//! status-only hook), side by side with a minimal Python `ops` charm.
//!
//! Build everything, then run (see `docs/BENCHMARKS.md`):
//!
//! ```sh
//! cargo build --release --workspace && target/release/hook-bench
//! ```
//!
//! Each hook is the real `dispatch` → `slurm-charm` process started by `juju-sim`, with
//! `jujuc-timed` (juju-sim's `jujuc` plus a per-call timer) as the hook tools and `bench-fake`
//! as `systemctl`/`scontrol`/`slurmd`/…; wall time is the simulator's record (spawn to exit).
//! Large relations are seeded directly into the simulator's model (unit, scope and bag, as a
//! committed `relation-set` leaves them), then the controller rebuilds its store once
//! (`leader-elected`) and the measured `slurmd-relation-changed` hooks run normally.

mod env;
mod health_check;
mod ratio;
mod stats;

use env::{Built, World};
use juju_sim::{Hook, Simulator};
use serde::Serialize;
use stats::Stat;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Preparing executables, charm dirs or the baseline failed.
    #[error("setup: {0}")]
    Setup(String),
    /// The simulator refused an operation.
    #[error("simulator: {0}")]
    Sim(#[from] juju_sim::SimError),
    /// A measured hook did not succeed.
    #[error("hook {unit} {hook} failed (exit {code:?}): {stderr}")]
    HookFailed {
        /// Unit.
        unit: String,
        /// Hook.
        hook: String,
        /// Exit code.
        code: Option<i32>,
        /// Its stderr.
        stderr: String,
    },
}

type Result<T> = std::result::Result<T, BenchError>;

/// Command-line options.
#[derive(Debug, Clone)]
struct Opts {
    sizes: Vec<u32>,
    samples: usize,
    ops_samples: usize,
    ops_samples_10k: usize,
    /// Changed hooks measured at 10,000 units and more (`--samples-10k`; `--samples` is
    /// capped to 5..=11 there unless this is given): many, for a median that a 2-core VM's
    /// spread moves less, or for a profiler to sample.
    samples_10k: Option<usize>,
    /// Runs of the controller's changed hook under `hook-rusage` per size (`--rss-runs`):
    /// peak RSS is their maximum; minor faults (which vary with where address randomisation
    /// puts the heap: more runs, a steadier median) and user/system CPU time their medians.
    rss_runs: u32,
    enlist_max: u32,
    enlist_budget: Duration,
    out: PathBuf,
    ctl_hostname: Option<String>,
    enlist_only: Option<PathBuf>,
    /// Every seeded node gets its own `RealMemory`, so no two nodes share a line (no hostlist
    /// folding): the controller's worst case for memory.
    distinct: bool,
    /// `--only-small`: the small hooks only (process floor, status only, slurmd update-status,
    /// detect-gpus, each beside its ops twin), for iterating on them; no controller at scale,
    /// no render/parse, no enlistment.
    only_small: bool,
    /// Runs of the health-check program on the 8-GPU node (`--health-samples`; default
    /// `--samples`).
    health_samples: Option<usize>,
    /// Runs of the health-check program with NVML hanging (`--hang-samples`, each about
    /// `NVML_DEADLINE`, 15 s; 0 leaves the row out).
    hang_samples: usize,
}

impl Opts {
    fn parse() -> Result<Self> {
        let mut o = Opts {
            sizes: vec![10, 100, 1_000, 10_000],
            samples: 21,
            ops_samples: 11,
            ops_samples_10k: 3,
            samples_10k: None,
            rss_runs: 3,
            enlist_max: 10_000,
            enlist_budget: Duration::from_secs(900),
            out: env::repo().join("target/hook-bench"),
            ctl_hostname: None,
            enlist_only: None,
            distinct: false,
            only_small: false,
            health_samples: None,
            hang_samples: 3,
        };
        let mut args = std::env::args().skip(1);
        let bad = |m: String| BenchError::Setup(m);
        while let Some(a) = args.next() {
            let mut val = || args.next().ok_or_else(|| bad(format!("{a} needs a value")));
            match a.as_str() {
                "--sizes" => {
                    o.sizes = val()?
                        .split(',')
                        .map(|s| s.trim().parse().map_err(|e| bad(format!("--sizes: {e}"))))
                        .collect::<Result<_>>()?
                }
                "--samples" => o.samples = val()?.parse().map_err(|e| bad(format!("{e}")))?,
                "--ops-samples" => {
                    o.ops_samples = val()?.parse().map_err(|e| bad(format!("{e}")))?
                }
                "--ops-samples-10k" => {
                    o.ops_samples_10k = val()?.parse().map_err(|e| bad(format!("{e}")))?
                }
                "--samples-10k" => {
                    o.samples_10k = Some(val()?.parse().map_err(|e| bad(format!("{e}")))?)
                }
                "--rss-runs" => o.rss_runs = val()?.parse().map_err(|e| bad(format!("{e}")))?,
                "--enlist" => o.enlist_max = val()?.parse().map_err(|e| bad(format!("{e}")))?,
                "--enlist-budget-s" => {
                    o.enlist_budget =
                        Duration::from_secs(val()?.parse().map_err(|e| bad(format!("{e}")))?)
                }
                "--out" => o.out = PathBuf::from(val()?),
                "--ctl-hostname" => o.ctl_hostname = Some(val()?),
                "--enlist-only" => o.enlist_only = Some(PathBuf::from(val()?)),
                "--distinct" => o.distinct = true,
                "--only-small" => o.only_small = true,
                "--health-samples" => {
                    o.health_samples = Some(val()?.parse().map_err(|e| bad(format!("{e}")))?)
                }
                "--hang-samples" => {
                    o.hang_samples = val()?.parse().map_err(|e| bad(format!("{e}")))?
                }
                "--quick" => {
                    o.sizes = vec![10, 100];
                    o.samples = 5;
                    o.ops_samples = 3;
                    o.enlist_max = 20;
                    o.enlist_budget = Duration::from_secs(60);
                    o.hang_samples = 1;
                }
                "-h" | "--help" => {
                    println!(
                        "hook-bench [--quick] [--sizes 10,100,1000,10000] [--samples 21] \
                         [--ops-samples 11] [--ops-samples-10k 3] [--samples-10k 11] \
                         [--rss-runs 3] [--enlist 10000] [--enlist-budget-s 900] [--distinct] \
                         [--out target/hook-bench] [--only-small] [--health-samples 21] \
                         [--hang-samples 3]"
                    );
                    std::process::exit(0);
                }
                other => return Err(bad(format!("unknown argument {other:?}"))),
            }
        }
        Ok(o)
    }
}

/// One measured hook run.
#[derive(Debug, Clone, Copy)]
struct Sample {
    wall_ms: f64,
    calls: usize,
    /// Time inside the tool processes (`jujuc-timed`'s own measure), ms.
    tools_inner_ms: f64,
}

/// One line of results.
#[derive(Debug, Clone, Serialize)]
struct Row {
    hook: String,
    units: Option<u32>,
    charm: String,
    wall_ms: Stat,
    calls_min: usize,
    calls_max: usize,
    tools_ms: Stat,
    outside_ms: Stat,
    peak_rss_kib: Option<u64>,
    /// Minor page faults of that process (median of the runs measured with the peak RSS):
    /// each is a fresh page from the kernel, about 2.5 µs on the benchmark machine
    /// (`page-probe`), so they count beside the instructions.
    minor_faults: Option<u64>,
    /// Per-call process overhead used for this row, ms.
    tool_overhead_ms: f64,
}

/// Per-call process cost `jujuc-timed` cannot see (exec, loading, exit), from `tool-calib`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Calibration {
    outer_ms: Stat,
    inner_ms: Stat,
    overhead_ms: f64,
}

struct Bench {
    world: World,
    opts: Opts,
    calib: Calibration,
    rows: Vec<Row>,
    notes: Vec<String>,
    /// The last calibration's (outer − inner) differences, ms.
    last_diffs: Vec<f64>,
    /// Per-row overheads used, ms.
    overheads: Vec<f64>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Bench {
    /// Runs `hook` on `unit` (the charm's own handler, or `argv` as the handler) and returns the
    /// first record, which is the measured hook; the tool log is attributed to it in order.
    fn run_one(
        &self,
        sim: &mut Simulator,
        unit: &str,
        hook: Hook,
        argv: Option<&[&str]>,
    ) -> Result<Sample> {
        sim.settle()?;
        self.world.clear_tool_log();
        let before = sim.records().len();
        let rec = match argv {
            Some(a) => sim.run_hook_command(unit, hook, a)?,
            None => {
                sim.queue_hook(unit, hook);
                sim.settle()?;
                sim.records()
                    .get(before)
                    .cloned()
                    .ok_or_else(|| BenchError::Setup(format!("no hook ran on {unit}")))?
            }
        };
        self.sample_of(&rec)
    }

    fn sample_of(&self, rec: &juju_sim::HookRecord) -> Result<Sample> {
        if !rec.succeeded() || rec.code.is_none() {
            return Err(BenchError::HookFailed {
                unit: rec.unit.clone(),
                hook: rec.hook.clone(),
                code: rec.code,
                stderr: rec.stderr.chars().take(2000).collect(),
            });
        }
        let log = self.world.tool_log();
        let calls = rec.calls.len();
        let inner: u64 = log.iter().take(calls).map(|(_, ns)| ns).sum();
        Ok(Sample {
            wall_ms: ms(rec.duration),
            calls,
            tools_inner_ms: inner as f64 / 1e6,
        })
    }

    /// Runs `tool-calib` inside a hook on standby/1 and sets the per-call process overhead to
    /// the median over this calibration and the previous one, so it brackets the samples taken
    /// in between (the machine's load changes over a long run).
    fn recalibrate(&mut self, sim: &mut Simulator) -> Result<()> {
        let (_, _, diffs) = calibrate(self, sim, 150)?;
        let mut both = self.last_diffs.clone();
        both.extend_from_slice(&diffs);
        self.calib.overhead_ms = Stat::of(&both).median;
        self.overheads.push(self.calib.overhead_ms);
        self.last_diffs = diffs;
        Ok(())
    }

    fn row(&self, hook: &str, units: Option<u32>, charm: &str, s: &[Sample]) -> Row {
        let wall: Vec<f64> = s.iter().map(|x| x.wall_ms).collect();
        let tools: Vec<f64> = s
            .iter()
            .map(|x| x.tools_inner_ms + x.calls as f64 * self.calib.overhead_ms)
            .collect();
        let outside: Vec<f64> = wall.iter().zip(&tools).map(|(w, t)| w - t).collect();
        Row {
            hook: hook.into(),
            units,
            charm: charm.into(),
            wall_ms: Stat::of(&wall),
            calls_min: s.iter().map(|x| x.calls).min().unwrap_or(0),
            calls_max: s.iter().map(|x| x.calls).max().unwrap_or(0),
            tools_ms: Stat::of(&tools),
            outside_ms: Stat::of(&outside),
            peak_rss_kib: None,
            minor_faults: None,
            tool_overhead_ms: self.calib.overhead_ms,
        }
    }

    fn push(&mut self, row: Row) {
        eprintln!(
            "  {:<44} {:>6} {:<5} wall {} ms, calls {}-{}, tools {} ms, outside {} ms{}",
            row.hook,
            row.units.map(|u| u.to_string()).unwrap_or_default(),
            row.charm,
            row.wall_ms.show(2),
            row.calls_min,
            row.calls_max,
            row.tools_ms.show(2),
            row.outside_ms.show(2),
            row.peak_rss_kib
                .map(|k| format!(", peak RSS {:.1} MiB", k as f64 / 1024.0))
                .unwrap_or_default()
                + &row
                    .minor_faults
                    .map(|f| format!(", {f} minor faults"))
                    .unwrap_or_default()
        );
        self.rows.push(row);
    }

    fn repeat(
        &self,
        sim: &mut Simulator,
        n: usize,
        unit: &str,
        hook: &Hook,
        argv: Option<&[&str]>,
    ) -> Result<Vec<Sample>> {
        // One warm-up run (page cache, Python byte-code), not counted.
        self.run_one(sim, unit, hook.clone(), argv)?;
        (0..n)
            .map(|_| self.run_one(sim, unit, hook.clone(), argv))
            .collect()
    }
}

fn load_avg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Date, machine, commit and how the build relates to it.
fn machine_notes() -> Vec<String> {
    let sh = |cmd: &str| {
        std::process::Command::new("sh")
            .args(["-c", cmd])
            .current_dir(env::repo())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_default();
    vec![
        format!("date: {}", sh("date -u '+%Y-%m-%d %H:%M UTC'")),
        format!(
            "machine: {} CPUs ({cpu}), {}, Debian {}, kernel {}",
            sh("nproc"),
            sh("uname -m"),
            sh("cat /etc/debian_version"),
            sh("uname -r")
        ),
        format!(
            "commit: {} ({} files differ from it in the working tree the binaries were built from)",
            sh("git rev-parse --short HEAD"),
            sh("git status --porcelain --untracked-files=no | wc -l")
        ),
        format!("python3: {}", sh("/usr/bin/python3 --version")),
    ]
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hook-bench: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

fn run() -> Result<()> {
    let opts = Opts::parse()?;
    let built = Built::locate()?;
    let venv = env::ops_venv()?;
    let mut world = World::new(&built, &venv)?;
    world.ctl_hostname = opts.ctl_hostname.clone();
    let started = Instant::now();
    let mut b = Bench {
        world,
        opts: opts.clone(),
        calib: Calibration::default(),
        rows: Vec::new(),
        notes: Vec::new(),
        last_diffs: Vec::new(),
        overheads: Vec::new(),
    };
    for n in machine_notes() {
        eprintln!("hook-bench: {n}");
        b.notes.push(n);
    }
    eprintln!("hook-bench: load average at start {}", load_avg());
    b.notes
        .push(format!("load average at start: {}", load_avg()));
    if let Some(h) = &opts.ctl_hostname {
        b.notes.push(format!("controller units' host name: {h}"));
    }
    b.notes.push(if opts.distinct {
        "seeded slurmd units: every node distinct (RealMemory 20000+k: one slurm.conf line per node)".into()
    } else {
        "seeded slurmd units: all alike but their names (one folded slurm.conf line)".into()
    });
    if let Some(prev) = &opts.enlist_only {
        return enlist_only(&mut b, prev, started);
    }
    let ops = b.world.ops_slurmctld.join("dispatch").display().to_string();
    let ops_node = b.world.ops_slurmd.join("dispatch").display().to_string();

    // --- the cluster: controller, a standby controller app (a non-leader), one 8-GPU node.
    let mut sim = b.world.simulator()?;
    let ctl_charm = b.world.slurmctld_charm.clone();
    let node_charm = b.world.slurmd_charm.clone();
    sim.deploy(b.world.spec("slurmctld", &ctl_charm, 1))?;
    sim.deploy(b.world.spec("standby", &ctl_charm, 2))?;
    sim.deploy(b.world.spec("slurmd", &node_charm, 1))?;
    let rel = sim.integrate("slurmd", "slurmctld")?;
    sim.settle()?;
    for u in ["slurmctld/0", "standby/1", "slurmd/0"] {
        let st = sim
            .unit_status(u)
            .unwrap_or_else(|| juju_sim::Status::new("?", "", 0));
        eprintln!("  {u}: {} {:?}", st.status, st.message);
        if st.status == "error" {
            return Err(BenchError::Setup(format!("{u} is in error after deploy")));
        }
    }

    // --- calibration: the process cost of one hook-tool call that jujuc-timed cannot see.
    let (outer, inner, diff) = calibrate(&b, &mut sim, 300)?;
    b.calib = Calibration {
        outer_ms: Stat::of(&outer),
        inner_ms: Stat::of(&inner),
        overhead_ms: Stat::of(&diff).median,
    };
    b.last_diffs = diff;
    eprintln!(
        "  one hook-tool call (is-leader) seen by its parent: {} ms; inside jujuc-timed: {} ms; \
         process overhead added per call: {:.3} ms",
        b.calib.outer_ms.show(3),
        b.calib.inner_ms.show(3),
        b.calib.overhead_ms
    );

    // --- small hooks.
    let s = opts.samples;
    let floor = b.repeat(
        &mut sim,
        s,
        "standby/1",
        &Hook::UpdateStatus,
        Some(&["/bin/true"]),
    )?;
    b.recalibrate(&mut sim)?;
    let row = b.row(
        "process floor (`/bin/true` as the handler)",
        None,
        "—",
        &floor,
    );
    b.push(row);
    let x = b.repeat(&mut sim, s, "standby/1", &Hook::UpdateStatus, None)?;
    b.recalibrate(&mut sim)?;
    let status_walls: Vec<f64> = x.iter().map(|s| s.wall_ms).collect();
    let row = b.row(
        "status only: non-leader slurmctld update-status",
        None,
        "rust",
        &x,
    );
    b.push(row);
    {
        // The same hook with juju-sim's own jujuc: shows jujuc-timed does not distort wall times.
        let mut plain = juju_sim::Simulator::with_options(juju_sim::SimOptions {
            jujuc: Some(b.world.built.jujuc_plain.clone()),
            record_env: false,
            keep_logs: false,
            ..juju_sim::SimOptions::default()
        })?;
        plain.deploy(b.world.spec("plain", &ctl_charm, 2))?;
        let x = b.repeat(&mut plain, s, "plain/1", &Hook::UpdateStatus, None)?;
        b.recalibrate(&mut sim)?;
        let mut row = b.row("status only, with juju-sim's own `jujuc`", None, "rust", &x);
        row.tools_ms = Stat::default();
        row.outside_ms = Stat::default();
        b.push(row);
    }
    let x = b.repeat(
        &mut sim,
        opts.ops_samples,
        "standby/1",
        &Hook::UpdateStatus,
        Some(&[&ops]),
    )?;
    b.recalibrate(&mut sim)?;
    let row = b.row(
        "status only: non-leader slurmctld update-status",
        None,
        "ops",
        &x,
    );
    b.push(row);
    let x = b.repeat(&mut sim, s, "slurmd/0", &Hook::UpdateStatus, None)?;
    b.recalibrate(&mut sim)?;
    let row = b.row("slurmd update-status (8 GPUs)", None, "rust", &x);
    b.push(row);
    let x = b.repeat(
        &mut sim,
        opts.ops_samples,
        "slurmd/0",
        &Hook::UpdateStatus,
        Some(&[&ops_node]),
    )?;
    b.recalibrate(&mut sim)?;
    let row = b.row("slurmd update-status (8 GPUs)", None, "ops", &x);
    b.push(row);
    let x = action_samples(&b, &mut sim, "slurmd/0", s)?;
    b.recalibrate(&mut sim)?;
    let row = b.row("detect-gpus action (8× H100 fake NVML)", None, "rust", &x);
    b.push(row);
    // The ops twin of the GPU node: its own app, same fake NVML and fixture.
    let ops_node_charm = b.world.ops_slurmd.clone();
    sim.deploy(b.world.spec("opsnode", &ops_node_charm, 1))?;
    let x = action_samples(&b, &mut sim, "opsnode/0", opts.ops_samples)?;
    b.recalibrate(&mut sim)?;
    let row = b.row("detect-gpus action (8× H100 fake NVML)", None, "ops", &x);
    b.push(row);
    health_check_rows(&mut b, &status_walls)?;
    if opts.only_small {
        return small_report(&b, started);
    }

    // --- the controller at scale.
    let template = node_template(&sim, rel)?;
    std::fs::create_dir_all(&opts.out).map_err(|e| BenchError::Setup(e.to_string()))?;
    let tfile = opts.out.join("node-template.json");
    let pfile = opts.out.join("partition.json");
    std::fs::write(&tfile, template.to_string()).map_err(|e| BenchError::Setup(e.to_string()))?;
    let partition = sim
        .app_bag(rel, "slurmd")
        .get("partition")
        .cloned()
        .unwrap_or_default();
    std::fs::write(&pfile, &partition).map_err(|e| BenchError::Setup(e.to_string()))?;
    let mut have = 1u32;
    let mut flips: HashMap<u32, bool> = HashMap::new();
    let mut ctl_medians: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    // The changed hook's wall times by size, for the ratio of each size to the smallest.
    let mut changed_walls: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for &n in &opts.sizes {
        if n > have {
            let t = Instant::now();
            seed_units(&mut sim, rel, &template, have, n, opts.distinct)?;
            have = n;
            eprintln!(
                "  seeded {n} slurmd units in {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
        // The controller reads everything once (as after a leader change), then runs normally.
        let x = vec![b.run_one(&mut sim, "slurmctld/0", Hook::LeaderElected, None)?];
        b.recalibrate(&mut sim)?;
        let row = b.row(
            "slurmctld leader-elected (full cache rebuild)",
            Some(n),
            "rust",
            &x,
        );
        b.push(row);
        let samples = match (n >= 10_000, opts.samples_10k) {
            (true, Some(k)) => k.max(1),
            (true, None) => s.clamp(5, 11),
            (false, _) => s,
        };
        let mut changed = Vec::new();
        // warm-up
        toggle(&mut sim, rel, 1 % n, &mut flips)?;
        b.run_one(&mut sim, "slurmctld/0", changed_hook(rel, 1 % n), None)?;
        for i in 0..samples {
            let k = 1 + (i as u32 % (n - 1).max(1));
            toggle(&mut sim, rel, k, &mut flips)?;
            changed.push(b.run_one(&mut sim, "slurmctld/0", changed_hook(rel, k), None)?);
        }
        b.recalibrate(&mut sim)?;
        let row = b.row(
            "slurmctld slurmd-relation-changed (node changed)",
            Some(n),
            "rust",
            &changed,
        );
        let rust_med = row.wall_ms.median;
        changed_walls.insert(n, changed.iter().map(|x| x.wall_ms).collect());
        b.push(row);
        let same: Vec<Sample> = (0..samples.min(11))
            .map(|i| {
                b.run_one(
                    &mut sim,
                    "slurmctld/0",
                    changed_hook(rel, 1 + (i as u32 % (n - 1).max(1))),
                    None,
                )
            })
            .collect::<Result<_>>()?;
        b.recalibrate(&mut sim)?;
        let row = b.row(
            "slurmctld slurmd-relation-changed (no change)",
            Some(n),
            "rust",
            &same,
        );
        b.push(row);
        // Peak RSS, faults and CPU time of the hook process, under hook-rusage.
        let usage = hook_usage(&b, &mut sim, rel, n, opts.rss_runs, &mut flips)?;
        if let Some(r) = b.rows.iter_mut().rev().nth(1) {
            r.peak_rss_kib = usage.peak_rss_kib;
            r.minor_faults = usage.minor_faults;
        }
        if let (Some(user), Some(sys)) = (usage.user_ms, usage.sys_ms) {
            b.notes.push(format!(
                "controller `slurmd-relation-changed` (node changed) at {n} units, CPU time \
                 under `hook-rusage` (the hook process and the hook tools and stand-ins it \
                 waited for; median of {} runs): user {user:.2} ms, system {sys:.2} ms",
                usage.runs
            ));
        }
        // The ops baseline in the very same hook context.
        let ops_n = if n >= 10_000 {
            opts.ops_samples_10k
        } else {
            opts.ops_samples
        };
        let mut ops_s = Vec::new();
        b.run_one(
            &mut sim,
            "slurmctld/0",
            changed_hook(rel, 1 % n),
            Some(&[&ops]),
        )?;
        for i in 0..ops_n {
            let k = 1 + (i as u32 % (n - 1).max(1));
            ops_s.push(b.run_one(&mut sim, "slurmctld/0", changed_hook(rel, k), Some(&[&ops]))?);
        }
        b.recalibrate(&mut sim)?;
        let row = b.row(
            "slurmctld slurmd-relation-changed (node changed)",
            Some(n),
            "ops",
            &ops_s,
        );
        ctl_medians.insert(n, (rust_med, row.wall_ms.median));
        b.push(row);
        eprintln!(
            "  [{:.0} s elapsed, load {}]",
            started.elapsed().as_secs_f64(),
            load_avg()
        );
    }
    drop(sim);
    scaling_notes(&mut b, &changed_walls);

    // --- render/parse in one process at the largest size.
    let render = render_scale(
        &b,
        &tfile,
        &pfile,
        opts.sizes.iter().copied().max().unwrap_or(10),
    )?;

    // --- sequential enlistment through the simulator.
    let enlist = enlist(&b)?;
    let extrapolation = extrapolate(&enlist, &ctl_medians);

    b.notes.push(format!("load average at end: {}", load_avg()));
    b.notes.push(format!(
        "total run time: {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    let md = report(&b, &render, &enlist, extrapolation.as_deref());
    std::fs::write(opts.out.join("results.md"), &md)
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    let json = serde_json::json!({
        "calibration": b.calib, "rows": b.rows, "render": render,
        "enlist": enlist, "notes": b.notes,
    });
    std::fs::write(
        opts.out.join("results.json"),
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    )
    .map_err(|e| BenchError::Setup(e.to_string()))?;
    println!("{md}");
    eprintln!(
        "hook-bench: wrote {}/results.md and results.json",
        opts.out.display()
    );
    Ok(())
}

/// Notes the controller's changed hook at each size against the smallest (issue 13: cost at
/// 10,000 units ≤ 2× cost at 10), with a bootstrap interval ([`ratio::RatioInterval`]).
fn scaling_notes(b: &mut Bench, walls: &BTreeMap<u32, Vec<f64>>) {
    let Some((&smallest, base)) = walls.iter().next() else {
        return;
    };
    for (&n, wall) in walls.iter().skip(1) {
        if let Some(r) = ratio::RatioInterval::of(wall, base, 2000, u64::from(n)) {
            b.notes.push(format!(
                "controller `slurmd-relation-changed` (node changed), median at {n} units over \
                 the median at {smallest}: **{:.2}** (90 % bootstrap interval {:.2}–{:.2}, 2,000 \
                 resamples of each row's {} and {} samples)",
                r.ratio,
                r.p5,
                r.p95,
                wall.len(),
                base.len()
            ));
        }
    }
}

/// The health-check program on the 8-GPU node ([`health_check`]): its wall time against the
/// status-only hook's (`status_walls`), its peak RSS, and the run with NVML hanging.
fn health_check_rows(b: &mut Bench, status_walls: &[f64]) -> Result<()> {
    let unit_root = b.world.dir.path().join("units/slurmd-0");
    let fixture = b.world.gpu_fixture.clone();
    let program = health_check::Program::prepare(&b.world, &unit_root, &fixture)?;
    let n = b.opts.health_samples.unwrap_or(b.opts.samples);
    let x = program.samples(false, n)?;
    let mut row = b.row("health-check program (8× H100 fake NVML)", None, "rust", &x);
    let (rss, faults) = program.usage(b.opts.rss_runs as usize)?;
    row.peak_rss_kib = Some(rss);
    row.minor_faults = Some(faults);
    let walls: Vec<f64> = x.iter().map(|s| s.wall_ms).collect();
    b.push(row);
    if let Some(r) = ratio::RatioInterval::of(&walls, status_walls, 2000, 40) {
        b.notes.push(format!(
            "health-check program (one run on the 8-GPU node, {} kernel log records) over the \
             status-only hook: **{:.2}** (90 % bootstrap interval {:.2}–{:.2}, {} and {} samples)",
            health_check::KMSG_RECORDS,
            r.ratio,
            r.p5,
            r.p95,
            walls.len(),
            status_walls.len()
        ));
    }
    if b.opts.hang_samples > 0 {
        let x = program.samples(true, b.opts.hang_samples)?;
        let row = b.row(
            "health-check program, NVML hangs (deadline 15 s)",
            None,
            "rust",
            &x,
        );
        b.push(row);
    }
    Ok(())
}

/// `--only-small`: writes and prints the whole-hook table of the small hooks alone.
fn small_report(b: &Bench, started: Instant) -> Result<()> {
    let md = report(b, &serde_json::Value::Null, &Enlist::default(), None);
    // The table and the notes only: the render and enlistment sections were not run.
    let table: String = md
        .split("### Render and parse")
        .next()
        .unwrap_or_default()
        .to_owned();
    let mut md = table;
    for n in &b.notes {
        let _ = writeln!(md, "- {n}");
    }
    let _ = writeln!(
        md,
        "- only the small hooks (`--only-small`); load average at end: {}; total run time: {:.0} s",
        load_avg(),
        started.elapsed().as_secs_f64()
    );
    std::fs::create_dir_all(&b.opts.out).map_err(|e| BenchError::Setup(e.to_string()))?;
    std::fs::write(b.opts.out.join("results.md"), &md)
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    println!("{md}");
    Ok(())
}

/// `tool-calib` with `n` calls inside a hook on standby/1: (outer, inner, outer − inner) in ms.
fn calibrate(b: &Bench, sim: &mut Simulator, n: usize) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    sim.settle()?;
    let calib = b.world.built.calib.display().to_string();
    b.world.clear_tool_log();
    let rec = sim.run_hook_command("standby/1", Hook::UpdateStatus, &[&calib, &n.to_string()])?;
    let v: serde_json::Value = serde_json::from_str(rec.stdout.trim())
        .map_err(|e| BenchError::Setup(format!("tool-calib output: {e}: {}", rec.stderr)))?;
    let nums = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_f64())
                    .map(|x| x / 1e6)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (outer, inner) = (nums("outer_ns"), nums("inner_ns"));
    let diff: Vec<f64> = outer.iter().zip(&inner).map(|(o, i)| o - i).collect();
    Ok((outer, inner, diff))
}

/// Only the enlistment, extrapolated with the controller medians of an earlier run's
/// `results.json`; writes `results-enlist.md`.
fn enlist_only(b: &mut Bench, prev: &Path, started: Instant) -> Result<()> {
    let text = std::fs::read_to_string(prev)
        .map_err(|e| BenchError::Setup(format!("{}: {e}", prev.display())))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| BenchError::Setup(e.to_string()))?;
    let mut ctl = BTreeMap::new();
    for r in v["rows"].as_array().into_iter().flatten() {
        if r["charm"] == "rust" && r["hook"] == "slurmctld slurmd-relation-changed (node changed)" {
            if let (Some(n), Some(m)) = (r["units"].as_u64(), r["wall_ms"]["median"].as_f64()) {
                ctl.insert(n as u32, (m, 0.0));
            }
        }
    }
    let e = enlist(b)?;
    let extra = extrapolate(&e, &ctl);
    b.notes.push(format!("load average at end: {}", load_avg()));
    b.notes.push(format!(
        "total run time: {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    let full = report(b, &serde_json::json!({}), &e, extra.as_deref());
    let md = full
        .split_once("### Sequential enlistment")
        .map(|(_, rest)| format!("### Sequential enlistment{rest}"))
        .unwrap_or(full);
    std::fs::create_dir_all(&b.opts.out).map_err(|e| BenchError::Setup(e.to_string()))?;
    std::fs::write(b.opts.out.join("results-enlist.md"), &md)
        .map_err(|e| BenchError::Setup(e.to_string()))?;
    println!("{md}");
    Ok(())
}

fn changed_hook(rel: u32, k: u32) -> Hook {
    Hook::RelationChanged(rel, Some(format!("slurmd/{k}")))
}

fn action_samples(b: &Bench, sim: &mut Simulator, unit: &str, n: usize) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    for i in 0..=n {
        sim.settle()?;
        b.world.clear_tool_log();
        let before = sim.records().len();
        let res = sim.run_action(unit, "detect-gpus", serde_json::json!({}))?;
        if res.status != "completed" {
            return Err(BenchError::HookFailed {
                unit: unit.into(),
                hook: "detect-gpus".into(),
                code: Some(res.return_code),
                stderr: format!("{} {}", res.message, res.stderr),
            });
        }
        let rec = sim
            .records()
            .get(before)
            .cloned()
            .ok_or_else(|| BenchError::Setup("no action record".into()))?;
        if i > 0 {
            out.push(b.sample_of(&rec)?);
        }
    }
    Ok(out)
}

/// The `node` value slurmd/0 published, as JSON.
fn node_template(sim: &Simulator, rel: u32) -> Result<serde_json::Value> {
    let raw = sim
        .unit_bag(rel, "slurmd/0")
        .get("node")
        .cloned()
        .ok_or_else(|| {
            BenchError::Setup("slurmd/0 published no `node` (is the relation set up?)".into())
        })?;
    serde_json::from_str(&raw).map_err(|e| BenchError::Setup(format!("node value: {e}")))
}

fn node_value(template: &serde_json::Value, k: u32, memory: Option<&str>) -> String {
    let mut v = template.clone();
    v["node_parameters"]["NodeName"] = serde_json::json!(format!("slurmd-{k}"));
    v["new_node"] = serde_json::json!(false);
    if let Some(m) = memory {
        v["node_parameters"]["RealMemory"] = serde_json::json!(m);
    }
    v.to_string()
}

/// Adds units `slurmd/<from>..<to>` to the model as if each had joined and published its
/// `node` (a copy of slurmd/0's with its own NodeName): unit, scope on both sides, unit bag
/// with the keys Juju writes itself. No hooks run.
fn seed_units(
    sim: &mut Simulator,
    rel: u32,
    template: &serde_json::Value,
    from: u32,
    to: u32,
    distinct: bool,
) -> Result<()> {
    let values: Vec<(u32, String)> = (from..to)
        .map(|k| {
            // below the toggled values (31000, 31848), one per unit
            let memory = distinct.then(|| (20_000 + k).to_string());
            (k, node_value(template, k, memory.as_deref()))
        })
        .collect();
    sim.with_model_mut(|m| {
        let unit0 = m.units.get("slurmd/0").cloned().ok_or("no slurmd/0")?;
        let r = m.relations.get_mut(&rel).ok_or("no relation")?;
        let part0 = r
            .scope
            .get("slurmd/0")
            .cloned()
            .ok_or("slurmd/0 not in scope")?;
        let bag0 = r.unit_bags.get("slurmd/0").cloned().unwrap_or_default();
        for (k, value) in &values {
            let name = format!("slurmd/{k}");
            let addr = format!("10.{}.{}.{}", 100 + k / 65_536, (k / 256) % 256, k % 256);
            let mut bag = bag0.clone();
            for key in ["private-address", "ingress-address"] {
                bag.insert(key.into(), addr.clone());
            }
            bag.insert("egress-subnets".into(), format!("{addr}/32"));
            bag.insert("node".into(), value.clone());
            r.unit_bags.insert(name.clone(), bag);
            r.scope.insert(name.clone(), part0.clone());
            if let Some(p) = r.scope.get_mut("slurmctld/0") {
                p.members.insert(name.clone());
            }
        }
        let app = m.apps.get_mut("slurmd").ok_or("no slurmd app")?;
        for (k, _) in &values {
            let name = format!("slurmd/{k}");
            app.units.insert(name.clone());
            app.next_unit = app.next_unit.max(k + 1);
            let mut u = unit0.clone();
            u.name = name.clone();
            u.machine = format!("{}", 100_000 + k);
            u.address = format!("10.{}.{}.{}", 100 + k / 65_536, (k / 256) % 256, k % 256);
            u.status_history.clear();
            u.extras = juju_sim::UnitExtras::default();
            m.units.insert(name, u);
        }
        Ok::<(), &str>(())
    })
    .map_err(|e| BenchError::Setup(format!("seeding: {e}")))
}

/// Changes slurmd/k's RealMemory (alternating), as that unit's relation-set would.
fn toggle(sim: &mut Simulator, rel: u32, k: u32, flips: &mut HashMap<u32, bool>) -> Result<()> {
    let f = flips.entry(k).or_insert(false);
    *f = !*f;
    let flipped = *f;
    sim.with_model_mut(|m| {
        let bag = m
            .relations
            .get_mut(&rel)
            .and_then(|r| r.unit_bags.get_mut(&format!("slurmd/{k}")))
            .ok_or("no bag")?;
        let raw = bag.get("node").ok_or("no node")?;
        let mut v: serde_json::Value = serde_json::from_str(raw).map_err(|_| "bad node")?;
        let mem = if flipped { "31000" } else { "31848" };
        v["node_parameters"]["RealMemory"] = serde_json::json!(mem);
        bag.insert("node".into(), v.to_string());
        Ok::<(), &str>(())
    })
    .map_err(|e| BenchError::Setup(format!("toggle slurmd/{k}: {e}")))
}

/// What `hook-rusage` saw of the controller's changed hook over a row's runs.
#[derive(Debug)]
struct HookUsage {
    /// Peak RSS, KiB: the maximum over the runs.
    peak_rss_kib: Option<u64>,
    /// Minor page faults: the median.
    minor_faults: Option<u64>,
    /// User and system CPU time, ms (the process and the children it waited for): medians.
    user_ms: Option<f64>,
    sys_ms: Option<f64>,
    /// Runs measured.
    runs: usize,
}

/// Peak RSS, minor page faults and CPU time of the controller's `slurmd-relation-changed`
/// process, over `runs` runs under `hook-rusage`.
fn hook_usage(
    b: &Bench,
    sim: &mut Simulator,
    rel: u32,
    n: u32,
    runs: u32,
    flips: &mut HashMap<u32, bool>,
) -> Result<HookUsage> {
    let out = b.world.dir.path().join("rusage.txt");
    let saved = sim
        .with_model(|m| m.units.get("slurmctld/0").map(|u| u.extras.clone()))
        .unwrap_or_default();
    let mut with = saved.clone();
    with.command_prefix = vec![
        b.world.built.rusage.display().to_string(),
        out.display().to_string(),
    ];
    let _ = std::fs::remove_file(&out);
    sim.set_unit_extras("slurmctld/0", with)?;
    let mut res = Ok(());
    for i in 0..runs.max(1) {
        let k = 1 + (i % (n - 1).max(1));
        if let Err(e) = toggle(sim, rel, k, flips).and_then(|_| {
            b.run_one(sim, "slurmctld/0", changed_hook(rel, k), None)
                .map(|_| ())
        }) {
            res = Err(e);
            break;
        }
    }
    sim.set_unit_extras("slurmctld/0", saved)?;
    res?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let runs: Vec<[u64; 4]> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<u64> = l.split(' ').filter_map(|v| v.parse().ok()).collect();
            f.try_into().ok()
        })
        .collect();
    let median = |i: usize| {
        let mut v: Vec<u64> = runs.iter().map(|r| r[i]).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    };
    let ms = |us: Option<u64>| us.map(|u| u as f64 / 1000.0);
    Ok(HookUsage {
        peak_rss_kib: runs.iter().map(|r| r[0]).max(),
        minor_faults: median(1),
        user_ms: ms(median(2)),
        sys_ms: ms(median(3)),
        runs: runs.len(),
    })
}

/// `render-scale` at `n` nodes (its times and its own peak RSS, `VmHWM`).
fn render_scale(b: &Bench, tfile: &Path, pfile: &Path, n: u32) -> Result<serde_json::Value> {
    let out = std::process::Command::new(&b.world.built.render)
        .arg(tfile)
        .arg(pfile)
        .arg(n.to_string())
        .arg("7")
        .output()
        .map_err(|e| BenchError::Setup(format!("render-scale: {e}")))?;
    if !out.status.success() {
        return Err(BenchError::Setup(format!(
            "render-scale failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| BenchError::Setup(format!("render-scale output: {e}")))?;
    eprintln!("  render-scale: {v}");
    Ok(v)
}

/// Sequential enlistment results.
#[derive(Debug, Clone, Default, Serialize)]
struct Enlist {
    /// (units enlisted, cumulative seconds).
    checkpoints: Vec<(u32, f64)>,
    /// Units enlisted in all.
    units: u32,
    /// Seconds in all.
    total_s: f64,
    /// Per added unit over the last quarter of the run: seconds in controller hooks,
    /// in slurmd hooks, simulator overhead, and controller hooks per unit.
    tail_ctl_s: f64,
    tail_node_s: f64,
    tail_other_s: f64,
    tail_ctl_hooks: f64,
    tail_node_hooks: f64,
    stopped_by_budget: bool,
    /// Mean seconds per added unit (whole `add-unit`, settled) over the first and the last
    /// quarter of the run, and last / first (issue 13: linear means within 1.3).
    head_unit_s: f64,
    tail_unit_s: f64,
    tail_over_head: f64,
}

fn enlist(b: &Bench) -> Result<Enlist> {
    let mut sim = b.world.simulator()?;
    let ctl = b.world.slurmctld_charm.clone();
    let node = b.world.slurmd_charm.clone();
    let t0 = Instant::now();
    sim.deploy(b.world.spec("ectl", &ctl, 1))?;
    sim.deploy(b.world.spec("enode", &node, 1))?;
    sim.integrate("enode:slurmctld", "ectl:slurmd")?;
    let mut e = Enlist::default();
    let mut n = 1u32;
    let marks: Vec<u32> = vec![
        1, 10, 25, 50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000,
    ];
    e.checkpoints.push((1, t0.elapsed().as_secs_f64()));
    let mut per_unit: Vec<(f64, f64, f64, usize, usize)> = Vec::new();
    while n < b.opts.enlist_max {
        if t0.elapsed() > b.opts.enlist_budget {
            e.stopped_by_budget = true;
            break;
        }
        sim.clear_records();
        b.world.clear_tool_log();
        let t = Instant::now();
        sim.add_unit("enode", 1)?;
        let wall = t.elapsed().as_secs_f64();
        n += 1;
        let (mut c, mut d, mut ch, mut dh) = (0.0, 0.0, 0, 0);
        for r in sim.records() {
            if !r.succeeded() {
                return Err(BenchError::HookFailed {
                    unit: r.unit.clone(),
                    hook: r.hook.clone(),
                    code: r.code,
                    stderr: r.stderr.chars().take(2000).collect(),
                });
            }
            if r.unit.starts_with("ectl/") {
                c += r.duration.as_secs_f64();
                ch += 1;
            } else {
                d += r.duration.as_secs_f64();
                dh += 1;
            }
        }
        per_unit.push((wall, c, d, ch, dh));
        if marks.contains(&n) {
            e.checkpoints.push((n, t0.elapsed().as_secs_f64()));
            eprintln!(
                "  enlisted {n} units in {:.1} s (load {})",
                t0.elapsed().as_secs_f64(),
                load_avg()
            );
        }
    }
    e.units = n;
    e.total_s = t0.elapsed().as_secs_f64();
    if e.checkpoints.last().map(|c| c.0) != Some(n) {
        e.checkpoints.push((n, e.total_s));
    }
    let tail = &per_unit[per_unit.len() - per_unit.len().div_ceil(4)..];
    let k = tail.len().max(1) as f64;
    e.tail_ctl_s = tail.iter().map(|x| x.1).sum::<f64>() / k;
    e.tail_node_s = tail.iter().map(|x| x.2).sum::<f64>() / k;
    e.tail_other_s = tail.iter().map(|x| x.0 - x.1 - x.2).sum::<f64>() / k;
    e.tail_ctl_hooks = tail.iter().map(|x| x.3 as f64).sum::<f64>() / k;
    e.tail_node_hooks = tail.iter().map(|x| x.4 as f64).sum::<f64>() / k;
    let head = &per_unit[..per_unit.len().div_ceil(4)];
    e.head_unit_s = head.iter().map(|x| x.0).sum::<f64>() / head.len().max(1) as f64;
    e.tail_unit_s = tail.iter().map(|x| x.0).sum::<f64>() / k;
    if e.head_unit_s > 0.0 {
        e.tail_over_head = e.tail_unit_s / e.head_unit_s;
    }
    Ok(e)
}

/// Linear interpolation of the controller hook's median wall time (ms) at `n` units.
fn interp(points: &BTreeMap<u32, (f64, f64)>, n: u32) -> f64 {
    let mut prev: Option<(u32, f64)> = None;
    for (&x, &(y, _)) in points {
        if n <= x {
            return match prev {
                None => y,
                Some((px, py)) => py + (y - py) * f64::from(n - px) / f64::from(x - px),
            };
        }
        prev = Some((x, y));
    }
    prev.map(|p| p.1).unwrap_or(0.0)
}

/// Extrapolated time to enlist 10,000 units when the run stopped short (clearly marked).
fn extrapolate(e: &Enlist, ctl: &BTreeMap<u32, (f64, f64)>) -> Option<String> {
    let target = 10_000u32;
    if e.units >= target || ctl.is_empty() || e.units < 2 {
        return None;
    }
    let fixed = e.tail_node_s + e.tail_other_s;
    let at_measured = interp(ctl, e.units) / 1e3;
    let per_ctl_extra = if at_measured > 0.0 {
        e.tail_ctl_s / at_measured
    } else {
        e.tail_ctl_hooks
    };
    let mut total = e.total_s;
    for n in e.units + 1..=target {
        total += fixed + per_ctl_extra * interp(ctl, n) / 1e3;
    }
    Some(format!(
        "**extrapolated, not measured:** {:.0} s ({:.1} h) for 10,000 units = measured {:.0} s for the first {} + for each further unit n: \
         {:.3} s of slurmd hooks and simulator overhead (measured mean per unit over the last quarter of the run) + \
         {:.2} × the measured controller `slurmd-relation-changed` median at n units (linear between the measured sizes; \
         {:.2} = controller hook time per enlisted unit over the last quarter / that median at {} units, {:.2} controller hooks per unit)",
        total,
        total / 3600.0,
        e.total_s,
        e.units,
        fixed,
        per_ctl_extra,
        per_ctl_extra,
        e.units,
        e.tail_ctl_hooks
    ))
}

fn report(b: &Bench, render: &serde_json::Value, e: &Enlist, extra: Option<&str>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### Whole hooks\n\nms: median (p10–p90), or median (min–max) when n < 5; n = measured runs after one warm-up run.\n"
    );
    let _ = writeln!(
        s,
        "| hook | related units | charm | n | wall ms | hook-tool calls | in hook tools ms | outside hook tools ms | peak RSS MiB (minor page faults) | ops / Rust (median) |"
    );
    let _ = writeln!(s, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &b.rows {
        let ratio = if r.charm == "ops" && r.wall_ms.n == 0 {
            // not measured (`--ops-samples-10k 0`): no ratio to show
            "–".to_owned()
        } else if r.charm == "ops" {
            b.rows
                .iter()
                .find(|x| x.charm == "rust" && x.hook == r.hook && x.units == r.units)
                .map(|x| format!("**{:.1}×**", r.wall_ms.median / x.wall_ms.median))
                .unwrap_or_default()
        } else {
            String::new()
        };
        let calls = if r.calls_min == r.calls_max {
            r.calls_min.to_string()
        } else {
            format!("{}–{}", r.calls_min, r.calls_max)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.hook,
            r.units.map(|u| u.to_string()).unwrap_or_else(|| "–".into()),
            r.charm,
            r.wall_ms.n,
            r.wall_ms.show(2),
            calls,
            r.tools_ms.show(2),
            r.outside_ms.show(2),
            r.peak_rss_kib
                .map(|k| format!("{:.1}", k as f64 / 1024.0))
                .unwrap_or_else(|| "–".into())
                + &r.minor_faults
                    .map(|f| format!(" ({f} faults)"))
                    .unwrap_or_default(),
            ratio
        );
    }
    let _ = writeln!(
        s,
        "\nHook-tool cost: one `is-leader` call seen by its parent {} ms (median (p10–p90), n={}), of which {} ms inside the tool process; \
         the per-call process overhead added to the in-process times is re-measured around every row (150 calls before and after it): median {:.3} ms, range {:.3}–{:.3} ms over {} rows.\n",
        b.calib.outer_ms.show(3),
        b.calib.outer_ms.n,
        b.calib.inner_ms.show(3),
        Stat::of(&b.overheads).median,
        Stat::of(&b.overheads).min,
        Stat::of(&b.overheads).max,
        b.overheads.len()
    );
    let _ = writeln!(
        s,
        "### Render and parse in one process ({} nodes × 8 GPUs)\n",
        render["nodes"]
    );
    let _ = writeln!(s, "| step | median ms | min–max ms | n |");
    let _ = writeln!(s, "|---|---:|---:|---:|");
    for (k, label) in [
        (
            "plan",
            "parse every `node` value + build + render slurm.conf and gres.conf (`slurmctld::desired::plan`)",
        ),
        (
            "parse",
            "parse slurm.conf + gres.conf (`parse_slurm_conf`, `parse_gres_conf`)",
        ),
    ] {
        let _ = writeln!(
            s,
            "| {label} | {:.1} | {:.1}–{:.1} | {} |",
            render[k]["median_ms"].as_f64().unwrap_or(0.0),
            render[k]["min_ms"].as_f64().unwrap_or(0.0),
            render[k]["max_ms"].as_f64().unwrap_or(0.0),
            render[k]["n"]
        );
    }
    let _ = writeln!(
        s,
        "\nslurm.conf {} bytes, gres.conf {} bytes, controller store {} bytes; peak RSS of the process (VmHWM, input of {} node values included): **{:.1} MiB**.\n",
        render["slurm_conf_bytes"],
        render["gres_conf_bytes"],
        render["cache_bytes"],
        render["nodes"],
        render["peak_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0
    );
    let _ = writeln!(
        s,
        "### Sequential enlistment through the simulator (`add-unit` one at a time, 8-GPU nodes)\n"
    );
    let _ = writeln!(s, "| units enlisted | cumulative s |");
    let _ = writeln!(s, "|---:|---:|");
    for (n, t) in &e.checkpoints {
        let _ = writeln!(s, "| {n} | {t:.1} |");
    }
    let _ = writeln!(
        s,
        "\nPer added unit over the last quarter of the run: {:.1} ms in controller hooks ({:.2} hooks), {:.1} ms in slurmd hooks ({:.2} hooks), {:.1} ms simulator overhead.{}\n",
        e.tail_ctl_s * 1e3,
        e.tail_ctl_hooks,
        e.tail_node_s * 1e3,
        e.tail_node_hooks,
        e.tail_other_s * 1e3,
        if e.stopped_by_budget {
            " The run stopped at its time budget."
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "Per added unit (whole `add-unit`, settled): first quarter {:.1} ms, last quarter {:.1} ms: **{:.2}×**.\n",
        e.head_unit_s * 1e3,
        e.tail_unit_s * 1e3,
        e.tail_over_head
    );
    if let Some(x) = extra {
        let _ = writeln!(s, "{x}\n");
    }
    for n in &b.notes {
        let _ = writeln!(s, "- {n}");
    }
    s
}
