//! GPU sharing (`gpu-sharing` config of slurmd, issue 15 item 2) through the simulator, the
//! real charm binary and the fake NVML: the node publishes its shard/mps GRES, the controller
//! renders them (GresTypes, Gres=, one gres.conf line per GPU), a change of kind converges, a
//! bad value blocks the unit and changes nothing, `detect-gpus` shows the sharing.

#[path = "charm_support.rs"]
mod support;

use serde_json::json;
use slurm_charms::interface::NodeRecord;
use support::*;

fn sharing(c: &mut Cluster, value: &str) {
    c.sim
        .set_config("slurmd", [("gpu-sharing".to_string(), json!(value))].into())
        .unwrap();
    c.sim.settle().unwrap();
    c.assert_no_errors();
}

fn published(c: &Cluster) -> NodeRecord {
    let bag = c.sim.unit_bag(rel(c), "slurmd/0");
    NodeRecord::from_relation_value(&bag["node"]).unwrap()
}

fn line_with<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{text}"))
}

fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 2);
    c.set_gpus("slurmd/0", TWO_T4);
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    configure(&mut c, &["slurmd/0", "slurmd/1"]);
    c
}

#[test]
fn shard_then_mps_then_none_render_by_slurms_rules() {
    let mut c = cluster();
    assert!(c.slurm_conf().contains("\nGresTypes=gpu\n"));

    sharing(&mut c, "shard:4");
    let conf = c.slurm_conf();
    assert!(conf.contains("\nGresTypes=gpu,shard\n"), "{conf}");
    assert_eq!(
        line_with(&conf, "NodeName=slurmd-0 "),
        format!("NodeName=slurmd-0 {PUBLISHED_FACTS} Gres=gpu:tesla_t4:2,shard:8 MemSpecLimit=1024 Features=tesla_t4,cuda12")
            .as_str(),
        "{conf}"
    );
    // The GPU-less unit carries no sharing: nothing to share.
    assert!(
        !line_with(&conf, "NodeName=slurmd-1 ").contains("Gres="),
        "{conf}"
    );
    let gres = c.gres_conf();
    for want in [
        "NodeName=slurmd-0 Name=shard File=/dev/nvidia0 Count=4",
        "NodeName=slurmd-0 Name=shard File=/dev/nvidia1 Count=4",
    ] {
        assert!(gres.lines().any(|l| l == want), "{want} in\n{gres}");
    }
    assert_eq!(
        c.status("slurmd/0"),
        (
            "active".into(),
            "2 GPUs: gpu:tesla_t4:2,shard:8 (shard:4 per GPU)".into()
        )
    );
    assert_eq!(published(&c).gres_string(), "gpu:tesla_t4:2,shard:8");
    let r = c
        .sim
        .run_action("slurmd/0", "detect-gpus", json!({}))
        .unwrap();
    assert_eq!(r.results["gpu-sharing"], "shard:4 (shard:4 per GPU)");
    assert_eq!(r.results["gres"], "gpu:tesla_t4:2,shard:8");
    assert!(
        r.results["gres-conf"]
            .as_str()
            .unwrap()
            .contains("NodeName=slurmd-0 Name=shard File=/dev/nvidia1 Count=4"),
        "{r:?}"
    );

    // Changing the kind: the node restarts slurmd, the controller swaps shard for mps.
    c.clear_commands("slurmd/0");
    sharing(&mut c, "mps:100");
    let conf = c.slurm_conf();
    assert!(conf.contains("\nGresTypes=gpu,mps\n"), "{conf}");
    assert!(
        line_with(&conf, "NodeName=slurmd-0 ").contains(" Gres=gpu:tesla_t4:2,mps:200 "),
        "{conf}"
    );
    let gres = c.gres_conf();
    assert!(!gres.contains("shard"), "{gres}");
    assert!(
        gres.lines()
            .any(|l| l == "NodeName=slurmd-0 Name=mps File=/dev/nvidia0 Count=100"),
        "{gres}"
    );
    c.assert_started_slurmd("slurmd/0");

    // Back to none: whole GPUs only, GresTypes back to gpu.
    sharing(&mut c, "none");
    assert!(c.slurm_conf().contains("\nGresTypes=gpu\n"));
    assert!(!c.gres_conf().contains("mps"), "{}", c.gres_conf());
    assert_eq!(c.status("slurmd/0").1, "2 GPUs: gpu:tesla_t4:2");
}

#[test]
fn a_bad_value_blocks_and_changes_nothing() {
    let mut c = cluster();
    sharing(&mut c, "shard:2");
    let (conf, gres, record) = (c.slurm_conf(), c.gres_conf(), published(&c));
    for bad in [
        "shard",
        "shard:0",
        "shard:-1",
        "mps:abc",
        "foo:3",
        "shard:99999999999999999",
    ] {
        c.clear_commands("slurmd/0");
        sharing(&mut c, bad);
        let (kind, msg) = c.status("slurmd/0");
        assert_eq!(kind, "blocked", "{bad}: {msg}");
        assert!(
            msg.starts_with(&format!("config option `gpu-sharing` \"{bad}\": ")),
            "{bad}: {msg}"
        );
        assert!(
            msg.contains("expected none, shard:N or mps:N")
                || msg.contains("N is a whole number from 1 to 22517998136852"),
            "{bad}: {msg}"
        );
        // Nothing good lost: the published record and the controller's files stay.
        assert_eq!(published(&c), record, "{bad}");
        assert_eq!(c.slurm_conf(), conf, "{bad}");
        assert_eq!(c.gres_conf(), gres, "{bad}");
        assert!(
            !c.commands("slurmd/0").iter().any(|l| l.contains("restart")),
            "{bad}: {:?}",
            c.commands("slurmd/0")
        );
        let r = c
            .sim
            .run_action("slurmd/0", "detect-gpus", json!({}))
            .unwrap();
        assert!(
            r.results["gpu-sharing"]
                .as_str()
                .unwrap()
                .starts_with("config option `gpu-sharing`"),
            "{r:?}"
        );
    }
    // The other unit (no GPUs) is blocked too: the option is the application's.
    assert_eq!(c.status("slurmd/1").0, "blocked");
    sharing(&mut c, "shard:2");
    assert_eq!(c.status("slurmd/0").0, "active");
    assert_eq!(published(&c), record);
}

#[test]
fn mig_nodes_keep_whole_gres_and_say_so() {
    let mut c = Cluster::new();
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", 1);
    // The a100_mig fixture: an A100 in MIG mode (4 instances) beside a plain A100.
    let root = c.root("slurmd/0");
    std::fs::copy(
        repo().join("tests/fixtures/gpu/a100_mig.json"),
        root.join("nvml.json"),
    )
    .unwrap();
    let mut minors = String::from("config 1\nmonitor 2\n");
    for g in 0..2 {
        for gi in 0..15 {
            let base = 3 + g * 135 + gi * 9;
            minors.push_str(&format!("gpu{g}/gi{gi}/access {base}\n"));
            for ci in 0..8 {
                minors.push_str(&format!("gpu{g}/gi{gi}/ci{ci}/access {}\n", base + 1 + ci));
            }
        }
    }
    std::fs::create_dir_all(root.join("proc/driver/nvidia-caps")).unwrap();
    std::fs::write(root.join("proc/driver/nvidia-caps/mig-minors"), minors).unwrap();
    std::fs::create_dir_all(root.join("dev")).unwrap();
    for m in 0..2 {
        std::fs::write(root.join(format!("dev/nvidia{m}")), "").unwrap();
    }
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    c.assert_no_errors();
    configure(&mut c, &["slurmd/0"]);
    let before = c.gres_conf();
    assert!(before.contains("MultipleFiles="), "{before}");
    sharing(&mut c, "shard:4");
    assert_eq!(c.gres_conf(), before);
    assert!(c.slurm_conf().contains("\nGresTypes=gpu\n"));
    let (kind, msg) = c.status("slurmd/0");
    assert_eq!(kind, "active", "{msg}");
    assert!(
        msg.ends_with(
            "(gpu-sharing shard:4 not applied: 4 MIG instances (already partitions of a GPU))"
        ),
        "{msg}"
    );
}

/// Slurm 22.05 loads GresTypes only when slurmd starts: a node whose slurmd restarted before
/// the controller's new files registers too few GRES and is drained INVALID. The next full
/// hook restarts slurmd once, and resumes the node once it registers right.
#[test]
fn a_node_slurm_finds_short_of_gres_is_restarted_once_then_resumed() {
    let mut c = cluster();
    c.sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    sharing(&mut c, "mps:100");
    let sinfo = |c: &Cluster, line: &str| {
        std::fs::write(c.root("slurmd/0").join("sinfo.txt"), format!("{line}\n")).unwrap()
    };
    let hook = |c: &mut Cluster| {
        c.clear_commands("slurmd/0");
        c.sim.update_status(Some("slurmd")).unwrap();
        c.assert_no_errors();
        c.commands("slurmd/0")
            .into_iter()
            .filter(|l| l.contains("restart") || l.starts_with("scontrol update"))
            .collect::<Vec<_>>()
    };
    let invalid = "inval|gres/mps count reported lower than configured (0 < 200)";
    sinfo(&c, invalid);
    assert_eq!(hook(&mut c), ["systemctl restart --no-block slurmd"]);
    // Still invalid after the restart: not restarted again (a GPU may really be missing),
    // blocked with Slurm's reason.
    for _ in 0..2 {
        assert_eq!(hook(&mut c), Vec::<String>::new());
        let (kind, msg) = c.status("slurmd/0");
        assert_eq!(kind, "blocked", "{msg}");
        assert!(
            msg.starts_with("Slurm holds slurmd-0 invalid (gres/mps count reported lower"),
            "{msg}"
        );
    }
    // Registered right again, Slurm's drain left: resumed.
    sinfo(
        &c,
        "drained|gres/mps count reported lower than configured (0 < 200)",
    );
    assert_eq!(
        hook(&mut c),
        ["scontrol update nodename=slurmd-0 state=resume"]
    );
    assert_eq!(c.status("slurmd/0").0, "active");
    // An operator's drain is never touched.
    sinfo(&c, "drained|disk replacement");
    assert_eq!(hook(&mut c), Vec::<String>::new());
    // A new record (sharing changed) may be restarted once again.
    sharing(&mut c, "mps:50");
    sinfo(&c, invalid);
    assert_eq!(hook(&mut c), ["systemctl restart --no-block slurmd"]);
    assert_eq!(c.status("slurmd/0").0, "active");
}

/// Issue 39 item 9: a new GRES name (`gpu-sharing` none -> shard) restarts the node's slurmd
/// only after the controller's hook that reloads slurmctld with it: a slurmd restarted first
/// would load the old files' GRES plugins. The controller's `gres_types` publication gives the
/// node the hook in which Slurm's mismatch drain (the running slurmd lacks the plugin) is seen:
/// slurmd is restarted, and once it registers right the node is resumed, in that same hook.
#[test]
fn a_new_gres_name_restarts_slurmd_after_slurmctld_runs_it() {
    let mut c = cluster();
    c.sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    let root = c.root("slurmd/0");
    // What Slurm shows once slurmctld runs shard and the running slurmd lacks the plugin, and
    // after the restart (registered right, Slurm's drain kept).
    let reason = "gres/shard count reported lower than configured (0 < 8)";
    std::fs::write(root.join("sinfo.txt"), format!("inval|{reason}\n")).unwrap();
    std::fs::write(
        root.join("sinfo-after-restart.txt"),
        format!("drained|{reason}\n"),
    )
    .unwrap();
    c.clear_commands("slurmd/0");
    let from = c.sim.records().len();
    sharing(&mut c, "shard:4");
    let records = &c.sim.records()[from..];
    let logged = |r: &juju_sim::HookRecord, needles: &[&str]| {
        r.calls.iter().any(|t| {
            t.tool == "juju-log" && t.args.iter().any(|a| needles.iter().any(|n| a.contains(n)))
        })
    };
    let order: Vec<String> = records
        .iter()
        .map(|r| {
            let logs: Vec<String> = r
                .calls
                .iter()
                .filter(|t| t.tool == "juju-log")
                .map(|t| t.args.join(" "))
                .collect();
            format!("{} {} {logs:?}", r.unit, r.hook)
        })
        .collect();
    let reload = records
        .iter()
        .position(|r| {
            r.unit == "slurmctld/0" && logged(r, &["restarting slurmctld", "scontrol reconfigure"])
        })
        .unwrap_or_else(|| panic!("slurmctld not reloaded: {order:?}"));
    let restart = records
        .iter()
        .position(|r| r.unit == "slurmd/0" && logged(r, &["restarting slurmd:"]))
        .unwrap_or_else(|| panic!("slurmd/0 never restarted: {order:?}"));
    assert!(
        restart > reload,
        "slurmd/0 restarted (hook {restart}) before slurmctld ran shard (hook {reload}): {order:?}"
    );
    assert_eq!(records[restart].hook, "slurmctld-relation-changed");
    assert_eq!(
        c.sim
            .app_bag(rel(&c), "slurmctld")
            .get("gres_types")
            .map(String::as_str),
        Some("gpu,shard")
    );
    // One restart, then the resume from Slurm's own drain, in that hook.
    let cmds: Vec<String> = c
        .commands("slurmd/0")
        .into_iter()
        .filter(|l| l.contains("restart") || l.starts_with("scontrol update"))
        .collect();
    assert_eq!(
        cmds,
        [
            "systemctl restart --no-block slurmd",
            "scontrol update nodename=slurmd-0 state=resume"
        ],
        "{order:?}"
    );
    // the resume is logged for what it is: Slurm's GRES-count drain, not a GPU health one
    assert!(
        logged(
            &records[restart],
            &["registered with its GRES: resuming slurmd-0"]
        ),
        "{order:?}"
    );
    assert!(
        !logged(&records[restart], &["GPUs healthy again"]),
        "{order:?}"
    );
    assert_eq!(c.status("slurmd/0").0, "active");
}
