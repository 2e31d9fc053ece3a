//! The health-check program Slurm runs (issue 40), against the fake NVML and a fake kernel log
//! in the host root: XIDs drain by their catalog class with the GPU named, a drain holds until
//! the machine boots again and is then resumed, an operator's drain is never touched, and a
//! hanging NVML costs the program's own deadline, no more. Also the fake's NVML event API.

mod common;
#[path = "fixtures/gpu/support.rs"]
mod support;

use std::time::{Duration, Instant};

use common::RecordingRunner;
use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enums::event::XidError;
use serde_json::json;
use slurm_charms::charms::cos::{TEXTFILE_DIR, XID_TEXTFILE};
use slurm_charms::charms::slurmd::health_check::{detect_with_deadline, run_once};
use slurm_charms::charms::slurmd::health_check_files::{ProgramSettings, ProgramState};
use slurm_charms::charms::slurmd::health_verdict::Decision;
use slurm_charms::charms::slurmd::keys::SETTINGS_PATH;
use slurm_charms::charms::slurmd::node_state::DRAIN_PREFIX;
use slurm_charms::charms::{CmdOutput, Host};
use slurm_charms::gpu::{GpuError, KnownGpu};
use support::{Fake, config, device};

const BUS0: &str = "00000000:3B:00.0";
const BUS1: &str = "00000000:86:00.0";
const BOOT_A: &str = "0b6e1d3c-0000-4000-8000-00000000000a";
const BOOT_B: &str = "0b6e1d3c-0000-4000-8000-00000000000b";
const XID79: &str =
    "gpu 1 (00000000:86:00.0, serial 1324520012345): XID 79 (GPU has fallen off the bus)";

fn two_t4(extra: serde_json::Value) -> String {
    let mut second = device("Tesla T4", 1, BUS1);
    second["serial"] = json!("1324520012345");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&config(vec![device("Tesla T4", 0, BUS0), second])).unwrap();
    if let Some(obj) = extra.as_object() {
        for (k, v) in obj {
            cfg[k] = v.clone();
        }
    }
    cfg.to_string()
}

struct Node {
    fake: Fake,
    runner: RecordingRunner,
}

impl Node {
    fn new(extra: serde_json::Value) -> Node {
        let fake = Fake::new(&two_t4(extra));
        let known: Vec<KnownGpu> = [(0, BUS0), (1, BUS1)]
            .into_iter()
            .map(|(index, bus)| KnownGpu {
                index,
                pci_bus_id: bus.into(),
                uuid: String::new(),
                serial: String::new(),
            })
            .collect();
        let settings = ProgramSettings {
            node: "n1".into(),
            server: "ctl:6817".into(),
            nvml_lib: Some(fake.lib.clone()),
            known,
            xids_cleared_through: None,
            textfile_dir: Some(TEXTFILE_DIR.into()),
        };
        fake.write_host_file(
            SETTINGS_PATH.trim_start_matches('/'),
            &serde_json::to_string(&settings).unwrap(),
        );
        let node = Node {
            fake,
            runner: RecordingRunner::default(),
        };
        node.boot(BOOT_A);
        node.kmsg("");
        node
    }

    fn boot(&self, id: &str) {
        self.fake
            .write_host_file("proc/sys/kernel/random/boot_id", &format!("{id}\n"));
    }

    fn kmsg(&self, text: &str) {
        self.fake.write_host_file("dev/kmsg", text);
    }

    /// Slurm says the node is `state|reason`.
    fn slurm_says(&self, line: &str) {
        self.runner.answer(
            "sinfo",
            CmdOutput {
                code: Some(0),
                stdout: format!("{line}\n"),
                stderr: String::new(),
            },
        );
    }

    fn run(&self, deadline: Duration) -> (Decision, Vec<String>) {
        self.runner.clear();
        let host = Host::new(self.fake.root.clone(), &self.runner);
        let outcome = run_once(&host, deadline).unwrap();
        let updates = self
            .runner
            .lines()
            .into_iter()
            .filter(|l| l.starts_with("scontrol"))
            .collect();
        (outcome.decision, updates)
    }

    /// The program's XID metrics in node-exporter's textfile directory, if written.
    fn metrics(&self) -> Option<String> {
        let dir = self.fake.root.join(TEXTFILE_DIR.trim_start_matches('/'));
        std::fs::read_to_string(dir.join(XID_TEXTFILE)).ok()
    }

    fn state(&self) -> ProgramState {
        let host = Host::new(self.fake.root.clone(), &self.runner);
        ProgramState::read(&host).unwrap()
    }
}

fn record(seq: u64, bus: &str, xid: u32, text: &str) -> String {
    format!(
        "4,{seq},{},-;NVRM: Xid (PCI:{bus}): {xid}, pid=4242, {text}\n",
        seq * 1000
    )
}

#[test]
fn xid_79_drains_names_the_gpu_holds_and_resumes_after_a_reboot() {
    let n = Node::new(json!({}));
    n.slurm_says("idle|none");
    assert_eq!(n.run(Duration::from_secs(10)).0, Decision::Keep);
    // XID 13 (application) on GPU 0 and XID 79 (drain) on GPU 1 since the last run
    n.kmsg(&format!(
        "6,1,10,-;Linux version 6.1\n{}{}",
        record(2, "0000:3b:00", 13, "Graphics Exception"),
        record(3, "0000:86:00", 79, "GPU has fallen off the bus.")
    ));
    let (decision, updates) = n.run(Duration::from_secs(10));
    let reason = format!("{DRAIN_PREFIX}{XID79}");
    assert_eq!(
        decision,
        Decision::Drain {
            reason: reason.clone()
        }
    );
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert!(
        updates[0].contains("state=drain") && updates[0].contains(XID79),
        "{updates:?}"
    );
    let state = n.state();
    assert_eq!(state.kmsg_seq, Some(3));
    assert_eq!(state.counts.get(&13), Some(&1));
    assert_eq!(state.recent.len(), 2);
    assert_eq!(state.verdict, XID79);
    // The log holds nothing new: the drain holds, nothing is rewritten.
    n.slurm_says(&format!("drained|{reason}"));
    assert_eq!(n.run(Duration::from_secs(10)), (Decision::Keep, vec![]));
    // The machine boots again (the GPU was reset): the charm's drain is lifted.
    n.boot(BOOT_B);
    n.kmsg("6,1,10,-;Linux version 6.1\n");
    let (decision, updates) = n.run(Duration::from_secs(10));
    assert_eq!(decision, Decision::Resume);
    assert!(updates[0].contains("state=resume"), "{updates:?}");
}

#[test]
fn application_and_count_xids_do_not_drain() {
    let n = Node::new(json!({}));
    n.slurm_says("idle|none");
    n.kmsg(&format!(
        "{}{}",
        record(1, "0000:3b:00", 13, "Graphics Exception"),
        record(2, "0000:86:00", 92, "High single-bit ECC error rate")
    ));
    assert_eq!(n.run(Duration::from_secs(10)), (Decision::Keep, vec![]));
    let s = n.state();
    assert!(s.held.is_empty());
    assert_eq!(s.recent.len(), 2);
    assert_eq!(s.verdict, "healthy");
}

#[test]
fn an_operators_drain_is_never_touched() {
    let n = Node::new(json!({}));
    n.slurm_says("drained|disk replacement");
    n.kmsg(&record(5, "0000:86:00", 48, "DBE (double bit error)"));
    let (decision, updates) = n.run(Duration::from_secs(10));
    assert_eq!(
        decision,
        Decision::LeaveOperators {
            reason: Some("disk replacement".into())
        }
    );
    assert!(updates.is_empty(), "{updates:?}");
    // healthy again (a reboot): still the operator's
    n.boot(BOOT_B);
    n.kmsg("");
    assert_eq!(n.run(Duration::from_secs(10)), (Decision::Keep, vec![]));
}

#[test]
fn a_hanging_nvml_costs_the_deadline_and_drains() {
    let n = Node::new(json!({"delay_ms": {"nvmlDeviceGetCount_v2": 30000}}));
    let started = Instant::now();
    let r = detect_with_deadline(n.fake.options(), Duration::from_millis(500));
    let took = started.elapsed();
    assert!(matches!(r, Err(GpuError::Timeout { .. })), "{r:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    n.slurm_says("idle|none");
    let started = Instant::now();
    let (decision, _) = n.run(Duration::from_secs(1));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let Decision::Drain { reason } = decision else {
        panic!("{decision:?}");
    };
    assert!(reason.contains("no answer within 1 s"), "{reason}");
}

#[test]
fn the_fake_delivers_queued_xids_through_the_event_api() {
    let mut second = device("Tesla T4", 1, BUS1);
    second["xids"] = json!([79, 13]);
    let fake = Fake::new(&config(vec![device("Tesla T4", 0, BUS0), second]));
    let nvml = Nvml::builder()
        .lib_path(fake.lib.as_os_str())
        .init()
        .unwrap();
    let set = nvml.create_event_set().unwrap();
    let set = nvml
        .device_by_index(1)
        .unwrap()
        .register_events(EventTypes::CRITICAL_XID_ERROR, set)
        .unwrap();
    let first = set.wait(100).unwrap();
    assert_eq!(first.event_data, Some(XidError::Value(79)));
    assert_eq!(first.device.pci_info().unwrap().bus_id, BUS1);
    assert_eq!(set.wait(100).unwrap().event_data, Some(XidError::Value(13)));
    assert!(set.wait(10).is_err());
}

#[test]
fn xids_the_operator_cleared_no_longer_hold() {
    let n = Node::new(json!({}));
    n.slurm_says("idle|none");
    n.kmsg(&record(7, "0000:86:00", 79, "GPU has fallen off the bus."));
    assert!(matches!(
        n.run(Duration::from_secs(10)).0,
        Decision::Drain { .. }
    ));
    // `detect-gpus clear-xids=true` wrote the settings with the records read so far
    let path = n.fake.root.join(SETTINGS_PATH.trim_start_matches('/'));
    let mut settings: ProgramSettings =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    settings.xids_cleared_through = Some(7);
    std::fs::write(&path, serde_json::to_vec(&settings).unwrap()).unwrap();
    n.slurm_says(&format!("drained|{DRAIN_PREFIX}{XID79}"));
    assert_eq!(n.run(Duration::from_secs(10)).0, Decision::Resume);
    assert!(n.state().held.is_empty());
    // a later XID 79 drains again
    n.kmsg(&format!(
        "{}{}",
        record(7, "0000:86:00", 79, "GPU has fallen off the bus."),
        record(8, "0000:86:00", 79, "GPU has fallen off the bus.")
    ));
    n.slurm_says("idle|none");
    assert!(matches!(
        n.run(Duration::from_secs(10)).0,
        Decision::Drain { .. }
    ));
}

/// The counters Prometheus reads (`slurm_node_gpu_xid_errors_total`): 0 per known GPU and
/// drain-class code before any XID, then each XID counted on its GPU, restarting with a new
/// boot; written only where node-exporter's textfile directory exists.
#[test]
fn xids_are_counted_per_gpu_for_node_exporter() {
    let n = Node::new(json!({}));
    n.slurm_says("idle|none");
    n.run(Duration::from_secs(10));
    assert_eq!(n.metrics(), None, "no textfile directory, no file");
    std::fs::create_dir_all(n.fake.root.join(TEXTFILE_DIR.trim_start_matches('/'))).unwrap();
    n.run(Duration::from_secs(10));
    let line = |gpu: u32, bus: &str, xid: u32, v: u64| {
        format!(
            "slurm_node_gpu_xid_errors_total{{node=\"n1\",gpu=\"{gpu}\",pci_bus_id=\"{bus}\",xid=\"{xid}\"}} {v}"
        )
    };
    let has = |text: &str, l: &str| text.lines().any(|x| x == l);
    let text = n.metrics().expect("written once the directory exists");
    assert!(has(&text, &line(1, BUS1, 79, 0)), "{text}");
    assert!(has(&text, &line(0, BUS0, 48, 0)), "{text}");
    assert!(!text.contains("xid=\"13\""), "{text}");

    n.kmsg(&format!(
        "{}{}{}",
        record(2, "0000:3b:00", 13, "Graphics Exception"),
        record(3, "0000:86:00", 79, "GPU has fallen off the bus."),
        record(4, "0000:86:00", 79, "GPU has fallen off the bus.")
    ));
    n.run(Duration::from_secs(10));
    let text = n.metrics().unwrap();
    assert!(has(&text, &line(1, BUS1, 79, 2)), "{text}");
    assert!(has(&text, &line(0, BUS0, 13, 1)), "{text}");
    assert!(has(&text, &line(0, BUS0, 79, 0)), "{text}");
    assert_eq!(n.state().gpu_counts.len(), 2);
    // read once: the next run counts nothing again
    n.slurm_says(&format!("drained|{DRAIN_PREFIX}{XID79}"));
    n.run(Duration::from_secs(10));
    assert!(has(&n.metrics().unwrap(), &line(1, BUS1, 79, 2)));
    // a new boot: the counters restart (Prometheus sees a counter reset)
    n.boot(BOOT_B);
    n.kmsg("6,1,10,-;Linux version 6.1\n");
    n.run(Duration::from_secs(10));
    let text = n.metrics().unwrap();
    assert!(has(&text, &line(1, BUS1, 79, 0)), "{text}");
    assert!(!text.contains("xid=\"13\""), "{text}");
}
