//! `charm/pack.sh` writes both `.charm` archives with the right files and modes, and the
//! simulator deploys the unzipped charms. (The binary comes from this test build through
//! `SLURM_CHARM_BIN`; the script's own release build is what operators run.)

#[path = "common/required.rs"]
mod required;
#[path = "charm_support.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use support::{Cluster, TWO_T4, repo};

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn pack(out: &Path) {
    let st = Command::new(repo().join("charm/pack.sh"))
        .arg(out)
        .env("SLURM_CHARM_BIN", env!("CARGO_BIN_EXE_slurm-charm"))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "pack.sh failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
}

/// `zipinfo` lines: (permissions, name).
fn listing(archive: &Path) -> Vec<(String, String)> {
    let out = Command::new("zipinfo").arg(archive).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('-'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[f.len() - 1].to_string())
        })
        .collect()
}

fn unzip(archive: &Path, dest: &Path) {
    let st = Command::new("unzip")
        .args(["-q", "-o"])
        .arg(archive)
        .arg("-d")
        .arg(dest)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn packs_both_charms_and_they_deploy() {
    let missing: Vec<&str> = ["zip", "unzip", "zipinfo"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    if !missing.is_empty() {
        required::skip(
            "pack_charms packs_both_charms_and_they_deploy",
            &missing.join(", "),
            "apt-get install zip unzip (.ci/run installs them)",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path());
    for (charm, yaml) in [
        ("slurmd", repo()),
        ("slurmctld", repo().join("charm/slurmctld")),
    ] {
        let archive = dir.path().join(format!("{charm}_amd64.charm"));
        let mut files = listing(&archive);
        files.sort_by(|a, b| a.1.cmp(&b.1));
        let expect = [
            ("-rw-r--r--", "actions.yaml"),
            ("-rw-r--r--", "config.yaml"),
            ("-rwxr-xr-x", "dispatch"),
            ("-rw-r--r--", "manifest.yaml"),
            ("-rw-r--r--", "metadata.yaml"),
        ];
        let got: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(got, expect, "{charm}");
        let dest = dir.path().join(charm);
        unzip(&archive, &dest);
        let manifest: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(dest.join("manifest.yaml")).unwrap())
                .unwrap();
        // Ubuntu 24.04 (Slurm 23.11) and 26.04 (Slurm 25.11): docs/slurm-versions.md
        let bases = manifest["bases"].as_sequence().expect("bases");
        assert_eq!(bases.len(), 2, "{bases:?}");
        for (base, channel) in bases.iter().zip(["24.04", "26.04"]) {
            assert_eq!(base["name"], "ubuntu");
            assert_eq!(base["channel"], channel);
            assert_eq!(base["architectures"][0], "amd64");
        }
        let meta: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(dest.join("metadata.yaml")).unwrap())
                .unwrap();
        assert_eq!(meta["name"], charm);
        for f in ["metadata.yaml", "config.yaml", "actions.yaml"] {
            assert_eq!(
                std::fs::read(dest.join(f)).unwrap(),
                std::fs::read(yaml.join(f)).unwrap(),
                "{charm}/{f}"
            );
        }
        assert_eq!(
            std::fs::read(dest.join("dispatch")).unwrap(),
            std::fs::read(env!("CARGO_BIN_EXE_slurm-charm")).unwrap()
        );
    }
    // The unzipped charms deploy and enlist a GPU node.
    let work = tempfile::tempdir().unwrap();
    let mut c = Cluster::from_dirs(
        work,
        dir.path().join("slurmd"),
        dir.path().join("slurmctld"),
        juju_sim::SimOptions::default(),
    );
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    assert!(
        c.gres_conf()
            .contains("NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia1 Links=0,-1\n")
    );
    assert_eq!(
        c.status("slurmd/0").1,
        "2 GPUs: gpu:tesla_t4:2; new node: slurmd starts with node-configured"
    );
}
