//! GPU sharing from the slurmd `gpu-sharing` config: Slurm's `shard` and `mps` GRES on top of
//! the node's whole GPUs.
//!
//! The option is parsed once, here, into [`GpuSharing`]; [`GpuSharing::records`] turns it into
//! gres.conf records ([`GresLine`]) next to the node's `gpu` records: one
//! `Name=shard Count=N File=/dev/nvidiaX` (or `Name=mps ...`) per whole GPU, in the `gpu`
//! records' order. The node's `Gres=` then carries `shard:K*N` (or `mps:K*N`), and the
//! controller adds the name to `GresTypes`.
//!
//! Rules taken from Slurm's source and docs (22.05, 24.11, 26.05 alike; `docs/slurm-config.md`):
//! - a `Count` is read with `strtoll` and must stay below 2^63-1 (`gres.c`: "invalid count");
//!   gres/mps computes `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` as `request * 100 / count`, so a
//!   node's total times 100 must fit too: [`MAX_SHARES_PER_GPU`] keeps a node of
//!   4096 GPUs (the most one `File=` may name) inside both;
//! - a node links one shared GRES to its `gpu` (`alt_gres_ns`), so shard and mps never share a
//!   node (one option per application makes that so);
//! - MIG instances are already partitions of a GPU, and a shared record names a GPU by its one
//!   `File=`, which MIG records (`MultipleFiles=`) do not have: on a node with MIG instances
//!   nothing is shared ([`SharingOutcome::SkippedMig`]).

use crate::slurm::GresLine;
pub use crate::slurm::types::MAX_SHARES_PER_GPU;
use crate::slurm::types::{DeviceFiles, GresDevices, GresName};
use std::fmt;

/// How the node's GPUs are shared, from the `gpu-sharing` config option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum GpuSharing {
    /// `none` (default): whole GPUs only.
    #[default]
    None,
    /// `shard:N`: N `shard` GRES per GPU (jobs share the GPU without isolation).
    Shard(u64),
    /// `mps:N`: N `mps` GRES per GPU (CUDA MPS; Slurm's convention is 100, i.e. percent).
    Mps(u64),
}

/// Why a `gpu-sharing` value was refused; the text names the option and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config option `gpu-sharing` {value:?}: {rule}")]
pub struct SharingError {
    /// The value as given.
    pub value: String,
    /// The rule it breaks.
    pub rule: String,
}

const FORMS: &str = "expected none, shard:N or mps:N";

impl GpuSharing {
    /// Parses the option: `none` (or empty), `shard:N`, `mps:N` with N a decimal number from 1
    /// to [`MAX_SHARES_PER_GPU`]. Surrounding blanks are ignored; nothing else is.
    pub fn parse(raw: &str) -> Result<GpuSharing, SharingError> {
        let value = raw.trim();
        let bad = |rule: String| SharingError {
            value: value.to_string(),
            rule,
        };
        if value.is_empty() || value == "none" {
            return Ok(GpuSharing::None);
        }
        let Some((kind, n)) = value.split_once(':') else {
            return Err(bad(format!("{FORMS} (N = shares per GPU)")));
        };
        let make: fn(u64) -> GpuSharing = match kind {
            "shard" => GpuSharing::Shard,
            "mps" => GpuSharing::Mps,
            _ => return Err(bad(format!("unknown kind {kind:?}; {FORMS}"))),
        };
        let range = format!("N is a whole number from 1 to {MAX_SHARES_PER_GPU} (shares per GPU)");
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(range));
        }
        match n.parse::<u64>() {
            Ok(count) if (1..=MAX_SHARES_PER_GPU).contains(&count) => Ok(make(count)),
            _ => Err(bad(range)),
        }
    }

    /// The shared GRES name (`shard`, `mps`), `None` for no sharing.
    pub fn gres_name(self) -> Option<GresName> {
        match self {
            GpuSharing::None => None,
            GpuSharing::Shard(_) => Some(GresName::shard()),
            GpuSharing::Mps(_) => Some(GresName::mps()),
        }
    }

    /// Shares per GPU (0 for none).
    pub fn per_gpu(self) -> u64 {
        match self {
            GpuSharing::None => 0,
            GpuSharing::Shard(n) | GpuSharing::Mps(n) => n,
        }
    }

    /// The shared records for a node's `gpu` records: one per whole-GPU device file, in the
    /// `gpu` records' order, `Name=<shard|mps> Count=N File=<that file>`. Nothing when sharing
    /// is off, the node has no GPUs, or any record is a MIG instance.
    pub fn records(self, gpus: &[GresLine]) -> (Vec<GresLine>, SharingOutcome) {
        let Some(name) = self.gres_name() else {
            return (Vec::new(), SharingOutcome::Off);
        };
        let mig = gpus
            .iter()
            .filter(|g| matches!(g.devices, Some(GresDevices::Multiple(_))))
            .count();
        if mig > 0 {
            return (Vec::new(), SharingOutcome::SkippedMig(mig));
        }
        let out: Vec<GresLine> = gpus
            .iter()
            .filter(|g| g.name == "gpu")
            .filter_map(GresLine::files)
            .flat_map(|f| f.files().iter().cloned())
            .map(|file| GresLine {
                devices: Some(GresDevices::File(DeviceFiles::single(file))),
                count: Some(self.per_gpu()),
                ..GresLine::new(name.clone())
            })
            .collect();
        let n = out.len();
        (out, SharingOutcome::Shared(n))
    }
}

impl fmt::Display for GpuSharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuSharing::None => f.write_str("none"),
            GpuSharing::Shard(n) => write!(f, "shard:{n}"),
            GpuSharing::Mps(n) => write!(f, "mps:{n}"),
        }
    }
}

/// What [`GpuSharing::records`] did, for the status and `detect-gpus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharingOutcome {
    /// Sharing is off.
    Off,
    /// This many GPUs are shared.
    Shared(usize),
    /// Not shared: the node has this many MIG instances.
    SkippedMig(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::types::{DevicePath, MAX_DEVICE_FILES, MultipleFiles};

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(GpuSharing::parse("").unwrap(), GpuSharing::None);
        assert_eq!(GpuSharing::parse(" none ").unwrap(), GpuSharing::None);
        assert_eq!(GpuSharing::parse("shard:4").unwrap(), GpuSharing::Shard(4));
        assert_eq!(GpuSharing::parse("mps:100").unwrap(), GpuSharing::Mps(100));
        let max = format!("shard:{MAX_SHARES_PER_GPU}");
        assert_eq!(
            GpuSharing::parse(&max).unwrap().per_gpu(),
            MAX_SHARES_PER_GPU
        );
        assert_eq!(GpuSharing::Mps(100).to_string(), "mps:100");
    }

    #[test]
    fn refuses_bad_values_naming_the_option_and_the_rule() {
        for bad in [
            "shard",
            "shard:",
            "shard:0",
            "shard:-1",
            "shard:+3",
            "shard:1.5",
            "shard:4K",
            "mps:abc",
            "foo:3",
            "SHARD:4",
            "shard:4:1",
            "gpu:2",
            "shard:99999999999999999999",
        ] {
            let e = GpuSharing::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("config option `gpu-sharing`"), "{bad}: {e}");
            assert!(
                e.contains("expected none") || e.contains("N is a whole number"),
                "{bad}: {e}"
            );
        }
        let too_big = format!("mps:{}", MAX_SHARES_PER_GPU + 1);
        let e = GpuSharing::parse(&too_big).unwrap_err().to_string();
        assert!(e.contains(&MAX_SHARES_PER_GPU.to_string()), "{e}");
        // The bound keeps a full node inside Slurm's strtoll count and the mps percentage.
        let node_total = MAX_SHARES_PER_GPU * MAX_DEVICE_FILES as u64;
        assert!(
            node_total
                .checked_mul(100)
                .is_some_and(|t| t < i64::MAX as u64)
        );
    }

    fn gpu(minors: &[u32]) -> GresLine {
        GresLine::gpu(
            "tesla_t4".parse().unwrap(),
            DeviceFiles::nvidia(minors).unwrap(),
        )
    }

    #[test]
    fn one_shared_record_per_gpu_file_in_gpu_order() {
        let gpus = [gpu(&[2]), gpu(&[0, 1])];
        let (recs, outcome) = GpuSharing::Shard(8).records(&gpus);
        assert_eq!(outcome, SharingOutcome::Shared(3));
        let lines = crate::slurm::render::render_gres_records("n", &recs);
        assert_eq!(
            lines,
            [
                "NodeName=n Name=shard File=/dev/nvidia2 Count=8",
                "NodeName=n Name=shard File=/dev/nvidia0 Count=8",
                "NodeName=n Name=shard File=/dev/nvidia1 Count=8",
            ]
        );
        assert_eq!(recs.iter().map(GresLine::device_count).sum::<u64>(), 24);
        let (mps, _) = GpuSharing::Mps(100).records(&gpus[..1]);
        assert_eq!(
            crate::slurm::render::render_gres_records("n", &mps),
            ["NodeName=n Name=mps File=/dev/nvidia2 Count=100"]
        );
        assert_eq!(
            GpuSharing::None.records(&gpus),
            (vec![], SharingOutcome::Off)
        );
        assert_eq!(
            GpuSharing::Shard(2).records(&[]),
            (vec![], SharingOutcome::Shared(0))
        );
    }

    #[test]
    fn mig_nodes_are_not_shared() {
        let files = vec![
            DevicePath::nvidia(0),
            "/dev/nvidia-caps/nvidia-cap21".parse().unwrap(),
        ];
        let mig = GresLine {
            gres_type: Some("nvidia_a100_1g.5gb".parse().unwrap()),
            devices: Some(GresDevices::Multiple(MultipleFiles::new(files).unwrap())),
            ..GresLine::new(GresName::gpu())
        };
        let (recs, outcome) = GpuSharing::Shard(4).records(&[gpu(&[1]), mig]);
        assert!(recs.is_empty());
        assert_eq!(outcome, SharingOutcome::SkippedMig(1));
    }
}
