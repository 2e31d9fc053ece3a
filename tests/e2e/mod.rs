//! End-to-end harness: a cluster of "hosts" on one machine, each in its own namespaces, running
//! Debian's real munged, slurmctld and slurmd (see docs/e2e.md).
//!
//! The heavy lifting is in `tools/e2e/cluster` (namespaces, addresses, private mounts) and
//! `tools/e2e/bin/systemctl` (the systemd stand-in). This module starts one `cluster serve`
//! process per [`Cluster`] and talks to the hosts through `cluster exec`. Dropping the
//! [`Cluster`] (also while unwinding from a failed assertion) ends the `serve` process, which
//! takes every namespace and daemon of the cluster with it; if the test process dies outright,
//! the kernel does the same (`PR_SET_PDEATHSIG`).

#![allow(dead_code)] // each tests/e2e_*.rs uses a different part of the harness

#[allow(clippy::duplicate_mod)]
#[path = "../common/required.rs"]
mod required;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Machine N of a simulated model: its host name (`juju-e2e-N`) and the address the simulator
/// gives it (`10.0.0.N+1`); the simulator numbers machines in deploy order.
pub fn machine(n: u32) -> (String, String) {
    (format!("juju-e2e-{n}"), format!("10.0.0.{}", n + 1))
}

/// Which host each unit runs on, from `(unit, machine number)` pairs ([`machine`]): what
/// [`Cluster::unit_extras`] takes.
pub fn units_on_machines(units: &[(&str, u32)]) -> std::collections::BTreeMap<String, String> {
    units
        .iter()
        .map(|(unit, n)| (unit.to_string(), machine(*n).0))
        .collect()
}

/// CPU ids of this machine: a fake GPU's affinity must name CPUs slurmd has, or it refuses
/// `Cores=`.
pub fn cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    (0..n).collect()
}

/// A Tesla T4 for the fake NVML, at `minor` and PCI bus id `bus`, near every CPU ([`cpus`]).
pub fn t4(minor: u32, bus: &str) -> serde_json::Value {
    serde_json::json!({
        "name": "Tesla T4",
        "uuid": format!("GPU-7e540000-0000-4000-8000-00000000000{minor}"),
        "pci_bus_id": bus,
        "minor": minor,
        "memory_total": 16106127360u64,
        "cpu_affinity": cpus(),
    })
}

/// A cluster of machines `0..gpus.len()` ([`machine`]) on `suite`, and a work directory
/// (named after `prefix`) holding the fake NVML ([`install_fake_nvml`]): machine N gets the fake
/// GPUs `gpus[N]` (a list of devices such as [`t4`]), their device nodes and the fake NVML's
/// JSON.
pub fn cluster_with_gpus(
    suite: Suite,
    prefix: &str,
    gpus: &[Vec<serde_json::Value>],
) -> (Cluster, tempfile::TempDir) {
    let hosts: Vec<(String, String)> = (0..gpus.len() as u32).map(machine).collect();
    let spec: Vec<(&str, &str)> = hosts
        .iter()
        .map(|(h, a)| (h.as_str(), a.as_str()))
        .collect();
    let cluster = Cluster::start_on(suite, &spec).unwrap_or_else(|e| panic!("{e}"));
    let work = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap_or_else(|e| panic!("work directory: {e}"));
    let nvml = install_fake_nvml(work.path());
    for ((host, _), devices) in hosts.iter().zip(gpus) {
        let minors: Vec<u32> = devices
            .iter()
            .filter_map(|d| d["minor"].as_u64())
            .map(|m| m as u32)
            .collect();
        if !minors.is_empty() {
            cluster.add_gpus(host, &minors);
        }
        std::fs::write(
            nvml.join(format!("{host}.json")),
            serde_json::json!({ "devices": devices }).to_string(),
        )
        .unwrap_or_else(|e| panic!("fake NVML of {host}: {e}"));
    }
    (cluster, work)
}

/// Panics when one of `units` is in error, with its status, every failed hook's output and the
/// daemons' logs.
#[track_caller]
pub fn assert_no_hook_errors(sim: &juju_sim::Simulator, cluster: &Cluster, units: &[&str]) {
    for u in units {
        if !sim.is_error(u) {
            continue;
        }
        let failed: Vec<String> = sim
            .records()
            .iter()
            .filter(|r| !r.succeeded())
            .map(|r| format!("{} {}: {}{}", r.unit, r.hook, r.stdout, r.stderr))
            .collect();
        panic!(
            "{u} in error: {:?}\n{}\n{}",
            sim.unit_status(u),
            failed.join("\n"),
            cluster.logs()
        );
    }
}

/// Repository root (where Cargo.toml of the root crate is).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tools/e2e/bin`: the systemctl and apt-get stand-ins, to put first on a host's PATH.
pub fn stand_in_bin() -> PathBuf {
    repo_root().join("tools/e2e/bin")
}

fn cluster_script() -> PathBuf {
    repo_root().join("tools/e2e/cluster")
}

/// A charm directory for the simulator under `work`: the charm's metadata, config and actions
/// (slurmd's from the repository root, slurmctld's from `charm/slurmctld`) and the `slurm-charm`
/// binary this test run built as `dispatch` (as `charm/pack.sh` packs it).
pub fn charm_dir(work: &Path, name: &str) -> PathBuf {
    let repo = repo_root();
    let dir = work.join(format!("charm-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml_dir = if name == "slurmd" {
        repo.clone()
    } else {
        repo.join("charm").join(name)
    };
    for f in ["metadata.yaml", "config.yaml", "actions.yaml"] {
        std::fs::copy(yaml_dir.join(f), dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    std::fs::copy(env!("CARGO_BIN_EXE_slurm-charm"), dir.join("dispatch")).unwrap();
    dir
}

/// The fake NVML (`libfake_nvml.so`, built as a dev-dependency next to this test's deps),
/// installed as `<work>/nvml/libnvidia-ml.so.1`; returns `<work>/nvml`.
pub fn install_fake_nvml(work: &Path) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let so = exe.parent().unwrap().join("libfake_nvml.so");
    assert!(so.is_file(), "fake NVML not built at {}", so.display());
    let dir = work.join("nvml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&so, dir.join("libnvidia-ml.so.1")).unwrap();
    dir
}

/// A Slurm version the hosts can run, named by the Debian suite that ships it. Bookworm is this
/// machine itself; the others are Debian roots built by `tools/e2e/roots.sh` (cached outside
/// the repository), which every host then runs from (docs/e2e.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// Debian 12: Slurm 22.05 (the machine's own packages).
    Bookworm,
    /// Debian 13: Slurm 24.11.
    Trixie,
    /// Debian unstable: Slurm 26.05.
    Sid,
}

impl Suite {
    /// Every suite, oldest Slurm first.
    pub const ALL: [Suite; 3] = [Suite::Bookworm, Suite::Trixie, Suite::Sid];

    /// The suite's name as `roots.sh` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Bookworm => "bookworm",
            Suite::Trixie => "trixie",
            Suite::Sid => "sid",
        }
    }

    /// The Slurm release the suite ships (major.minor), as in the tests' names.
    pub fn slurm(self) -> &'static str {
        match self {
            Suite::Bookworm => "22.05",
            Suite::Trixie => "24.11",
            Suite::Sid => "26.05",
        }
    }

    /// The root the hosts run from: `/` for bookworm, else the cached root, built when
    /// missing (`tools/e2e/roots.sh`, about 30 s; needs mmdebstrap and Debian's registry).
    pub fn sysroot(self) -> Result<PathBuf, String> {
        let script = repo_root().join("tools/e2e/roots.sh");
        let out = Command::new(&script)
            .arg(self.name())
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("running {}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "no Debian {} root with Slurm {}: {} exited {} (see its output above)",
                self.name(),
                self.slurm(),
                script.display(),
                out.status
            ));
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !path.join("usr/sbin/slurmctld").is_file() {
            return Err(format!(
                "{} printed {}, which holds no usr/sbin/slurmctld",
                script.display(),
                path.display()
            ));
        }
        Ok(path)
    }
}

/// Programs the end-to-end tests need on the machine (Debian packages slurmctld, slurmd,
/// slurm-client, munge, iproute2 and util-linux). The Slurm and munge ones are needed on the
/// machine only for bookworm; the other suites bring their own in their root.
const REQUIRED: &[&str] = &[
    "/usr/sbin/slurmctld",
    "/usr/sbin/slurmd",
    "/usr/bin/srun",
    "/usr/bin/sinfo",
    "/usr/bin/scontrol",
    "/usr/sbin/munged",
    "/usr/bin/munge",
    "/usr/bin/unmunge",
    "/usr/sbin/ip",
    "/usr/bin/unshare",
    "/usr/bin/nsenter",
    "/usr/bin/setpriv",
];

/// Programs needed on the machine itself whatever the suite (the namespaces and the network are
/// made from outside the hosts).
const REQUIRED_OUTSIDE: &[&str] = &[
    "/usr/sbin/ip",
    "/usr/bin/unshare",
    "/usr/bin/nsenter",
    "/usr/bin/setpriv",
];

/// Whether this machine can run the end-to-end tests on `suite`: root, the packages installed
/// and, for suites other than bookworm, the suite's root (built here when missing). `Err` says
/// what is missing. Where `CI` or `E2E_REQUIRED` is set (`.ci/run` sets it), a missing piece is
/// a test failure, never a skip.
pub fn available(suite: Suite) -> Result<(), String> {
    let required = if suite == Suite::Bookworm {
        REQUIRED
    } else {
        REQUIRED_OUTSIDE
    };
    let mut missing: Vec<String> = required
        .iter()
        .filter(|p| !Path::new(p).exists())
        .map(|p| p.to_string())
        .collect();
    // Effective uid of this process, from /proc (no libc dependency).
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false);
    if !root {
        missing.push("root (namespaces, mknod, mounts)".into());
    } else if missing.is_empty() {
        let ns = Command::new("unshare")
            .args([
                "--uts", "--mount", "--net", "--pid", "--cgroup", "--fork", "--", "true",
            ])
            .stdin(Stdio::null())
            .output();
        if !ns.is_ok_and(|o| o.status.success()) {
            missing.push(
                "permission to create namespaces (unshare --uts --mount --net --pid --cgroup)"
                    .into(),
            );
        }
    }
    if missing.is_empty() && suite != Suite::Bookworm {
        if let Err(e) = suite.sysroot() {
            missing.push(e);
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join(", "))
    }
}

/// Call at the top of every end-to-end test: `if !e2e::should_run("name") { return; }`.
/// Prints a loud skip message where the packages are absent; panics instead where the
/// environment says the tests are required (CI).
/// `host`'s own copy of the fake NVML, `<nvml>/<host>/libnvidia-ml.so.1` (made on first use
/// from [`install_fake_nvml`]'s), whose sidecar config (`….so.1.json`) is a link to
/// `<nvml>/<host>.json`: a program started without the hook's environment (slurmd's
/// HealthCheckProgram, which gets an empty one) then sees the same GPUs as the hooks, as it
/// would with the real driver. Returns the directory, for `LD_LIBRARY_PATH`.
pub fn host_nvml_dir(nvml: &Path, host: &str) -> PathBuf {
    let dir = nvml.join(host);
    let lib = dir.join("libnvidia-ml.so.1");
    if !lib.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(".libnvidia-ml.so.1.tmp");
        std::fs::copy(nvml.join("libnvidia-ml.so.1"), &tmp).unwrap();
        let sidecar = dir.join("libnvidia-ml.so.1.json");
        let _ = std::os::unix::fs::symlink(nvml.join(format!("{host}.json")), &sidecar);
        std::fs::rename(&tmp, &lib).unwrap();
    }
    dir
}

pub fn should_run(test: &str) -> bool {
    should_run_on(test, Suite::Bookworm)
}

/// [`should_run`] for hosts running `suite` (a missing root counts as a missing package).
pub fn should_run_on(test: &str, suite: Suite) -> bool {
    match available(suite) {
        Ok(()) => true,
        Err(missing) => {
            assert!(
                !required::required(),
                "end-to-end test {test} cannot run, missing: {missing} (CI/E2E_REQUIRED is set)"
            );
            eprintln!(
                "\n\
                 ************************************************************************\n\
                 ** SKIPPED end-to-end test {test}\n\
                 ** missing: {missing}\n\
                 ** install: apt-get install slurmctld slurmd slurm-client munge iproute2 mmdebstrap\n\
                 ** and run as root (.ci/run does both)\n\
                 ************************************************************************\n"
            );
            false
        }
    }
}

/// One host of a [`Cluster`].
#[derive(Debug, Clone)]
pub struct Host {
    pub name: String,
    /// Address without prefix, e.g. `10.77.0.11`.
    pub addr: String,
    /// PID of the host's namespace holder (its init), for `nsenter -t`.
    pub pid: u32,
    /// The host's `SLURM_CHARMS_ROOT`; mounted over /etc/slurm, /etc/munge, /run, /dev ...
    /// inside the host.
    pub root: PathBuf,
}

/// A running cluster. Dropping it stops everything.
pub struct Cluster {
    suite: Suite,
    dir: PathBuf,
    keep_dir: bool,
    serve: Option<Child>,
    stdin: Option<ChildStdin>,
    hosts: Vec<Host>,
    started: Instant,
}

impl Cluster {
    /// Start hosts `(name, "a.b.c.d")`, all on one /24 bridge. Names must be lower-case
    /// `[a-z][a-z0-9-]*` (they become hostnames and Slurm node names).
    pub fn start(hosts: &[(&str, &str)]) -> Result<Cluster, String> {
        Cluster::start_on(Suite::Bookworm, hosts)
    }

    /// [`Cluster::start`] with every host running from `suite`'s root. The repository, the
    /// temp dir and the build's target dir are mounted into the hosts at their own paths (the
    /// charm binary, the stand-ins, the fake NVML and the simulator's socket live there).
    pub fn start_on(suite: Suite, hosts: &[(&str, &str)]) -> Result<Cluster, String> {
        let started = Instant::now();
        let sysroot = suite.sysroot()?;
        let mut binds = vec![repo_root(), std::env::temp_dir()];
        if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
            binds.push(PathBuf::from(target));
        }
        // target/<profile>/deps/<test>: the build's own directory, wherever it is.
        if let Some(profile) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().and_then(Path::parent).map(Path::to_path_buf))
        {
            binds.push(profile);
        }
        let tmp = tempfile::Builder::new()
            .prefix("e2e-cluster-")
            .tempdir()
            .map_err(|e| format!("tempdir: {e}"))?;
        let dir = tmp.keep();
        let mut cmd = Command::new("setpriv");
        cmd.arg("--pdeathsig")
            .arg("KILL")
            .arg("--")
            .arg(cluster_script())
            .arg("serve")
            .arg(&dir);
        if suite != Suite::Bookworm {
            cmd.arg("--root").arg(&sysroot);
            for b in &binds {
                cmd.arg("--bind").arg(b);
            }
        }
        for (name, addr) in hosts {
            cmd.arg(format!("{name}={addr}/24"));
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", cluster_script().display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut cluster = Cluster {
            suite,
            dir: dir.clone(),
            keep_dir: false,
            serve: Some(child),
            stdin,
            hosts: Vec::new(),
            started,
        };
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("reading cluster serve: {e}"))?;
        if line.trim() != "ready" {
            cluster.keep_dir = true;
            return Err(format!(
                "cluster serve did not get ready (said {line:?}); see stderr above and {}",
                dir.display()
            ));
        }
        for (name, addr) in hosts {
            let pid = std::fs::read_to_string(dir.join("hosts").join(name).join("pid"))
                .map_err(|e| format!("pid of {name}: {e}"))?
                .trim()
                .parse()
                .map_err(|e| format!("pid of {name}: {e}"))?;
            cluster.hosts.push(Host {
                name: name.to_string(),
                addr: addr.to_string(),
                pid,
                root: dir.join("hosts").join(name).join("root"),
            });
        }
        Ok(cluster)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The suite every host runs from.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Kill the `cluster serve` process with SIGKILL, as if the test process had died: the
    /// kernel must take every host and daemon down anyway (for the harness's own tests).
    pub fn kill_serve(&mut self) {
        if let Some(child) = self.serve.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The cgroup directories made for a host (below the caller's, one per hierarchy).
    pub fn cgroups(&self, name: &str) -> Vec<PathBuf> {
        std::fs::read_to_string(self.dir.join("hosts").join(name).join("cgroups"))
            .unwrap_or_default()
            .lines()
            .map(PathBuf::from)
            .collect()
    }

    /// PIDs (as the machine sees them) of every process inside a host.
    pub fn processes(&self, name: &str) -> Vec<u32> {
        let ns = std::fs::read_link(format!("/proc/{}/ns/pid", self.host(name).pid)).ok();
        match ns {
            Some(ns) => processes_in_pid_ns(&ns),
            None => Vec::new(),
        }
    }

    /// Keep the cluster's directory (logs, configs) after the drop.
    pub fn keep_dir(&mut self) {
        self.keep_dir = true;
    }

    pub fn host(&self, name: &str) -> &Host {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no host {name} in the cluster"))
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The host's `SLURM_CHARMS_ROOT`.
    pub fn root(&self, name: &str) -> &Path {
        &self.host(name).root
    }

    /// Command prefix that runs a program inside the host (for the simulator's per-unit
    /// command prefix): `tools/e2e/cluster exec DIR HOST --`. The working directory is kept;
    /// the environment is passed through unchanged.
    pub fn prefix(&self, name: &str) -> Vec<String> {
        vec![
            cluster_script().display().to_string(),
            "exec".into(),
            self.dir.display().to_string(),
            self.host(name).name.clone(),
            "--".into(),
        ]
    }

    /// Per-unit simulator extras: each unit (`units`: unit name → host name) runs inside its
    /// host, with the host's root, its fake NVML (`<nvml>/<host>.json`, the library copied to
    /// `<nvml>/<host>/` with that config as its sidecar) and the systemctl/apt-get stand-ins.
    pub fn unit_extras(
        &self,
        nvml: &Path,
        units: std::collections::BTreeMap<String, String>,
    ) -> impl Fn(&str) -> juju_sim::UnitExtras + Send + Sync + 'static + use<> {
        use std::collections::BTreeMap;
        let roots: BTreeMap<String, PathBuf> = self
            .hosts()
            .iter()
            .map(|h| (h.name.clone(), h.root.clone()))
            .collect();
        let prefixes: BTreeMap<String, Vec<String>> = self
            .hosts()
            .iter()
            .map(|h| (h.name.clone(), self.prefix(&h.name)))
            .collect();
        let nvml = nvml.to_path_buf();
        for host in units.values() {
            host_nvml_dir(&nvml, host);
        }
        move |unit: &str| {
            let host = units
                .get(unit)
                .unwrap_or_else(|| panic!("no host planned for {unit}"));
            let mut env = BTreeMap::new();
            env.insert(
                "SLURM_CHARMS_ROOT".into(),
                roots[host].display().to_string(),
            );
            env.insert(
                "LD_LIBRARY_PATH".into(),
                host_nvml_dir(&nvml, host).display().to_string(),
            );
            env.insert(
                "FAKE_NVML_CONFIG".into(),
                nvml.join(format!("{host}.json")).display().to_string(),
            );
            juju_sim::UnitExtras {
                env,
                path: vec![stand_in_bin()],
                command_prefix: prefixes[host].clone(),
            }
        }
    }

    /// PATH for programs run inside the host: the stand-ins first, then the usual one.
    pub fn path_env(&self) -> String {
        format!(
            "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            stand_in_bin().display()
        )
    }

    /// A command that runs `program args` inside the host, with `SLURM_CHARMS_ROOT` and the
    /// stand-ins on PATH.
    pub fn command(&self, name: &str, program: &str, args: &[&str]) -> Command {
        let prefix = self.prefix(name);
        let mut cmd = Command::new(&prefix[0]);
        cmd.args(&prefix[1..])
            .arg(program)
            .args(args)
            .env("SLURM_CHARMS_ROOT", self.root(name))
            .env("PATH", self.path_env())
            .stdin(Stdio::null());
        cmd
    }

    /// Run a program in a host and collect its output (never panics on a non-zero exit).
    pub fn run(&self, name: &str, program: &str, args: &[&str]) -> Run {
        let out = self
            .command(name, program, args)
            .output()
            .unwrap_or_else(|e| panic!("running {program} in {name}: {e}"));
        Run::new(format!("{name}$ {program} {}", args.join(" ")), out)
    }

    /// Run a shell script in a host.
    pub fn sh(&self, name: &str, script: &str) -> Run {
        self.run(name, "bash", &["-euo", "pipefail", "-c", script])
    }

    /// `systemctl ARGS` in a host (the stand-in); panics unless it exits 0.
    pub fn systemctl(&self, name: &str, args: &[&str]) -> Run {
        self.run(name, "systemctl", args).ok()
    }

    /// Write a file below the host's root (`path` relative to it), creating directories.
    pub fn write(&self, name: &str, path: &str, contents: &[u8]) {
        let p = self.root(name).join(path);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("mkdir {}: {e}", d.display()));
        }
        std::fs::write(&p, contents).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    }

    /// Install a munge key on a host as the munge package would have it (munge:munge 0400;
    /// the owner is set inside the host, whose root may number the munge user differently).
    pub fn set_munge_key(&self, name: &str, key: &[u8]) {
        let p = self.root(name).join("etc/munge/munge.key");
        let _ = std::fs::remove_file(&p);
        std::fs::write(&p, key).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        self.sh(
            name,
            "chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key",
        )
        .ok();
    }

    pub fn munge_key(&self, name: &str) -> Vec<u8> {
        let p = self.root(name).join("etc/munge/munge.key");
        std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    /// Create fake GPU device nodes `/dev/nvidiaN` (char 195:N) in a host, as the NVIDIA
    /// driver does. They are real device nodes, which is what slurmd checks `File=` against.
    pub fn add_gpus(&self, name: &str, minors: &[u32]) {
        for m in minors {
            let p = self.root(name).join(format!("dev/nvidia{m}"));
            if p.exists() {
                continue;
            }
            let st = Command::new("mknod")
                .args(["-m", "0666"])
                .arg(&p)
                .args(["c", "195", &m.to_string()])
                .status()
                .expect("mknod");
            assert!(st.success(), "mknod {}", p.display());
        }
    }

    /// Remove fake GPU device nodes from a host.
    pub fn remove_gpus(&self, name: &str, minors: &[u32]) {
        for m in minors {
            let _ = std::fs::remove_file(self.root(name).join(format!("dev/nvidia{m}")));
        }
    }

    /// Poll `check` until it returns `Ok`, or panic with its last `Err` after `timeout`.
    pub fn wait_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut() -> Result<T, String>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            match check() {
                Ok(v) => return v,
                Err(e) if Instant::now() >= deadline => {
                    panic!(
                        "timed out after {timeout:?} waiting for {what}: {e}\n{}",
                        self.logs()
                    )
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    /// `scontrol show node NAME` parsed into key/value pairs (run on `from`).
    pub fn node(&self, from: &str, node: &str) -> Result<NodeInfo, String> {
        let r = self.run(from, "scontrol", &["show", "node", node]);
        if !r.success() {
            return Err(r.to_string());
        }
        Ok(NodeInfo::parse(&r.stdout))
    }

    /// Wait until `node` is IDLE (no DRAIN/INVALID/NOT_RESPONDING flags) with exactly `gres`
    /// (compared without the socket annotations `(S:0)` Slurm adds when gres.conf has `Cores=`).
    pub fn wait_node_idle(&self, from: &str, node: &str, gres: &str, timeout: Duration) {
        self.wait_for(
            &format!("node {node} IDLE with Gres={gres}"),
            timeout,
            || {
                let n = self.node(from, node)?;
                if n.get("State") == Some("IDLE")
                    && n.get("Gres").map(strip_sockets) == Some(gres.into())
                {
                    Ok(())
                } else {
                    Err(format!(
                        "State={:?} Gres={:?} Reason={:?}",
                        n.get("State"),
                        n.get("Gres"),
                        n.get("Reason")
                    ))
                }
            },
        )
    }

    /// `SlurmdStartTime=` of `node` as slurmctld has it (run on `from`): the start time its
    /// slurmd sent with its last registration, so it changes once a restarted slurmd has
    /// registered. For [`Cluster::wait_node_reregistered`]. Returns once the clock is in a
    /// later second: the stamp has whole seconds, and a slurmd restarted within the second its
    /// predecessor started in would register the same one (seen in CI: a key broken and fixed,
    /// and slurmd restarted twice, all within 0.8 s).
    #[track_caller]
    pub fn slurmd_start_time(&self, from: &str, node: &str) -> String {
        let n = self
            .node(from, node)
            .unwrap_or_else(|e| panic!("scontrol show node {node}: {e}"));
        let stamp = n
            .get("SlurmdStartTime")
            .unwrap_or_else(|| panic!("no SlurmdStartTime for {node}: {:?}", n.pairs))
            .to_string();
        let into_second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        std::thread::sleep(Duration::from_nanos(u64::from(1_000_000_000 - into_second)));
        stamp
    }

    /// [`Cluster::wait_node_idle`] for a node whose slurmd was restarted after `before` was read
    /// ([`Cluster::slurmd_start_time`]): also waits until the new slurmd has registered
    /// (`SlurmdStartTime` differs). A node that never left IDLE in slurmctld (a slurmd stopped
    /// for less than `SlurmdTimeout`, a controller restarted from its state) passes
    /// `wait_node_idle` at once, before its new slurmd is there to run a job.
    #[track_caller]
    pub fn wait_node_reregistered(
        &self,
        from: &str,
        node: &str,
        gres: &str,
        before: &str,
        timeout: Duration,
    ) {
        self.wait_for(
            &format!(
                "node {node} registered by a slurmd started after {before}, IDLE with Gres={gres}"
            ),
            timeout,
            || {
                let n = self.node(from, node)?;
                if n.get("State") == Some("IDLE")
                    && n.get("Gres").map(strip_sockets) == Some(gres.into())
                    && n.get("SlurmdStartTime").is_some_and(|t| t != before)
                {
                    Ok(())
                } else {
                    Err(format!(
                        "State={:?} Gres={:?} SlurmdStartTime={:?} Reason={:?}",
                        n.get("State"),
                        n.get("Gres"),
                        n.get("SlurmdStartTime"),
                        n.get("Reason")
                    ))
                }
            },
        )
    }

    /// `Some("HOST: slurmd ...")` when the host's slurmd is not running (the systemctl
    /// stand-in's `is-active` says `failed` or `inactive`; `activating`, a notify unit not yet
    /// ready, counts as running), saying whether it left a core file (which is removed, so the
    /// next death is seen as well); `None` while it runs.
    ///
    /// Slurm 22.05.8's slurmd dies at start (SIGSEGV in `write_configs_to_conf_cache`) when
    /// slurmctld's `scontrol reconfigure` reaches it before its first registration with that
    /// slurmctld was processed: slurmctld still sends that node the 20.11-format config push,
    /// which 22.05.8's slurmd unpacks into a NULL list (docs/e2e.md, "slurmd dies at start").
    pub fn slurmd_died(&self, host: &str) -> Option<String> {
        let state = self.run(host, "systemctl", &["is-active", "slurmd"]).stdout;
        if !matches!(state.trim(), "failed" | "inactive") {
            return None;
        }
        let how = if std::fs::remove_file(self.root(host).join("var/log/slurm/core")).is_ok() {
            "killed by a signal, core dumped"
        } else {
            "not running"
        };
        Some(format!("{host}: slurmd {how}"))
    }

    /// [`Cluster::wait_node_idle`] that, while waiting, looks every 3 s whether `node`'s slurmd
    /// died ([`Cluster::slurmd_died`]) and fails the test at once if it did. The charms keep a
    /// new node's slurmd stopped until `node-configured`, which resumes the node without a
    /// reconfigure, so no `scontrol reconfigure` reaches a slurmd before its first registration
    /// and 22.05.8's death at start cannot happen in these flows (docs/e2e.md, "slurmd dies at
    /// start").
    #[track_caller]
    pub fn wait_node_idle_alive(&self, from: &str, node: &str, gres: &str, timeout: Duration) {
        let mut last_check = Instant::now();
        self.wait_for(
            &format!("node {node} IDLE with Gres={gres}"),
            timeout,
            || {
                let n = self.node(from, node)?;
                if n.get("State") == Some("IDLE")
                    && n.get("Gres").map(strip_sockets) == Some(gres.into())
                {
                    return Ok(());
                }
                if last_check.elapsed() >= Duration::from_secs(3) {
                    last_check = Instant::now();
                    self.assert_slurmd_alive(node);
                }
                Err(format!(
                    "State={:?} Gres={:?} Reason={:?}",
                    n.get("State"),
                    n.get("Gres"),
                    n.get("Reason")
                ))
            },
        );
    }

    /// Fails the test when `host`'s slurmd died ([`Cluster::slurmd_died`]), with the logs.
    #[track_caller]
    pub fn assert_slurmd_alive(&self, host: &str) {
        if let Some(d) = self.slurmd_died(host) {
            panic!(
                "{d}: the charms must not let slurmd die at start (docs/e2e.md, \"slurmd dies at \
                 start\")\n{}",
                self.logs()
            );
        }
    }

    /// The tail of every daemon log of every host, for failure messages.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        for h in &self.hosts {
            for rel in [
                "var/log/slurm/slurmctld.log",
                "var/log/slurm/slurmd.log",
                "var/log/e2e-slurmctld.out",
                "var/log/e2e-slurmd.out",
                "var/log/munge/munged.log",
                "var/log/e2e-munge.out",
                "var/log/e2e-systemctl.log",
            ] {
                let p = h.root.join(rel);
                if let Ok(text) = std::fs::read_to_string(&p) {
                    let lines: Vec<&str> = text.lines().collect();
                    let tail = &lines[lines.len().saturating_sub(15)..];
                    let _ = writeln!(s, "---- {} {rel} (last {} lines)", h.name, tail.len());
                    for l in tail {
                        let _ = writeln!(s, "{l}");
                    }
                }
            }
        }
        s
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // EOF on its stdin makes `cluster serve` tear everything down and exit.
        drop(self.stdin.take());
        if let Some(mut child) = self.serve.take() {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        // `serve` is our child; killing it kills the holders (pdeathsig).
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
        if std::thread::panicking() || self.keep_dir {
            eprintln!("e2e: cluster files kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// PIDs of the processes whose PID namespace is `ns` (a `/proc/PID/ns/pid` link target).
pub fn processes_in_pid_ns(ns: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if std::fs::read_link(e.path().join("ns/pid")).is_ok_and(|l| l == ns) {
                out.push(pid);
            }
        }
    }
    out
}

/// The result of a command run in a host.
pub struct Run {
    pub what: String,
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    fn new(what: String, out: Output) -> Run {
        Run {
            what,
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// Panic unless the command exited 0.
    #[track_caller]
    pub fn ok(self) -> Run {
        assert!(self.success(), "command failed: {self}");
        self
    }

    /// Panic if the command exited 0.
    #[track_caller]
    pub fn fails(self) -> Run {
        assert!(!self.success(), "command should have failed: {self}");
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} -> {}\n--- stdout\n{}--- stderr\n{}",
            self.what, self.status, self.stdout, self.stderr
        )
    }
}

/// `scontrol show node` output as key/value pairs (first node only).
#[derive(Debug, Default)]
pub struct NodeInfo {
    pub pairs: Vec<(String, String)>,
}

impl NodeInfo {
    pub fn parse(text: &str) -> NodeInfo {
        let mut pairs = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() {
                if !pairs.is_empty() {
                    break;
                }
                continue;
            }
            // `Reason=` and `OS=` values contain spaces and run to the end of the line.
            if let Some(v) = line.strip_prefix("Reason=") {
                pairs.push(("Reason".into(), v.to_string()));
                continue;
            }
            if let Some(v) = line.strip_prefix("OS=") {
                pairs.push(("OS".into(), v.to_string()));
                continue;
            }
            for tok in line.split_whitespace() {
                if let Some((k, v)) = tok.split_once('=') {
                    pairs.push((k.to_string(), v.to_string()));
                }
            }
        }
        NodeInfo { pairs }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A `Gres=` value without Slurm's socket annotations: `gpu:t4:2(S:0-1)` -> `gpu:t4:2`.
pub fn strip_sockets(gres: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in gres.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// The environment variables of a job step as printed by `env`.
pub fn env_var<'a>(env_output: &'a str, key: &str) -> Option<&'a str> {
    env_output
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

/// Wall-clock stopwatch with named laps, printed at the end of a scenario.
pub struct Stopwatch {
    start: Instant,
    last: Instant,
    laps: Vec<(String, Duration)>,
}

impl Default for Stopwatch {
    fn default() -> Self {
        Self::new()
    }
}

impl Stopwatch {
    pub fn new() -> Stopwatch {
        let now = Instant::now();
        Stopwatch {
            start: now,
            last: now,
            laps: Vec::new(),
        }
    }

    pub fn lap(&mut self, what: &str) {
        let now = Instant::now();
        self.laps.push((what.to_string(), now - self.last));
        self.last = now;
    }

    pub fn report(&self) -> String {
        let mut s = String::new();
        for (what, d) in &self.laps {
            let _ = writeln!(s, "  {:>7.2}s  {what}", d.as_secs_f64());
        }
        let _ = writeln!(s, "  {:>7.2}s  total", self.start.elapsed().as_secs_f64());
        s
    }
}

/// Keep a `Write` import in use for callers that stream to stderr.
pub fn eprint_block(title: &str, body: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "===== {title}\n{body}");
}

/// Daemon log files checked by [`daemon_complaints`] (relative to a host's root).
const DAEMON_LOGS: &[&str] = &[
    "var/log/slurm/slurmctld.log",
    "var/log/slurm/slurmd.log",
    "var/log/e2e-slurmctld.out",
    "var/log/e2e-slurmd.out",
];

/// Lines the daemons log that are not about the files the charms write, each with the reason
/// it is allowed (docs/e2e.md, "Daemon logs"). Matched as substrings.
pub const ALLOWED_COMPLAINTS: &[(&str, &str)] = &[
    (
        "state file",
        "first start of a fresh StateSaveLocation: slurmctld looks for the state files of a \
         previous run (`Could not open node state file ...`)",
    ),
    (
        "Trying backup state save file",
        "the second line of the same first-start message",
    ),
    (
        "plugstack.conf",
        "Debian's own /etc/slurm/plugstack.conf (`include /etc/slurm/plugstack.conf.d/*.conf`, \
         not written by the charms): Slurm 24.11+ does not expand the glob and says so",
    ),
    (
        "restricted to a subset of cpus",
        "slurmstepd of a job step on a host whose cgroup (the test harness's, below the \
         machine's) holds fewer CPUs than the machine: a property of the harness",
    ),
    (
        "Configured MailProg is invalid",
        "the test roots install no mail program (/bin/mail); the charm leaves MailProg at \
         Slurm's default for operators who install one",
    ),
    (
        "pmix",
        "22.05: Debian's slurm-wlm package ships mpi/pmix_v4 without libpmix2 installed \
         (`can not load PMIx library`); not a file the charms write",
    ),
    (
        "cgroup/v1 plugin is deprecated",
        "26.05 on a machine booted with cgroup v1 controllers (this CI machine); Ubuntu \
         24.04 and 26.04 boot cgroup v2 only, where Slurm picks cgroup/v2",
    ),
    (
        "Zero Bytes were transmitted or received",
        "22.05's slurmctld logs each TCP connection that sends nothing: the slurmd charm's \
         port probe of 6817 before `scontrol ping` (24.11 and 26.05 do not log it)",
    ),
    (
        "appears to have a different slurm.conf than the slurmctld",
        "a node that registers between the controller's restart and its `scontrol \
         reconfigure` still has the previous config; transient, gone after the reconfigure",
    ),
    (
        "DNS SRV lookup failed",
        "24.11+: slurmd units have no ConditionPathExists, so the package starts slurmd \
         before the charm has configured it (no --conf-server yet); it retries until the charm \
         restarts it configured",
    ),
    (
        "resolve_ctls_from_dns_srv",
        "the first line of the same message",
    ),
    (
        "failed to load configs. Retrying in 10 seconds",
        "24.11+: a configless slurmd waiting for its config (unconfigured, or its node not yet \
         in the controller's slurm.conf); the charm restarts it once configured",
    ),
    (
        "Unable to determine this slurmd's NodeName",
        "24.11+: a new unit's slurmd fetched the controller's config before the controller \
         had added its node; the charm restarts it once the node is in",
    ),
    (
        "slurm_bufs_sendto(msg_type=SRUN_JOB_COMPLETE)",
        "srun of a finished step already closed its socket when slurmctld tells it the job \
         completed (a race of short test jobs, not a configuration problem)",
    ),
    (
        "High latency for 1000 calls to gettimeofday()",
        "slurmctld's start-up clock check on a loaded 2-CPU CI machine (several clusters run \
         at once); a property of the machine",
    ),
    (
        "agent_fini: left",
        "24.11's slurmctld leaving (restart, or the re-exec of `scontrol reconfigure`) while its \
         agent threads still message the nodes; part of its shutdown, not about a file",
    ),
    (
        "msg_type=7004",
        "22.05's wording of the same race (7004 is SRUN_JOB_COMPLETE)",
    ),
    (
        "Unable to register: Connection reset by peer",
        "a slurmd's registration in flight when slurmctld restarts (22.05 restarts for every \
         node change) or is slow to answer on a loaded machine; slurmd retries every second \
         and the tests check the node IDLE afterwards (seen in e2e_enlist)",
    ),
    (
        "Unable to register: Unexpected missing socket error",
        "the same registration race, when the restart closes the connection before the reply",
    ),
    (
        "msg_type=1002: Unexpected missing socket error",
        "the first line of the same message (1002 is MESSAGE_NODE_REGISTRATION_STATUS)",
    ),
    (
        "Socket timed out on send/recv operation",
        "a message (a registration, a ping) that did not arrive within MessageTimeout (10 s) on \
         a loaded 2-CPU machine running several clusters; Slurm retries it, and every test \
         checks the nodes IDLE and its jobs' results itself (seen in e2e_enlist)",
    ),
];

/// Error, warning, fatal and deprecation lines in every host's Slurm daemon logs that no entry
/// of [`ALLOWED_COMPLAINTS`] or `extra_allowed` explains: `host: file: line`, each message once.
pub fn daemon_complaints(cluster: &Cluster, extra_allowed: &[&str]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for h in cluster.hosts() {
        for rel in DAEMON_LOGS {
            let Ok(text) = std::fs::read_to_string(h.root.join(rel)) else {
                continue;
            };
            for line in text.lines() {
                let lower = line.to_ascii_lowercase();
                let bad = ["error", "warning", "fatal", "deprecat"]
                    .iter()
                    .any(|w| lower.contains(w));
                if !bad
                    || ALLOWED_COMPLAINTS.iter().any(|(p, _)| line.contains(p))
                    || extra_allowed.iter().any(|p| line.contains(p))
                {
                    continue;
                }
                // the message without its timestamp or `slurmd: ` prefix, to report it once
                let msg = line
                    .split_once("] ")
                    .map_or(line, |(_, m)| m)
                    .trim_start_matches("slurmd: ")
                    .trim_start_matches("slurmctld: ");
                if seen.insert((h.name.clone(), msg.to_string())) {
                    out.push(format!("{}: {rel}: {line}", h.name));
                }
            }
        }
    }
    out
}
