//! The cluster key in a Juju secret, through the simulator with the real charm binary:
//! - the controller's leader keeps the munge key in an application-owned secret granted to the
//!   slurmd relation; `cluster_info` names the secret, never the key; every node writes the
//!   same key 0400 munge:munge;
//! - `rotate-key` publishes a new revision: every node and the controller switch to it
//!   (restarting munge and slurmd on the nodes), and the old revision is removed once no unit
//!   tracks it; a node whose `secret-get --refresh` fails in `secret-changed` fails that hook
//!   (Juju keeps the event and retries it) and switches once the retry reads the new revision;
//! - upgrade from charms that sent the key inline: `upgrade-charm` moves it into a secret, the
//!   old key leaves relation data, no daemon restarts;
//! - the key (every revision; raw, base64 standard or URL-safe at any alignment, hex, a Rust byte
//!   list) appears nowhere the model captured: relation data of every relation, `juju-log`, hook
//!   and action stdout/stderr/environment, hook-tool argv, unit and application statuses and
//!   their histories, error texts, `state-set` data, action results and messages, secret
//!   metadata, the scenario log; nor in any file under the units' host roots but the key files
//!   themselves. Besides the quiet scenario, this is checked over failing, blocked and refused
//!   paths, auth/slurm on 24.11, and the upgrade from the inline key;
//! - the key files are munge.key 0400 munge:munge and slurm.key 0600 slurm:slurm (owners
//!   asserted where the test can give files away: root, with those users present).

#[path = "charm_support.rs"]
mod support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use slurm_charms::charms::slurmctld::store::{STORE_PATH, Store};
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

/// Everything the simulator captured, as one text: every bag of every relation (raw values and
/// the whole relation), every unit (status, status history, error text, `state-set` bag,
/// workload version) and application (status, status history, config), every hook's and
/// action's record (stdout, stderr, environment, tool argv, commit error), `juju-log` and the
/// hook output lines the model logs, every secret's metadata, grants and readers (the stored
/// content, where the key belongs, blanked), the reports a scenario log prints (status,
/// relations, secrets, each hook), and `actions`.
fn captured(c: &Cluster, actions: &[juju_sim::ActionResult]) -> String {
    use juju_sim::report;
    let mut all = String::new();
    c.sim.with_model(|m| {
        for r in m.relations.values() {
            for bag in r.app_bags.values().chain(r.unit_bags.values()) {
                for (k, v) in bag {
                    all.push_str(&format!("{k}={v}\n"));
                }
            }
            all.push_str(&format!("{r:?}\n"));
        }
        for u in m.units.values() {
            all.push_str(&u.status.message);
            all.push('\n');
            for s in &u.status_history {
                all.push_str(&s.message);
                all.push('\n');
            }
            all.push_str(u.error.as_deref().unwrap_or_default());
            all.push('\n');
            for (k, v) in &u.state {
                all.push_str(&format!("{k}={v}\n"));
            }
            all.push_str(&format!("{u:?}\n"));
        }
        for a in m.apps.values() {
            for s in a.status.iter().chain(&a.status_history) {
                all.push_str(&s.message);
                all.push('\n');
            }
            all.push_str(&format!("{:?} {:?}\n", a.config, a.status_history));
        }
        for l in &m.logs {
            all.push_str(&l.message);
            all.push('\n');
        }
        let mut store = m.secrets.clone();
        for s in store.secrets.values_mut() {
            for r in s.revisions.values_mut() {
                r.content.clear();
            }
        }
        all.push_str(&format!("{store:?}\n"));
    });
    for r in c.sim.records() {
        all.push_str(&r.stdout);
        all.push_str(&r.stderr);
        all.push_str(&format!("{r:?}\n"));
        all.push_str(&report::record(r, true));
    }
    for app in ["slurmctld", "slurmd"] {
        for unit in c.sim.units(app) {
            all.push_str(&format!("{:?}\n", c.sim.unit_status_history(&unit)));
        }
    }
    for a in actions {
        all.push_str(&a.message);
        all.push_str(&a.stdout);
        all.push_str(&a.stderr);
        all.push_str(&format!("{a:?}\n"));
        all.push_str(&report::action(a));
    }
    all.push_str(&report::status(&c.sim));
    all.push_str(&report::relations(&c.sim));
    all.push_str(&report::secrets(&c.sim));
    all
}

/// The first form of `key` found in `hay`: a 16-byte window raw; base64 (standard or URL-safe,
/// every alignment) of its start, middle or end; hex (lower or upper case); or Rust's `{:?}` of
/// the bytes (`[12, 200, ...`).
fn leaked_form(hay: &[u8], key: &[u8]) -> Option<String> {
    use base64::engine::general_purpose::URL_SAFE;
    let n = key.len();
    let starts = [0, n / 2, n - 16];
    for start in starts {
        let window = &key[start..start + 16];
        if hay.windows(16).any(|w| w == window) {
            return Some(format!("raw bytes {start}..+16"));
        }
    }
    let text = String::from_utf8_lossy(hay);
    let lowered = text.to_ascii_lowercase();
    for (name, engine) in [("base64", &STANDARD), ("url-safe base64", &URL_SAFE)] {
        for shift in 0..3 {
            let b64 = engine.encode(&key[shift..]);
            // 24 characters: 18 bytes, whole groups; the last needle stops before the padding.
            let end = (b64.len() - 4) / 4 * 4;
            for at in [0, (b64.len() / 8) * 4, end - 24] {
                if text.contains(&b64[at..at + 24]) {
                    return Some(format!("{name} (shift {shift}, at {at})"));
                }
            }
        }
    }
    for start in starts {
        let window = &key[start..start + 12];
        let lower: String = window.iter().map(|b| format!("{b:02x}")).collect();
        if lowered.contains(&lower) {
            return Some(format!("hex {start}..+12"));
        }
        let listed = format!("{:?}", &window[1..]);
        if text.contains(listed.trim_matches(['[', ']'])) {
            return Some(format!("a byte list {start}..+12"));
        }
    }
    None
}

/// Fails if `key` is in `text` in any form [`leaked_form`] knows.
fn assert_no_key(text: &str, key: &[u8], which: &str) {
    assert!(text.len() > 1000, "suspiciously little captured output");
    if let Some(form) = leaked_form(text.as_bytes(), key) {
        let at = text
            .lines()
            .find(|l| leaked_form(l.as_bytes(), key).is_some())
            .map(|l| l.chars().take(300).collect::<String>())
            .unwrap_or_default();
        panic!("the {which} key leaked ({form}) in: {at}");
    }
}

/// The detector finds the key in the one place it belongs (the secret's stored revisions, base64
/// as Juju keeps them): a grep that cannot see the key there would prove nothing elsewhere.
fn assert_detector_sees(c: &Cluster, key: &[u8]) {
    let store = c.sim.with_model(|m| format!("{:?}", m.secrets));
    assert!(
        leaked_form(store.as_bytes(), key).is_some(),
        "the detector does not find the key in the secret store"
    );
}

/// Every file under every unit's host root except the key files themselves: the charms' cache,
/// accepted copies, state records, rendered configs, `commands.log` (the argv of every command
/// the charms ran) and any temp file left behind.
fn assert_no_key_on_disk(c: &Cluster, key: &[u8], which: &str) {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&c.dir.path().join("units"), &mut files);
    let mut read = 0;
    for f in files {
        if f.ends_with("etc/munge/munge.key") || f.ends_with("etc/slurm/slurm.key") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        read += 1;
        if let Some(form) = leaked_form(&bytes, key) {
            panic!("the {which} key is in {} ({form})", f.display());
        }
    }
    assert!(read > 20, "only {read} files under the unit roots");
}

/// The numeric id `getent` (NSS's own view) gives a user or group, if it exists.
fn getent_id(db: &str, name: &str) -> Option<u32> {
    let out = std::process::Command::new("getent")
        .args([db, name])
        .output()
        .ok()?;
    String::from_utf8(out.stdout)
        .ok()?
        .split(':')
        .nth(2)?
        .trim()
        .parse()
        .ok()
}

/// A key file's mode and owner as the charm leaves it. The charms chown through NSS by name; under
/// a test root they go on when that fails (not root, or no such user), so the owner is asserted
/// where it can be given: when these tests run as root and `user`/`group` exist (the CI and dev
/// machines, which have the munge and slurm packages' users). Elsewhere the file must at least
/// not have been given to anyone else (it keeps the test's own ids).
fn assert_key_file(c: &Cluster, unit: &str, path: &str, mode: u32, user: &str, group: &str) {
    let full = c.root(unit).join(path.trim_start_matches('/'));
    let meta = std::fs::metadata(&full).unwrap_or_else(|e| panic!("{unit} {path}: {e}"));
    assert_eq!(
        meta.mode() & 0o7777,
        mode,
        "{unit} {path} mode {:o}",
        meta.mode()
    );
    let me = std::fs::metadata("/proc/self").unwrap();
    match (
        me.uid(),
        getent_id("passwd", user),
        getent_id("group", group),
    ) {
        (0, Some(uid), Some(gid)) => {
            assert_eq!(
                (meta.uid(), meta.gid()),
                (uid, gid),
                "{unit} {path} is not {user}:{group}"
            );
        }
        _ => {
            eprintln!("note: not root or no {user}:{group} here; {path}'s owner is not asserted");
            assert_eq!(
                (meta.uid(), meta.gid()),
                (me.uid(), me.gid()),
                "{unit} {path}"
            );
        }
    }
}

fn assert_keys_everywhere(c: &Cluster, expected: &[u8]) {
    for unit in NODES.iter().chain(&["slurmctld/0"]) {
        assert_eq!(key_of(c, unit), expected, "{unit}'s key");
        assert_key_file(c, unit, KEY, 0o400, "munge", "munge");
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
    assert_detector_sees(&c, &new);
    assert_no_key(&text, &old, "old");
    assert_no_key(&text, &new, "new");
    assert_no_key_on_disk(&c, &old, "old");
    assert_no_key_on_disk(&c, &new, "new");
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
    // ... and in the controller's cache of what it published (the old charms kept one too).
    let cache_file = c
        .root("slurmctld/0")
        .join(STORE_PATH.trim_start_matches('/'));
    let mut cache = Store::from_bytes(&std::fs::read(&cache_file).unwrap()).unwrap();
    for r in cache.relations.values_mut() {
        r.cluster_info_published = Some(inline.clone());
    }
    std::fs::write(&cache_file, cache.to_bytes()).unwrap();
    assert!(
        leaked_form(&std::fs::read(&cache_file).unwrap(), &key).is_some(),
        "the planted cache holds the inline key"
    );
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
    // The inline key left relation data; the upgrade put it nowhere else the model captured.
    assert_detector_sees(&c, &key);
    assert_no_key(&captured(&c, &[]), &key, "upgraded");
    assert_no_key_on_disk(&c, &key, "upgraded");
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

const SLURM_KEY: &str = "/etc/slurm/slurm.key";
const CONTROLLER: &str = "slurmctld/0";

fn set(c: &mut Cluster, app: &str, key: &str, value: &str) {
    c.sim
        .set_config(app, [(key.to_owned(), json!(value))].into())
        .unwrap();
}

fn assert_status(c: &Cluster, unit: &str, kind: &str, part: &str) {
    let (st, msg) = c.status(unit);
    assert!(st == kind && msg.contains(part), "{unit}: {st}: {msg}");
}

fn assert_none_in_error(c: &Cluster) {
    for app in ["slurmctld", "slurmd", "evil", "bad"] {
        for u in c.sim.units(app) {
            assert!(!c.sim.is_error(&u), "{u}: {:?}", c.sim.unit_status(&u));
        }
    }
}

fn marker(c: &Cluster, unit: &str, name: &str, text: &str) {
    std::fs::write(c.root(unit).join(name), text).unwrap();
}

fn unmark(c: &Cluster, unit: &str, name: &str) {
    std::fs::remove_file(c.root(unit).join(name)).unwrap();
}

/// The grep of the first test over the paths a quiet scenario never takes: a related application
/// with bad data, blocking controller and node config (`auth-type=kerberos`, `auth-type=slurm` on
/// 22.05, a bad `gpu-sharing`), a refused `scontrol reconfigure`, injected hook-tool failures
/// (`secret-grant` failing the leader's hook, `secret-set` failing `rotate-key`, `secret-get`
/// blocking a node in config-changed, `juju-log` failing so the buffered records go to stderr), a failing munge
/// restart putting a node in error, `juju resolve`, an upgrade to 24.11 with `auth-type=slurm`
/// (slurm.key everywhere), `rotate-key` refused under auth/slurm, and the way back to munge.
/// Every key the cluster ever had is looked for in everything captured and on every unit's disk.
#[test]
fn the_key_never_leaks_on_failing_blocked_auth_slurm_and_refused_paths() {
    let mut c = three_nodes();
    configure(&mut c, &NODES);
    let mut keys = vec![key_of(&c, CONTROLLER)];
    let mut actions = Vec::new();

    // Related applications with bad data: a partition Slurm refuses; a node record with CPUs out
    // of range. The leader's hook for the second relation fails in `secret-grant` first.
    c.deploy_inert("evil", 1);
    let evil = c.sim.integrate("evil", "slurmctld").unwrap();
    c.publish(
        evil,
        "evil",
        r#"{"evil":{"State":"SIDEWAYS"}}"#,
        "evil/0",
        r#"{"node_parameters":{"NodeName":"evil-0","CPUs":"8","RealMemory":"1000"},"new_node":true}"#,
    );
    assert_status(&c, CONTROLLER, "active", "SIDEWAYS");
    c.deploy_inert("bad", 1);
    c.sim.fail_next_tool_call(CONTROLLER, "secret-grant");
    let bad = c.sim.integrate("bad", "slurmctld").unwrap();
    assert!(
        c.sim.is_error(CONTROLLER),
        "the secret-grant failure failed the hook"
    );
    c.sim.resolve(CONTROLLER).unwrap();
    c.publish(
        bad,
        "bad",
        r#"{"bad":{"State":"UP"}}"#,
        "bad/0",
        r#"{"node_parameters":{"NodeName":"bad-0","CPUs":"70000","RealMemory":"1000"},"new_node":true}"#,
    );
    assert_status(&c, CONTROLLER, "active", "2 rejected (evil, bad/0)");
    assert_none_in_error(&c);

    // Blocking controller config, then auth/slurm on 22.05.
    set(&mut c, "slurmctld", "auth-type", "kerberos");
    assert_status(&c, CONTROLLER, "blocked", "kerberos");
    set(&mut c, "slurmctld", "auth-type", "slurm");
    assert_status(&c, CONTROLLER, "blocked", "needs Slurm 23.11.0");
    set(&mut c, "slurmctld", "auth-type", "munge");
    // Blocking node config.
    set(&mut c, "slurmd", "gpu-sharing", "shard:many");
    for u in NODES {
        assert_status(&c, u, "blocked", "gpu-sharing");
    }
    // ... and back, while one node cannot read the key secret (its error text is the status).
    c.sim.fail_next_tool_call("slurmd/1", "secret-get");
    set(&mut c, "slurmd", "gpu-sharing", "none");
    assert_status(&c, "slurmd/1", "blocked", "secret-get failed");
    c.sim.update_status(Some("slurmd")).unwrap();
    assert_status(&c, "slurmd/1", "active", "");
    // A refused reconfigure (the stand-in prints its error, which the status quotes).
    marker(
        &c,
        CONTROLLER,
        "fail-scontrol-reconfigure",
        "error: Unable to process configuration file",
    );
    set(
        &mut c,
        "slurmctld",
        "slurm-conf-parameters",
        "MaxJobCount=5000",
    );
    assert_status(&c, CONTROLLER, "blocked", "Unable to process");
    unmark(&c, CONTROLLER, "fail-scontrol-reconfigure");
    set(
        &mut c,
        "slurmctld",
        "slurm-conf-parameters",
        "MaxJobCount=6000",
    );
    assert_status(&c, CONTROLLER, "active", "3 nodes");

    // rotate-key whose secret-set fails: the action fails, nothing changes.
    c.sim.fail_next_tool_call(CONTROLLER, "secret-set");
    let failed = c
        .sim
        .run_action(CONTROLLER, "rotate-key", json!({}))
        .unwrap();
    assert_eq!(failed.status, "failed", "{failed:?}");
    assert!(failed.stderr.contains("secret-set failed"), "{failed:?}");
    actions.push(failed);
    assert_eq!(key_of(&c, CONTROLLER), keys[0]);

    // rotate-key while one node's munge restart fails (error), and juju-log fails on the
    // controller and on a node (their records go to stderr).
    marker(
        &c,
        "slurmd/2",
        "fail-systemctl-restart",
        "Job for munge.service failed",
    );
    c.sim.fail_next_tool_call(CONTROLLER, "juju-log");
    c.sim.fail_next_tool_call("slurmd/0", "juju-log");
    let rotated = c
        .sim
        .run_action(CONTROLLER, "rotate-key", json!({}))
        .unwrap();
    assert_eq!(rotated.status, "completed", "{rotated:?}");
    assert!(rotated.stderr.contains("juju-log failed"), "{rotated:?}");
    actions.push(rotated);
    assert!(c.sim.is_error("slurmd/2"));
    assert!(
        c.sim
            .records()
            .iter()
            .any(|r| r.unit == "slurmd/0" && r.stderr.contains("juju-log failed")),
        "slurmd/0's records did not go to stderr"
    );
    unmark(&c, "slurmd/2", "fail-systemctl-restart");
    c.sim.resolve("slurmd/2").unwrap();
    c.sim.update_status(None).unwrap();
    keys.push(key_of(&c, CONTROLLER));
    assert_ne!(keys[1], keys[0]);
    assert_keys_everywhere(&c, &keys[1]);
    for u in NODES {
        assert_status(&c, u, "active", "");
    }
    assert_none_in_error(&c);

    // auth/slurm after the package moved to 24.11: slurm.key on every unit, the same key.
    for u in NODES.iter().chain(&[CONTROLLER]) {
        marker(&c, u, "slurm-version.txt", "24.11.5");
    }
    c.sim.upgrade_charm("slurmctld", None).unwrap();
    c.sim.upgrade_charm("slurmd", None).unwrap();
    set(&mut c, "slurmctld", "auth-type", "slurm");
    assert!(c.slurm_conf().contains("AuthType=auth/slurm\n"));
    for u in NODES.iter().chain(&[CONTROLLER]) {
        assert_status(&c, u, "active", "");
        assert_eq!(c.bytes(u, SLURM_KEY).as_deref(), Some(&*keys[1]), "{u}");
        assert_key_file(&c, u, SLURM_KEY, 0o600, "slurm", "slurm");
        assert_key_file(&c, u, KEY, 0o400, "munge", "munge");
    }
    let refused = c
        .sim
        .run_action(CONTROLLER, "rotate-key", json!({}))
        .unwrap();
    assert_eq!(refused.status, "failed", "{refused:?}");
    assert!(refused.message.contains("auth-type=slurm"), "{refused:?}");
    actions.push(refused);
    let shown = c
        .sim
        .run_action(CONTROLLER, "show-current-config", json!({}))
        .unwrap();
    assert_eq!(shown.status, "completed", "{shown:?}");
    actions.push(shown);
    // Back to munge: the nodes drop slurm.key.
    set(&mut c, "slurmctld", "auth-type", "munge");
    for u in NODES {
        assert_eq!(c.bytes(u, SLURM_KEY), None, "{u}");
    }
    assert_keys_everywhere(&c, &keys[1]);
    assert_none_in_error(&c);

    let text = captured(&c, &actions);
    assert!(text.contains("injected by the simulator") && text.contains("SIDEWAYS"));
    assert_detector_sees(&c, &keys[1]);
    for (i, key) in keys.iter().enumerate() {
        let which = format!("revision {}", i + 1);
        assert_no_key(&text, key, &which);
        assert_no_key_on_disk(&c, key, &which);
    }
}

/// A node whose `secret-get --refresh` fails in `secret-changed` (the rotation's new revision
/// cannot be read: a transient agent or API error) fails that hook, so the event is not
/// consumed: Juju puts the unit in error and retries the hook (automatically, or with
/// `juju resolve`; the simulator's `resolve`), and the unit runs nothing else meanwhile. Before,
/// the hook exited 0 with a blocked status, the next update-status trusted the old key file and
/// showed active, and the node kept the old key (and revision 1 stayed stored) for good. Once the
/// read succeeds the node moves to the new key as in a normal rotation and revision 1 goes.
#[test]
fn a_failed_key_refresh_fails_the_hook_and_its_retry_moves_the_node_to_the_new_key() {
    let mut c = three_nodes();
    configure(&mut c, &NODES);
    let old = key_of(&c, CONTROLLER);
    for unit in NODES {
        c.clear_commands(unit);
    }
    c.sim.fail_next_tool_call("slurmd/1", "secret-get");
    let rotated = c
        .sim
        .run_action(CONTROLLER, "rotate-key", json!({}))
        .unwrap();
    assert_eq!(rotated.status, "completed", "{rotated:?}");
    let new = key_of(&c, CONTROLLER);
    assert_ne!(new, old, "the controller switched");
    for unit in ["slurmd/0", "slurmd/2"] {
        assert_eq!(key_of(&c, unit), new, "{unit}'s key");
        assert_status(&c, unit, "active", "");
    }

    // The failed read failed slurmd/1's secret-changed: Juju keeps the event.
    assert!(
        c.sim.is_error("slurmd/1"),
        "slurmd/1 consumed secret-changed without the new key: {:?}",
        c.sim.unit_status("slurmd/1")
    );
    let failed: Vec<_> = c.sim.records().iter().filter(|r| !r.succeeded()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        (failed[0].unit.as_str(), failed[0].hook.as_str()),
        ("slurmd/1", "secret-changed")
    );
    let id = c
        .sim
        .with_model(|m| m.secrets.secrets.keys().next().cloned().unwrap());
    for part in ["secret-get failed", "juju resolve", &id.to_string()] {
        assert!(
            failed[0].stderr.contains(part),
            "{part}: {}",
            failed[0].stderr
        );
    }
    assert_eq!(key_of(&c, "slurmd/1"), old);
    // slurmd/1 still tracks revision 1, so it is kept.
    assert_eq!(
        secrets(&c),
        vec![(Some("cluster-key".to_owned()), 2, vec![1, 2])]
    );
    // update-status waits behind the failed hook; it does not make the old key look current.
    c.sim.update_status(None).unwrap();
    assert!(c.sim.is_error("slurmd/1"));
    assert_eq!(key_of(&c, "slurmd/1"), old);

    // Juju retries the hook; the read succeeds now.
    c.sim.resolve("slurmd/1").unwrap();
    assert_none_in_error(&c);
    assert_keys_everywhere(&c, &new);
    let cmds = c.commands("slurmd/1");
    assert!(
        cmds.contains(&"systemctl restart munge".to_owned())
            && cmds
                .iter()
                .any(|l| l.starts_with("systemctl restart") && l.contains("slurmd")),
        "slurmd/1: {cmds:?}"
    );
    for unit in NODES {
        assert_status(&c, unit, "active", "");
    }
    // No unit tracks revision 1 any more: the leader removed it.
    assert_eq!(
        secrets(&c),
        vec![(Some("cluster-key".to_owned()), 2, vec![2])]
    );
    assert!(
        c.sim
            .records()
            .iter()
            .any(|r| r.unit == CONTROLLER && r.hook == "secret-remove"),
        "no secret-remove ran"
    );
    c.sim.update_status(None).unwrap();
    assert_keys_everywhere(&c, &new);
    for unit in NODES {
        assert_status(&c, unit, "active", "");
    }

    let text = captured(&c, &[rotated]);
    assert_no_key(&text, &old, "old");
    assert_no_key(&text, &new, "new");
}
