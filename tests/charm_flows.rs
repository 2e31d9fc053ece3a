//! The charms through the simulator: every flow of issue 5 §4, asserting on the exact files,
//! the relation data, the statuses and the commands the charms ran (recorded by fakes).

#[path = "charm_support.rs"]
mod support;

use juju_sim::Hook;
use serde_json::json;
use std::collections::BTreeSet;
use support::{Cluster, TWO_T4};

const HEADER: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n";

const GLOBALS: &str = "ClusterName=osd-cluster
SlurmctldHost=slurmctld-0
SlurmctldParameters=enable_configless
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
";

const FACTS: &str =
    "CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=31848";

const MIXED: &[(&str, u32, &str)] = &[
    ("NVIDIA L40S", 3, "00000000:D8:00.0"),
    ("NVIDIA A100 80GB PCIe", 0, "00000000:3B:00.0"),
    ("NVIDIA L40S", 1, "00000000:5E:00.0"),
];

/// Controller plus three slurmd units: 2×T4, mixed A100 + 2×L40S (minors 1,3), no GPUs.
fn three_nodes() -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 3);
    c.set_gpus("slurmd/0", TWO_T4);
    c.set_gpus("slurmd/1", MIXED);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    c
}

fn rel(c: &Cluster) -> u32 {
    c.sim.relation_id("slurmd", "slurmctld").unwrap()
}

fn restarts(cmds: &[String]) -> Vec<String> {
    cmds.iter()
        .filter(|c| c.contains("restart") || c.contains("reconfigure") || c.contains("state="))
        .cloned()
        .collect()
}

#[test]
fn alone_each_charm_says_what_it_needs() {
    let mut c = Cluster::new();
    c.deploy_slurmd("slurmd", 1);
    c.deploy_slurmctld();
    c.assert_no_errors();
    assert_eq!(
        c.status("slurmd/0"),
        ("blocked".into(), "Need relation: slurmctld".into())
    );
    assert_eq!(
        c.status("slurmctld/0"),
        ("blocked".into(), "Need relation: slurmd".into())
    );
    let history = c.sim.unit_status_history("slurmd/0");
    assert!(
        history.iter().any(|s| s.status == "maintenance"
            && s.message.contains("installing slurmd, munge, slurm-client")),
        "{history:?}"
    );
    assert_eq!(c.sim.workload_version("slurmd/0"), "22.05.8");
    assert_eq!(c.sim.workload_version("slurmctld/0"), "22.05.8");
    let cmds = c.commands("slurmd/0");
    assert_eq!(
        cmds[0],
        "apt-get install -y --no-install-recommends slurmd munge slurm-client"
    );
    assert_eq!(
        c.commands("slurmctld/0")[0],
        "apt-get install -y --no-install-recommends slurmctld munge slurm-client"
    );
    // Without nodes slurmctld cannot run: stopped, never restarted.
    let ctl = c.commands("slurmctld/0");
    assert!(
        ctl.contains(&"systemctl stop slurmctld".to_string()),
        "{ctl:?}"
    );
    assert!(
        !ctl.iter().any(|l| l.contains("restart slurmctld")),
        "{ctl:?}"
    );
    // No controller yet: slurmd is never started, no key written.
    assert!(!cmds.iter().any(|l| l.starts_with("systemctl")), "{cmds:?}");
    assert!(c.bytes("slurmd/0", "/etc/munge/munge.key").is_none());
    // The controller renders a cluster without nodes and owns a munge key (0400).
    assert!(c.slurm_conf().starts_with(HEADER));
    assert!(c.slurm_records().is_empty());
    let key = c.root("slurmctld/0").join("etc/munge/munge.key");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o400
    );
    assert_eq!(std::fs::metadata(&key).unwrap().len(), 1024);
}

#[test]
fn three_units_with_different_gpus_give_exact_files() {
    let c = three_nodes();
    let expected_slurm = format!(
        "{HEADER}{GLOBALS}\
NodeName=slurmd-0 {FACTS} Gres=gpu:tesla_t4:2 MemSpecLimit=1024
NodeName=slurmd-1 {FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024
NodeName=slurmd-2 {FACTS} MemSpecLimit=1024
PartitionName=slurmd Nodes=slurmd-[0-2] Default=YES State=UP
DownNodes=slurmd-[0-2] State=DOWN Reason=\"New node.\"
"
    );
    assert_eq!(c.slurm_conf(), expected_slurm);
    let expected_gres = format!(
        "{HEADER}\
NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1]
NodeName=slurmd-1 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0
NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia[1,3]
"
    );
    assert_eq!(c.gres_conf(), expected_gres);

    // Relation data in the reference shape.
    let r = rel(&c);
    let node: serde_json::Value =
        serde_json::from_str(&c.sim.unit_bag(r, "slurmd/1")["node"]).unwrap();
    assert_eq!(
        node["node_parameters"]["Gres"],
        json!(["gpu:nvidia_a100_80gb_pcie:1", "gpu:nvidia_l40s:2"])
    );
    assert_eq!(node["new_node"], true);
    assert_eq!(
        node["gres"][1],
        json!({"Name": "gpu", "Type": "nvidia_l40s", "File": "/dev/nvidia[1,3]"})
    );
    let no_gpu: serde_json::Value =
        serde_json::from_str(&c.sim.unit_bag(r, "slurmd/2")["node"]).unwrap();
    assert!(no_gpu.get("gres").is_none() && no_gpu["node_parameters"].get("Gres").is_none());
    assert_eq!(
        c.sim.app_bag(r, "slurmd")["partition"],
        r#"{"slurmd":{"State":"UP"}}"#
    );
    let info: serde_json::Value =
        serde_json::from_str(&c.sim.app_bag(r, "slurmctld")["cluster_info"]).unwrap();
    assert_eq!(info["slurmctld_host"], "slurmctld-0");
    assert_eq!(info["nhc_params"], "#");

    // Every slurmd has the controller's key (0400) and runs configless against it.
    let key = c.bytes("slurmctld/0", "/etc/munge/munge.key").unwrap();
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert_eq!(c.bytes(u, "/etc/munge/munge.key").unwrap(), key, "{u}");
        assert_eq!(
            c.file(u, "/etc/default/slurmd"),
            "# Managed by the slurmd charm: slurmd fetches slurm.conf and gres.conf from slurmctld.\n\
             SLURMD_OPTIONS=\"--conf-server slurmctld-0:6817\"\n"
        );
        let cmds = c.commands(u);
        let munge = cmds
            .iter()
            .position(|l| l == "systemctl restart munge")
            .unwrap();
        let slurmd = cmds
            .iter()
            .position(|l| l == "systemctl restart slurmd")
            .unwrap();
        assert!(munge < slurmd, "{u}: {cmds:?}");
    }
    assert_eq!(
        c.status("slurmd/0"),
        ("active".into(), "2 GPUs: gpu:tesla_t4:2".into())
    );
    assert_eq!(
        c.status("slurmd/1"),
        (
            "active".into(),
            "3 GPUs: gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2".into()
        )
    );
    assert_eq!(c.status("slurmd/2"), ("active".into(), "no GPUs".into()));
    assert_eq!(
        c.status("slurmctld/0"),
        (
            "active".into(),
            "3 nodes, 5 GPUs, 3 new (run node-configured on the slurmd unit)".into()
        )
    );
    // Files are Slurm's: 0644.
    use std::os::unix::fs::PermissionsExt;
    for f in ["etc/slurm/slurm.conf", "etc/slurm/gres.conf"] {
        let m = std::fs::metadata(c.root("slurmctld/0").join(f)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o644, "{f}");
    }
}

#[test]
fn integrate_before_install_converges_to_the_same_files() {
    let after = three_nodes();
    let mut c = Cluster::new();
    // Applications with no units yet: the relation exists before any install hook.
    c.sim
        .deploy(c.spec("slurmctld", &c.slurmctld_charm.clone(), 0))
        .unwrap();
    c.sim
        .deploy(c.spec("slurmd", &c.slurmd_charm.clone(), 0))
        .unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.set_gpus("slurmd/0", TWO_T4);
    c.set_gpus("slurmd/1", MIXED);
    c.sim.add_unit("slurmd", 3).unwrap();
    c.sim.add_unit("slurmctld", 1).unwrap();
    c.assert_no_errors();
    let hooks: Vec<String> = c
        .sim
        .records()
        .iter()
        .filter(|r| r.unit == "slurmd/0")
        .map(|r| r.hook.clone())
        .collect();
    assert_eq!(hooks[0], "install");
    assert_eq!(hooks[1], "slurmctld-relation-created", "{hooks:?}");
    assert_eq!(c.slurm_conf(), after.slurm_conf());
    assert_eq!(c.gres_conf(), after.gres_conf());
    assert_eq!(c.status("slurmd/0"), after.status("slurmd/0"));
}

/// Lines of `new` not in `old` and of `old` not in `new`.
fn changed_lines(old: &str, new: &str) -> Vec<String> {
    let a: BTreeSet<&str> = old.lines().collect();
    let b: BTreeSet<&str> = new.lines().collect();
    a.symmetric_difference(&b).map(|s| s.to_string()).collect()
}

#[test]
fn a_gpu_change_on_one_unit_changes_only_its_lines() {
    let mut c = three_nodes();
    let (slurm0, gres0) = (c.slurm_conf(), c.gres_conf());
    c.clear_commands("slurmctld/0");
    c.clear_commands("slurmd/1");
    // slurmd/1 loses its A100 (e.g. a failed card); detected on the next update-status.
    c.set_gpus("slurmd/1", &[MIXED[0], MIXED[2]]);
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    let slurm_diff = changed_lines(&slurm0, &c.slurm_conf());
    assert_eq!(
        slurm_diff,
        vec![
            format!(
                "NodeName=slurmd-1 {FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024"
            ),
            format!("NodeName=slurmd-1 {FACTS} Gres=gpu:nvidia_l40s:2 MemSpecLimit=1024"),
        ]
    );
    assert_eq!(
        changed_lines(&gres0, &c.gres_conf()),
        vec!["NodeName=slurmd-1 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0"]
    );
    // 22.05 needs a restart for a GRES count change, then reconfigure; the node's drain check.
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        vec!["systemctl restart slurmctld", "scontrol reconfigure"]
    );
    assert!(
        c.commands("slurmctld/0")
            .iter()
            .any(|l| l == "sinfo --noheader --Node --nodes=slurmd-1 --format=%N|%T|%E")
    );
    // The node itself restarts slurmd (type/count change needs it).
    assert_eq!(
        restarts(&c.commands("slurmd/1")),
        vec!["systemctl restart slurmd"]
    );
    assert_eq!(
        c.status("slurmd/1"),
        ("active".into(), "2 GPUs: gpu:nvidia_l40s:2".into())
    );
}

#[test]
fn a_gres_drain_is_cleared_after_the_restart_that_fixes_it() {
    let mut c = three_nodes();
    std::fs::write(
        c.root("slurmctld/0").join("sinfo.txt"),
        "slurmd-1|drained|gres/gpu count reported lower than configured (2 < 3)\n",
    )
    .unwrap();
    c.clear_commands("slurmctld/0");
    c.set_gpus("slurmd/1", &[MIXED[0], MIXED[2]]);
    c.sim.update_status(Some("slurmd")).unwrap();
    let cmds = c.commands("slurmctld/0");
    assert_eq!(
        cmds.last().unwrap(),
        "scontrol update nodename=slurmd-1 state=resume",
        "{cmds:?}"
    );
}

#[test]
fn remove_unit_removes_its_lines() {
    let mut c = three_nodes();
    c.clear_commands("slurmctld/0");
    c.sim.remove_unit("slurmd/1").unwrap();
    c.assert_no_errors();
    assert!(!c.slurm_conf().contains("slurmd-1"), "{}", c.slurm_conf());
    assert!(!c.gres_conf().contains("slurmd-1"));
    assert!(
        c.slurm_conf()
            .contains("PartitionName=slurmd Nodes=slurmd-[0,2] Default=YES State=UP")
    );
    assert!(c.slurm_conf().contains("DownNodes=slurmd-[0,2] State=DOWN"));
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        vec!["systemctl restart slurmctld", "scontrol reconfigure"]
    );
    assert_eq!(
        c.status("slurmctld/0").1,
        "2 nodes, 2 GPUs, 2 new (run node-configured on the slurmd unit)"
    );
}

#[test]
fn node_configured_leaves_downnodes_then_resumes() {
    let mut c = three_nodes();
    c.clear_commands("slurmctld/0");
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
    // Reconfigure (no restart: same nodes, same GRES), then resume after DownNodes dropped it.
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        vec![
            "scontrol reconfigure",
            "scontrol update nodename=slurmd-0 state=resume"
        ]
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
    assert_eq!(c.commands("slurmctld/0"), Vec::<String>::new());
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
    assert_eq!(c.commands("slurmctld/0"), vec!["slurmctld -V"]);
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

#[test]
fn a_corrupt_cache_is_rebuilt_in_full() {
    let mut c = three_nodes();
    let slurm0 = c.slurm_conf();
    let cache = c
        .root("slurmctld/0")
        .join("var/lib/slurm-charms/slurmctld/relation-cache.json");
    let text = std::fs::read_to_string(&cache).unwrap();
    std::fs::write(&cache, text.replace("slurmd-2", "slurmd-9")).unwrap();
    c.clear_commands("slurmctld/0");
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), slurm0);
    // What was applied is unknown, but the files on disk are already right: nothing restarts.
    assert!(restarts(&c.commands("slurmctld/0")).is_empty());
    let logs: Vec<String> = c.sim.logs().into_iter().map(|l| l.message).collect();
    assert!(
        logs.iter()
            .any(|m| m
                .contains("rebuilding the relation cache in full (cache content hash mismatch)")),
        "{logs:?}"
    );
}

#[test]
fn leader_change_converges() {
    let mut c = three_nodes();
    c.sim.add_unit("slurmctld", 1).unwrap();
    assert_eq!(
        c.status("slurmctld/1"),
        (
            "active".into(),
            "standby (the leader manages slurm.conf)".into()
        )
    );
    c.sim.set_leader("slurmctld/1").unwrap();
    c.assert_no_errors();
    let new_conf = c.file("slurmctld/1", "/etc/slurm/slurm.conf");
    assert_eq!(
        new_conf,
        c.slurm_conf()
            .replace("SlurmctldHost=slurmctld-0", "SlurmctldHost=slurmctld-1")
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
            msg.starts_with("2 nodes, 2 GPUs") && msg.contains("rejected slurmd/1"),
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
        "NodeName=slurmd-1 {FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvlink,a100 Weight=200"
    );
    assert_eq!(
        res.results["node-parameters"],
        line.replace(
            " Features=nvlink,a100 Weight=200",
            " Weight=200 Features=nvlink,a100"
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
    // Gres, NodeName and unknown keys are refused; nothing changes.
    for (params, why) in [
        ("Gres=gpu:tesla_t4:8", "Gres"),
        ("NodeName=x", "NodeName"),
        ("SlurmctldProlog=/x", "SlurmctldProlog"),
        ("Weight=1 Weight=2", "Weight"),
    ] {
        let res = c
            .sim
            .run_action("slurmd/1", "node-config", json!({"parameters": params}))
            .unwrap();
        assert_eq!(res.status, "failed", "{params}");
        assert!(res.message.contains(why), "{params}: {}", res.message);
    }
    assert!(c.slurm_conf().contains(&format!("{line}\n")));
    let res = c
        .sim
        .run_action("slurmd/1", "node-config", json!({"reset": true}))
        .unwrap();
    assert_eq!(res.status, "completed");
    c.sim.settle().unwrap();
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-1 {FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024\n"
    )));
}

#[test]
fn missing_device_files_keep_slurmd_stopped() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    c.set_gpus("slurmd/0", TWO_T4);
    std::fs::remove_file(c.root("slurmd/0").join("dev/nvidia1")).unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    let (st, msg) = c.status("slurmd/0");
    assert_eq!(st, "blocked");
    assert!(msg.contains("/dev/nvidia1"), "{msg}");
    let cmds = c.commands("slurmd/0");
    assert!(
        cmds.contains(&"nvidia-modprobe -c 1".to_string()),
        "{cmds:?}"
    );
    assert!(!cmds.iter().any(|l| l.contains("restart slurmd")));
    // The device appears: slurmd starts on the next hook.
    std::fs::write(c.root("slurmd/0").join("dev/nvidia1"), "").unwrap();
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(c.status("slurmd/0").0, "active");
    assert!(
        c.commands("slurmd/0")
            .iter()
            .any(|l| l == "systemctl restart slurmd")
    );
}

#[test]
fn removing_the_relation_stops_slurmd_and_empties_the_cluster() {
    let mut c = three_nodes();
    c.sim.remove_relation("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    assert!(c.slurm_records().is_empty(), "{:?}", c.slurm_records());
    assert_eq!(c.gres_conf(), HEADER);
    assert_eq!(
        c.status("slurmd/0"),
        ("blocked".into(), "Need relation: slurmctld".into())
    );
    assert!(
        c.commands("slurmd/0")
            .contains(&"systemctl stop slurmd".to_string())
    );
    assert_eq!(c.file("slurmd/0", "/etc/default/slurmd"), "");
    assert_eq!(
        c.status("slurmctld/0"),
        ("blocked".into(), "Need relation: slurmd".into())
    );
}

#[test]
fn gpus_without_a_driver_block_with_the_driver_message() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    let root = c.root("slurmd/0");
    for bus in ["0000:3b:00.0", "0000:d8:00.0"] {
        let dev = root.join("sys/bus/pci/devices").join(bus);
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("vendor"), "0x10de\n").unwrap();
        std::fs::write(dev.join("class"), "0x030200\n").unwrap();
    }
    std::fs::write(
        root.join("nvml.json"),
        r#"{"init_error": 9, "devices": []}"#,
    )
    .unwrap();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    assert_eq!(
        c.status("slurmd/0"),
        (
            "blocked".into(),
            "2 NVIDIA GPUs present but the driver is not loaded".into()
        )
    );
    // The node is still enlisted, without GPUs, and shows up once the driver works.
    assert!(
        c.slurm_conf()
            .contains(&format!("NodeName=slurmd-0 {FACTS} MemSpecLimit=1024\n"))
    );
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(
        c.status("slurmd/0"),
        ("active".into(), "2 GPUs: gpu:tesla_t4:2".into())
    );
    assert!(
        c.gres_conf()
            .contains("NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1]\n")
    );
}

#[test]
fn scale_out_and_remove_the_application() {
    let mut c = three_nodes();
    c.clear_commands("slurmctld/0");
    c.set_gpus("slurmd/3", TWO_T4);
    c.sim.add_unit("slurmd", 1).unwrap();
    c.assert_no_errors();
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-[0,3] {FACTS} Gres=gpu:tesla_t4:2 MemSpecLimit=1024\n"
    )));
    assert!(
        c.gres_conf()
            .contains("NodeName=slurmd-[0,3] Name=gpu Type=tesla_t4 File=/dev/nvidia[0-1]\n")
    );
    assert!(
        c.slurm_conf()
            .contains("PartitionName=slurmd Nodes=slurmd-[0-3] Default=YES State=UP\n")
    );
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        vec!["systemctl restart slurmctld", "scontrol reconfigure"]
    );
    assert_eq!(
        c.status("slurmd/3"),
        ("active".into(), "2 GPUs: gpu:tesla_t4:2".into())
    );
    c.clear_commands("slurmctld/0");
    c.sim.remove_application("slurmd").unwrap();
    c.assert_no_errors();
    assert!(c.slurm_records().is_empty());
    // Each departing unit is a node removal (restart); the last one leaves no nodes (stop).
    let cmds = c.commands("slurmctld/0");
    assert_eq!(cmds.last().unwrap(), "systemctl stop slurmctld", "{cmds:?}");
    assert_eq!(
        c.status("slurmctld/0"),
        ("blocked".into(), "Need relation: slurmd".into())
    );
}
