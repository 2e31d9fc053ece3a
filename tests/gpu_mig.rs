//! MIG: instances become `MultipleFiles=` records with Slurm 22.05 types; never `/dev/nvidiaN`.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::gpu::Finding;
use slurm_charms::slurm::types::{GresDevices, MultipleFiles};
use support::{Fake, ci_minor, gi_minor, mig_minors_text};

const MIG_MINORS: &str = "proc/driver/nvidia-caps/mig-minors";

fn caps(g: u32, gi: u32, ci: u32) -> Vec<String> {
    vec![
        format!("/dev/nvidia{g}"),
        format!("/dev/nvidia-caps/nvidia-cap{}", gi_minor(g, gi)),
        format!("/dev/nvidia-caps/nvidia-cap{}", ci_minor(g, gi, ci)),
    ]
}

fn multiple(files: Vec<String>) -> MultipleFiles {
    files.join(",").parse().unwrap()
}

#[test]
fn a100_mig_instances_and_a_plain_a100() {
    let fake = Fake::fixture("a100_mig");
    fake.write_host_file(MIG_MINORS, &mig_minors_text(2));
    let inv = fake.detect();
    assert!(inv.findings.is_empty(), "{:?}", inv.findings);
    let mig = inv.gpus[0].mig.as_ref().unwrap();
    let profiles: Vec<&str> = mig.iter().map(|m| m.profile.as_str()).collect();
    assert_eq!(profiles, ["3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"]);
    assert_eq!(mig[0].slurm_type, "nvidia_a100_3g.20gb");
    assert_eq!(mig[0].uuid, "MIG-3a3a0000-0000-5000-8000-000000000002");
    assert_eq!(mig[0].gpu_instance_id, 2);
    assert_eq!(mig[0].files, multiple(caps(0, 2, 0)));
    assert_eq!(inv.gpus[1].mig, None);

    let gres = inv.gres();
    let lines: Vec<String> = gres.iter().map(|r| support::conf_line(r, "n")).collect();
    let f = |gi| caps(0, gi, 0).join(",");
    assert_eq!(
        lines,
        vec![
            // Whole GPUs first (with Links, as Slurm, its -1 at its load-order index 0), then MIG
            // instances by their files.
            "NodeName=n Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia1 Cores=0-7 Links=-1,0"
                .to_string(),
            format!(
                "NodeName=n Name=gpu Type=nvidia_a100_3g.20gb MultipleFiles={} Cores=0-7",
                f(2)
            ),
            format!(
                "NodeName=n Name=gpu Type=nvidia_a100_2g.10gb MultipleFiles={} Cores=0-7",
                f(3)
            ),
            format!(
                "NodeName=n Name=gpu Type=nvidia_a100_1g.5gb MultipleFiles={} Cores=0-7",
                f(9)
            ),
            format!(
                "NodeName=n Name=gpu Type=nvidia_a100_1g.5gb MultipleFiles={} Cores=0-7",
                f(10)
            ),
        ]
    );
    assert!(gres.iter().all(|r| support::file_spec(r) != "/dev/nvidia0"));
    assert_eq!(
        inv.gres_strings(),
        vec![
            "gpu:nvidia_a100-sxm4-40gb:1",
            "gpu:nvidia_a100_3g.20gb:1",
            "gpu:nvidia_a100_2g.10gb:1",
            "gpu:nvidia_a100_1g.5gb:2",
        ]
    );
}

#[test]
fn h100_mig_with_gaps_between_mig_indexes() {
    let fake = Fake::fixture("h100_mig");
    fake.write_host_file(MIG_MINORS, &mig_minors_text(1));
    let inv = fake.detect();
    assert!(inv.findings.is_empty(), "{:?}", inv.findings);
    let types: Vec<String> = inv
        .gres()
        .iter()
        .filter_map(|r| support::text(&r.gres_type))
        .collect();
    assert_eq!(
        types,
        [
            "nvidia_h100_80gb_hbm3_3g.40gb",
            "nvidia_h100_80gb_hbm3_2g.20gb",
            "nvidia_h100_80gb_hbm3_1g.10gb",
        ]
    );
    let last = &inv.gres()[2];
    assert_eq!(
        last.devices,
        Some(GresDevices::Multiple(multiple(caps(0, 13, 0))))
    );
    assert_eq!(last.device_count(), 1);
}

#[test]
fn mig_mode_without_instances_gives_no_gres_and_a_warning() {
    let fake = Fake::new(
        r#"{"devices":[{"name":"NVIDIA A100-PCIE-40GB","uuid":"GPU-x","pci_bus_id":"00000000:01:00.0",
            "minor":4,"mig":{"current":1,"instances":[]}}]}"#,
    );
    let inv = fake.detect();
    assert_eq!(inv.gpus.len(), 1);
    assert_eq!(inv.gpus[0].mig, Some(vec![]));
    assert!(inv.gres().is_empty());
    assert!(inv.gres_strings().is_empty());
    assert_eq!(
        inv.findings,
        vec![Finding::MigWithoutInstances { index: 0, minor: 4 }]
    );
    assert!(
        inv.findings[0]
            .to_string()
            .contains("MIG mode but has no MIG instances")
    );
}

#[test]
fn missing_mig_minors_skips_the_instance_with_a_reason() {
    let fake = Fake::fixture("h100_mig");
    // no mig-minors file at all
    let inv = fake.detect();
    assert!(inv.gres().is_empty());
    assert_eq!(inv.findings.len(), 4, "{:?}", inv.findings);
    assert!(matches!(
        inv.findings[0],
        Finding::MigInstanceSkipped {
            minor: 0,
            slot: 0,
            ..
        }
    ));
    assert!(inv.findings[0].to_string().contains("gpu0/gi1/access"));
    // zero usable instances is also reported
    assert_eq!(
        inv.findings[3],
        Finding::MigWithoutInstances { index: 0, minor: 0 }
    );
}

#[test]
fn a_failing_mig_instance_is_skipped_and_the_others_kept() {
    let mut cfg: serde_json::Value =
        serde_json::from_str(&support::fixture_text("a100_mig")).unwrap();
    cfg["devices"][0]["mig"]["instances"][1]["errors"] =
        serde_json::json!({"nvmlDeviceGetAttributes_v2": 15});
    let fake = Fake::new(&cfg.to_string());
    fake.write_host_file(MIG_MINORS, &mig_minors_text(2));
    let inv = fake.detect();
    assert_eq!(inv.gpus[0].mig.as_ref().unwrap().len(), 3);
    assert_eq!(inv.findings.len(), 1);
    assert!(matches!(
        inv.findings[0],
        Finding::MigInstanceSkipped {
            minor: 0,
            slot: 1,
            ..
        }
    ));
}

#[test]
fn mig_capable_but_disabled_is_a_plain_gpu() {
    let fake = Fake::new(
        r#"{"devices":[{"name":"NVIDIA H100 PCIe","uuid":"GPU-x","pci_bus_id":"00000000:01:00.0",
            "minor":0,"mig":{"current":0,"pending":1}}]}"#,
    );
    let inv = fake.detect();
    assert_eq!(inv.gpus[0].mig, None);
    assert_eq!(inv.gres_strings(), vec!["gpu:nvidia_h100_pcie:1"]);
}
