//! Plugin names, log levels and port ranges (`src/slurm/types/plugin.rs`) against the real
//! slurmctld of Slurm 22.05, 24.11 and 26.05: every value the charm accepts starts the
//! daemon on every version where its plugin is installed (Debian packages some plugins
//! separately; a value whose `.so` is missing from a root is listed, not tried), and the
//! charm's refusals are values a real daemon stops on.

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use oracle::{Oracle, Verdict};
use slurm_charms::slurm::keys::owned_global;
use slurm_charms::slurm::types::{GLOBAL_KEYS, LOG_LEVELS, ValueRule};
use slurm_charms::slurm::{OverrideScope, SlurmConf, parse_overrides};

/// Every (key, value) the plugin-name rules accept (each name of a list alone).
fn accepted_plugin_values() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (key, rule) in GLOBAL_KEYS {
        // Owned keys (AuthType, SelectType, ...) are set by the charm, not through
        // slurm-conf-parameters; their rules are checked in slurm_value_rules.rs.
        if owned_global(key).is_some() {
            continue;
        }
        if let ValueRule::Plugin(kind) | ValueRule::PluginList(kind) = rule {
            for name in kind.names {
                out.push((*key, format!("{}/{name}", kind.kind)));
            }
        }
    }
    out
}

/// The base cluster with `pairs` set through the charm's own `slurm-conf-parameters` path
/// (`parse_overrides`, cross-key rules included, then `set_global`). A preemption plugin gets
/// the `PreemptMode` Slurm requires with it.
fn judge(o: &Oracle, pairs: &[(&str, String)]) -> Verdict {
    let mut text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if pairs
        .iter()
        .any(|(k, v)| *k == "PreemptType" && v != "preempt/none")
    {
        text.push("PreemptMode=REQUEUE".into());
    }
    let text = text.join(" ");
    let accepted = parse_overrides(&text, OverrideScope::SlurmConf)
        .unwrap_or_else(|e| panic!("the charm refuses {text}: {e}"));
    o.judge_model(|inside| {
        let mut conf: SlurmConf = Oracle::base_model(inside);
        for (k, v) in &accepted {
            conf.set_global(k, v)
                .unwrap_or_else(|e| panic!("the charm refuses {k}={v}: {e}"));
        }
        conf
    })
}

/// Tries `pairs` together; when the daemon refuses them, each alone, so the failure names
/// the culprit.
fn assert_all_up(o: &Oracle, pairs: &[(&str, String)]) {
    if judge(o, pairs).is_up() {
        return;
    }
    for p in pairs {
        if let Verdict::Refused(log) = judge(o, std::slice::from_ref(p)) {
            panic!(
                "Slurm {} refuses {}={} which the charm accepts:\n{log}",
                o.version, p.0, p.1
            );
        }
    }
    panic!("Slurm {} refuses the values together: {pairs:?}", o.version);
}

#[test]
fn every_accepted_plugin_name_starts_every_slurm_that_has_it() {
    let values = accepted_plugin_values();
    assert!(values.len() >= 20, "plugin rules lost: {values:?}");
    for o in Oracle::all() {
        let (here, missing): (Vec<_>, Vec<_>) =
            values.iter().cloned().partition(|(_, v)| o.has_plugin(v));
        eprintln!(
            "Slurm {}: {} plugin values tried, not installed in this root (own Debian packages): {:?}",
            o.version,
            here.len(),
            missing.iter().map(|(_, v)| v).collect::<Vec<_>>()
        );
        // One file per round, each key at most once (a key set twice keeps the last value).
        let mut rounds: Vec<Vec<(&str, String)>> = Vec::new();
        for (key, value) in here {
            match rounds.iter_mut().find(|r| r.iter().all(|(k, _)| *k != key)) {
                Some(round) => round.push((key, value)),
                None => rounds.push(vec![(key, value)]),
            }
        }
        for round in &rounds {
            assert_all_up(&o, round);
        }
    }
}

#[test]
fn every_log_level_and_a_port_range_start_every_slurm() {
    let keys = [
        "SlurmctldDebug",
        "SlurmdDebug",
        "SlurmctldSyslogDebug",
        "SlurmdSyslogDebug",
    ];
    let mut levels: Vec<String> = LOG_LEVELS.iter().map(|s| s.to_uppercase()).collect();
    levels.extend((0..=9).map(|n| n.to_string()));
    for o in Oracle::all() {
        for (i, level) in levels.iter().enumerate() {
            let mut pairs: Vec<(&str, String)> = vec![(keys[i % keys.len()], level.clone())];
            if i == 0 {
                pairs.push(("SrunPortRange", "60001-63000".into()));
            }
            assert_all_up(&o, &pairs);
        }
    }
}

#[test]
fn what_the_plugin_rules_refuse_a_real_slurmctld_stops_on() {
    // Each refused by the charm, and by at least one real slurmctld. (`topology/tree` and
    // `accounting_storage/slurmdbd` are refused too, see plugin.rs; slurmctld keeps retrying
    // topology.conf or the slurmdbd longer than the oracle waits, so they are not tried here.)
    let cases = [
        ("SchedulerType", "sched/bakfill"),
        ("SchedulerType", "select/linear"),
        ("PriorityType", "multifactor"),
        ("SlurmctldDebug", "debug6"),
        ("SlurmdDebug", "verbos"),
        ("TopologyPlugin", "topology/3d_torus"),
        ("AcctGatherProfileType", "acct_gather_profile/hdf5"),
        ("AcctGatherEnergyType", "acct_gather_energy/gpu"),
        ("MCSPlugin", "mcs/group"),
        ("JobCompType", "jobcomp/script"),
    ];
    let oracles = Oracle::all();
    for (key, value) in cases {
        let mut conf = SlurmConf::new("c", "h");
        let e = conf
            .set_global(key, value)
            .expect_err("the charm must refuse it");
        assert!(e.to_string().contains(key), "{e}");
        if oracles.is_empty() {
            continue;
        }
        let refused_by: Vec<&str> = oracles
            .iter()
            .filter(|o| !o.judge_raw(&format!("{key}={value}"), "", "").is_up())
            .map(|o| o.version)
            .collect();
        assert!(
            !refused_by.is_empty(),
            "{key}={value} is refused by the charm but every Slurm starts on it"
        );
        eprintln!("{key}={value}: refused by the charm and by Slurm {refused_by:?}");
    }
}
