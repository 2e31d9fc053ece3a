//! Arbitrary values for every key an operator or a related application can set: each is
//! either refused by the charm (`parse_overrides` + `NodeConf::set` / `Partition::set` /
//! `SlurmConf::set_global`, the path relation data and config take) or, rendered by the
//! model, run by the real slurmctld of Slurm 22.05, 24.11 and 26.05. One slurm.conf per case
//! carries every accepted value (each partition and node value on its own line), so a case
//! costs one slurmctld start per version (about 0.2 s); when a version refuses it, each
//! accepted value is tried alone to name the culprit. Cases: `SLURM_VALUE_CASES` (default 24).
//!
//! Keys covered: every node and partition key the overrides accept, and every global key
//! whose rule is typed (integers, booleans, durations, `PreemptMode`, plugin names and plugin
//! lists, log levels, port ranges, flag words, exit codes, licenses, TRES weights). Besides
//! the shared shapes, each global key also gets values built from its own rule (`key_values`):
//! its flag words or plugin names, joined by commas, in changed case, with near misses,
//! duplicates and empty items. Global keys kept as text (paths, user names, hosts,
//! `*Parameters`: about 90) are not fed arbitrary values here; slurmctld resolves them against
//! the system at start, which no static rule can predict (docs/slurm-config.md says why for
//! each). Every plugin name the charm accepts is tried on its own in
//! `tests/slurm_plugin_values.rs`.

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use std::sync::OnceLock;

use oracle::Oracle;
use proptest::prelude::*;
use slurm_charms::slurm::keys::{NODE_KEYS, NODE_OWNED, PARTITION_KEYS, PARTITION_OWNED};
use slurm_charms::slurm::types::{GLOBAL_KEYS, ValueRule, global_rule};
use slurm_charms::slurm::*;

fn oracles() -> &'static [Oracle] {
    static ORACLES: OnceLock<Vec<Oracle>> = OnceLock::new();
    ORACLES.get_or_init(Oracle::all)
}

/// Every key the property feeds, with the override scope it is set through.
fn keys() -> Vec<(OverrideScope, &'static str)> {
    let mut out = Vec::new();
    for k in NODE_KEYS {
        if !NODE_OWNED.contains(&k) && k != "Procs" && k != "Feature" {
            out.push((OverrideScope::Node, k));
        }
    }
    for k in PARTITION_KEYS {
        if !PARTITION_OWNED.contains(&k) && k != "Shared" {
            out.push((OverrideScope::Partition, k));
        }
    }
    for (k, rule) in GLOBAL_KEYS {
        if *rule != ValueRule::Text && slurm_charms::slurm::keys::owned_global(k).is_none() {
            out.push((OverrideScope::SlurmConf, *k));
        }
    }
    out
}

/// Arbitrary values, weighted towards the shapes Slurm's parsers care about.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,10}",
        any::<u64>().prop_map(|n| n.to_string()),
        (0u64..70_000).prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "0",
            "1",
            "2",
            "65533",
            "65534",
            "65535",
            "65536",
            "4294967293",
            "4294967294",
            "4294967295",
            "4294967296",
            "18446744073709551613",
            "18446744073709551615",
            "-1",
            "-5",
            "1k",
            "0x10",
        ])
        .prop_map(str::to_string),
        "[0-9]{1,4}(-[0-9]{0,2})?(:[0-9]{1,2}){0,3}",
        prop::sample::select(vec![
            "YES",
            "no",
            "maybe",
            "UNLIMITED",
            "infinite",
            "FORCE:4",
            "YES:1",
            "EXCLUSIVE",
            "OFF",
            "SUSPEND",
            "GANG",
            "REQUEUE,GANG",
            "SUSPEND,GANG",
            "CR_Core",
            "CR_CPU",
            "UP",
            "DRAIN",
            "DOWN",
            "FUTURE",
            "CLOUD",
            "1hour",
            "2-",
            "n1",
            "ALL",
            "root",
            "normal",
        ])
        .prop_map(str::to_string),
    ]
}

/// Words a global key's own rule is built from (its flag words, `kind/name` plugins, exit
/// codes, license and TRES shapes), plus near misses; empty for other rules.
fn rule_words(key: &str) -> Vec<String> {
    let near = ["bogus", "none", "all", "", "Task", "X11", "cloud"];
    let mut out: Vec<String> = near.iter().map(|s| s.to_string()).collect();
    match global_rule(key).map(|(_, r)| r) {
        Some(ValueRule::Flags(list)) => out.extend(list.words.iter().map(|w| w.to_string())),
        Some(ValueRule::Plugin(kind) | ValueRule::PluginList(kind)) => {
            // Only plugins every root has: one Debian packages separately (ipmi, xcc) is
            // accepted by the charm and tried where installed by slurm_plugin_values.rs.
            out.extend(
                kind.names
                    .iter()
                    .map(|n| format!("{}/{n}", kind.kind))
                    .filter(|v| oracles().iter().all(|o| o.has_plugin(v))),
            );
            out.extend(["none", "lua", "tmpfs", "script"].map(|n| format!("{}/{n}", kind.kind)));
        }
        Some(ValueRule::ExitCodes) => {
            out.extend(["0", "1", "255", "256", "5-9", "9-5", "07", "-1"].map(String::from))
        }
        Some(ValueRule::Licenses) => out.extend(
            [
                "fluent",
                "fluent:4",
                "matlab:0",
                "x:-1",
                "lic:99999999999",
                "9a",
                "a:b",
            ]
            .map(String::from),
        ),
        Some(ValueRule::PriorityTresWeights) => out.extend(
            [
                "CPU=1",
                "Mem=2.5",
                "node=3K",
                "FS/Disk=1",
                "GRES/gpu=1",
                "Billing=x",
                "VMem=",
            ]
            .map(String::from),
        ),
        _ => return Vec::new(),
    }
    out
}

/// Values for `key`: the shared shapes, or (for a rule with words) 1..=4 of its words joined
/// by commas, each in its own, upper or lower case.
fn value_for(key: &str) -> BoxedStrategy<String> {
    let words = rule_words(key);
    if words.is_empty() {
        return value().boxed();
    }
    let word = (prop::sample::select(words), 0..4u8).prop_map(|(w, case)| match case {
        0 => w.to_ascii_uppercase(),
        1 => w.to_ascii_lowercase(),
        _ => w,
    });
    prop_oneof![
        1 => value(),
        4 => prop::collection::vec(word, 1..=4).prop_map(|ws| ws.join(",")),
    ]
    .boxed()
}

/// What the charm makes of one `key=value` through its override path: `None` when refused,
/// else the pairs it would set.
fn charm(scope: OverrideScope, key: &str, value: &str) -> Option<Vec<(String, String)>> {
    let pairs = parse_overrides(&format!("{key}={value}"), scope).ok()?;
    // The setters are the second half of the boundary (what relation data goes through).
    let mut conf = SlurmConf::new("c", "h");
    let mut node = Oracle::node("x1");
    let mut part = Partition::new("q".parse().unwrap());
    for (k, v) in &pairs {
        match scope {
            OverrideScope::SlurmConf => conf.set_global(k, v).ok()?,
            OverrideScope::Node => node.set(k, v).ok()?,
            OverrideScope::Partition => part.set(k, v).ok()?,
        }
    }
    Some(pairs)
}

/// The base cluster plus the accepted values: partition values on partitions `q<i>`, node
/// values on nodes `m<i>` (each in partition `p`), globals on their own lines.
fn model(inside: &str, accepted: &[(OverrideScope, Vec<(String, String)>)]) -> SlurmConf {
    let mut conf = Oracle::base_model(inside);
    for (i, (scope, pairs)) in accepted.iter().enumerate() {
        match scope {
            OverrideScope::SlurmConf => {
                for (k, v) in pairs {
                    conf.set_global(k, v).expect("accepted global");
                }
            }
            OverrideScope::Partition => {
                let mut p = Partition::new(format!("q{i}").parse().unwrap());
                p.nodes.insert("n1".parse().unwrap());
                for (k, v) in pairs {
                    p.set(k, v).expect("accepted partition value");
                }
                conf.partitions.push(p);
            }
            OverrideScope::Node => {
                let name = format!("m{i}");
                let mut n = Oracle::node(&name);
                for (k, v) in pairs {
                    n.set(k, v).expect("accepted node value");
                }
                if let Some(p) = conf.partitions.iter_mut().find(|p| p.name == "p") {
                    p.nodes.insert(name.parse().unwrap());
                }
                conf.nodes.push(n);
            }
        }
    }
    conf
}

fn cases() -> u32 {
    std::env::var("SLURM_VALUE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 0, ..ProptestConfig::default() })]

    #[test]
    fn every_value_is_refused_or_run_by_slurmctld(
        values in keys().into_iter().map(|(_, k)| value_for(k)).collect::<Vec<_>>()
    ) {
        let mut accepted = Vec::new();
        let mut globals = Vec::new();
        for ((scope, key), value) in keys().into_iter().zip(&values) {
            match (scope, charm(scope, key, value)) {
                (_, None) => {}
                (OverrideScope::SlurmConf, Some(_)) => globals.push(format!("{key}={value}")),
                (_, Some(pairs)) => accepted.push((scope, pairs)),
            }
        }
        // slurm-conf-parameters is one text: the charm judges its pairs together too
        // (FirstJobId <= MaxJobId, ...); refused together, none is set.
        if let Ok(pairs) = parse_overrides(&globals.join("\n"), OverrideScope::SlurmConf) {
            accepted.push((OverrideScope::SlurmConf, pairs));
        }
        let tried = accepted.iter().map(|(_, p)| p.len()).sum::<usize>();
        let refused = keys().len() - tried;
        // What the charm renders at all (cross-key checks at render, e.g. MaxNodeCount below
        // the node count, refuse the whole file: nothing is written).
        if render_slurm_conf(&model("/tmp/x", &accepted)).is_err() {
            eprintln!("case: refused at render");
            return Ok(());
        }
        for o in oracles() {
            let verdict = o.judge_model(|inside| model(inside, &accepted));
            if !verdict.is_up() {
                let culprits: Vec<String> = accepted
                    .iter()
                    .filter(|one| !o.judge_model(|inside| model(inside, std::slice::from_ref(*one))).is_up())
                    .map(|(_, pairs)| format!("{pairs:?}"))
                    .collect();
                prop_assert!(false, "Slurm {} refuses values the charm accepts: {:?}\n{:?}", o.version, culprits, verdict);
            }
        }
        eprintln!(
            "case: {} values, {refused} refused by the charm, {tried} accepted and run on {} versions",
            keys().len(),
            oracles().len()
        );
    }
}
