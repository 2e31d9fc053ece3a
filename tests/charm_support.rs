//! Shared helpers for the `tests/charm_*.rs` simulator tests (included with
//! `#[path = "charm_support.rs"] mod support;`): charm directories holding the real binary,
//! per-unit host roots (`SLURM_CHARMS_ROOT`), recording fakes of the commands the charms run,
//! and per-unit fake GPUs (the fake NVML through `LD_LIBRARY_PATH` + `FAKE_NVML_CONFIG`).
#![allow(dead_code)]

use juju_sim::{DeploySpec, Hook, SimOptions, Simulator, UnitExtras};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Recording fakes: each appends `<name> <args>` to `$SLURM_CHARMS_ROOT/commands.log`;
/// `systemctl` keeps `running-<service>` marker files (holding the starting fake's PID as the
/// unit's main PID) so `is-active` and `show` (`MainPID=`, `ActiveState=` per unit) tell the
/// truth. Marker files under the root: `fail-<name>` fails every call of a program, `fail-<name>-<arg1>`
/// (e.g. `fail-scontrol-reconfigure`) one subcommand, printing the file's text,
/// `fail-once-<name>-<arg1>` that subcommand's next call only; `sleep-<name>`
/// makes the program sleep that many seconds first, `sleep-<name>-<arg1>` one subcommand; `slurm-version.txt` (e.g. `24.11.5`) is the
/// version `slurmd -V` and `slurmctld -V` print instead of 22.05.8. `sinfo.txt` is what
/// `sinfo` prints; `sinfo-after-restart.txt` replaces it when slurmd is (re)started, as the
/// new slurmd's registration changes the node's state in Slurm. `scontrol reconfigure` fails
/// as the real one does while slurmctld does not run (no `running-slurmctld`).
const FAKE: &str = r#"#!/bin/sh
mkdir -p "$SLURM_CHARMS_ROOT"
name=$(basename "$0")
echo "$name $*" >> "$SLURM_CHARMS_ROOT/commands.log"
case "$name $1" in
  "slurmd -C")
    if [ -f "$SLURM_CHARMS_ROOT/slurmd-C.txt" ]; then cat "$SLURM_CHARMS_ROOT/slurmd-C.txt"; else
    echo "NodeName=$(basename "$SLURM_CHARMS_ROOT") CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=31848"
    echo "UpTime=0-00:08:47"; fi ;;
  "slurmd -V"|"slurmctld -V")
    if [ -f "$SLURM_CHARMS_ROOT/slurm-version.txt" ]; then echo "slurm-wlm $(cat "$SLURM_CHARMS_ROOT/slurm-version.txt")"; else echo "slurm-wlm 22.05.8"; fi ;;
  "sinfo "*) [ -f "$SLURM_CHARMS_ROOT/sinfo.txt" ] && cat "$SLURM_CHARMS_ROOT/sinfo.txt" ;;
  "scontrol reconfigure") if [ ! -f "$SLURM_CHARMS_ROOT/running-slurmctld" ]; then
    echo "slurm_reconfigure error: Unable to contact slurm controller (connect failure)" >&2; exit 1; fi ;;
  "systemctl restart"|"systemctl start") for u; do :; done; echo $$ > "$SLURM_CHARMS_ROOT/running-$u"
    if [ "$u" = slurmd ] && [ -f "$SLURM_CHARMS_ROOT/sinfo-after-restart.txt" ]; then
      mv "$SLURM_CHARMS_ROOT/sinfo-after-restart.txt" "$SLURM_CHARMS_ROOT/sinfo.txt"; fi ;;
  "systemctl stop") for u; do :; done; rm -f "$SLURM_CHARMS_ROOT/running-$u" ;;
  "systemctl is-active") for u; do :; done; [ -f "$SLURM_CHARMS_ROOT/running-$u" ] || exit 3 ;;
  "systemctl show") sep=
    for u; do case $u in show|-*) continue ;; esac
      printf '%s' "$sep"; sep='
'
      if [ -f "$SLURM_CHARMS_ROOT/running-$u" ]; then
        echo "MainPID=$(cat "$SLURM_CHARMS_ROOT/running-$u")"; echo "ActiveState=active"
      else echo "MainPID=0"; echo "ActiveState=inactive"; fi
    done ;;
esac
if [ -f "$SLURM_CHARMS_ROOT/sleep-$name" ]; then sleep "$(cat "$SLURM_CHARMS_ROOT/sleep-$name")"; fi
if [ -f "$SLURM_CHARMS_ROOT/sleep-$name-$1" ]; then sleep "$(cat "$SLURM_CHARMS_ROOT/sleep-$name-$1")"; fi
if [ -f "$SLURM_CHARMS_ROOT/fail-$name" ]; then echo "$name failed (test)" >&2; exit 1; fi
if [ -f "$SLURM_CHARMS_ROOT/fail-$name-$1" ]; then echo "$name $1 failed (test): $(cat "$SLURM_CHARMS_ROOT/fail-$name-$1")" >&2; exit 1; fi
if [ -f "$SLURM_CHARMS_ROOT/fail-once-$name-$1" ]; then echo "$name $1 failed (test): $(cat "$SLURM_CHARMS_ROOT/fail-once-$name-$1")" >&2
  rm -f "$SLURM_CHARMS_ROOT/fail-once-$name-$1"; exit 1; fi
exit 0
"#;

/// A test cluster: charm dirs, fakes, the fake NVML, and the simulator.
pub struct Cluster {
    /// Everything lives here.
    pub dir: tempfile::TempDir,
    /// The simulator.
    pub sim: Simulator,
    /// The slurmd charm dir.
    pub slurmd_charm: PathBuf,
    /// The slurmctld charm dir.
    pub slurmctld_charm: PathBuf,
    fakes: PathBuf,
    nvml: PathBuf,
}

/// Builds a charm directory: yaml files and the binary as `dispatch` (symlinked), as
/// `charm/pack.sh` packs it.
pub fn charm_dir(dest: &Path, yaml_dir: &Path) -> PathBuf {
    yaml_files(dest, yaml_dir);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_slurm-charm"), dest.join("dispatch")).unwrap();
    dest.to_path_buf()
}

/// A charm directory with `yaml_dir`'s metadata whose `dispatch` does nothing (a script that
/// exits 0): a hostile application that only writes relation data the test plants. Never
/// written through [`charm_dir`]'s symlink, which would overwrite the test binary.
pub fn inert_charm_dir(dest: &Path, yaml_dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    yaml_files(dest, yaml_dir);
    std::fs::write(dest.join("dispatch"), "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        dest.join("dispatch"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    dest.to_path_buf()
}

fn yaml_files(dest: &Path, yaml_dir: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for f in ["metadata.yaml", "config.yaml", "actions.yaml"] {
        std::fs::copy(yaml_dir.join(f), dest.join(f)).unwrap();
    }
}

fn fake_nvml_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let so = exe.parent().unwrap().join("libfake_nvml.so");
    assert!(so.is_file(), "fake NVML not built at {}", so.display());
    so
}

impl Default for Cluster {
    fn default() -> Self {
        Self::new()
    }
}

impl Cluster {
    /// Deploys `app` with `units` units of an inert charm (the slurmd charm's metadata, a
    /// `dispatch` that does nothing): a hostile or careless application whose relation data
    /// the test writes itself ([`Cluster::publish`]).
    pub fn deploy_inert(&mut self, app: &str, units: u32) {
        let dir = self.dir.path().join(format!("charms/{app}"));
        inert_charm_dir(&dir, &repo());
        let spec = self.spec(app, &dir, units);
        self.sim.deploy(spec).unwrap();
    }

    /// Writes `partition` into `app`'s bag and `node` into `unit`'s on relation `id`, as the
    /// remote application would, then runs the controller's relation-changed hooks for both
    /// (application first) and settles.
    pub fn publish(&mut self, id: u32, app: &str, partition: &str, unit: &str, node: &str) {
        self.sim.with_model_mut(|m| {
            let r = m.relations.get_mut(&id).unwrap();
            r.app_bags
                .entry(app.into())
                .or_default()
                .insert("partition".into(), partition.into());
            r.unit_bags
                .entry(unit.into())
                .or_default()
                .insert("node".into(), node.into());
        });
        self.sim
            .queue_hook("slurmctld/0", Hook::RelationChanged(id, None));
        self.sim
            .queue_hook("slurmctld/0", Hook::RelationChanged(id, Some(unit.into())));
        self.sim.settle().unwrap();
    }

    /// A cluster with charm dirs for both charms and a simulator.
    pub fn new() -> Self {
        Self::with_options(SimOptions::default())
    }

    /// As [`Cluster::new`] with simulator options.
    pub fn with_options(opts: SimOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let slurmd_charm = charm_dir(&dir.path().join("charms/slurmd"), &repo());
        let slurmctld_charm = charm_dir(
            &dir.path().join("charms/slurmctld"),
            &repo().join("charm/slurmctld"),
        );
        Self::from_dirs(dir, slurmd_charm, slurmctld_charm, opts)
    }

    /// A cluster deploying the given charm dirs.
    pub fn from_dirs(
        dir: tempfile::TempDir,
        slurmd_charm: PathBuf,
        slurmctld_charm: PathBuf,
        opts: SimOptions,
    ) -> Self {
        let fakes = dir.path().join("fakes");
        std::fs::create_dir_all(&fakes).unwrap();
        let script = fakes.join("fake-command");
        std::fs::write(&script, FAKE).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        for name in [
            "apt-get",
            "systemctl",
            "scontrol",
            "sinfo",
            "slurmd",
            "slurmctld",
            "nvidia-modprobe",
        ] {
            std::os::unix::fs::symlink(&script, fakes.join(name)).unwrap();
        }
        let nvml = dir.path().join("nvml");
        std::fs::create_dir_all(&nvml).unwrap();
        std::fs::copy(fake_nvml_lib(), nvml.join("libnvidia-ml.so.1")).unwrap();
        let sim = Simulator::with_options(opts).unwrap();
        Cluster {
            dir,
            sim,
            slurmd_charm,
            slurmctld_charm,
            fakes,
            nvml,
        }
    }

    /// The host root of a unit (`<tmp>/units/<app>-<n>`).
    pub fn root(&self, unit: &str) -> PathBuf {
        self.dir.path().join("units").join(unit.replace('/', "-"))
    }

    fn extras(&self) -> impl Fn(&str) -> UnitExtras + Send + Sync + 'static {
        let units = self.dir.path().join("units");
        let fakes = self.fakes.clone();
        let nvml = self.nvml.clone();
        move |unit: &str| {
            let root = units.join(unit.replace('/', "-"));
            std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
            std::fs::write(
                root.join("proc/sys/kernel/hostname"),
                unit.replace('/', "-"),
            )
            .unwrap();
            let cfg = root.join("nvml.json");
            if !cfg.exists() {
                std::fs::write(&cfg, r#"{"devices":[]}"#).unwrap();
            }
            let mut e = UnitExtras::default();
            e.env
                .insert("SLURM_CHARMS_ROOT".into(), root.display().to_string());
            e.env
                .insert("LD_LIBRARY_PATH".into(), nvml.display().to_string());
            e.env
                .insert("FAKE_NVML_CONFIG".into(), cfg.display().to_string());
            e.path.push(fakes.clone());
            e
        }
    }

    /// A deploy spec for `app` from `charm` with the test extras.
    pub fn spec(&self, app: &str, charm: &Path, units: u32) -> DeploySpec {
        DeploySpec::new(app, charm)
            .units(units)
            .extras_fn(self.extras())
    }

    /// Deploys `n` slurmd units as `app`.
    pub fn deploy_slurmd(&mut self, app: &str, n: u32) -> Vec<String> {
        let spec = self.spec(app, &self.slurmd_charm.clone(), n);
        self.sim.deploy(spec).unwrap()
    }

    /// Deploys one slurmctld unit.
    pub fn deploy_slurmctld(&mut self) -> Vec<String> {
        let spec = self.spec("slurmctld", &self.slurmctld_charm.clone(), 1);
        self.sim.deploy(spec).unwrap()
    }

    /// Gives `unit` these GPUs (fake NVML devices) and creates their `/dev/nvidiaN` files.
    pub fn set_gpus(&self, unit: &str, devices: &[(&str, u32, &str)]) {
        let root = self.root(unit);
        std::fs::create_dir_all(root.join("dev")).unwrap();
        let list: Vec<serde_json::Value> = devices
            .iter()
            .map(|(name, minor, bus)| {
                std::fs::write(root.join(format!("dev/nvidia{minor}")), "").unwrap();
                serde_json::json!({
                    "name": name,
                    "uuid": format!("GPU-{minor:08x}-0000-4000-8000-{:012x}", unit.len()),
                    "pci_bus_id": bus,
                    "minor": minor,
                    "memory_total": 16u64 << 30,
                })
            })
            .collect();
        let cfg = serde_json::json!({"driver_version": "550.54.15", "cuda_driver_version": 12040, "devices": list});
        std::fs::write(root.join("nvml.json"), cfg.to_string()).unwrap();
    }

    /// Commands a unit ran, in order.
    pub fn commands(&self, unit: &str) -> Vec<String> {
        std::fs::read_to_string(self.root(unit).join("commands.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Asserts that a unit (re)started slurmd (`systemctl restart --no-block slurmd`).
    pub fn assert_started_slurmd(&self, unit: &str) {
        let commands = self.commands(unit);
        assert!(
            commands
                .iter()
                .any(|l| l == "systemctl restart --no-block slurmd"),
            "{unit} did not start slurmd: {commands:?}"
        );
    }

    /// Forgets a unit's recorded commands.
    pub fn clear_commands(&self, unit: &str) {
        let _ = std::fs::remove_file(self.root(unit).join("commands.log"));
    }

    /// A host file of a unit, as text ("" when missing).
    pub fn file(&self, unit: &str, path: &str) -> String {
        std::fs::read_to_string(self.root(unit).join(path.trim_start_matches('/')))
            .unwrap_or_default()
    }

    /// Raw bytes of a host file of a unit.
    pub fn bytes(&self, unit: &str, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root(unit).join(path.trim_start_matches('/'))).ok()
    }

    /// slurm.conf of the controller unit.
    pub fn slurm_conf(&self) -> String {
        self.file("slurmctld/0", "/etc/slurm/slurm.conf")
    }

    /// gres.conf of the controller unit.
    pub fn gres_conf(&self) -> String {
        self.file("slurmctld/0", "/etc/slurm/gres.conf")
    }

    /// The lines of slurm.conf after the charm-owned globals (nodes, DownNodes, partitions).
    pub fn slurm_records(&self) -> Vec<String> {
        self.slurm_conf()
            .lines()
            .filter(|l| {
                l.starts_with("NodeName=")
                    || l.starts_with("DownNodes=")
                    || l.starts_with("PartitionName=")
            })
            .map(str::to_string)
            .collect()
    }

    /// Workload status `(status, message)` of a unit.
    pub fn status(&self, unit: &str) -> (String, String) {
        let s = self.sim.unit_status(unit).unwrap();
        (s.status.clone(), s.message.clone())
    }

    /// Every hook that failed so far: `<unit> <hook>: <stderr>`.
    pub fn failed_hooks(&self) -> Vec<String> {
        self.sim
            .records()
            .iter()
            .filter(|r| !r.succeeded())
            .map(|r| format!("{} {}: {}", r.unit, r.hook, r.stderr))
            .collect()
    }

    /// Asserts no unit is in error, printing the failing hooks' stderr otherwise.
    pub fn assert_no_errors(&self) {
        let failed = self.failed_hooks();
        assert!(failed.is_empty(), "failed hooks:\n{}", failed.join("\n"));
    }
}

/// Two Tesla T4s.
pub const TWO_T4: &[(&str, u32, &str)] = &[
    ("Tesla T4", 0, "00000000:3B:00.0"),
    ("Tesla T4", 1, "00000000:D8:00.0"),
];

// Shared flow fixtures.

/// First line of both rendered files.
pub const HEADER: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n";

/// The charm-owned globals of slurm.conf with the default config.
pub const GLOBALS: &str = "ClusterName=osd-cluster
SlurmctldHost=slurmctld-0
SlurmctldParameters=enable_configless
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
HealthCheckProgram=/var/lib/slurm/slurmd-charm/slurmd-charm-health-check
HealthCheckInterval=60
HealthCheckNodeState=ANY
";

/// What the fake `slurmd -C` reports for every node (after `NodeName`).
pub const FACTS: &str =
    "CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=31848";

/// What every node publishes from [`FACTS`] with the default `memory-headroom` (2%):
/// RealMemory 31848 − 637 = 31211, rounded down to a multiple of 128 MB.
pub const PUBLISHED_FACTS: &str =
    "CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=31104";

/// One A100 and two L40S (minors 1 and 3), listed out of PCI order.
pub const MIXED: &[(&str, u32, &str)] = &[
    ("NVIDIA L40S", 3, "00000000:D8:00.0"),
    ("NVIDIA A100 80GB PCIe", 0, "00000000:3B:00.0"),
    ("NVIDIA L40S", 1, "00000000:5E:00.0"),
];

/// Controller plus three slurmd units: 2×T4, mixed A100 + 2×L40S (minors 1,3), no GPUs.
pub fn three_nodes() -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 3);
    c.set_gpus("slurmd/0", TWO_T4);
    c.set_gpus("slurmd/1", MIXED);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

/// The status message suffix of a new node, whose slurmd `node-configured` starts.
pub const NEW_NODE_NOTE: &str = "; new node: slurmd starts with node-configured";

/// The stand-in COS subordinate (`opentelemetry-collector`): the `cos-agent` requirer, hooks
/// that do nothing; written under `work`.
fn cos_subordinate_charm(work: &Path) -> PathBuf {
    let dir = work.join("charm-opentelemetry-collector");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("metadata.yaml"),
        "name: opentelemetry-collector\nsubordinate: true\nrequires:\n  cos-agent:\n    \
         interface: cos_agent\n",
    )
    .unwrap();
    let dispatch = dir.join("dispatch");
    std::fs::write(&dispatch, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&dispatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Deploys the stand-in COS subordinate (once per cluster), relates `app` to it over
/// `cos-agent`, settles, and returns the relation id.
pub fn relate_cos_agent(c: &mut Cluster, app: &str) -> u32 {
    let sub = cos_subordinate_charm(c.dir.path());
    c.sim
        .deploy(DeploySpec::new("opentelemetry-collector", sub))
        .unwrap();
    let cos = c
        .sim
        .integrate(
            &format!("{app}:cos-agent"),
            "opentelemetry-collector:cos-agent",
        )
        .unwrap();
    c.sim.settle().unwrap();
    c.assert_no_errors();
    cos
}

/// Runs `node-configured` on `units` (each completes) and settles.
pub fn configure(c: &mut Cluster, units: &[&str]) {
    for u in units {
        let res = c
            .sim
            .run_action(u, "node-configured", serde_json::json!({}))
            .unwrap();
        assert_eq!(res.status, "completed", "{u}: {res:?}");
    }
    c.sim.settle().unwrap();
    c.assert_no_errors();
}

/// The slurmd–slurmctld relation id.
pub fn rel(c: &Cluster) -> u32 {
    c.sim.relation_id("slurmd", "slurmctld").unwrap()
}

/// The commands that restart, reconfigure or change node states.
pub fn restarts(cmds: &[String]) -> Vec<String> {
    cmds.iter()
        .filter(|c| c.contains("restart") || c.contains("reconfigure") || c.contains("state="))
        .cloned()
        .collect()
}

/// Lines of `new` not in `old` and of `old` not in `new`.
pub fn changed_lines(old: &str, new: &str) -> Vec<String> {
    let a: BTreeSet<&str> = old.lines().collect();
    let b: BTreeSet<&str> = new.lines().collect();
    a.symmetric_difference(&b).map(|s| s.to_string()).collect()
}
