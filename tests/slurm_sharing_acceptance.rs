//! Real-Slurm acceptance of GPU sharing (issue 15 item 2) on every supported version (22.05
//! here, 24.11 and 26.05 in the Debian roots of `tools/e2e/roots.sh`): node records built the
//! way the slurmd charm builds them (`gpu-sharing` shard:4 on a 2-GPU node, mps:100 on a 1-GPU
//! node), fed through the controller's ingest and plan as the slurmctld charm does; the
//! rendered slurm.conf starts the real slurmctld with the sharing GRES on the nodes, and
//! `slurmd -G` on each node reads the rendered gres.conf into the records we meant. A skip
//! (no daemons, no root, no mknod) is loud, and a failure with `E2E_REQUIRED=1`.

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use oracle::{Oracle, Verdict, required};
use slurm_charms::charms::slurmctld::desired::{Settings, plan};
use slurm_charms::charms::slurmctld::store::Store;
use slurm_charms::charms::slurmd::facts::{NodeFacts, NodeOverrides, build_node_record};
use slurm_charms::charms::slurmd::memory::MemoryHeadroom;
use slurm_charms::gpu::GpuSharing;
use slurm_charms::slurm::types::{DeviceFiles, DevicePath};
use slurm_charms::slurm::*;
use std::path::Path;
use std::process::Command;

/// A node record as the slurmd charm publishes it: `gpus` T4s at `<dir>/nvidia<i>` and the
/// shared records `sharing` adds.
fn record(name: &str, dir: &str, gpus: u32, sharing: &str) -> String {
    let mut node = NodeConf::new(name.parse().unwrap());
    for (k, v) in [("CPUs", "4"), ("RealMemory", "1000")] {
        node.set(k, v).unwrap();
    }
    let files: Vec<DevicePath> = (0..gpus)
        .map(|i| format!("{dir}/nvidia{i}").parse().unwrap())
        .collect();
    let mut gres = vec![GresLine::gpu(
        "tesla_t4".parse().unwrap(),
        DeviceFiles::new(files).unwrap(),
    )];
    let (shared, _) = GpuSharing::parse(sharing).unwrap().records(&gres);
    gres.extend(shared);
    let facts = NodeFacts { node };
    build_node_record(
        &facts,
        gres,
        &NodeOverrides::default(),
        MemoryHeadroom::default(),
        false,
    )
    .unwrap()
    .to_relation_value()
}

/// The controller's slurm.conf and gres.conf for the shard node `gs` and the mps node `gm`, as
/// the controller renders them for Slurm `version` (`HealthCheckTimeout` is version-dependent).
fn controller_files(dir: &str, version: &str) -> (String, String) {
    let mut cache = Store::default();
    cache.add_relation(
        1,
        "compute",
        Some(r#"{"compute":{"State":"UP"}}"#.into()),
        [
            ("compute/0".to_string(), record("gs", dir, 2, "shard:4")),
            ("compute/1".to_string(), record("gm", dir, 1, "mps:100")),
        ],
    );
    let settings = Settings {
        cluster_name: "sharing".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: slurm_charms::slurm::HealthCheck::parse(
            None,
            "",
            slurm_charms::slurm::SlurmVersion::parse_v_output(
                &format!("slurm {version}.0"),
                "test",
            )
            .ok(),
        ),
        openmetrics: slurm_charms::slurm::openmetrics::serves_openmetrics(
            slurm_charms::slurm::SlurmVersion::parse_v_output(
                &format!("slurm {version}.0"),
                "test",
            )
            .ok(),
        ),
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    };
    let p = plan(&settings, &cache);
    let slurm = p.slurm_conf.expect("slurm.conf planned");
    let gres = p.gres_conf.expect("gres.conf planned");
    (slurm, gres)
}

/// The controller's slurm.conf pointed at the scratch directory (ports, paths, this host,
/// nodes at 127.0.0.1), keeping its nodes, GresTypes and partition.
fn scratch_slurm_conf(planned: &str, inside: &str) -> String {
    let mut conf = parse_slurm_conf(planned, "slurm.conf").unwrap();
    let base = Oracle::base_model(inside);
    for (k, v) in base.owned {
        if k != GlobalKey::GresTypes {
            conf.owned.insert(k, v);
        }
    }
    conf.slurmctld_hosts = base.slurmctld_hosts;
    conf.set_global("MpiDefault", "none").unwrap();
    for n in &mut conf.nodes {
        n.set("NodeAddr", "127.0.0.1").unwrap();
    }
    render_slurm_conf(&conf).unwrap()
}

/// `slurmd -G -N <node>` in the oracle's root through `tools/gpu-oracle/slurmd-g.sh` (a
/// private mount namespace with `/dev/nvidia0..1` made and `work` at `/mnt`); its output.
fn slurmd_g(o: &Oracle, work: &Path, node: &str) -> (bool, String) {
    let out = Command::new(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/gpu-oracle/slurmd-g.sh"),
    )
    .arg(&o.root)
    .arg(work)
    .env("SLURMD_NODE", node)
    .output()
    .expect("slurmd-g.sh runs");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

#[test]
fn real_slurm_takes_shard_and_mps_from_the_charms() {
    if !is_root() {
        eprintln!(
            "\n*** SKIPPED sharing acceptance: not root (slurmd-g.sh needs a mount namespace) ***\n"
        );
        assert!(!required(), "not root");
        return;
    }
    let (planned, gres) = controller_files("/dev", "22.05");
    assert!(planned.contains("\nGresTypes=gpu,mps,shard\n"), "{planned}");
    for want in [
        "NodeName=gs Name=shard File=/dev/nvidia0 Count=4\n",
        "NodeName=gs Name=shard File=/dev/nvidia1 Count=4\n",
        "NodeName=gm Name=mps File=/dev/nvidia0 Count=100\n",
    ] {
        assert!(gres.contains(want), "{want} in\n{gres}");
    }
    for o in Oracle::all() {
        let v = o.version;
        let (planned, gres) = controller_files("/dev", v);
        // slurmd on each node: the records we meant, no complaint.
        let work = tempfile::Builder::new()
            .prefix("sharing-acc")
            .tempdir()
            .unwrap();
        let w = work.path();
        std::fs::create_dir_all(w.join("spool")).unwrap();
        std::fs::write(w.join("slurm.conf"), scratch_slurm_conf(&planned, "/mnt")).unwrap();
        std::fs::write(w.join("gres.conf"), &gres).unwrap();
        std::fs::write(
            w.join("devices"),
            "/dev/nvidia0 195 0\n/dev/nvidia1 195 1\n",
        )
        .unwrap();
        for (node, want) in [
            (
                "gs",
                vec![
                    "Name=shard Type=tesla_t4 Count=4 Index=0 ID=1918986455 File=/dev/nvidia0",
                    "Name=shard Type=tesla_t4 Count=4 Index=1 ID=1918986455 File=/dev/nvidia1",
                    "Name=gpu Type=tesla_t4 Count=1 Index=0 ID=7696487 File=/dev/nvidia0",
                    "Name=gpu Type=tesla_t4 Count=1 Index=1 ID=7696487 File=/dev/nvidia1",
                ],
            ),
            (
                "gm",
                vec![
                    "Name=mps Type=tesla_t4 Count=100 Index=0 ID=7565421 File=/dev/nvidia0",
                    "Name=gpu Type=tesla_t4 Count=1 Index=0 ID=7696487 File=/dev/nvidia0",
                ],
            ),
        ] {
            let (ok, out) = slurmd_g(&o, w, node);
            let complaints: Vec<&str> = out
                .lines()
                .filter(|l| {
                    let l = l.to_ascii_lowercase();
                    (l.contains("error:") || l.contains("fatal:") || l.contains("warning:"))
                        && !l.contains("cgroup/v1 plugin is deprecated")
                        && !l.contains("configless")
                })
                .collect();
            assert!(
                ok && complaints.is_empty(),
                "{v}: slurmd -G {node}:\n{out}\n--- gres.conf ---\n{gres}"
            );
            for line in want {
                assert!(
                    out.contains(line),
                    "{v}: {node}: no {line:?} in\n{out}\n{gres}"
                );
            }
        }

        // slurmctld: up on the file, with no complaint about GRES.
        let verdict = o.judge_with(|inside| scratch_slurm_conf(&planned, inside));
        match &verdict {
            Verdict::Up(log) => {
                for l in log
                    .lines()
                    .filter(|l| l.contains("error") || l.contains("fatal"))
                {
                    let lower = l.to_ascii_lowercase();
                    assert!(
                        !lower.contains("shard")
                            && !lower.contains("mps")
                            && !lower.contains("gres"),
                        "{v}: slurmctld complained: {l}\n{planned}"
                    );
                }
            }
            Verdict::Refused(log) => panic!("{v}: slurmctld refused the sharing cluster:\n{log}"),
        }
        eprintln!("Slurm {v}: shard and mps accepted by slurmctld and slurmd -G");
    }
}

#[test]
fn the_controller_rejects_a_unit_sharing_wrongly_and_keeps_the_rest() {
    // A unit claiming more shards in Gres= than its records give is refused alone.
    let good = record("gs", "/dev", 2, "shard:4");
    let bad = record("gm", "/dev", 1, "mps:100").replace("mps:100", "mps:300");
    let mut cache = Store::default();
    cache.add_relation(
        1,
        "compute",
        Some(r#"{"compute":{"State":"UP"}}"#.into()),
        [
            ("compute/0".to_string(), good),
            ("compute/1".to_string(), bad),
        ],
    );
    let settings = Settings {
        cluster_name: "sharing".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    };
    let p = plan(&settings, &cache);
    let slurm = p.slurm_conf.clone().expect("slurm.conf planned");
    assert!(slurm.contains("NodeName=gs "), "{slurm}");
    assert!(!slurm.contains("NodeName=gm "), "{slurm}");
    assert!(slurm.contains("\nGresTypes=gpu,shard\n"), "{slurm}");
    let why = p.problems();
    assert!(why.contains("compute/1") && why.contains("Gres"), "{why}");
}
