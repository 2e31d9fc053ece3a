//! Golden files: the exact bytes the renderer writes for fixed models. Regenerate with
//! `UPDATE_GOLDEN=1 cargo test --test slurm_golden` and review the diff.

#[path = "slurm_fixtures.rs"]
mod fixtures;

use std::path::PathBuf;

use fixtures::{big_cluster, cluster, files, nn};
use slurm_charms::slurm::types::GresDevices;
use slurm_charms::slurm::*;

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/slurm")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create)",
            path.display()
        )
    });
    assert_eq!(
        actual,
        want,
        "{} differs (UPDATE_GOLDEN=1 regenerates)",
        path.display()
    );
}

#[test]
fn small_cluster() {
    let (mut conf, gres) = cluster();
    conf.extra
        .push(("SchedulerParameters".into(), "bf_interval=60".into()));
    conf.includes.push("slurm.conf.slurmd".into());
    conf.node_sets.push(NodeSet {
        name: "slurmd".parse().unwrap(),
        feature: Some("slurmd".parse().unwrap()),
        nodes: Default::default(),
    });
    let out = render_files(&conf, &gres).unwrap();
    golden("small.slurm.conf", &out.slurm_conf);
    golden("small.gres.conf", &out.gres_conf);
    assert_eq!(
        parse_slurm_conf(&out.slurm_conf, "small.slurm.conf").unwrap(),
        conf.normalized()
    );
}

#[test]
fn folded_cluster() {
    let (conf, gres) = big_cluster(24, true);
    let out = render_files(&conf, &gres).unwrap();
    golden("folded.slurm.conf", &out.slurm_conf);
    golden("folded.gres.conf", &out.gres_conf);
}

#[test]
fn gres_features() {
    let mut g = GresConf {
        auto_detect: Some(AutoDetect::Off),
        ..GresConf::default()
    };
    let mut strided = fixtures::gpu(
        "tesla_t4",
        "/dev/nvidia0,/dev/nvidia2,/dev/nvidia3".parse().unwrap(),
    );
    strided.cores = Some("0-3,8".parse().unwrap());
    strided.flags = "nvidia_gpu_env".parse().unwrap();
    let mut linked = fixtures::gpu("nvidia_h100_80gb_hbm3", files(1..2));
    linked.links = Some("-1,4".parse().unwrap());
    let mig = fixtures::mig_record();
    let mps = GresLine {
        count: Some(200),
        devices: Some(GresDevices::File(files(0..1))),
        ..GresLine::new("mps".parse().unwrap())
    };
    g.nodes.insert(nn("node-a"), vec![strided].into());
    g.nodes.insert(nn("node-b"), vec![linked].into());
    g.nodes.insert(nn("node-c"), vec![mig, mps].into());
    let out = g.render().unwrap();
    golden("features.gres.conf", &out);
    assert_eq!(
        parse_gres_conf(&out, "features.gres.conf").unwrap(),
        g.normalized()
    );
}
