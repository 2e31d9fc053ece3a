//! `render-scale <node.json> <partition.json> <nodes> <iterations>`: the controller's whole
//! render path in one process, at scale. It builds one relation holding `<nodes>` copies of a
//! real `node` relation value (each with its own `NodeName`), then times
//! `slurmctld::desired::plan` (every cached record, already checked when it arrived: build and
//! render slurm.conf and gres.conf),
//! `parse_slurm_conf` + `parse_gres_conf` of the result, and the controller's relation cache
//! round trip (`Store::to_bytes` + `Store::from_bytes`, no disk), and prints one JSON line with the
//! medians, min/max, file sizes and the process's peak RSS (`VmHWM`).

use slurm_charms::charms::slurmctld::desired::{Settings, plan};
use slurm_charms::charms::slurmctld::store::{Delta, Store};
use slurm_charms::slurm::{parse_gres_conf, parse_slurm_conf};
use std::process::ExitCode;
use std::time::Instant;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let med = v[v.len() / 2];
    serde_json::json!({"median_ms": med, "min_ms": v[0], "max_ms": v[v.len() - 1], "n": v.len()})
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: render-scale <node.json> <partition.json> <nodes> <iterations>");
        return ExitCode::from(2);
    }
    let node_text = std::fs::read_to_string(&args[1]).unwrap();
    let partition = std::fs::read_to_string(&args[2]).unwrap();
    let n: usize = args[3].parse().unwrap();
    let iters: usize = args[4].parse().unwrap();
    let template: serde_json::Value = serde_json::from_str(&node_text).unwrap();
    // The store holds each record checked once, as the hook that received it left it.
    let mut cache = Store::default();
    cache.apply(Delta::RelationCreated {
        relation: 1,
        app: "slurmd".into(),
        partition: Some(partition.trim().to_string()),
    });
    for i in 0..n {
        let mut v = template.clone();
        v["node_parameters"]["NodeName"] = serde_json::json!(format!("gpu-{i}"));
        cache.apply(Delta::Node {
            relation: 1,
            unit: format!("slurmd/{i}"),
            value: Some(v.to_string()),
        });
    }
    let mut cache_ms = Vec::new();
    let mut cache_bytes = 0;
    for _ in 0..iters {
        let t = Instant::now();
        let raw = cache.to_bytes();
        let back = Store::from_bytes(&raw);
        cache_ms.push(t.elapsed().as_secs_f64() * 1e3);
        cache_bytes = raw.len();
        if back.is_err() {
            eprintln!("cache round trip failed");
            return ExitCode::from(1);
        }
    }
    let settings = Settings {
        cluster_name: "osd-cluster".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("slurmctld-0"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    };
    let mut plan_ms = Vec::new();
    let mut parse_ms = Vec::new();
    let mut sizes = (0, 0);
    let mut accepted = 0;
    for _ in 0..iters {
        let t = Instant::now();
        let p = plan(&settings, &cache);
        plan_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let (Some(slurm), Some(gres)) = (p.slurm_conf.as_deref(), p.gres_conf.as_deref()) else {
            eprintln!(
                "render failed: {:?} {:?}",
                p.render_error,
                p.rejected.first()
            );
            return ExitCode::from(1);
        };
        accepted = p.node_count;
        sizes = (slurm.len(), gres.len());
        let t = Instant::now();
        let a = parse_slurm_conf(slurm, "slurm.conf").map(|c| c.nodes.len());
        let b = parse_gres_conf(gres, "gres.conf").map(|c| c.nodes.len());
        parse_ms.push(t.elapsed().as_secs_f64() * 1e3);
        if a.is_err() || b.is_err() {
            eprintln!("parse failed: {a:?} {b:?}");
            return ExitCode::from(1);
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "nodes": n,
            "accepted": accepted,
            "plan": stats(plan_ms),
            "parse": stats(parse_ms),
            "cache_round_trip": stats(cache_ms),
            "cache_bytes": cache_bytes,
            "slurm_conf_bytes": sizes.0,
            "gres_conf_bytes": sizes.1,
            "peak_rss_kib": peak_rss_kib(),
        })
    );
    ExitCode::SUCCESS
}
