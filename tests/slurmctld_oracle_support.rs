//! The real slurmctld as the judge of a slurm.conf: each supported Slurm (22.05 on this
//! machine, 24.11 and 26.05 in the Debian roots of `tools/e2e/roots.sh`, entered with
//! `chroot`) is started in the foreground on the file; the file is **accepted** when
//! `scontrol ping` answers UP while the daemon runs, **refused** when the daemon exits first.
//! About 0.2 s per file. Missing daemons or roots are a loud skip, a failure with
//! `SLURM_ACCEPTANCE_REQUIRED=1` or CI's `E2E_REQUIRED=1`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
#[path = "common/daemon.rs"]
mod daemon;

use daemon::Daemon;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use slurm_charms::slurm::*;

/// Whether a skip must fail the test (CI).
#[allow(clippy::duplicate_mod)]
#[path = "common/required.rs"]
mod required_rule;
pub use required_rule::required;

/// One Slurm version's slurmctld and scontrol, in a root directory.
#[derive(Debug, Clone)]
pub struct Oracle {
    /// `22.05`, `24.11`, `26.05`.
    pub version: &'static str,
    /// `/` or a Debian root.
    pub root: PathBuf,
}

/// slurmctld's verdict on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It came up (`scontrol ping` said UP); its log so far.
    Up(String),
    /// It exited; its log.
    Refused(String),
}

impl Verdict {
    /// Whether slurmctld came up.
    pub fn is_up(&self) -> bool {
        matches!(self, Verdict::Up(_))
    }

    /// Whether slurmctld came up but logged an `error:` line containing `needle` (a value
    /// it ignored).
    pub fn up_with_error(&self, needle: &str) -> bool {
        match self {
            Verdict::Up(log) => log
                .lines()
                .any(|l| l.contains("error:") && l.contains(needle)),
            Verdict::Refused(_) => false,
        }
    }
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn skip(msg: &str) {
    eprintln!("\n*** SKIPPED: {msg} ***\n");
    assert!(!required(), "{msg}");
}

impl Oracle {
    /// This machine's Slurm 22.05, or `None` after a loud skip.
    pub fn local() -> Option<Oracle> {
        if Path::new("/usr/sbin/slurmctld").is_file() && Path::new("/usr/bin/scontrol").is_file() {
            Some(Oracle {
                version: "22.05",
                root: PathBuf::from("/"),
            })
        } else {
            skip("slurmctld/scontrol not installed (apt-get install slurmctld slurm-client)");
            None
        }
    }

    /// Every supported version that can be had (22.05 here; 24.11 and 26.05 from the roots,
    /// built on first use); each one missing is a loud skip.
    pub fn all() -> Vec<Oracle> {
        let mut out: Vec<Oracle> = Oracle::local().into_iter().collect();
        for (suite, version) in [("trixie", "24.11"), ("sid", "26.05")] {
            let o = Command::new("bash")
                .arg(repo_root().join("tools/e2e/roots.sh"))
                .arg(suite)
                .stderr(Stdio::inherit())
                .output();
            let root = o
                .ok()
                .filter(|o| o.status.success())
                .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
            match root {
                Some(root) if root.join("usr/sbin/slurmctld").is_file() => {
                    out.push(Oracle { version, root })
                }
                _ => skip(&format!(
                    "no Slurm {version} root (tools/e2e/roots.sh {suite})"
                )),
            }
        }
        out
    }

    /// Whether plugin `kind/name` can load in this root: its `.so` is in Debian's `PluginDir`,
    /// or it is `kind/none`, which Slurm handles without a file on the versions that ship none.
    pub fn has_plugin(&self, value: &str) -> bool {
        value.ends_with("/none")
            || self
                .root
                .join("usr/lib/x86_64-linux-gnu/slurm-wlm")
                .join(format!("{}.so", value.replace('/', "_")))
                .is_file()
    }

    fn in_root(&self, cmd: &str) -> Command {
        if self.root == Path::new("/") {
            Command::new(cmd)
        } else {
            let mut c = Command::new("chroot");
            c.arg(&self.root).arg(cmd);
            c
        }
    }

    /// `scontrol <args>` of this version against the slurm.conf at `conf` (a path as the
    /// daemon sees it); its stdout, `None` when it fails.
    pub fn scontrol(&self, conf: &str, args: &[&str]) -> Option<String> {
        let cmd = self.in_root("/usr/bin/scontrol");
        let o = Command::new("timeout")
            .arg("10")
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .args(args)
            .env("SLURM_CONF", conf)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// A scratch directory inside the root: (path here, path as the daemon sees it).
    pub fn scratch(&self) -> (tempfile::TempDir, String) {
        let tmp = self.root.join("tmp");
        let dir = tempfile::Builder::new()
            .prefix("oracle")
            .tempdir_in(&tmp)
            .expect("scratch dir");
        let inside = Path::new("/tmp").join(dir.path().file_name().expect("dir name"));
        std::fs::create_dir_all(dir.path().join("state")).expect("state dir");
        (dir, inside.display().to_string())
    }

    /// A minimal cluster in the model, pointed at `inside` (the scratch directory as the
    /// daemon sees it): one node `n1` (127.0.0.1, 4 CPUs, 1000 MB) in partition `p`.
    pub fn base_model(inside: &str) -> SlurmConf {
        let mut conf = SlurmConf::new("oracle", &format!("{}(127.0.0.1)", short_hostname()));
        for (k, v) in [
            (GlobalKey::AuthType, "auth/none".to_string()),
            (GlobalKey::CredType, "cred/none".to_string()),
            (GlobalKey::SlurmUser, "root".to_string()),
            (GlobalKey::SlurmctldPort, free_port().to_string()),
            (GlobalKey::SlurmdPort, free_port().to_string()),
            (GlobalKey::StateSaveLocation, format!("{inside}/state")),
            (GlobalKey::SlurmdSpoolDir, format!("{inside}/spool")),
            (
                GlobalKey::SlurmctldPidFile,
                format!("{inside}/slurmctld.pid"),
            ),
            (GlobalKey::SlurmdPidFile, format!("{inside}/slurmd.pid")),
            (
                GlobalKey::SlurmctldLogFile,
                format!("{inside}/slurmctld.log"),
            ),
            (GlobalKey::SlurmdLogFile, format!("{inside}/slurmd.log")),
            (GlobalKey::ProctrackType, "proctrack/linuxproc".to_string()),
            (GlobalKey::TaskPlugin, "task/none".to_string()),
        ] {
            conf.set_owned(k, &v).expect("owned key");
        }
        conf.set_global("MpiDefault", "none").expect("MpiDefault");
        conf.nodes.push(Self::node("n1"));
        let mut p = Partition::new("p".parse().unwrap());
        p.nodes.insert("n1".parse().unwrap());
        conf.partitions.push(p);
        conf
    }

    /// A node at 127.0.0.1 with 4 CPUs and 1000 MB.
    pub fn node(name: &str) -> NodeConf {
        let mut n = NodeConf::new(name.parse().expect("node name"));
        for (k, v) in [
            ("NodeAddr", "127.0.0.1"),
            ("CPUs", "4"),
            ("RealMemory", "1000"),
        ] {
            n.set(k, v).expect("node key");
        }
        n
    }

    /// Judges a slurm.conf made by `make(inside)` (the scratch directory as the daemon sees
    /// it).
    pub fn judge_with(&self, make: impl FnOnce(&str) -> String) -> Verdict {
        self.judge_then(make, |_| ()).0
    }

    /// [`Oracle::judge_with`], and while the daemon is up, `up(<the slurm.conf text>)`
    /// (e.g. HTTP requests to it); its result with the verdict (`None` when refused).
    pub fn judge_then<R>(
        &self,
        make: impl FnOnce(&str) -> String,
        up: impl FnOnce(&str) -> R,
    ) -> (Verdict, Option<R>) {
        let (dir, inside) = self.scratch();
        let text = make(&inside);
        std::fs::write(dir.path().join("slurm.conf"), &text).expect("write slurm.conf");
        let conf = format!("{inside}/slurm.conf");
        let log = std::fs::File::create(dir.path().join("out")).expect("log");
        let mut child = Daemon(
            self.in_root("/usr/sbin/slurmctld")
                .args(["-D", "-f", &conf])
                // A crashing daemon drops its core in the scratch directory.
                .current_dir(dir.path())
                .stdout(log.try_clone().expect("log"))
                .stderr(log)
                .stdin(Stdio::null())
                .spawn()
                .expect("start slurmctld"),
        );
        let read_log = || std::fs::read_to_string(dir.path().join("out")).unwrap_or_default();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(_)) = child.0.try_wait() {
                return (
                    Verdict::Refused(format!("{}\n--- slurm.conf ---\n{text}", read_log())),
                    None,
                );
            }
            let ping = Command::new("timeout")
                .arg("10")
                .arg(self.in_root("/usr/bin/scontrol").get_program())
                .args(self.in_root("/usr/bin/scontrol").get_args())
                .arg("ping")
                .env("SLURM_CONF", &conf)
                .stderr(Stdio::null())
                .output();
            if ping.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("UP")) {
                let r = up(&text);
                return (Verdict::Up(read_log()), Some(r));
            }
            assert!(
                Instant::now() < deadline,
                "slurmctld {} neither came up nor exited in 60 s:\n{}\n--- slurm.conf ---\n{text}",
                self.version,
                read_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Judges the rendering of `conf` (built by `make(inside)`).
    pub fn judge_model(&self, make: impl FnOnce(&str) -> SlurmConf) -> Verdict {
        self.judge_with(|inside| render_slurm_conf(&make(inside)).expect("model renders"))
    }

    /// Judges the base cluster with raw text spliced in, bypassing the model: `global` as the
    /// last line, `node` and `partition` appended to the `NodeName` / `PartitionName`
    /// lines. This is how a value the charm refuses is shown to Slurm.
    pub fn judge_raw(&self, global: &str, node: &str, partition: &str) -> Verdict {
        self.judge_with(|inside| {
            let text = render_slurm_conf(&Self::base_model(inside)).expect("base renders");
            let mut out = String::new();
            for line in text.lines() {
                if line.starts_with("NodeName=") && !node.is_empty() {
                    out.push_str(&format!("{line} {node}\n"));
                } else if line.starts_with("PartitionName=") && !partition.is_empty() {
                    out.push_str(&format!("{line} {partition}\n"));
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            if !global.is_empty() {
                out.push_str(&format!("{global}\n"));
            }
            out
        })
    }
}

#[path = "common/ports.rs"]
mod ports;
/// A free TCP port on 127.0.0.1, never the same one twice in this test process.
pub use ports::free_port;

/// This host's short name (SlurmctldHost must name it).
pub fn short_hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    h.trim()
        .split('.')
        .next()
        .unwrap_or("localhost")
        .to_string()
}
