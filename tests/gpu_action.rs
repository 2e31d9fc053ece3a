//! The `detect-gpus` action result map.

#[path = "fixtures/gpu/support.rs"]
mod support;

use serde_json::Value;
use slurm_charms::gpu::action_results;
use support::{Fake, mig_minors_text};

/// Every dotted key path, checked against Juju's action key rule.
fn keys(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(map) = v {
        for (k, child) in map {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            keys(child, &path, out);
        }
    } else {
        out.push(prefix.to_owned());
    }
}

fn valid_segment(s: &str) -> bool {
    let b = s.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty() && ok(&b[0]) && ok(&b[b.len() - 1]) && b.iter().all(|c| ok(c) || *c == b'-')
}

fn assert_valid_keys(v: &Value) {
    let mut all = Vec::new();
    keys(v, "", &mut all);
    for k in &all {
        assert!(k.split('.').all(valid_segment), "bad action key {k}");
    }
    // every leaf is a string
    fn leaves(v: &Value) {
        match v {
            Value::Object(m) => m.values().for_each(leaves),
            Value::String(_) => {}
            other => panic!("non-string leaf {other}"),
        }
    }
    leaves(v);
}

#[test]
fn key_rule_itself_rejects_bad_keys() {
    assert!(valid_segment("gres-conf"));
    assert!(valid_segment("0"));
    assert!(!valid_segment("pci_bus_id"));
    assert!(!valid_segment("-a"));
    assert!(!valid_segment("A"));
}

#[test]
fn eight_h100_node() {
    let inv = Fake::fixture("h100_sxm_8x_nvswitch").detect();
    let v = action_results(&inv, "gpu-node-1");
    assert_valid_keys(&v);
    println!("{}", serde_json::to_string_pretty(&v).unwrap());
    assert_eq!(v["gpu-count"], "8");
    assert_eq!(v["driver-version"], "550.90.07");
    assert_eq!(v["cuda-version"], "12.4");
    assert_eq!(v["gres"], "gpu:nvidia_h100_80gb_hbm3:8");
    assert_eq!(v["gpus"]["3"]["model"], "NVIDIA H100 80GB HBM3");
    assert_eq!(v["gpus"]["3"]["slurm-type"], "nvidia_h100_80gb_hbm3");
    assert_eq!(v["gpus"]["3"]["device-file"], "/dev/nvidia3");
    assert_eq!(v["gpus"]["3"]["pci-bus-id"], "00000000:5D:00.0");
    assert_eq!(v["gpus"]["3"]["memory-mib"], "81559");
    assert_eq!(v["gpus"]["3"]["links"], "0,0,0,-1,0,0,0,0");
    let conf = v["gres-conf"].as_str().unwrap();
    assert_eq!(conf.lines().count(), 8);
    assert_eq!(
        conf.lines().next().unwrap(),
        "NodeName=gpu-node-1 Name=gpu Type=nvidia_h100_80gb_hbm3 File=/dev/nvidia0 \
         Cores=0-55,112-167 Links=-1,0,0,0,0,0,0,0"
    );
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .starts_with("8 NVIDIA GPUs detected")
    );
    assert!(v.get("findings").is_none());
}

#[test]
fn mig_node() {
    let fake = Fake::fixture("a100_mig");
    fake.write_host_file("proc/driver/nvidia-caps/mig-minors", &mig_minors_text(2));
    let v = action_results(&fake.detect(), "n1");
    assert_valid_keys(&v);
    assert_eq!(v["gpus"]["0"]["mig-mode"], "enabled");
    assert_eq!(v["gpus"]["0"]["mig"]["2"]["profile"], "1g.5gb");
    assert_eq!(
        v["gpus"]["0"]["mig"]["2"]["slurm-type"],
        "nvidia_a100_1g.5gb"
    );
    assert_eq!(v["gpus"]["0"]["mig"]["2"]["gpu-instance-id"], "9");
    assert_eq!(
        v["gres"],
        "gpu:nvidia_a100-sxm4-40gb:1,gpu:nvidia_a100_3g.20gb:1,gpu:nvidia_a100_2g.10gb:1,\
         gpu:nvidia_a100_1g.5gb:2"
    );
    assert!(v["gpus"]["1"].get("mig").is_none());
}

#[test]
fn no_gpus_is_a_readable_successful_result() {
    let v = action_results(&Fake::new("{}").detect(), "n1");
    assert_valid_keys(&v);
    assert_eq!(v["summary"], "no NVIDIA GPUs detected");
    assert_eq!(v["gpu-count"], "0");
    assert!(v.get("gres").is_none());
    assert!(v.get("gres-conf").is_none());
    assert!(v.get("gpus").is_none());
}

#[test]
fn findings_are_listed() {
    let v = action_results(&Fake::new(r#"{"init_error": 18}"#).detect(), "n1");
    assert_valid_keys(&v);
    assert!(
        v["findings"]["0"]
            .as_str()
            .unwrap()
            .contains("reboot required")
    );
}
