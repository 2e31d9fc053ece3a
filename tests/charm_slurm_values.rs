//! Values Slurm refuses never reach slurm.conf (issue 11 item 1), through both charms in the
//! simulator rather than below them (`tests/slurm_value_rules.rs` judges the same rules with
//! the real slurmctld): a slurmd `partition-config` Slurm would refuse blocks the slurmd
//! leader, naming the option and the value, and the controller keeps the partition line it
//! had; `node-config parameters="CPUs=70000"` fails and publishes nothing; a related
//! application's partition with a bad value is refused for that application alone.

#[path = "charm_support.rs"]
mod support;

use serde_json::json;
use support::*;

/// Partition values Slurm's parser refuses (`parse_time.c`, 32-bit and 16-bit fields,
/// booleans), with the key each message must name.
const BAD_PARTITION: &[(&str, &str, &str)] = &[
    ("MaxTime=1hour", "MaxTime", "1hour"),
    ("MaxTime=-5", "MaxTime", "-5"),
    ("DefMemPerCPU=abc", "DefMemPerCPU", "abc"),
    ("PriorityTier=99999999", "PriorityTier", "99999999"),
    ("LLN=maybe", "LLN", "maybe"),
];

/// The partition line of application `slurmd` in the controller's slurm.conf.
fn partition_line(c: &Cluster) -> String {
    c.slurm_conf()
        .lines()
        .find(|l| l.starts_with("PartitionName=slurmd "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn partition_config_slurm_refuses_blocks_the_slurmd_leader_and_never_reaches_slurm_conf() {
    let mut c = three_nodes();
    let set = |c: &mut Cluster, v: &str| {
        c.sim
            .set_config(
                "slurmd",
                [("partition-config".to_string(), json!(v))].into(),
            )
            .unwrap();
        c.sim.settle().unwrap();
        c.assert_no_errors();
    };
    // A good value first: it is on the partition line, and stays there through every bad one.
    set(&mut c, "MaxTime=1:00:00");
    let good = partition_line(&c);
    assert_eq!(
        good,
        "PartitionName=slurmd Nodes=slurmd-[0-2] Default=YES State=UP MaxTime=1:00:00"
    );
    let r = rel(&c);
    let published = c.sim.app_bag(r, "slurmd")["partition"].clone();
    let nodes: Vec<String> = c
        .slurm_records()
        .into_iter()
        .filter(|l| l.starts_with("NodeName="))
        .collect();
    assert_eq!(nodes.len(), 3, "{}", c.slurm_conf());
    for &(value, key, raw) in BAD_PARTITION {
        c.clear_commands("slurmctld/0");
        set(&mut c, value);
        let (st, msg) = c.status("slurmd/0");
        assert_eq!(st, "blocked", "{value}: {msg}");
        assert!(
            msg.contains("partition-config") && msg.contains(key) && msg.contains(raw),
            "{value}: the message names the option, the key and the value: {msg}"
        );
        // Nothing was published, so the controller kept its files and restarted nothing.
        assert_eq!(
            c.sim.app_bag(r, "slurmd")["partition"],
            published,
            "{value}"
        );
        let conf = c.slurm_conf();
        assert!(!conf.contains(value), "{value} reached slurm.conf:\n{conf}");
        assert_eq!(partition_line(&c), good, "{value}");
        let now: Vec<String> = c
            .slurm_records()
            .into_iter()
            .filter(|l| l.starts_with("NodeName="))
            .collect();
        assert_eq!(now, nodes, "{value}: the nodes stay");
        assert!(
            restarts(&c.commands("slurmctld/0")).is_empty(),
            "{value}: {:?}",
            c.commands("slurmctld/0")
        );
        assert_eq!(c.status("slurmctld/0").0, "active", "{value}");
    }
    // A good value again unblocks the unit and reaches the partition line.
    set(&mut c, "MaxTime=2:00:00");
    assert_eq!(
        c.status("slurmd/0").0,
        "active",
        "{:?}",
        c.status("slurmd/0")
    );
    assert!(
        partition_line(&c).ends_with(" MaxTime=2:00:00"),
        "{}",
        c.slurm_conf()
    );
}

#[test]
fn node_config_cpus_over_65535_is_refused_and_nothing_is_published() {
    let mut c = three_nodes();
    let r = rel(&c);
    let before_bag = c.sim.unit_bag(r, "slurmd/1");
    let before_state = c.sim.unit_state("slurmd/1").get("node-config").cloned();
    let before_conf = c.slurm_conf();
    for (params, key) in [
        ("CPUs=70000", "CPUs"),
        ("CPUs=4294967295", "CPUs"),
        ("CoreSpecCount=70000", "CoreSpecCount"),
        ("Weight=100 TmpDisk=4294967296", "TmpDisk"),
    ] {
        c.sim.clear_records();
        c.clear_commands("slurmctld/0");
        let res = c
            .sim
            .run_action("slurmd/1", "node-config", json!({"parameters": params}))
            .unwrap();
        assert_eq!(res.status, "failed", "{params}: {res:?}");
        assert!(
            res.message.contains("parameters") && res.message.contains(key),
            "{params}: a clear message naming the key: {}",
            res.message
        );
        assert!(res.results.get("node-parameters").is_none(), "{res:?}");
        c.sim.settle().unwrap();
        c.assert_no_errors();
        // Nothing published, nothing stored for later hooks, nothing rendered.
        assert!(
            c.sim
                .records()
                .iter()
                .all(|h| !h.calls.iter().any(|t| t.tool == "relation-set")),
            "{params}: something was published"
        );
        assert_eq!(c.sim.unit_bag(r, "slurmd/1"), before_bag, "{params}");
        assert_eq!(
            c.sim.unit_state("slurmd/1").get("node-config").cloned(),
            before_state,
            "{params}: the refused overrides were stored"
        );
        assert_eq!(c.slurm_conf(), before_conf, "{params}");
        assert!(restarts(&c.commands("slurmctld/0")).is_empty(), "{params}");
        assert_eq!(c.status("slurmd/1").0, "active", "{params}");
    }
    // A later hook does not pick the refused value up either.
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), before_conf);
    assert!(!c.slurm_conf().contains("70000"));
}

#[test]
fn a_related_applications_bad_partition_value_is_refused_for_it_alone() {
    let mut c = three_nodes();
    let good_nodes: Vec<String> = c
        .slurm_records()
        .into_iter()
        .filter(|l| l.starts_with("NodeName=") || l.starts_with("PartitionName=slurmd "))
        .collect();
    assert_eq!(good_nodes.len(), 4, "{}", c.slurm_conf());
    c.deploy_inert("evil", 1);
    let id = c.sim.integrate("evil", "slurmctld").unwrap();
    c.assert_no_errors();
    let node = r#"{"node_parameters":{"NodeName":"evil-0","CPUs":"8","RealMemory":"31848"},"new_node":false}"#;
    // A good partition first: evil's node and partition are in.
    c.publish(id, "evil", r#"{"evil":{"State":"UP"}}"#, "evil/0", node);
    c.assert_no_errors();
    assert!(
        c.slurm_conf()
            .lines()
            .any(|l| l.starts_with("PartitionName=evil ") && l.contains("Nodes=evil-0")),
        "{}",
        c.slurm_conf()
    );
    for (partition, key, raw) in [
        (
            r#"{"evil":{"State":"UP","MaxTime":"1hour"}}"#,
            "MaxTime",
            "1hour",
        ),
        (
            r#"{"evil":{"State":"UP","PriorityTier":"99999999"}}"#,
            "PriorityTier",
            "99999999",
        ),
        (r#"{"evil":{"State":"UP","LLN":"maybe"}}"#, "LLN", "maybe"),
    ] {
        c.clear_commands("slurmctld/0");
        c.publish(id, "evil", partition, "evil/0", node);
        c.assert_no_errors();
        let conf = c.slurm_conf();
        assert!(
            !conf.contains(raw),
            "{partition} reached slurm.conf:\n{conf}"
        );
        assert!(
            !conf.contains("PartitionName=evil "),
            "{partition}:\n{conf}"
        );
        assert!(!conf.contains("evil-0"), "{partition}:\n{conf}");
        // The good application's nodes and partition are all still there.
        for line in &good_nodes {
            assert!(
                conf.contains(&format!("{line}\n")),
                "{partition}: lost {line}\n{conf}"
            );
        }
        let (st, msg) = c.status("slurmctld/0");
        assert_eq!(st, "active", "{partition}: {msg}");
        assert!(
            msg.contains("rejected (evil)") && msg.contains(key),
            "{partition}: the controller names the application and the key: {msg}"
        );
        assert!(
            c.sim.logs().iter().any(|l| l.level == "WARNING"
                && l.message.contains("evil")
                && l.message.contains(key)),
            "{partition}: no warning naming evil and {key}"
        );
        for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
            assert_eq!(c.status(u).0, "active", "{partition}: {u}");
        }
    }
    // A good partition again: evil comes back.
    c.publish(id, "evil", r#"{"evil":{"State":"UP"}}"#, "evil/0", node);
    c.assert_no_errors();
    assert!(c.slurm_conf().contains("PartitionName=evil "));
    assert!(!c.status("slurmctld/0").1.contains("rejected"));
}
