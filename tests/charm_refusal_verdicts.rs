//! When slurmctld refuses new files (issue 11 item 2; `systemctl restart slurmctld` or
//! `scontrol reconfigure` fails: recording stand-ins with failure markers, through the
//! simulator and the real charm binary), the units whose records changed since the last
//! accepted set learn it: their status says the node was not enlisted and why (the daemon's
//! reason, abbreviated), the controller's status names them, and the other units stay active.
//! A refusal caused by no unit's record tells no unit.

#[path = "charm_support.rs"]
mod support;

use support::*;

/// slurmd/1's GPUs ([`MIXED`]) and a third L40S.
const MIXED_PLUS_ONE: &[(&str, u32, &str)] = &[
    ("NVIDIA L40S", 3, "00000000:D8:00.0"),
    ("NVIDIA A100 80GB PCIe", 0, "00000000:3B:00.0"),
    ("NVIDIA L40S", 1, "00000000:5E:00.0"),
    ("NVIDIA L40S", 2, "00000000:AF:00.0"),
];

/// [`MIXED_PLUS_ONE`] and a fourth L40S.
const MIXED_PLUS_TWO: &[(&str, u32, &str)] = &[
    ("NVIDIA L40S", 3, "00000000:D8:00.0"),
    ("NVIDIA A100 80GB PCIe", 0, "00000000:3B:00.0"),
    ("NVIDIA L40S", 1, "00000000:5E:00.0"),
    ("NVIDIA L40S", 2, "00000000:AF:00.0"),
    ("NVIDIA L40S", 4, "00000000:E1:00.0"),
];

fn all_active(c: &Cluster) {
    for u in ["slurmd/0", "slurmd/1", "slurmd/2", "slurmctld/0"] {
        assert_eq!(c.status(u).0, "active", "{u}: {:?}", c.status(u));
    }
}

#[test]
fn the_unit_whose_record_was_refused_learns_it_and_why() {
    let mut c = three_nodes();
    all_active(&c);
    let accepted = c.slurm_conf();
    // slurmctld does not come back with slurmd/1's new GPUs (22.05: a GRES change restarts).
    let marker = c.root("slurmctld/0").join("fail-systemctl-restart");
    std::fs::write(&marker, "Job for slurmctld.service failed: bad gres").unwrap();
    c.set_gpus("slurmd/1", MIXED_PLUS_ONE);
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), accepted, "back on the accepted files");

    let (st, msg) = c.status("slurmd/1");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.starts_with("node not enlisted: slurmctld refused")
            && msg.contains("Job for slurmctld.service failed"),
        "{msg}"
    );
    assert!(msg.chars().count() <= 200, "{msg}");
    for u in ["slurmd/0", "slurmd/2"] {
        assert_eq!(c.status(u).0, "active", "{u}: {:?}", c.status(u));
    }
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.contains("not enlisted: slurmd/1"), "{msg}");
    assert!(
        !msg.contains("slurmd/0") && !msg.contains("slurmd/2"),
        "{msg}"
    );

    // Later hooks keep telling it (the same files are not offered again).
    c.sim.update_status(None).unwrap();
    c.assert_no_errors();
    assert_eq!(c.status("slurmd/1").0, "blocked");
    assert!(c.status("slurmctld/0").1.contains("not enlisted: slurmd/1"));

    // Once slurmctld takes a new set, the verdict goes and the unit is active again.
    std::fs::remove_file(&marker).unwrap();
    c.set_gpus("slurmd/1", MIXED_PLUS_TWO);
    c.sim.update_status(Some("slurmd")).unwrap();
    c.assert_no_errors();
    assert!(
        c.slurm_conf().contains("gpu:nvidia_l40s:4"),
        "{}",
        c.slurm_conf()
    );
    all_active(&c);
    assert!(
        c.status("slurmd/1").1.starts_with("5 GPUs"),
        "{:?}",
        c.status("slurmd/1")
    );
}

#[test]
fn a_refusal_no_record_caused_tells_no_unit() {
    let mut c = three_nodes();
    all_active(&c);
    let marker = c.root("slurmctld/0").join("fail-scontrol-reconfigure");
    std::fs::write(&marker, "error: Unable to process configuration file").unwrap();
    let cfg = [(
        "slurm-conf-parameters".to_string(),
        serde_json::json!("MaxJobCount=5000"),
    )]
    .into();
    c.sim.set_config("slurmctld", cfg).unwrap();
    c.assert_no_errors();
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.contains("refused") && !msg.contains("not enlisted"),
        "{msg}"
    );
    for u in ["slurmd/0", "slurmd/1", "slurmd/2"] {
        assert_eq!(c.status(u).0, "active", "{u}: {:?}", c.status(u));
    }
}
