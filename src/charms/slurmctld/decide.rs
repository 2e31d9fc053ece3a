//! What slurmctld needs after the files are written: nothing, `scontrol reconfigure`, a
//! restart (before 23.11 reconfigure cannot add or remove nodes or change a node's GRES) or a
//! stop (no nodes), plus which nodes to resume.

use super::cache::Applied;
use crate::slurm::SlurmVersion;

/// What slurmctld needs after the files are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// Nothing changed.
    Nothing,
    /// `scontrol reconfigure` (from 23.11 also for nodes added/removed or changed GRES: it
    /// re-executes slurmctld).
    Reconfigure,
    /// `systemctl restart slurmctld` then `scontrol reconfigure` (slurmctld not running, or
    /// nodes added/removed or a node's GRES changed before 23.11, which reconfigure cannot take).
    Restart,
    /// `systemctl stop slurmctld`: no nodes left (22.05's slurmctld dies without nodes).
    Stop,
}

/// The decision and its follow-ups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Restart, reconfigure or nothing.
    pub reload: Reload,
    /// Nodes that left `DownNodes` and need `state=resume`.
    pub resume: Vec<String>,
    /// Nodes whose GRES changed (a leftover gres-mismatch drain is cleared for them).
    pub gres_changed: Vec<String>,
}

impl Decision {
    /// Nothing to do (no files were rendered).
    pub fn nothing() -> Self {
        Decision {
            reload: Reload::Nothing,
            resume: Vec::new(),
            gres_changed: Vec::new(),
        }
    }
}

/// Decides what slurmctld needs to go from `old` to `new`. With `old` unknown (lost cache),
/// a restart if the files on disk changed (`files_changed`), else nothing. Without nodes
/// slurmctld cannot run (22.05: `fatal: No PartitionName information available!`), so it is
/// stopped instead, and started by the restart that adds the first node. Nodes added, removed
/// or with changed GRES need a restart before 23.11 and a reconfigure from 23.11 (`version`;
/// unknown: restart, which every version takes).
pub fn decide(
    old: Option<&Applied>,
    new: &Applied,
    files_changed: bool,
    version: Option<SlurmVersion>,
) -> Decision {
    if new.nodes.is_empty() {
        let was_running = old.is_none_or(|o| !o.nodes.is_empty());
        return Decision {
            reload: if was_running {
                Reload::Stop
            } else {
                Reload::Nothing
            },
            resume: Vec::new(),
            gres_changed: Vec::new(),
        };
    }
    let Some(old) = old else {
        return Decision {
            reload: if files_changed {
                Reload::Restart
            } else {
                Reload::Nothing
            },
            resume: Vec::new(),
            gres_changed: Vec::new(),
        };
    };
    let resume: Vec<String> = old
        .down
        .difference(&new.down)
        .filter(|n| new.nodes.contains_key(*n))
        .cloned()
        .collect();
    let gres_changed: Vec<String> = new
        .nodes
        .iter()
        .filter(|(n, g)| old.nodes.get(*n).is_some_and(|o| o != *g))
        .map(|(n, _)| n.clone())
        .collect();
    let same_nodes = old.nodes.keys().eq(new.nodes.keys());
    let reload = if old.files_hash == new.files_hash && old.down == new.down {
        Reload::Nothing
    } else if old.nodes.is_empty() {
        // slurmctld was stopped for want of nodes: start it
        Reload::Restart
    } else if (!same_nodes || !gres_changed.is_empty())
        && !version.is_some_and(SlurmVersion::reconfigure_takes_node_changes)
    {
        Reload::Restart
    } else {
        Reload::Reconfigure
    };
    Decision {
        reload,
        resume,
        gres_changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(nodes: &[(&str, &str)], down: &[&str], hash: &str) -> Applied {
        Applied {
            nodes: nodes
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            down: down.iter().map(|s| s.to_string()).collect(),
            files_hash: hash.into(),
        }
    }

    const V22: Option<SlurmVersion> = Some(SlurmVersion::new(22, 5, 8));
    const V24: Option<SlurmVersion> = Some(SlurmVersion::new(24, 11, 5));

    fn decide(old: Option<&Applied>, new: &Applied, files_changed: bool) -> Decision {
        let d = super::decide(old, new, files_changed, V22);
        assert_eq!(
            d,
            super::decide(old, new, files_changed, None),
            "unknown = 22.05"
        );
        d
    }

    #[test]
    fn from_23_11_node_changes_are_a_reconfigure() {
        let a = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &[], "h1");
        let added = applied(&[("n1", "gpu:t4:1"), ("n2", ""), ("n3", "")], &[], "h2");
        let removed = applied(&[("n1", "gpu:t4:1")], &[], "h3");
        let gpu = applied(&[("n1", "gpu:t4:2"), ("n2", "")], &[], "h4");
        for new in [&added, &removed, &gpu] {
            assert_eq!(
                super::decide(Some(&a), new, true, V24).reload,
                Reload::Reconfigure
            );
            assert_eq!(
                super::decide(Some(&a), new, true, V22).reload,
                Reload::Restart
            );
        }
        // still a restart where slurmctld is not running (no nodes before) or the cache is lost
        let empty = applied(&[], &[], "h0");
        assert_eq!(
            super::decide(Some(&empty), &a, true, V24).reload,
            Reload::Restart
        );
        assert_eq!(super::decide(None, &a, true, V24).reload, Reload::Restart);
        assert_eq!(
            super::decide(Some(&a), &empty, true, V24).reload,
            Reload::Stop
        );
    }

    #[test]
    fn decisions() {
        let a = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &["n2"], "h1");
        assert_eq!(decide(None, &a, true).reload, Reload::Restart);
        assert_eq!(decide(None, &a, false).reload, Reload::Nothing);
        assert_eq!(decide(Some(&a), &a, true).reload, Reload::Nothing);
        let added = applied(&[("n1", "gpu:t4:1"), ("n2", ""), ("n3", "")], &["n2"], "h2");
        assert_eq!(decide(Some(&a), &added, true).reload, Reload::Restart);
        let removed = applied(&[("n1", "gpu:t4:1")], &[], "h2");
        let d = decide(Some(&a), &removed, true);
        assert_eq!(d.reload, Reload::Restart);
        assert!(d.resume.is_empty(), "a removed node is not resumed");
        let gpu = applied(&[("n1", "gpu:t4:2"), ("n2", "")], &["n2"], "h2");
        let d = decide(Some(&a), &gpu, true);
        assert_eq!(
            (d.reload, d.gres_changed),
            (Reload::Restart, vec!["n1".to_string()])
        );
        let configured = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &[], "h2");
        let d = decide(Some(&a), &configured, true);
        assert_eq!(
            (d.reload, d.resume),
            (Reload::Reconfigure, vec!["n2".to_string()])
        );
        let param = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &["n2"], "h3");
        assert_eq!(decide(Some(&a), &param, true).reload, Reload::Reconfigure);
        let empty = applied(&[], &[], "h4");
        assert_eq!(decide(Some(&a), &empty, true).reload, Reload::Stop);
        assert_eq!(decide(None, &empty, true).reload, Reload::Stop);
        assert_eq!(decide(Some(&empty), &empty, true).reload, Reload::Nothing);
        assert_eq!(decide(Some(&empty), &a, true).reload, Reload::Restart);
    }
}
