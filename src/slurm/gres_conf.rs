//! The gres.conf model: a global `AutoDetect`, global `Name=` records and per-node records.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use std::collections::HashMap;

use super::error::ConfigError;
use super::types::{
    CoreList, DeviceFiles, GresCount, GresDevices, GresFlags, GresName, GresType, LinksRow,
    MultipleFiles, NodeName,
};
use super::validate::validate_key;

/// `AutoDetect` values (22.05: nvml, rsmi, oneapi, off; newer: nrt, nvidia).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AutoDetect {
    /// `nvml` (22.05 needs the contrib nvml plugin).
    Nvml,
    /// `rsmi`.
    Rsmi,
    /// `oneapi`.
    Oneapi,
    /// `nrt` (23.11+).
    Nrt,
    /// `nvidia` (24.11+; ignored by 22.05).
    Nvidia,
    /// `off`.
    Off,
}

impl AutoDetect {
    /// Lower-case spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AutoDetect::Nvml => "nvml",
            AutoDetect::Rsmi => "rsmi",
            AutoDetect::Oneapi => "oneapi",
            AutoDetect::Nrt => "nrt",
            AutoDetect::Nvidia => "nvidia",
            AutoDetect::Off => "off",
        }
    }

    /// Parses a value (case-insensitive, exact).
    pub fn parse(value: &str) -> Result<AutoDetect, ConfigError> {
        [
            AutoDetect::Nvml,
            AutoDetect::Rsmi,
            AutoDetect::Oneapi,
            AutoDetect::Nrt,
            AutoDetect::Nvidia,
            AutoDetect::Off,
        ]
        .into_iter()
        .find(|a| a.as_str().eq_ignore_ascii_case(value))
        .ok_or_else(|| {
            ConfigError::invalid(
                "AutoDetect",
                value,
                "expected nvml, rsmi, oneapi, nrt, nvidia or off",
            )
        })
    }
}

impl fmt::Display for AutoDetect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One gres.conf record (without its NodeName, which is the key it is stored under): the one
/// GRES record type. NVML inventory produces it ([`crate::gpu::Inventory::gres`]), the `node`
/// relation record carries it (serialised with gres.conf's key names, see
/// `super::gres_wire`), the parser reads it and the renderer writes it. Every field is a
/// vocabulary type, so the renderer writes it without checking values again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GresLine {
    /// `Name` (e.g. `gpu`).
    pub name: GresName,
    /// `Type` (byte-identical to slurm.conf `Gres=` type).
    pub gres_type: Option<GresType>,
    /// `File` or `MultipleFiles` (never both).
    pub devices: Option<GresDevices>,
    /// `Count`.
    pub count: Option<u64>,
    /// `Cores`.
    pub cores: Option<CoreList>,
    /// `Links` (one entry per GPU index; exactly one `-1`).
    pub links: Option<LinksRow>,
    /// `Flags`.
    pub flags: GresFlags,
}

impl GresLine {
    /// A record of `name` with nothing else set.
    pub fn new(name: GresName) -> GresLine {
        GresLine {
            name,
            gres_type: None,
            devices: None,
            count: None,
            cores: None,
            links: None,
            flags: GresFlags::default(),
        }
    }

    /// A typed GPU record with device files (`Name=gpu Type=<t> File=<files>`).
    pub fn gpu(gres_type: GresType, files: DeviceFiles) -> GresLine {
        GresLine {
            gres_type: Some(gres_type),
            devices: Some(GresDevices::File(files)),
            ..GresLine::new(GresName::gpu())
        }
    }

    /// A record from its `Key=Value` pairs (case-insensitive keys; aliases `Files`, `Link`,
    /// `CPUs` accepted; a later key replaces an earlier one). `Name` is required; `File` and
    /// `MultipleFiles` together are refused (Slurm: fatal).
    pub fn from_pairs(node: &str, pairs: &[(&str, &str)]) -> Result<GresLine, ConfigError> {
        let mut name = None;
        let mut line = GresLine::new(GresName::gpu());
        let (mut file, mut multiple) = (None, None);
        for &(key, value) in pairs {
            validate_key(key, "gres.conf record")?;
            match key.to_ascii_lowercase().as_str() {
                "name" => name = Some(GresName::try_from(value)?),
                "type" => line.gres_type = Some(GresType::try_from(value)?),
                "file" | "files" => file = Some(DeviceFiles::try_from(value)?),
                "multiplefiles" => multiple = Some(MultipleFiles::try_from(value)?),
                "count" => line.count = Some(GresCount::try_from(value)?.get()),
                "cores" | "cpus" => line.cores = Some(CoreList::try_from(value)?),
                "links" | "link" => line.links = Some(LinksRow::try_from(value)?),
                "flags" => line.flags = GresFlags::try_from(value)?,
                _ => {
                    return Err(ConfigError::InvalidKey {
                        key: key.to_string(),
                        context: "gres.conf record".to_string(),
                        reason: "expected Name, Type, File, MultipleFiles, Count, Cores, Links or Flags (NodeName must be first)".to_string(),
                    });
                }
            }
        }
        line.name = name.ok_or_else(|| ConfigError::Missing {
            key: "Name".to_string(),
            context: "gres.conf record".to_string(),
        })?;
        line.devices = match (file, multiple) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::FileAndMultipleFiles {
                    node: node.to_string(),
                });
            }
            (Some(f), None) => Some(GresDevices::File(f)),
            (None, Some(m)) => Some(GresDevices::Multiple(m)),
            (None, None) => None,
        };
        Ok(line)
    }

    /// Number of GRES this record provides: files, 1 for MultipleFiles, else Count (default 1).
    /// A shared GRES (`shard`, `mps`) with a `Count` provides that many shares whatever its
    /// files (Slurm: "each GPU can have arbitrary count of MPS elements").
    pub fn device_count(&self) -> u64 {
        if let (true, Some(c)) = (self.name.is_shared(), self.count) {
            return c;
        }
        match &self.devices {
            Some(d) => d.count(),
            None => self.count.unwrap_or(1),
        }
    }

    /// The `File=` files, if the record has them.
    pub fn files(&self) -> Option<&DeviceFiles> {
        match &self.devices {
            Some(GresDevices::File(f)) => Some(f),
            _ => None,
        }
    }
}

/// One node's gres.conf records, shared between the nodes of one shape (`Arc`: cloning it for
/// another node copies a pointer; `Arc::make_mut` edits one node's list alone).
pub type NodeRecords = Arc<Vec<GresLine>>;

/// Nodes that share one list of gres.conf records (the controller's nodes of one GPU shape):
/// the list is held once ([`NodeRecords`]) with the names, so a model of 10,000 alike nodes
/// holds one list and one vector of names instead of a 10,000-entry map, and the checks and
/// the renderer look at the list once per group rather than once per node. Rendered exactly as
/// the same nodes put one by one in [`GresConf::nodes`] with this list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresGroup {
    /// The nodes' shared records, in order.
    pub records: NodeRecords,
    /// The nodes' names, in natural order as the controller gives them (nothing depends on the
    /// order but speed: [`super::check_consistency`] pairs them with slurm.conf's node groups
    /// by walking both).
    pub names: Vec<NodeName>,
}

/// gres.conf as the charm owns it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GresConf {
    /// Global `AutoDetect` line.
    pub auto_detect: Option<AutoDetect>,
    /// `Name=` records without NodeName (apply to every node), in order.
    pub global: Vec<GresLine>,
    /// Per-node records: node name -> its records, in order. Nodes whose record lists are
    /// identical are written as one set of `NodeName=<hostlist>` lines. Shared ([`NodeRecords`]):
    /// thousands of nodes of one shape hold one list, so the controller's model of 10,000
    /// nodes costs one list per shape, and the renderer compares lists by pointer first.
    pub nodes: BTreeMap<NodeName, NodeRecords>,
    /// More nodes, grouped by shared records ([`GresGroup`]); rendered as if each name were in
    /// `nodes` with its group's list. A name may be in `nodes` and in groups, or in several
    /// groups, only with equal records (an empty list counts as none): otherwise the checks
    /// refuse the model ([`super::ConfigError::GresNodeTwice`]).
    pub node_groups: Vec<GresGroup>,
}

impl GresConf {
    /// Normal form: grouped nodes put one by one in `nodes` (as the parser reads them back),
    /// nodes without records dropped (records are normal by construction: their types keep
    /// files, cores and links in one order).
    pub fn normalized(&self) -> GresConf {
        let mut out = self.clone();
        out.normalize();
        out
    }

    /// Puts this model in normal form in place (see [`GresConf::normalized`]).
    pub fn normalize(&mut self) {
        for g in std::mem::take(&mut self.node_groups) {
            if g.records.is_empty() {
                continue;
            }
            for name in g.names {
                self.nodes.insert(name, Arc::clone(&g.records));
            }
        }
        self.nodes.retain(|_, v| !v.is_empty());
    }
}

/// Tells record lists apart for the checks and the renderer: one id per distinct content,
/// found by pointer first (the controller's nodes of one shape share one list), so each shared
/// list is hashed by content once, not once per node.
#[derive(Default)]
pub(crate) struct ListIds<'a> {
    by_ptr: HashMap<*const Vec<GresLine>, usize>,
    by_content: HashMap<&'a [GresLine], usize>,
}

impl<'a> ListIds<'a> {
    /// The id of `records`' content (ids count up from 0 in first-seen order).
    pub(crate) fn id(&mut self, records: &'a NodeRecords) -> usize {
        let next = self.by_content.len();
        let by_content = &mut self.by_content;
        *self
            .by_ptr
            .entry(Arc::as_ptr(records))
            .or_insert_with(|| *by_content.entry(records.as_slice()).or_insert(next))
    }

    /// How many distinct contents were seen.
    pub(crate) fn distinct(&self) -> usize {
        self.by_content.len()
    }
}
