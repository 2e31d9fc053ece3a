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
    /// The gres.conf records of this node. Types come in order of their lowest PCI bus id; within
    /// a type, devices are taken in PCI order and consecutive devices with the same Cores (and no
    /// Links) share one `File=` range record, so a type whose devices all agree is one line, and
    /// devices that differ (other socket, or any Links) get their own records. Each MIG instance is
    /// its own `MultipleFiles=` record; a GPU in MIG mode never appears as its whole `/dev/nvidiaN`.
    pub fn gres(&self) -> Vec<GresLine> {
        let mut gpus: Vec<_> = self.gpus.iter().collect();
        gpus.sort_by_key(|g| normalize_bus_id(&g.pci_bus_id));
        let mut units = Vec::new();
        for gpu in gpus {
            let cores = gpu.cores.as_deref().and_then(CoreList::from_ids);
            match &gpu.mig {
                None => units.push(Unit {
                    gres_type: gpu.slurm_type.clone(),
                    devices: GresDevices::File(DeviceFiles::single(DevicePath::nvidia(gpu.minor))),
                    minors: vec![gpu.minor],
                    cores,
                    links: gpu.links.clone().and_then(|l| LinksRow::new(l).ok()),
                }),
                Some(instances) => units.extend(instances.iter().map(|m| Unit {
                    gres_type: m.slurm_type.clone(),
                    devices: GresDevices::Multiple(m.files.clone()),
                    minors: Vec::new(),
                    cores: cores.clone(),
                    links: None,
                })),
            }
        }
        let mut types: Vec<&GresType> = Vec::new();
        for u in &units {
            if !types.contains(&&u.gres_type) {
                types.push(&u.gres_type);
            }
        }
        let mut out: Vec<GresLine> = Vec::new();
        for t in types {
            // (minors, cores) of the File= run being grown.
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
                    Some((minors, cores)) if groupable && *cores == u.cores => {
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
