//! What slurmctld needs after the files are written: nothing, a resume of nodes that left
//! `DownNodes` (when nothing else changed), `scontrol reconfigure`, a restart (before 23.11
//! reconfigure cannot add or remove nodes or change a node's GRES) or a stop (no nodes), plus
//! which nodes to resume.
//!
//! Why a node leaving `DownNodes` is a resume and not a reconfigure (every version): the
//! running slurmctld already has the node, and `scontrol update nodename=X state=resume` is
//! the whole change at runtime; the file is rewritten so that the next restart or reconfigure
//! reads the same state. A reconfigure would push the configs to every slurmd, and on Slurm
//! 22.05.8 a slurmd that has not registered yet (the node's own, just started by
//! `node-configured`) is sent them in the 20.11 format and dies (docs/slurm-versions.md,
//! "slurmd dies at start").

use super::store::Applied;
use crate::slurm::SlurmVersion;
use std::collections::BTreeSet;

/// What slurmctld needs after the files are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// Nothing changed.
    Nothing,
    /// Only nodes left `DownNodes` (same nodes, same GRES, the files equal apart from their
    /// `DownNodes` lines): slurmctld keeps running the files it read, the nodes are resumed
    /// ([`Decision::resume`]). The files on disk say the same for its next reload.
    Resume,
    /// `scontrol reconfigure` (from 23.11 also for nodes added/removed or changed GRES: it
    /// re-executes slurmctld).
    Reconfigure,
    /// `systemctl restart slurmctld` then `scontrol reconfigure` (slurmctld not running, or
    /// nodes added/removed or a node's GRES changed before 23.11, which reconfigure cannot take).
    Restart,
    /// `systemctl stop slurmctld`: no nodes left (22.05's slurmctld dies without nodes).
    Stop,
    /// `systemctl restart slurmctld` alone: it was found not running, and the files are those
    /// it ran ([`super::liveness`]); a restart that does not answer is not a refusal of files.
    Revive,
}

impl Reload {
    /// Whether slurmctld is restarted, reconfigured or stopped: a command that takes a while,
    /// during which the hook can do other work ([`super::apply`] sends its log meanwhile). A
    /// resume's `scontrol update` is left out: quick, and it may log a failure.
    pub fn runs(&self) -> bool {
        matches!(
            self,
            Reload::Reconfigure | Reload::Restart | Reload::Stop | Reload::Revive
        )
    }
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
    if new.is_empty() {
        let was_running = old.is_none_or(|o| !o.is_empty());
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
    // Which nodes were added, removed or changed GRES: one walk along both lists (natural
    // order), or, when the names are the same (most hooks), along their `Gres=` values.
    let (mut added, mut removed) = (false, false);
    let mut gres_changed: Vec<String> = Vec::new();
    if old.same_names(new) {
        // the same tables: no node's value changed, nothing to walk
        if !old.same_gres(new) {
            for ((name, og), (_, ng)) in old.pairs().zip(new.pairs()) {
                if og != ng {
                    gres_changed.push(name.to_owned());
                }
            }
        }
    } else {
        let (mut o, mut n) = (old.pairs().peekable(), new.pairs().peekable());
        loop {
            match (o.peek(), n.peek()) {
                (None, None) => break,
                (Some(_), None) => {
                    removed = true;
                    break;
                }
                (None, Some(_)) => {
                    added = true;
                    break;
                }
                (Some((on, og)), Some((nn, ng))) => {
                    match crate::slurm::hostlist::natural_cmp(on, nn) {
                        std::cmp::Ordering::Less => {
                            removed = true;
                            o.next();
                        }
                        std::cmp::Ordering::Greater => {
                            added = true;
                            n.next();
                        }
                        std::cmp::Ordering::Equal => {
                            if og != ng {
                                gres_changed.push((*nn).to_owned());
                            }
                            o.next();
                            n.next();
                        }
                    }
                }
            }
        }
    }
    // A node that left `DownNodes` is resumed only if it is still a node: one walk along the
    // new nodes when any left (in name order, as the set of them is).
    let left: BTreeSet<&str> = old.down.difference(&new.down).map(String::as_str).collect();
    let mut resume: Vec<String> = if left.is_empty() {
        Vec::new()
    } else {
        new.names()
            .filter(|n| left.contains(n))
            .map(str::to_owned)
            .collect()
    };
    resume.sort_unstable();
    let same_nodes = !added && !removed;
    let reload = if old.files_hash == new.files_hash && old.down == new.down {
        Reload::Nothing
    } else if only_left_down_nodes(old, new) {
        Reload::Resume
    } else if old.is_empty() {
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

/// True when `new` differs from `old` only in nodes that left `DownNodes`: the same nodes
/// with the same GRES, fewer down, and the same files apart from the `DownNodes` lines
/// ([`Applied::base_hash`]).
fn only_left_down_nodes(old: &Applied, new: &Applied) -> bool {
    old.base_hash == new.base_hash
        && old.same_names(new)
        && old.pairs().eq(new.pairs())
        && new.down.len() < old.down.len()
        && new.down.is_subset(&old.down)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hash` is the files' hash; their hash without `DownNodes` is `hash` with the down
    /// nodes cut off, so two states that differ only in `DownNodes` share it.
    fn applied(nodes: &[(&str, &str)], down: &[&str], hash: &str) -> Applied {
        let h = |text: &str| crate::charms::slurmctld::store::checksum(&[text.as_bytes()]);
        Applied::new(
            nodes.iter().copied(),
            down.iter().map(|s| s.to_string()).collect(),
            h(&format!("{hash}{down:?}")),
            h(hash),
        )
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
    fn leaving_down_nodes_is_a_resume_on_every_version() {
        let two_new = applied(&[("n1", ""), ("n2", ""), ("n3", "")], &["n2", "n3"], "h");
        let one_new = applied(&[("n1", ""), ("n2", ""), ("n3", "")], &["n3"], "h");
        let none_new = applied(&[("n1", ""), ("n2", ""), ("n3", "")], &[], "h");
        for v in [V22, V24, None] {
            for (old, new, resumed) in [
                (&two_new, &one_new, vec!["n2"]),
                (&one_new, &none_new, vec!["n3"]),
                (&two_new, &none_new, vec!["n2", "n3"]),
            ] {
                let d = super::decide(Some(old), new, true, v);
                assert_eq!(d.reload, Reload::Resume, "{v:?}");
                assert_eq!(d.resume, resumed, "{v:?}");
            }
            // a node entering DownNodes, a node added with one leaving, a GRES change with one
            // leaving: not a resume alone
            assert_ne!(
                super::decide(Some(&one_new), &two_new, true, v).reload,
                Reload::Resume
            );
            let added = applied(
                &[("n1", ""), ("n2", ""), ("n3", ""), ("n4", "")],
                &["n3"],
                "h",
            );
            assert_ne!(
                super::decide(Some(&two_new), &added, true, v).reload,
                Reload::Resume
            );
            let gres = applied(&[("n1", "gpu:t4:1"), ("n2", ""), ("n3", "")], &["n3"], "h");
            assert_ne!(
                super::decide(Some(&two_new), &gres, true, v).reload,
                Reload::Resume
            );
        }
    }

    /// A few nodes leaving `DownNodes` are looked up in the hostlists, many in the names made
    /// once: both resume exactly the nodes that are still nodes.
    #[test]
    fn leaving_nodes_are_resumed_if_still_nodes_however_many_leave() {
        let names: Vec<String> = (1..=40).map(|i| format!("n{i}")).collect();
        let all: Vec<&str> = names.iter().map(String::as_str).collect();
        let pairs = |skip: &str| -> Vec<(&str, &str)> {
            all.iter()
                .filter(|n| **n != skip)
                .map(|n| (*n, "gpu:t4:1"))
                .collect()
        };
        let old = applied(&pairs(""), &all, "h1");
        for leaving in [3, 16, 17, 40] {
            let new = applied(&pairs("n2"), &all[leaving..], "h2");
            let d = decide(Some(&old), &new, true);
            let want: Vec<String> = all[..leaving]
                .iter()
                .filter(|n| **n != "n2")
                .map(|n| n.to_string())
                .collect();
            let mut got = d.resume.clone();
            got.sort_by(|a, b| crate::slurm::hostlist::natural_cmp(a, b));
            assert_eq!(got, want, "{leaving} leaving");
        }
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
        // a node left DownNodes and nothing else changed: resumed, no reconfigure
        let configured = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &[], "h1");
        let d = decide(Some(&a), &configured, true);
        assert_eq!(
            (d.reload, d.resume),
            (Reload::Resume, vec!["n2".to_string()])
        );
        // ... and with something else changed too: reconfigure (it reads both), then resume
        let configured_and_param = applied(&[("n1", "gpu:t4:1"), ("n2", "")], &[], "h2");
        let d = decide(Some(&a), &configured_and_param, true);
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

    #[test]
    fn gres_changed_names_only_nodes_in_both_whose_gres_differ() {
        let old = applied(
            &[
                ("a", "g1"),
                ("b", "g1"),
                ("d", "g2"),
                ("e", "g1"),
                ("n10", "g1"),
            ],
            &[],
            "h1",
        );
        let new = applied(
            &[
                ("a", "g1"),
                ("b", "g2"),
                ("c", "g1"),
                ("d", "g3"),
                ("n9", "g2"),
                ("n10", "g2"),
            ],
            &[],
            "h2",
        );
        let d = decide(Some(&old), &new, true);
        assert_eq!(d.gres_changed, ["b", "d", "n10"]);
    }
}
