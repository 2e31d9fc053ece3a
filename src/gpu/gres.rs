//! The node's GRES records ([`GresLine`]) and `Gres=` items ([`GresSpec`]) from an
//! [`Inventory`]: the slurm vocabulary is built here, once, from NVML facts.

use super::links::normalize_bus_id;
use super::model::Inventory;
use crate::slurm::types::{
    CoreList, DeviceFiles, DevicePath, GresDevices, GresName, GresType, LinksRow,
};
use crate::slurm::{GresLine, GresSpec};

/// One GRES-to-be before grouping.
struct Unit {
    gres_type: GresType,
    devices: GresDevices,
    minors: Vec<u32>,
    cores: Option<CoreList>,
    links: Option<LinksRow>,
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
    /// Last, `Links=` columns are renumbered from NVML indices to this order (`renumber_links`):
    /// slurmctld indexes its links matrix by it.
    pub fn gres(&self) -> Vec<GresLine> {
        let mut gpus: Vec<_> = self.gpus.iter().collect();
        gpus.sort_by_cached_key(|g| normalize_bus_id(&g.pci_bus_id));
        let mut whole = Vec::new();
        let mut mig = Vec::new();
        for gpu in gpus {
            let cores = gpu.cores.clone();
            match &gpu.mig {
                None => whole.push(Unit {
                    gres_type: gpu.slurm_type.clone(),
                    devices: GresDevices::File(DeviceFiles::single(DevicePath::nvidia(gpu.minor))),
                    minors: vec![gpu.minor],
                    cores,
                    links: gpu.links.clone().and_then(|l| LinksRow::new(l).ok()),
                }),
                Some(instances) => mig.extend(instances.iter().map(|m| Unit {
                    gres_type: m.slurm_type.clone(),
                    devices: GresDevices::Multiple(m.files.clone()),
                    minors: Vec::new(),
                    cores: cores.clone(),
                    links: None,
                })),
            }
        }
        mig.sort_by_cached_key(|u| {
            u.devices
                .paths()
                .iter()
                .map(|f| trailing_number(f))
                .collect::<Vec<u64>>()
        });
        let units: Vec<Unit> = whole.into_iter().chain(mig).collect();
        let mut types: Vec<&GresType> = Vec::new();
        for u in &units {
            if !types.contains(&&u.gres_type) {
                types.push(&u.gres_type);
            }
        }
        let mut out: Vec<GresLine> = Vec::new();
        for t in types {
            // (minors, cores) of the File= run being grown: consecutive whole GPUs of one type
            // with equal Cores, no Links and ascending minors.
            let mut run: Option<(Vec<u32>, Option<CoreList>)> = None;
            let flush = |run: &mut Option<(Vec<u32>, Option<CoreList>)>,
                         out: &mut Vec<GresLine>| {
                if let Some((minors, cores)) = run.take()
                    && let Some(files) = DeviceFiles::nvidia(&minors)
                {
                    out.push(GresLine {
                        cores,
                        ..GresLine::gpu(t.clone(), files)
                    });
                }
            };
            for u in units.iter().filter(|u| &u.gres_type == t) {
                let groupable = matches!(u.devices, GresDevices::File(_)) && u.links.is_none();
                match &mut run {
                    Some((minors, cores))
                        if groupable && *cores == u.cores && minors.last() < u.minors.first() =>
                    {
                        minors.extend(&u.minors);
                    }
                    _ if groupable => {
                        flush(&mut run, &mut out);
                        run = Some((u.minors.clone(), u.cores.clone()));
                    }
                    _ => {
                        flush(&mut run, &mut out);
                        out.push(GresLine {
                            gres_type: Some(u.gres_type.clone()),
                            devices: Some(u.devices.clone()),
                            cores: u.cores.clone(),
                            links: u.links.clone(),
                            ..GresLine::new(GresName::gpu())
                        });
                    }
                }
            }
            flush(&mut run, &mut out);
        }
        renumber_links(&mut out);
        out
    }

    /// slurm.conf `Gres=` items, one per type in [`Self::gres`] order: `gpu:tesla_t4:2`.
    pub fn gres_specs(&self) -> Vec<GresSpec> {
        let mut specs: Vec<GresSpec> = Vec::new();
        for rec in self.gres() {
            let Some(t) = rec.gres_type.clone() else {
                continue;
            };
            let n = rec.device_count();
            match specs.iter_mut().find(|s| s.gres_type.as_ref() == Some(&t)) {
                Some(s) => s.count += n,
                None => specs.push(GresSpec::gpu(t, n)),
            }
        }
        specs
    }

    /// [`Self::gres_specs`] as text: `["gpu:tesla_t4:2"]`.
    pub fn gres_strings(&self) -> Vec<String> {
        self.gres_specs().iter().map(ToString::to_string).collect()
    }
}

/// Rewrites every `Links=` row so its columns are the records' bitmap indices instead of NVML
/// indices: slurmctld numbers a node's GPUs in the order slurmd loads the records
/// (`gres_node_config_load`: each `File=` file one index, a `MultipleFiles=` record one) and
/// reads record *i*'s row as row *i* of its links matrix, column *j* being bitmap index *j*
/// (`_links_str2array`, `_foreach_rebuild_topo`). Slurm 24.11+ select GPUs by that matrix
/// (`_pick_gres_topo` in `gres_select_filter.c`), and a `-1` off the diagonal leaves a job asking
/// for every GPU of a regrouped type short of one (docs/slurm-config.md, gres.conf section).
/// So record *i*'s `-1` moves to *i* and its count to the GPU of record *j* to column *j*; the
/// columns of bitmap slots held by MIG instances (no NVLink) are 0. Rows keep their length
/// (NVML's device count, which whole GPUs, always first, cannot exceed). Identity when whole GPUs
/// already come in NVML order ahead of everything else.
fn renumber_links(records: &mut [GresLine]) {
    // (bitmap index, NVML index) of each record with a Links row.
    let mut index = 0;
    let mut slots: Vec<(usize, usize)> = Vec::new();
    for r in records.iter() {
        if let Some(nvml) = r
            .links
            .as_ref()
            .and_then(|l| l.entries().iter().position(|x| *x == -1))
        {
            slots.push((index, nvml));
        }
        index += usize::try_from(r.device_count()).unwrap_or(usize::MAX);
    }
    for r in records.iter_mut() {
        let Some(old) = r.links.as_ref().map(|l| l.entries().to_vec()) else {
            continue;
        };
        let width = slots
            .iter()
            .map(|(b, _)| b + 1)
            .max()
            .unwrap_or(0)
            .max(old.len());
        let mut row = vec![0; width];
        for &(bitmap, nvml) in &slots {
            row[bitmap] = old.get(nvml).copied().unwrap_or(0);
        }
        // One -1 per row by construction: the old row had one, at its own NVML index, which
        // exactly one slot (this record's) maps.
        r.links = LinksRow::new(row).ok().or(r.links.take());
    }
}

/// The number at the end of a device path (`/dev/nvidia-caps/nvidia-cap21` → 21; 0 if none).
fn trailing_number(path: &str) -> u64 {
    let digits = path.len() - path.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    path[path.len() - digits..].parse().unwrap_or(0)
}
