//! The store as kube-rs's reflector: applying events one at a time must give what a relist of
//! the same relation data gives. Over random event sequences (units added, changed, renamed,
//! taking another unit's name, turning hostile, removed; partitions published, changed and
//! claimed twice; relations broken), after every event:
//!
//! - the plan from the store the events were applied to equals the plan from a store rebuilt
//!   from the relation data alone, with the ownership the incremental store had carried over
//!   (`Store::keep_ownership_of`, what leader-elected and upgrade-charm do);
//! - the store reads back from its file as it was written;
//! - the file's unchanged-event predicate says "unchanged" exactly where `Store::apply` does;
//! - dropping unused records before a save keeps exactly the records a unit names and the GRES
//!   parts and node line shapes those records name (the plain definition, by sets).

use proptest::prelude::*;
use slurm_charms::charms::slurmctld::desired::{Plan, Settings, plan};
use slurm_charms::charms::slurmctld::store::{Change, Delta, Entry, Store};
use slurm_charms::charms::slurmctld::store_file::StoreFile;
use slurm_charms::slurm::types::NodeName;
use std::collections::{BTreeMap, BTreeSet};

/// The relation data Juju holds: per relation id, the application, its `partition` value and
/// its units' `node` values.
#[derive(Debug, Clone, Default)]
struct Juju {
    relations: BTreeMap<u32, JujuRelation>,
}

/// One relation's data: the application, its `partition` value, its units' `node` values.
type JujuRelation = (String, Option<String>, BTreeMap<String, String>);

#[derive(Debug, Clone)]
enum Event {
    /// Unit `u` of relation `r` publishes node `name` with `memory`, `new`.
    Node {
        r: u32,
        u: u32,
        name: u32,
        memory: u32,
        new: bool,
    },
    /// Unit `u` of relation `r` publishes a value no record parses from.
    Hostile { r: u32, u: u32 },
    /// Unit `u` of relation `r` leaves.
    Departed { r: u32, u: u32 },
    /// Relation `r`'s application publishes partition `p`.
    Partition { r: u32, p: u32 },
    /// Relation `r` is broken.
    Broken { r: u32 },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        6 => (1u32..4, 0u32..5, 0u32..8, 0u32..3, any::<bool>())
            .prop_map(|(r, u, name, memory, new)| Event::Node { r, u, name, memory, new }),
        1 => (1u32..4, 0u32..5).prop_map(|(r, u)| Event::Hostile { r, u }),
        2 => (1u32..4, 0u32..5).prop_map(|(r, u)| Event::Departed { r, u }),
        2 => (1u32..4, 0u32..3).prop_map(|(r, p)| Event::Partition { r, p }),
        1 => (1u32..4).prop_map(|r| Event::Broken { r }),
    ]
}

fn app(r: u32) -> String {
    format!("app{r}")
}

/// Nodes of two shapes (4 or 8 CPUs, by `memory`'s parity), each with its own RealMemory:
/// records share shapes, and dropping a record can leave a shape unused.
fn node_value(name: u32, memory: u32, new: bool) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"gpu-{name}","CPUs":"{}","RealMemory":"{}"}},"new_node":{new}}}"#,
        4 + 4 * (memory % 2),
        1000 + memory
    )
}

fn settings() -> Settings {
    Settings {
        cluster_name: "events".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    }
}

/// What the leader keeps after planning: the owners the plan settled (as `plan::plan` does).
fn planned(store: &mut Store) -> Plan {
    let mut p = plan(&settings(), store);
    store.owners = std::mem::take(&mut p.owners);
    store.set_owners(&p.owner_changes);
    p
}

/// Applies `e` to Juju's data and returns the store deltas the leader's hooks would see
/// (a relation it does not know yet is created first, as Juju's relation-created is).
fn step(juju: &mut Juju, e: &Event) -> Vec<Delta> {
    let mut deltas = Vec::new();
    let ensure = |juju: &mut Juju, r: u32, deltas: &mut Vec<Delta>| {
        if let std::collections::btree_map::Entry::Vacant(v) = juju.relations.entry(r) {
            v.insert((app(r), None, BTreeMap::new()));
            deltas.push(Delta::RelationCreated {
                relation: r,
                app: app(r),
                partition: None,
            });
        }
    };
    match e {
        Event::Node {
            r,
            u,
            name,
            memory,
            new,
        } => {
            ensure(juju, *r, &mut deltas);
            let value = node_value(*name, *memory, *new);
            let unit = format!("{}/{u}", app(*r));
            juju.relations
                .get_mut(r)
                .unwrap()
                .2
                .insert(unit.clone(), value.clone());
            deltas.push(Delta::Node {
                relation: *r,
                unit,
                value: Some(value),
            });
        }
        Event::Hostile { r, u } => {
            ensure(juju, *r, &mut deltas);
            let value = r#"{"node_parameters":{"NodeName":"x\nPartitionName=evil"}}"#.to_string();
            let unit = format!("{}/{u}", app(*r));
            juju.relations
                .get_mut(r)
                .unwrap()
                .2
                .insert(unit.clone(), value.clone());
            deltas.push(Delta::Node {
                relation: *r,
                unit,
                value: Some(value),
            });
        }
        Event::Departed { r, u } => {
            if let Some(rel) = juju.relations.get_mut(r) {
                let unit = format!("{}/{u}", app(*r));
                rel.2.remove(&unit);
                deltas.push(Delta::Departed { relation: *r, unit });
            }
        }
        Event::Partition { r, p } => {
            ensure(juju, *r, &mut deltas);
            let value = format!(r#"{{"part{p}":{{"State":"UP"}}}}"#);
            juju.relations.get_mut(r).unwrap().1 = Some(value.clone());
            deltas.push(Delta::Partition {
                relation: *r,
                value: Some(value),
            });
        }
        Event::Broken { r } => {
            if juju.relations.remove(r).is_some() {
                deltas.push(Delta::Broken { relation: *r });
            }
        }
    }
    deltas
}

/// A store rebuilt from Juju's data alone, keeping what `previous` owned.
fn relist(juju: &Juju, previous: &Store) -> Store {
    let mut store = Store::default();
    for (r, (app, partition, units)) in &juju.relations {
        store.add_relation(*r, app, partition.clone(), units.clone());
    }
    store.keep_ownership_of(previous);
    store
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn applied_events_plan_as_a_relist_does(events in prop::collection::vec(event(), 1..25)) {
        let mut juju = Juju::default();
        let mut store = Store::default();
        for e in &events {
            for delta in step(&mut juju, e) {
                let bytes = store.clone().to_bytes();
                let mut file = StoreFile::parse(&bytes).unwrap();
                let head = file.head().unwrap();
                let predicted = file.unchanged(&head, &delta);
                let answer = store.apply(delta.clone());
                prop_assert!(answer != Change::UnknownRelation, "{:?}", delta);
                // the predicate never calls a change unchanged, and on the events it judges
                // (a unit's or an application's value) it knows every repeat
                prop_assert!(!predicted || answer == Change::None, "{:?}", delta);
                if matches!(delta, Delta::Node { .. } | Delta::Partition { .. }) {
                    prop_assert_eq!(predicted, answer == Change::None, "{:?}", delta);
                }
            }
            planned(&mut store);
            let incremental = plan(&settings(), &store);
            prop_assert!(incremental.owner_changes.is_empty());
            let rebuilt = relist(&juju, &store);
            prop_assert_eq!(plan(&settings(), &rebuilt), incremental, "after {:?}", e);
            let mut copy = store.clone();
            let back = Store::from_bytes(&copy.to_bytes()).unwrap();
            prop_assert_eq!(plan(&settings(), &back), plan(&settings(), &store));
        }
    }

    #[test]
    fn dropping_unused_records_keeps_exactly_the_named_ones(
        events in prop::collection::vec(event(), 1..25),
    ) {
        let mut juju = Juju::default();
        let mut store = Store::default();
        for e in &events {
            for delta in step(&mut juju, e) {
                store.apply(delta);
            }
            let named: BTreeSet<u32> = store
                .units()
                .filter_map(|(_, _, u)| match u.entry {
                    Entry::Record(id) => Some(id),
                    Entry::Rejected(_) => None,
                })
                .collect();
            let mut dropped = store.clone();
            dropped.drop_unused_records();
            let kept: BTreeSet<u32> = dropped.records.keys().copied().collect();
            let expected: BTreeSet<u32> = store
                .records
                .keys()
                .copied()
                .filter(|id| named.contains(id))
                .collect();
            prop_assert_eq!(&kept, &expected, "after {:?}", e);
            let gres: BTreeSet<u32> = dropped.records.values().map(|r| r.gres).collect();
            let kept_gres: BTreeSet<u32> = dropped.gres.keys().copied().collect();
            prop_assert_eq!(kept_gres, gres);
            let shapes: BTreeSet<u32> = dropped.records.values().map(|r| r.shape).collect();
            let kept_shapes: BTreeSet<u32> = dropped.shapes.keys().copied().collect();
            prop_assert_eq!(kept_shapes, shapes);
            // and the records kept are the records they were
            for id in &kept {
                prop_assert_eq!(dropped.records.get(id), store.records.get(id));
            }
            store = dropped;
        }
    }
}
