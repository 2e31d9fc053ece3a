//! The charms through the simulator, operating: node-configured → resume, repeated hooks are
//! no-ops, upgrade-charm, a corrupt cache, leader change, bad data from one unit, bad operator
//! config, and the actions of both charms.

#[path = "charm_support.rs"]
mod support;

use juju_sim::Hook;
use serde_json::json;
use slurm_charms::charms::slurmctld::store::Store;
use support::*;

#[test]
fn node_configured_leaves_downnodes_then_resumes() {
    let mut c = three_nodes();
    // A new node's slurmd is not started before node-configured (docs/slurm-versions.md,
    // "slurmd dies at start"), and its status says when it will be.
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert!(
            !c.commands(u)
                .iter()
                .any(|l| l.contains("restart --no-block slurmd")),
            "{u} started slurmd while new: {:?}",
            c.commands(u)
        );
        let (kind, msg) = c.status(u);
        assert_eq!(kind, "active", "{u}: {msg}");
        assert!(
            msg.ends_with("; new node: slurmd starts with node-configured"),
            "{u}: {msg}"
        );
    }
    c.clear_commands("slurmctld/0");
    c.clear_commands("slurmd/0");
    let res = c
        .sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    c.sim.settle().unwrap();
    c.assert_no_errors();
    assert!(
        c.slurm_conf()
            .contains("DownNodes=slurmd-[1-2] State=DOWN Reason=\"New node.\"\n")
    );
    // Only DownNodes changed: the node is resumed, slurmctld is neither reconfigured nor
    // restarted (a reconfigure would reach the slurmd the action just started before it
    // registered: decide.rs).
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        vec!["scontrol update nodename=slurmd-0 state=resume"]
    );
    // The action started slurmd.
    c.assert_started_slurmd("slurmd/0");
    assert_eq!(
        c.status("slurmd/0"),
        ("active".into(), "2 GPUs: gpu:tesla_t4:2".into()),
        "configured: the note is gone"
    );
    assert_eq!(c.sim.unit_state("slurmd/0")["new-node"], "false");
    let node: serde_json::Value =
        serde_json::from_str(&c.sim.unit_bag(rel(&c), "slurmd/0")["node"]).unwrap();
    assert_eq!(node["new_node"], false);
}

#[test]
fn repeated_hooks_are_no_ops() {
    let mut c = three_nodes();
    let before: Vec<_> = ["etc/slurm/slurm.conf", "etc/slurm/gres.conf"]
        .iter()
        .map(|f| {
            let p = c.root("slurmctld/0").join(f);
            (
                std::fs::read(&p).unwrap(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect();
    for u in ["slurmctld/0", "slurmd/0", "slurmd/1", "slurmd/2"] {
        c.clear_commands(u);
    }
    let r = rel(&c);
    c.sim.clear_records();
    c.sim.update_status(None).unwrap();
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        c.sim
            .queue_hook("slurmctld/0", Hook::RelationChanged(r, Some(u.into())));
        c.sim.queue_hook(u, Hook::ConfigChanged);
        c.sim.queue_hook(u, Hook::RelationChanged(r, None));
    }
    c.sim
        .queue_hook("slurmctld/0", Hook::RelationChanged(r, None));
    c.sim.queue_hook("slurmctld/0", Hook::ConfigChanged);
    c.sim.settle().unwrap();
    c.assert_no_errors();
    let after: Vec<_> = ["etc/slurm/slurm.conf", "etc/slurm/gres.conf"]
        .iter()
        .map(|f| {
            let p = c.root("slurmctld/0").join(f);
            (
                std::fs::read(&p).unwrap(),
                std::fs::metadata(&p).unwrap().modified().unwrap(),
            )
        })
        .collect();
    assert_eq!(before, after, "files rewritten");
    // (every leader hook asks whether slurmctld runs, and nothing else here)
    assert!(
        c.commands("slurmctld/0")
            .iter()
            .all(|l| l == "systemctl is-active slurmctld"),
        "{:?}",
        c.commands("slurmctld/0")
    );
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert_eq!(restarts(&c.commands(u)), Vec::<String>::new(), "{u}");
    }
    // Nothing republished, so no further hooks were caused: at most 4 update-status + the 14
    // queued ones (the simulator coalesces a queued relation-changed like Juju does).
    let hooks: Vec<String> = c
        .sim
        .records()
        .iter()
        .map(|h| format!("{} {}", h.unit, h.hook))
        .collect();
    assert!(hooks.len() <= 18, "{hooks:#?}");
    assert!(
        c.sim
            .records()
            .iter()
            .all(|h| !h.calls.iter().any(|t| t.tool == "relation-set")),
        "something was republished"
    );
}

#[test]
fn upgrade_charm_rebuilds_the_cache_and_changes_nothing() {
    let mut c = three_nodes();
    let (slurm0, gres0) = (c.slurm_conf(), c.gres_conf());
    for u in ["slurmctld/0", "slurmd/0"] {
        c.clear_commands(u);
    }
    c.sim.clear_records();
    c.sim.upgrade_charm("slurmctld", None).unwrap();
    c.sim.upgrade_charm("slurmd", None).unwrap();
    c.assert_no_errors();
    assert_eq!((c.slurm_conf(), c.gres_conf()), (slurm0, gres0));
    // Once for the workload version, once for the controller's decisions (the package may
    // have changed with the charm, so the remembered version is not trusted).
    // (and every leader hook asks whether slurmctld runs)
    let cmds: Vec<String> = c
        .commands("slurmctld/0")
        .into_iter()
        .filter(|l| l != "systemctl is-active slurmctld")
        .collect();
    assert_eq!(cmds, vec!["slurmctld -V", "slurmctld -V"]);
    assert!(restarts(&c.commands("slurmd/0")).is_empty());
    // The rebuild read every unit once.
    let upgrade = c
        .sim
        .records()
        .iter()
        .find(|r| r.unit == "slurmctld/0" && r.hook == "upgrade-charm")
        .unwrap();
    let unit_reads = upgrade
        .calls
        .iter()
        .filter(|t| t.tool == "relation-get" && t.args.iter().any(|a| a.starts_with("slurmd/")))
        .count();
    assert_eq!(unit_reads, 3, "{:?}", upgrade.calls);
}

/// Damages the store of a settled three-node cluster with `damage`, runs update-status, and
/// checks the store is rebuilt from Juju for `why`, slurm.conf stays as it was and nothing
/// restarts (what was applied is unknown, but the files on disk are already right).
fn assert_rebuilt_after(why: &str, damage: fn(&mut Vec<u8>)) {
    let mut c = three_nodes();
    let slurm0 = c.slurm_conf();
    let cache = c
        .root("slurmctld/0")
        .join("var/lib/slurm-charms/slurmctld/store.bin");
    let mut bytes = std::fs::read(&cache).unwrap();
    damage(&mut bytes);
    std::fs::write(&cache, bytes).unwrap();
    c.clear_commands("slurmctld/0");
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), slurm0);
    assert!(restarts(&c.commands("slurmctld/0")).is_empty());
    let logs: Vec<String> = c.sim.logs().into_iter().map(|l| l.message).collect();
    assert!(
        logs.iter()
            .any(|m| m.contains(&format!("rebuilding the store from Juju (store {why})"))),
        "{logs:?}"
    );
}

#[test]
fn a_corrupt_store_is_rebuilt_from_juju() {
    assert_rebuilt_after("checksum mismatch", |bytes| {
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
    });
}

/// The store is rewritten over its own blocks, its header's checksum zeroed first and written
/// last: a hook that dies while writing it leaves a zeroed checksum over a mix of new and old
/// bytes, which is rebuilt from Juju like any damaged store.
#[test]
fn a_store_torn_while_written_in_place_is_rebuilt_from_juju() {
    assert_rebuilt_after("checksum mismatch", |bytes| {
        // magic (8 bytes), format (4), then the checksum (8): zeroed, as a torn write leaves it
        bytes[12..20].fill(0);
        let half = bytes.len() / 2;
        bytes[half..].fill(0x55);
    });
}

/// A store whose checksum matches but whose units are out of name order (a file the writer
/// never makes: a bug, or damage the checksum missed) is refused as damaged and rebuilt, and
/// nothing good is lost: the same files, no restart.
#[test]
fn a_store_with_units_out_of_order_is_rebuilt_from_juju() {
    assert_rebuilt_after("damaged framing", |bytes| {
        let mut store = Store::from_bytes(bytes).unwrap();
        for rel in store.relations.values_mut() {
            let mut units = std::mem::take(&mut rel.units).into_tuple_vec();
            units.reverse();
            rel.units = litemap::LiteMap::from_sorted_store_unchecked(units);
        }
        *bytes = store.to_bytes();
    });
}

#[test]
fn leader_change_converges() {
    let mut c = three_nodes();
    c.sim.add_unit("slurmctld", 1).unwrap();
    // without shared state it could not take over the jobs (tests/charm_leadership.rs)
    let (st, msg) = c.status("slurmctld/1");
    assert_eq!(st, "blocked");
    assert!(msg.starts_with("standby cannot take over"), "{msg}");
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    // every unit is a SlurmctldHost, the leader first (tests/charm_leadership.rs)
    let new_conf = c.file("slurmctld/1", "/etc/slurm/slurm.conf");
    assert_eq!(
        new_conf,
        c.slurm_conf().replace(
            "SlurmctldHost=slurmctld-0\nSlurmctldHost=slurmctld-1\n",
            "SlurmctldHost=slurmctld-1\nSlurmctldHost=slurmctld-0\n"
        )
    );
    assert_eq!(c.file("slurmctld/1", "/etc/slurm/gres.conf"), c.gres_conf());
    // The new leader adopted the shared munge key; slurmd follows the new host.
    let key = c.bytes("slurmctld/0", "/etc/munge/munge.key").unwrap();
    assert_eq!(c.bytes("slurmctld/1", "/etc/munge/munge.key").unwrap(), key);
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert!(
            c.file(u, "/etc/default/slurmd")
                .contains("--conf-server slurmctld-1:6817")
        );
        assert_eq!(c.bytes(u, "/etc/munge/munge.key").unwrap(), key);
    }
    assert_eq!(
        c.status("slurmctld/1").1,
        "3 nodes, 5 GPUs, 3 new (run node-configured on the slurmd unit)"
    );
}

#[test]
fn bad_data_from_one_unit_leaves_only_that_node_out() {
    let mut c = three_nodes();
    let r = rel(&c);
    let good = c.sim.unit_bag(r, "slurmd/1")["node"].clone();
    let bad_values = [
        (
            good.replace(
                "\"Type\":\"nvidia_l40s\"",
                "\"Type\":\"t4\\nSlurmctldProlog=/tmp/x\"",
            ),
            "gres[1]",
        ),
        ("{\"node_parameters\": ".to_string(), "not valid JSON"),
        (
            good.replace("\"CPUs\":\"8\"", "\"CPUs\":8"),
            "expected a string",
        ),
        (
            good.replace("\"CPUs\":\"8\"", "\"CPUs\":\"8 Weight=1\""),
            "CPUs",
        ),
        (
            good.replace("\"NodeName\":\"slurmd-1\"", "\"NodeName\":\"slurmd-0\""),
            "already used by slurmd/0",
        ),
    ];
    // slurmd/1 turns hostile: its hooks no longer run the charm (which would republish its
    // own good record when the controller's verdicts reach it).
    let hostile = juju_sim::UnitExtras {
        command_prefix: vec!["true".into()],
        ..Default::default()
    };
    c.sim.set_unit_extras("slurmd/1", hostile).unwrap();
    for (bad, why) in bad_values {
        c.sim.with_model_mut(|m| {
            let bag = m
                .relations
                .get_mut(&r)
                .unwrap()
                .unit_bags
                .get_mut("slurmd/1")
                .unwrap();
            bag.insert("node".into(), bad.clone());
        });
        c.sim.queue_hook(
            "slurmctld/0",
            Hook::RelationChanged(r, Some("slurmd/1".into())),
        );
        c.sim.settle().unwrap();
        c.assert_no_errors();
        let conf = c.slurm_conf();
        assert!(!conf.contains("slurmd-1 "), "{why}: {conf}");
        assert!(!conf.contains("SlurmctldProlog"));
        assert!(conf.contains("NodeName=slurmd-0 ") && conf.contains("NodeName=slurmd-2 "));
        assert!(!c.gres_conf().contains("slurmd-1"));
        let (st, msg) = c.status("slurmctld/0");
        assert_eq!(st, "active");
        assert!(
            msg.starts_with("2 nodes, 2 GPUs") && msg.contains("1 rejected (slurmd/1)"),
            "{msg}"
        );
        assert!(msg.contains(why), "{why}: {msg}");
        let logs = c.sim.logs();
        assert!(
            logs.iter().any(|l| l.level == "WARNING"
                && l.message.contains("left out slurmd/1")
                && l.message.contains(why)),
            "{why}"
        );
    }
    // Good data again: the node comes back.
    c.sim.with_model_mut(|m| {
        let bag = m
            .relations
            .get_mut(&r)
            .unwrap()
            .unit_bags
            .get_mut("slurmd/1")
            .unwrap();
        bag.insert("node".into(), good.clone());
    });
    c.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(r, Some("slurmd/1".into())),
    );
    c.sim.settle().unwrap();
    assert!(c.slurm_conf().contains("NodeName=slurmd-1 "));
    assert!(!c.status("slurmctld/0").1.contains("rejected"));
}

#[test]
fn bad_operator_config_keeps_the_files_and_blocks() {
    let mut c = three_nodes();
    let slurm0 = c.slurm_conf();
    c.sim
        .set_config(
            "slurmctld",
            [(
                "slurm-conf-parameters".to_string(),
                json!("SlurmctldDebug=info\nSlurmctldProlog=/x\nbogus"),
            )]
            .into(),
        )
        .unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), slurm0);
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked");
    assert!(msg.contains("slurm-conf-parameters"), "{msg}");
    c.sim
        .set_config(
            "slurmctld",
            [
                (
                    "slurm-conf-parameters".to_string(),
                    json!("SlurmctldDebug=info\n# comment\nMaxJobCount=5000"),
                ),
                ("default-partition".to_string(), json!("slurmd")),
                ("cluster-name".to_string(), json!("hpc")),
            ]
            .into(),
        )
        .unwrap();
    let conf = c.slurm_conf();
    assert!(conf.contains("ClusterName=hpc\n"));
    assert!(conf.contains("SlurmctldDebug=info\n") && conf.contains("MaxJobCount=5000\n"));
    assert!(
        conf.contains("PartitionName=slurmd Nodes=slurmd-[0-2] Default=YES State=UP"),
        "{conf}"
    );
    assert_eq!(c.status("slurmctld/0").0, "active");
}

#[test]
fn partition_config_reaches_the_partition_line() {
    let mut c = three_nodes();
    c.sim
        .set_config(
            "slurmd",
            [("partition-config".to_string(), json!("MaxTime=1:00:00"))].into(),
        )
        .unwrap();
    c.assert_no_errors();
    assert!(
        c.slurm_conf().contains(
            "PartitionName=slurmd Nodes=slurmd-[0-2] Default=YES State=UP MaxTime=1:00:00"
        ),
        "{}",
        c.slurm_conf()
    );
    c.sim
        .set_config(
            "slurmd",
            [("partition-config".to_string(), json!("Nodes=ALL"))].into(),
        )
        .unwrap();
    let (st, msg) = c.status("slurmd/0");
    assert_eq!(st, "blocked");
    assert!(
        msg.contains("partition-config") && msg.contains("Nodes"),
        "{msg}"
    );
}

#[test]
fn controller_actions() {
    let mut c = three_nodes();
    let res = c
        .sim
        .run_action("slurmctld/0", "show-current-config", json!({}))
        .unwrap();
    assert_eq!(res.status, "completed");
    assert_eq!(res.results["slurm-conf"], c.slurm_conf());
    assert_eq!(res.results["gres-conf"], c.gres_conf());
    assert_eq!(
        res.results["cgroup-conf"],
        c.file("slurmctld/0", "/etc/slurm/cgroup.conf")
    );
    c.clear_commands("slurmctld/0");
    let res = c
        .sim
        .run_action(
            "slurmctld/0",
            "drain",
            json!({"nodename": "slurmd-[0-1]", "reason": "maintenance window"}),
        )
        .unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    let res = c
        .sim
        .run_action("slurmctld/0", "resume", json!({"nodename": "slurmd-0"}))
        .unwrap();
    assert_eq!(res.status, "completed");
    assert_eq!(
        c.commands("slurmctld/0"),
        vec![
            "scontrol update nodename=slurmd-[0-1] state=drain reason=maintenance window",
            "scontrol update nodename=slurmd-0 state=resume"
        ]
    );
    let res = c
        .sim
        .run_action("slurmctld/0", "resume", json!({"nodename": "x y"}))
        .unwrap();
    assert_eq!(res.status, "failed");
    assert!(res.message.contains("nodename"), "{res:?}");
    let res = c
        .sim
        .run_action(
            "slurmctld/0",
            "drain",
            json!({"nodename": "slurmd-0", "reason": "a\nb"}),
        )
        .unwrap();
    assert_eq!(res.status, "failed");
}

#[test]
fn node_config_features_come_first() {
    let mut c = three_nodes();
    let params = json!({"parameters": "Features=ib"});
    let res = c.sim.run_action("slurmd/0", "node-config", params).unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    c.sim.settle().unwrap();
    c.assert_no_errors();
    let line = format!(
        "NodeName=slurmd-0 {PUBLISHED_FACTS} Gres=gpu:tesla_t4:2 MemSpecLimit=1024 Features=ib,tesla_t4,cuda12"
    );
    assert_eq!(res.results["node-parameters"], line);
    assert!(
        c.slurm_conf().contains(&format!("{line}\n")),
        "{}",
        c.slurm_conf()
    );
    // Only the operator's features are stored; the GPU ones are derived in every hook.
    assert_eq!(
        c.sim.unit_state("slurmd/0").get("node-config").cloned(),
        Some(r#"{"params":{"Features":"ib"}}"#.to_string())
    );
}

/// Issue 39: `node-config` with ~65 KB of Features would make the `node` record larger than the
/// controller accepts (64 KiB). The slurmd side refuses it with the reason, stores nothing,
/// and the record published before stays, so the node stays in slurm.conf.
/// At most 300 characters of `s`, for failure messages.
fn short(s: &str) -> String {
    s.chars().take(300).collect()
}

#[test]
fn node_config_over_the_record_limit_is_refused_and_the_record_stays() {
    let mut c = three_nodes();
    let rel = rel(&c);
    let record = |c: &Cluster| c.sim.unit_bag(rel, "slurmd/0").get("node").cloned();
    let (before, conf) = (record(&c), c.slurm_conf());
    assert!(before.is_some());
    // 5,100 features of 13 bytes: about 66 KB.
    let features: Vec<String> = (0..5_100).map(|i| format!("feature{i:05}")).collect();
    let params = json!({"parameters": format!("Features={}", features.join(","))});
    let res = c.sim.run_action("slurmd/0", "node-config", params).unwrap();
    let why = format!("{} {}", res.message, res.stderr);
    assert_eq!(res.status, "failed", "{}", crate::short(&why));
    for word in ["65536-byte limit", "node-config", "Features"] {
        assert!(why.contains(word), "{word}: {}", crate::short(&why));
    }
    c.sim.settle().unwrap();
    c.assert_no_errors();
    assert!(record(&c) == before, "the published record changed");
    assert!(c.slurm_conf() == conf, "slurm.conf changed");
    assert_eq!(c.sim.unit_state("slurmd/0").get("node-config"), None);
    assert_eq!(
        c.status("slurmd/0").0,
        "active",
        "{:?}",
        c.status("slurmd/0")
    );
}

#[test]
fn a_stored_override_slurm_refuses_is_blamed_on_the_stored_state() {
    let mut c = three_nodes();
    let before = c.slurm_conf();
    for (stored, key, value) in [
        (r#"{"params":{"Weight":"abc"}}"#, "Weight", "abc"),
        (r#"{"params":{"CPUs":"70000"}}"#, "CPUs", "70000"),
    ] {
        c.sim.with_model_mut(|m| {
            let unit = m.units.get_mut("slurmd/1").unwrap();
            unit.state.insert("node-config".into(), stored.into());
        });
        c.sim.clear_records();
        c.sim.queue_hook("slurmd/1", Hook::ConfigChanged);
        c.sim.settle().unwrap();
        c.assert_no_errors();
        // The hook warns, naming the unit state, the key and the value, and the fix; the node
        // is published without the overrides.
        let warning = c
            .sim
            .logs()
            .into_iter()
            .rev()
            .find(|l| l.level == "WARNING" && l.message.contains("stored node-config"))
            .map(|l| l.message)
            .unwrap_or_else(|| panic!("{stored}: no warning: {:?}", c.sim.logs()));
        assert_eq!(c.status("slurmd/1").0, "active", "{stored}");
        assert_eq!(c.slurm_conf(), before, "{stored}");
        // The action fails the same way, blaming the stored state, not the record.
        let res = c
            .sim
            .run_action("slurmd/1", "node-config", json!({}))
            .unwrap();
        assert_eq!(res.status, "failed", "{stored}: {res:?}");
        for message in [&warning, &res.message] {
            for word in ["stored node-config", key, value, "node-config reset=true"] {
                assert!(message.contains(word), "{stored}: {word} not in {message}");
            }
            assert!(!message.contains("node_parameters"), "{message}");
        }
    }
    // The fix the messages name clears it.
    let reset = json!({"reset": true});
    let res = c.sim.run_action("slurmd/1", "node-config", reset).unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    assert_eq!(
        c.sim.unit_state("slurmd/1").get("node-config").cloned(),
        Some(r#"{"params":{}}"#.to_string())
    );
}

#[test]
fn slurmd_actions() {
    let mut c = three_nodes();
    let res = c
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    assert_eq!(res.results["gres"], "gpu:tesla_t4:2");
    assert_eq!(res.results["gpus"]["1"]["device-file"], "/dev/nvidia1");
    let res = c
        .sim
        .run_action(
            "slurmd/1",
            "node-config",
            json!({"parameters": "weight=200 Features=nvlink,a100"}),
        )
        .unwrap();
    assert_eq!(res.status, "completed", "{res:?}");
    c.sim.settle().unwrap();
    let line = format!(
        "NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvlink,a100,nvidia_l40s,nvidia_a100_80gb_pcie,cuda12 Weight=200"
    );
    assert_eq!(
        res.results["node-parameters"],
        line.replace(
            // The operator's features first, then the GPU features (gpu-features, issue 15).
            " Features=nvlink,a100,nvidia_l40s,nvidia_a100_80gb_pcie,cuda12 Weight=200",
            " Weight=200 Features=nvlink,a100,nvidia_l40s,nvidia_a100_80gb_pcie,cuda12"
        )
    );
    assert!(
        c.slurm_conf().contains(&format!("{line}\n")),
        "{}",
        c.slurm_conf()
    );
    // Gres stays the detected list in the relation data.
    let node: serde_json::Value =
        serde_json::from_str(&c.sim.unit_bag(rel(&c), "slurmd/1")["node"]).unwrap();
    assert_eq!(
        node["node_parameters"]["Gres"],
        json!(["gpu:nvidia_a100_80gb_pcie:1", "gpu:nvidia_l40s:2"])
    );
    assert_eq!(node["node_parameters"]["Weight"], "200");
    // Gres, NodeName, unknown keys and features no job could ask for are refused when the
    // text is parsed, naming the parameter; nothing changes.
    let stored = c.sim.unit_state("slurmd/1");
    for (params, why) in [
        ("Gres=gpu:tesla_t4:8", "Gres"),
        ("NodeName=x", "NodeName"),
        ("SlurmctldProlog=/x", "SlurmctldProlog"),
        ("Weight=1 Weight=2", "Weight"),
        ("Features=ib,a&b", "a&b"),
        ("Features=ib,,gpu", "Features"),
        ("Features=ALL", "ALL"),
    ] {
        let res = c
            .sim
            .run_action("slurmd/1", "node-config", json!({"parameters": params}))
            .unwrap();
        assert_eq!(res.status, "failed", "{params}");
        assert!(
            res.message.contains(why) && res.message.contains("parameter `parameters`"),
            "{params}: {}",
            res.message
        );
        assert_eq!(c.sim.unit_state("slurmd/1"), stored, "{params}");
    }
    assert!(c.slurm_conf().contains(&format!("{line}\n")));
    let res = c
        .sim
        .run_action("slurmd/1", "node-config", json!({"reset": true}))
        .unwrap();
    assert_eq!(res.status, "completed");
    c.sim.settle().unwrap();
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvidia_l40s,nvidia_a100_80gb_pcie,cuda12\n"
    )));
    // gpu-features=false: no derived features.
    c.sim
        .set_config(
            "slurmd",
            [("gpu-features".to_string(), json!(false))].into(),
        )
        .unwrap();
    c.sim.settle().unwrap();
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024\n"
    )));
}
