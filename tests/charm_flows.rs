//! The charms through the simulator, enlisting: deploy, integrate before and after install,
//! exact slurm.conf/gres.conf for three nodes with different fake GPUs, a GPU change, remove-unit,
//! scale out, relation removal, driver problems. Assertions are on the exact files, relation
//! data, statuses and the commands the charms ran (recorded by fakes).

#[path = "charm_support.rs"]
mod support;

use serde_json::json;
use support::*;

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
    let mut c = three_nodes();
    let expected_slurm = format!(
        "{HEADER}{GLOBALS}\
DefMemPerCPU=3760
DefMemPerGPU=10026
NodeName=slurmd-0 {PUBLISHED_FACTS} Gres=gpu:tesla_t4:2 MemSpecLimit=1024 Features=tesla_t4,cuda12
NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvidia_l40s,nvidia_a100_80gb_pcie,cuda12
NodeName=slurmd-2 {PUBLISHED_FACTS} MemSpecLimit=1024
PartitionName=slurmd Nodes=slurmd-[0-2] Default=YES State=UP
DownNodes=slurmd-[0-2] State=DOWN Reason=\"New node.\"
"
    );
    assert_eq!(c.slurm_conf(), expected_slurm);
    let expected_gres = format!(
        "{HEADER}\
NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia0 Links=-1,0
NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia1 Links=0,-1
NodeName=slurmd-1 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0 Links=-1,0,0
NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Links=0,-1,0
NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia3 Links=0,0,-1
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
        json!({"Name": "gpu", "Type": "nvidia_l40s", "File": "/dev/nvidia1", "Links": "0,-1,0"})
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

    // Every slurmd has the controller's key (0400) and runs configless against it, started by
    // node-configured (not before: a new node's slurmd waits for it).
    let key = c.bytes("slurmctld/0", "/etc/munge/munge.key").unwrap();
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert!(
            !c.commands(u)
                .iter()
                .any(|l| l.contains("restart --no-block slurmd")),
            "{u}"
        );
        assert!(c.status(u).1.ends_with(NEW_NODE_NOTE), "{:?}", c.status(u));
    }
    configure(&mut c, &["slurmd/0", "slurmd/1", "slurmd/2"]);
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
            .position(|l| l == "systemctl restart --no-block slurmd")
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
        ("active".into(), "3 nodes, 5 GPUs".into())
    );
    assert_eq!(
        c.file("slurmctld/0", "/etc/slurm/cgroup.conf"),
        format!("{HEADER}ConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=yes\n")
    );
    // Files are Slurm's: 0644.
    use std::os::unix::fs::PermissionsExt;
    for f in [
        "etc/slurm/slurm.conf",
        "etc/slurm/gres.conf",
        "etc/slurm/cgroup.conf",
    ] {
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

#[test]
fn a_gpu_change_on_one_unit_changes_only_its_lines() {
    let mut c = three_nodes();
    configure(&mut c, &["slurmd/0", "slurmd/1", "slurmd/2"]);
    let (slurm0, gres0) = (c.slurm_conf(), c.gres_conf());
    c.clear_commands("slurmctld/0");
    c.clear_commands("slurmd/1");
    // slurmd/1 loses its A100 (a card removed); detected on the next update-status. A GPU that
    // disappeared is a fault (issue 15): the node is drained, and its record and the files
    // stay as they are (issue 39 item 2) until the operator accepts the removal.
    c.set_gpus("slurmd/1", &[MIXED[0], MIXED[2]]);
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    assert_eq!(
        c.status("slurmd/1"),
        (
            "blocked".into(),
            "gpu 1 (00000000:3B:00.0): disappeared since the last check".into()
        )
    );
    assert_eq!(c.slurm_conf(), slurm0);
    assert_eq!(restarts(&c.commands("slurmctld/0")), Vec::<String>::new());
    let r = c
        .sim
        .run_action("slurmd/1", "detect-gpus", json!({"accept-missing": true}))
        .unwrap();
    assert_eq!(r.results["health"]["status"], "healthy", "{r:?}");
    c.assert_no_errors();
    let slurm_diff = changed_lines(&slurm0, &c.slurm_conf());
    assert_eq!(
        slurm_diff,
        vec![
            // the smallest share per GPU was slurmd-1's (30080 MB / 3): now slurmd-0's (/ 2)
            "DefMemPerGPU=10026".to_string(),
            "DefMemPerGPU=15040".to_string(),
            format!(
                "NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_a100_80gb_pcie:1,gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvidia_l40s,nvidia_a100_80gb_pcie,cuda12"
            ),
            format!(
                "NodeName=slurmd-1 {PUBLISHED_FACTS} Gres=gpu:nvidia_l40s:2 MemSpecLimit=1024 Features=nvidia_l40s,cuda12"
            ),
        ]
    );
    assert_eq!(
        changed_lines(&gres0, &c.gres_conf()),
        // Only slurmd-1's lines: the A100 goes, the L40S Links rows shrink to two GPUs.
        vec![
            "NodeName=slurmd-1 Name=gpu Type=nvidia_a100_80gb_pcie File=/dev/nvidia0 Links=-1,0,0",
            "NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Links=-1,0",
            "NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia1 Links=0,-1,0",
            "NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia3 Links=0,-1",
            "NodeName=slurmd-1 Name=gpu Type=nvidia_l40s File=/dev/nvidia3 Links=0,0,-1",
        ]
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
        vec!["systemctl restart --no-block slurmd"]
    );
    assert_eq!(
        c.status("slurmd/1"),
        ("active".into(), "2 GPUs: gpu:nvidia_l40s:2".into())
    );
}

/// `detect-gpus accept-missing=true` on `unit`: its GPUs NVML no longer lists are forgotten and
/// its record republished without them.
fn forget_missing(c: &mut Cluster, unit: &str) {
    let r = c
        .sim
        .run_action(unit, "detect-gpus", json!({"accept-missing": true}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    c.assert_no_errors();
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
    // A card removed for good (a lost one keeps its record: issue 39 item 2).
    c.set_gpus("slurmd/1", &[MIXED[0], MIXED[2]]);
    forget_missing(&mut c, "slurmd/1");
    let cmds = c.commands("slurmctld/0");
    assert_eq!(
        cmds.last().unwrap(),
        "scontrol update nodename=slurmd-1 state=resume",
        "{cmds:?}"
    );
}

/// Issue 39: an operator's drain is never lifted by the restart that clears Slurm's own GRES
/// drains, even when its reason contains `gres` ("pro*gres*s"), `GPU`, `slurmd-charm` or a
/// quote of Slurm's text in the middle.
#[test]
fn an_operators_drain_survives_the_restart_that_clears_gres_drains() {
    for reason in [
        "PSU swap in progress (ticket 4711)",
        "GPU 2 reseated, waiting for burn-in",
        "hold: slurmd-charm test",
        "maint: gres/gpu count reported lower than configured (2 < 3)",
    ] {
        let mut c = three_nodes();
        std::fs::write(
            c.root("slurmctld/0").join("sinfo.txt"),
            format!("slurmd-1|drained|{reason}\n"),
        )
        .unwrap();
        c.clear_commands("slurmctld/0");
        c.set_gpus("slurmd/1", &[MIXED[0], MIXED[2]]);
        forget_missing(&mut c, "slurmd/1");
        let cmds = c.commands("slurmctld/0");
        assert!(
            cmds.iter().any(|l| l.starts_with("sinfo ")),
            "{reason}: the drain check did not run: {cmds:?}"
        );
        assert!(
            !cmds.iter().any(|l| l.contains("state=resume")),
            "{reason}: an operator's drain was lifted: {cmds:?}"
        );
    }
}

/// Issue 39: two machines of one model whose `slurmd -C` differ by 2 MB (515,000 and 514,998)
/// publish one RealMemory (default `memory-headroom` 2%, rounded down) and share a node line.
#[test]
fn machines_of_one_model_fold_into_one_node_line() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 2);
    for (unit, mb) in [("slurmd/0", 515_000), ("slurmd/1", 514_998)] {
        let host = unit.replace('/', "-");
        std::fs::write(
            c.root(unit).join("slurmd-C.txt"),
            format!("NodeName={host} CPUs=8 RealMemory={mb}\nUpTime=0-00:08:47\n"),
        )
        .unwrap();
        c.set_gpus(unit, TWO_T4);
    }
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    let conf = c.slurm_conf();
    assert!(
        conf.contains(
            "NodeName=slurmd-[0-1] CPUs=8 RealMemory=503808 Gres=gpu:tesla_t4:2 MemSpecLimit=1024 Features=tesla_t4,cuda12\n"
        ),
        "{conf}"
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
fn scale_out_and_remove_the_application() {
    let mut c = three_nodes();
    c.clear_commands("slurmctld/0");
    c.set_gpus("slurmd/3", TWO_T4);
    c.sim.add_unit("slurmd", 1).unwrap();
    c.assert_no_errors();
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-[0,3] {PUBLISHED_FACTS} Gres=gpu:tesla_t4:2 MemSpecLimit=1024 Features=tesla_t4,cuda12\n"
    )));
    assert!(
        c.gres_conf().contains(
            "NodeName=slurmd-[0,3] Name=gpu Type=tesla_t4 File=/dev/nvidia0 Links=-1,0\n"
        )
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
        (
            "active".into(),
            format!("2 GPUs: gpu:tesla_t4:2{NEW_NODE_NOTE}")
        )
    );
    c.clear_commands("slurmctld/0");
    c.sim.remove_application("slurmd").unwrap();
    c.assert_no_errors();
    assert!(c.slurm_records().is_empty());
    // Each departing unit is a node removal (restart); the last one leaves no nodes (stop).
    // (every leader hook also asks whether slurmctld runs: without nodes it is left stopped)
    let cmds: Vec<String> = c
        .commands("slurmctld/0")
        .into_iter()
        .filter(|l| l != "systemctl is-active slurmctld")
        .collect();
    assert_eq!(cmds.last().unwrap(), "systemctl stop slurmctld", "{cmds:?}");
    assert_eq!(
        c.status("slurmctld/0"),
        ("blocked".into(), "Need relation: slurmd".into())
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
    // nvidia-driver=none: the charm does not install a driver (tests/charm_driver_install.rs).
    let spec = c
        .spec("slurmd", &c.slurmd_charm.clone(), 1)
        .config("nvidia-driver", "none");
    c.sim.deploy(spec).unwrap();
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
    assert!(c.slurm_conf().contains(&format!(
        "NodeName=slurmd-0 {PUBLISHED_FACTS} MemSpecLimit=1024\n"
    )));
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(
        c.status("slurmd/0"),
        (
            "active".into(),
            format!("2 GPUs: gpu:tesla_t4:2{NEW_NODE_NOTE}")
        )
    );
    assert!(
        c.gres_conf()
            .contains("NodeName=slurmd-0 Name=gpu Type=tesla_t4 File=/dev/nvidia1 Links=0,-1\n")
    );
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
    // The device appears: slurmd starts with node-configured (a new node's slurmd waits).
    std::fs::write(c.root("slurmd/0").join("dev/nvidia1"), "").unwrap();
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_eq!(
        c.status("slurmd/0"),
        (
            "active".into(),
            format!("2 GPUs: gpu:tesla_t4:2{NEW_NODE_NOTE}")
        )
    );
    configure(&mut c, &["slurmd/0"]);
    assert_eq!(c.status("slurmd/0").0, "active");
    assert!(
        c.commands("slurmd/0")
            .iter()
            .any(|l| l == "systemctl restart --no-block slurmd")
    );
}

/// `/proc/driver/nvidia-caps/mig-minors` for `gpus` GPUs (as the driver writes it).
fn mig_minors_text(gpus: u32) -> String {
    let mut s = String::from("config 1\nmonitor 2\n");
    for g in 0..gpus {
        for gi in 0..15 {
            let base = 3 + g * 135 + gi * 9;
            s.push_str(&format!("gpu{g}/gi{gi}/access {base}\n"));
            for ci in 0..8 {
                s.push_str(&format!("gpu{g}/gi{gi}/ci{ci}/access {}\n", base + 1 + ci));
            }
        }
    }
    s
}

#[test]
fn mig_instances_are_enlisted_with_multiple_files() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    let root = c.root("slurmd/0");
    let fixture = repo().join("tests/fixtures/gpu/a100_mig.json");
    std::fs::copy(&fixture, root.join("nvml.json")).unwrap();
    std::fs::create_dir_all(root.join("proc/driver/nvidia-caps")).unwrap();
    std::fs::write(
        root.join("proc/driver/nvidia-caps/mig-minors"),
        mig_minors_text(2),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("dev")).unwrap();
    for m in 0..2 {
        std::fs::write(root.join(format!("dev/nvidia{m}")), "").unwrap();
    }
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    let gres = c.gres_conf();
    let mig_lines: Vec<&str> = gres
        .lines()
        .filter(|l| l.contains("MultipleFiles="))
        .collect();
    assert!(!mig_lines.is_empty(), "{gres}");
    for l in &mig_lines {
        assert!(
            l.starts_with("NodeName=slurmd-0 Name=gpu Type=nvidia_a100_"),
            "{l}"
        );
        assert!(
            l.contains("MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap"),
            "{l}"
        );
        assert!(!l.contains(" File="), "{l}");
    }
    // The whole MIG GPU is never published as /dev/nvidia0; the plain A100 is.
    assert!(!gres.contains("File=/dev/nvidia0\n") && !gres.contains("File=/dev/nvidia0 "));
    assert!(
        gres.contains("Type=nvidia_a100-sxm4-40gb File=/dev/nvidia1"),
        "{gres}"
    );
    let node_line = c
        .slurm_records()
        .into_iter()
        .find(|l| l.starts_with("NodeName=slurmd-0"))
        .unwrap();
    assert!(
        node_line.contains("gpu:nvidia_a100_1g.5gb:2"),
        "{node_line}"
    );
    assert_eq!(c.status("slurmd/0").0, "active");
}
