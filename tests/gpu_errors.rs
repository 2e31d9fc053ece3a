//! Every error path: no driver, reboot required, permission, failing devices.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::gpu::{DetectOptions, Finding, GpuError, detect};
use support::{Fake, config, device};

/// sysfs PCI devices: two NVIDIA GPUs (VGA and 3D class), plus devices that must not count.
fn write_sysfs(fake: &Fake) {
    let devs = [
        ("0000:3b:00.0", "0x10de", "0x030200"), // NVIDIA 3D controller
        ("0000:af:00.0", "0x10de", "0x030000"), // NVIDIA VGA
        ("0000:af:00.1", "0x10de", "0x040300"), // NVIDIA HDMI audio
        ("0000:05:00.0", "0x10de", "0x068000"), // NVSwitch bridge
        ("0000:00:02.0", "0x8086", "0x030000"), // Intel VGA
    ];
    for (addr, vendor, class) in devs {
        fake.write_host_file(
            &format!("sys/bus/pci/devices/{addr}/vendor"),
            &format!("{vendor}\n"),
        );
        fake.write_host_file(
            &format!("sys/bus/pci/devices/{addr}/class"),
            &format!("{class}\n"),
        );
    }
}

#[test]
fn library_missing_is_zero_gpus() {
    let fake = Fake::new("{}");
    let opts = DetectOptions {
        nvml_lib: Some(fake.dir.path().join("nowhere/libnvidia-ml.so.1")),
        host_root: fake.root.clone(),
    };
    let inv = detect(&opts).unwrap();
    assert!(inv.gpus.is_empty());
    assert!(inv.findings.is_empty());
    assert_eq!(inv.driver_version, None);
}

#[test]
fn library_missing_with_nvidia_pci_devices_reports_driver_not_loaded() {
    let fake = Fake::new("{}");
    write_sysfs(&fake);
    let opts = DetectOptions {
        nvml_lib: Some(fake.dir.path().join("nowhere/libnvidia-ml.so.1")),
        host_root: fake.root.clone(),
    };
    let inv = detect(&opts).unwrap();
    assert!(inv.gpus.is_empty());
    assert_eq!(inv.findings, vec![Finding::DriverNotLoaded { present: 2 }]);
    assert_eq!(
        inv.findings[0].to_string(),
        "2 NVIDIA GPUs present but the driver is not loaded"
    );
    assert!(inv.findings[0].is_blocking());
}

#[test]
fn driver_not_loaded_without_devices_is_silent() {
    let inv = Fake::new(r#"{"init_error": 9}"#).detect();
    assert!(inv.gpus.is_empty());
    assert!(inv.findings.is_empty());
}

#[test]
fn driver_not_loaded_with_devices_is_a_blocking_finding() {
    let fake = Fake::new(r#"{"init_error": 9, "devices": []}"#);
    write_sysfs(&fake);
    let inv = fake.detect();
    assert!(inv.gpus.is_empty());
    assert_eq!(inv.findings, vec![Finding::DriverNotLoaded { present: 2 }]);
}

#[test]
fn rm_version_mismatch_means_reboot_required() {
    let inv = Fake::new(r#"{"init_error": 18}"#).detect();
    assert!(inv.gpus.is_empty());
    assert_eq!(inv.findings, vec![Finding::RebootRequired]);
    assert!(inv.findings[0].to_string().contains("reboot required"));
    assert!(inv.findings[0].is_blocking());
}

#[test]
fn no_permission_at_init_is_an_error() {
    let fake = Fake::new(r#"{"init_error": 4}"#);
    let err = detect(&fake.options()).unwrap_err();
    assert!(matches!(err, GpuError::NoPermission), "{err:?}");
    assert!(err.to_string().contains("/dev/nvidiactl"), "{err}");
}

#[test]
fn no_permission_when_counting_is_an_error() {
    let fake = Fake::new(r#"{"errors": {"nvmlDeviceGetCount_v2": 4}}"#);
    assert!(matches!(
        detect(&fake.options()),
        Err(GpuError::NoPermission)
    ));
}

#[test]
fn other_init_failures_are_errors_with_the_nvml_reason() {
    let fake = Fake::new(r#"{"init_error": 999}"#);
    let err = detect(&fake.options()).unwrap_err();
    assert!(matches!(err, GpuError::Init(_)), "{err:?}");
    assert!(err.to_string().contains("nvidia-smi"), "{err}");
}

#[test]
fn count_failure_is_an_error() {
    let fake = Fake::new(r#"{"errors": {"nvmlDeviceGetCount_v2": 15}}"#);
    assert!(matches!(
        detect(&fake.options()),
        Err(GpuError::DeviceCount(_))
    ));
}

#[test]
fn a_library_that_is_not_nvml_is_a_broken_library_error() {
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libm");
    let opts = DetectOptions {
        nvml_lib: Some(libm.into()),
        host_root: "/nonexistent".into(),
    };
    let err = detect(&opts).unwrap_err();
    assert!(matches!(err, GpuError::BrokenLibrary(_)), "{err:?}");
    assert!(err.to_string().contains("nvmlInit_v2"), "{err}");
}

#[test]
fn an_invalid_fake_config_is_not_silently_zero_gpus() {
    let fake = Fake::new(r#"{"devices": [{"name": 1}]}"#);
    assert!(detect(&fake.options()).is_err());
}

#[test]
fn a_device_failing_mid_enumeration_is_skipped_and_reported() {
    let mut bad = device("Tesla T4", 1, "00000000:02:00.0");
    bad["errors"] = serde_json::json!({"nvmlDeviceGetMinorNumber": 15});
    let fake = Fake::new(&config(vec![
        device("Tesla T4", 0, "00000000:01:00.0"),
        bad,
        device("Tesla T4", 2, "00000000:03:00.0"),
    ]));
    let inv = fake.detect();
    assert_eq!(inv.gpus.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 2]);
    let files: Vec<String> = inv.gres().iter().map(support::file_spec).collect();
    assert_eq!(files, ["/dev/nvidia0", "/dev/nvidia2"]);
    assert_eq!(inv.findings.len(), 1);
    let Finding::DeviceSkipped { index, reason } = &inv.findings[0] else {
        panic!("{:?}", inv.findings)
    };
    assert_eq!(*index, 1);
    assert!(reason.contains("minor number"), "{reason}");
    assert!(inv.findings[0].to_string().starts_with("GPU 1 skipped: "));
    assert!(!inv.findings[0].is_blocking());
}

#[test]
fn a_device_whose_handle_fails_is_skipped() {
    let mut bad = device("Tesla T4", 0, "00000000:01:00.0");
    bad["errors"] = serde_json::json!({"nvmlDeviceGetHandleByIndex_v2": 15});
    let fake = Fake::new(&config(vec![
        bad,
        device("Tesla T4", 1, "00000000:02:00.0"),
    ]));
    let inv = fake.detect();
    assert_eq!(inv.gpus.len(), 1);
    assert!(matches!(
        inv.findings[0],
        Finding::DeviceSkipped { index: 0, .. }
    ));
}

#[test]
fn unsupported_optional_queries_keep_the_device() {
    let fake = Fake::new(
        r#"{"driver_version": null, "cuda_driver_version": null,
            "errors": {"nvmlDeviceGetMemoryInfo_v2": 3, "nvmlDeviceGetCpuAffinity": 3},
            "devices": [{"name": "NVIDIA L4", "uuid": "GPU-1", "pci_bus_id": "00000000:01:00.0",
                         "minor": 0, "cpu_affinity": [0]}]}"#,
    );
    let inv = fake.detect();
    assert_eq!(inv.gpus.len(), 1);
    assert_eq!(inv.gpus[0].memory_total_bytes, None);
    assert_eq!(inv.gpus[0].cores, None);
    assert_eq!(inv.driver_version, None);
    assert_eq!(inv.cuda_version, None);
    assert!(inv.findings.is_empty());
}
