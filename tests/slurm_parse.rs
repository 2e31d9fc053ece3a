//! Parser tests: round trips, Slurm's lexical rules, errors with file and line.

#[path = "slurm_fixtures.rs"]
mod fixtures;
use fixtures::{big_cluster, cluster};
use slurm_charms::slurm::*;

#[test]
fn round_trip_small_cluster() {
    let (conf, gres) = cluster();
    let out = render_files(&conf, &gres).unwrap();
    let back = parse_slurm_conf(&out.slurm_conf, "slurm.conf").unwrap();
    assert_eq!(back, conf.normalized());
    let gback = parse_gres_conf(&out.gres_conf, "gres.conf").unwrap();
    assert_eq!(gback, gres.normalized());
    // And the re-render is byte-identical.
    assert_eq!(render_files(&back, &gback).unwrap(), out);
}

#[test]
fn round_trip_big_cluster_both_shapes() {
    for identical in [true, false] {
        let (conf, gres) = big_cluster(500, identical);
        let out = render_files(&conf, &gres).unwrap();
        assert_eq!(
            parse_slurm_conf(&out.slurm_conf, "s").unwrap(),
            conf.normalized()
        );
        assert_eq!(
            parse_gres_conf(&out.gres_conf, "g").unwrap(),
            gres.normalized()
        );
    }
}

#[test]
fn lexical_rules() {
    let text = "\
# comment line
clustername=c   # trailing comment
SLURMCTLDHOST = ctl
gRestypes=gpu
SchedulerParameters=bf_interval=60,default_queue_depth=200
nodename=n[01-02] cpus=4 \\
    RealMemory=1000 gres=gpu:tesla_t4:1 \\
   Reason=\"hash \\# kept\"
NodeName=DEFAULT Weight=7
NodeName=n03 CPUs=2
include slurm.conf.extra
partitionname=p nodes=n[01-03] default=yes state=up
";
    let c = parse_slurm_conf(text, "slurm.conf").unwrap();
    assert_eq!(c.cluster_name, "c");
    assert_eq!(c.slurmctld_hosts, ["ctl"]);
    assert_eq!(
        c.owned.get(&GlobalKey::GresTypes).map(String::as_str),
        Some("gpu")
    );
    assert_eq!(
        c.extra,
        [(
            "SchedulerParameters".to_string(),
            "bf_interval=60,default_queue_depth=200".to_string()
        )]
    );
    assert_eq!(c.includes, ["slurm.conf.extra"]);
    assert_eq!(c.nodes.len(), 3);
    assert_eq!(c.nodes[0].name, "n01");
    assert_eq!(c.nodes[1].real_memory, Some(1000));
    assert_eq!(c.nodes[1].reason.as_deref(), Some("hash # kept"));
    assert_eq!(
        c.nodes[1].gres,
        [GresSpec::gpu("tesla_t4".parse().unwrap(), 1)]
    );
    assert_eq!((c.nodes[0].weight, c.nodes[2].weight), (None, Some(7)));
    let p = &c.partitions[0];
    assert!(p.default && p.state == Some(PartitionState::Up) && p.nodes.len() == 3);
}

#[test]
fn node_addresses_are_spread_over_a_hostlist() {
    let c = parse_slurm_conf(
        "ClusterName=c\nNodeName=n[1-2] NodeAddr=10.0.0.[1-2]\n",
        "s",
    )
    .unwrap();
    let e = &c.nodes[1].extra;
    assert_eq!(
        (e.len(), e[0].key(), e[0].value()),
        (1, "NodeAddr", "10.0.0.2")
    );
    let e = parse_slurm_conf("NodeName=n[1-3] NodeAddr=10.0.0.[1-2]\n", "s").unwrap_err();
    assert!(e.to_string().contains("NodeAddr"), "{e}");
}

fn err(text: &str) -> ParseError {
    parse_slurm_conf(text, "/etc/slurm/slurm.conf").expect_err("must fail")
}

#[test]
fn errors_carry_file_line_and_expectation() {
    let e = err("ClusterName=c\n\n# x\nNodeName=a CPUs=two\n");
    assert_eq!((e.origin.as_str(), e.line), ("/etc/slurm/slurm.conf", 4));
    let msg = e.to_string();
    assert!(
        msg.starts_with("/etc/slurm/slurm.conf:4: ") && msg.contains("CPUs") && msg.contains("two"),
        "{msg}"
    );

    let e = err("ClusterName=c SlurmctldHost=x\n");
    assert!(
        matches!(e.kind, ParseErrorKind::Syntax { .. }) && e.line == 1,
        "{e}"
    );
    assert!(
        err("NodeName=a \\\n CPUs=1 Bogus=1\n")
            .to_string()
            .contains("Bogus")
    );
    assert_eq!(err("MaxJobCount=1\nNodeName=a\nNodeName=a\n").line, 3);
    // An unknown global key is refused where it stands (Slurm stops on it).
    assert_eq!(err("a=1\nNodeName=a\n").line, 1);
    assert!(matches!(
        err("PartitionName=p\nPartitionName=p\n").kind,
        ParseErrorKind::Config(ConfigError::DuplicatePartition { .. })
    ));
    assert!(matches!(
        err("ClusterName\n").kind,
        ParseErrorKind::Syntax { .. }
    ));
    assert!(matches!(
        err("MaxTime+=1\n").kind,
        ParseErrorKind::Syntax { .. }
    ));
    assert!(matches!(
        err("NodeName=n[1-\n").kind,
        ParseErrorKind::Hostlist(_)
    ));
    assert!(matches!(
        err("NodeName=a Gres=gpu:T4:1\n").kind,
        ParseErrorKind::Config(_)
    ));
    assert!(matches!(
        err("DownNodes=a Weight=1\n").kind,
        ParseErrorKind::Syntax { .. }
    ));
    assert!(matches!(
        err("FrontendName=f\n").kind,
        ParseErrorKind::Syntax { .. }
    ));
}

#[test]
fn gres_conf_parsing() {
    let text = "\
AutoDetect=off
nodename=n[1-2] name=gpu type=tesla_t4 files=/dev/nvidia[0-1] cores=0-3 flags=nvidia_gpu_env
NodeName=n2 Name=gpu Type=nvidia_l40s File=/dev/nvidia2,/dev/nvidia3 Count=2
NodeName=n3 Name=gpu Type=t4 File=/dev/nvidia0 Links=-1,2
";
    let g = parse_gres_conf(text, "gres.conf").unwrap();
    assert_eq!(g.auto_detect, Some(AutoDetect::Off));
    assert_eq!(g.nodes["n1"].len(), 1);
    assert_eq!(g.nodes["n2"].len(), 2);
    assert_eq!(g.nodes["n2"][0].cores, Some("0-3".parse().unwrap()));
    assert_eq!(
        g.nodes["n2"][1].files().map(ToString::to_string).as_deref(),
        Some("/dev/nvidia[2-3]")
    );
    assert_eq!(g.nodes["n3"][0].links, Some("-1,2".parse().unwrap()));
    assert_eq!(g.nodes["n1"][0].flags.to_string(), "nvidia_gpu_env");
    let again = parse_gres_conf(&g.render().unwrap(), "gres.conf").unwrap();
    assert_eq!(again, g);
}

#[test]
fn gres_conf_nodename_must_be_first() {
    let e = parse_gres_conf(
        "Name=gpu NodeName=vm Type=t4 File=/dev/nvidia0\n",
        "gres.conf",
    )
    .unwrap_err();
    assert_eq!(e.line, 1);
    assert!(e.to_string().contains("NodeName must be first"), "{e}");
    for bad in [
        "Type=t4 File=/dev/nvidia0\n",
        "NodeName=vm Type=t4 File=/dev/nvidia0\n",
        "AutoDetect=nvml Name=gpu\n",
        "AutoDetect=bogus\n",
        "NodeName=vm Name=gpu File=dev/nvidia0\n",
        "Include other.conf\n",
    ] {
        assert!(parse_gres_conf(bad, "g").is_err(), "{bad:?}");
    }
}

#[test]
fn overrides_go_through_the_same_rules() {
    let o = parse_overrides(
        "SchedulerParameters=bf_interval=60\n# c\nMaxJobCount=1000\n",
        OverrideScope::SlurmConf,
    )
    .unwrap();
    assert_eq!(o.len(), 2);
    let o = parse_overrides("maxtime=1:00:00 state=DOWN", OverrideScope::Partition).unwrap();
    assert_eq!(
        o,
        [
            ("MaxTime".into(), "1:00:00".into()),
            ("State".into(), "DOWN".into())
        ]
    );
    let o = parse_overrides("Weight=200 features=a,b", OverrideScope::Node).unwrap();
    assert_eq!(o[1].0, "Features");
    for (text, scope) in [
        ("SelectType=select/linear", OverrideScope::SlurmConf),
        ("clustername=x", OverrideScope::SlurmConf),
        ("NodeName=x", OverrideScope::SlurmConf),
        ("Include x", OverrideScope::SlurmConf),
        ("A=1 B=2", OverrideScope::SlurmConf),
        ("A=1\nA=2", OverrideScope::SlurmConf),
        ("Nodes=a", OverrideScope::Partition),
        ("Default=YES", OverrideScope::Partition),
        ("Bogus=1", OverrideScope::Partition),
        ("State=SIDEWAYS", OverrideScope::Partition),
        ("Gres=gpu:t4:1", OverrideScope::Node),
        ("nodename=x", OverrideScope::Node),
        ("Weight=heavy", OverrideScope::Node),
        ("Weight=1\nState=DOWN Reason=\"a\nb\"", OverrideScope::Node),
    ] {
        assert!(
            parse_overrides(text, scope).is_err(),
            "{text:?} accepted for {scope:?}"
        );
    }
    let e = parse_overrides("SelectType=select/linear", OverrideScope::SlurmConf)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("slurm-conf-parameters") && e.contains("SelectType"),
        "{e}"
    );
}
