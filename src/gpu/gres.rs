//! GRES records (gres.conf lines) and `Gres=` strings from an [`Inventory`].

use serde::Serialize;

use super::links::normalize_bus_id;
use super::model::Inventory;
use super::ranges::compress_ranges;

/// The device files of one gres.conf record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GresFiles {
    /// `File=`: whole GPUs by minor number (sorted, unique); one GRES per device.
    Devices(Vec<u32>),
    /// `MultipleFiles=`: the files of one MIG instance; one GRES in all.
    Multiple(Vec<String>),
}

/// One gres.conf record for `Name=gpu`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GresRecord {
    /// Slurm type (identical in gres.conf `Type=` and slurm.conf `Gres=`).
    pub type_name: String,
    /// Device files.
    pub files: GresFiles,
    /// `Cores=` (Slurm range list like `0-15`), when known.
    pub cores: Option<String>,
    /// `Links=` (`-1,4,4,4`), when known; only on single-device records.
    pub links: Option<String>,
}

impl GresRecord {
    /// How many GRES this record provides.
    pub fn count(&self) -> usize {
        match &self.files {
            GresFiles::Devices(minors) => minors.len(),
            GresFiles::Multiple(_) => 1,
        }
    }

    /// The value of `File=` / `MultipleFiles=`: `/dev/nvidia3`, `/dev/nvidia[0-1,3]`, or the
    /// comma-joined MIG files.
    pub fn file_spec(&self) -> String {
        match &self.files {
            GresFiles::Devices(minors) if minors.len() == 1 => format!("/dev/nvidia{}", minors[0]),
            GresFiles::Devices(minors) => format!("/dev/nvidia[{}]", compress_ranges(minors)),
            GresFiles::Multiple(paths) => paths.join(","),
        }
    }

    /// The key for [`Self::file_spec`]: `File` or `MultipleFiles`.
    pub fn file_key(&self) -> &'static str {
        match &self.files {
            GresFiles::Devices(_) => "File",
            GresFiles::Multiple(_) => "MultipleFiles",
        }
    }

    /// The gres.conf line for `node`:
    /// `NodeName=<node> Name=gpu Type=<type> File=<files>[ Cores=…][ Links=…]`.
    pub fn conf_line(&self, node: &str) -> String {
        let mut line = format!(
            "NodeName={node} Name=gpu Type={} {}={}",
            self.type_name,
            self.file_key(),
            self.file_spec()
        );
        if let Some(cores) = &self.cores {
            line.push_str(&format!(" Cores={cores}"));
        }
        if let Some(links) = &self.links {
            line.push_str(&format!(" Links={links}"));
        }
        line
    }
}

impl Inventory {
    /// The gres.conf records of this node, in the order Slurm ends up with (proven on 22.05,
    /// 24.11 and 26.05 by `tests/gpu_slurm_oracle.rs`, see `docs/gpu-oracle.md`):
    /// - Slurm's own NVML autodetection orders whole GPUs by PCI bus id (NVML's index order,
    ///   which it recovers from the `-1` of each `Links=` row), then MIG instances (no Links) in
    ///   natural order of their files (parent minor, then GPU- and compute-instance caps minors);
    /// - but from an explicit gres.conf, slurmd groups records by the order of the types in
    ///   slurm.conf's `Gres=` (`_merge_config`), file order only within a type.
    ///
    /// So records come in autodetection order, grouped by type (types in order of first
    /// appearance; [`Self::gres_strings`] lists them the same way), which is autodetection's
    /// order exactly unless models or MIG profiles are interleaved. A GPU in MIG mode never
    /// appears as its whole `/dev/nvidiaN`. Consecutive whole GPUs of one type with equal Cores,
    /// no Links and ascending minors share one `File=` range record (only when NVLink is
    /// unknown, i.e. for inventories built without [`super::detect`], which always fills Links).
    pub fn gres(&self) -> Vec<GresRecord> {
        let mut gpus: Vec<_> = self.gpus.iter().collect();
        gpus.sort_by_key(|g| normalize_bus_id(&g.pci_bus_id));
        let mut whole = Vec::new();
        let mut mig = Vec::new();
        for gpu in gpus {
            let cores = gpu.cores.as_deref().map(compress_ranges);
            match &gpu.mig {
                None => whole.push(GresRecord {
                    type_name: gpu.slurm_type.clone(),
                    files: GresFiles::Devices(vec![gpu.minor]),
                    cores,
                    links: gpu
                        .links
                        .as_ref()
                        .map(|l| l.iter().map(i32::to_string).collect::<Vec<_>>().join(",")),
                }),
                Some(instances) => mig.extend(instances.iter().map(|m| GresRecord {
                    type_name: m.slurm_type.clone(),
                    files: GresFiles::Multiple(m.files.clone()),
                    cores: cores.clone(),
                    links: None,
                })),
            }
        }
        mig.sort_by_cached_key(|r| match &r.files {
            GresFiles::Multiple(files) => files
                .iter()
                .map(|f| trailing_number(f))
                .collect::<Vec<u64>>(),
            GresFiles::Devices(minors) => minors.iter().map(|m| u64::from(*m)).collect(),
        });
        let ordered: Vec<GresRecord> = whole.into_iter().chain(mig).collect();
        let mut types: Vec<&str> = Vec::new();
        for r in &ordered {
            if !types.contains(&r.type_name.as_str()) {
                types.push(&r.type_name);
            }
        }
        let grouped = types
            .iter()
            .flat_map(|t| ordered.iter().filter(move |r| r.type_name == *t).cloned());
        let mut out: Vec<GresRecord> = Vec::new();
        for rec in grouped {
            if let Some(last) = out.last_mut()
                && let (GresFiles::Devices(acc), GresFiles::Devices(next)) =
                    (&mut last.files, &rec.files)
                && last.type_name == rec.type_name
                && last.cores == rec.cores
                && last.links.is_none()
                && rec.links.is_none()
                && acc.last() < next.first()
            {
                acc.extend(next);
                continue;
            }
            out.push(rec);
        }
        out
    }

    /// slurm.conf `Gres=` items, one per type in [`Self::gres`] order: `gpu:tesla_t4:2`.
    pub fn gres_strings(&self) -> Vec<String> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for rec in self.gres() {
            match counts.iter_mut().find(|(t, _)| *t == rec.type_name) {
                Some((_, n)) => *n += rec.count(),
                None => counts.push((rec.type_name.clone(), rec.count())),
            }
        }
        counts
            .into_iter()
            .map(|(t, n)| format!("gpu:{t}:{n}"))
            .collect()
    }
}

/// The number at the end of a device path (`/dev/nvidia-caps/nvidia-cap21` → 21; 0 if none).
fn trailing_number(path: &str) -> u64 {
    let digits = path.len() - path.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    path[path.len() - digits..].parse().unwrap_or(0)
}
