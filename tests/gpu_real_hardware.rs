//! What real NVIDIA GPUs showed, replayed without one (issue 15 item 5; `docs/real-gpu.md`).
//!
//! `tests/fixtures/real-gpu/<machine>/` was recorded on a machine with real GPUs by
//! `tools/gpu-probe/capture.sh`: the real NVML as a fake-nvml configuration (`nvml.json`), the
//! CPU topology (`host/`), and per Slurm version (`bookworm` 22.05, `trixie` 24.11, `sid` 26.05)
//! `slurmd -C`, the charm's `detect-gpus` results with its health check, our controller's node
//! line and gres.conf (`<suite>-record.json`, made by `gpu-probe record` from the real NVML),
//! and real `slurmd -G` runs against the real NVML: Slurm's own `AutoDetect=nvml`
//! (`<suite>-names.txt`, `<suite>-autodetect.txt`) and our files alone (`<suite>-ours.txt`).
//!
//! Here the same code runs against the fake answering from `nvml.json`:
//! 1. detection, health and our files must come out exactly as they did on the real GPU (the fake
//!    and its recording stand in for the real library faithfully);
//! 2. the records our controller writes must be the records real Slurm autodetected on the real
//!    GPU (Type, File, Cores, Links, order), and real Slurm loaded our files there without a
//!    complaint.
//!
//! The third comparison, Slurm's plugin on the fake against Slurm's plugin on the real GPU, is
//! in `tests/gpu_slurm_oracle.rs` (fixtures `real_<machine>`), as it needs root and the roots.

#[path = "fixtures/gpu/support.rs"]
mod support;

#[allow(dead_code)] // the oracle runner is used by gpu_slurm_oracle.rs
mod gpu_oracle;

use std::path::{Path, PathBuf};

use gpu_oracle::complaints;
use gpu_oracle::records::{by_file, devices, final_records, ignored_records, written_records};
use serde_json::Value;
use slurm_charms::gpu::Inventory;
use support::Fake;

/// The recorded machines.
fn machines() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-gpu");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/real-gpu")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("nvml.json").is_file())
        .collect();
    found.sort();
    assert!(
        !found.is_empty(),
        "no recorded machine in {}",
        dir.display()
    );
    found
}

/// Suites recorded for a machine (those with a `slurmd -C`).
fn suites(machine: &Path) -> Vec<&'static str> {
    let found: Vec<&'static str> = ["bookworm", "trixie", "sid"]
        .into_iter()
        .filter(|s| machine.join(format!("{s}-slurmd-C.txt")).is_file())
        .collect();
    assert!(
        !found.is_empty(),
        "{}: no Slurm version recorded",
        machine.display()
    );
    found
}

fn read(machine: &Path, file: &str) -> String {
    std::fs::read_to_string(machine.join(file))
        .unwrap_or_else(|e| panic!("{}/{file}: {e}", machine.display()))
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("recorded host dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The charm's detection against the fake answering as the machine's NVML did, over the
/// machine's recorded CPU topology.
fn replay(machine: &Path) -> Inventory {
    let fake = Fake::new(&read(machine, "nvml.json"));
    if machine.join("host").is_dir() {
        copy_tree(&machine.join("host"), &fake.root);
    }
    fake.detect()
}

#[test]
fn detection_replayed_through_the_fake_matches_the_real_gpus() {
    for machine in machines() {
        let inv = replay(&machine);
        assert!(
            !inv.gpus.is_empty(),
            "{}: no GPU replayed",
            machine.display()
        );
        for suite in suites(&machine) {
            let want: Value =
                serde_json::from_str(&read(&machine, &format!("{suite}-record.json")))
                    .expect("recorded JSON");
            let slurmd_c = read(&machine, &format!("{suite}-slurmd-C.txt"));
            let got = gpu_probe::full_record(&inv, &slurmd_c).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                got,
                want,
                "{} ({suite}): the replay differs from the real GPU",
                machine.display()
            );
        }
    }
}

#[test]
fn real_slurm_autodetect_agrees_with_our_records() {
    for machine in machines() {
        let inv = replay(&machine);
        for suite in suites(&machine) {
            let at = format!("{} ({suite})", machine.display());
            let names = read(&machine, &format!("{suite}-names.txt"));
            let detected = read(&machine, &format!("{suite}-autodetect.txt"));
            assert!(
                detected.contains("exit status: 0") && complaints(&detected).is_empty(),
                "{at}: real slurmd -G with AutoDetect=nvml complained:\n{detected}"
            );
            let slurm = devices(&final_records(&detected));
            assert!(
                !slurm.is_empty(),
                "{at}: real Slurm detected no GPU:\n{detected}"
            );
            assert_eq!(
                by_file(devices(&ignored_records(&names))),
                by_file(slurm.clone()),
                "{at}: Slurm's records are not the GPUs it detected"
            );

            // Ours, from the replay: what the controller writes today.
            let slurmd_c = read(&machine, &format!("{suite}-slurmd-C.txt"));
            let (_, gres_conf) =
                gpu_probe::controller_files(&inv, &slurmd_c).unwrap_or_else(|e| panic!("{e}"));
            let ours = devices(&written_records(&gres_conf));
            assert_eq!(
                slurm, ours,
                "{at}: real Slurm's AutoDetect=nvml differs from our gres.conf:\n{gres_conf}"
            );

            // What real Slurm loaded from the files we wrote there.
            let loaded = read(&machine, &format!("{suite}-ours.txt"));
            assert!(
                loaded.contains("exit status: 0") && complaints(&loaded).is_empty(),
                "{at}: real slurmd -G on our files complained:\n{loaded}"
            );
            let recorded: Value =
                serde_json::from_str(&read(&machine, &format!("{suite}-record.json")))
                    .expect("recorded JSON");
            let written = recorded["gres_conf"].as_str().expect("gres_conf");
            assert_eq!(
                devices(&final_records(&loaded)),
                devices(&written_records(written)),
                "{at}: real slurmd -G loaded our gres.conf differently:\n{loaded}"
            );
        }
    }
}

/// The recorder loses nothing the charm reads: every hand-written fixture, read back through
/// `gpu_probe::nvml_fixture` from the fake answering it, detects the same inventory and health
/// (MIG instances and empty slots, NVLinks, affinity, injected faults and return codes).
#[test]
fn the_recorder_captures_what_detection_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/gpu")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    assert!(names.len() > 10, "fixtures: {names:?}");
    let mig_minors = support::mig_minors_text(8);
    for name in names {
        let original = Fake::fixture(&name);
        original.write_host_file("proc/driver/nvidia-caps/mig-minors", &mig_minors);
        let want = original.detect();
        let nvml = nvml_wrapper::Nvml::builder()
            .lib_path(original.lib.as_os_str())
            .init()
            .expect("fake NVML");
        let (recorded, notes) = gpu_probe::nvml_fixture(&nvml);
        drop(nvml);
        assert!(notes.is_empty(), "{name}: {notes:?}");
        let replayed = Fake::new(&recorded.to_string());
        replayed.write_host_file("proc/driver/nvidia-caps/mig-minors", &mig_minors);
        // the library each was read from differs by construction
        let (mut got, mut want) = (replayed.detect(), want);
        got.nvml_library = None;
        want.nvml_library = None;
        assert_eq!(got, want, "{name}: the recording detects differently");
    }
}

/// The action's results as the simulator printed them: the indented YAML after
/// `action detect-gpus on gpu/0: completed`, up to the next step.
fn printed_detect_results(log: &str) -> Option<Value> {
    let (_, tail) = log.split_once("action detect-gpus on gpu/0: completed\n")?;
    let block: String = tail
        .lines()
        .take_while(|l| !l.starts_with("== "))
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    serde_yaml::from_str(&block).ok()
}

/// The text of a `print-file` step whose path ends with `name`.
fn printed_file<'a>(log: &'a str, name: &str) -> Option<&'a str> {
    let header = log
        .lines()
        .find(|l| l.starts_with("  --- ") && l.ends_with(&format!("{name} ---")))?;
    let (_, tail) = log.split_once(&format!("{header}\n"))?;
    Some(tail.split("\n== ").next().unwrap_or(tail))
}

/// The charm binary itself on the real GPU (`scenarios/real-gpu.yaml` in the simulator, the
/// slurmd unit reading the machine's NVML and sysfs): `detect-gpus` returned what the replay
/// gives today, the unit and the controller went active, and the controller wrote our gres.conf.
#[test]
fn the_charms_on_the_real_gpu_match_the_replay() {
    for machine in machines() {
        let inv = replay(&machine);
        let suite = suites(&machine)
            .into_iter()
            .find(|s| machine.join(format!("juju-sim-{s}.txt")).is_file())
            .unwrap_or_else(|| panic!("{}: no juju-sim-<suite>.txt", machine.display()));
        let at = format!("{} (juju-sim-{suite}.txt)", machine.display());
        let log = read(&machine, &format!("juju-sim-{suite}.txt"));
        assert!(
            log.contains("expectations met"),
            "{at}: the scenario failed:\n{log}"
        );
        let slurmd_c = read(&machine, &format!("{suite}-slurmd-C.txt"));
        let want = gpu_probe::record(&inv, &slurmd_c).unwrap_or_else(|e| panic!("{e}"));
        let got = printed_detect_results(&log)
            .unwrap_or_else(|| panic!("{at}: no detect-gpus results in\n{log}"));
        assert_eq!(
            got, want["detect_gpus"],
            "{at}: detect-gpus differs from the replay"
        );
        let (node_line, gres_conf) =
            gpu_probe::controller_files(&inv, &slurmd_c).unwrap_or_else(|e| panic!("{e}"));
        let written = printed_file(&log, "gres.conf").expect("gres.conf printed");
        assert_eq!(written.trim_end(), gres_conf.trim_end(), "{at}: gres.conf");
        let slurm_conf = printed_file(&log, "slurm.conf").expect("slurm.conf printed");
        let node = node_line.split_whitespace().next().expect("NodeName=");
        let line = slurm_conf
            .lines()
            .find(|l| l.starts_with(&format!("{node} ")))
            .unwrap_or_else(|| panic!("{at}: no {node} line in\n{slurm_conf}"));
        // The unit also publishes its GPU features, which `controller_files` leaves out.
        let tokens: Vec<&str> = line.split_whitespace().collect();
        for t in node_line.split_whitespace().filter(|t| !is_real_memory(t)) {
            assert!(tokens.contains(&t), "{at}: {t} missing from {line:?}");
        }
    }
}

/// A node line's `RealMemory=` token.
fn is_real_memory(token: &str) -> bool {
    token.starts_with("RealMemory=")
}

/// The same node line except `RealMemory`. The runs on the real GPU (`juju-sim-<suite>.txt`,
/// `jobs-trixie.txt`) were recorded when `RealMemory` was published exactly as `slurmd -C`
/// printed it; since issue 39 it is published below (`memory-headroom`), a value Slurm accepts
/// whenever it accepted the higher one (a node may register with more memory than configured).
/// Everything else on the line must still be what the real Slurm ran on.
fn same_but_real_memory(a: &str, b: &str) -> bool {
    let tokens = |l: &str| -> Vec<String> {
        l.split_whitespace()
            .filter(|t| !is_real_memory(t))
            .map(str::to_owned)
            .collect()
    };
    tokens(a) == tokens(b)
}

/// The part of a `job-on-gpu.sh` log under the header starting `== <title>`, up to the next one.
fn section<'a>(log: &'a str, title: &str) -> &'a str {
    let start = log
        .find(&format!("== {title}"))
        .unwrap_or_else(|| panic!("no `== {title}` in the job log"));
    let body = &log[start..];
    let body = body.split_once('\n').map_or("", |(_, b)| b);
    body.split("\n== ").next().unwrap_or(body)
}

/// Real slurmctld and slurmd on the real GPU, configured with our files
/// (`tools/gpu-probe/job-on-gpu.sh`, `jobs-trixie.txt`): the node line and gres.conf they ran
/// on are the ones the controller writes today for that machine, the node came up idle with our
/// GRES, a job asking for one GPU got `CUDA_VISIBLE_DEVICES=0` and saw the H100, one asking by
/// type got it too, `--constraint=<GPU type>` ran there and an unknown feature was refused, and
/// a job asking for more GPUs than the node has was refused.
#[test]
fn real_slurm_ran_jobs_on_the_real_gpu_with_our_files() {
    for machine in machines() {
        if !machine.join("jobs-trixie.txt").is_file() {
            continue;
        }
        let at = format!("{} (jobs-trixie.txt)", machine.display());
        let log = read(&machine, "jobs-trixie.txt");
        let slurmd_c = read(&machine, "trixie-slurmd-C.txt");
        let (node_line, gres_conf) = gpu_probe::controller_files(&replay(&machine), &slurmd_c)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            section(&log, "slurm.conf")
                .lines()
                .any(|l| same_but_real_memory(l, &node_line)),
            "{at}: the cluster did not run on today's node line {node_line:?}"
        );
        let ran_gres = section(&log, "gres.conf");
        for l in gres_conf.lines().filter(|l| l.starts_with("NodeName=")) {
            assert!(
                ran_gres.lines().any(|r| r == l),
                "{at}: gres.conf lacks {l:?}"
            );
        }
        let gres = node_line
            .split_whitespace()
            .find_map(|t| t.strip_prefix("Gres="))
            .expect("Gres= on the node line");
        let node = node_line.split_whitespace().next().expect("NodeName=");
        let sinfo = section(&log, "sinfo");
        let wanted = format!("{} {gres}(S:0) idle", node.trim_start_matches("NodeName="));
        assert!(
            sinfo.contains(&wanted),
            "{at}: sinfo is not {wanted:?}:\n{sinfo}"
        );
        let one = section(&log, "srun --gres=gpu:1");
        assert!(
            one.contains("CUDA_VISIBLE_DEVICES=0 ") && one.contains("exit status: 0"),
            "{at}: the one-GPU job:\n{one}"
        );
        // All of the node's GPUs by type (`gpu:<type>:<n>`, the node's first Gres item).
        let first = gres.split(',').next().unwrap_or(gres);
        let typed = section(&log, &format!("srun --gres={first} "));
        assert!(
            typed.contains("CUDA_VISIBLE_DEVICES=0") && typed.contains("exit status: 0"),
            "{at}: the job asking by type:\n{typed}"
        );
        // The GPU type is a node feature (`gpu-features`, on by default): --constraint finds it.
        let gtype = first.split(':').nth(1).expect("gpu:<type>:<n>");
        let constrained = section(&log, &format!("srun --constraint={gtype} "));
        assert!(
            constrained.contains("exit status: 0"),
            "{at}: --constraint={gtype}:\n{constrained}"
        );
        let nowhere = section(&log, "srun --constraint=not_a_gpu_here ");
        assert!(
            nowhere.contains("exit status: 1"),
            "{at}: an unknown feature:\n{nowhere}"
        );
        let count: u32 = first
            .rsplit(':')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("count");
        let too_many = section(&log, &format!("srun --gres=gpu:{} ", count + 1));
        assert!(
            too_many.contains("Requested node configuration is not available")
                && too_many.contains("exit status: 1"),
            "{at}: asking for more GPUs than the node has:\n{too_many}"
        );

        // `gpu-sharing=shard:4`: the cluster ran on the charm's shard records, and two jobs
        // holding one shard each ran on the one GPU at the same time.
        let files: Value = serde_json::from_str(&read(&machine, "trixie-files-shard.json"))
            .expect("recorded JSON");
        let (shard_line, shard_gres) = gpu_probe::controller_files_sharing(
            &replay(&machine),
            &slurmd_c,
            slurm_charms::gpu::GpuSharing::Shard(4),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(files["node_line"], shard_line, "{at}: shard node line");
        assert_eq!(files["gres_conf"], shard_gres, "{at}: shard gres.conf");
        assert!(
            section(&log, "shard slurm.conf")
                .lines()
                .any(|l| same_but_real_memory(l, &shard_line)),
            "{at}: the shard cluster did not run on {shard_line:?}"
        );
        // Slurm shows the shares with the GPU's type: `shard:nvidia_h100_80gb_hbm3:4(S:0)`.
        let sinfo = section(&log, "shard sinfo");
        let shares = sinfo
            .split([' ', ','])
            .filter(|item| item.starts_with("shard:"))
            .filter_map(|item| {
                item.split('(')
                    .next()?
                    .rsplit(':')
                    .next()?
                    .parse::<u32>()
                    .ok()
            })
            .collect::<Vec<_>>();
        assert!(
            shares == [4 * count] && sinfo.contains("idle"),
            "{at}: 4 shards per GPU, idle:\n{sinfo}"
        );
        let both = section(&log, "two srun --gres=shard:1 at once");
        let times = |what: &str| -> Vec<(String, f64)> {
            both.lines()
                .filter_map(|l| {
                    let mut t = l.split_whitespace();
                    (t.next() == Some("job")).then_some(())?;
                    let id = t.next()?.to_owned();
                    (t.next() == Some(what)).then_some(())?;
                    Some((id, t.next()?.parse().ok()?))
                })
                .collect()
        };
        let (starts, ends) = (times("start"), times("end"));
        assert_eq!(
            (starts.len(), ends.len()),
            (2, 2),
            "{at}: two shard jobs:\n{both}"
        );
        assert_ne!(
            starts[0].0, starts[1].0,
            "{at}: two different jobs:\n{both}"
        );
        let end_of = |id: &str| ends.iter().find(|(j, _)| j == id).map(|(_, t)| *t);
        for (id, start) in &starts {
            let other = starts.iter().find(|(j, _)| j != id).expect("the other job");
            let other_end = end_of(&other.0).expect("the other job's end");
            assert!(
                *start < other_end && other.1 < end_of(id).expect("its end"),
                "{at}: the shard jobs did not overlap:\n{both}"
            );
        }
        assert_eq!(
            both.matches("CUDA_VISIBLE_DEVICES=0").count(),
            2,
            "{at}: both shard jobs see GPU 0:\n{both}"
        );
    }
}
