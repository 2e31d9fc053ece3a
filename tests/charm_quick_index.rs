//! The controller's quick index (`src/charms/slurmctld/index.rs`, issue 13): at a large number
//! of related units, a relation event whose data equals the cached record does not read the
//! relation cache's body, and calls a constant number of hook tools (the first reads, asked at
//! once, and no `status-set` when the status stays); every change, and every index that cannot
//! be trusted, still takes the full path. Which path a hook took is seen from outside: the
//! quick path leaves a cache whose body is garbage as it is, the full path finds it corrupt and
//! rebuilds it from every bag ([`quick`]). State in → state out, so it runs in CI in seconds.

mod common;

use common::changed;
use common::state::{State, controller, run};
use juju_runtime::{Event, RelationEvent, RelationId};
use juju_runtime_testing::bag;
use slurm_charms::charms::CharmKind;

const N: usize = 2000;
const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
const CACHE: &str = "/var/lib/slurm-charms/slurmctld/relation-cache.json";
const HEAD: &str = "/var/cache/slurm-charms/slurmctld/relation-index/head.json";
const BUCKETS: &str = "/var/cache/slurm-charms/slurmctld/relation-index/b/";

fn node_json(name: &str, cpus: u32) -> String {
    format!(
        r#"{{"node_parameters":{{"NodeName":"{name}","CPUs":"{cpus}","RealMemory":"8000"}},"new_node":false}}"#
    )
}

/// A controller related to `N` units, after one hook that built its cache and index.
fn settled() -> (State, RelationId) {
    let units: Vec<(String, String)> = (0..N)
        .map(|i| (format!("compute/{i}"), node_json(&format!("c{i}"), 4)))
        .collect();
    let units: Vec<(&str, &String)> = units.iter().map(|(u, n)| (u.as_str(), n)).collect();
    let (state, rel) = controller(&units);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    assert!(
        out.status
            .as_ref()
            .unwrap()
            .message
            .starts_with("2000 nodes"),
        "{:?}",
        out.status
    );
    (out, rel)
}

fn set_node(state: &mut State, unit: &str, raw: &str) {
    state.relations[0]
        .remote_units
        .insert(unit.into(), bag([("node", raw)]));
}

fn buckets(state: &State) -> usize {
    state
        .files
        .keys()
        .filter(|p| p.starts_with(BUCKETS))
        .count()
}

fn relation_gets(state: &State) -> usize {
    state.calls.iter().filter(|c| *c == "relation-get").count()
}

/// `state` with the relation cache's body replaced by garbage (its first line, with the hash,
/// kept): a hook that reads the body finds it corrupt and rebuilds the cache from every bag.
fn with_garbage_body(state: &State) -> (State, Vec<u8>) {
    let mut tampered = state.clone();
    let raw = tampered.files[CACHE].clone();
    let first = raw.iter().position(|b| *b == b'\n').unwrap();
    let mut garbage = raw[..=first].to_vec();
    garbage.extend(std::iter::repeat_n(b'#', raw.len() - first - 1));
    tampered.files.insert(CACHE.into(), garbage.clone());
    (tampered, garbage)
}

/// Whether `event` on `state` takes the quick path: it neither reads nor rewrites the cache
/// body, and asks for one bag.
fn quick(state: &State, event: Event) -> bool {
    let (tampered, garbage) = with_garbage_body(state);
    let out = run(CharmKind::Slurmctld, event, &tampered).unwrap();
    out.files[CACHE] == garbage && relation_gets(&out) == 1
}

#[test]
fn an_unchanged_event_reads_neither_the_cache_body_nor_config() {
    let (settled, rel) = settled();
    assert!(
        settled.files.contains_key(HEAD),
        "the index head is written"
    );
    assert_eq!(buckets(&settled), 128);
    // The cache's body is replaced by garbage, its first line (with the hash) kept: a hook that
    // read the body would find the hash wrong and rebuild the cache from every unit's bag.
    let (mut tampered, garbage) = with_garbage_body(&settled);
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1234")),
        &tampered,
    )
    .unwrap();
    // the first reads, asked at once (in any order), and no status-set: the status stays
    let mut calls = out.calls.clone();
    calls.sort();
    assert_eq!(calls, ["config-get", "is-leader", "relation-get"]);
    assert_eq!(
        out.files[CACHE], garbage,
        "the cache was neither read nor rewritten"
    );
    assert_eq!(out.status, settled.status, "the cached status again");
    assert_eq!(out.files[SLURM_CONF], settled.files[SLURM_CONF]);
    // The same tampered state without the index head: the body is read, found corrupt, and the
    // cache rebuilt from every bag (what the quick path avoids).
    tampered.files.remove(HEAD);
    let full = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/1234")),
        &tampered,
    )
    .unwrap();
    assert!(relation_gets(&full) > N, "{}", relation_gets(&full));
    assert_ne!(full.files[CACHE], garbage);
    assert!(full.files.contains_key(HEAD), "the index is written again");
    assert_eq!(full.files[SLURM_CONF], settled.files[SLURM_CONF]);
}

#[test]
fn a_changed_record_takes_the_full_path_even_when_changed_back() {
    let (mut state, rel) = settled();
    let event = || changed(&rel, "compute", Some("compute/7"));
    set_node(&mut state, "compute/7", &node_json("c7", 8));
    let out = run(CharmKind::Slurmctld, event(), &state).unwrap();
    assert!(out.text(SLURM_CONF).contains("NodeName=c7 CPUs=8 "));
    assert_eq!(
        relation_gets(&out),
        1,
        "the bag is read once: {:?}",
        out.calls
    );
    // The same data again: quick.
    assert!(quick(&out, event()));
    let again = run(CharmKind::Slurmctld, event(), &out).unwrap();
    // Back to the first value (which the index once recorded): rendered again.
    let mut back = again.clone();
    set_node(&mut back, "compute/7", &node_json("c7", 4));
    let back = run(CharmKind::Slurmctld, event(), &back).unwrap();
    assert!(!back.text(SLURM_CONF).contains("NodeName=c7 CPUs=8 "));
    assert_eq!(back.text(SLURM_CONF), state.text(SLURM_CONF));
}

#[test]
fn a_departed_unit_that_returns_with_the_same_data_is_enlisted_again() {
    let (mut state, rel) = settled();
    let node = state.relations[0].remote_units.remove("compute/5").unwrap();
    state.relations[0]
        .departed_units
        .insert("compute/5".into(), node.clone());
    let departed = Event::RelationDeparted(RelationEvent {
        relation: rel.clone(),
        remote_app: "compute".into(),
        remote_unit: Some("compute/5".into()),
        departing_unit: Some("compute/5".into()),
    });
    let out = run(CharmKind::Slurmctld, departed, &state).unwrap();
    assert!(
        out.status
            .as_ref()
            .unwrap()
            .message
            .starts_with("1999 nodes")
    );
    let mut back = out.clone();
    back.relations[0].departed_units.clear();
    back.relations[0]
        .remote_units
        .insert("compute/5".into(), node);
    let back = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/5")),
        &back,
    )
    .unwrap();
    assert!(
        back.status
            .as_ref()
            .unwrap()
            .message
            .starts_with("2000 nodes"),
        "{:?}",
        back.status
    );
}

#[test]
fn a_missing_or_wrong_bucket_falls_back_and_is_repaired() {
    let (mut state, rel) = settled();
    let event = |unit: &str| changed(&rel, "compute", Some(unit));
    // every bucket emptied of its units: each event takes the full path once, then is quick
    let paths: Vec<String> = state
        .files
        .keys()
        .filter(|p| p.starts_with(BUCKETS))
        .cloned()
        .collect();
    for p in &paths {
        state
            .files
            .insert(p.clone(), b"slurmctld-relation-index 1\n".to_vec());
    }
    assert!(
        !quick(&state, event("compute/42")),
        "an emptied bucket is not trusted"
    );
    let out = run(CharmKind::Slurmctld, event("compute/42"), &state).unwrap();
    assert_eq!(out.files[SLURM_CONF], state.files[SLURM_CONF]);
    assert!(quick(&out, event("compute/42")), "repaired");
    let again = run(CharmKind::Slurmctld, event("compute/42"), &out).unwrap();
    // a head written for another cache is not trusted
    let mut stale = again.clone();
    let head = String::from_utf8(stale.files[HEAD].clone()).unwrap();
    let hash = head.split("\"cache_hash\":\"").nth(1).unwrap()[..16].to_string();
    stale.files.insert(
        HEAD.into(),
        head.replace(&hash, "0000000000000000").into_bytes(),
    );
    assert!(
        !quick(&stale, event("compute/42")),
        "a stale head is not trusted"
    );
    let full = run(CharmKind::Slurmctld, event("compute/42"), &stale).unwrap();
    assert_eq!(
        full.files[HEAD], again.files[HEAD],
        "the head is written again"
    );
}

#[test]
fn a_bucket_older_than_its_head_is_not_trusted() {
    // A crash can leave an index file older than the head (they are written without fsync):
    // the head's hash of each bucket catches it.
    let (before, rel) = settled();
    let event = || changed(&rel, "compute", Some("compute/7"));
    let mut state = before.clone();
    set_node(&mut state, "compute/7", &node_json("c7", 8));
    let after = run(CharmKind::Slurmctld, event(), &state).unwrap();
    let moved: Vec<&String> = after
        .files
        .keys()
        .filter(|p| p.starts_with(BUCKETS) && after.files[*p] != before.files[*p])
        .collect();
    assert_eq!(moved.len(), 1, "one bucket changed: {moved:?}");
    let mut crashed = after.clone();
    crashed
        .files
        .insert(moved[0].clone(), before.files[moved[0]].clone());
    // the old bucket records the old value: the event bringing it back must render it
    set_node(&mut crashed, "compute/7", &node_json("c7", 4));
    assert!(!quick(&crashed, event()));
    let out = run(CharmKind::Slurmctld, event(), &crashed).unwrap();
    assert_eq!(out.text(SLURM_CONF), before.text(SLURM_CONF));
}

#[test]
fn a_file_where_the_index_belongs_is_replaced_and_never_fails_the_hook() {
    let (settled, rel) = settled();
    let event = || changed(&rel, "compute", Some("compute/3"));
    for junk in [
        "/var/cache/slurm-charms/slurmctld/relation-index",
        "/var/cache/slurm-charms/slurmctld/relation-index/b",
    ] {
        let mut state = settled.clone();
        state
            .files
            .retain(|p, _| !p.starts_with("/var/cache/slurm-charms/"));
        state.files.insert(junk.into(), b"junk".to_vec());
        let out = run(CharmKind::Slurmctld, event(), &state).unwrap();
        assert_eq!(out.status, settled.status);
        assert!(
            out.files.contains_key(HEAD),
            "{junk}: the index is written again"
        );
        assert_eq!(buckets(&out), 128, "{junk}");
        assert!(quick(&out, event()), "{junk}: quick again");
    }
    // an index that cannot be written at all (its parent is a file) leaves the quick path off,
    // and the hook succeeds
    let mut state = settled.clone();
    state
        .files
        .retain(|p, _| !p.starts_with("/var/cache/slurm-charms/"));
    state
        .files
        .insert("/var/cache/slurm-charms".into(), b"junk".to_vec());
    let out = run(CharmKind::Slurmctld, event(), &state).unwrap();
    assert_eq!(out.status, settled.status);
    assert!(!out.files.contains_key(HEAD));
    assert!(!quick(&out, event()), "no index, no quick path");
}

/// The relation cache and the index are written without `fsync`, the cache's header naming
/// the boot it was written in: a crash that could have lost the last hooks' writes is a new
/// boot, and a cache of another boot is rebuilt from every bag, by the quick path too (its
/// index, also unsynced, may agree with an older cache).
#[test]
fn a_cache_written_in_an_earlier_boot_is_rebuilt_from_every_bag() {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .expect("this test needs /proc/sys/kernel/random/boot_id (Linux)");
    let boot = boot.trim();
    let (settled, rel) = settled();
    let raw = settled.files[CACHE].clone();
    let first = raw.iter().position(|b| *b == b'\n').unwrap();
    let header = String::from_utf8(raw[..first].to_vec()).unwrap();
    assert!(
        header.contains(&format!(r#""boot":"{boot}""#)),
        "the header names this boot: {header}"
    );
    // The same state, as if the machine had restarted since: another boot in the header.
    let other = "00000000-0000-4000-8000-000000000000";
    assert_ne!(boot, other);
    let mut earlier = settled.clone();
    let mut tampered = header.replace(boot, other).into_bytes();
    tampered.extend_from_slice(&raw[first..]);
    earlier.files.insert(CACHE.into(), tampered);
    // An unchanged event, which takes the quick path in this boot (checked first) ...
    let event = || changed(&rel, "compute", Some("compute/1234"));
    assert!(quick(&settled, event()));
    // ... reads every bag when the cache is of another boot, and writes it again for this one.
    let out = run(CharmKind::Slurmctld, event(), &earlier).unwrap();
    assert!(relation_gets(&out) > N, "{}", relation_gets(&out));
    assert_eq!(out.files[SLURM_CONF], settled.files[SLURM_CONF]);
    let rewritten = String::from_utf8_lossy(&out.files[CACHE]);
    assert!(
        rewritten
            .lines()
            .next()
            .is_some_and(|h| h.contains(boot) && !h.contains(other)),
        "{}",
        rewritten.lines().next().unwrap_or_default()
    );
    assert!(
        out.status
            .as_ref()
            .unwrap()
            .message
            .starts_with("2000 nodes")
    );
}
