//! Scale measurements through the simulator (ignored by default; run in release):
//!
//! ```sh
//! cargo test --release --test charm_bench -- --ignored --nocapture
//! ```
//!
//! Reports the hook-tool calls of one controller `slurmd-relation-changed` at 10, 100 and 1,000
//! related units (must not grow with N), and the total time and per-hook median to enlist
//! 1,000 slurmd units (integrate → settled, every node in slurm.conf).

mod common;

#[path = "charm_support.rs"]
mod support;

use juju_sim::{Hook, SimOptions};
use std::time::{Duration, Instant};
use support::{Cluster, TWO_T4};

fn quiet() -> SimOptions {
    SimOptions {
        record_env: false,
        keep_logs: false,
        ..SimOptions::default()
    }
}

fn cluster(n: u32) -> Cluster {
    let mut c = Cluster::with_options(quiet());
    for i in 0..n {
        c.set_gpus(&format!("slurmd/{i}"), TWO_T4);
    }
    c.deploy_slurmctld();
    c.deploy_slurmd("slurmd", n);
    c
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Tool calls of one controller relation-changed for `slurmd/0` in a settled cluster.
fn calls_per_changed(c: &mut Cluster) -> (usize, Vec<String>, Duration) {
    let rel = c.sim.relation_id("slurmd", "slurmctld").unwrap();
    c.sim.clear_records();
    c.sim.queue_hook(
        "slurmctld/0",
        Hook::RelationChanged(rel, Some("slurmd/0".into())),
    );
    c.sim.settle().unwrap();
    let r = &c.sim.records()[0];
    assert!(r.succeeded(), "{}", r.stderr);
    let tools = r.calls.iter().map(|t| t.tool.clone()).collect();
    (r.calls.len(), tools, r.duration)
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn hook_tool_calls_do_not_grow_with_units() {
    for n in [10u32, 100, 1000] {
        let mut c = cluster(n);
        c.sim.integrate("slurmd", "slurmctld").unwrap();
        c.assert_no_errors();
        let nodes = c.slurm_conf().matches("slurmd-").count();
        assert!(nodes >= 1, "no nodes rendered");
        let (count, tools, took) = calls_per_changed(&mut c);
        println!(
            "controller slurmd-relation-changed at {n:>4} units: {count} hook-tool calls {tools:?}, {:.1} ms",
            took.as_secs_f64() * 1e3
        );
        assert!(count <= 6, "{tools:?}");
    }
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn enlist_1000_units() {
    // CHARM_BENCH_UNITS overrides the unit count (quick checks).
    let n: u32 = std::env::var("CHARM_BENCH_UNITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let t0 = Instant::now();
    let mut c = cluster(n);
    let deployed = t0.elapsed();
    let deploy_hooks: Vec<Duration> = c.sim.records().iter().map(|r| r.duration).collect();
    c.sim.clear_records();
    let t1 = Instant::now();
    c.sim.integrate("slurmd", "slurmctld").unwrap();
    let enlisted = t1.elapsed();
    c.assert_no_errors();
    let records = c.sim.records();
    let all: Vec<Duration> = records.iter().map(|r| r.duration).collect();
    let ctl: Vec<Duration> = records
        .iter()
        .filter(|r| r.unit == "slurmctld/0")
        .map(|r| r.duration)
        .collect();
    let node: Vec<Duration> = records
        .iter()
        .filter(|r| r.unit != "slurmctld/0")
        .map(|r| r.duration)
        .collect();
    let gres_lines = c
        .gres_conf()
        .lines()
        .filter(|l| l.starts_with("NodeName="))
        .count();
    let restarts = c
        .commands("slurmctld/0")
        .iter()
        .filter(|l| *l == "systemctl restart slurmctld")
        .count();
    println!(
        "deploy {n} slurmd units + slurmctld: {:.1} s, {} hooks, median {:.1} ms",
        deployed.as_secs_f64(),
        deploy_hooks.len(),
        median(deploy_hooks).as_secs_f64() * 1e3
    );
    let in_hooks: Duration = all.iter().sum();
    let mut slow: Vec<(Duration, String)> = records
        .iter()
        .map(|r| (r.duration, format!("{} {}", r.unit, r.hook)))
        .collect();
    slow.sort();
    let p90 = slow
        .get(slow.len() * 9 / 10)
        .map(|s| s.0)
        .unwrap_or_default();
    println!(
        "hook p90 {:.1} ms; slowest: {:?}",
        p90.as_secs_f64() * 1e3,
        slow.iter().rev().take(3).collect::<Vec<_>>()
    );
    println!(
        "enlist: {:.1} s of it inside hook processes, {:.1} s in the simulator",
        in_hooks.as_secs_f64(),
        (enlisted.saturating_sub(in_hooks)).as_secs_f64()
    );
    println!(
        "enlist (integrate -> settled): {:.1} s, {} hooks, median {:.1} ms/hook \
         (controller {} hooks, median {:.1} ms, max {:.1} ms; slurmd {} hooks, median {:.1} ms)",
        enlisted.as_secs_f64(),
        all.len(),
        median(all).as_secs_f64() * 1e3,
        ctl.len(),
        median(ctl.clone()).as_secs_f64() * 1e3,
        ctl.iter().max().copied().unwrap_or_default().as_secs_f64() * 1e3,
        node.len(),
        median(node).as_secs_f64() * 1e3,
    );
    println!(
        "slurm.conf {} bytes, gres.conf {} bytes ({gres_lines} node lines), slurmctld restarts {restarts}",
        c.slurm_conf().len(),
        c.gres_conf().len()
    );
    assert!(
        c.status("slurmctld/0")
            .1
            .starts_with(&format!("{n} nodes, {} GPUs", 2 * n))
    );
}

/// The controller's in-process work per hook at N nodes: cache read, plan (parse and validate
/// every record, render both files), cache write.
#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn controller_work_per_hook() {
    use slurm_charms::charms::slurmctld::desired::{Settings, plan};
    use slurm_charms::charms::slurmctld::store::{Delta, Store};
    let settings = Settings {
        cluster_name: "c".into(),
        default_partition: String::new(),
        slurm_conf_parameters: String::new(),
        hostname: slurm_charms::slurm::types::NodeName::try_from("ctl"),
        auth: Default::default(),
        health_check: Ok(Default::default()),
        openmetrics: false,
        controllers: Default::default(),
        default_memory: Ok(Default::default()),
    };
    for n in [1000usize, 10_000] {
        let mut cache = Store::default();
        cache.apply(Delta::RelationCreated {
            relation: 1,
            app: "gpu".into(),
            partition: Some(r#"{"gpu":{"State":"UP"}}"#.into()),
        });
        for i in 0..n {
            cache.apply(Delta::Node {
                relation: 1,
                unit: format!("gpu/{i}"),
                value: Some(format!(
                    r#"{{"node_parameters":{{"NodeName":"gpu-{i:05}","CPUs":"224","Boards":"1","SocketsPerBoard":"2","CoresPerSocket":"56","ThreadsPerCore":"2","RealMemory":"2063937","Gres":["gpu:nvidia_h100_80gb_hbm3:8"],"MemSpecLimit":"1024"}},"new_node":{},"gres":[{{"Name":"gpu","Type":"nvidia_h100_80gb_hbm3","File":"/dev/nvidia[0-7]","Cores":"0-55,112-167"}}]}}"#,
                    i % 10 == 0
                )),
            });
        }
        let bytes = cache.to_bytes();
        let mut times = [Duration::ZERO; 4];
        let runs = 5;
        for _ in 0..runs {
            let t = Instant::now();
            let mut c = Store::from_bytes(&bytes).unwrap();
            times[0] += t.elapsed();
            let t = Instant::now();
            let p = plan(&settings, &c);
            times[1] += t.elapsed();
            assert_eq!(p.node_count, n);
            assert!(p.render_error.is_none(), "{:?}", p.render_error);
            let t = Instant::now();
            let out = c.to_bytes();
            times[2] += t.elapsed();
            assert_eq!(out.len(), bytes.len());
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(runs);
        println!(
            "{n:>6} nodes: cache read {:.1} ms, plan (validate + render) {:.1} ms, cache write {:.1} ms; cache {} KiB",
            ms(times[0]),
            ms(times[1]),
            ms(times[2]),
            bytes.len() / 1024
        );
    }
}

/// Time inside the charm for one controller `slurmd-relation-changed` at N units (8 GPUs
/// each), in process: the in-memory backend stands in for the hook tools (so their time is
/// excluded) and a recording runner for external commands. The first hook builds the cache;
/// the median of the following ones is reported.
#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn controller_hook_in_process() {
    use common::RecordingRunner;
    use juju_runtime::{Event, HookContext, RelationEvent, RelationId};
    use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};
    use slurm_charms::charms::{CharmKind, Host, run_with};
    let sizes: Vec<usize> = match std::env::var("CHARM_BENCH_UNITS") {
        Ok(v) => v.split(',').filter_map(|n| n.parse().ok()).collect(),
        Err(_) => vec![1000, 10_000],
    };
    for n in sizes {
        let rel = RelationId::new("slurmd", 3);
        let mut r = MemoryRelation::new("slurmd", 3, "gpu")
            .remote_app_data(bag([("partition", r#"{"gpu":{"State":"UP"}}"#)]));
        for i in 0..n {
            let node = format!(
                r#"{{"node_parameters":{{"NodeName":"gpu-{i:05}","CPUs":"224","Boards":"1","SocketsPerBoard":"2","CoresPerSocket":"56","ThreadsPerCore":"2","RealMemory":"2063937","Gres":["gpu:nvidia_h100_80gb_hbm3:8"],"MemSpecLimit":"1024"}},"new_node":{},"gres":[{{"Name":"gpu","Type":"nvidia_h100_80gb_hbm3","File":"/dev/nvidia[0-7]","Cores":"0-55,112-167"}}]}}"#,
                i % 10 == 0
            );
            r = r.remote_unit(&format!("gpu/{i}"), bag([("node", node.as_str())]));
        }
        let be = MemoryBackend::new("slurmctld/0")
            .leader(true)
            .config_value("cluster-name", "osd-cluster")
            .relation(r);
        let dir = tempfile::tempdir().unwrap();
        let runner = RecordingRunner::default();
        let host = Host::new(dir.path(), &runner);
        let ctx = HookContext {
            unit_name: "slurmctld/0".into(),
            app_name: "slurmctld".into(),
            model_name: "m".into(),
            charm_dir: std::path::PathBuf::from("/nonexistent"),
            event: Event::RelationChanged(RelationEvent {
                relation: rel.clone(),
                remote_app: "gpu".into(),
                remote_unit: Some("gpu/7".into()),
                departing_unit: None,
            }),
        };
        let t = Instant::now();
        run_with(CharmKind::Slurmctld, &ctx, &be, &host).unwrap();
        let first = t.elapsed();
        let mut times = Vec::new();
        for _ in 0..9 {
            let t = Instant::now();
            run_with(CharmKind::Slurmctld, &ctx, &be, &host).unwrap();
            times.push(t.elapsed());
        }
        let conf = std::fs::read_to_string(dir.path().join("etc/slurm/slurm.conf")).unwrap();
        assert!(
            conf.contains(&format!("gpu-[00000-{:05}]", n - 1)),
            "{conf}"
        );
        println!(
            "controller slurmd-relation-changed in process at {n:>6} units: median {:.1} ms \
             (first hook, full cache build: {:.1} ms)",
            median(times).as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3
        );
    }
}
