//! NVIDIA driver install (issue 15 item 4), through the simulator, the real charm binary,
//! recording stand-ins (`ubuntu-drivers`, `apt-get`, `modprobe`) and the fake NVML: GPUs on the
//! PCI bus with no driver → one install, `modprobe nvidia`, exactly one `juju-reboot` when the
//! module does not load, and after the reboot the GPUs are detected and enlisted. Never a
//! second attempt with the same source.

#[path = "charm_support.rs"]
mod support;

use juju_sim::Hook;
use serde_json::json;
use support::*;

const UNIT: &str = "slurmd/0";

/// A slurmd unit whose machine has two NVIDIA GPUs in sysfs and no driver (NVML: driver not
/// loaded), `modprobe nvidia` failing until a reboot, and the given `nvidia-driver` config.
fn cluster(driver: Option<&str>, modprobe_fails: bool) -> Cluster {
    let mut c = Cluster::new();
    stand_ins(&c);
    let root = c.root(UNIT);
    for addr in ["0000:3b:00.0", "0000:d8:00.0"] {
        let dir = root.join("sys/bus/pci/devices").join(addr);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("vendor"), "0x10de\n").unwrap();
        std::fs::write(dir.join("class"), "0x030200\n").unwrap();
    }
    std::fs::write(root.join("nvml.json"), r#"{"init_error": 9}"#).unwrap();
    set_boot(&c, "boot-1");
    if modprobe_fails {
        std::fs::write(root.join("fail-modprobe"), "").unwrap();
    }
    c.deploy_slurmctld();
    let mut spec = c.spec("slurmd", &c.slurmd_charm.clone(), 1);
    if let Some(d) = driver {
        spec = spec.config("nvidia-driver", d);
    }
    c.sim.deploy(spec).unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

/// Recording stand-ins for the driver tools.
fn stand_ins(c: &Cluster) {
    let fakes = c.dir.path().join("fakes");
    for name in ["ubuntu-drivers", "modprobe"] {
        std::os::unix::fs::symlink(fakes.join("fake-command"), fakes.join(name)).unwrap();
    }
}

fn set_boot(c: &Cluster, id: &str) {
    let p = c.root(UNIT).join("proc/sys/kernel/random");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("boot_id"), format!("{id}\n")).unwrap();
}

fn reboots(c: &Cluster) -> u32 {
    c.sim.with_model(|m| m.units[UNIT].reboots)
}

fn count(c: &Cluster, line: &str) -> usize {
    c.commands(UNIT).iter().filter(|l| *l == line).count()
}

/// The machine comes back from its reboot with the driver loaded: start runs.
fn reboot_with_driver(c: &mut Cluster) {
    set_boot(c, "boot-2");
    let _ = std::fs::remove_file(c.root(UNIT).join("fail-modprobe"));
    c.set_gpus(UNIT, TWO_T4);
    c.sim.queue_hook(UNIT, Hook::Start);
    c.sim.settle().unwrap();
    c.assert_no_errors();
}

#[test]
fn installs_once_reboots_once_then_enlists_the_gpus() {
    let mut c = cluster(None, true);
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 1);
    assert_eq!(count(&c, "modprobe nvidia"), 1);
    assert_eq!(reboots(&c), 1, "exactly one reboot request");
    let history: Vec<(String, String)> = c
        .sim
        .unit_status_history(UNIT)
        .into_iter()
        .map(|s| (s.status, s.message))
        .collect();
    for s in &history {
        eprintln!("status: {}: {}", s.0, s.1);
    }
    let seen = |st: &str, msg: &str| history.iter().any(|(a, b)| a == st && b == msg);
    assert!(
        seen(
            "maintenance",
            "installing the NVIDIA driver (`ubuntu-drivers install --gpgpu`)"
        ),
        "{history:?}"
    );
    assert!(
        seen(
            "maintenance",
            "NVIDIA driver installed; rebooting to load it"
        ),
        "{history:?}"
    );
    // Hooks that run before the reboot happens wait; they install nothing.
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(
        c.status(UNIT),
        (
            "maintenance".into(),
            "NVIDIA driver installed (`ubuntu-drivers install --gpgpu`); waiting for the reboot"
                .into()
        )
    );
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 1);

    reboot_with_driver(&mut c);
    c.sim.update_status(Some("slurmd")).unwrap();
    let st = c.status(UNIT);
    eprintln!("after the reboot: {st:?}");
    assert_eq!(st.0, "active", "{st:?}");
    assert!(st.1.contains("gpu:tesla_t4:2"), "{st:?}");
    assert!(
        c.slurm_conf().contains("Gres=gpu:tesla_t4:2"),
        "{}",
        c.slurm_conf()
    );
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 1);
    assert_eq!(reboots(&c), 1);
}

#[test]
fn a_driver_that_still_does_not_load_after_the_reboot_blocks_without_looping() {
    let mut c = cluster(None, true);
    set_boot(&c, "boot-2");
    c.sim.queue_hook(UNIT, Hook::Start);
    c.sim.settle().unwrap();
    for _ in 0..3 {
        c.sim.update_status(Some("slurmd")).unwrap();
    }
    c.assert_no_errors();
    let (st, msg) = c.status(UNIT);
    eprintln!("still no driver: {st}: {msg}");
    assert_eq!(st, "blocked");
    assert!(msg.contains("driver still not loaded"), "{msg}");
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 1);
    assert_eq!(reboots(&c), 1);
}

#[test]
fn a_configured_package_that_loads_needs_no_reboot() {
    let mut c = cluster(Some("nvidia-driver-550-server"), false);
    assert_eq!(count(&c, "apt-get install -y nvidia-driver-550-server"), 1);
    assert_eq!(count(&c, "modprobe nvidia"), 1);
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 0);
    assert_eq!(reboots(&c), 0);
    // The module is loaded: NVML answers from the next hook on.
    c.set_gpus(UNIT, TWO_T4);
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(c.status(UNIT).0, "active", "{:?}", c.status(UNIT));
}

#[test]
fn a_failing_install_blocks_once_and_is_not_retried() {
    let mut c = Cluster::new();
    stand_ins(&c);
    let root = c.root(UNIT);
    let dir = root.join("sys/bus/pci/devices/0000:3b:00.0");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("vendor"), "0x10de\n").unwrap();
    std::fs::write(dir.join("class"), "0x030200\n").unwrap();
    std::fs::write(root.join("nvml.json"), r#"{"init_error": 9}"#).unwrap();
    set_boot(&c, "boot-1");
    // apt-get (a recording stand-in) fails: the package does not exist.
    c.deploy_slurmctld();
    let spec = c
        .spec("slurmd", &c.slurmd_charm.clone(), 1)
        .config("nvidia-driver", "nvidia-driver-999-server");
    std::fs::create_dir_all(&root).unwrap();
    c.sim.deploy(spec).unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    // The install hook installed slurmd with apt-get before the driver: fail apt-get only now.
    std::fs::write(root.join("fail-apt-get"), "").unwrap();
    c.sim
        .set_config(
            "slurmd",
            [(
                "nvidia-driver".to_string(),
                json!("nvidia-driver-998-server"),
            )]
            .into(),
        )
        .unwrap();
    c.sim.settle().unwrap();
    for _ in 0..2 {
        c.sim.update_status(Some("slurmd")).unwrap();
    }
    c.assert_no_errors();
    let (st, msg) = c.status(UNIT);
    eprintln!("failed install: {st}: {msg}");
    assert_eq!(st, "blocked");
    assert!(
        msg.starts_with(
            "NVIDIA driver install (`apt-get install nvidia-driver-998-server`) failed:"
        ),
        "{msg}"
    );
    assert_eq!(count(&c, "apt-get install -y nvidia-driver-998-server"), 1);
    assert_eq!(reboots(&c), 0);
}

#[test]
fn none_installs_nothing_and_bad_values_are_refused() {
    let mut c = cluster(Some("none"), true);
    assert_eq!(count(&c, "ubuntu-drivers install --gpgpu"), 0);
    assert_eq!(reboots(&c), 0);
    assert_eq!(
        c.status(UNIT),
        (
            "blocked".into(),
            "2 NVIDIA GPUs present but the driver is not loaded".into()
        )
    );
    c.sim
        .set_config(
            "slurmd",
            [("nvidia-driver".to_string(), json!("Bad;pkg"))].into(),
        )
        .unwrap();
    c.sim.settle().unwrap();
    let (st, msg) = c.status(UNIT);
    assert_eq!(st, "blocked");
    assert!(
        msg.contains("nvidia-driver \"Bad;pkg\" is not a Debian package name"),
        "{msg}"
    );
    assert!(!c.commands(UNIT).iter().any(|l| l.contains("Bad")));
}
