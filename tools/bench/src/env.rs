//! The benchmark's world: built executables, charm directories (the Rust charms and the Python
//! ops baseline), fast fake commands, the fake NVML with the 8-GPU fixture, per-unit host roots,
//! and the hook-tool timing log.

use crate::BenchError;
use juju_sim::{DeploySpec, SimOptions, Simulator, UnitExtras};
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Executables and libraries from `target/release`.
#[derive(Debug, Clone)]
pub struct Built {
    /// `slurm-charm`.
    pub charm: PathBuf,
    /// `jujuc-timed`.
    pub jujuc: PathBuf,
    /// juju-sim's own `jujuc`.
    pub jujuc_plain: PathBuf,
    /// `bench-fake`.
    pub fake: PathBuf,
    /// `tool-calib`.
    pub calib: PathBuf,
    /// `render-scale`.
    pub render: PathBuf,
    /// `libfake_nvml.so`.
    pub nvml: PathBuf,
    /// `hook-rusage`.
    pub rusage: PathBuf,
}

impl Built {
    /// Finds everything next to the running executable.
    pub fn locate() -> Result<Self, BenchError> {
        let exe = std::env::current_exe().map_err(|e| BenchError::Setup(e.to_string()))?;
        let dir = exe
            .parent()
            .ok_or_else(|| BenchError::Setup("no parent dir of the executable".into()))?;
        let get = |name: &str| {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(BenchError::Setup(format!(
                    "{} is missing: build with `cargo build --release --workspace` first",
                    p.display()
                )))
            }
        };
        Ok(Built {
            charm: get("slurm-charm")?,
            jujuc: get("jujuc-timed")?,
            jujuc_plain: get("jujuc")?,
            fake: get("bench-fake")?,
            calib: get("tool-calib")?,
            render: get("render-scale")?,
            nvml: get("libfake_nvml.so")?,
            rusage: get("hook-rusage")?,
        })
    }
}

/// Commands the charms run, all served by `bench-fake`.
const FAKE_COMMANDS: &[&str] = &[
    "apt-get",
    "systemctl",
    "scontrol",
    "sinfo",
    "slurmd",
    "slurmctld",
    "nvidia-modprobe",
];

/// One benchmark world in a temp dir.
pub struct World {
    /// Keeps the temp dir alive.
    pub dir: tempfile::TempDir,
    /// Executables.
    pub built: Built,
    /// Rust slurmd charm dir.
    pub slurmd_charm: PathBuf,
    /// Rust slurmctld charm dir.
    pub slurmctld_charm: PathBuf,
    /// ops baseline charm dir with the slurmd metadata.
    pub ops_slurmd: PathBuf,
    /// ops baseline charm dir with the slurmctld metadata.
    pub ops_slurmctld: PathBuf,
    /// Where `jujuc-timed` appends its per-call times.
    pub tool_log: PathBuf,
    /// Host name the controller units get instead of `<app>-<n>` (e.g. `localhost`, so that
    /// slurmd's controller check does not wait on a DNS lookup of an unknown name).
    pub ctl_hostname: Option<String>,
    /// The directory of `bench-fake`'s command links (first on the hooks' `PATH`).
    pub fakes: PathBuf,
    nvml_dir: PathBuf,
    /// The fake NVML's configuration: 8 H100s.
    pub gpu_fixture: PathBuf,
}

fn copy(from: &Path, to: &Path) -> Result<(), BenchError> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| BenchError::Setup(format!("copy {} -> {}: {e}", from.display(), to.display())))
}

fn symlink(from: &Path, to: &Path) -> Result<(), BenchError> {
    std::os::unix::fs::symlink(from, to)
        .map_err(|e| BenchError::Setup(format!("symlink {}: {e}", to.display())))
}

fn mkdir(p: &Path) -> Result<(), BenchError> {
    std::fs::create_dir_all(p).map_err(|e| BenchError::Setup(format!("mkdir {}: {e}", p.display())))
}

/// `pip install --target` of the baseline's requirements, once, into `target/ops-baseline/venv`.
pub fn ops_venv() -> Result<PathBuf, BenchError> {
    let req = repo().join("benches/ops-baseline/requirements.txt");
    let venv = repo().join("target/ops-baseline/venv");
    let stamp = venv.join(".requirements.txt");
    let wanted = std::fs::read_to_string(&req).map_err(|e| BenchError::Setup(e.to_string()))?;
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(venv);
    }
    eprintln!(
        "hook-bench: installing the ops baseline's requirements into {}",
        venv.display()
    );
    let _ = std::fs::remove_dir_all(&venv);
    let status = std::process::Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&venv)
        .arg("-r")
        .arg(&req)
        .status()
        .map_err(|e| BenchError::Setup(format!("python3 -m pip: {e}")))?;
    if !status.success() {
        return Err(BenchError::Setup(format!("pip install failed ({status})")));
    }
    std::fs::write(&stamp, wanted).map_err(|e| BenchError::Setup(e.to_string()))?;
    Ok(venv)
}

impl World {
    /// Builds the world (charm dirs, fakes, fake NVML) in a fresh temp dir.
    pub fn new(built: &Built, venv: &Path) -> Result<Self, BenchError> {
        let dir = tempfile::Builder::new()
            .prefix("hook-bench-")
            .tempdir()
            .map_err(|e| BenchError::Setup(e.to_string()))?;
        let d = dir.path();
        // Private copies: other builds (`cargo build --release`, `cargo test --release`) may
        // replace target/release files while a long run is going on.
        let bin = d.join("bin");
        mkdir(&bin)?;
        let snap = |p: &Path| -> Result<PathBuf, BenchError> {
            let to = bin.join(p.file_name().unwrap_or_default());
            copy(p, &to)?;
            Ok(to)
        };
        let built = &Built {
            charm: snap(&built.charm)?,
            jujuc: snap(&built.jujuc)?,
            jujuc_plain: snap(&built.jujuc_plain)?,
            fake: snap(&built.fake)?,
            calib: snap(&built.calib)?,
            render: snap(&built.render)?,
            nvml: snap(&built.nvml)?,
            rusage: snap(&built.rusage)?,
        };
        let rust_charm = |name: &str, yaml: &Path| -> Result<PathBuf, BenchError> {
            let c = d.join("charms").join(name);
            mkdir(&c)?;
            for f in ["metadata.yaml", "config.yaml", "actions.yaml"] {
                copy(&yaml.join(f), &c.join(f))?;
            }
            // the binary is `dispatch`, as charm/pack.sh packs it
            symlink(&built.charm, &c.join("dispatch"))?;
            Ok(c)
        };
        let ops_charm = |name: &str, yaml: &Path| -> Result<PathBuf, BenchError> {
            let c = d.join("charms").join(name);
            mkdir(&c.join("src"))?;
            for f in ["metadata.yaml", "config.yaml", "actions.yaml"] {
                copy(&yaml.join(f), &c.join(f))?;
            }
            let base = repo().join("benches/ops-baseline");
            copy(&base.join("dispatch"), &c.join("dispatch"))?;
            copy(&base.join("src/charm.py"), &c.join("src/charm.py"))?;
            symlink(venv, &c.join("venv"))?;
            Ok(c)
        };
        let slurmd_charm = rust_charm("slurmd", &repo())?;
        let slurmctld_charm = rust_charm("slurmctld", &repo().join("charm/slurmctld"))?;
        let ops_slurmd = ops_charm("ops-slurmd", &repo())?;
        let ops_slurmctld = ops_charm("ops-slurmctld", &repo().join("charm/slurmctld"))?;
        let fakes = d.join("fakes");
        mkdir(&fakes)?;
        for name in FAKE_COMMANDS {
            symlink(&built.fake, &fakes.join(name))?;
        }
        let nvml_dir = d.join("nvml");
        mkdir(&nvml_dir)?;
        copy(&built.nvml, &nvml_dir.join("libnvidia-ml.so.1"))?;
        let gpu_fixture = repo().join("tests/fixtures/gpu/h100_sxm_8x_nvswitch.json");
        Ok(World {
            tool_log: d.join("tools.log"),
            dir,
            built: built.clone(),
            slurmd_charm,
            slurmctld_charm,
            ops_slurmd,
            ops_slurmctld,
            ctl_hostname: None,
            fakes,
            nvml_dir,
            gpu_fixture,
        })
    }

    /// A simulator using `jujuc-timed`, without env/log recording.
    pub fn simulator(&self) -> Result<Simulator, BenchError> {
        Simulator::with_options(SimOptions {
            jujuc: Some(self.built.jujuc.clone()),
            record_env: false,
            keep_logs: false,
            ..SimOptions::default()
        })
        .map_err(BenchError::Sim)
    }

    /// Per-unit extras: host root, fake commands, fake NVML with 8 H100s and their device files,
    /// and the tool log.
    pub fn extras_fn(&self) -> impl Fn(&str) -> UnitExtras + Send + Sync + 'static {
        let units = self.dir.path().join("units");
        let fakes = self.fakes.clone();
        let nvml = self.nvml_dir.clone();
        let fixture = self.gpu_fixture.clone();
        let log = self.tool_log.clone();
        let minors = gpu_minors(&fixture);
        let ctl_hostname = self.ctl_hostname.clone();
        move |unit: &str| {
            let dash = unit.replace('/', "-");
            let root = units.join(&dash);
            let _ = std::fs::create_dir_all(root.join("proc/sys/kernel"));
            let _ = std::fs::create_dir_all(root.join("dev"));
            let is_ctl = unit.starts_with("slurmctld/") || unit.starts_with("ectl/");
            let hostname = match (&ctl_hostname, is_ctl) {
                (Some(h), true) => h.clone(),
                _ => dash.clone(),
            };
            let _ = std::fs::write(root.join("proc/sys/kernel/hostname"), hostname);
            for m in &minors {
                let _ = std::fs::write(root.join(format!("dev/nvidia{m}")), "");
            }
            let mut e = UnitExtras::default();
            e.env
                .insert("SLURM_CHARMS_ROOT".into(), root.display().to_string());
            e.env
                .insert("LD_LIBRARY_PATH".into(), nvml.display().to_string());
            e.env
                .insert("FAKE_NVML_CONFIG".into(), fixture.display().to_string());
            e.env
                .insert("HOOK_BENCH_TOOL_LOG".into(), log.display().to_string());
            e.path.push(fakes.clone());
            e
        }
    }

    /// A deploy spec with the extras.
    pub fn spec(&self, app: &str, charm: &Path, units: u32) -> DeploySpec {
        let f = self.extras_fn();
        DeploySpec::new(app, charm).units(units).extras_fn(f)
    }

    /// Empties the tool log.
    pub fn clear_tool_log(&self) {
        let _ = std::fs::write(&self.tool_log, "");
    }

    /// The tool log's entries since the last clear: (tool, nanoseconds inside the process).
    pub fn tool_log(&self) -> Vec<(String, u64)> {
        std::fs::read_to_string(&self.tool_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (t, ns) = l.split_once('\t')?;
                Some((t.to_string(), ns.parse().ok()?))
            })
            .collect()
    }
}

/// Minor numbers of the fixture's devices.
fn gpu_minors(fixture: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(fixture).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    v["devices"]
        .as_array()
        .map(|a| a.iter().filter_map(|d| d["minor"].as_u64()).collect())
        .unwrap_or_default()
}
