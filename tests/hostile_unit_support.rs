//! Shared by `tests/hostile_unit.rs` (proptest) and `tests/slurm_acceptance.rs` (real
//! slurmctld): a cluster of valid slurmd units plus one unit publishing an arbitrary `node`
//! record, fed through the controller's ingest ([`Store::apply`]) and plan
//! ([`plan`]) exactly as the charm does. Included with `#[path]`.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use slurm_charms::charms::slurmctld::desired::{Plan, Settings, plan};
use slurm_charms::charms::slurmctld::store::Store;

/// The valid units' node names.
pub fn valid_names(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 3 {
            0 => format!("gpu-{i}"),
            1 => format!("gpu_node_{i}"),
            _ => format!("Node{i}.lab"),
        })
        .collect()
}

/// A valid `node` record: `gpus` T4s, as the slurmd charm publishes it.
pub fn valid_record(name: &str, gpus: u32, new_node: bool) -> Value {
    let mut params = json!({
        "NodeName": name, "CPUs": "8", "Boards": "1", "SocketsPerBoard": "1",
        "CoresPerSocket": "4", "ThreadsPerCore": "2", "RealMemory": "31848",
        "MemSpecLimit": "1024",
    });
    let mut rec = json!({"node_parameters": {}, "new_node": new_node});
    if gpus > 0 {
        params["Gres"] = json!([format!("gpu:tesla_t4:{gpus}")]);
        let file = if gpus == 1 {
            "/dev/nvidia0".to_string()
        } else {
            format!("/dev/nvidia[0-{}]", gpus - 1)
        };
        rec["gres"] = json!([{"Name": "gpu", "Type": "tesla_t4", "File": file, "Cores": "0-3"}]);
    }
    rec["node_parameters"] = params;
    rec
}

/// Strings a hostile or careless unit might send: anything at all, Slurm-looking tokens, and
/// injection attempts.
pub fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,24}",
        "[A-Za-z0-9_.:,=/#\\[\\]\\- -]{0,20}",
        prop::sample::select(vec![
            "",
            "gpu-0",
            "ALL",
            "-x",
            "evil-",
            "a b",
            "x\nNodeName=evil",
            "/dev/../etc/shadow",
            "/dev/nvidia[0-99999999]",
            "gpu:tesla_t4:2",
            "gpu:tesla_t4:0",
            "4294967296",
            "-1,-1",
            "0-3",
            "tesla_t4",
            "/dev/nvidia0,/dev/nvidia0",
            "1 State=DOWN",
            "#",
        ])
        .prop_map(String::from),
    ]
}

/// Any JSON value (bounded depth and size).
pub fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(any_string(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Replaces every string in `v` by one drawn from `strings` (in order, cycling).
fn replace_strings(v: &mut Value, strings: &[String], at: &mut usize) {
    match v {
        Value::String(s) if !strings.is_empty() => {
            *s = strings[*at % strings.len()].clone();
            *at += 1;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_strings(x, strings, at)),
        Value::Object(o) => o.values_mut().for_each(|x| replace_strings(x, strings, at)),
        _ => {}
    }
}

/// One arbitrary record: any JSON at all, a valid record with arbitrary strings in every
/// field, or a valid record with one field replaced by arbitrary JSON.
pub fn hostile_record() -> impl Strategy<Value = String> {
    prop_oneof![
        any_json().prop_map(|v| v.to_string()),
        ".{0,80}",
        (0u32..3, prop::collection::vec(any_string(), 1..20)).prop_map(|(gpus, strings)| {
            let mut rec = valid_record("h", gpus, false);
            replace_strings(&mut rec, &strings, &mut 0);
            rec.to_string()
        }),
        (0u32..3, any_string(), any_json()).prop_map(|(gpus, key, value)| {
            let mut rec = valid_record("hostile-1", gpus, false);
            let keys = [
                "NodeName",
                "CPUs",
                "RealMemory",
                "Gres",
                "Weight",
                "Features",
            ];
            let k = keys[key.len() % keys.len()];
            rec["node_parameters"][k] = value;
            rec.to_string()
        }),
    ]
}

/// The controller's settings for these tests.
pub fn settings() -> Settings {
    Settings {
        cluster_name: "hostile".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("ctl-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    }
}

/// Ingests `valid` units (`compute/<i>`) and the hostile unit (`compute/99`) into a fresh
/// cache, as the controller does, and plans the files.
pub fn cluster_with(valid: usize, hostile: &str) -> (Store, Plan) {
    let mut cache = Store::default();
    let mut units = Vec::new();
    for (i, name) in valid_names(valid).iter().enumerate() {
        let raw = valid_record(name, (i % 3) as u32, i % 2 == 0).to_string();
        units.push((format!("compute/{i}"), raw));
    }
    units.push(("compute/99".to_string(), hostile.to_string()));
    cache.add_relation(
        1,
        "compute",
        Some(r#"{"compute":{"State":"UP"}}"#.into()),
        units,
    );
    let p = plan(&settings(), &cache);
    (cache, p)
}
