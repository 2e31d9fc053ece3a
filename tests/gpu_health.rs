//! GPU health through the fake NVML: each fault the fake can inject is read by the health check
//! and named in the problem text the slurmd charm drains with; a GPU that disappears since the
//! last check is a problem until it comes back.

#[path = "fixtures/gpu/support.rs"]
mod support;

use serde_json::{Value, json};
use slurm_charms::gpu::{Fault, KnownGpu, assess, encode_known, parse_known};
use support::{Fake, config, device};

const BUS0: &str = "00000000:3B:00.0";
const BUS1: &str = "00000000:86:00.0";

fn two_t4(second: Value) -> String {
    config(vec![device("Tesla T4", 0, BUS0), second])
}

fn with(mut dev: Value, key: &str, value: Value) -> Value {
    dev[key] = value;
    dev
}

/// Problems of a node whose second T4 is `second`, with both T4s remembered.
fn problems(second: Value) -> Vec<String> {
    let inv = Fake::new(&two_t4(second)).detect();
    let known = assess(&inv.health, &[]).known;
    assert_eq!(
        known.len(),
        inv.health.iter().filter(|h| h.pci_bus_id.is_some()).count()
    );
    let remembered = vec![
        KnownGpu {
            index: 0,
            pci_bus_id: BUS0.into(),
            uuid: String::new(),
            serial: String::new(),
        },
        KnownGpu {
            index: 1,
            pci_bus_id: BUS1.into(),
            uuid: String::new(),
            serial: String::new(),
        },
    ];
    assess(&inv.health, &remembered)
        .problems
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn healthy_gpus_have_no_problems() {
    assert_eq!(problems(device("Tesla T4", 1, BUS1)), Vec::<String>::new());
}

#[test]
fn uncorrectable_ecc_errors() {
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "health",
        json!({"ecc_uncorrected": 2}),
    );
    assert_eq!(
        problems(dev),
        ["gpu 1 (00000000:86:00.0): uncorrectable ECC errors"]
    );
    // Corrected errors are no fault.
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "health",
        json!({"ecc_corrected": 50}),
    );
    assert!(problems(dev).is_empty());
}

#[test]
fn retired_pages_pending() {
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "health",
        json!({"retired_pages_pending": true}),
    );
    assert_eq!(
        problems(dev),
        ["gpu 1 (00000000:86:00.0): retired pages pending (GPU reset needed)"]
    );
}

#[test]
fn row_remap_failure() {
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "health",
        json!({"row_remap_failure": true}),
    );
    assert_eq!(
        problems(dev),
        ["gpu 1 (00000000:86:00.0): row remapping failed"]
    );
    // Pending remaps without failure are no fault.
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "health",
        json!({"row_remap_pending": true}),
    );
    assert!(problems(dev).is_empty());
}

#[test]
fn gpu_lost_from_any_call() {
    for call in [
        "nvmlDeviceGetMinorNumber",
        "nvmlDeviceGetTotalEccErrors",
        "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetRemappedRows",
    ] {
        let dev = with(device("Tesla T4", 1, BUS1), "errors", json!({ call: 15 }));
        let p = problems(dev);
        assert_eq!(
            p,
            ["gpu 1 (00000000:86:00.0): GPU is lost (fallen off the bus)"],
            "{call}"
        );
    }
}

#[test]
fn device_nvml_cannot_open() {
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "errors",
        json!({"nvmlDeviceGetHandleByIndex_v2": 999}),
    );
    let p = problems(dev);
    assert_eq!(p.len(), 1, "{p:?}");
    // The bus id comes from the remembered GPU at that index.
    assert!(
        p[0].starts_with("gpu 1 (00000000:86:00.0): NVML cannot open it ("),
        "{p:?}"
    );
}

#[test]
fn unsupported_counters_are_not_faults() {
    let dev = with(
        device("Tesla T4", 1, BUS1),
        "errors",
        json!({"nvmlDeviceGetTotalEccErrors": 3, "nvmlDeviceGetRetiredPagesPendingStatus": 3,
               "nvmlDeviceGetRemappedRows": 3}),
    );
    assert!(problems(dev).is_empty());
}

#[test]
fn a_gpu_that_disappears_is_a_problem_until_it_returns() {
    let both = Fake::new(&two_t4(device("Tesla T4", 1, BUS1))).detect();
    let first = assess(&both.health, &[]);
    assert!(first.healthy());
    let stored = encode_known(&first.known);
    let known = parse_known(Some(&stored)).unwrap();
    assert_eq!(known.len(), 2);

    let one = Fake::new(&config(vec![device("Tesla T4", 0, BUS0)])).detect();
    let report = assess(&one.health, &known);
    assert_eq!(
        report.summary(),
        "gpu 1 (00000000:86:00.0): disappeared since the last check"
    );
    assert_eq!(report.problems[0].fault, Fault::Disappeared);
    // Still remembered: the next check says the same.
    let again = assess(&one.health, &report.known);
    assert_eq!(again.summary(), report.summary());
    // Back: healthy.
    assert!(assess(&both.health, &again.known).healthy());
    assert!(parse_known(Some("not json")).is_err());
    assert!(parse_known(None).unwrap().is_empty());
}

#[test]
fn fake_refuses_unknown_health_keys() {
    let dev = with(device("Tesla T4", 1, BUS1), "health", json!({"ecc": 1}));
    let fake = Fake::new(&two_t4(dev));
    let err = slurm_charms::gpu::detect(&fake.options()).unwrap_err();
    assert!(err.to_string().contains("NVML"), "{err}");
}
