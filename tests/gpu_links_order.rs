//! `Links=` columns follow the order slurmd loads the records, not NVML's index.
//!
//! slurmctld keeps a node's GPUs in one bitmap, numbered in the order slurmd loaded the gres.conf
//! records (type by type, `_merge_config`; `gres_node_config_load` numbers the files), and reads
//! each record's `Links=` row as row *i* of a links matrix whose column *j* is bitmap index *j*
//! (`_links_str2array`). Slurm 24.11+ pick GPUs for a job by that matrix
//! (`_pick_gres_topo`/`_update_and_sort_by_links`, `gres_select_filter.c`): a `-1` anywhere but on
//! the diagonal makes another GPU of the job look "self", so a job asking for every GPU of a type
//! whose records were regrouped (interleaved models) stays pending on 26.05 (`_set_node_bits:
//! Insufficient gres/gpu allocated`) or is refused its step on 24.11. The rule: in the records'
//! order, record *i*'s `-1` is at *i*, and column *j* holds its NVLink count to record *j*'s GPU.
//! Proven against real Slurm by `tests/gpu_slurm_oracle.rs` (load order) and `tests/e2e_enlist.rs`.

#[path = "fixtures/gpu/support.rs"]
mod support;

use slurm_charms::gpu::Inventory;
use slurm_charms::slurm::types::GresDevices;
use support::{Fake, config, device};

/// Every fixture, read from the directory so a new one cannot be left out.
fn fixtures() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .into_string()
                .ok()?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect();
    out.sort();
    out
}

/// (bitmap index, minor, Links row) of each whole-GPU record with Links, in record order.
fn rows(inv: &Inventory) -> Vec<(usize, u32, Vec<i32>)> {
    let mut index = 0;
    let mut out = Vec::new();
    for r in inv.gres() {
        let n = r.device_count() as usize;
        if let (Some(links), Some(GresDevices::File(f))) = (&r.links, &r.devices) {
            assert_eq!(n, 1, "a record with Links names one GPU: {r:?}");
            let path = f.files()[0].to_string();
            let minor = path.trim_start_matches("/dev/nvidia").parse().unwrap();
            out.push((index, minor, links.entries().to_vec()));
        }
        index += n;
    }
    out
}

#[test]
fn every_links_row_is_diagonal_in_load_order_and_keeps_nvml_link_counts() {
    let mut checked = 0;
    for name in fixtures() {
        let inv = Fake::fixture(&name).detect();
        // NVML's own rows, by minor: column k is the GPU with NVML index k (PCI order).
        let mut by_bus: Vec<_> = inv.gpus.iter().collect();
        by_bus.sort_by_key(|g| g.pci_bus_id.to_ascii_lowercase());
        let nvml_row = |minor: u32| {
            inv.gpus
                .iter()
                .find(|g| g.minor == minor)
                .and_then(|g| g.links.clone())
                .unwrap()
        };
        let nvml_index = |minor: u32| by_bus.iter().position(|g| g.minor == minor).unwrap();
        let rows = rows(&inv);
        for (i, minor, row) in &rows {
            assert_eq!(
                row.iter().position(|l| *l == -1),
                Some(*i),
                "{name}: /dev/nvidia{minor} is GPU {i} in load order, its Links row {row:?} says otherwise"
            );
            for (j, other, _) in &rows {
                assert_eq!(
                    row[*j],
                    nvml_row(*minor)[nvml_index(*other)],
                    "{name}: link count /dev/nvidia{minor} -> /dev/nvidia{other} (column {j})"
                );
            }
            // Columns past the whole GPUs (MIG instances' bitmap slots) carry no link.
            assert!(
                row.iter()
                    .enumerate()
                    .all(|(k, l)| rows.iter().any(|(j, _, _)| *j == k) || *l == 0),
                "{name}: /dev/nvidia{minor}: {row:?}"
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} rows checked");
}

#[test]
fn shuffled_minors_a100s_come_first_with_their_own_diagonal() {
    let inv = Fake::fixture("interleaved_models_shuffled_minors").detect();
    let got: Vec<(u32, Vec<i32>)> = rows(&inv).into_iter().map(|(_, m, r)| (m, r)).collect();
    assert_eq!(
        got,
        vec![
            (3, vec![-1, 0, 0, 0, 0, 0]),
            (1, vec![0, -1, 0, 0, 0, 0]),
            (2, vec![0, 0, -1, 0, 0, 0]),
            (0, vec![0, 0, 0, -1, 0, 0]),
            (5, vec![0, 0, 0, 0, -1, 0]),
            (4, vec![0, 0, 0, 0, 0, -1]),
        ]
    );
}

#[test]
fn nvlink_counts_follow_their_peers_when_types_are_regrouped() {
    // PCI (NVML) order A100 a, H100 b, A100 c; NVLink a-b 1, a-c 2, b-c 3. Loaded: a, c, b.
    let mut a = device("NVIDIA A100-SXM4-80GB", 0, "00000000:01:00.0");
    let mut b = device("NVIDIA H100 80GB HBM3", 1, "00000000:02:00.0");
    let mut c = device("NVIDIA A100-SXM4-80GB", 2, "00000000:03:00.0");
    a["nvlinks"] = serde_json::json!(["00000000:02:00.0", "00000000:03:00.0", "00000000:03:00.0"]);
    b["nvlinks"] = serde_json::json!([
        "00000000:01:00.0",
        "00000000:03:00.0",
        "00000000:03:00.0",
        "00000000:03:00.0"
    ]);
    c["nvlinks"] = serde_json::json!([
        "00000000:01:00.0",
        "00000000:01:00.0",
        "00000000:02:00.0",
        "00000000:02:00.0",
        "00000000:02:00.0"
    ]);
    let inv = Fake::new(&config(vec![a, b, c])).detect();
    assert_eq!(inv.gpus[0].links, Some(vec![-1, 1, 2]), "NVML's own row");
    let got: Vec<(u32, Vec<i32>)> = rows(&inv).into_iter().map(|(_, m, r)| (m, r)).collect();
    assert_eq!(
        got,
        vec![
            (0, vec![-1, 2, 1]),
            (2, vec![2, -1, 3]),
            (1, vec![1, 3, -1])
        ]
    );
}
