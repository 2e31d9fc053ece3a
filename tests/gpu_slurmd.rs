//! Acceptance: the gres.conf lines rendered for the fixtures are accepted by Debian's real
//! `slurmd -G` (Slurm 22.05), which prints the records it ends up with (slurm-gres.md §4).
//! Device files are symlinks to /dev/null under a temporary directory (slurmd only stats them;
//! stat follows the link to a character device), so no root or GPU is needed.
//! Skips loudly when slurmd is not installed; fails instead with `E2E_REQUIRED=1` (CI).

#[path = "common/required.rs"]
mod required;
#[path = "fixtures/gpu/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use slurm_charms::gpu::Inventory;
use slurm_charms::slurm::GresLine;
use support::{Fake, conf_line, file_spec, mig_minors_text, text, write_cpu_topology};

const NODE: &str = "gpunode";

fn find_slurmd() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join("slurmd"))
        .find(|p| p.is_file())
}

/// `slurmd`, or `None` after a loud skip (a failure where `E2E_REQUIRED` is set).
fn slurmd_or_skip(test: &str) -> Option<PathBuf> {
    let found = find_slurmd();
    if found.is_none() {
        required::skip(
            &format!("gpu_slurmd {test}"),
            "slurmd (Slurm 22.05)",
            "apt-get install slurmd",
        );
    }
    found
}

/// A record as slurmd prints it: (type, count, file, cores, links).
type Printed = (String, String, String, Option<String>, Option<String>);

fn parse_printed(stderr: &str) -> Vec<Printed> {
    stderr
        .lines()
        .filter_map(|l| l.split_once("Gres Name=gpu ").map(|(_, rest)| rest))
        .map(|rest| {
            let get = |key: &str| {
                rest.split_whitespace()
                    .find_map(|t| t.strip_prefix(&format!("{key}=")))
                    .map(str::to_owned)
            };
            (
                get("Type").unwrap_or_default(),
                get("Count").unwrap_or_default(),
                get("File").unwrap_or_default(),
                get("Cores"),
                get("Links"),
            )
        })
        .collect()
}

fn relocate(text: &str, dir: &Path) -> String {
    text.replace("/dev/", &format!("{}/dev/", dir.display()))
}

/// Runs `slurmd -G` on the rendered config; returns (exit ok, stderr).
fn run_slurmd(slurmd: &Path, dir: &Path, inv: &Inventory, records: &[GresLine]) -> (bool, String) {
    for rec in records {
        let paths: Vec<String> = rec
            .devices
            .iter()
            .flat_map(|d| d.paths())
            .map(ToString::to_string)
            .collect();
        for p in paths {
            let target = PathBuf::from(relocate(&p, dir));
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            if !target.exists() {
                std::os::unix::fs::symlink("/dev/null", &target).unwrap();
            }
        }
    }
    let gres_conf: String = records
        .iter()
        .map(|r| relocate(&conf_line(r, NODE), dir) + "\n")
        .collect();
    std::fs::write(dir.join("gres.conf"), gres_conf).unwrap();
    let slurm_conf = format!(
        "ClusterName=gputest\nSlurmctldHost=localhost\nGresTypes=gpu\nSelectType=select/cons_tres\n\
         SlurmdParameters=config_overrides\nSlurmdSpoolDir={d}/spool\nSlurmdPidFile={d}/slurmd.pid\n\
         NodeName={NODE} CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 \
         RealMemory=1000 Gres={gres}\nPartitionName=debug Nodes=ALL Default=YES\n",
        d = dir.display(),
        gres = inv.gres_strings().join(","),
    );
    std::fs::write(dir.join("slurm.conf"), slurm_conf).unwrap();
    let out = Command::new(slurmd)
        .arg("-G")
        .arg("-N")
        .arg(NODE)
        .arg("-f")
        .arg(dir.join("slurm.conf"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn expected(records: &[GresLine], dir: &Path) -> Vec<Printed> {
    records
        .iter()
        .map(|r| {
            (
                text(&r.gres_type).unwrap_or_default(),
                r.device_count().to_string(),
                relocate(&file_spec(r), dir),
                text(&r.cores),
                text(&r.links),
            )
        })
        .collect()
}

fn accept(fake: &Fake) {
    let Some(slurmd) = slurmd_or_skip(std::thread::current().name().unwrap_or("accept")) else {
        return;
    };
    let inv = fake.detect();
    let records = inv.gres();
    assert!(!records.is_empty());
    let dir = tempfile::Builder::new()
        .prefix("gpuslurmd")
        .tempdir()
        .unwrap();
    let (ok, stderr) = run_slurmd(&slurmd, dir.path(), &inv, &records);
    assert!(ok, "slurmd -G failed:\n{stderr}");
    assert!(
        !stderr.contains("error:") && !stderr.contains("fatal:"),
        "slurmd -G complained:\n{stderr}"
    );
    assert_eq!(
        parse_printed(&stderr),
        expected(&records, dir.path()),
        "{stderr}"
    );
}

#[test]
fn slurmd_accepts_grouped_t4() {
    accept(&Fake::fixture("two_t4"));
}

#[test]
fn slurmd_accepts_mixed_models_with_non_contiguous_minors() {
    accept(&Fake::fixture("mixed"));
}

#[test]
fn slurmd_accepts_four_gpu_nvlink() {
    accept(&Fake::fixture("a100_sxm4_4x_nvlink"));
}

#[test]
fn slurmd_accepts_eight_h100_nvswitch_with_core_topology() {
    let fake = Fake::fixture("h100_sxm_8x_nvswitch");
    write_cpu_topology(&fake.root, 2, 56, 2);
    assert_eq!(
        text(&fake.detect().gres()[0].cores).as_deref(),
        Some("0-55")
    );
    accept(&fake);
}

#[test]
fn slurmd_accepts_mig_multiple_files() {
    let fake = Fake::fixture("a100_mig");
    fake.write_host_file("proc/driver/nvidia-caps/mig-minors", &mig_minors_text(2));
    accept(&fake);
}

#[test]
fn slurmd_check_can_fail_on_cores_outside_the_node() {
    let Some(slurmd) = slurmd_or_skip("slurmd_check_can_fail_on_cores_outside_the_node") else {
        return;
    };
    let fake = Fake::new(
        r#"{"devices":[{"name":"Tesla T4","uuid":"GPU-1","pci_bus_id":"00000000:01:00.0",
            "minor":0,"cpu_affinity":[500]}]}"#,
    );
    let inv = fake.detect();
    let dir = tempfile::Builder::new()
        .prefix("gpuslurmd")
        .tempdir()
        .unwrap();
    let (_, stderr) = run_slurmd(&slurmd, dir.path(), &inv, &inv.gres());
    assert!(
        stderr.contains("error:") || stderr.contains("fatal:"),
        "{stderr}"
    );
}
