//! Overlapping GPU device files in one unit's `node` record (issue 11: `/dev/nvidia[0-1]` plus
//! `/dev/nvidia0`, which makes the real `slurmd -G` fatal: `gpu duplicate device file name`,
//! proven in `tests/slurm_acceptance.rs`): the controller refuses that unit alone at ingest,
//! tells it why in `verdicts`, names it in its status, and renders the good unit's node.

mod common;

use common::changed;
use common::state::{controller, run};
use juju_runtime::StatusKind;
use slurm_charms::charms::CharmKind;
use slurm_charms::interface::Verdicts;

fn node(name: &str, gres: &str, records: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"4","RealMemory":"8000","MemSpecLimit":"1024","Gres":[{gres}]}},"new_node":false,"gres":[{records}]}}"#
    )
}

#[test]
fn overlapping_device_files_are_refused_for_their_unit_alone() {
    let good = node(
        "c0",
        r#""gpu:tesla_t4:2""#,
        r#"{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"}"#,
    );
    let overlapping = node(
        "c1",
        r#""gpu:tesla_t4:2","gpu:nvidia_l40s:1""#,
        r#"{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"},{"Name":"gpu","Type":"nvidia_l40s","File":"/dev/nvidia0"}"#,
    );
    let (state, rel) = controller(&[("compute/0", &good), ("compute/1", &overlapping)]);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &state,
    )
    .unwrap();
    let conf = out.text("/etc/slurm/slurm.conf");
    let gres = out.text("/etc/slurm/gres.conf");
    assert!(conf.contains("NodeName=c0 "), "{conf}");
    assert!(!conf.contains("NodeName=c1"), "{conf}");
    assert!(!gres.contains("c1"), "{gres}");
    let verdicts = Verdicts::from_relation_value(&out.relation(&rel).local_app_data["verdicts"]);
    let why = &verdicts.0["compute/1"];
    assert!(why.contains("/dev/nvidia0"), "{why}");
    assert!(!verdicts.0.contains_key("compute/0"), "{verdicts:?}");
    let status = out.status.unwrap();
    assert_eq!(status.kind, StatusKind::Active, "{status:?}");
    assert!(status.message.contains("compute/1"), "{status:?}");
}
