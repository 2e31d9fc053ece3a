//! GPU sharing as state in → event → state out (`tests/common/state.rs`): the controller turns
//! shard/mps node records into GresTypes, `Gres=` and gres.conf lines, and refuses a unit whose
//! shared records are wrong (that unit alone, with a verdict); a slurmd unit with a bad
//! `gpu-sharing` blocks and publishes nothing new.

mod common;

use common::changed;
use common::state::{State, run};
use juju_runtime::{RelationId, StatusKind};
use serde_json::json;
use slurm_charms::charms::CharmKind;

const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
const GRES_CONF: &str = "/etc/slurm/gres.conf";

/// A node record with `gpus` T4s and `shared` records as the slurmd charm publishes them.
fn node(name: &str, gpus: u32, shared: Option<(&str, u64)>) -> String {
    let mut gres = vec![
        json!({"Name": "gpu", "Type": "tesla_t4", "File": format!("/dev/nvidia[0-{}]", gpus - 1)}),
    ];
    let mut specs = vec![format!("gpu:tesla_t4:{gpus}")];
    if let Some((kind, n)) = shared {
        for i in 0..gpus {
            gres.push(
                json!({"Name": kind, "File": format!("/dev/nvidia{i}"), "Count": n.to_string()}),
            );
        }
        specs.push(format!("{kind}:{}", n * u64::from(gpus)));
    }
    json!({
        "node_parameters": {"NodeName": name, "CPUs": "4", "RealMemory": "8000", "Gres": specs},
        "new_node": false,
        "gres": gres,
    })
    .to_string()
}

fn controller(units: &[(&str, String)]) -> (State, RelationId) {
    common::state::controller(units)
}

#[test]
fn controller_renders_shard_and_mps_nodes() {
    let (state, rel) = controller(&[
        ("compute/0", node("s0", 2, Some(("shard", 4)))),
        ("compute/1", node("m0", 1, Some(("mps", 100)))),
        ("compute/2", node("g0", 1, None)),
    ]);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/2")),
        &state,
    )
    .unwrap();
    let conf = out.text(SLURM_CONF);
    assert!(conf.contains("\nGresTypes=gpu,mps,shard\n"), "{conf}");
    assert!(
        conf.contains("NodeName=s0 CPUs=4 RealMemory=8000 Gres=gpu:tesla_t4:2,shard:8\n"),
        "{conf}"
    );
    assert!(
        conf.contains("NodeName=m0 CPUs=4 RealMemory=8000 Gres=gpu:tesla_t4:1,mps:100\n"),
        "{conf}"
    );
    assert!(
        conf.contains("NodeName=g0 CPUs=4 RealMemory=8000 Gres=gpu:tesla_t4:1\n"),
        "{conf}"
    );
    let gres = out.text(GRES_CONF);
    for line in [
        "NodeName=s0 Name=shard File=/dev/nvidia0 Count=4",
        "NodeName=s0 Name=shard File=/dev/nvidia1 Count=4",
        "NodeName=m0 Name=mps File=/dev/nvidia0 Count=100",
    ] {
        assert!(gres.lines().any(|l| l == line), "{line} in\n{gres}");
    }
    assert!(!out.relation(&rel).local_app_data.contains_key("verdicts"));
}

#[test]
fn controller_refuses_a_wrong_shared_record_for_that_unit_alone() {
    // shard on a file that is not one of the node's GPUs.
    let bad = node("s1", 1, Some(("shard", 4))).replace(
        r#""File":"/dev/nvidia0","Name":"shard""#,
        r#""File":"/dev/nvidia7","Name":"shard""#,
    );
    assert!(bad.contains("/dev/nvidia7"), "{bad}");
    let (state, rel) = controller(&[
        ("compute/0", node("s0", 2, Some(("shard", 4)))),
        ("compute/1", bad),
    ]);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1")),
        &state,
    )
    .unwrap();
    let conf = out.text(SLURM_CONF);
    assert!(conf.contains("NodeName=s0 "), "{conf}");
    assert!(!conf.contains("NodeName=s1 "), "{conf}");
    assert!(conf.contains("\nGresTypes=gpu,shard\n"), "{conf}");
    let verdicts = &out.relation(&rel).local_app_data["verdicts"];
    assert!(
        verdicts.contains("compute/1") && verdicts.contains("not one of this node's whole GPUs"),
        "{verdicts}"
    );
}

fn configured_node(sharing: &str) -> (State, RelationId) {
    let config = json!({"gpu-sharing": sharing});
    common::state::configured_node(config.as_object().cloned().unwrap_or_default())
}

#[test]
fn slurmd_with_a_bad_value_blocks_and_keeps_its_record() {
    let (state, rel) = configured_node("shard:4");
    let first = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    // No GPUs on this host: nothing to share, the node is active.
    assert_eq!(first.status.clone().unwrap().kind, StatusKind::Active);
    let published = first.relation(&rel).local_unit_data["node"].clone();
    assert!(!published.contains("shard"), "{published}");
    for bad in [
        "shard",
        "shard:0",
        "shard:-1",
        "mps:abc",
        "foo:3",
        "mps:22517998136853",
    ] {
        let mut input = first.clone();
        input.config = json!({"gpu-sharing": bad}).as_object().unwrap().clone();
        let out = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &input).unwrap();
        let status = out.status.clone().unwrap();
        assert_eq!(status.kind, StatusKind::Blocked, "{bad}");
        assert!(
            status
                .message
                .starts_with(&format!("config option `gpu-sharing` \"{bad}\": ")),
            "{bad}: {}",
            status.message
        );
        assert_eq!(
            out.relation(&rel).local_unit_data["node"],
            published,
            "{bad}"
        );
        assert!(
            !out.commands_run.iter().any(|c| c.contains("restart")),
            "{bad}: {:?}",
            out.commands_run
        );
    }
}
