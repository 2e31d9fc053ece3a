//! The guarantee of the controller's ingest: whatever one unit publishes, either its node is
//! in the rendered files or that unit alone is rejected (with a reason); every valid node is
//! always rendered and the files parse back with the repo's parser. The same scenario runs
//! against the real slurmctld in `tests/slurm_acceptance.rs`.

#[path = "hostile_unit_support.rs"]
mod hostile;

use hostile::{cluster_with, hostile_record, valid_names};
use proptest::prelude::*;
use slurm_charms::charms::slurmctld::store::Entry;
use slurm_charms::slurm::{parse_gres_conf, parse_slurm_conf};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn one_hostile_unit_never_stops_the_cluster(valid in 1usize..6, hostile in hostile_record()) {
        let (cache, plan) = cluster_with(valid, &hostile);
        prop_assert_eq!(&plan.render_error, &None, "hostile: {}", hostile);
        let slurm_conf = plan.slurm_conf.clone().unwrap_or_default();
        let gres_conf = plan.gres_conf.clone().unwrap_or_default();
        let conf = parse_slurm_conf(&slurm_conf, "slurm.conf");
        prop_assert!(conf.is_ok(), "{:?}\n{}", conf.err(), slurm_conf);
        let conf = conf.unwrap_or_default();
        let gres = parse_gres_conf(&gres_conf, "gres.conf");
        prop_assert!(gres.is_ok(), "{:?}\n{}", gres.err(), gres_conf);
        let names: Vec<String> = conf.nodes.iter().map(|n| n.name.to_string()).collect();
        for name in valid_names(valid) {
            prop_assert!(names.contains(&name), "{} missing; hostile: {}\n{}", name, hostile, slurm_conf);
        }
        let unit = cache.relations[&1].units.get("compute/99").cloned();
        prop_assert!(unit.is_some(), "compute/99 is not cached");
        let unit = unit.unwrap_or_else(|| unreachable!());
        let rejected = match &unit.entry {
            Entry::Rejected(why) => Some(why.clone()),
            Entry::Record(_) => None,
        };
        match &rejected {
            // Rejected: for that unit alone, with its reason, and named in the plan.
            Some(why) => {
                prop_assert!(!why.is_empty());
                prop_assert!(plan.rejected.iter().any(|(u, _)| u == "compute/99"));
                prop_assert_eq!(names.len(), valid);
                prop_assert!(plan.problems().contains("compute/99"));
            }
            // Accepted: its node is in the files (or it lost its name to an earlier unit).
            None => {
                let name = unit.name.to_string();
                let taken = valid_names(valid).contains(&name);
                prop_assert!(names.contains(&name), "{} accepted but not rendered", name);
                prop_assert_eq!(names.len(), if taken { valid } else { valid + 1 });
            }
        }
    }
}

#[test]
fn an_underscore_node_is_rendered_next_to_valid_ones() {
    let raw = hostile::valid_record("gpu_node_2", 2, false).to_string();
    let (_, plan) = cluster_with(3, &raw);
    let text = plan.slurm_conf.unwrap();
    let conf = parse_slurm_conf(&text, "slurm.conf").unwrap();
    let node = conf.nodes.iter().find(|n| n.name == "gpu_node_2").unwrap();
    assert_eq!(node.gres[0].to_string(), "gpu:tesla_t4:2", "{text}");
    let gres = parse_gres_conf(&plan.gres_conf.unwrap(), "gres.conf").unwrap();
    assert_eq!(gres.nodes["gpu_node_2"][0].device_count(), 2);
}

#[test]
fn a_rejected_unit_is_named_with_its_reason() {
    let raw = hostile::valid_record("ALL", 1, false).to_string();
    let (_, plan) = cluster_with(2, &raw);
    assert!(plan.render_error.is_none());
    let msg = plan.problems();
    assert!(
        msg.contains("1 rejected (compute/99)") && msg.contains("reserved"),
        "{msg}"
    );
}

#[test]
fn a_second_application_claiming_a_partition_is_rejected_alone() {
    use slurm_charms::charms::slurmctld::desired::plan;
    let (mut cache, _) = cluster_with(2, "{}");
    let raw = hostile::valid_record("other-1", 0, false).to_string();
    cache.add_relation(
        2,
        "other",
        Some(r#"{"compute":{"State":"UP"}}"#.into()),
        [("other/0".to_string(), raw)],
    );
    let plan = plan(&hostile::settings(), &cache);
    assert_eq!(plan.render_error, None);
    assert!(
        plan.rejected
            .iter()
            .any(|(who, why)| who == "other"
                && why.contains("already published by application compute")),
        "{:?}",
        plan.rejected
    );
    let conf = parse_slurm_conf(&plan.slurm_conf.unwrap(), "slurm.conf").unwrap();
    assert_eq!(conf.nodes.len(), 2);
}

/// Found by the `relation_ingest` fuzz target: a refused `partition` quoted its (hostile)
/// partition name whole in the reason (as the field's path), so up to 64 KiB went to the log
/// and the store on a hook. Reasons are bounded like a unit's (`MAX_REASON_LEN`), and the path
/// is cut so that the reason itself still shows.
#[test]
fn a_refused_partition_reason_is_bounded() {
    use slurm_charms::charms::slurmctld::desired::plan;
    use slurm_charms::charms::slurmctld::store::{MAX_REASON_LEN, Store};
    let name = format!("{}(", "x".repeat(20_000));
    let mut store = Store::default();
    let raw = hostile::valid_record("gpu-1", 1, false).to_string();
    store.add_relation(
        1,
        "compute",
        Some(format!(r#"{{"{name}":{{"State":"UP"}}}}"#)),
        [("compute/0".to_string(), raw)],
    );
    let plan = plan(&hostile::settings(), &store);
    let (who, why) = plan.rejected.first().expect("the partition is refused");
    assert_eq!(who, "compute");
    assert!(why.contains("invalid PartitionName"), "{why}");
    assert!(why.len() <= MAX_REASON_LEN + 32, "{} bytes", why.len());
}

/// The same for a refused parameter whose key is 20,000 bytes: the field path is cut, so the
/// reason ("invalid key") still shows within the bound the controller keeps
/// (`MAX_REASON_LEN`).
#[test]
fn a_refused_partition_parameter_with_a_huge_key_keeps_its_reason() {
    use slurm_charms::charms::slurmctld::store::{MAX_REASON_LEN, bounded};
    use slurm_charms::interface::PartitionRecord;
    let key = "K".repeat(20_000);
    let e = PartitionRecord::from_relation_value(&format!(r#"{{"compute":{{"{key}":"1"}}}}"#))
        .unwrap_err()
        .to_string();
    let kept = bounded(e);
    assert!(kept.contains("compute.KKK"), "{kept}");
    assert!(kept.contains("(20008 bytes): invalid key"), "{kept}");
    assert!(kept.len() <= MAX_REASON_LEN + 32, "{} bytes", kept.len());
}

/// Found by `tests/e2e_partitions.rs`: a refused `partition` record quoted its keys as they
/// came, control characters included, in the field's path, so a partition name with a newline
/// put a line of the sender's choosing into the controller's status and log. Control
/// characters in a path are escaped (`\n`); the reason names them too.
#[test]
fn a_refused_partition_path_shows_control_characters_escaped() {
    use slurm_charms::interface::PartitionRecord;
    for raw in [
        r#"{"other\nPartitionName=evil Nodes=ALL":{"State":"UP"}}"#,
        r#"{"other":{"Max\rTime\u001b[2J":"60"}}"#,
    ] {
        let e = PartitionRecord::from_relation_value(raw)
            .unwrap_err()
            .to_string();
        assert!(!e.chars().any(char::is_control), "{e:?}");
        assert!(e.contains(r"\n") || e.contains(r"\r"), "{e}");
    }
}

/// The same for a `node` record with a field of the sender's naming (refused as unknown, the
/// name quoted in the reason) and a parameter whose name carries a newline.
#[test]
fn a_refused_node_record_shows_control_characters_escaped() {
    use slurm_charms::interface::NodeRecord;
    for raw in [
        r#"{"node_parameters":{"NodeName":"n1"},"new_node":false,"x\nNodeName=evil":1}"#,
        r#"{"node_parameters":{"NodeName":"n1","Feat\nures":"a"},"new_node":false}"#,
    ] {
        let e = NodeRecord::from_relation_value(raw)
            .unwrap_err()
            .to_string();
        assert!(!e.chars().any(char::is_control), "{e:?}");
    }
}
