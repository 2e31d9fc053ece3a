//! Harness for `tests/gpu_slurm_oracle.rs`: Slurm's own NVML autodetection (`AutoDetect=nvml`,
//! the `gpu_nvml.so` plugin from Debian's `slurm-wlm-nvml-plugin`) and our controller, both over
//! the same fake libnvidia-ml, on Slurm 22.05 (this machine), 24.11 and 26.05 (Debian roots from
//! `tools/e2e/roots.sh`). `slurmd -G` runs through `tools/gpu-oracle/slurmd-g.sh` in a private
//! mount namespace (root needed). See `docs/gpu-oracle.md`.

pub mod records;

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A Slurm version under test.
#[derive(Debug, Clone, Copy)]
pub struct Version {
    /// As in test names: `22_05`.
    pub name: &'static str,
    /// Debian suite of its root.
    pub suite: &'static str,
}

/// Slurm 22.05 (Debian 12, this machine).
pub const V22_05: Version = Version {
    name: "22_05",
    suite: "bookworm",
};
/// Slurm 24.11 (Debian 13).
pub const V24_11: Version = Version {
    name: "24_11",
    suite: "trixie",
};
/// Slurm 26.05 (Debian sid).
pub const V26_05: Version = Version {
    name: "26_05",
    suite: "sid",
};

/// Where one version's `slurmd -G` runs.
pub struct Oracle {
    /// The version.
    pub version: Version,
    /// Its Debian root (`/` for 22.05).
    pub root: PathBuf,
    /// `PluginDir` to set (22.05: installed plugins + the extracted `gpu_nvml.so`).
    pub plugin_dir: Option<PathBuf>,
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[allow(clippy::duplicate_mod)]
#[path = "../common/required.rs"]
mod required;
use required::required;

/// Runs a repository script that prints one path.
fn script_path(script: &str, arg: Option<&str>) -> Result<PathBuf, String> {
    let mut cmd = Command::new(repo().join(script));
    cmd.args(arg);
    let out = cmd.output().map_err(|e| format!("{script}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{script} {} failed: {}",
            arg.unwrap_or(""),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(PathBuf::from(path))
}

fn find_oracle(version: Version) -> Result<Oracle, String> {
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        != 0
    {
        return Err("not root (slurmd-g.sh needs a mount namespace)".into());
    }
    let root = script_path("tools/e2e/roots.sh", Some(version.suite))?;
    let plugin_dir = if version.suite == "bookworm" {
        Some(script_path("tools/gpu-oracle/plugin-dir.sh", None)?)
    } else {
        None
    };
    let plugin = plugin_dir
        .clone()
        .unwrap_or_else(|| root.join("usr/lib/x86_64-linux-gnu/slurm-wlm"))
        .join("gpu_nvml.so");
    if !plugin.exists() || !root.join("usr/sbin/slurmd").exists() {
        return Err(format!(
            "no slurmd or {} in {}",
            plugin.display(),
            root.display()
        ));
    }
    Ok(Oracle {
        version,
        root,
        plugin_dir,
    })
}

/// The oracle of `version`, or `None` (skip, loudly) when it cannot run here; under
/// `E2E_REQUIRED=1` or `CI` a missing root, plugin or privilege is a failure.
pub fn oracle(version: Version, test: &str) -> Option<Oracle> {
    match find_oracle(version) {
        Ok(o) => Some(o),
        Err(why) => {
            assert!(
                !required(),
                "{test}: Slurm {} NVML oracle cannot run: {why} (E2E_REQUIRED/CI is set)",
                version.name
            );
            eprintln!(
                "\n** SKIPPED {test}: Slurm {} NVML oracle: {why}\n",
                version.name
            );
            None
        }
    }
}

/// This machine as `slurmd -C` describes it (first line only).
pub fn machine_facts() -> String {
    let out = Command::new("slurmd")
        .arg("-C")
        .output()
        .expect("slurmd -C runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.starts_with("NodeName="))
        .expect("slurmd -C prints NodeName=")
        .to_owned()
}

/// Machine CPU ids that are online (`/sys/devices/system/cpu/online`, e.g. `0-1`).
pub fn machine_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").expect("cpu/online");
    records::parse_ranges(text.trim())
}

/// Rewrites every device's `cpu_affinity` onto this machine's CPUs when any names a CPU the
/// machine lacks (Slurm converts affinity through the real topology and drops a GPU whose CPUs
/// do not exist: "xcpuinfo_mac_to_abs failed"). Distinct affinity sets stay distinct and equal
/// ones equal, as far as the machine has CPUs: the k-th distinct set becomes `{cpus[k]}`, then
/// all CPUs, then again single CPUs. Fixtures that fit are unchanged.
pub fn fit_affinity(config: &mut Value, cpus: &[u32]) {
    let Some(devices) = config.get_mut("devices").and_then(Value::as_array_mut) else {
        return;
    };
    let sets: Vec<Option<Vec<u32>>> = devices
        .iter()
        .map(|d| {
            d.get("cpu_affinity").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|c| c.as_u64().map(|c| c as u32))
                    .collect()
            })
        })
        .collect();
    let fits = sets
        .iter()
        .flatten()
        .all(|s| s.iter().all(|c| cpus.contains(c)));
    if fits {
        return;
    }
    let mut distinct: Vec<BTreeSet<u32>> = Vec::new();
    for s in sets.iter().flatten() {
        let set: BTreeSet<u32> = s.iter().copied().collect();
        if !distinct.contains(&set) {
            distinct.push(set);
        }
    }
    let n = cpus.len();
    let image = |k: usize| -> Vec<u32> {
        let k = k % (n + 1);
        if k < n { vec![cpus[k]] } else { cpus.to_vec() }
    };
    for (dev, set) in devices.iter_mut().zip(&sets) {
        if let Some(s) = set {
            let set: BTreeSet<u32> = s.iter().copied().collect();
            let k = distinct.iter().position(|d| *d == set).unwrap_or(0);
            dev["cpu_affinity"] = Value::from(image(k));
        }
    }
}

/// A character device for slurmd-g.sh's `devices` file.
pub struct DevNode {
    /// Absolute path (`/dev/nvidia0`).
    pub path: String,
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

/// What one `slurmd -G` run needs besides the fake library.
pub struct Run<'a> {
    /// The `NodeName=` line (with `Gres=`).
    pub node_line: &'a str,
    /// gres.conf text.
    pub gres_conf: &'a str,
    /// The fake's JSON.
    pub fake_json: &'a str,
    /// Device nodes to create.
    pub devices: &'a [DevNode],
    /// `/proc/driver/nvidia-caps/mig-minors`, if any.
    pub mig_minors: Option<&'a str>,
}

/// Output and success of one run.
pub struct Printed {
    /// slurmd exited 0.
    pub ok: bool,
    /// Everything it printed.
    pub output: String,
}

impl Oracle {
    /// Runs `slurmd -G -N <node>` with `run`'s files; `lib` is the built fake library.
    pub fn slurmd_g(&self, node: &str, lib: &Path, run: &Run<'_>) -> Printed {
        let work = tempfile::Builder::new()
            .prefix("gpu-oracle")
            .tempdir()
            .expect("tempdir");
        let w = work.path();
        std::fs::create_dir_all(w.join("lib")).expect("lib dir");
        std::fs::create_dir_all(w.join("spool")).expect("spool dir");
        std::fs::copy(lib, w.join("lib/libnvidia-ml.so.1")).expect("copy fake");
        // Slurm 24.11+ dlopen()s the unversioned name.
        std::os::unix::fs::symlink("libnvidia-ml.so.1", w.join("lib/libnvidia-ml.so"))
            .expect("link");
        std::fs::write(w.join("fake.json"), run.fake_json).expect("fake.json");
        let plugin_dir = self
            .plugin_dir
            .as_ref()
            .map(|d| format!("PluginDir={}\n", d.display()))
            .unwrap_or_default();
        let slurm_conf = format!(
            "ClusterName=oracle\nSlurmctldHost=localhost\nAuthType=auth/none\n{plugin_dir}\
             GresTypes=gpu\nSelectType=select/cons_tres\nSlurmdSpoolDir=/mnt/spool\n\
             SlurmdPidFile=/mnt/slurmd.pid\n{}\nPartitionName=oracle Nodes=ALL Default=YES\n",
            run.node_line
        );
        std::fs::write(w.join("slurm.conf"), slurm_conf).expect("slurm.conf");
        std::fs::write(w.join("gres.conf"), run.gres_conf).expect("gres.conf");
        let devices: String = run
            .devices
            .iter()
            .map(|d| format!("{} {} {}\n", d.path, d.major, d.minor))
            .collect();
        std::fs::write(w.join("devices"), devices).expect("devices");
        if let Some(m) = run.mig_minors {
            std::fs::write(w.join("mig-minors"), m).expect("mig-minors");
        }
        let out = Command::new(repo().join("tools/gpu-oracle/slurmd-g.sh"))
            .arg(&self.root)
            .arg(w)
            .env("SLURMD_NODE", node)
            .output()
            .expect("slurmd-g.sh runs");
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        Printed {
            ok: out.status.success(),
            output,
        }
    }
}

/// Lines of `output` that report a problem (`error:`, `fatal:`, `warning:`), less the one this
/// machine causes whatever the configuration: its cgroup v1 hierarchy (26.05 deprecates v1).
pub fn complaints(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            (lower.contains("error:") || lower.contains("fatal:") || lower.contains("warning:"))
                && !lower.contains("cgroup/v1 plugin is deprecated")
        })
        .collect()
}
