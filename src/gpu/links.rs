//! NVLink topology → Slurm `Links=` matrix (slurm-gres.md §3.2, 22.05 `_nvml_get_nvlink_info`).
//!
//! For each GPU, one entry per GPU of the node in PCI bus id order: `-1` for itself, otherwise
//! the number of its active NVLinks whose remote PCI bus id is that GPU. Links to an NVSwitch
//! have a switch as remote, so — exactly like Slurm's NVML plugin — they count for no GPU: on an
//! 8-GPU NVSwitch board (HGX/DGX) every entry is `0` except the `-1`.

/// Normalises a PCI bus id for comparison: lowercase, 4-digit domain (`0000:3b:00.0`).
pub fn normalize_bus_id(id: &str) -> String {
    let lower = id.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((domain, rest)) => {
            let d = u32::from_str_radix(domain, 16).unwrap_or(0);
            format!("{d:04x}:{rest}")
        }
        None => lower,
    }
}

/// Builds the matrix row of the GPU at position `me` in `bus_ids` (PCI-sorted, normalised) from
/// the remote bus ids of its active links. Each remote is normalised once (an 8-GPU NVSwitch
/// board has 18 links per GPU: normalising per peer was 1,000 formatted strings per detection).
pub fn links_row(bus_ids: &[String], me: usize, remotes: &[String]) -> Vec<i32> {
    let remotes: Vec<String> = remotes.iter().map(|r| normalize_bus_id(r)).collect();
    bus_ids
        .iter()
        .enumerate()
        .map(|(j, peer)| {
            if j == me {
                -1
            } else {
                remotes.iter().filter(|r| *r == peer).count() as i32
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::normalize_bus_id;

    #[test]
    fn normalises_nvml_and_sysfs_forms() {
        assert_eq!(normalize_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
        assert_eq!(normalize_bus_id("0000:3b:00.0"), "0000:3b:00.0");
        assert_eq!(normalize_bus_id("00000001:07:00.0"), "0001:07:00.0");
    }
}
