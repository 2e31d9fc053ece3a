//! The controller's plan from node groups (`src/charms/slurmctld/group_plan.rs`) against the
//! full plan (`desired::plan_with_owners`): after any change to the units of two related
//! applications (a node of another shape, new or configured, gone, back, renamed, claiming
//! another's name, a record that does not parse), whenever the plan from groups answers, its
//! files, applied record, fingerprints, status counts, owner changes and next groups equal the
//! full plan's from the same cache. The cache goes through its file form between hooks, as
//! in the charm, so "changed since read" is what a hook sees.

use proptest::prelude::*;
use slurm_charms::charms::slurmctld::cache::{Cache, CachedRelation, admit_partition};
use slurm_charms::charms::slurmctld::desired::{Plan, Settings, plan_with_owners};
use slurm_charms::charms::slurmctld::group_plan;
use slurm_charms::charms::slurmctld::refusal::fingerprints;
use slurm_charms::interface::AuthKind;
use slurm_charms::slurm::MemoSession;
use slurm_charms::slurm::types::NodeName;

/// The related applications: (application, relation id, node name prefix).
const APPS: [(&str, u32, &str); 2] = [("compute", 1, "c-"), ("gpu", 2, "g-")];

/// Units per application.
const UNITS: usize = 6;

fn settings() -> Settings {
    Settings {
        cluster_name: "lab".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: Ok(NodeName::try_from("ctl").unwrap()),
        auth: AuthKind::Munge,
    }
}

/// A unit's `node` value: its name, CPUs, GPUs (none, 2 T4, 2 A100, or 2 T4 shared as 8
/// shards) and `new_node`.
fn node(name: &str, cpus: u32, gpus: usize, new_node: bool) -> String {
    let (gres, records) = match gpus {
        0 => (String::new(), String::new()),
        3 => (
            r#","Gres":["gpu:tesla_t4:2","shard:8"]"#.to_string(),
            r#","gres":[{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]"},{"Name":"shard","File":"/dev/nvidia0","Count":"4"},{"Name":"shard","File":"/dev/nvidia1","Count":"4"}]"#.to_string(),
        ),
        g => {
            let model = ["", "tesla_t4", "a100"][g];
            (
                format!(r#","Gres":["gpu:{model}:2"]"#),
                format!(r#","gres":[{{"Name":"gpu","Type":"{model}","File":"/dev/nvidia[0-1]"}}]"#),
            )
        }
    };
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"{cpus}","RealMemory":"64000"{gres}}},"new_node":{new_node}{records}}}"#
    )
}

/// What one unit publishes in a step.
#[derive(Debug, Clone)]
enum Value {
    /// Its own name with this shape (CPUs index, GPUs) and `new_node`.
    Own(usize, usize, bool),
    /// Another unit's name (application index, unit), shape 0.
    Named(usize, usize),
    /// A value that does not parse.
    Bad,
    /// Nothing (the unit left).
    Gone,
}

fn value_of(app: usize, unit: usize, v: &Value) -> Option<String> {
    let name = |a: usize, u: usize| format!("{}{u}", APPS[a].2);
    match v {
        Value::Own(cpus, gpus, new_node) => Some(node(
            &name(app, unit),
            [32, 64, 96][*cpus],
            *gpus,
            *new_node,
        )),
        Value::Named(a, u) => Some(node(&name(*a, *u), 32, 0, false)),
        Value::Bad => Some("{not json".into()),
        Value::Gone => None,
    }
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        12 => (0..3usize, 0..4usize).prop_map(|(c, g)| Value::Own(c, g, false)),
        1 => (0..3usize, 0..4usize).prop_map(|(c, g)| Value::Own(c, g, true)),
        1 => (0..APPS.len(), 0..UNITS).prop_map(|(a, u)| Value::Named(a, u)),
        1 => Just(Value::Bad),
        1 => Just(Value::Gone),
    ]
}

/// Publishes `v` for unit `unit` of application `app`, as the controller's observe does (which
/// then drops the shapes no unit has: [`Cache::prune_shapes`]).
fn publish(cache: &mut Cache, app: usize, unit: usize, v: &Value) {
    let (name, id, _) = APPS[app];
    let key = format!("slurmd:{id}");
    let unit = format!("{name}/{unit}");
    let node = value_of(app, unit_number(&unit), v).map(|raw| cache.ingest_node(&raw));
    let Some(rel) = cache.relations.get_mut(&key) else {
        return;
    };
    match node {
        Some(mut node) => {
            let before = rel.units.get(&unit);
            node.owner = before.is_some_and(|b| b.owner && b.name == node.name.as_ref());
            rel.units.insert(unit, node);
        }
        None => rel.units.remove(&unit),
    }
}

fn unit_number(unit: &str) -> usize {
    unit.rsplit('/')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The cache of a first hook: both relations, every unit with a node of shape `initial`.
fn first_cache(initial: &[(usize, usize)]) -> Cache {
    let mut cache = Cache::default();
    for (name, id, _) in APPS {
        cache.relations.insert(
            format!("slurmd:{id}"),
            CachedRelation {
                endpoint: "slurmd".into(),
                id,
                app: name.into(),
                partition: Some(admit_partition(&format!(
                    r#"{{"{name}":{{"State":"UP"}}}}"#
                ))),
                ..Default::default()
            },
        );
    }
    for app in 0..APPS.len() {
        for unit in 0..UNITS {
            let (cpus, gpus) = initial[(app * UNITS + unit) % initial.len()];
            publish(&mut cache, app, unit, &Value::Own(cpus, gpus, false));
        }
    }
    cache
}

/// The full plan of `cache`.
fn full(cache: &Cache) -> Plan {
    plan_with_owners(
        &settings(),
        cache,
        cache.owners.clone(),
        MemoSession::new(cache.hostlists.clone()),
    )
}

/// The cache the hook persists after `plan` (as `plan::plan` makes it), through its file form.
fn persisted(mut cache: Cache, plan: &Plan) -> Cache {
    cache.owners = plan.owners.clone();
    cache.set_owners(&plan.owner_changes);
    cache.node_groups = plan
        .node_groups
        .clone()
        .filter(|_| plan.render_error.is_none());
    cache.prune_shapes();
    Cache::from_bytes(&cache.to_bytes()).expect("the cache reads back")
}

/// Whether the plan from groups answers for `cache`, and if so, that it equals the full one.
fn check(cache: &Cache, full: &Plan) -> Result<bool, TestCaseError> {
    let Some(fast) = group_plan::plan(&settings(), cache) else {
        return Ok(false);
    };
    prop_assert_eq!(&fast.slurm_conf, &full.slurm_conf);
    prop_assert_eq!(&fast.gres_conf, &full.gres_conf);
    prop_assert_eq!(&fast.render_error, &full.render_error);
    prop_assert_eq!(&fast.applied, &full.applied);
    prop_assert_eq!(fast.node_count, full.node_count);
    prop_assert_eq!(fast.gres_count, full.gres_count);
    prop_assert_eq!(&fast.owner_changes, &full.owner_changes);
    prop_assert_eq!(&fast.rejected, &full.rejected);
    prop_assert_eq!(&fast.waiting_apps, &full.waiting_apps);
    prop_assert_eq!(&fast.verdicts, &full.verdicts);
    prop_assert_eq!(&fast.default_missing, &full.default_missing);
    prop_assert_eq!(&fast.node_groups, &full.node_groups);
    let want = fingerprints(&full.nodes, &mut MemoSession::default());
    prop_assert_eq!(fast.fingerprints.as_ref(), Some(&want));
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_plan_from_groups_equals_the_full_plan(
        initial in proptest::collection::vec((0..3usize, 0..3usize), 1..4),
        steps in proptest::collection::vec(
            proptest::collection::vec((0..APPS.len(), 0..UNITS, value()), 1..3),
            1..14,
        ),
    ) {
        let first = first_cache(&initial);
        let plan = full(&first);
        let mut cache = persisted(first, &plan);
        for changes in steps {
            for (app, unit, v) in &changes {
                publish(&mut cache, *app, *unit, v);
            }
            cache.prune_shapes();
            let plan = full(&cache);
            check(&cache, &plan)?;
            cache = persisted(cache, &plan);
        }
    }
}

/// Runs `changes` after a first hook of `initial` and says whether the last hook was planned
/// from groups (checking it against the full plan).
fn planned_from_groups(initial: &[(usize, usize)], changes: &[&[(usize, usize, Value)]]) -> bool {
    let first = first_cache(initial);
    let plan = full(&first);
    let mut cache = persisted(first, &plan);
    let mut answered = false;
    for step in changes {
        for (app, unit, v) in step.iter() {
            publish(&mut cache, *app, *unit, v);
        }
        cache.prune_shapes();
        let plan = full(&cache);
        answered = check(&cache, &plan).expect("equal plans");
        cache = persisted(cache, &plan);
    }
    answered
}

#[test]
fn moves_between_groups_are_planned_from_them_and_nothing_else_is() {
    let two_shapes = [(0, 1), (1, 1)];
    let to_other = |unit| (0, unit, Value::Own(1 - unit % 2, 1, false));
    // unit 0 has shape (0, 1), unit 1 shape (1, 1): each moves to the other's group
    assert!(planned_from_groups(&two_shapes, &[&[to_other(0)]]));
    assert!(planned_from_groups(
        &two_shapes,
        &[&[to_other(0), to_other(3)]]
    ));
    // a GPU change to a shape no node of the relation has: a group of its own
    assert!(planned_from_groups(
        &two_shapes,
        &[&[(0, 0, Value::Own(2, 2, false))]]
    ));
    // the last node of a group leaves it: the group goes
    let one_alone = [(1, 1), (0, 1), (0, 1), (0, 1), (0, 1), (0, 1)];
    assert!(planned_from_groups(
        &one_alone,
        &[&[(0, 0, Value::Own(0, 1, false))]]
    ));
    // a node that brings GRES no other node has (GresTypes changes), and the last one that
    // had them leaving: the full plan
    assert!(!planned_from_groups(
        &two_shapes,
        &[&[(0, 0, Value::Own(0, 3, false))]]
    ));
    let mut one_shared = [(0, 1); 2 * UNITS];
    one_shared[0] = (1, 3);
    assert!(!planned_from_groups(
        &one_shared,
        &[&[(0, 0, Value::Own(0, 1, false))]]
    ));
    assert!(planned_from_groups(
        &one_shared,
        &[&[(0, 1, Value::Own(0, 3, false))]]
    ));
    // a new node, a rename, a unit gone, a bad record: the full plan
    for v in [
        Value::Own(0, 1, true),
        Value::Named(1, 5),
        Value::Gone,
        Value::Bad,
    ] {
        assert!(
            !planned_from_groups(&two_shapes, &[&[(0, 0, v.clone())]]),
            "{v:?}"
        );
    }
    // another node new (in DownNodes) while one moves: planned from groups
    assert!(planned_from_groups(
        &two_shapes,
        &[&[(0, 5, Value::Own(1, 1, true))], &[to_other(0)]],
    ));
    // other settings than those the groups were made with: the full plan
    let first = first_cache(&two_shapes);
    let plan = full(&first);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    let mut cache = persisted(first, &plan);
    let (app, unit, v) = to_other(0);
    publish(&mut cache, app, unit, &v);
    cache.prune_shapes();
    assert!(group_plan::plan(&settings(), &cache).is_some());
    let other = Settings {
        slurm_conf_parameters: "MaxJobCount=100".into(),
        ..settings()
    };
    assert!(group_plan::plan(&other, &cache).is_none());
    // groups damaged in the cache file (a wrong first name, a hostlist that does not read):
    // the full plan
    for damage in [("first", "g-9"), ("hostlist", "g-[")] {
        let mut damaged = cache.clone();
        let tables = damaged.node_groups.as_mut().unwrap();
        let other = tables
            .groups
            .iter_mut()
            .find(|g| g.relation == "slurmd:2")
            .unwrap();
        match damage.0 {
            "first" => other.first = damage.1.into(),
            _ => other.hostlist = damage.1.into(),
        }
        assert!(
            group_plan::plan(&settings(), &damaged).is_none(),
            "{damage:?}"
        );
    }
    // once the cluster is clean again, moves are planned from groups again
    assert!(planned_from_groups(
        &two_shapes,
        &[
            &[(0, 0, Value::Bad)],
            &[(0, 0, Value::Own(0, 1, false))],
            &[to_other(2)]
        ],
    ));
}
