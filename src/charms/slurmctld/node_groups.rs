//! The controller's node groups: per relation, node shape and `new_node`, the names of its
//! accepted nodes as one hostlist, kept in the relation cache with the parts of slurm.conf and
//! gres.conf around their node lines. A changed hook in which nodes only move between groups
//! (a node's memory or GPUs change, its name and application stay) then plans from the groups
//! ([`super::group_plan`]): it edits the hostlists the moves touch and assembles the files
//! from a line per group, instead of walking every unit (O(groups + changed units) rather than
//! O(units): issue 13's "the controller pays for what changed").
//!
//! The groups are kept only for an outcome they describe completely: every unit and
//! application accepted, files rendered, one slurm.conf node line per shape, at most
//! [`MAX_GROUPS`] groups. With them goes the hash of every other input of the plan
//! ([`basis`]): settings, relations, partition owners. Any hook that is not such a move plans
//! in full, and the full plan makes the groups again.

use super::cache::{CachedRelation, content_hash};
use super::desired::Settings;
use super::owners::Owners;
use crate::slurm::hostlist::compress_with_first;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Most groups kept. Beyond this (thousands of distinct nodes) the full plan is as cheap as
/// assembling the files from groups, and the groups would be a line per node in the cache.
pub const MAX_GROUPS: usize = 64;

/// Where a slurm.conf or gres.conf node line starts.
const NODE_LINE: &str = "NodeName=";

/// The node groups of one plan and the file parts around their lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGroups {
    /// [`basis`] of the plan they were made by: the next plan may use them only when its own
    /// basis is the same.
    #[serde(rename = "b")]
    pub basis: String,
    /// The groups, by relation key, shape key and `new_node`.
    #[serde(rename = "g")]
    pub groups: Vec<NodeGroup>,
    /// slurm.conf up to its first node line.
    #[serde(rename = "sh")]
    pub slurm_head: String,
    /// slurm.conf after its last node line (partitions).
    #[serde(rename = "st")]
    pub slurm_tail: String,
    /// gres.conf up to its first node line (its node lines come last).
    #[serde(rename = "gh")]
    pub gres_head: String,
}

/// The accepted nodes of one relation and one shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeGroup {
    /// The relation's cache key (`slurmd:3`).
    #[serde(rename = "r")]
    pub relation: String,
    /// The shape's key in [`super::cache::Cache::shapes`].
    #[serde(rename = "s")]
    pub shape: String,
    /// The nodes are new (in `DownNodes` until `node-configured`).
    #[serde(rename = "n", default, skip_serializing_if = "std::ops::Not::not")]
    pub new_node: bool,
    /// The first name in natural order: where the group's line goes.
    #[serde(rename = "f")]
    pub first: String,
    /// The names, as [`crate::slurm::hostlist::compress`] writes them.
    #[serde(rename = "h")]
    pub hostlist: String,
}

/// The hash of what a plan depends on besides the units: the settings, each relation's
/// application and `partition` value, and the partition owners the plan leaves.
pub fn basis(
    settings: &Settings,
    relations: &BTreeMap<String, CachedRelation>,
    owners: &Owners,
) -> String {
    let mut text = format!("{settings:?}\n{owners:?}\n");
    for (key, rel) in relations {
        let _ = writeln!(
            text,
            "{key:?} {:?} {} {:?} {:?}",
            rel.endpoint, rel.id, rel.app, rel.partition
        );
    }
    content_hash(text.as_bytes())
}

impl NodeGroups {
    /// The groups of a full plan's accepted nodes (relation key, shape key, `new_node`, name)
    /// and its files; `None` when the files do not have one node line per shape, or there are
    /// more than [`MAX_GROUPS`] groups.
    pub fn of_plan<'a>(
        basis: String,
        nodes: impl Iterator<Item = (&'a str, &'a str, bool, &'a str)>,
        slurm_conf: &str,
        gres_conf: &str,
    ) -> Option<NodeGroups> {
        let mut by_group: BTreeMap<(&str, &str, bool), Vec<&str>> = BTreeMap::new();
        for (relation, shape, new_node, name) in nodes {
            by_group
                .entry((relation, shape, new_node))
                .or_default()
                .push(name);
            if by_group.len() > MAX_GROUPS {
                return None;
            }
        }
        let (slurm_head, lines, slurm_tail) = split_node_lines(slurm_conf)?;
        let mut shapes: Vec<&str> = by_group.keys().map(|(_, s, _)| *s).collect();
        shapes.sort_unstable();
        shapes.dedup();
        // shapes folded into one line, or nodes listed one by one (`NodeAddr`): not groups
        if lines != shapes.len() {
            return None;
        }
        let (gres_head, _, gres_tail) = split_node_lines(gres_conf).unwrap_or((gres_conf, 0, ""));
        if !gres_tail.is_empty() {
            return None;
        }
        let groups = by_group
            .into_iter()
            .map(|((relation, shape, new_node), names)| {
                let (first, hostlist) = compress_with_first(&names);
                NodeGroup {
                    relation: relation.to_owned(),
                    shape: shape.to_owned(),
                    new_node,
                    first: names.get(first).copied().unwrap_or_default().to_owned(),
                    hostlist,
                }
            })
            .collect();
        Some(NodeGroups {
            basis,
            groups,
            slurm_head: slurm_head.to_owned(),
            slurm_tail: slurm_tail.to_owned(),
            gres_head: gres_head.to_owned(),
        })
    }
}

/// A file as the text before its node lines, how many there are, and the text after them;
/// `None` without node lines.
fn split_node_lines(text: &str) -> Option<(&str, usize, &str)> {
    let start = if text.starts_with(NODE_LINE) {
        0
    } else {
        text.find(&format!("\n{NODE_LINE}"))? + 1
    };
    let mut end = start;
    let mut lines = 0;
    while text[end..].starts_with(NODE_LINE) {
        lines += 1;
        end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    }
    Some((&text[..start], lines, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_splits_around_its_node_lines() {
        let text = "# h\nClusterName=c\nNodeName=a[1-2] CPUs=1\nNodeName=b CPUs=2\nPartitionName=p Nodes=a[1-2],b\n";
        assert_eq!(
            split_node_lines(text),
            Some((
                "# h\nClusterName=c\n",
                2,
                "PartitionName=p Nodes=a[1-2],b\n"
            ))
        );
        assert_eq!(split_node_lines("# h\nAutoDetect=off\n"), None);
        assert_eq!(
            split_node_lines("# h\nNodeName=a Name=gpu\n"),
            Some(("# h\n", 1, ""))
        );
    }

    #[test]
    fn groups_are_kept_only_with_one_node_line_per_shape() {
        let nodes = [
            ("r:1", "s1", false, "n2"),
            ("r:1", "s1", false, "n1"),
            ("r:1", "s2", false, "n3"),
        ];
        let slurm = "# h\nNodeName=n[1-2] CPUs=1\nNodeName=n3 CPUs=2\nPartitionName=p\n";
        let groups = NodeGroups::of_plan("b".into(), nodes.into_iter(), slurm, "# h\n").unwrap();
        assert_eq!(groups.groups.len(), 2);
        assert_eq!(groups.groups[0].hostlist, "n[1-2]");
        assert_eq!(groups.groups[0].first, "n1");
        assert_eq!(groups.slurm_tail, "PartitionName=p\n");
        assert_eq!(groups.gres_head, "# h\n");
        let folded = "# h\nNodeName=n[1-3] CPUs=1\nPartitionName=p\n";
        assert_eq!(
            NodeGroups::of_plan("b".into(), nodes.into_iter(), folded, "# h\n"),
            None
        );
        let shapes: Vec<String> = (0..=MAX_GROUPS).map(|i| format!("s{i}")).collect();
        let many_shapes = shapes.iter().map(|s| ("r:1", s.as_str(), false, "n"));
        assert_eq!(
            NodeGroups::of_plan("b".into(), many_shapes, slurm, "# h\n"),
            None
        );
    }
}
