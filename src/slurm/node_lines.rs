//! slurm.conf's node section, written short where nodes share a shape: a run of two or more
//! lines whose nodes differ only in their names and `RealMemory` (nodes of one model differ by
//! a few MB) is written as one `NodeName=DEFAULT <shape>` line followed by
//! `NodeName=<hosts> RealMemory=<MB>` lines, as Slurm's own examples do. At 10,000 distinct
//! nodes that makes slurm.conf a fifth of its size (0.38 MB instead of 1.98), and the controller renders, hashes,
//! writes and `fsync`s it on every change (docs/BENCHMARKS.md, issue 38, tenth pass).
//!
//! Slurm merges each `NodeName=DEFAULT` line into the defaults before it (a key it leaves out
//! keeps its earlier default) and a node line takes every key it does not set from those
//! defaults (`_parse_nodename` in Slurm's `read_config.c`). So defaults are used only where
//! every node line of the file sets the same keys ([`defaults_apply`]): each `DEFAULT` line then
//! replaces every earlier default, and a line written in full overrides every default. Where
//! the keys differ (GPU nodes beside CPU-only nodes), or a line names one host by `NodeAddr`,
//! `NodeHostname` or `BcastAddr` (which Slurm refuses on a `DEFAULT` line), every line is written
//! in full, as before.

use super::keys::NODE_KEYS;
use super::node::NodeConf;
use super::text::{push_kv, push_list, push_num, push_quoted, push_u64};
use serde::{Deserialize, Serialize};

/// The `NodeName` keys a node line's shape sets (everything but `NodeName` and `RealMemory`):
/// one bit per key of [`NODE_KEYS`], so that lines can be compared by which keys they set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ShapeKeys(u32);

/// A key outside [`NODE_KEYS`] (none is accepted; kept apart so it never passes for another).
const OTHER: u32 = 1 << 31;

impl ShapeKeys {
    /// Records that the shape sets `key`.
    pub fn insert(&mut self, key: &str) {
        self.0 |= bit(key);
    }

    /// Whether Slurm accepts these keys on a `NodeName=DEFAULT` line.
    fn may_be_default(self) -> bool {
        let refused = bit("NodeAddr") | bit("NodeHostname") | bit("BcastAddr") | OTHER;
        self.0 & refused == 0
    }
}

/// `key`'s bit: its place in [`NODE_KEYS`], or [`OTHER`].
fn bit(key: &str) -> u32 {
    NODE_KEYS
        .iter()
        .position(|k| k.eq_ignore_ascii_case(key))
        .map_or(OTHER, |i| 1 << i)
}

/// Whether the node lines whose shapes set `keys` may share `NodeName=DEFAULT` lines: every
/// one sets the same keys, and Slurm accepts them on a `DEFAULT` line. False without lines.
pub fn defaults_apply(keys: impl IntoIterator<Item = ShapeKeys>) -> bool {
    let mut keys = keys.into_iter();
    let Some(first) = keys.next() else {
        return false;
    };
    first.may_be_default() && keys.all(|k| k == first)
}

/// A node line's tail without its `RealMemory` ([`NodeShape`]): nodes of one model differ in
/// RealMemory by a few MB and share the rest, so the controller keeps this text once for all of
/// them (the writer puts the number back) and slurm.conf may share it through
/// `NodeName=DEFAULT` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShape {
    /// The line after `NodeName=<hosts>`, without ` RealMemory=<MB>`.
    pub text: String,
    /// The byte offset in `text` where ` RealMemory=<MB>` goes.
    pub at: usize,
    /// The keys `text` sets.
    pub keys: ShapeKeys,
}

impl NodeShape {
    /// The node line of `hostlist` with this shape and `real_memory`, for [`push_node_lines`].
    pub fn line<H>(&self, hostlist: H, real_memory: Option<u64>) -> NodeLine<'_, H> {
        NodeLine {
            hostlist,
            shape: &self.text,
            at: self.at,
            real_memory,
        }
    }
}

/// The [`NodeShape`] of a node's line.
pub fn node_shape(n: &NodeConf) -> NodeShape {
    let mut s = String::with_capacity(160);
    let mut keys = ShapeKeys::default();
    let nums = [
        ("CPUs", n.cpus.map(u64::from)),
        ("Boards", n.boards.map(u64::from)),
        ("SocketsPerBoard", n.sockets_per_board.map(u64::from)),
        ("CoresPerSocket", n.cores_per_socket.map(u64::from)),
        ("ThreadsPerCore", n.threads_per_core.map(u64::from)),
    ];
    for (k, v) in nums {
        if let Some(v) = v {
            push_num(&mut s, k, v);
            keys.insert(k);
        }
    }
    let at = s.len();
    if !n.gres.is_empty() {
        s.push_str(" Gres=");
        keys.insert("Gres");
        for (i, g) in n.gres.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&g.name);
            if let Some(t) = &g.gres_type {
                s.push(':');
                s.push_str(t);
            }
            if g.no_consume {
                s.push_str(":no_consume");
            }
            s.push(':');
            push_u64(&mut s, g.count);
        }
    }
    if let Some(v) = n.mem_spec_limit {
        push_num(&mut s, "MemSpecLimit", v);
        keys.insert("MemSpecLimit");
    }
    if !n.features.is_empty() {
        push_list(&mut s, "Features", n.features.iter().map(|f| f.as_str()));
        keys.insert("Features");
    }
    if let Some(v) = n.weight {
        push_num(&mut s, "Weight", u64::from(v));
        keys.insert("Weight");
    }
    for e in &n.extra {
        push_kv(&mut s, e.key(), e.value());
        keys.insert(e.key());
    }
    if let Some(v) = n.state {
        push_kv(&mut s, "State", v.as_str());
        keys.insert("State");
    }
    if let Some(r) = &n.reason {
        s.push_str(" Reason=");
        push_quoted(&mut s, r);
        keys.insert("Reason");
    }
    NodeShape { text: s, at, keys }
}

/// Appends a node line's tail from its [`node_shape`] and `RealMemory` (none: left out).
/// `at` must lie on a character boundary of `shape`; one that does not is taken as its end.
fn push_tail(out: &mut String, shape: &str, at: usize, real_memory: Option<u64>) {
    let (before, after) = shape.split_at_checked(at).unwrap_or((shape, ""));
    out.push_str(before);
    if let Some(v) = real_memory {
        push_num(out, "RealMemory", v);
    }
    out.push_str(after);
}

/// Appends one slurm.conf node line in full: `NodeName=<hostlist>` and the tail the nodes
/// share, from its [`node_shape`] and `RealMemory` ([`push_tail`]).
fn push_node_line(
    out: &mut String,
    hostlist: &str,
    shape: &str,
    at: usize,
    real_memory: Option<u64>,
) {
    out.push_str("NodeName=");
    out.push_str(hostlist);
    push_tail(out, shape, at, real_memory);
    out.push('\n');
}

/// One node line: its hostlist, its shape (text and where `RealMemory` goes, as
/// [`node_shape`] gives them) and its `RealMemory`.
#[derive(Debug, Clone)]
pub struct NodeLine<'s, H> {
    /// `NodeName=` of the line.
    pub hostlist: H,
    /// The line after `NodeName=<hosts>`, without ` RealMemory=<MB>`.
    pub shape: &'s str,
    /// The byte offset in `shape` where ` RealMemory=<MB>` goes.
    pub at: usize,
    /// `RealMemory` (MB); none: left out.
    pub real_memory: Option<u64>,
}

/// Appends the node lines in their order: where `defaults` ([`defaults_apply`] over every
/// line), a run of two or more lines of one shape as one `NodeName=DEFAULT` line and short
/// lines; every other line in full.
pub fn push_node_lines<'s, H: AsRef<str>>(
    out: &mut String,
    defaults: bool,
    lines: impl IntoIterator<Item = NodeLine<'s, H>>,
) {
    let mut lines = lines.into_iter().peekable();
    // the shape of the last `NodeName=DEFAULT` line written
    let mut default: Option<(&str, usize)> = None;
    while let Some(line) = lines.next() {
        let shape = (line.shape, line.at);
        let mut short = default == Some(shape);
        if !short
            && defaults
            && lines
                .peek()
                .is_some_and(|next| (next.shape, next.at) == shape)
        {
            out.push_str("NodeName=DEFAULT");
            push_tail(out, line.shape, line.at, None);
            out.push('\n');
            default = Some(shape);
            short = true;
        }
        if short {
            out.push_str("NodeName=");
            out.push_str(line.hostlist.as_ref());
            if let Some(mb) = line.real_memory {
                out.push_str(" RealMemory=");
                push_u64(out, mb);
            }
            out.push('\n');
        } else {
            push_node_line(
                out,
                line.hostlist.as_ref(),
                line.shape,
                line.at,
                line.real_memory,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::parse_slurm_conf;

    fn node(name: &str, cpus: u16, gres: bool, memory: u64) -> NodeConf {
        let mut n = NodeConf::new(name.parse().expect("name"));
        n.set("CPUs", &cpus.to_string()).expect("CPUs");
        n.set("RealMemory", &memory.to_string())
            .expect("RealMemory");
        if gres {
            n.set("Gres", "gpu:h100:8").expect("Gres");
        }
        n
    }

    /// The node section for `nodes`, one line each, with defaults where they apply.
    fn section(nodes: &[NodeConf]) -> String {
        written(nodes, true)
    }

    /// The node section for `nodes`, one line each; with `may_default`, defaults where they
    /// apply, else every line in full.
    fn written(nodes: &[NodeConf], may_default: bool) -> String {
        let shapes: Vec<_> = nodes.iter().map(node_shape).collect();
        let defaults = may_default && defaults_apply(shapes.iter().map(|s| s.keys));
        let mut out = String::new();
        push_node_lines(
            &mut out,
            defaults,
            nodes
                .iter()
                .zip(&shapes)
                .map(|(n, s)| s.line(n.name.as_str(), n.real_memory)),
        );
        out
    }

    #[test]
    fn a_run_of_one_shape_shares_a_default_line() {
        let nodes = [
            node("a", 8, true, 100),
            node("b", 8, true, 101),
            node("c", 4, true, 100),
            node("d", 8, true, 102),
            node("e", 4, true, 103),
            node("f", 4, true, 104),
        ];
        assert_eq!(
            section(&nodes),
            "NodeName=DEFAULT CPUs=8 Gres=gpu:h100:8\n\
             NodeName=a RealMemory=100\n\
             NodeName=b RealMemory=101\n\
             NodeName=c CPUs=4 RealMemory=100 Gres=gpu:h100:8\n\
             NodeName=d RealMemory=102\n\
             NodeName=DEFAULT CPUs=4 Gres=gpu:h100:8\n\
             NodeName=e RealMemory=103\n\
             NodeName=f RealMemory=104\n"
        );
    }

    #[test]
    fn lines_that_set_different_keys_are_written_in_full() {
        let nodes = [
            node("a", 8, true, 100),
            node("b", 8, true, 101),
            node("c", 8, false, 102),
            node("d", 8, false, 103),
        ];
        assert_eq!(
            section(&nodes),
            "NodeName=a CPUs=8 RealMemory=100 Gres=gpu:h100:8\n\
             NodeName=b CPUs=8 RealMemory=101 Gres=gpu:h100:8\n\
             NodeName=c CPUs=8 RealMemory=102\n\
             NodeName=d CPUs=8 RealMemory=103\n"
        );
        let mut addressed = [node("a", 8, true, 100), node("b", 8, true, 101)];
        for n in &mut addressed {
            n.set("NodeAddr", "10.0.0.1").expect("NodeAddr");
        }
        assert!(!section(&addressed).contains("DEFAULT"));
        assert!(!defaults_apply([]));
    }

    #[test]
    fn defaults_read_back_as_the_full_lines_they_stand_for() {
        let nodes: Vec<NodeConf> = (0..6)
            .map(|i| {
                node(
                    &format!("n{i}"),
                    4 + 4 * (i % 2 == 0 && i > 2) as u16,
                    true,
                    100 + i,
                )
            })
            .collect();
        let short = section(&nodes);
        assert!(short.contains("NodeName=DEFAULT"), "{short}");
        let full = written(&nodes, false);
        assert!(!full.contains("DEFAULT"), "{full}");
        let parsed = |text: &str| parse_slurm_conf(text, "slurm.conf").expect("parses").nodes;
        assert_eq!(parsed(&short), parsed(&full));
        assert_eq!(parsed(&short), nodes);
    }
}
