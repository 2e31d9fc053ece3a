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

/// One GRES-to-be before grouping.
struct Unit {
    type_name: String,
    files: GresFiles,
    cores: Option<String>,
    links: Option<String>,
}

impl Inventory {
    /// The gres.conf records of this node. Types come in order of their lowest PCI bus id; within
    /// a type, devices are taken in PCI order and consecutive devices with the same Cores (and no
    /// Links) share one `File=` range record, so a type whose devices all agree is one line, and
    /// devices that differ (other socket, or any Links) get their own records. Each MIG instance is
    /// its own `MultipleFiles=` record; a GPU in MIG mode never appears as its whole `/dev/nvidiaN`.
    pub fn gres(&self) -> Vec<GresRecord> {
        let mut gpus: Vec<_> = self.gpus.iter().collect();
        gpus.sort_by_key(|g| normalize_bus_id(&g.pci_bus_id));
        let mut units = Vec::new();
        for gpu in gpus {
            let cores = gpu.cores.as_deref().map(compress_ranges);
            match &gpu.mig {
                None => units.push(Unit {
                    type_name: gpu.slurm_type.clone(),
                    files: GresFiles::Devices(vec![gpu.minor]),
                    cores,
                    links: gpu
                        .links
                        .as_ref()
                        .map(|l| l.iter().map(i32::to_string).collect::<Vec<_>>().join(",")),
                }),
                Some(instances) => units.extend(instances.iter().map(|m| Unit {
                    type_name: m.slurm_type.clone(),
                    files: GresFiles::Multiple(m.files.clone()),
                    cores: cores.clone(),
                    links: None,
                })),
            }
        }
        let mut types: Vec<&str> = Vec::new();
        for u in &units {
            if !types.contains(&u.type_name.as_str()) {
                types.push(&u.type_name);
            }
        }
        let mut out: Vec<GresRecord> = Vec::new();
        for t in types {
            let mut run: Option<GresRecord> = None;
            for u in units.iter().filter(|u| u.type_name == t) {
                let GresFiles::Devices(minors) = &u.files else {
                    out.extend(run.take());
                    out.push(to_record(u));
                    continue;
                };
                match &mut run {
                    Some(r) if r.cores == u.cores && r.links == u.links && u.links.is_none() => {
                        if let GresFiles::Devices(acc) = &mut r.files {
                            acc.extend(minors);
                            acc.sort_unstable();
                            acc.dedup();
                        }
                    }
                    _ => {
                        out.extend(run.take());
                        run = Some(to_record(u));
                    }
                }
            }
            out.extend(run);
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

fn to_record(u: &Unit) -> GresRecord {
    GresRecord {
        type_name: u.type_name.clone(),
        files: u.files.clone(),
        cores: u.cores.clone(),
        links: u.links.clone(),
    }
}
