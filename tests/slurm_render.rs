//! Render tests: exact output for small models, folding, determinism, and every fatal
//! configuration refused.

use slurm_charms::slurm::*;
use std::sync::Arc;

#[path = "slurm_fixtures.rs"]
mod fixtures;
use fixtures::{cluster, files, gpu, nn, node};
use slurm_charms::slurm::types::{
    CoreList, DeviceFiles, Feature, GresDevices, GresName, LinksRow, MultipleFiles, NodeName,
    Reason,
};

#[test]
fn renders_expected_text() {
    let (conf, gres) = cluster();
    let out = render_files(&conf, &gres).unwrap();
    println!("{}\n{}", out.slurm_conf, out.gres_conf);
    assert!(out.slurm_conf.contains(
        "\nNodeName=gpu-[1-2] CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=31848 Gres=gpu:tesla_t4:2,gpu:nvidia_l40s:2 MemSpecLimit=1024\n"
    ));
    assert!(out.slurm_conf.contains(
        "\nPartitionName=slurmd Nodes=cpu-1,gpu-[1-2,10] Default=YES State=UP MaxTime=1:00:00\n"
    ));
    assert!(
        out.slurm_conf
            .contains("\nDownNodes=gpu-10 State=DOWN Reason=\"New node.\"\n")
    );
    assert_eq!(
        out.gres_conf.lines().skip(1).collect::<Vec<_>>(),
        [
            "NodeName=gpu-[1-2] Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1]",
            "NodeName=gpu-[1-2] Name=gpu Type=nvidia_l40s File=/dev/nvidia[2-3]",
            "NodeName=gpu-10 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0",
        ]
    );
}

#[test]
fn rendering_is_deterministic_and_order_independent() {
    let (conf, gres) = cluster();
    let a = render_files(&conf, &gres).unwrap();
    let mut shuffled = conf.clone();
    shuffled.nodes.reverse();
    shuffled.down_nodes.reverse();
    let b = render_files(&shuffled, &gres).unwrap();
    assert_eq!(a, b);
}

/// Nodes of one shape share one record list (`Arc`) in the controller's model; the renderer
/// groups lists by pointer first. Whether equal lists are shared or separate copies, and
/// whether a shared list sits among copies of it, the files are the same bytes.
#[test]
fn shared_and_separate_record_lists_render_alike() {
    let (conf, gres) = cluster();
    let separate = render_files(&conf, &gres).unwrap();
    let mut shared = gres.clone();
    let one = Arc::clone(&shared.nodes[&nn("gpu-1")]);
    shared.nodes.insert(nn("gpu-2"), Arc::clone(&one));
    assert!(Arc::ptr_eq(
        &shared.nodes[&nn("gpu-1")],
        &shared.nodes[&nn("gpu-2")]
    ));
    assert!(!Arc::ptr_eq(
        &gres.nodes[&nn("gpu-1")],
        &gres.nodes[&nn("gpu-2")]
    ));
    assert_eq!(render_files(&conf, &shared).unwrap(), separate);
    // a shared list whose content differs from its neighbours' stays on its own lines
    let mut changed = shared.clone();
    let mut other = (*one).clone();
    other[0].cores = CoreList::from_ids(&[0, 1]);
    changed.nodes.insert(nn("gpu-2"), Arc::new(other));
    let out = render_files(&conf, &changed).unwrap();
    assert!(
        out.gres_conf
            .contains("NodeName=gpu-1 Name=gpu Type=tesla_t4"),
        "{}",
        out.gres_conf
    );
    assert!(
        out.gres_conf
            .contains("NodeName=gpu-2 Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1] Cores=0-1"),
        "{}",
        out.gres_conf
    );
}

#[test]
fn reason_is_quoted_and_escaped() {
    let (mut conf, _) = cluster();
    conf.down_nodes[0].reason = Some(r"disk #2 \ bad".parse().unwrap());
    let out = render_slurm_conf(&conf).unwrap();
    assert!(out.contains(r#"Reason="disk \#2 \\ bad""#), "{out}");
}

#[test]
fn nodes_with_addresses_are_not_folded() {
    let mut conf = SlurmConf::new("c", "ctl");
    for i in 1..=2 {
        let mut n = NodeConf::new(nn(&format!("n{i}")));
        n.set("NodeAddr", &format!("10.0.0.{i}")).unwrap();
        n.cpus = Some(2);
        conf.nodes.push(n);
    }
    let out = render_slurm_conf(&conf).unwrap();
    assert!(
        out.contains(
            "NodeName=n1 CPUs=2 NodeAddr=10.0.0.1\nNodeName=n2 CPUs=2 NodeAddr=10.0.0.2\n"
        ),
        "{out}"
    );
}

fn refused(conf: &SlurmConf, gres: &GresConf) -> ConfigError {
    render_files(conf, gres).expect_err("must be refused")
}

#[test]
fn duplicate_node_is_refused() {
    let (mut conf, gres) = cluster();
    conf.nodes.push(node("cpu-1", &[]));
    assert_eq!(
        refused(&conf, &gres),
        ConfigError::DuplicateNode {
            node: "cpu-1".into()
        }
    );
}

#[test]
fn duplicate_partition_is_refused() {
    let (mut conf, gres) = cluster();
    conf.partitions
        .push(Partition::new("slurmd".parse().unwrap()));
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::DuplicatePartition { .. }
    ));
}

#[test]
fn typed_and_untyped_gpu_on_one_node_is_refused() {
    let (mut conf, gres) = cluster();
    conf.nodes[0].gres.push(GresSpec::parse("gpu:1").unwrap());
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::MixedTypedGres { .. }
    ));
}

#[test]
fn file_and_no_file_records_are_refused() {
    let (conf, mut gres) = cluster();
    let mut bare = gpu("tesla_t4", files(0..1));
    bare.devices = None;
    bare.count = Some(1);
    Arc::make_mut(gres.nodes.get_mut("gpu-1").unwrap()).push(bare);
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::MixedFileGres { .. }
    ));
}

#[test]
fn typed_and_untyped_records_are_refused() {
    let (conf, mut gres) = cluster();
    let mut untyped = gpu("x", files(5..6));
    untyped.gres_type = None;
    Arc::make_mut(gres.nodes.get_mut("gpu-1").unwrap()).push(untyped);
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::MixedTypeGresConf { .. }
    ));
}

#[test]
fn two_bare_records_are_refused() {
    let mut gres = GresConf::default();
    let bare = GresLine {
        count: Some(1),
        ..GresLine::new(GresName::gpu())
    };
    gres.nodes.insert(nn("n1"), vec![bare.clone(), bare].into());
    assert!(matches!(
        render_gres_conf(&gres),
        Err(ConfigError::DuplicateUntypedGres { .. })
    ));
}

#[test]
fn gres_count_must_match_file_count() {
    let (mut conf, gres) = cluster();
    conf.nodes
        .iter_mut()
        .find(|n| n.name == "gpu-1")
        .unwrap()
        .gres[0]
        .count = 3;
    assert_eq!(
        refused(&conf, &gres),
        ConfigError::GresCountMismatch {
            node: "gpu-1".into(),
            spec: "gpu:tesla_t4".into(),
            slurm_conf: 3,
            gres_conf: 2
        }
    );
}

#[test]
fn type_strings_must_match_byte_for_byte() {
    let (mut conf, gres) = cluster();
    conf.nodes
        .iter_mut()
        .find(|n| n.name == "gpu-10")
        .unwrap()
        .gres[0]
        .gres_type = Some("nvidia_a100".parse().unwrap());
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::GresCountMismatch {
            slurm_conf: 1,
            gres_conf: 0,
            ..
        }
    ));
}

#[test]
fn gres_conf_devices_without_slurm_conf_gres_are_refused() {
    let (mut conf, gres) = cluster();
    conf.nodes
        .iter_mut()
        .find(|n| n.name == "gpu-10")
        .unwrap()
        .gres
        .clear();
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::GresCountMismatch {
            slurm_conf: 0,
            gres_conf: 1,
            ..
        }
    ));
}

#[test]
fn explicit_count_must_match_files() {
    let (conf, mut gres) = cluster();
    Arc::make_mut(gres.nodes.get_mut("gpu-1").unwrap())[0].count = Some(4);
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::CountNotFileCount {
            count: 4,
            files: 2,
            ..
        }
    ));
}

#[test]
fn multiple_files_rules() {
    // What Slurm treats as fatal cannot be built: one file, a file twice, File with
    // MultipleFiles.
    assert!(MultipleFiles::try_from("/dev/nvidia0").is_err());
    assert!(MultipleFiles::try_from("/dev/nvidia0,/dev/nvidia0").is_err());
    let both = GresLine::from_pairs(
        "n1",
        &[
            ("Name", "gpu"),
            ("File", "/dev/nvidia1"),
            (
                "MultipleFiles",
                "/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21",
            ),
        ],
    );
    assert!(matches!(
        both,
        Err(ConfigError::FileAndMultipleFiles { .. })
    ));
    let mut gres = GresConf::default();
    let ok = fixtures::mig_record();
    gres.nodes.insert(nn("n1"), vec![ok].into());
    let out = render_gres_conf(&gres).unwrap();
    assert!(out.contains(
        "NodeName=n1 Name=gpu Type=nvidia_a100_1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22\n"
    ), "{out}");
}

#[test]
fn links_need_one_file_and_one_self() {
    let mut gres = GresConf::default();
    let mut r = gpu("t4", files(0..2));
    r.links = Some("-1,2".parse().unwrap());
    gres.nodes.insert(nn("n1"), vec![r.clone()].into());
    assert!(matches!(
        render_gres_conf(&gres),
        Err(ConfigError::LinksNeedOneFile { .. })
    ));
    r.devices = Some(GresDevices::File(files(0..1)));
    gres.nodes.insert(nn("n1"), vec![r].into());
    render_gres_conf(&gres).unwrap();
    assert!(LinksRow::try_from("0,2").is_err());
    assert!(LinksRow::try_from("-1,-1").is_err());
}

#[test]
fn gres_name_must_be_in_gres_types() {
    let (mut conf, gres) = cluster();
    conf.set_owned(GlobalKey::GresTypes, "mps").unwrap();
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::GresNameNotInGresTypes { .. }
    ));
}

#[test]
fn unknown_references_are_refused() {
    let (mut conf, gres) = cluster();
    conf.partitions[0].nodes.insert("ghost".parse().unwrap());
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::UnknownPartitionNode { .. }
    ));
    let (mut conf, gres) = cluster();
    conf.down_nodes[0].nodes.insert("ghost".parse().unwrap());
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::UnknownDownNode { .. }
    ));
    let (mut conf, gres) = cluster();
    conf.down_nodes.push(DownNodes {
        nodes: ["gpu-10".parse().unwrap()].into(),
        state: Some(NodeState::Drain),
        reason: None,
    });
    assert!(matches!(
        refused(&conf, &gres),
        ConfigError::DuplicateDownNode { .. }
    ));
}

/// A change to a valid model that must make it unrenderable.
type Attempt = Box<dyn Fn(&mut SlurmConf, &mut GresConf)>;

#[test]
fn injection_attempts_are_refused_with_key_and_value() {
    let (conf, gres) = cluster();
    let attempts: Vec<Attempt> = vec![
        Box::new(|c, _| c.extra.push(("SchedulerParameters".into(), "a b".into()))),
        Box::new(|c, _| c.extra.push(("Bad Key".into(), "1".into()))),
        Box::new(|c, _| c.extra.push(("SelectType".into(), "select/linear".into()))),
        Box::new(|c, _| c.cluster_name = "a=b".into()),
        Box::new(|c, _| c.includes.push("/etc/slurm/x y".into())),
    ];
    for (i, attempt) in attempts.iter().enumerate() {
        let (mut c, mut g) = (conf.clone(), gres.clone());
        attempt(&mut c, &mut g);
        let e = render_files(&c, &g);
        assert!(e.is_err(), "attempt {i} was rendered: {e:?}");
    }
    // Values of vocabulary types cannot even be built with an injection in them.
    assert!(NodeName::try_from("cpu-1\nNodeName=evil").is_err());
    assert!(
        "Tesla T4"
            .parse::<slurm_charms::slurm::types::GresType>()
            .is_err()
    );
    assert!(DeviceFiles::try_from("/dev/nvidia0 Name=x").is_err());
    assert!(Feature::try_from("a#b").is_err());
    assert!(Reason::try_from("x\"\nPartitionName=evil").is_err());
    // Record entries are built only by `set`, which refuses them naming the key and value.
    let mut c = conf.clone();
    let msg = c.nodes[0]
        .set("TmpDisk", "1 State=DOWN")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("TmpDisk") && msg.contains("1 State=DOWN"),
        "{msg}"
    );
    assert!(c.partitions[0].set("MaxTime", "1\nx=y").is_err());
    assert_eq!(
        render_slurm_conf(&c).unwrap(),
        render_slurm_conf(&conf).unwrap()
    );
}
