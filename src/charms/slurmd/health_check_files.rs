//! The two files the health-check program shares with the hooks: the settings a hook writes
//! for it ([`ProgramSettings`], at [`super::keys::SETTINGS_PATH`]) and the state it keeps
//! between runs ([`ProgramState`], at [`STATE_PATH`]), which the hooks read.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::charms::host::Host;
use crate::gpu::{KnownGpu, XidClass, XidCount, XidEvent};

/// What the program remembers between runs ([`ProgramState`], JSON, under 8 KiB).
pub const STATE_PATH: &str = "/var/lib/slurm/slurmd-charm/health-state.json";

/// How many XIDs of any class the state file keeps for `detect-gpus`.
pub const RECENT_XIDS: usize = 16;

/// How many drain-class XIDs are held at most (distinct GPU and XID pairs).
pub const MAX_HELD: usize = 32;

/// How many distinct GPU and XID pairs are counted at most (the state stays small; a pair
/// beyond it is still counted per XID in [`ProgramState::counts`]).
pub const MAX_COUNTED: usize = 32;

/// What a hook tells the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramSettings {
    /// This node's name in Slurm.
    pub node: String,
    /// The controller's config server (`host:port`, as `SLURM_CONF_SERVER`).
    pub server: String,
    /// The NVML library the hook loaded (`None`: the default search).
    #[serde(default)]
    pub nvml_lib: Option<PathBuf>,
    /// The GPUs the hook remembers (unit state `known-gpus`).
    #[serde(default)]
    pub known: Vec<KnownGpu>,
    /// XIDs logged up to this kernel log record no longer hold the node: the operator cleared
    /// them (`detect-gpus clear-xids=true`, after resetting the GPU).
    #[serde(default)]
    pub xids_cleared_through: Option<u64>,
    /// node-exporter's textfile directory as the hook sees it
    /// ([`crate::charms::cos::textfile_dir`]; the program gets no environment): where the XID
    /// counters are written, when it exists. `None` (settings of an older charm): not written.
    #[serde(default)]
    pub textfile_dir: Option<String>,
}

impl ProgramSettings {
    /// The settings as the last hook wrote them (`None`: absent or unreadable).
    pub fn parse(raw: Option<&[u8]>) -> Option<ProgramSettings> {
        serde_json::from_slice(raw?).ok()
    }
}

/// One XID in the state file's recent list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecentXid {
    /// The XID as logged.
    #[serde(flatten)]
    pub event: XidEvent,
    /// Its class.
    pub class: XidClass,
    /// NVIDIA's meaning.
    pub meaning: String,
}

/// What the program remembers between runs (and what the hooks read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramState {
    /// The boot the rest belongs to.
    #[serde(default)]
    pub boot_id: String,
    /// The last kernel log record read.
    #[serde(default)]
    pub kmsg_seq: Option<u64>,
    /// Drain-class XIDs seen in this boot (each GPU and XID once).
    #[serde(default)]
    pub held: Vec<XidEvent>,
    /// The last [`RECENT_XIDS`] XIDs of any class, oldest first.
    #[serde(default)]
    pub recent: Vec<RecentXid>,
    /// How many times each XID was logged in this boot.
    #[serde(default)]
    pub counts: BTreeMap<u32, u64>,
    /// How many times each XID was logged for each GPU in this boot (at most [`MAX_COUNTED`]
    /// pairs, in the order first seen): the `slurm_node_gpu_xid_errors_total` counters.
    #[serde(default)]
    pub gpu_counts: Vec<XidCount>,
    /// The last verdict: `healthy` or the problems (the drain reason's text).
    #[serde(default)]
    pub verdict: String,
}

impl ProgramState {
    /// The state as last written, or `None` when absent or unreadable (then the program
    /// starts afresh; a hook ignores it).
    pub fn read(host: &Host<'_>) -> Option<ProgramState> {
        let raw = host.read(STATE_PATH).ok()??;
        serde_json::from_slice(&raw).ok()
    }

    /// The drain-class XIDs that hold in boot `boot_id` and were logged after record
    /// `cleared` (none from another boot; an empty boot id on either side cannot tell, and
    /// then the program's own word stands).
    pub fn held_in(&self, boot_id: &str, cleared: Option<u64>) -> Vec<XidEvent> {
        let other_boot = !boot_id.is_empty() && !self.boot_id.is_empty() && self.boot_id != boot_id;
        if other_boot {
            return Vec::new();
        }
        self.held
            .iter()
            .filter(|x| cleared.is_none_or(|c| x.seq > c))
            .cloned()
            .collect()
    }

    /// Adds newly logged XIDs: counted, kept in the recent list, drain-class ones held.
    pub(super) fn record(&mut self, xids: &[XidEvent]) {
        for x in xids {
            let (class, meaning) = x.class();
            *self.counts.entry(x.xid).or_default() += 1;
            let counted = self
                .gpu_counts
                .iter()
                .position(|c| c.pci_bus_id == x.pci_bus_id && c.xid == x.xid);
            match counted {
                Some(i) => self.gpu_counts[i].count += 1,
                None if self.gpu_counts.len() < MAX_COUNTED => self.gpu_counts.push(XidCount {
                    pci_bus_id: x.pci_bus_id.clone(),
                    xid: x.xid,
                    count: 1,
                }),
                None => {}
            }
            self.recent.push(RecentXid {
                event: x.clone(),
                class,
                meaning: meaning.to_owned(),
            });
            let known = self
                .held
                .iter()
                .any(|h| h.pci_bus_id == x.pci_bus_id && h.xid == x.xid);
            if class == XidClass::Drain && !known && self.held.len() < MAX_HELD {
                self.held.push(x.clone());
            }
        }
        let excess = self.recent.len().saturating_sub(RECENT_XIDS);
        self.recent.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xid(bus: &str, xid: u32) -> XidEvent {
        XidEvent {
            seq: 1,
            pci_bus_id: bus.into(),
            xid,
        }
    }

    #[test]
    fn drain_class_is_held_once_others_only_counted() {
        let mut s = ProgramState::default();
        s.record(&[xid("a", 79), xid("a", 13), xid("a", 79), xid("b", 92)]);
        assert_eq!(s.held, vec![xid("a", 79)]);
        assert_eq!(s.counts[&79], 2);
        assert_eq!(s.recent.len(), 4);
        s.record(&vec![xid("c", 13); 40]);
        assert_eq!(s.recent.len(), RECENT_XIDS);
        s.boot_id = "a".into();
        assert!(s.held_in("b", None).is_empty());
        assert_eq!(s.held_in("a", None), vec![xid("a", 79)]);
        assert_eq!(s.held_in("", None), vec![xid("a", 79)]);
        assert!(s.held_in("a", Some(1)).is_empty());
    }
}
