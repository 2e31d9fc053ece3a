//! The cluster key in a Juju secret, through the simulator with the real charm binary:
//! - the controller's leader keeps the munge key in an application-owned secret granted to the
//!   slurmd relation; `cluster_info` names the secret, never the key; every node writes the
//!   same key 0400 munge:munge;
//! - `rotate-key` publishes a new revision: every node and the controller switch to it
//!   (restarting munge and slurmd on the nodes), and the old revision is removed once no unit
//!   tracks it;
//! - upgrade from charms that sent the key inline: `upgrade-charm` moves it into a secret, the
//!   old key leaves relation data, no daemon restarts;
//! - the key (raw or base64, old and new) appears nowhere the model captured: relation data,
//!   `juju-log`, hook stdout/stderr, hook-tool argv, statuses, action results, the scenario log.

#[path = "charm_support.rs"]
mod support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use std::os::unix::fs::MetadataExt;
use support::*;

const KEY: &str = "/etc/munge/munge.key";
const NODES: [&str; 3] = ["slurmd/0", "slurmd/1", "slurmd/2"];

fn key_of(c: &Cluster, unit: &str) -> Vec<u8> {
    c.bytes(unit, KEY)
        .unwrap_or_else(|| panic!("{unit} has no key"))
}

/// The controller's committed secrets: (label, latest, revisions still stored).
fn secrets(c: &Cluster) -> Vec<(Option<String>, u32, Vec<u32>)> {
    c.sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .map(|s| {
                (
                    s.label.clone(),
                    s.latest,
                    s.revisions.keys().copied().collect(),
                )
            })
            .collect()
    })
}

/// Everything the simulator captured, as one text: every bag of every relation, every hook's
/// stdout, stderr, tool argv and commit error, `juju-log`, status histories, the reports a
/// scenario log prints (status, relations, secrets metadata, each hook), and `actions`.
fn captured(c: &Cluster, actions: &[juju_sim::ActionResult]) -> String {
    use juju_sim::report;
    let mut all = String::new();
    c.sim.with_model(|m| {
        for r in m.relations.values() {
            all.push_str(&format!("{:?}\n{:?}\n", r.unit_bags, r.app_bags));
        }
    });
    for r in c.sim.records() {
        all.push_str(&r.stdout);
        all.push_str(&r.stderr);
        all.push_str(&format!("{:?} {:?}\n", r.calls, r.commit_error));
        all.push_str(&report::record(r, true));
    }
    for l in c.sim.logs() {
        all.push_str(&l.message);
        all.push('\n');
    }
    for app in ["slurmctld", "slurmd"] {
        for unit in c.sim.units(app) {
            all.push_str(&format!("{:?}\n", c.sim.unit_status_history(&unit)));
        }
    }
    for a in actions {
        all.push_str(&format!("{a:?}\n"));
        all.push_str(&report::action(a));
    }
    all.push_str(&report::status(&c.sim));
    all.push_str(&report::relations(&c.sim));
    all.push_str(&report::secrets(&c.sim));
    all
}

/// Fails if any window of the key, raw or in base64 at any alignment, is in `text`.
fn assert_no_key(text: &str, key: &[u8], which: &str) {
    assert!(text.len() > 1000, "suspiciously little captured output");
    let bytes = text.as_bytes();
    for start in [0, 100, 500, key.len() - 16] {
        let window = &key[start..start + 16];
        assert!(
            !bytes.windows(16).any(|w| w == window),
            "{which} key bytes {start}..+16 leaked"
        );
    }
    for shift in 0..3 {
        let b64 = STANDARD.encode(&key[shift..]);
        let needle = &b64[..24];
        assert!(
            !text.contains(needle),
            "{which} key leaked in base64 (shift {shift})"
        );
    }
    let hex: String = key[..12].iter().map(|b| format!("{b:02x}")).collect();
    assert!(!text.contains(&hex), "{which} key leaked in hex");
}

fn assert_keys_everywhere(c: &Cluster, expected: &[u8]) {
    for unit in NODES.iter().chain(&["slurmctld/0"]) {
        assert_eq!(key_of(c, unit), expected, "{unit}'s key");
        let meta = std::fs::metadata(c.root(unit).join("etc/munge/munge.key")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o400, "{unit}");
    }
}

#[test]
fn the_key_travels_in_a_secret_rotates_and_never_leaks() {
    let mut c = three_nodes();
    // configured nodes: their slurmd runs and is restarted with the new key
    configure(&mut c, &NODES);
    let rel = rel(&c);
    let old = key_of(&c, "slurmctld/0");
    assert_eq!(old.len(), 1024);
    assert_keys_everywhere(&c, &old);

    let info = c.sim.app_bag(rel, "slurmctld")["cluster_info"].clone();
    assert!(info.contains("\"munge_key_secret\":\"secret:"), "{info}");
    assert!(!info.contains("\"munge_key\""), "{info}");
    assert_eq!(
        secrets(&c),
        vec![(Some("cluster-key".to_owned()), 1, vec![1])]
    );
    // The content reached Juju through a file, never argv.
    let add = c
        .sim
        .records()
        .iter()
        .flat_map(|r| r.calls.iter())
        .find(|call| call.tool == "secret-add")
        .expect("the leader added the secret");
    assert!(add.args[0].starts_with("munge-key#file="), "{:?}", add.args);

    for unit in NODES {
        c.clear_commands(unit);
    }
    c.clear_commands("slurmctld/0");
    let rotated = c
        .sim
        .run_action("slurmctld/0", "rotate-key", json!({}))
        .unwrap();
    assert_eq!(rotated.status, "completed", "{rotated:?}");
    assert_eq!(rotated.results["revision"], json!("2"));
    c.assert_no_errors();

    let new = key_of(&c, "slurmctld/0");
    assert_ne!(new, old, "the controller switched");
    assert_keys_everywhere(&c, &new);
    for unit in NODES {
        let cmds = c.commands(unit);
        assert!(
            cmds.contains(&"systemctl restart munge".to_owned())
                && cmds
                    .iter()
                    .any(|l| l.starts_with("systemctl restart") && l.contains("slurmd")),
            "{unit}: {cmds:?}"
        );
    }
    assert!(
        c.commands("slurmctld/0")
            .contains(&"systemctl restart munge".to_owned())
    );
    // Revision 1 is gone once every unit moved to 2.
    assert_eq!(
        secrets(&c),
        vec![(Some("cluster-key".to_owned()), 2, vec![2])]
    );
    assert!(
        c.sim
            .records()
            .iter()
            .any(|r| r.unit == "slurmctld/0" && r.hook == "secret-remove"),
        "no secret-remove ran"
    );

    // Another action's output is captured too.
    let shown = c
        .sim
        .run_action("slurmctld/0", "show-current-config", json!({}))
        .unwrap();

    let text = captured(&c, &[rotated, shown]);
    assert_no_key(&text, &old, "old");
    assert_no_key(&text, &new, "new");
}

#[test]
fn upgrade_moves_an_inline_key_into_a_secret_without_restarts() {
    let mut c = three_nodes();
    let rel = rel(&c);
    let key = key_of(&c, "slurmctld/0");
    // Turn the model into what charms before secrets left: the key inline in cluster_info,
    // no secret.
    let inline = format!(
        r##"{{"munge_key":"{}","slurmctld_host":"{}","nhc_params":"#"}}"##,
        STANDARD.encode(&key),
        c.sim.app_bag(rel, "slurmctld")["cluster_info"]
            .split("\"slurmctld_host\":\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap()
    );
    c.sim.with_model_mut(|m| {
        let ids: Vec<_> = m.secrets.secrets.keys().cloned().collect();
        for id in ids {
            m.secrets.delete(&id);
        }
        if let Some(r) = m.relations.get_mut(&rel)
            && let Some(bag) = r.app_bags.get_mut("slurmctld")
        {
            bag.insert("cluster_info".into(), inline.clone());
        }
    });
    for unit in NODES.iter().chain(&["slurmctld/0"]) {
        c.clear_commands(unit);
    }
    c.sim.upgrade_charm("slurmctld", None).unwrap();
    c.sim.upgrade_charm("slurmd", None).unwrap();
    c.assert_no_errors();

    let info = c.sim.app_bag(rel, "slurmctld")["cluster_info"].clone();
    assert!(info.contains("\"munge_key_secret\":\"secret:"), "{info}");
    assert!(
        !info.contains("\"munge_key\""),
        "the old key is still in relation data: {info}"
    );
    assert_eq!(
        secrets(&c),
        vec![(Some("cluster-key".to_owned()), 1, vec![1])]
    );
    assert_keys_everywhere(&c, &key);
    for unit in NODES.iter().chain(&["slurmctld/0"]) {
        let restarts: Vec<String> = c
            .commands(unit)
            .into_iter()
            .filter(|l| l.contains("restart munge") || l.contains("restart slurmd"))
            .collect();
        assert!(restarts.is_empty(), "{unit} restarted: {restarts:?}");
    }
    // Every node read the key from the secret (it tracks revision 1).
    let readers = c.sim.with_model(|m| {
        let id = m.secrets.secrets.keys().next().cloned().unwrap();
        m.secrets.readers(&id)
    });
    for unit in NODES {
        assert!(
            readers.contains(&unit.to_owned()),
            "{unit} not a reader: {readers:?}"
        );
    }
}
