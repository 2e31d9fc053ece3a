//! NVLink → Slurm `Links=` (slurm-gres.md §3.2): -1 self, n links per GPU peer, switches count 0.

#[path = "fixtures/gpu/support.rs"]
mod support;

use support::{Fake, config, device};

#[test]
fn four_gpu_all_to_all_gives_four_links_per_peer() {
    let inv = Fake::fixture("a100_sxm4_4x_nvlink").detect();
    let rows: Vec<Vec<i32>> = inv.gpus.iter().map(|g| g.links.clone().unwrap()).collect();
    assert_eq!(
        rows,
        vec![
            vec![-1, 4, 4, 4],
            vec![4, -1, 4, 4],
            vec![4, 4, -1, 4],
            vec![4, 4, 4, -1],
        ]
    );
    let lines: Vec<String> = inv
        .gres()
        .iter()
        .map(|r| support::conf_line(r, "n"))
        .collect();
    assert_eq!(
        lines,
        vec![
            "NodeName=n Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia0 Cores=0-15 Links=-1,4,4,4",
            "NodeName=n Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia1 Cores=16-31 Links=4,-1,4,4",
            "NodeName=n Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia2 Cores=32-47 Links=4,4,-1,4",
            "NodeName=n Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia3 Cores=48-63 Links=4,4,4,-1",
        ]
    );
    assert_eq!(inv.gres_strings(), vec!["gpu:nvidia_a100-sxm4-40gb:4"]);
}

#[test]
fn eight_gpu_nvswitch_links_reach_switches_so_slurm_sees_none() {
    let inv = Fake::fixture("h100_sxm_8x_nvswitch").detect();
    assert_eq!(inv.gpus.len(), 8);
    assert_eq!(inv.gpus[0].nvlink_remotes.len(), 18);
    assert_eq!(inv.gpus[0].links, Some(vec![-1, 0, 0, 0, 0, 0, 0, 0]));
    assert_eq!(inv.gpus[5].links, Some(vec![0, 0, 0, 0, 0, -1, 0, 0]));
    let gres = inv.gres();
    assert_eq!(gres.len(), 8, "Links differ per device, so one record each");
    assert_eq!(
        support::text(&gres[0].cores).as_deref(),
        Some("0-55,112-167")
    );
    assert_eq!(
        support::text(&gres[7].cores).as_deref(),
        Some("56-111,168-223")
    );
    assert_eq!(
        support::text(&gres[7].links).as_deref(),
        Some("0,0,0,0,0,0,0,-1")
    );
    assert_eq!(inv.gres_strings(), vec!["gpu:nvidia_h100_80gb_hbm3:8"]);
}

#[test]
fn links_follow_pci_order_not_nvml_index() {
    // NVML index 0 sits at the higher bus id: its own -1 is in position 1
    let mut a = device("NVIDIA A100-SXM4-80GB", 0, "00000000:81:00.0");
    let mut b = device("NVIDIA A100-SXM4-80GB", 1, "00000000:01:00.0");
    a["nvlinks"] = serde_json::json!(["00000000:01:00.0", "00000000:01:00.0", null]);
    b["nvlinks"] = serde_json::json!(["0000:81:00.0", "0000:81:00.0", null]);
    let inv = Fake::new(&config(vec![a, b])).detect();
    assert_eq!(inv.gpus[0].links, Some(vec![2, -1]));
    assert_eq!(inv.gpus[1].links, Some(vec![-1, 2]));
    let specs: Vec<(String, Option<String>)> = inv
        .gres()
        .iter()
        .map(|r| (support::file_spec(r), support::text(&r.links)))
        .collect();
    assert_eq!(
        specs,
        vec![
            ("/dev/nvidia1".to_string(), Some("-1,2".to_string())),
            ("/dev/nvidia0".to_string(), Some("2,-1".to_string())),
        ]
    );
}

#[test]
fn nvlink_not_supported_gives_rows_without_links_as_slurm_does() {
    let inv = Fake::fixture("two_t4").detect();
    let rows: Vec<_> = inv.gpus.iter().map(|g| g.links.clone()).collect();
    assert_eq!(rows, [Some(vec![-1, 0]), Some(vec![0, -1])]);
}

#[test]
fn nvlink_state_errors_count_as_no_links_for_that_gpu() {
    let mut a = device("NVIDIA A100-SXM4-80GB", 0, "00000000:01:00.0");
    let mut b = device("NVIDIA A100-SXM4-80GB", 1, "00000000:02:00.0");
    a["nvlinks"] = serde_json::json!(["00000000:02:00.0"]);
    b["nvlinks"] = serde_json::json!(["00000000:01:00.0"]);
    b["errors"] = serde_json::json!({"nvmlDeviceGetNvLinkState": 3});
    let inv = Fake::new(&config(vec![a, b])).detect();
    assert_eq!(inv.gpus[0].links, Some(vec![-1, 1]));
    assert_eq!(inv.gpus[1].links, Some(vec![0, -1]));
}

#[test]
fn a_gpu_in_mig_mode_has_no_links_but_counts_in_the_rows() {
    let mut a = device("NVIDIA A100-SXM4-80GB", 0, "00000000:01:00.0");
    let mut b = device("NVIDIA A100-SXM4-80GB", 1, "00000000:02:00.0");
    a["nvlinks"] = serde_json::json!(["00000000:02:00.0"]);
    b["nvlinks"] = serde_json::json!(["00000000:01:00.0"]);
    b["mig"] = serde_json::json!({"current": 1, "instances": []});
    let inv = Fake::new(&config(vec![a, b])).detect();
    assert_eq!(inv.gpus[0].links, Some(vec![-1, 1]));
    assert_eq!(inv.gpus[1].links, None);
    assert_eq!(inv.gpus[0].nvlink_remotes, vec!["00000000:02:00.0"]);
}
