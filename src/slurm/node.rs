//! slurm.conf `NodeName` records: [`NodeConf`], its [`GresSpec`] entries and [`NodeState`].

use std::fmt;

use std::marker::PhantomData;

use super::error::ConfigError;
use super::keys::{NODE_HARDWARE_KEYS, NODE_KEYS, concat_keys, record_key};
use super::record_entry::{NodeEntry, NodeLine, RecordKeys, put_entry};
use super::types::{
    Feature, GresCount, GresName, GresType, NODE_RULES, NodeName, Reason, check_key_value,
};

/// A node integer checked by Slurm's limit for `key` ([`NODE_RULES`]: 16-bit CPU fields,
/// 32-bit `Weight`/`TmpDisk`, 64-bit memory).
fn node_int(key: &'static str, value: &str) -> Result<u64, ConfigError> {
    check_key_value(NODE_RULES, key, value)?;
    value
        .parse()
        .map_err(|_| ConfigError::invalid(key, value, "expected a decimal number"))
}

/// [`node_int`] for the fields kept as `u32` (all 16- or 32-bit in Slurm).
fn node_u32(key: &'static str, value: &str) -> Result<u32, ConfigError> {
    let n = node_int(key, value)?;
    u32::try_from(n).map_err(|_| ConfigError::invalid(key, value, "larger than 4294967293"))
}

/// A node state as `NodeName ... State=` and `DownNodes ... State=` accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeState {
    /// `CLOUD`.
    Cloud,
    /// `DOWN`.
    Down,
    /// `DRAIN`.
    Drain,
    /// `FAIL`.
    Fail,
    /// `FAILING`.
    Failing,
    /// `FUTURE`.
    Future,
    /// `UNKNOWN`.
    Unknown,
}

impl NodeState {
    /// The upper-case spelling Slurm documents.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Cloud => "CLOUD",
            NodeState::Down => "DOWN",
            NodeState::Drain => "DRAIN",
            NodeState::Fail => "FAIL",
            NodeState::Failing => "FAILING",
            NodeState::Future => "FUTURE",
            NodeState::Unknown => "UNKNOWN",
        }
    }

    /// Parses a state (case-insensitive).
    pub fn parse(key: &str, value: &str) -> Result<NodeState, ConfigError> {
        let all = [
            NodeState::Cloud,
            NodeState::Down,
            NodeState::Drain,
            NodeState::Fail,
            NodeState::Failing,
            NodeState::Future,
            NodeState::Unknown,
        ];
        all.into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(value))
            .ok_or_else(|| {
                ConfigError::invalid(
                    key,
                    value,
                    "expected CLOUD, DOWN, DRAIN, FAIL, FAILING, FUTURE or UNKNOWN",
                )
            })
    }
}

impl fmt::Display for NodeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of a node's `Gres=` list: `<name>[:<type>][:no_consume]:<count>`. The one type
/// for a `Gres=` item: NVML inventory, relation data and slurm.conf all use it. Serialised as
/// its text (`gpu:tesla_t4:2`).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct GresSpec {
    /// GRES name, e.g. `gpu`.
    pub name: GresName,
    /// GRES type, e.g. `tesla_t4` (byte-identical to gres.conf `Type=`).
    pub gres_type: Option<GresType>,
    /// The `no_consume` flag.
    pub no_consume: bool,
    /// Count (always written).
    pub count: u64,
}

impl GresSpec {
    /// A typed GPU entry `gpu:<gres_type>:<count>`.
    pub fn gpu(gres_type: GresType, count: u64) -> GresSpec {
        GresSpec {
            name: GresName::gpu(),
            gres_type: Some(gres_type),
            no_consume: false,
            count,
        }
    }

    /// Parses one entry (`gpu:tesla_t4:2`, `gpu:2`, `gpu`, `mps:no_consume:100`).
    pub fn parse(text: &str) -> Result<GresSpec, ConfigError> {
        let parts: Vec<&str> = text.split(':').collect();
        let bad = |why: &str| ConfigError::invalid("Gres", text, why);
        let (name, middle, count) = match parts.as_slice() {
            [name] => (*name, &[][..], None),
            [name, rest @ .., last] => match GresCount::try_from(*last) {
                Ok(n) => (*name, rest, Some(n.get())),
                Err(_) => (*name, &parts[1..], None),
            },
            [] => return Err(bad("empty GRES entry")),
        };
        let name = GresName::try_from(name).map_err(|e| bad(&e.to_string()))?;
        let (gres_type, no_consume) = match middle {
            [] => (None, false),
            ["no_consume"] => (None, true),
            [t] => (Some(*t), false),
            [t, "no_consume"] => (Some(*t), true),
            _ => return Err(bad("expected <name>[:<type>][:no_consume]:<count>")),
        };
        let gres_type = gres_type
            .map(GresType::try_from)
            .transpose()
            .map_err(|e| bad(&e.to_string()))?;
        Ok(GresSpec {
            name,
            gres_type,
            no_consume,
            count: count.unwrap_or(1),
        })
    }

    /// `name` or `name:type`, used in error messages and matching.
    pub fn key(&self) -> String {
        match &self.gres_type {
            Some(t) => format!("{}:{}", self.name, t),
            None => self.name.to_string(),
        }
    }
}

impl TryFrom<String> for GresSpec {
    type Error = ConfigError;
    fn try_from(value: String) -> Result<Self, ConfigError> {
        Self::parse(&value)
    }
}

impl From<GresSpec> for String {
    fn from(value: GresSpec) -> String {
        value.to_string()
    }
}

impl fmt::Display for GresSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(t) = &self.gres_type {
            write!(f, ":{t}")?;
        }
        if self.no_consume {
            f.write_str(":no_consume")?;
        }
        write!(f, ":{}", self.count)
    }
}

/// One node of slurm.conf. The renderer writes `NodeName=` first, then the fields in this
/// order, then `extra` in order; nodes with identical fields share one hostlist line. Every
/// field is a vocabulary type, built where the value enters ([`NodeConf::set`]: the parser,
/// `slurmd -C`, `node-config`, the `node` relation record), so the renderer writes it without
/// checking it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConf {
    /// Node name (one node per `NodeConf`).
    pub name: NodeName,
    /// `CPUs`.
    pub cpus: Option<u32>,
    /// `Boards`.
    pub boards: Option<u32>,
    /// `SocketsPerBoard`.
    pub sockets_per_board: Option<u32>,
    /// `CoresPerSocket`.
    pub cores_per_socket: Option<u32>,
    /// `ThreadsPerCore`.
    pub threads_per_core: Option<u32>,
    /// `RealMemory` (MB).
    pub real_memory: Option<u64>,
    /// `Gres` entries, in order (the order sets Slurm's device index order).
    pub gres: Vec<GresSpec>,
    /// `MemSpecLimit` (MB).
    pub mem_spec_limit: Option<u64>,
    /// `Features` (comma list).
    pub features: Vec<Feature>,
    /// `Weight`.
    pub weight: Option<u32>,
    /// `State`.
    pub state: Option<NodeState>,
    /// `Reason` (free text, written quoted).
    pub reason: Option<Reason>,
    /// Other node keys (`TmpDisk`, `NodeAddr`, ...), CamelCase, in order.
    pub extra: Vec<NodeEntry>,
}

impl NodeConf {
    /// A node with only its name set.
    pub fn new(name: NodeName) -> NodeConf {
        NodeConf {
            name,
            cpus: None,
            boards: None,
            sockets_per_board: None,
            cores_per_socket: None,
            threads_per_core: None,
            real_memory: None,
            gres: Vec::new(),
            mem_spec_limit: None,
            features: Vec::new(),
            weight: None,
            state: None,
            reason: None,
            extra: Vec::new(),
        }
    }

    /// Sets one key (case-insensitive) from its text value, validating it. `NodeName` sets the
    /// name; an unknown key is an error; a key given twice replaces the earlier value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        self.apply(NodeConf::check(key, value)?.1);
        Ok(())
    }

    /// Checks one key (case-insensitive) and its text value as [`NodeConf::set`] does,
    /// without a node: the key's CamelCase spelling and the typed value, which
    /// [`NodeConf::apply`] then sets without checking it again (`node-config` is checked once,
    /// when the action's text is parsed).
    pub fn check(key: &str, value: &str) -> Result<(&'static str, NodeSetting), ConfigError> {
        let key = record_key(&NODE_KEYS, key, "NodeName line", "node")?;
        let setting = match key {
            "NodeName" => NodeSetting::Name(NodeName::try_from(value)?),
            "CPUs" => NodeSetting::Cpus(node_u32(key, value)?),
            "Boards" => NodeSetting::Boards(node_u32(key, value)?),
            "SocketsPerBoard" => NodeSetting::SocketsPerBoard(node_u32(key, value)?),
            "CoresPerSocket" => NodeSetting::CoresPerSocket(node_u32(key, value)?),
            "ThreadsPerCore" => NodeSetting::ThreadsPerCore(node_u32(key, value)?),
            "RealMemory" => NodeSetting::RealMemory(node_int(key, value)?),
            "MemSpecLimit" => NodeSetting::MemSpecLimit(node_int(key, value)?),
            "Weight" => NodeSetting::Weight(node_u32(key, value)?),
            "State" => NodeSetting::State(NodeState::parse(key, value)?),
            "Reason" => NodeSetting::Reason(Reason::try_from(value)?),
            "Gres" => NodeSetting::Gres(
                value
                    .split(',')
                    .map(GresSpec::parse)
                    .collect::<Result<_, _>>()?,
            ),
            "Feature" | "Features" => NodeSetting::Features(Feature::parse_list(value)?),
            other => NodeSetting::Extra(NODE_RECORD.entry(other, value)?),
        };
        Ok((key, setting))
    }

    /// Sets a value [`NodeConf::check`] made, replacing the key's earlier value.
    pub fn apply(&mut self, setting: NodeSetting) {
        match setting {
            NodeSetting::Name(v) => self.name = v,
            NodeSetting::Cpus(v) => self.cpus = Some(v),
            NodeSetting::Boards(v) => self.boards = Some(v),
            NodeSetting::SocketsPerBoard(v) => self.sockets_per_board = Some(v),
            NodeSetting::CoresPerSocket(v) => self.cores_per_socket = Some(v),
            NodeSetting::ThreadsPerCore(v) => self.threads_per_core = Some(v),
            NodeSetting::RealMemory(v) => self.real_memory = Some(v),
            NodeSetting::MemSpecLimit(v) => self.mem_spec_limit = Some(v),
            NodeSetting::Weight(v) => self.weight = Some(v),
            NodeSetting::State(v) => self.state = Some(v),
            NodeSetting::Reason(v) => self.reason = Some(v),
            NodeSetting::Gres(v) => self.gres = v,
            NodeSetting::Features(v) => self.features = v,
            NodeSetting::Extra(e) => put_entry(&mut self.extra, e),
        }
    }
}

/// One `NodeName` key's checked value ([`NodeConf::check`]), set by [`NodeConf::apply`]: a
/// field of [`NodeConf`] or an entry of its `extra`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeSetting {
    /// `NodeName`.
    Name(NodeName),
    /// `CPUs`.
    Cpus(u32),
    /// `Boards`.
    Boards(u32),
    /// `SocketsPerBoard`.
    SocketsPerBoard(u32),
    /// `CoresPerSocket`.
    CoresPerSocket(u32),
    /// `ThreadsPerCore`.
    ThreadsPerCore(u32),
    /// `RealMemory` (MB).
    RealMemory(u64),
    /// `MemSpecLimit` (MB).
    MemSpecLimit(u64),
    /// `Weight`.
    Weight(u32),
    /// `State`.
    State(NodeState),
    /// `Reason`.
    Reason(Reason),
    /// `Gres` (the whole list).
    Gres(Vec<GresSpec>),
    /// `Feature` / `Features` (the whole list).
    Features(Vec<Feature>),
    /// A key the model keeps as text (`TmpDisk`, ...).
    Extra(NodeEntry),
}

/// Node keys with a field in [`NodeConf`] (never in `extra`).
const MODELLED: [&str; 14] = concat_keys(
    &NODE_HARDWARE_KEYS,
    &[
        "NodeName",
        "Gres",
        "MemSpecLimit",
        "Feature",
        "Features",
        "Weight",
        "State",
        "Reason",
    ],
);

/// What a `NodeName` line keeps as text.
const NODE_RECORD: RecordKeys<NodeLine> = RecordKeys {
    keys: &NODE_KEYS,
    modelled: &MODELLED,
    rules: NODE_RULES,
    what: "node",
    record: PhantomData,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_spec_forms() {
        assert_eq!(
            GresSpec::parse("gpu:tesla_t4:2").unwrap(),
            GresSpec::gpu("tesla_t4".parse().unwrap(), 2)
        );
        let g = GresSpec::parse("gpu:2").unwrap();
        assert_eq!((g.gres_type.as_deref(), g.count), (None, 2));
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<GresSpec>(&json).unwrap(), g);
        assert_eq!(GresSpec::parse("gpu").unwrap().count, 1);
        let m = GresSpec::parse("mps:no_consume:100").unwrap();
        assert!(m.no_consume && m.count == 100);
        assert_eq!(
            GresSpec::parse("gpu:t4:no_consume:4").unwrap().to_string(),
            "gpu:t4:no_consume:4"
        );
        for bad in [
            "",
            "GPU:t4:1",
            "gpu:Tesla_T4:1",
            "gpu:a:b:c:1",
            "gpu::1",
            "gpu:t 4:1",
        ] {
            assert!(GresSpec::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn node_set_validates() {
        let mut n = NodeConf::new("vm".parse().unwrap());
        n.set("cpus", "4").unwrap();
        n.set("TMPDISK", "100").unwrap();
        assert_eq!(n.cpus, Some(4));
        assert_eq!((n.extra[0].key(), n.extra[0].value()), ("TmpDisk", "100"));
        assert!(n.set("CPUs", "four").is_err());
        assert!(n.set("Bogus", "1").is_err());
        assert!(n.set("Weight", "1 State=DOWN").is_err());
        assert!(n.set("NodeAddr", "a#b").is_err());
        n.set("Reason", "New node.").unwrap();
        assert!(n.set("Features", "a,b&c").is_err());
        assert!(n.set("Reason", "a\nb").is_err());
    }
}
