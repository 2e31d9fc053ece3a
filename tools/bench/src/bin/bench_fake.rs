//! `bench-fake`: a fast multi-call stand-in for the commands the charms run (`apt-get`,
//! `systemctl`, `scontrol`, `sinfo`, `slurmd`, `slurmctld`, `nvidia-modprobe`), behaving like the
//! shell fakes of `tests/charm_support.rs` but without spawning `mkdir`/`basename`/`echo`, so the
//! benchmark measures the charm rather than `/bin/sh`. Under `$SLURM_CHARMS_ROOT`:
//! `slurmd -C` prints `slurmd-C.txt` if present (else the line of an 8x H100 server named
//! after the root dir), `systemctl start|restart|stop` keep `running-<service>` markers (the
//! unit's main PID) that `is-active` and `show` (`MainPID=`, `ActiveState=`) read (options
//! such as `--no-block` are skipped: with `running---no-block`, the slurmd charm's `restart
//! --no-block slurmd` left slurmd "inactive" and every update-status restarted it, so the
//! steady path was never measured). `sinfo` prints `sinfo.txt` if present (the health-check program's view of its node, `idle|none`), else nothing.
//! Nothing is logged.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let argv0 = argv.next().unwrap_or_default();
    let name = std::path::Path::new(&argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = argv.collect();
    let root = PathBuf::from(std::env::var_os("SLURM_CHARMS_ROOT").unwrap_or_else(|| "/".into()));
    let a1 = args.first().map(String::as_str).unwrap_or("");
    // the unit a `systemctl` verb acts on: its first argument that is not an option
    // (`systemctl restart --no-block slurmd`)
    let unit = args
        .iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
        .unwrap_or("");
    match (name.as_str(), a1) {
        ("slurmd", "-C") => match std::fs::read_to_string(root.join("slurmd-C.txt")) {
            Ok(t) => print!("{t}"),
            Err(_) => {
                let node = root
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // An 8x H100 SXM server: 2 sockets x 56 cores x 2 threads, 2 TiB.
                println!(
                    "NodeName={node} CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2063937"
                );
                println!("UpTime=0-00:08:47");
            }
        },
        ("slurmd" | "slurmctld", "-V") => println!("slurm-wlm 22.05.8"),
        ("sinfo", _) => {
            if let Ok(t) = std::fs::read_to_string(root.join("sinfo.txt")) {
                print!("{t}");
            }
        }
        ("systemctl", "restart" | "start") => {
            // the unit's main PID: this stand-in's own, new at each start
            let pid = std::process::id().to_string();
            let _ = std::fs::write(root.join(format!("running-{unit}")), pid);
        }
        ("systemctl", "stop") => {
            let _ = std::fs::remove_file(root.join(format!("running-{unit}")));
        }
        ("systemctl", "is-active") if !root.join(format!("running-{unit}")).exists() => {
            return ExitCode::from(3);
        }
        ("systemctl", "show") => {
            // `MainPID=` and `ActiveState=` of each unit named, blocks apart by an empty line
            let units = args.iter().skip(1).filter(|a| !a.starts_with('-'));
            let blocks: Vec<String> = units
                .map(
                    |u| match std::fs::read_to_string(root.join(format!("running-{u}"))) {
                        Ok(pid) => format!("MainPID={}\nActiveState=active\n", pid.trim()),
                        Err(_) => "MainPID=0\nActiveState=inactive\n".to_owned(),
                    },
                )
                .collect();
            print!("{}", blocks.join("\n"));
        }
        _ => {}
    }
    ExitCode::SUCCESS
}
