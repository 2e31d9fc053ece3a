//! End to end for observability (issue 41 item 4): Debian's real Prometheus and
//! prometheus-node-exporter watch the namespaced cluster of real Slurm daemons the real charms
//! drive, and a GPU fault injected on one node becomes a firing alert.
//!
//! Prometheus is configured the way the COS subordinate (opentelemetry-collector or
//! grafana-agent) configures itself from the `cos-agent` relation: a stand-in subordinate
//! charm is related to both charms in the Juju simulator, the test reads each unit's `config`
//! (the `cos_agent` library's `CosAgentProviderUnitData` JSON, docs/observability.md), writes
//! its `metrics_alert_rules` as Prometheus rule files unchanged, adds every
//! `metrics_scrape_jobs` entry (on 26.05 the controller's four Slurm OpenMetrics endpoints,
//! which must all be `up`; none below 25.11), and scrapes each unit's node-exporter
//! with the topology labels the subordinate adds (`instance`, `juju_model`, `juju_model_uuid`,
//! `juju_application`, `juju_unit`). node-exporter runs in each host's network namespace with
//! `--collector.textfile.directory` at the directory the charms write to; Prometheus runs in the
//! controller host's network namespace and is read through its HTTP API (`/api/v1/query`,
//! `/api/v1/alerts`, `/api/v1/rules`) with `curl` from inside that namespace.
//!
//! The fault: XID 79 ("GPU has fallen off the bus") appended to GPU 1's node kernel log
//! (`/dev/kmsg`, a plain file in the host's private `/dev`); slurmd runs the charm's
//! health-check program (HealthCheckInterval 5 s), which drains the node and counts the XID in
//! `slurm_node_gpu_xid_errors_total`; `SlurmGpuXidDrainClass` (no `for:`: firing at the first
//! evaluation that sees the increase) must fire for exactly that node, GPU and XID, and stay
//! silent before. The shipped rules are used as published: no `for:` or expression is changed;
//! only the scrape and evaluation intervals are 1 s.
//!
//! Hosts: juju-e2e-0 slurmctld/0 and Prometheus; juju-e2e-1 slurmd/0 (2 x T4).

mod e2e;
#[allow(clippy::duplicate_mod)]
#[path = "common/required.rs"]
mod required;

use e2e::{Cluster, Suite, machine as host};
use juju_sim::{DeploySpec, Simulator, UnitExtras};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REGISTER: Duration = Duration::from_secs(60);
/// `health-check-interval` in this test (the default is 60 s).
const INTERVAL: u64 = 5;
/// The textfile directory the charms are told to use (`SLURM_CHARMS_TEXTFILE_DIR`): below
/// `/var/lib/slurm`, which every host mounts from its own root, so the hook (which writes below
/// `SLURM_CHARMS_ROOT`) and the health-check program slurmd starts (which writes below `/`)
/// write to the same directory.
const TEXTFILE_DIR: &str = "/var/lib/slurm/textfile-collector.d";
const BUS1: &str = "00000000:86:00.0";
const NODE_EXPORTER_PORT: u16 = 9100;
const PROMETHEUS: &str = "127.0.0.1:9090";
/// How long Prometheus may take to show what the cluster did (a few scrapes and evaluations,
/// one health-check interval, on a loaded machine).
const SHOW: Duration = Duration::from_secs(30);

fn t4(minor: u32, bus: &str) -> Value {
    let cpus: Vec<u32> =
        (0..std::thread::available_parallelism().map_or(1, |n| n.get()) as u32).collect();
    json!({
        "name": "Tesla T4",
        "uuid": format!("GPU-7e54bbbb-0000-4000-8000-00000000000{minor}"),
        "pci_bus_id": bus,
        "minor": minor,
        "memory_total": 16106127360u64,
        "cpu_affinity": cpus,
        "serial": format!("132452001234{}", 4 + minor),
    })
}

/// A program started in one host's network namespace (the machine's files, so the machine's
/// Prometheus and node-exporter run whatever Debian root the host runs from); killed when
/// dropped, and by the kernel when the test process dies (`setpriv --pdeathsig`).
struct Daemon {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn start(cluster: &Cluster, host: &str, log: PathBuf, program: &str, args: &[String]) -> Self {
        let out = std::fs::File::create(&log).unwrap();
        let err = out.try_clone().unwrap();
        let child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--", "nsenter", "-t"])
            .arg(cluster.host(host).pid.to_string())
            .args(["--net", "--", program])
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program} in {host}: {e}"));
        Daemon {
            name: format!("{program} in {host}"),
            child,
            log,
        }
    }

    /// Panics (with its log) when it has exited.
    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "{} exited ({status}):\n{}",
                self.name,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(20)..];
            e2e::eprint_block(&format!("{} (last lines)", self.name), &tail.join("\n"));
        }
    }
}

/// The Prometheus HTTP API, from inside the controller host's network namespace.
struct Api {
    pid: u32,
}

impl Api {
    /// `GET /api/v1/<path>` with `params` (URL-encoded by curl); the `data` of a `success`.
    fn get(&self, path: &str, params: &[(&str, &str)]) -> Result<Value, String> {
        let mut cmd = Command::new("nsenter");
        cmd.args(["-t", &self.pid.to_string(), "--net", "--"])
            .args(["curl", "-sS", "--max-time", "5", "-G"]);
        for (k, v) in params {
            cmd.arg("--data-urlencode").arg(format!("{k}={v}"));
        }
        let out = cmd
            .arg(format!("http://{PROMETHEUS}/api/v1/{path}"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("curl: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "curl {path}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let v: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("{path}: {e}: {}", String::from_utf8_lossy(&out.stdout)))?;
        if v["status"] != "success" {
            return Err(format!("{path}: {v}"));
        }
        Ok(v["data"].clone())
    }

    /// An instant query's vector: each sample's labels and value.
    fn query(&self, q: &str) -> Result<Vec<(Value, f64)>, String> {
        let data = self.get("query", &[("query", q)])?;
        let result = data["result"].as_array().cloned().unwrap_or_default();
        Ok(result
            .into_iter()
            .map(|s| {
                let v = s["value"][1]
                    .as_str()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN);
                (s["metric"].clone(), v)
            })
            .collect())
    }

    /// The alerts named `name` (pending or firing).
    fn alerts(&self, name: &str) -> Result<Vec<Value>, String> {
        let data = self.get("alerts", &[])?;
        Ok(data["alerts"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a["labels"]["alertname"] == name)
            .collect())
    }
}

/// What the COS subordinate reads from one unit's `cos-agent` bag.
struct Published {
    unit: String,
    app: String,
    /// `metrics_alert_rules`: `{"groups": [...]}`.
    rules: Value,
    /// `metrics_scrape_jobs`.
    jobs: Vec<Value>,
}

/// The unit's `config` as the `cos_agent` library's requirer reads it
/// (`CosAgentProviderUnitData` parsed from JSON): every field it declares must be there.
fn read_published(sim: &Simulator, rel: u32, unit: &str) -> Published {
    let bag = sim.unit_bag(rel, unit);
    let raw = bag
        .get("config")
        .unwrap_or_else(|| panic!("{unit} published no `config` on cos-agent: {bag:?}"));
    let v: Value = serde_json::from_str(raw).unwrap_or_else(|e| panic!("{unit}: {e}: {raw}"));
    for field in [
        "metrics_alert_rules",
        "log_alert_rules",
        "dashboards",
        "subordinate",
        "metrics_scrape_jobs",
        "log_slots",
        "tracing_protocols",
    ] {
        assert!(v.get(field).is_some(), "{unit}: no {field} in {raw}");
    }
    Published {
        unit: unit.to_owned(),
        app: unit.split('/').next().unwrap_or_default().to_owned(),
        rules: v["metrics_alert_rules"].clone(),
        jobs: v["metrics_scrape_jobs"]
            .as_array()
            .unwrap_or_else(|| panic!("{unit}: metrics_scrape_jobs is not a list: {raw}"))
            .clone(),
    }
}

/// A charm directory for the stand-in COS subordinate: the `cos-agent` requirer, hooks that do
/// nothing (the test reads the bags itself).
fn subordinate_charm(work: &Path) -> PathBuf {
    let dir = work.join("charm-opentelemetry-collector");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("metadata.yaml"),
        "name: opentelemetry-collector\nsubordinate: true\nrequires:\n  cos-agent:\n    \
         interface: cos_agent\n",
    )
    .unwrap();
    let dispatch = dir.join("dispatch");
    std::fs::write(&dispatch, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&dispatch, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// prometheus.yml as the subordinate would scrape: each unit's node-exporter with the
/// principal's topology labels (grafana-agent's `_principal_relabeling_config`), 1 s intervals.
fn prometheus_config(
    model: &str,
    uuid: &str,
    units: &[(Published, String)],
    rules_dir: &Path,
) -> Value {
    let mut scrape = Vec::new();
    for (p, addr) in units {
        let uuid8: String = uuid.chars().take(8).collect();
        let labels = json!({
            "instance": format!("{model}_{uuid8}_{}_{}", p.app, p.unit),
            "juju_model": model,
            "juju_model_uuid": uuid,
            "juju_application": p.app,
            "juju_unit": p.unit,
        });
        scrape.push(json!({
            "job_name": format!("{}_node-exporter", p.unit.replace('/', "_")),
            "static_configs": [{
                "targets": [format!("{addr}:{NODE_EXPORTER_PORT}")],
                "labels": labels,
            }],
        }));
        // The unit's own jobs, as the subordinate on its machine runs them: `localhost` is the
        // unit's host (Prometheus here runs on the controller's), so it becomes its address.
        for job in &p.jobs {
            let mut job = job.clone();
            let targets: Vec<String> = job["static_configs"][0]["targets"]
                .as_array()
                .unwrap_or_else(|| panic!("{}: a job without targets: {job}", p.unit))
                .iter()
                .map(|t| {
                    let t = t.as_str().unwrap_or_default();
                    let port = t
                        .strip_prefix("localhost:")
                        .unwrap_or_else(|| panic!("{}: target {t} is not on localhost", p.unit));
                    format!("{addr}:{port}")
                })
                .collect();
            job["static_configs"] = json!([{"targets": targets, "labels": labels}]);
            scrape.push(job);
        }
    }
    json!({
        "global": {
            "scrape_interval": "1s",
            "scrape_timeout": "1s",
            "evaluation_interval": "1s",
        },
        "rule_files": [format!("{}/*.rules", rules_dir.display())],
        "scrape_configs": scrape,
    })
}

#[test]
fn e2e_prometheus_alerts_22_05() {
    prometheus_scenario(Suite::Bookworm);
}

#[test]
fn e2e_prometheus_alerts_24_11() {
    prometheus_scenario(Suite::Trixie);
}

#[test]
fn e2e_prometheus_alerts_26_05() {
    prometheus_scenario(Suite::Sid);
}

fn prometheus_scenario(suite: Suite) {
    let name = format!("e2e_prometheus on Slurm {}", suite.slurm());
    if !e2e::should_run_on(&name, suite) {
        return;
    }
    let missing: Vec<&str> = [
        "/usr/bin/prometheus",
        "/usr/bin/promtool",
        "/usr/bin/prometheus-node-exporter",
        "/usr/bin/curl",
    ]
    .into_iter()
    .filter(|p| !Path::new(p).is_file())
    .collect();
    if !missing.is_empty() {
        required::skip(
            &name,
            &missing.join(", "),
            "apt-get install prometheus prometheus-node-exporter curl (.ci/run installs them)",
        );
        return;
    }
    let started = Instant::now();
    let mut sw = e2e::Stopwatch::new();
    let (cluster, work) = e2e::cluster_with_gpus(
        suite,
        "e2e-prometheus-",
        &[Vec::new(), vec![t4(0, "00000000:3B:00.0"), t4(1, BUS1)]],
    );
    let mut sim = Simulator::new().expect("simulator");
    let ((ctl, ctl_addr), (n1, n1_addr)) = (host(0), host(1));
    cluster.write(
        &n1,
        "dev/kmsg",
        b"6,1,0,-;Linux version 6.1.0 (debian-kernel@lists.debian.org)\n",
    );
    // The subordinate's node-exporter is installed: its textfile directory exists.
    for h in [&ctl, &n1] {
        std::fs::create_dir_all(cluster.root(h).join(TEXTFILE_DIR.trim_start_matches('/')))
            .unwrap();
    }
    let units = [("slurmctld/0", ctl.clone()), ("slurmd/0", n1.clone())]
        .into_iter()
        .map(|(u, h)| (u.to_string(), h))
        .collect();
    let base = cluster.unit_extras(&work.path().join("nvml"), units);
    let extras: std::sync::Arc<dyn Fn(&str) -> UnitExtras + Send + Sync> =
        std::sync::Arc::new(move |u: &str| {
            let mut x = base(u);
            x.env
                .insert("SLURM_CHARMS_TEXTFILE_DIR".into(), TEXTFILE_DIR.into());
            x
        });
    let (e1, e2) = (extras.clone(), extras.clone());
    sim.deploy(
        DeploySpec::new("slurmctld", e2e::charm_dir(work.path(), "slurmctld"))
            .config("default-partition", "slurmd")
            .config("health-check-interval", INTERVAL)
            .extras_fn(move |u| e1(u)),
    )
    .expect("deploy slurmctld");
    sim.deploy(
        DeploySpec::new("slurmd", e2e::charm_dir(work.path(), "slurmd")).extras_fn(move |u| e2(u)),
    )
    .expect("deploy slurmd");
    sim.integrate("slurmd", "slurmctld").expect("integrate");
    let r = sim
        .run_action("slurmd/0", "node-configured", json!({}))
        .unwrap();
    assert_eq!(r.status, "completed", "{r:?}");
    // The COS subordinate, related to both charms over cos-agent.
    sim.deploy(DeploySpec::new(
        "opentelemetry-collector",
        subordinate_charm(work.path()),
    ))
    .expect("deploy the subordinate");
    let rel_ctl = sim
        .integrate("slurmctld:cos-agent", "opentelemetry-collector:cos-agent")
        .expect("integrate slurmctld:cos-agent");
    let rel_node = sim
        .integrate("slurmd:cos-agent", "opentelemetry-collector:cos-agent")
        .expect("integrate slurmd:cos-agent");
    sim.update_status(None).expect("update-status");
    cluster.wait_node_idle(&ctl, &n1, "gpu:tesla_t4:2", REGISTER);
    // the controller's metrics (update-status, the leader) with the node idle
    sim.update_status(Some("slurmctld")).expect("update-status");
    sw.lap("cluster up, charms related to the subordinate");

    // What the subordinate reads, turned into Prometheus's configuration.
    let (model, uuid) = sim.with_model(|m| (m.name.clone(), m.uuid.clone()));
    let published = vec![
        (
            read_published(&sim, rel_ctl, "slurmctld/0"),
            ctl_addr.clone(),
        ),
        (read_published(&sim, rel_node, "slurmd/0"), n1_addr.clone()),
    ];
    // Slurm 25.11+ serves its own OpenMetrics: the controller publishes its four endpoints on
    // slurmctld's port; below 25.11, and on the node (no dcgm-exporter), no job at all.
    let openmetrics = suite == Suite::Sid;
    for (p, _) in &published {
        let mut paths: Vec<String> = p
            .jobs
            .iter()
            .map(|j| {
                assert_eq!(
                    j["static_configs"][0]["targets"],
                    json!(["localhost:6817"]),
                    "{}: {j}",
                    p.unit
                );
                j["metrics_path"].as_str().unwrap_or_default().to_owned()
            })
            .collect();
        paths.sort();
        let want: Vec<&str> = if openmetrics && p.app == "slurmctld" {
            vec![
                "/metrics/jobs",
                "/metrics/nodes",
                "/metrics/partitions",
                "/metrics/scheduler",
            ]
        } else {
            vec![]
        };
        assert_eq!(paths, want, "{}: metrics_scrape_jobs {:?}", p.unit, p.jobs);
    }
    let own_jobs: usize = published.iter().map(|(p, _)| p.jobs.len()).sum();
    let prom_dir = work.path().join("prometheus");
    let rules_dir = prom_dir.join("rules");
    std::fs::create_dir_all(&rules_dir).unwrap();
    let mut group_names = Vec::new();
    for (p, _) in &published {
        let groups = p.rules["groups"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no rule groups: {}", p.unit, p.rules));
        group_names.extend(
            groups
                .iter()
                .map(|g| g["name"].as_str().unwrap_or("").to_owned()),
        );
        let file = rules_dir.join(format!("{}.rules", p.unit.replace('/', "_")));
        std::fs::write(&file, serde_yaml::to_string(&p.rules).unwrap()).unwrap();
    }
    let config = prometheus_config(&model, &uuid, &published, &rules_dir);
    let config_file = prom_dir.join("prometheus.yml");
    std::fs::write(&config_file, serde_yaml::to_string(&config).unwrap()).unwrap();
    e2e::eprint_block(
        "prometheus.yml (from the cos-agent bags)",
        &std::fs::read_to_string(&config_file).unwrap(),
    );
    let check = Command::new("promtool")
        .arg("check")
        .arg("config")
        .arg(&config_file)
        .output()
        .expect("promtool");
    assert!(
        check.status.success(),
        "promtool check config: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    let mut exporters: Vec<Daemon> = [(&ctl, &ctl_addr), (&n1, &n1_addr)]
        .into_iter()
        .map(|(h, addr)| {
            let dir = cluster.root(h).join(TEXTFILE_DIR.trim_start_matches('/'));
            Daemon::start(
                &cluster,
                h,
                prom_dir.join(format!("node-exporter-{h}.log")),
                "/usr/bin/prometheus-node-exporter",
                &[
                    format!("--web.listen-address={addr}:{NODE_EXPORTER_PORT}"),
                    "--collector.disable-defaults".into(),
                    "--collector.textfile".into(),
                    format!("--collector.textfile.directory={}", dir.display()),
                ],
            )
        })
        .collect();
    let mut prometheus = Daemon::start(
        &cluster,
        &ctl,
        prom_dir.join("prometheus.log"),
        "/usr/bin/prometheus",
        &[
            format!("--config.file={}", config_file.display()),
            format!("--storage.tsdb.path={}", prom_dir.join("data").display()),
            format!("--web.listen-address={PROMETHEUS}"),
            "--log.level=warn".into(),
        ],
    );
    let api = Api {
        pid: cluster.host(&ctl).pid,
    };
    let running = |p: &mut Daemon, e: &mut Vec<Daemon>| {
        p.assert_running();
        e.iter_mut().for_each(Daemon::assert_running);
    };

    // Both targets up, every published rule group loaded and evaluated without error.
    cluster.wait_for(
        "both node-exporters and every published job scraped (up == 1)",
        SHOW,
        || {
            running(&mut prometheus, &mut exporters);
            let up = api.query("up == 1")?;
            (up.len() == 2 + own_jobs)
                .then_some(())
                .ok_or(format!("{up:?}"))
        },
    );
    if openmetrics {
        // Slurm's own metrics, with the controller's topology: one node, idle, one partition.
        cluster.wait_for("slurmctld's OpenMetrics in Prometheus", SHOW, || {
            for q in [
                "slurm_nodes{juju_unit=\"slurmctld/0\",job=\"slurmctld_1_slurm_nodes\"} == 1",
                "slurm_nodes_idle{juju_unit=\"slurmctld/0\"} == 1",
                "slurm_partitions{juju_application=\"slurmctld\"} == 1",
                "slurm_jobs{job=\"slurmctld_0_slurm_jobs\"} >= 0",
                "slurm_schedule_cycle_cnt{job=\"slurmctld_3_slurm_scheduler\"} >= 0",
            ] {
                if api.query(q)?.len() != 1 {
                    return Err(format!("no sample for {q}"));
                }
            }
            Ok(())
        });
    }
    let loaded = cluster.wait_for("the published rule groups evaluated", SHOW, || {
        let groups = api.get("rules", &[])?["groups"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut names: Vec<String> = groups
            .iter()
            .filter(|g| {
                g["lastEvaluation"]
                    .as_str()
                    .is_some_and(|t| !t.starts_with("0001"))
            })
            .map(|g| g["name"].as_str().unwrap_or("").to_owned())
            .collect();
        names.sort();
        let mut want = group_names.clone();
        want.sort();
        if names != want {
            return Err(format!("evaluated {names:?}, published {want:?}"));
        }
        let unhealthy: Vec<Value> = groups
            .iter()
            .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
            .filter(|r| r["health"] != "ok")
            .collect();
        if !unhealthy.is_empty() {
            return Err(format!("rules not healthy: {unhealthy:?}"));
        }
        Ok(names)
    });
    e2e::eprint_block("rule groups loaded from cos-agent", &loaded.join("\n"));

    // The metrics of both charms and the health-check program, with the topology labels.
    let xid79_gpu1 =
        format!("slurm_node_gpu_xid_errors_total{{node=\"{n1}\",gpu=\"1\",xid=\"79\"}}");
    cluster.wait_for("every charm metric in Prometheus", SHOW, || {
        for q in [
            format!("slurm_node_gpus{{node=\"{n1}\",juju_unit=\"slurmd/0\",juju_application=\"slurmd\",juju_model=\"{model}\"}} == 2"),
            format!("slurm_node_gpu_healthy{{node=\"{n1}\",pci_bus_id=\"{BUS1}\"}} == 1"),
            format!("{xid79_gpu1} == 0"),
            "slurm_scheduler_up{juju_unit=\"slurmctld/0\"} == 1".to_owned(),
            format!("slurm_node_state{{node=\"{n1}\",state=\"idle\"}} == 1"),
        ] {
            if api.query(&q)?.len() != 1 {
                return Err(format!("no sample for {q}"));
            }
        }
        Ok(())
    });
    sw.lap("Prometheus scrapes both units, rules loaded");

    // Healthy: the XID alert stays silent over several evaluations.
    std::thread::sleep(Duration::from_secs(3));
    let silent = api.alerts("SlurmGpuXidDrainClass").unwrap();
    assert!(silent.is_empty(), "alert before any XID: {silent:?}");

    // The fault: XID 79 on GPU 1, in the node's kernel log.
    let kmsg = cluster.root(&n1).join("dev/kmsg");
    let mut log = std::fs::read_to_string(&kmsg).unwrap();
    log.push_str(
        "4,200,200000000,-;NVRM: Xid (PCI:0000:86:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n",
    );
    std::fs::write(&kmsg, log).unwrap();
    let t0 = Instant::now();
    let mut states: Vec<String> = Vec::new();
    let alert = cluster.wait_for("SlurmGpuXidDrainClass firing", SHOW, || {
        running(&mut prometheus, &mut exporters);
        let alerts = api.alerts("SlurmGpuXidDrainClass")?;
        for a in &alerts {
            let s = a["state"].as_str().unwrap_or("?").to_owned();
            if states.last() != Some(&s) {
                states.push(s);
            }
        }
        alerts
            .into_iter()
            .find(|a| a["state"] == "firing")
            .ok_or_else(|| format!("states so far {states:?}"))
    });
    let took = t0.elapsed();
    sw.lap("XID 79 to a firing alert");
    let counter = api.query(&xid79_gpu1).unwrap();
    e2e::eprint_block(
        "the alert",
        &format!(
            "after {took:.1?}, states seen {states:?}\n{}\ncounter: {counter:?}",
            serde_json::to_string_pretty(&alert).unwrap()
        ),
    );
    let labels = &alert["labels"];
    for (k, v) in [
        ("alertname", "SlurmGpuXidDrainClass"),
        ("severity", "critical"),
        ("node", n1.as_str()),
        ("gpu", "1"),
        ("pci_bus_id", BUS1),
        ("xid", "79"),
        ("juju_application", "slurmd"),
        ("juju_charm", "slurmd"),
        ("juju_unit", "slurmd/0"),
        ("juju_model", model.as_str()),
        ("juju_model_uuid", uuid.as_str()),
    ] {
        assert_eq!(labels[k], v, "label {k} of {alert}");
    }
    assert_eq!(
        alert["annotations"]["summary"],
        format!("XID 79 on GPU 1 of Slurm node {n1}")
    );
    assert_eq!(counter.len(), 1, "{counter:?}");
    assert_eq!(counter[0].1, 1.0, "{counter:?}");
    // Only that GPU and XID.
    let all = api.alerts("SlurmGpuXidDrainClass").unwrap();
    assert_eq!(all.len(), 1, "{all:?}");

    // The program drained the node; the controller's next update-status shows it to Prometheus.
    cluster.wait_for("the XID drain", SHOW, || {
        let n = cluster.node(&ctl, &n1)?;
        let state = n.get("State").unwrap_or_default().to_owned();
        state.contains("DRAIN").then_some(()).ok_or(state)
    });
    sim.update_status(None).expect("update-status");
    let drained = cluster.wait_for("the drain in slurm_node_state", SHOW, || {
        let q = format!("slurm_node_state{{node=\"{n1}\",state=~\".*drain.*\",reason=~\"slurmd-charm: .*XID 79.*\"}} == 1");
        let v = api.query(&q)?;
        v.into_iter().next().map(|(m, _)| m).ok_or(q)
    });
    e2e::eprint_block("slurm_node_state after the drain", &drained.to_string());
    // and the slurmd hook's health report names the XID as the GPU's fault
    let fault = format!(
        "slurm_node_gpu_fault{{node=\"{n1}\",gpu=\"1\",fault=\"xid\",juju_unit=\"slurmd/0\"}} == 1"
    );
    cluster.wait_for("the XID in slurm_node_gpu_fault", SHOW, || {
        (api.query(&fault)?.len() == 1)
            .then_some(())
            .ok_or(fault.clone())
    });
    sw.lap("the drain in the controller's metrics, the fault in the node's");
    let names = api
        .get(
            "label/__name__/values",
            &[("match[]", "{__name__=~\"slurm_.*|node_textfile_.*\"}")],
        )
        .unwrap();
    e2e::eprint_block(
        "slurm_* metric names in Prometheus",
        &names
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
    );
    e2e::eprint_block("timings", &sw.report());
    drop(prometheus);
    drop(exporters);
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}",
        started.elapsed()
    );
}
