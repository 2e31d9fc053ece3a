//! Real NVML names → Slurm types (slurm-gres.md §3.1), through detection and the pure function.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::gpu::{mig_profile, mig_type, slurm_type};
use support::{Fake, config, device};

/// (NVML name, Slurm 22.05 AutoDetect type).
const NAMES: &[(&str, &str)] = &[
    ("Tesla T4", "tesla_t4"),
    ("Tesla V100-SXM2-32GB", "tesla_v100-sxm2-32gb"),
    ("NVIDIA A100-PCIE-40GB", "nvidia_a100-pcie-40gb"),
    ("NVIDIA A100-SXM4-40GB", "nvidia_a100-sxm4-40gb"),
    ("NVIDIA A100-SXM4-80GB", "nvidia_a100-sxm4-80gb"),
    ("NVIDIA A100 80GB PCIe", "nvidia_a100_80gb_pcie"),
    ("NVIDIA H100 PCIe", "nvidia_h100_pcie"),
    ("NVIDIA H100 80GB HBM3", "nvidia_h100_80gb_hbm3"),
    ("NVIDIA H100 NVL", "nvidia_h100_nvl"),
    ("NVIDIA H200", "nvidia_h200"),
    ("NVIDIA L4", "nvidia_l4"),
    ("NVIDIA L40S", "nvidia_l40s"),
    ("NVIDIA A10", "nvidia_a10"),
    ("NVIDIA B200", "nvidia_b200"),
    (
        "NVIDIA RTX 6000 Ada Generation",
        "nvidia_rtx_6000_ada_generation",
    ),
];

#[test]
fn table_of_real_names() {
    for (name, ty) in NAMES {
        assert_eq!(slurm_type(name), *ty, "{name}");
    }
}

#[test]
fn only_ascii_case_and_single_spaces_change() {
    assert_eq!(slurm_type("A  B"), "a__b");
    assert_eq!(slurm_type(" X.Y-Z "), "_x.y-z_");
    assert_eq!(slurm_type("Tab\tÄ"), "tab\tÄ");
}

#[test]
fn every_table_name_through_the_fake() {
    let devices = NAMES
        .iter()
        .enumerate()
        .map(|(i, (name, _))| device(name, i as u32, &format!("00000000:{:02X}:00.0", i + 1)))
        .collect();
    let fake = Fake::new(&config(devices));
    let inv = fake.detect();
    let got: Vec<&str> = inv.gpus.iter().map(|g| g.slurm_type.as_str()).collect();
    let want: Vec<&str> = NAMES.iter().map(|(_, t)| *t).collect();
    assert_eq!(got, want);
    // one record per type, in PCI order
    let gres: Vec<String> = inv.gres_strings();
    assert_eq!(gres.len(), NAMES.len());
    assert_eq!(gres[0], "gpu:tesla_t4:1");
    assert_eq!(gres[14], "gpu:nvidia_rtx_6000_ada_generation:1");
}

#[test]
fn mig_types_follow_slurm_23_02_and_later() {
    // parent cut at the first '-', then _<profile>; the profile from the MIG device's name
    let named = |name: &str| mig_profile(Some(name), 0, 0, 0);
    assert_eq!(named("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "1g.5gb");
    assert_eq!(named("NVIDIA A100-SXM4-80GB MIG 1c.3g.40gb"), "1c.3g.40gb");
    assert_eq!(
        mig_type(
            "NVIDIA A100-SXM4-40GB",
            &named("NVIDIA A100-SXM4-40GB MIG 1g.5gb")
        ),
        "nvidia_a100_1g.5gb"
    );
    assert_eq!(
        mig_type("NVIDIA A100 80GB PCIe", "1g.10gb"),
        "nvidia_a100_80gb_pcie_1g.10gb"
    );
    // no profile in the name: from the attributes, MB rounded up, `<ci>c.` when fewer slices
    assert_eq!(
        mig_profile(Some("NVIDIA H100 80GB HBM3 MIG"), 3, 3, 40448),
        "3g.40gb"
    );
    assert_eq!(mig_profile(None, 1, 1, 4864), "1g.5gb");
    assert_eq!(mig_profile(None, 7, 7, 4607), "7g.5gb");
    assert_eq!(mig_profile(None, 7, 7, 4096), "7g.4gb");
    assert_eq!(mig_profile(None, 3, 1, 19968), "1c.3g.20gb");
}
