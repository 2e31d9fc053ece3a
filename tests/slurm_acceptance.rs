//! Real-Slurm acceptance: files rendered by the model are accepted by Debian's Slurm daemons
//! (`slurmd -G` for gres.conf, `slurmctld -D` for slurm.conf), and files Slurm rejects are the
//! ones the renderer refuses. Skipped loudly when the binaries are missing; with
//! `SLURM_ACCEPTANCE_REQUIRED=1` or CI's `E2E_REQUIRED=1` a skip is a failure.

#[path = "common/daemon.rs"]
mod daemon;
#[path = "slurm_fixtures.rs"]
mod fixtures;
#[path = "hostile_unit_support.rs"]
mod hostile;
#[path = "common/ports.rs"]
mod ports;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use daemon::Daemon;
use fixtures::cluster;
use ports::free_port;
use slurm_charms::slurm::types::GresDevices;
use slurm_charms::slurm::*;

/// Whether a skip must fail the test (CI).
#[allow(clippy::duplicate_mod)]
#[path = "common/required.rs"]
mod required_rule;
use required_rule::required;

fn find(bin: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into()])
        .map(|d| d.join(bin))
        .find(|p| p.is_file())
}

/// The daemons, or `None` after a loud skip message.
fn daemons() -> Option<(PathBuf, PathBuf, PathBuf)> {
    match (find("slurmd"), find("slurmctld"), find("scontrol")) {
        (Some(d), Some(c), Some(s)) => Some((d, c, s)),
        _ => {
            let msg = "SKIPPED real-Slurm acceptance: slurmd/slurmctld/scontrol not found \
                       (apt-get install slurmd slurmctld slurm-client)";
            eprintln!("\n*** {msg} ***\n");
            assert!(!required(), "{msg}");
            None
        }
    }
}

fn short_hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    h.trim()
        .split('.')
        .next()
        .unwrap_or("localhost")
        .to_string()
}

/// Makes `<dir>/nvidia0..n` character devices (major 195, like the NVIDIA driver).
fn make_devices(dir: &Path, n: u32) -> bool {
    (0..n).all(|i| {
        Command::new("mknod")
            .arg(dir.join(format!("nvidia{i}")))
            .args(["c", "195", &i.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The fixture cluster, pointed at a scratch directory, ports and this host.
fn scratch_cluster(dir: &Path, node_addr: bool) -> (SlurmConf, GresConf) {
    let (conf, gres) = cluster();
    scratchify(conf, gres, dir, node_addr)
}

/// A cluster pointed at a scratch directory, ports and this host.
fn scratchify(
    mut conf: SlurmConf,
    mut gres: GresConf,
    dir: &Path,
    node_addr: bool,
) -> (SlurmConf, GresConf) {
    conf.slurmctld_hosts = vec![format!("{}(127.0.0.1)", short_hostname())];
    let d = dir.display();
    for (k, v) in [
        (GlobalKey::AuthType, "auth/none".to_string()),
        (GlobalKey::CredType, "cred/none".to_string()),
        (GlobalKey::SlurmUser, "root".to_string()),
        (GlobalKey::SlurmctldPort, free_port().to_string()),
        (GlobalKey::SlurmdPort, free_port().to_string()),
        (GlobalKey::StateSaveLocation, format!("{d}/state")),
        (GlobalKey::SlurmdSpoolDir, format!("{d}/spool")),
        (GlobalKey::SlurmctldPidFile, format!("{d}/slurmctld.pid")),
        (GlobalKey::SlurmdPidFile, format!("{d}/slurmd.pid")),
        (GlobalKey::SlurmctldLogFile, format!("{d}/slurmctld.log")),
        (GlobalKey::SlurmdLogFile, format!("{d}/slurmd.log")),
    ] {
        conf.set_owned(k, &v).unwrap();
    }
    conf.extra.push(("MpiDefault".into(), "none".into()));
    if node_addr {
        for n in &mut conf.nodes {
            n.set("NodeAddr", "127.0.0.1").unwrap();
        }
    }
    for records in gres.nodes.values_mut() {
        for r in std::sync::Arc::make_mut(records) {
            if let Some(files) = r.files() {
                let moved = files.to_string().replace("/dev/", &format!("{d}/"));
                r.devices = Some(GresDevices::File(moved.parse().unwrap()));
            }
        }
    }
    std::fs::create_dir_all(dir.join("state")).unwrap();
    std::fs::create_dir_all(dir.join("spool")).unwrap();
    (conf, gres)
}

fn write(dir: &Path, slurm_conf: &str, gres_conf: &str) -> PathBuf {
    std::fs::write(dir.join("gres.conf"), gres_conf).unwrap();
    let path = dir.join("slurm.conf");
    std::fs::write(&path, slurm_conf).unwrap();
    path
}

fn slurmd_g(slurmd: &Path, conf: &Path, node: &str) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(slurmd)
        .arg("-G")
        .arg("-f")
        .arg(conf)
        .args(["-N", node])
        .output()
        .expect("run slurmd -G")
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("slurm-acc")
        .tempdir_in("/tmp")
        .unwrap()
}

#[test]
fn slurmd_accepts_rendered_gres_conf() {
    let Some((slurmd, _, _)) = daemons() else {
        return;
    };
    let dir = scratch();
    if !make_devices(dir.path(), 4) {
        eprintln!("\n*** SKIPPED slurmd -G acceptance: mknod failed (needs root) ***\n");
        assert!(!required(), "mknod failed");
        return;
    }
    let (conf, gres) = scratch_cluster(dir.path(), false);
    let out = render_files(&conf, &gres).unwrap();
    assert!(
        out.gres_conf.contains("NodeName=gpu-[1-2] "),
        "folded line expected:\n{}",
        out.gres_conf
    );
    let path = write(dir.path(), &out.slurm_conf, &out.gres_conf);
    let d = dir.path().display();
    for (node, want) in [
        (
            "gpu-1",
            vec![
                ("tesla_t4", 2, format!("{d}/nvidia[0-1]")),
                ("nvidia_l40s", 2, format!("{d}/nvidia[2-3]")),
            ],
        ),
        (
            "gpu-2",
            vec![
                ("tesla_t4", 2, format!("{d}/nvidia[0-1]")),
                ("nvidia_l40s", 2, format!("{d}/nvidia[2-3]")),
            ],
        ),
        (
            "gpu-10",
            vec![("nvidia_a100_80gb_pcie", 1, format!("{d}/nvidia0"))],
        ),
    ] {
        let o = slurmd_g(&slurmd, &path, node);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success(),
            "slurmd -G {node} failed:\n{err}\n{}",
            out.gres_conf
        );
        // One `Gres Name=gpu Type=<t> Count=<n> Index=.. ID=.. File=<f>` line per record
        // (Index is parsed from the end of File, so it is not checked).
        let records: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("Gres Name=gpu"))
            .collect();
        assert_eq!(records.len(), want.len(), "{node}:\n{err}");
        for (line, (t, n, f)) in records.iter().zip(&want) {
            assert!(
                line.contains(&format!("Type={t} Count={n} "))
                    && line.contains(&format!(" File={f}")),
                "{node}: {line:?} is not {t}/{n}/{f}"
            );
        }
        assert!(!err.contains("fatal"), "{err}");
    }
}

#[test]
fn slurmd_rejects_what_the_renderer_refuses() {
    let Some((slurmd, _, _)) = daemons() else {
        return;
    };
    let dir = scratch();
    if !make_devices(dir.path(), 4) {
        eprintln!("\n*** SKIPPED: mknod failed (needs root) ***\n");
        assert!(!required(), "mknod failed");
        return;
    }
    let (conf, gres) = scratch_cluster(dir.path(), false);
    let out = render_files(&conf, &gres).unwrap();
    let d = dir.path().display();
    // Each of these is refused by our parser/renderer; Slurm itself dies on them too.
    let bad = [
        format!("Name=gpu NodeName=gpu-1 Type=tesla_t4 File={d}/nvidia[0-1]\n"),
        format!("NodeName=gpu-1 Name=gpu Type=tesla_t4 File={d}/nvidia[0-1] Count=3\n"),
        format!("NodeName=gpu-1 Name=gpu MultipleFiles={d}/nvidia0\n"),
        format!("NodeName=gpu-1 Name=gpu File={d}/nvidia0 MultipleFiles={d}/nvidia1,{d}/nvidia2\n"),
        format!(
            "NodeName=gpu-1 Name=gpu Type=tesla_t4 File={d}/nvidia[0-1]\nNodeName=gpu-1 Name=gpu Type=tesla_t4 Count=1\n"
        ),
        // Overlapping device files (issue 11): one file in two records.
        format!(
            "NodeName=gpu-1 Name=gpu Type=tesla_t4 File={d}/nvidia[0-1]\nNodeName=gpu-1 Name=gpu Type=nvidia_l40s File={d}/nvidia0\nNodeName=gpu-1 Name=gpu Type=nvidia_l40s File={d}/nvidia3\n"
        ),
    ];
    for text in bad {
        assert!(
            parse_gres_conf(&text, "gres.conf")
                .and_then(|g| g.render().map_err(|e| ParseError {
                    origin: "render".into(),
                    line: 0,
                    kind: e.into()
                }))
                .is_err(),
            "we accept {text:?}"
        );
        let path = write(dir.path(), &out.slurm_conf, &text);
        let o = slurmd_g(&slurmd, &path, "gpu-1");
        assert!(
            !o.status.success(),
            "slurmd accepted {text:?}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Starts slurmctld in the foreground. Node names are made resolvable with a private
/// /etc/hosts in a mount namespace when `unshare` works (else the nodes carry NodeAddr).
fn start_ctld(
    slurmctld: &Path,
    dir: &Path,
    conf: &Path,
    names: &[&str],
    private_hosts: bool,
) -> Daemon {
    let log = std::fs::File::create(dir.join("slurmctld.out")).unwrap();
    let mut cmd;
    if private_hosts {
        let hosts = dir.join("hosts");
        std::fs::write(
            &hosts,
            format!(
                "127.0.0.1 localhost {} {}\n",
                short_hostname(),
                names.join(" ")
            ),
        )
        .unwrap();
        cmd = Command::new("unshare");
        cmd.arg("-m").arg("sh").arg("-c").arg(format!(
            "mount --bind '{}' /etc/hosts && exec '{}' -D -f '{}'",
            hosts.display(),
            slurmctld.display(),
            conf.display()
        ));
    } else {
        cmd = Command::new(slurmctld);
        cmd.arg("-D").arg("-f").arg(conf);
    }
    Daemon(
        cmd.stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .expect("start slurmctld"),
    )
}

/// Waits until `scontrol ping` says UP; panics with the log and `context` when slurmctld
/// exits or a minute passes.
fn wait_up(ctld: &mut Daemon, scontrol_bin: &Path, conf: &Path, dir: &Path, context: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let log = || std::fs::read_to_string(dir.join("slurmctld.out")).unwrap_or_default();
    loop {
        if let Ok(Some(status)) = ctld.0.try_wait() {
            panic!("slurmctld exited ({status}):\n{}\n{context}", log());
        }
        if scontrol(scontrol_bin, conf, &["ping"]).is_some_and(|s| s.contains("UP")) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "slurmctld did not come up:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn scontrol(bin: &Path, conf: &Path, args: &[&str]) -> Option<String> {
    let o = Command::new("timeout")
        .arg("20")
        .arg(bin)
        .args(args)
        .env("SLURM_CONF", conf)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn private_hosts_work() -> bool {
    if std::env::var_os("SLURM_ACCEPTANCE_NO_UNSHARE").is_some() {
        return false;
    }
    Command::new("unshare")
        .args(["-m", "sh", "-c", "mount --bind /etc/hosts /etc/hosts"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn slurmctld_runs_on_rendered_slurm_conf() {
    let Some((_, slurmctld, scontrol_bin)) = daemons() else {
        return;
    };
    let dir = scratch();
    let private = private_hosts_work();
    let (conf, gres) = scratch_cluster(dir.path(), !private);
    let out = render_files(&conf, &gres).unwrap();
    if private {
        assert!(
            out.slurm_conf.contains("NodeName=gpu-[1-2] "),
            "{}",
            out.slurm_conf
        );
    }
    let path = write(dir.path(), &out.slurm_conf, &out.gres_conf);
    let mut ctld = start_ctld(
        &slurmctld,
        dir.path(),
        &path,
        &["gpu-1", "gpu-2", "gpu-10", "cpu-1"],
        private,
    );
    let log = || std::fs::read_to_string(dir.path().join("slurmctld.out")).unwrap_or_default();
    wait_up(&mut ctld, &scontrol_bin, &path, dir.path(), &out.slurm_conf);
    let show = |what: &[&str]| scontrol(&scontrol_bin, &path, what).unwrap_or_default();
    let n1 = show(&["show", "node", "gpu-1"]);
    assert!(n1.contains("Gres=gpu:tesla_t4:2,gpu:nvidia_l40s:2"), "{n1}");
    assert!(
        n1.contains("RealMemory=31848") && n1.contains("MemSpecLimit=1024"),
        "{n1}"
    );
    let n10 = show(&["show", "node", "gpu-10"]);
    assert!(
        n10.contains("State=DOWN") && n10.contains("Reason=New node."),
        "{n10}"
    );
    let cpu = show(&["show", "node", "cpu-1"]);
    assert!(cpu.contains("Gres=(null)"), "{cpu}");
    let p = show(&["show", "partition", "slurmd"]);
    assert!(
        p.contains("Nodes=cpu-1,gpu-[1-2,10]")
            && p.contains("Default=YES")
            && p.contains("MaxTime=01:00:00"),
        "{p}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        ctld.0.try_wait().unwrap().is_none(),
        "slurmctld stopped:\n{}",
        log()
    );
    drop(ctld);
    assert!(!log().contains("fatal"), "{}", log());
}

/// Nodes of one model that differ in `RealMemory` alone share `NodeName=DEFAULT` lines
/// (`slurm::node_lines`): slurmctld gives each node its own memory and its own model's GRES,
/// the second model's `DEFAULT` line replacing every key of the first's.
#[test]
fn slurmctld_reads_node_default_lines() {
    let Some((_, slurmctld, scontrol_bin)) = daemons() else {
        return;
    };
    if !private_hosts_work() {
        let msg = "SKIPPED NodeName=DEFAULT acceptance: needs `unshare -m` for private host \
                   names (NodeAddr, which the test would need otherwise, is never on a DEFAULT line)";
        eprintln!("\n*** {msg} ***\n");
        assert!(!required(), "{msg}");
        return;
    }
    let dir = scratch();
    let mut conf = SlurmConf::new("defaults", "ctl-0");
    let mut gres = GresConf::default();
    // (name, GPUs by type, RealMemory)
    type Model = (&'static str, &'static [(&'static str, u64)], u64);
    let models: [Model; 4] = [
        ("gpu-1", &[("tesla_t4", 2), ("nvidia_l40s", 2)], 31_848),
        ("gpu-2", &[("tesla_t4", 2), ("nvidia_l40s", 2)], 31_000),
        ("gpu-3", &[("nvidia_a100_80gb_pcie", 1)], 64_000),
        ("gpu-10", &[("nvidia_a100_80gb_pcie", 1)], 65_000),
    ];
    let mut p = Partition::new("slurmd".parse().unwrap());
    for (name, gpus, memory) in models {
        let mut n = fixtures::node(name, gpus);
        n.real_memory = Some(memory);
        conf.nodes.push(n);
        p.nodes.insert(name.parse().unwrap());
        let records = if gpus.len() == 2 {
            vec![
                fixtures::gpu("tesla_t4", fixtures::files(0..2)),
                fixtures::gpu("nvidia_l40s", fixtures::files(2..4)),
            ]
        } else {
            vec![fixtures::gpu(
                "nvidia_a100_80gb_pcie",
                fixtures::files(0..1),
            )]
        };
        gres.nodes.insert(fixtures::nn(name), records.into());
    }
    p.default = true;
    p.state = Some(PartitionState::Up);
    conf.partitions.push(p);
    let (conf, gres) = scratchify(conf, gres, dir.path(), false);
    let out = render_files(&conf, &gres).unwrap();
    assert_eq!(
        out.slurm_conf.matches("NodeName=DEFAULT ").count(),
        2,
        "{}",
        out.slurm_conf
    );
    assert!(
        out.slurm_conf
            .contains("\nNodeName=gpu-10 RealMemory=65000\n"),
        "{}",
        out.slurm_conf
    );
    let path = write(dir.path(), &out.slurm_conf, &out.gres_conf);
    let names = models.map(|(name, _, _)| name);
    let mut ctld = start_ctld(&slurmctld, dir.path(), &path, &names, true);
    wait_up(&mut ctld, &scontrol_bin, &path, dir.path(), &out.slurm_conf);
    for (name, gpus, memory) in models {
        let show = scontrol(&scontrol_bin, &path, &["show", "node", name]).unwrap_or_default();
        let want_gres = gpus
            .iter()
            .map(|(t, c)| format!("gpu:{t}:{c}"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(
            show.contains(&format!("RealMemory={memory} "))
                && show.contains(&format!("Gres={want_gres}\n"))
                && show.contains("MemSpecLimit=1024")
                && show.contains("CPUTot=16"),
            "{name}:\n{show}\n{}",
            out.slurm_conf
        );
    }
}

#[test]
fn slurmctld_dies_on_a_duplicated_node() {
    let Some((_, slurmctld, _)) = daemons() else {
        return;
    };
    let dir = scratch();
    let private = private_hosts_work();
    let (conf, gres) = scratch_cluster(dir.path(), !private);
    let out = render_files(&conf, &gres).unwrap();
    // Duplicate one node line by hand: the renderer refuses this model.
    let line = out
        .slurm_conf
        .lines()
        .find(|l| l.starts_with("NodeName=cpu-1"))
        .unwrap()
        .to_string();
    let text = format!("{}{line}\n", out.slurm_conf);
    assert!(matches!(
        parse_slurm_conf(&text, "s").unwrap_err().kind,
        ParseErrorKind::Config(ConfigError::DuplicateNode { .. })
    ));
    let path = write(dir.path(), &text, &out.gres_conf);
    let mut ctld = start_ctld(
        &slurmctld,
        dir.path(),
        &path,
        &["gpu-1", "gpu-2", "gpu-10", "cpu-1"],
        private,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Ok(Some(s)) = ctld.0.try_wait() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "slurmctld kept running on a duplicated node"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let log = std::fs::read_to_string(dir.path().join("slurmctld.out")).unwrap_or_default();
    assert!(
        !status.success() && log.contains("fatal"),
        "{status}\n{log}"
    );
}

/// The hostile-unit guarantee (`tests/hostile_unit.rs`) judged by the real slurmctld: for a
/// sample of clusters with one arbitrary unit, the controller's files start slurmctld and
/// every node the plan accepted is known to it.
#[test]
fn slurmctld_runs_with_one_hostile_unit() {
    use proptest::strategy::{Strategy, ValueTree};
    let Some((_, slurmctld, scontrol_bin)) = daemons() else {
        return;
    };
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = hostile::hostile_record();
    let mut samples = vec![
        hostile::valid_record("gpu_node_9", 2, false).to_string(),
        hostile::valid_record("ALL", 1, false).to_string(),
        hostile::valid_record("evil-", 1, true).to_string(),
        // a second unit claiming the name `compute/0` has (another shape): refused alone
        hostile::valid_record("gpu-0", 1, true).to_string(),
    ];
    for _ in 0..3 {
        samples.push(strategy.new_tree(&mut runner).unwrap().current());
    }
    let private = private_hosts_work();
    for hostile_raw in samples {
        let (_, plan) = hostile::cluster_with(4, &hostile_raw);
        if hostile_raw.contains(r#""NodeName":"gpu-0""#) {
            assert!(
                plan.rejected
                    .iter()
                    .any(|(who, why)| who == "compute/99"
                        && why.contains("already used by compute/0")),
                "{:?}",
                plan.rejected
            );
            assert!(plan.applied.contains("gpu-0"));
        }
        let slurm_text = plan.slurm_conf.clone().unwrap();
        let conf = parse_slurm_conf(&slurm_text, "slurm.conf").unwrap();
        let gres = parse_gres_conf(&plan.gres_conf.clone().unwrap(), "gres.conf").unwrap();
        let dir = scratch();
        let (conf, gres) = scratchify(conf, gres, dir.path(), !private);
        let out = render_files(&conf, &gres).unwrap();
        let path = write(dir.path(), &out.slurm_conf, &out.gres_conf);
        let names: Vec<&str> = plan.applied.pairs().map(|(n, _)| n).collect();
        let mut ctld = start_ctld(&slurmctld, dir.path(), &path, &names, private);
        let log = || std::fs::read_to_string(dir.path().join("slurmctld.out")).unwrap_or_default();
        let context = format!("hostile {hostile_raw}:\n{}", out.slurm_conf);
        wait_up(&mut ctld, &scontrol_bin, &path, dir.path(), &context);
        let shown = scontrol(&scontrol_bin, &path, &["show", "nodes"]).unwrap_or_default();
        for name in &names {
            assert!(
                shown.contains(&format!("NodeName={name} ")),
                "{name} unknown to slurmctld (hostile {hostile_raw}):\n{shown}"
            );
        }
        assert!(names.len() >= 4, "{names:?}");
        drop(ctld);
        assert!(!log().contains("fatal"), "{}", log());
    }
}
