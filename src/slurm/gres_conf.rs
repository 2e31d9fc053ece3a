//! The gres.conf model: a global `AutoDetect`, global `Name=` records and per-node records.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};

use super::error::ConfigError;
use super::hostlist::{self, natural_cmp};
use super::validate::{
    parse_count, validate_device_path, validate_gres_name, validate_gres_type, validate_key,
};

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

/// gres.conf `Flags` values Slurm knows (22.05 plus `explicit` from 23.11).
pub const GRES_FLAGS: [&str; 9] = [
    "CountOnly",
    "nvidia_gpu_env",
    "amd_gpu_env",
    "intel_gpu_env",
    "opencl_env",
    "no_gpu_env",
    "one_sharing",
    "all_sharing",
    "explicit",
];

/// One gres.conf record (without its NodeName, which is the key it is stored under).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GresLine {
    /// `Name` (e.g. `gpu`).
    pub name: String,
    /// `Type` (byte-identical to slurm.conf `Gres=` type).
    pub gres_type: Option<String>,
    /// `File`: device files (written as a compressed hostlist, `/dev/nvidia[0-3]`).
    pub files: Vec<String>,
    /// `MultipleFiles`: files that together make one GRES (MIG), written in order.
    pub multiple_files: Vec<String>,
    /// `Count`.
    pub count: Option<u64>,
    /// `Cores` (abstract core ids, written as ranges `0-3,8`).
    pub cores: Vec<u32>,
    /// `Links` (one entry per GPU index; exactly one `-1`).
    pub links: Vec<i32>,
    /// `Flags`.
    pub flags: Vec<String>,
}

/// Hashes the fields that tell records apart cheaply (the file list by its length and ends,
/// which is consistent with `Eq`): the renderer hashes every node's records to fold them.
impl Hash for GresLine {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.gres_type.hash(state);
        self.files.len().hash(state);
        self.files.first().hash(state);
        self.files.last().hash(state);
        self.multiple_files.hash(state);
        self.count.hash(state);
        self.cores.hash(state);
        self.links.hash(state);
        self.flags.hash(state);
    }
}

impl GresLine {
    /// A typed GPU record with device files (`Name=gpu Type=<t> File=<files>`).
    pub fn gpu(gres_type: &str, files: Vec<String>) -> GresLine {
        GresLine {
            name: "gpu".to_string(),
            gres_type: Some(gres_type.to_string()),
            files,
            ..GresLine::default()
        }
    }

    /// Sets one record key (case-insensitive; aliases `Files`, `Link`, `CPUs` accepted).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        validate_key(key, "gres.conf record")?;
        let lower = key.to_ascii_lowercase();
        let paths = |k: &str| -> Result<Vec<String>, ConfigError> {
            let list = hostlist::expand(value)
                .map_err(|e| ConfigError::invalid(k, value, e.to_string()))?;
            if list.is_empty() {
                return Err(ConfigError::invalid(k, value, "must not be empty"));
            }
            for p in &list {
                validate_device_path(k, p)?;
            }
            Ok(list)
        };
        match lower.as_str() {
            "name" => {
                validate_gres_name(value)?;
                self.name = value.to_string();
            }
            "type" => {
                validate_gres_type(value)?;
                self.gres_type = Some(value.to_string());
            }
            "file" | "files" => self.files = paths("File")?,
            "multiplefiles" => self.multiple_files = paths("MultipleFiles")?,
            "count" => self.count = Some(parse_count("Count", value)?),
            "cores" | "cpus" => {
                self.cores = hostlist::parse_ranges_u32(value).map_err(|_| {
                    ConfigError::invalid("Cores", value, "expected core ids like 0-3,8")
                })?;
            }
            "links" | "link" => {
                self.links = value
                    .split(',')
                    .map(|l| {
                        l.parse::<i32>()
                            .ok()
                            .filter(|n| *n >= -1 && !l.starts_with('+'))
                            .ok_or_else(|| {
                                ConfigError::invalid(
                                    "Links",
                                    value,
                                    "expected a comma list of -1, 0 or link counts",
                                )
                            })
                    })
                    .collect::<Result<_, _>>()?;
            }
            "flags" => {
                self.flags = value
                    .split(',')
                    .map(|f| {
                        GRES_FLAGS
                            .iter()
                            .find(|k| k.eq_ignore_ascii_case(f))
                            .map(|k| k.to_string())
                            .ok_or_else(|| {
                                ConfigError::invalid(
                                    "Flags",
                                    value,
                                    format!("unknown flag {f:?}; known: {}", GRES_FLAGS.join(", ")),
                                )
                            })
                    })
                    .collect::<Result<_, _>>()?;
            }
            _ => {
                return Err(ConfigError::InvalidKey {
                    key: key.to_string(),
                    context: "gres.conf record".to_string(),
                    reason: "expected Name, Type, File, MultipleFiles, Count, Cores, Links or Flags (NodeName must be first)".to_string(),
                });
            }
        }
        Ok(())
    }

    /// Number of GRES this record provides: files, 1 for MultipleFiles, else Count (default 1).
    pub fn device_count(&self) -> u64 {
        if !self.files.is_empty() {
            self.files.len() as u64
        } else if !self.multiple_files.is_empty() {
            1
        } else {
            self.count.unwrap_or(1)
        }
    }

    /// Normal form: files in natural order, cores sorted without duplicates.
    pub fn normalized(&self) -> GresLine {
        let mut out = self.clone();
        out.normalize();
        out
    }

    /// Puts this record in normal form in place.
    pub fn normalize(&mut self) {
        if !self.files.is_sorted_by(|a, b| natural_cmp(a, b).is_le()) {
            self.files.sort_by(|a, b| natural_cmp(a, b));
        }
        self.cores.sort_unstable();
        self.cores.dedup();
    }
}

/// gres.conf as the charm owns it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GresConf {
    /// Global `AutoDetect` line.
    pub auto_detect: Option<AutoDetect>,
    /// `Name=` records without NodeName (apply to every node), in order.
    pub global: Vec<GresLine>,
    /// Per-node records: node name -> its records, in order. Nodes whose record lists are
    /// identical are written as one set of `NodeName=<hostlist>` lines.
    pub nodes: BTreeMap<String, Vec<GresLine>>,
}

impl GresConf {
    /// Normal form: every record normalised ([`GresLine::normalized`]), nodes without records
    /// dropped.
    pub fn normalized(&self) -> GresConf {
        let mut out = self.clone();
        out.normalize();
        out
    }

    /// Puts this model in normal form in place (see [`GresConf::normalized`]).
    pub fn normalize(&mut self) {
        self.global.iter_mut().for_each(GresLine::normalize);
        self.nodes.retain(|_, v| !v.is_empty());
        self.nodes
            .values_mut()
            .for_each(|v| v.iter_mut().for_each(GresLine::normalize));
    }
}
