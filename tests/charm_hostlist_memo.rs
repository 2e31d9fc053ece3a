//! The controller keeps the hostlists of its long node lists in the relation cache
//! (`Cache::hostlists`, `src/slurm/hostlist_memo.rs`) and reuses those whose names did not
//! change. What it writes must not depend on it: after every kind of change (a node of another
//! shape, a node new or configured, a unit gone, a unit back) the files equal those a leader
//! with no cache renders from the same relation data.

mod common;
use common::changed;
use common::state::{State, run, settled_controller};
use juju_runtime::{Event, RelationEvent, RelationId};
use juju_runtime_testing::bag;
use slurm_charms::charms::CharmKind;
use slurm_charms::charms::slurmctld::cache::{CACHE_PATH, Cache};

/// More units than the memo's threshold (`MEMO_FROM`, 256), so every list is kept.
const UNITS: usize = 300;

/// Unit `k`'s `node` value: a 2× T4 node with `cpus` CPUs.
fn node(k: usize, cpus: u32, new_node: bool) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"gpu-{k}","CPUs":"{cpus}","RealMemory":"64000","Gres":["gpu:tesla_t4:2"]}},"new_node":{new_node},"gres":[{{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"}}]}}"#
    )
}

/// The files a leader with no relation cache writes for `st`'s relation data.
fn rebuilt(st: &State, rel: &RelationId) -> (String, String) {
    let mut fresh = st.clone();
    fresh.files.retain(|path, _| {
        !path.starts_with("/var/lib/slurm-charms") && !path.starts_with("/etc/slurm")
    });
    let out = run(
        CharmKind::Slurmctld,
        changed(rel, "compute", Some("compute/0")),
        &fresh,
    )
    .unwrap();
    (
        out.text("/etc/slurm/slurm.conf"),
        out.text("/etc/slurm/gres.conf"),
    )
}

fn kept_lists(st: &State) -> usize {
    Cache::from_bytes(&st.files[CACHE_PATH])
        .expect("the cache reads")
        .hostlists
        .len()
}

#[test]
fn changed_hooks_with_kept_hostlists_write_what_a_full_rebuild_writes() {
    let units: Vec<(String, String)> = (0..UNITS)
        .map(|k| (format!("compute/{k}"), node(k, 64, false)))
        .collect();
    let (mut st, rel) = settled_controller(&units);
    assert!(kept_lists(&st) > 0, "the first render keeps its long lists");
    // (unit, its new value or None: gone)
    // Unit 1 first: its line (one name, `gpu-1`) goes between the big line's first two
    // names, so a kept first name that is wrong reorders the lines.
    let steps: Vec<(usize, Option<String>)> = vec![
        (1, Some(node(1, 32, false))),
        (1, Some(node(1, 32, true))),
        (7, Some(node(7, 32, false))),
        (150, Some(node(150, 32, false))),
        (7, Some(node(7, 64, false))),
        (299, Some(node(299, 64, true))),
        (42, None),
        (299, Some(node(299, 64, false))),
        (42, Some(node(42, 32, false))),
        (150, Some(node(150, 64, false))),
    ];
    for (i, (k, value)) in steps.into_iter().enumerate() {
        let unit = format!("compute/{k}");
        let event = match &value {
            Some(v) => {
                st.relations[0]
                    .remote_units
                    .insert(unit.clone(), bag([("node", v.as_str())]));
                changed(&rel, "compute", Some(&unit))
            }
            None => {
                st.relations[0].remote_units.remove(&unit);
                Event::RelationDeparted(RelationEvent {
                    relation: rel.clone(),
                    remote_app: "compute".into(),
                    remote_unit: Some(unit.clone()),
                    departing_unit: Some(unit.clone()),
                })
            }
        };
        st = run(CharmKind::Slurmctld, event, &st).unwrap();
        let (slurm, gres) = rebuilt(&st, &rel);
        assert_eq!(
            st.text("/etc/slurm/slurm.conf"),
            slurm,
            "step {i}: slurm.conf"
        );
        assert_eq!(st.text("/etc/slurm/gres.conf"), gres, "step {i}: gres.conf");
        assert!(kept_lists(&st) > 0, "step {i}");
    }
}
