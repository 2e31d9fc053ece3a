//! Issue 41: every alert rule the charms ship passes `promtool check rules`, as shipped and as
//! published over `cos-agent` (Juju topology added), and every alert has `promtool test rules`
//! cases that fire it and that show it silent on healthy data (`tests/promtool/*.test.yaml`).
//! Needs `promtool` (Debian's `prometheus` package): without it the tests print a loud
//! `SKIPPED` banner, or fail under `E2E_REQUIRED=1` (`.ci/run`).

#[path = "common/required.rs"]
mod required;

use std::path::{Path, PathBuf};
use std::process::Command;

use slurm_charms::charms::CharmKind;
use slurm_charms::charms::cos::{Topology, alert_rules, charm_name, rule_files};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn promtool(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("promtool"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        required::skip(test, "promtool", "apt-get install prometheus");
    }
    found
}

fn run(promtool: &Path, args: &[&str]) -> String {
    let out = Command::new(promtool)
        .args(args)
        .current_dir(repo())
        .output()
        .expect("promtool runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "promtool {args:?} failed:\n{text}");
    text
}

#[test]
fn shipped_rules_pass_promtool_check() {
    let Some(promtool) = promtool("shipped_rules_pass_promtool_check") else {
        return;
    };
    for kind in [CharmKind::Slurmd, CharmKind::Slurmctld] {
        for (path, _) in rule_files(kind) {
            let out = run(&promtool, &["check", "rules", path]);
            assert!(out.contains("SUCCESS"), "{out}");
        }
    }
}

/// The rules as the subordinate receives them (group names and `juju_*` labels added) are
/// valid rule files too.
#[test]
fn published_rules_pass_promtool_check() {
    let Some(promtool) = promtool("published_rules_pass_promtool_check") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for kind in [CharmKind::Slurmd, CharmKind::Slurmctld] {
        let topology = Topology {
            model: "hpc".into(),
            model_uuid: "6f5e3f2a-1b2c-4d3e-8f90-0123456789ab".into(),
            application: "app".into(),
            unit: "app/0".into(),
            charm_name: charm_name(kind).into(),
        };
        let rules = alert_rules(rule_files(kind), &topology).unwrap();
        // JSON is YAML: promtool reads it as a rule file.
        let file = dir.path().join(format!("{}.rules.json", charm_name(kind)));
        std::fs::write(&file, rules.to_string()).unwrap();
        let out = run(&promtool, &["check", "rules", file.to_str().unwrap()]);
        assert!(out.contains("SUCCESS"), "{out}");
    }
}

/// Every alert of every shipped rule file is named in a test that expects it firing
/// (`exp_alerts` with labels) and in one that expects it silent (`exp_alerts: []`); then
/// `promtool test rules` runs them all.
#[test]
fn every_alert_fires_and_stays_silent_in_promtool_tests() {
    let tests_dir = repo().join("tests/promtool");
    let mut tests: Vec<PathBuf> = std::fs::read_dir(&tests_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.yaml"))
        .collect();
    tests.sort();
    let texts: Vec<String> = tests
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for kind in [CharmKind::Slurmd, CharmKind::Slurmctld] {
        for (path, text) in rule_files(kind) {
            let doc: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
            for group in doc["groups"].as_sequence().unwrap() {
                for rule in group["rules"].as_sequence().unwrap() {
                    let alert = rule["alert"].as_str().unwrap();
                    let (fires, silent) = coverage(&texts, alert);
                    assert!(fires, "{path}: no promtool test fires {alert}");
                    assert!(silent, "{path}: no promtool test shows {alert} silent");
                }
            }
        }
    }
    let Some(promtool) = promtool("every_alert_fires_and_stays_silent_in_promtool_tests") else {
        return;
    };
    let mut args = vec!["test", "rules"];
    let names: Vec<String> = tests
        .iter()
        .map(|p| p.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    args.extend(names.iter().map(String::as_str));
    let out = run(&promtool, &args);
    assert!(!out.contains("FAILED"), "{out}");
}

/// Whether some `alert_rule_test` entry for `alert` expects alerts, and some expects none.
fn coverage(texts: &[String], alert: &str) -> (bool, bool) {
    let (mut fires, mut silent) = (false, false);
    for text in texts {
        let doc: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        for test in doc["tests"].as_sequence().into_iter().flatten() {
            for case in test["alert_rule_test"].as_sequence().into_iter().flatten() {
                if case["alertname"].as_str() != Some(alert) {
                    continue;
                }
                match case["exp_alerts"].as_sequence() {
                    Some(s) if s.is_empty() => silent = true,
                    Some(_) => fires = true,
                    None => silent = true,
                }
            }
        }
    }
    (fires, silent)
}

/// The drain-class XID alert names exactly the XIDs the charm's catalog drains for
/// (`src/gpu/xid.rs`): the alert and the drain tell one story.
#[test]
fn the_xid_alert_names_the_drain_class() {
    let rules = include_str!("../src/cos/slurmd/prometheus_alert_rules/gpu.rules.yaml");
    let listed: std::collections::BTreeSet<u32> = rules
        .split("xid=~\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the XID alert's selector")
        .split('|')
        .map(|x| x.parse().expect("an XID number"))
        .collect();
    let drain: std::collections::BTreeSet<u32> = slurm_charms::gpu::XID_CATALOG
        .iter()
        .filter(|(_, class, _)| *class == slurm_charms::gpu::XidClass::Drain)
        .map(|(xid, _, _)| *xid)
        .collect();
    assert_eq!(listed, drain);
}
