//! Detection through nvml-wrapper against per-test copies of the fake NVML.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::gpu::{GresFiles, GresRecord};
use support::{Fake, config, device};

#[test]
fn two_t4_make_one_grouped_record() {
    let fake = Fake::fixture("two_t4");
    let inv = fake.detect();
    assert_eq!(inv.gpus.len(), 2);
    assert_eq!(inv.driver_version.as_deref(), Some("550.54.15"));
    assert_eq!(inv.cuda_version.as_deref(), Some("12.4"));
    assert!(inv.findings.is_empty(), "{:?}", inv.findings);
    let g = &inv.gpus[0];
    assert_eq!(g.name, "Tesla T4");
    assert_eq!(g.slurm_type, "tesla_t4");
    assert_eq!(g.pci_bus_id, "00000000:3B:00.0");
    assert_eq!(g.memory_total_bytes, Some(16106127360));
    assert_eq!(g.cores, Some(vec![0, 1]));
    assert_eq!(g.links, None);
    assert_eq!(g.mig, None);
    assert_eq!(
        inv.gres(),
        vec![GresRecord {
            type_name: "tesla_t4".into(),
            files: GresFiles::Devices(vec![0, 1]),
            cores: Some("0-1".into()),
            links: None,
        }]
    );
    assert_eq!(inv.gres()[0].file_spec(), "/dev/nvidia[0-1]");
    assert_eq!(inv.gres_strings(), vec!["gpu:tesla_t4:2"]);
}

#[test]
fn zero_devices_is_an_empty_inventory() {
    let fake = Fake::new(&config(vec![]));
    let inv = fake.detect();
    assert!(inv.gpus.is_empty());
    assert!(inv.gres().is_empty());
    assert!(inv.findings.is_empty());
}

#[test]
fn device_file_comes_from_the_minor_not_the_index() {
    let fake = Fake::new(&config(vec![
        device("NVIDIA L4", 3, "00000000:01:00.0"),
        device("NVIDIA L4", 0, "00000000:02:00.0"),
        device("NVIDIA L4", 7, "00000000:03:00.0"),
    ]));
    let inv = fake.detect();
    assert_eq!(
        inv.gpus.iter().map(|g| g.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(inv.gpus[0].device_file(), "/dev/nvidia3");
    let gres = inv.gres();
    assert_eq!(gres.len(), 1);
    assert_eq!(gres[0].file_spec(), "/dev/nvidia[0,3,7]");
    assert_eq!(gres[0].count(), 3);
}
