//! Issue 41: the `cos-agent` endpoint of both charms publishes its unit databag exactly as
//! Canonical's `cos_agent` library (LIBPATCH 26) does, and the metrics textfiles are what
//! node-exporter reads. The schema (`src/charms/cos/agent.rs` names the library source) is
//! checked field by field here, and, where `python3` is installed, by Python's own `json`,
//! `lzma`, `base64` and `hashlib` the way the subordinate's copy of the library reads it.

mod common;

#[path = "common/required.rs"]
mod required;

use common::state::{State, run};
use juju_runtime::{Event, RelationEvent, RelationId};
use juju_runtime_testing::MemoryRelation;
use serde_json::Value;
use slurm_charms::charms::CharmKind;
use slurm_charms::charms::cos::{
    self, ClusterSnapshot, DATABAG_KEY, Topology, cluster_metrics, dashboard_uid, gpu_metrics,
    lzma_base64_decode, parse_gres, parse_jobs, parse_nodes, parse_tres_gpus, xid_metrics,
};
use slurm_charms::gpu::{Fault, GpuProblem, HealthReport, KnownGpu, XidCount, drain_class_codes};

const UUID: &str = "6f5e3f2a-1b2c-4d3e-8f90-0123456789ab";

fn topology(kind: CharmKind, app: &str) -> Topology {
    Topology {
        model: "hpc".into(),
        model_uuid: UUID.into(),
        application: app.into(),
        unit: format!("{app}/0"),
        charm_name: cos::charm_name(kind).into(),
    }
}

/// The library's field names, in `CosAgentProviderUnitData`'s order.
const FIELDS: [&str; 7] = [
    "metrics_alert_rules",
    "log_alert_rules",
    "dashboards",
    "subordinate",
    "metrics_scrape_jobs",
    "log_slots",
    "tracing_protocols",
];

/// Checks a `config` value against the library's schema; returns the decoded dashboards.
fn check_schema(raw: &str, kind: CharmKind, t: &Topology) -> Vec<Value> {
    // Field order as pydantic writes it: find each name's position in the text.
    let positions: Vec<usize> = FIELDS
        .iter()
        .map(|f| {
            raw.find(&format!("\"{f}\":"))
                .unwrap_or_else(|| panic!("{f} missing"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{raw}");
    let v: Value = serde_json::from_str(raw).unwrap();
    let obj = v.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut want = FIELDS.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want);
    assert!(obj["subordinate"].is_null());
    assert!(obj["tracing_protocols"].is_null());
    assert_eq!(obj["log_alert_rules"], serde_json::json!({}));
    assert_eq!(obj["log_slots"], serde_json::json!([]));
    assert_eq!(obj["metrics_scrape_jobs"], serde_json::json!([]));

    let app = t.application.as_str();
    // cosl sanitises group names: anything outside [a-zA-Z0-9_:] becomes `_`.
    let identifier: String = format!(
        "{}_{}_{app}",
        t.model,
        t.model_uuid.get(..8).unwrap_or_default()
    )
    .chars()
    .map(|c| {
        if c.is_ascii_alphanumeric() || c == ':' {
            c
        } else {
            '_'
        }
    })
    .collect();
    let groups = obj["metrics_alert_rules"]["groups"].as_array().unwrap();
    let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
    let group = match kind {
        CharmKind::Slurmctld => "slurm_controller",
        CharmKind::Slurmd => "slurm_gpu",
    };
    let own = format!("{identifier}_{group}_rules");
    let generic = format!("{identifier}_HostHealth_rules");
    assert_eq!(names, [own.as_str(), generic.as_str()]);
    for g in groups {
        for rule in g["rules"].as_array().unwrap() {
            let labels = rule["labels"].as_object().unwrap();
            assert_eq!(labels["juju_model"], t.model.as_str());
            match t.model_uuid.as_str() {
                "" => assert!(!labels.contains_key("juju_model_uuid")),
                uuid => assert_eq!(labels["juju_model_uuid"], uuid),
            }
            assert_eq!(labels["juju_application"], app);
            assert_eq!(labels["juju_charm"], cos::charm_name(kind));
            assert!(labels.contains_key("severity"), "{rule}");
            assert!(rule["expr"].is_string() && rule["alert"].is_string());
        }
    }

    obj["dashboards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let text = lzma_base64_decode(d.as_str().unwrap()).expect("LZMA base64");
            serde_json::from_slice(&text).unwrap()
        })
        .collect()
}

#[test]
fn controller_databag_follows_the_library_schema() {
    let raw =
        cos::databag_value(CharmKind::Slurmctld, &topology(CharmKind::Slurmctld, "ctl")).unwrap();
    let dashboards = check_schema(
        &raw,
        CharmKind::Slurmctld,
        &topology(CharmKind::Slurmctld, "ctl"),
    );
    assert_eq!(dashboards.len(), 1);
    let d = &dashboards[0];
    assert_eq!(d["title"], "Slurm cluster overview");
    assert_eq!(
        d["uid"],
        dashboard_uid(
            "slurmctld",
            "src/cos/slurmctld/grafana_dashboards/cluster-overview.json"
        )
    );
    assert_eq!(d["uid"].as_str().unwrap().len(), 40);
    assert!(
        d["tags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("charm: slurmctld"))
    );
}

#[test]
fn node_databag_follows_the_library_schema() {
    let raw = cos::databag_value(CharmKind::Slurmd, &topology(CharmKind::Slurmd, "gpu")).unwrap();
    assert!(check_schema(&raw, CharmKind::Slurmd, &topology(CharmKind::Slurmd, "gpu")).is_empty());
}

/// `hashlib.shake_256(b"abc-src/grafana_dashboards/x.json").hexdigest(20)`, from Python.
#[test]
fn dashboard_uid_is_cosl_shake256() {
    assert_eq!(
        dashboard_uid("abc", "src/grafana_dashboards/x.json"),
        "fe3b4bf1f4f9dfcffb596d055b0df94ea432390e"
    );
}

fn python_shake(input: &str) -> Option<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import hashlib,sys; print(hashlib.shake_256(sys.argv[1].encode()).hexdigest(20))",
            input,
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The subordinate's side, in Python: `json.loads`, the field types pydantic checks,
/// `LZMABase64.decompress` (`lzma.decompress(base64.b64decode(...))`), and the uid cosl makes.
const PY_READER: &str = r#"
import base64, hashlib, json, lzma, sys
d = json.loads(sys.stdin.read())
assert isinstance(d["metrics_alert_rules"], dict)
assert isinstance(d["log_alert_rules"], dict)
assert all(isinstance(x, str) for x in d["dashboards"])
assert d["subordinate"] is None and d["tracing_protocols"] is None
assert all(isinstance(x, dict) for x in d["metrics_scrape_jobs"])
assert all(isinstance(x, str) for x in d["log_slots"])
for enc in d["dashboards"]:
    dash = json.loads(lzma.decompress(base64.b64decode(enc.encode("utf-8"))).decode())
    want = hashlib.shake_256("slurmctld-src/cos/slurmctld/grafana_dashboards/cluster-overview.json".encode("utf-8")).hexdigest(20)
    assert dash["uid"] == want, (dash["uid"], want)
    assert "charm: slurmctld" in dash["tags"]
print(len(d["metrics_alert_rules"]["groups"]), len(d["dashboards"]))
"#;

#[test]
fn python_reads_the_databag_as_the_library_does() {
    let Some(uid) = python_shake("x") else {
        required::skip(
            "python_reads_the_databag_as_the_library_does",
            "python3",
            "apt-get install python3",
        );
        return;
    };
    assert_eq!(uid.len(), 40);
    let raw =
        cos::databag_value(CharmKind::Slurmctld, &topology(CharmKind::Slurmctld, "ctl")).unwrap();
    let mut child = std::process::Command::new("python3")
        .args(["-c", PY_READER])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(raw.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2 1");
}

fn cos_event(joined: bool) -> Event {
    let r = RelationEvent {
        relation: RelationId::new("cos-agent", 9),
        remote_app: "otelcol".into(),
        remote_unit: Some("otelcol/0".into()),
        departing_unit: None,
    };
    if joined {
        Event::RelationJoined(r)
    } else {
        Event::RelationChanged(r)
    }
}

fn with_cos(unit: &str) -> State {
    State {
        unit: unit.into(),
        leader: true,
        relations: vec![MemoryRelation::new("cos-agent", 9, "otelcol").remote_unit(
            "otelcol/0",
            juju_runtime_testing::bag([("receivers", "[]")]),
        )],
        ..State::default()
    }
}

/// `cos-agent-relation-joined` sets `config` in the unit bag, and does nothing else: no
/// command, no file, no other hook tool.
#[test]
fn relation_joined_publishes_config_and_nothing_else() {
    for (kind, unit) in [
        (CharmKind::Slurmctld, "slurmctld/0"),
        (CharmKind::Slurmd, "compute/0"),
    ] {
        let out = run(kind, cos_event(true), &with_cos(unit)).unwrap();
        let bag = &out
            .relation(&RelationId::new("cos-agent", 9))
            .local_unit_data;
        assert_eq!(bag.keys().collect::<Vec<_>>(), [DATABAG_KEY], "{kind:?}");
        // The harness's model; no JUJU_MODEL_UUID in this process: no uuid label, as cosl.
        let t = Topology {
            model: "state-test".into(),
            model_uuid: std::env::var("JUJU_MODEL_UUID").unwrap_or_default(),
            ..topology(kind, unit.split('/').next().unwrap())
        };
        let dashboards = check_schema(&bag[DATABAG_KEY], kind, &t);
        assert_eq!(dashboards.len(), usize::from(kind == CharmKind::Slurmctld));
        assert!(out.commands_run.is_empty(), "{:?}", out.commands_run);
        assert!(out.files.is_empty(), "{:?}", out.files.keys());
        assert_eq!(out.calls, ["relation-set"], "{kind:?}");
        // relation-changed sets the same value again.
        let again = run(kind, cos_event(false), &out).unwrap();
        assert_eq!(
            again
                .relation(&RelationId::new("cos-agent", 9))
                .local_unit_data,
            *bag
        );
    }
}

fn report() -> HealthReport {
    HealthReport {
        problems: vec![
            GpuProblem {
                index: 1,
                pci_bus_id: Some("00000000:D8:00.0".into()),
                fault: Fault::UncorrectableEcc { count: 3 },
                serial: None,
            },
            GpuProblem {
                index: 2,
                pci_bus_id: Some("00000000:E1:00.0".into()),
                fault: Fault::Disappeared,
                serial: None,
            },
        ],
        known: ["00000000:3B:00.0", "00000000:D8:00.0", "00000000:E1:00.0"]
            .iter()
            .enumerate()
            .map(|(i, b)| KnownGpu {
                index: i as u32,
                pci_bus_id: (*b).into(),
                uuid: String::new(),
                serial: String::new(),
            })
            .collect(),
    }
}

#[test]
fn gpu_metrics_name_each_gpu_and_fault() {
    let text = gpu_metrics("gpu-1", &report());
    for line in [
        "slurm_node_gpus{node=\"gpu-1\"} 3",
        "slurm_node_gpu_healthy{node=\"gpu-1\",gpu=\"0\",pci_bus_id=\"00000000:3B:00.0\"} 1",
        "slurm_node_gpu_healthy{node=\"gpu-1\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\"} 0",
        "slurm_node_gpu_fault{node=\"gpu-1\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\",fault=\"uncorrectable_ecc\"} 1",
        "slurm_node_gpu_fault{node=\"gpu-1\",gpu=\"2\",pci_bus_id=\"00000000:E1:00.0\",fault=\"disappeared\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    promtool_check_metrics(&text);
}

#[test]
fn xid_metrics_count_per_gpu_with_zeros_for_the_drain_class() {
    let known = report().known;
    let counts = [
        XidCount {
            pci_bus_id: "00000000:D8:00.0".into(),
            xid: 79,
            count: 2,
        },
        XidCount {
            pci_bus_id: "00000000:D8:00.0".into(),
            xid: 13,
            count: 5,
        },
        // a GPU the health check does not know: counted, no index
        XidCount {
            pci_bus_id: "00000000:F0:00.0".into(),
            xid: 48,
            count: 1,
        },
    ];
    let text = xid_metrics("gpu-1", &known, &counts);
    for line in [
        "# TYPE slurm_node_gpu_xid_errors_total counter",
        "slurm_node_gpu_xid_errors_total{node=\"gpu-1\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\",xid=\"79\"} 2",
        "slurm_node_gpu_xid_errors_total{node=\"gpu-1\",gpu=\"1\",pci_bus_id=\"00000000:D8:00.0\",xid=\"13\"} 5",
        "slurm_node_gpu_xid_errors_total{node=\"gpu-1\",gpu=\"0\",pci_bus_id=\"00000000:3B:00.0\",xid=\"79\"} 0",
        "slurm_node_gpu_xid_errors_total{node=\"gpu-1\",gpu=\"\",pci_bus_id=\"00000000:F0:00.0\",xid=\"48\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    // a 0 for every known GPU and drain-class code; other codes only once logged
    let samples = text.lines().filter(|l| !l.starts_with('#')).count();
    let drain = drain_class_codes().count();
    assert_eq!(samples, known.len() * drain + 2, "{text}");
    assert!(!text.contains("gpu=\"0\",pci_bus_id=\"00000000:3B:00.0\",xid=\"13\""));
    promtool_check_metrics(&text);
    // no GPU known, nothing counted: the family alone
    let empty = xid_metrics("gpu-1", &[], &[]);
    assert_eq!(empty.lines().filter(|l| !l.starts_with('#')).count(), 0);
}

/// The drain-class alert watches exactly the codes the health check drains for (the XID
/// catalogue in src/gpu/xid.rs): one list, two places.
#[test]
fn the_xid_alert_watches_the_drain_class() {
    let (_, text) = cos::rule_files(CharmKind::Slurmd)[0];
    let doc: Value = serde_yaml::from_str(text).unwrap();
    let rule = doc["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["alert"] == "SlurmGpuXidDrainClass")
        .expect("SlurmGpuXidDrainClass");
    let expr = rule["expr"].as_str().unwrap();
    let list = expr
        .split("xid=~\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no xid=~ matcher in {expr}"));
    let mut in_rule: Vec<u32> = list.split('|').map(|c| c.parse().unwrap()).collect();
    in_rule.sort_unstable();
    let mut drain: Vec<u32> = drain_class_codes().collect();
    drain.sort_unstable();
    assert_eq!(in_rule, drain, "{expr}");
    assert!(expr.contains(cos::XID_METRIC), "{expr}");
}

/// `scontrol -o show nodes` of Slurm 22.05 (abridged), three nodes.
const SCONTROL: &str = "NodeName=gpu-0 Arch=x86_64 CoresPerSocket=4 CPUAlloc=8 CPUTot=8 Gres=gpu:h100:8(S:0-1) NodeAddr=10.0.0.5 State=MIXED ThreadsPerCore=1 CfgTRES=cpu=8,mem=1000M,billing=8,gres/gpu=8 AllocTRES=cpu=8,gres/gpu=2 CapWatts=n/a
NodeName=gpu-1 Arch=x86_64 CPUTot=8 Gres=gpu:a100:4,gpu:l40s:2(S:0) State=IDLE+DRAIN CfgTRES=cpu=8,gres/gpu=6,gres/gpu:a100=4,gres/gpu:l40s=2 AllocTRES= CapWatts=n/a Reason=slurmd-charm: gpu 3 (00000000:3B:00.0): GPU is lost (fallen off the bus) [root@2026-11-29T06:00:00]
NodeName=cpu-0 Arch=x86_64 CPUTot=4 Gres=(null) State=DOWN+NOT_RESPONDING CfgTRES=cpu=4 AllocTRES= Reason=Not responding [slurm@2026-11-29T05:00:00]
";

#[test]
fn cluster_metrics_from_scontrol_and_squeue() {
    let nodes = parse_nodes(SCONTROL);
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[1].state, "idle+drain");
    assert_eq!(
        nodes[1].reason,
        "slurmd-charm: gpu 3 (00000000:3B:00.0): GPU is lost (fallen off the bus)"
    );
    assert_eq!(nodes[2].reason, "Not responding");
    let jobs = parse_jobs(
        "PENDING|gres:gpu:2|1700000100\nPENDING|gres/gpu:1|1700000000\nPENDING|N/A|1600000000\nRUNNING|gres:gpu:2|1690000000\n",
    );
    let text = cluster_metrics(&ClusterSnapshot {
        nodes: Some(nodes),
        jobs: Some(jobs),
    });
    for line in [
        "slurm_scheduler_up 1",
        "slurm_node_state{node=\"gpu-1\",state=\"idle+drain\",reason=\"slurmd-charm: gpu 3 (00000000:3B:00.0): GPU is lost (fallen off the bus)\"} 1",
        "slurm_node_state{node=\"cpu-0\",state=\"down+not_responding\",reason=\"Not responding\"} 1",
        "slurm_nodes{state=\"mixed\"} 1",
        "slurm_node_gpus{node=\"gpu-0\",type=\"h100\"} 8",
        "slurm_node_gpus{node=\"gpu-1\",type=\"l40s\"} 2",
        "slurm_node_gpus_allocated{node=\"gpu-0\",type=\"h100\"} 2",
        "slurm_node_gpus_allocated{node=\"gpu-1\",type=\"a100\"} 0",
        "slurm_jobs{state=\"pending\"} 3",
        "slurm_jobs{state=\"running\"} 1",
        "slurm_gpu_jobs_pending 2",
        "slurm_gpu_jobs_pending_oldest_submit_timestamp_seconds 1700000000",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    promtool_check_metrics(&text);

    let down = cluster_metrics(&ClusterSnapshot::default());
    assert!(down.lines().any(|l| l == "slurm_scheduler_up 0"), "{down}");
    assert!(!down.contains("slurm_node_state{"), "{down}");
}

#[test]
fn gres_and_tres_parsing() {
    assert_eq!(
        parse_gres("gpu:h100:8(S:0-1),shard:h100:32,gpu:2")
            .into_iter()
            .collect::<Vec<_>>(),
        [(String::new(), 2), ("h100".into(), 8)]
    );
    assert!(parse_gres("(null)").is_empty());
    assert_eq!(
        parse_tres_gpus("cpu=2,gres/gpu=3,gres/gpu:a100=1,gres/gpu:l40s=2")
            .into_iter()
            .collect::<Vec<_>>(),
        [("a100".into(), 1), ("l40s".into(), 2)]
    );
    assert_eq!(
        parse_tres_gpus("cpu=2,gres/gpu=3")
            .into_iter()
            .collect::<Vec<_>>(),
        [(String::new(), 3)]
    );
}

/// `promtool check metrics` lints the exposition (names, types, HELP) where promtool is
/// installed; tests/cos_promtool.rs makes its absence loud.
fn promtool_check_metrics(text: &str) {
    use std::io::Write as _;
    let Ok(mut child) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics:\n{}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
