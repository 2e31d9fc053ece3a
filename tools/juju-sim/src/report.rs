//! Human-readable rendering of hook records, statuses, relation data and action results.

use crate::sim::{ActionResult, HookRecord, Simulator};
use std::fmt::Write as _;

/// One hook run: a header line and its tool calls (`verbose`: also its output).
pub fn record(r: &HookRecord, verbose: bool) -> String {
    let mut s = String::new();
    let code = match r.code {
        None => "skipped: no handler".to_owned(),
        Some(c) => format!("exit {c}"),
    };
    let kind = if r.action { "action " } else { "" };
    let remote = if r.remote_unit.is_empty() {
        String::new()
    } else {
        format!(" (remote {})", r.remote_unit)
    };
    let _ = writeln!(
        s,
        "  {} {kind}{}{remote}: {code}, {} tool calls, {:.1} ms",
        r.unit,
        r.hook,
        r.calls.len(),
        r.duration.as_secs_f64() * 1000.0
    );
    for c in &r.calls {
        let mark = if c.code == 0 {
            String::new()
        } else {
            format!("  -> exit {}", c.code)
        };
        let _ = writeln!(s, "      $ {} {}{mark}", c.tool, shell_join(&c.args));
    }
    if verbose || !r.succeeded() {
        for line in r.stdout.lines() {
            let _ = writeln!(s, "      stdout: {line}");
        }
        for line in r.stderr.lines() {
            let _ = writeln!(s, "      stderr: {line}");
        }
    }
    s
}

fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `juju status`-like table of applications and units.
pub fn status(sim: &Simulator) -> String {
    let mut s = String::new();
    sim.with_model(|m| {
        let _ = writeln!(s, "  App{:14}Status{:6}Message", "", "");
        for (name, app) in &m.apps {
            let st = app
                .status
                .clone()
                .unwrap_or_else(|| crate::model::Status::new("", "", 0));
            let _ = writeln!(s, "  {name:<17}{:<12}{}", st.status, st.message);
        }
        let _ = writeln!(
            s,
            "  Unit{:13}Workload{:4}Address{:6}Version{:3}Message",
            "", "", "", ""
        );
        for app in m.apps.values() {
            let mut units: Vec<&String> = app.units.iter().collect();
            units.sort_by_key(|u| crate::sim::unit_number(u));
            for u in units {
                let Some(unit) = m.units.get(u) else { continue };
                let leader = if app.leader.as_deref() == Some(u.as_str()) {
                    "*"
                } else {
                    ""
                };
                let (st, msg) = match &unit.error {
                    Some(e) => ("error".to_owned(), e.clone()),
                    None => (unit.status.status.clone(), unit.status.message.clone()),
                };
                let _ = writeln!(
                    s,
                    "  {:<17}{st:<12}{:<13}{:<10}{msg}",
                    format!("{u}{leader}"),
                    unit.address,
                    unit.workload_version
                );
            }
        }
    });
    s
}

/// Every relation's app and unit bags.
pub fn relations(sim: &Simulator) -> String {
    let mut s = String::new();
    sim.with_model(|m| {
        for rel in m.relations.values() {
            let _ = writeln!(
                s,
                "  relation {}: {}:{} <-> {}:{} ({})",
                rel.id,
                rel.sides[0].app,
                rel.sides[0].endpoint,
                rel.sides[1].app,
                rel.sides[1].endpoint,
                rel.interface
            );
            for (app, bag) in &rel.app_bags {
                let _ = writeln!(s, "    app {app}: {}", serde_json::json!(bag));
            }
            for (unit, bag) in &rel.unit_bags {
                let _ = writeln!(s, "    unit {unit}: {}", serde_json::json!(bag));
            }
        }
    });
    s
}

/// Every secret's metadata and readers, never its content (so a scenario log can be grepped
/// for leaked values).
pub fn secrets(sim: &Simulator) -> String {
    let mut s = String::new();
    sim.with_model(|m| {
        for sec in m.secrets.secrets.values() {
            let revisions: Vec<String> = sec.revisions.keys().map(u32::to_string).collect();
            let grants: Vec<String> = sec
                .grants
                .iter()
                .map(|(t, rel)| format!("{}@{rel}", t.tag()))
                .collect();
            let _ = writeln!(
                s,
                "  secret {} owner={:?} label={:?} latest={} revisions=[{}] grants=[{}]",
                sec.id,
                sec.owner,
                sec.label.as_deref().unwrap_or(""),
                sec.latest,
                revisions.join(","),
                grants.join(",")
            );
            for unit in m.secrets.readers(&sec.id) {
                if let Some(t) = m.secrets.tracking(&unit, &sec.id) {
                    let _ = writeln!(
                        s,
                        "    reader {unit}: current={} label={:?}",
                        t.current,
                        t.label.as_deref().unwrap_or("")
                    );
                }
            }
        }
    });
    s
}

/// An action's outcome like `juju run` prints it.
pub fn action(a: &ActionResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  action {} on {}: {}", a.name, a.unit, a.status);
    if !a.message.is_empty() {
        let _ = writeln!(s, "    message: {}", a.message);
    }
    for l in &a.logs {
        let _ = writeln!(s, "    log: {l}");
    }
    if let Ok(y) = serde_yaml::to_string(&a.results) {
        for line in y.lines().filter(|l| *l != "{}") {
            let _ = writeln!(s, "    {line}");
        }
    }
    s
}
