//! The body of the `relation_ingest` fuzz target: what other applications write into relation
//! data, through the readers the charms use for it. Shared by the cargo-fuzz target
//! (`fuzz/fuzz_targets/relation_ingest.rs`, nightly) and `tests/fuzz_corpus.rs`, which runs it
//! over the committed corpus under plain `cargo test`. Included with `#[path]`.
//!
//! The first byte picks the reader, the rest (UTF-8; relation data is text) is the value:
//!
//! | byte % 4 | key | reader |
//! | --- | --- | --- |
//! | 0 | `node` (slurmd unit → controller) | the controller's ingest ([`Store::ingest`]) and plan |
//! | 1 | `partition` (slurmd app → controller) | [`admit_partition`] and the controller's plan |
//! | 2 | `cluster_info` (controller app → slurmd) | [`ClusterInfo::from_relation_value`] |
//! | 3 | `verdicts` (controller app → slurmd) | [`Verdicts::from_relation_value`] |
//!
//! Oracle, besides no panic: an accepted record serialises to a value that reads back equal
//! (and the same bytes again); its stored parts read back equal; what it renders holds no line
//! break; a plan with it next to valid nodes renders files that parse back, with its node (or
//! partition) in them as the record says, and every valid node in them; a refused one is named
//! in the plan with a bounded reason, alone. Panics (assertions) are the fuzzer's findings.
#![allow(dead_code)]

use slurm_charms::charms::slurmctld::desired::{Plan, Settings, plan};
use slurm_charms::charms::slurmctld::store::{
    Entry, MAX_REASON_LEN, NewRecord, Store, admit_partition,
};
use slurm_charms::interface::{
    ClusterInfo, MAX_RECORD_LEN, NodeRecord, PartitionRecord, RecordsMemo, Verdicts,
    join_shape_parts,
};
use slurm_charms::slurm::types::NodeName;
use slurm_charms::slurm::{parse_gres_conf, parse_slurm_conf};

/// Which reader an input went to, and whether it accepted the value (the corpus test checks
/// that the committed corpus reaches every reader both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reached {
    /// `node`, through the controller's ingest.
    Node(bool),
    /// `partition`, through the controller's plan.
    Partition(bool),
    /// `cluster_info`, as slurmd (and the controller itself) reads it.
    ClusterInfo(bool),
    /// `verdicts`, as slurmd reads it (never refused: a bad value reads as none).
    Verdicts(bool),
    /// Not UTF-8, or empty: Juju relation data is text, so nothing reads it.
    Nothing,
}

/// Runs one input (see the module doc); panics when a property fails.
pub fn relation_ingest(data: &[u8]) -> Reached {
    let Some((&which, rest)) = data.split_first() else {
        return Reached::Nothing;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return Reached::Nothing;
    };
    match which % 4 {
        0 => Reached::Node(node(text)),
        1 => Reached::Partition(partition(text)),
        2 => Reached::ClusterInfo(cluster_info(text)),
        _ => Reached::Verdicts(verdicts(text)),
    }
}

/// The valid neighbours' node names (one taken name, one that sorts before most).
const NEIGHBOURS: [&str; 2] = ["gpu-0", "gpu_node_1"];

/// A valid `node` value for `name` with two T4s, as the slurmd charm publishes it.
fn neighbour(name: &str) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"8","RealMemory":"31848","Gres":["gpu:tesla_t4:2"]}},"new_node":false,"gres":[{{"Name":"gpu","Type":"tesla_t4","File":"/dev/nvidia[0-1]","Cores":"0-3"}}]}}"#
    )
}

/// The controller's settings (as `tests/hostile_unit_support.rs`).
fn settings() -> Settings {
    Settings {
        cluster_name: "fuzz".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        default_memory: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
    }
}

const VALID_PARTITION: &str = r#"{"compute":{"State":"UP"}}"#;

/// One relation `compute` with the valid neighbours (`compute/0`, `compute/1`) and the unit
/// `compute/9` publishing `node`, the application publishing `partition`; planned.
fn cluster(partition: &str, node: &str) -> (Store, Plan) {
    let mut store = Store::default();
    let mut units: Vec<(String, String)> = NEIGHBOURS
        .iter()
        .enumerate()
        .map(|(i, n)| (format!("compute/{i}"), neighbour(n)))
        .collect();
    units.push(("compute/9".to_string(), node.to_string()));
    store.add_relation(1, "compute", Some(admit_partition(partition)), units);
    let p = plan(&settings(), &store);
    (store, p)
}

/// The files of `plan` parse back; their node names.
fn parsed_nodes(plan: &Plan, input: &str) -> (slurm_charms::slurm::SlurmConf, Vec<String>) {
    assert_eq!(plan.render_error, None, "input: {input:?}");
    let slurm_conf = plan.slurm_conf.as_deref().unwrap_or_default();
    let gres_conf = plan.gres_conf.as_deref().unwrap_or_default();
    let conf = parse_slurm_conf(slurm_conf, "slurm.conf")
        .unwrap_or_else(|e| panic!("rendered slurm.conf does not parse: {e}\n{slurm_conf}"));
    if let Err(e) = parse_gres_conf(gres_conf, "gres.conf") {
        panic!("rendered gres.conf does not parse: {e}\n{gres_conf}");
    }
    let names = conf.nodes.iter().map(|n| n.name.to_string()).collect();
    (conf, names)
}

fn assert_one_line(what: &str, text: &str) {
    assert!(
        !text.contains(['\n', '\r', '\0']),
        "{what} holds a line break: {text:?}"
    );
}

fn assert_bounded(why: &str) {
    assert!(!why.is_empty(), "empty refusal");
    // `bounded` keeps MAX_REASON_LEN bytes and appends "… (<n> bytes)".
    assert!(why.len() <= MAX_REASON_LEN + 32, "unbounded refusal: {why}");
}

/// `node`: the controller's ingest, and the record's own round trips.
fn node(raw: &str) -> bool {
    let mut store = Store::default();
    let unit = store.ingest(raw);
    let parsed = NodeRecord::from_relation_value(raw);
    let record = match (&unit.entry, parsed) {
        (Entry::Record(id), Ok(record)) => {
            assert!(
                raw.len() <= MAX_RECORD_LEN,
                "{}-byte value accepted",
                raw.len()
            );
            assert_eq!(unit.name, record.node_name().as_str());
            assert_eq!(unit.new_node, record.new_node());
            let stored = store.record(*id).expect("the ingested record is stored");
            let new = NewRecord::of(&record);
            assert_eq!(
                (stored.shape, stored.record.real_memory, &stored.gres.lines),
                (&new.shape, new.real_memory, &new.gres.lines)
            );
            record
        }
        (Entry::Rejected(why), parsed) => {
            assert_bounded(why);
            assert!(
                parsed.is_err() || raw.len() > MAX_RECORD_LEN,
                "the ingest refused what the record parser accepts: {why}"
            );
            check_node_plan(raw, None);
            return false;
        }
        (Entry::Record(_), Err(e)) => panic!("the ingest accepted what the parser refuses: {e}"),
    };
    // Serialised, it reads back equal, and serialises to the same bytes again.
    let value = record.to_relation_value();
    let back = NodeRecord::from_relation_value(&value)
        .unwrap_or_else(|e| panic!("re-serialised record refused: {e}\n{value}"));
    assert_eq!(back, record, "{value}");
    assert_eq!(back.to_relation_value(), value);
    // Stored as shape parts (what the store file keeps), it reads back equal, both ways.
    let (line, list) = record.to_shape_parts();
    let mut memo = RecordsMemo::default();
    let from_parts = NodeRecord::from_shape_parts_memo(&line, list.as_deref(), &mut memo)
        .unwrap_or_else(|e| panic!("shape parts refused: {e}\n{line}\n{list:?}"));
    assert_eq!(from_parts, record);
    let joined = join_shape_parts(&line, list.as_deref());
    assert_eq!(
        NodeRecord::from_relation_value(&joined).ok(),
        Some(record.clone())
    );
    // What it renders is one line each (a line break would inject slurm.conf lines).
    let new = NewRecord::of(&record);
    let mut line = String::new();
    slurm_charms::slurm::node_lines::push_node_lines(
        &mut line,
        false,
        [new.shape.line("n", new.real_memory)],
    );
    assert_one_line("node line", line.strip_suffix('\n').unwrap_or(&line));
    assert_one_line("Gres value", &new.gres.value);
    for l in &new.gres.lines {
        assert_one_line("gres.conf record", l);
    }
    check_node_plan(raw, Some(&record));
    true
}

/// The plan with the `node` value next to the valid neighbours: files parse back, every
/// neighbour is in them; an accepted record's node is in them as the record says (unless a
/// neighbour has its name), a refused one is named, alone.
fn check_node_plan(raw: &str, record: Option<&NodeRecord>) {
    let (store, plan) = cluster(VALID_PARTITION, raw);
    let (conf, names) = parsed_nodes(&plan, raw);
    for n in NEIGHBOURS {
        assert!(
            names.iter().any(|x| x == n),
            "neighbour {n} missing; input: {raw:?}"
        );
    }
    let unit = store.relations[&1]
        .units
        .get("compute/9")
        .expect("compute/9 stored");
    match record {
        None => {
            assert!(matches!(unit.entry, Entry::Rejected(_)));
            assert!(
                plan.rejected.iter().any(|(u, _)| u == "compute/9"),
                "{:?}",
                plan.rejected
            );
            assert!(plan.problems().contains("compute/9"));
            assert!(
                plan.rejected.iter().all(|(u, _)| u == "compute/9"),
                "{:?}",
                plan.rejected
            );
            assert_eq!(names.len(), NEIGHBOURS.len());
            let verdict = plan.verdicts.get(&1).and_then(|v| v.0.get("compute/9"));
            assert!(verdict.is_some(), "no verdict for the refused unit");
        }
        Some(record) => {
            let name = record.node_name().as_str();
            if NEIGHBOURS.contains(&name) {
                assert_eq!(names.len(), NEIGHBOURS.len());
                assert!(plan.rejected.iter().any(|(u, _)| u == "compute/9"));
                return;
            }
            assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
            assert_eq!(names.len(), NEIGHBOURS.len() + 1, "input: {raw:?}");
            let node = conf.nodes.iter().find(|n| n.name.as_str() == name);
            let node = node.unwrap_or_else(|| panic!("accepted node {name} not rendered"));
            let want = record.node();
            assert_eq!(
                (
                    &node.gres,
                    node.cpus,
                    node.real_memory,
                    &node.features,
                    &node.extra
                ),
                (
                    &want.gres,
                    want.cpus,
                    want.real_memory,
                    &want.features,
                    &want.extra
                ),
                "rendered node differs from its record; input: {raw:?}"
            );
        }
    }
}

/// `partition`: the controller's plan over it, and the record's round trip.
fn partition(raw: &str) -> bool {
    let (_, plan) = cluster(raw, &neighbour("gpu-7"));
    let parsed = PartitionRecord::from_relation_value(raw);
    let accepted = raw.len() <= MAX_RECORD_LEN && parsed.is_ok();
    let refused_app = plan.rejected.iter().any(|(who, _)| who == "compute");
    for (_, why) in &plan.rejected {
        assert_bounded(why);
    }
    let slurm_conf = plan.slurm_conf.as_deref().unwrap_or_default();
    let (conf, names) = parsed_nodes(&plan, raw);
    let Ok(record) = parsed else {
        assert!(
            refused_app,
            "refused partition not named: {:?}",
            plan.rejected
        );
        assert!(
            names.is_empty(),
            "nodes of a refused partition rendered: {names:?}"
        );
        return false;
    };
    if !accepted {
        assert!(
            refused_app,
            "oversized partition not named: {:?}",
            plan.rejected
        );
        return false;
    }
    let value = record.to_relation_value();
    let back = PartitionRecord::from_relation_value(&value)
        .unwrap_or_else(|e| panic!("re-serialised partition refused: {e}\n{value}"));
    assert_eq!(back, record, "{value}");
    assert_eq!(back.to_relation_value(), value);
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    assert_eq!(
        names.len(),
        NEIGHBOURS.len() + 1,
        "input: {raw:?}\n{slurm_conf}"
    );
    let name = record.name();
    let part = conf.partitions.iter().find(|p| &p.name == name);
    let part = part.unwrap_or_else(|| panic!("partition {name} not rendered\n{slurm_conf}"));
    let want = record.partition();
    assert_eq!(
        (&part.state, &part.extra),
        (&want.state, &want.extra),
        "rendered partition differs from its record\n{slurm_conf}"
    );
    true
}

/// `cluster_info`, as slurmd reads it.
fn cluster_info(raw: &str) -> bool {
    let Ok(info) = ClusterInfo::from_relation_value(raw) else {
        return false;
    };
    let value = info.to_relation_value();
    let back = ClusterInfo::from_relation_value(&value)
        .unwrap_or_else(|e| panic!("re-serialised cluster_info refused: {e}\n{value}"));
    assert_eq!(back, info, "{value}");
    assert_eq!(back.to_relation_value(), value);
    // `--conf-server` goes on slurmd's command line (a systemd drop-in): one token.
    let server = info.conf_server();
    assert!(
        !server.is_empty() && !server.contains(|c: char| c.is_whitespace() || c.is_control()),
        "conf-server {server:?}"
    );
    true
}

/// `verdicts`, as slurmd reads it: never an error; a value it reads publishes back to the
/// same verdicts (reasons already cut), and a second round changes nothing.
fn verdicts(raw: &str) -> bool {
    let v = Verdicts::from_relation_value(raw);
    let value = v.to_relation_value();
    let once = Verdicts::from_relation_value(&value);
    assert_eq!(
        once.0.keys().collect::<Vec<_>>(),
        v.0.keys().collect::<Vec<_>>()
    );
    for why in once.0.values() {
        assert!(why.chars().count() <= slurm_charms::interface::verdicts::MAX_VERDICT_REASON);
    }
    assert_eq!(once.to_relation_value(), value);
    !v.0.is_empty()
}
