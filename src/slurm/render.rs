//! Renderers: deterministic slurm.conf and gres.conf text from the models. Nothing is
//! written unless every check in [`super::check`] passes.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::fmt::Write;
use std::hash::{Hash, Hasher};

use super::check::{check_consistency, check_gres_conf, check_slurm_conf, same_text};
use super::error::ConfigError;
use super::gres_conf::{GresConf, GresLine, ListIds};
use super::hostlist::{compress, compress_with_first, natural_cmp, natural_key};
use super::keys::GlobalKey;
use super::node::NodeConf;
use super::node::NodeState;
use super::node_lines::{defaults_apply, node_shape, push_node_lines};
use super::record_entry::NodeEntry;
use super::slurm_conf::{NodeNames, SlurmConf};
use super::text::{push_kv, push_list, push_num, push_quoted};
use super::types::{Feature, GresDevices, NodeName, NodeRef, Reason};
use std::collections::HashMap;

/// First line of every rendered file.
pub const HEADER: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n";

/// A node seen without its name: nodes equal under this key share one hostlist line.
struct SansName<'a>(&'a NodeConf);

impl SansName<'_> {
    #[allow(clippy::type_complexity)]
    fn fields(
        &self,
    ) -> (
        [Option<u64>; 8],
        &[super::node::GresSpec],
        &[Feature],
        Option<super::node::NodeState>,
        &Option<Reason>,
        &[NodeEntry],
    ) {
        let n = self.0;
        (
            [
                n.cpus.map(u64::from),
                n.boards.map(u64::from),
                n.sockets_per_board.map(u64::from),
                n.cores_per_socket.map(u64::from),
                n.threads_per_core.map(u64::from),
                n.real_memory,
                n.mem_spec_limit,
                n.weight.map(u64::from),
            ],
            &n.gres,
            &n.features,
            n.state,
            &n.reason,
            &n.extra,
        )
    }
}

impl PartialEq for SansName<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.fields() == other.fields()
    }
}

impl Eq for SansName<'_> {}

impl Hash for SansName<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.fields().hash(state);
    }
}

/// Lists of fewer names are compressed again where they come back ([`Hostlists`]).
const KEEP_FROM: usize = 256;

/// The long hostlists written in one render, kept with their names: partition and gres.conf
/// lines name the nodes of slurm.conf's node lines again, in the same order, so a list of
/// thousands of names is compressed (and its first name found) once per render, then found
/// again by comparing names by pointer (the models share each name's text).
#[derive(Default)]
struct Hostlists<'a> {
    /// Names (as given), their first name in natural order, their hostlist.
    kept: Vec<(Vec<&'a str>, &'a str, String)>,
}

impl<'a> Hostlists<'a> {
    /// The hostlist of `names` ([`compress`]) and their first name in natural order.
    fn get(&mut self, names: Vec<&'a str>) -> (&'a str, String) {
        let keep = names.len() >= KEEP_FROM;
        let same = |kept: &[&str]| {
            kept.len() == names.len() && kept.iter().zip(&names).all(|(a, b)| same_text(a, b))
        };
        if keep && let Some((_, first, hostlist)) = self.kept.iter().find(|k| same(&k.0)) {
            return (first, hostlist.clone());
        }
        let (at, hostlist) = compress_with_first(&names);
        let first = names.get(at).copied().unwrap_or_default();
        if keep {
            self.kept.push((names, first, hostlist.clone()));
        }
        (first, hostlist)
    }
}

/// Groups items by key and returns `(hostlist, representative)` pairs sorted by the first
/// name of each group (natural order). Items with `None` as key are never folded (not even
/// the names of one item: each gets its own line).
fn fold<'a, K: Hash + Eq, T: Copy>(
    items: impl Iterator<Item = (NodeNames<'a>, Option<K>, T)>,
    hostlists: &mut Hostlists<'a>,
) -> Vec<(String, T)> {
    let (low, high) = items.size_hint();
    let capacity = high.unwrap_or(low);
    // Groups in first-seen order (input is usually sorted, which makes the final sort cheap).
    let mut index: HashMap<K, usize> = HashMap::default();
    index.reserve(capacity);
    let mut groups: Vec<(T, Vec<&'a str>)> = Vec::with_capacity(capacity);
    for (names, key, item) in items {
        match key {
            Some(k) => match index.entry(k) {
                Entry::Occupied(e) => groups[*e.get()].1.extend(names.iter()),
                Entry::Vacant(e) => {
                    e.insert(groups.len());
                    groups.push((item, names.iter().collect()));
                }
            },
            None => groups.extend(names.iter().map(|name| (item, vec![name]))),
        }
    }
    let mut keyed: Vec<_> = groups
        .into_iter()
        .map(|(item, names)| {
            // The line's place is its first name in natural order ([`compress`] sorts alone).
            let (first, hostlist) = hostlists.get(names);
            (natural_key(first), hostlist, item)
        })
        .collect();
    if !keyed.is_sorted_by(|a, b| a.0 <= b.0) {
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    keyed.into_iter().map(|(_, hl, item)| (hl, item)).collect()
}

/// Renders slurm.conf, refusing any configuration Slurm would reject (see [`check_slurm_conf`]).
pub fn render_slurm_conf(conf: &SlurmConf) -> Result<String, ConfigError> {
    check_slurm_conf(conf)?;
    Ok(write_slurm_conf(conf, &mut Hostlists::default()))
}

fn write_slurm_conf<'a>(conf: &'a SlurmConf, hostlists: &mut Hostlists<'a>) -> String {
    let mut out = String::with_capacity(1024 + conf.node_count() * 192);
    write_head(&mut out, conf);
    // Listed nodes one by one, grouped nodes once per group ([`crate::slurm::NodeGroup`]).
    let nodes = conf.node_lines().map(|(n, names)| {
        let foldable = !n
            .extra
            .iter()
            .any(|e| matches!(e.key(), "NodeAddr" | "NodeHostname"));
        (names, foldable.then_some(SansName(n)), n)
    });
    let lines: Vec<_> = fold(nodes, hostlists)
        .into_iter()
        .map(|(hl, node)| (hl, node_shape(node), node.real_memory))
        .collect();
    let defaults = defaults_apply(lines.iter().map(|(_, shape, _)| shape.keys));
    push_node_lines(
        &mut out,
        defaults,
        lines
            .iter()
            .map(|(hl, shape, real_memory)| shape.line(hl, *real_memory)),
    );
    let mut sets: Vec<_> = conf.node_sets.iter().collect();
    sets.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    for s in sets {
        let _ = write!(out, "NodeSet={}", s.name);
        if let Some(f) = &s.feature {
            push_kv(&mut out, "Feature", f);
        }
        if !s.nodes.is_empty() {
            let nodes: Vec<&NodeRef> = s.nodes.iter().collect();
            push_kv(&mut out, "Nodes", &compress(&nodes));
        }
        out.push('\n');
    }
    let mut parts: Vec<_> = conf.partitions.iter().collect();
    parts.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    for p in parts {
        let nodes = p.has_nodes().then(|| {
            // `compress` sorts and drops repeats: the names count as if they were in the set.
            let mut nodes: Vec<&str> = Vec::with_capacity(p.nodes.len() + p.node_names.len());
            nodes.extend(p.nodes.iter().map(NodeRef::as_str));
            nodes.extend(p.node_names.iter().map(NodeName::as_str));
            hostlists.get(nodes).1
        });
        push_partition_line(&mut out, p, nodes.as_deref());
    }
    // Lines with the same (state, reason) merged, in that order, as
    // [`super::slurm_conf::merge_down_nodes`] does (without copying the names).
    let mut down: BTreeMap<(Option<NodeState>, Option<&str>), Vec<&NodeName>> = BTreeMap::new();
    for d in &conf.down_nodes {
        down.entry((d.state, d.reason.as_deref()))
            .or_default()
            .extend(d.nodes.iter());
    }
    for ((state, reason), nodes) in down {
        if nodes.is_empty() {
            continue;
        }
        push_down_nodes_line(&mut out, &compress(&nodes), state, reason);
    }
    out
}

/// Appends one `PartitionName=` line, its nodes given as a hostlist (`None`: no `Nodes=`). The
/// one writer of partition lines (the full render and the controller's render from its store).
pub fn push_partition_line(out: &mut String, p: &super::Partition, nodes: Option<&str>) {
    out.push_str("PartitionName=");
    out.push_str(p.name.as_str());
    if let Some(nodes) = nodes {
        push_kv(out, "Nodes", nodes);
    }
    if p.default {
        push_kv(out, "Default", "YES");
    }
    if let Some(s) = p.state {
        push_kv(out, "State", s.as_str());
    }
    for e in &p.extra {
        push_kv(out, e.key(), e.value());
    }
    out.push('\n');
}

/// Appends one `DownNodes=` line for the nodes of `hostlist`. The one writer of DownNodes lines.
pub fn push_down_nodes_line(
    out: &mut String,
    hostlist: &str,
    state: Option<NodeState>,
    reason: Option<&str>,
) {
    out.push_str("DownNodes=");
    out.push_str(hostlist);
    if let Some(s) = state {
        push_kv(out, "State", s.as_str());
    }
    if let Some(r) = reason {
        out.push_str(" Reason=");
        push_quoted(out, r);
    }
    out.push('\n');
}

/// The start of slurm.conf up to its node lines (header, cluster, controller, global keys,
/// includes), after checking `conf` as [`render_slurm_conf`] does: the controller renders its
/// node, partition and DownNodes lines from records checked when they arrived, after this.
pub fn render_slurm_conf_head(conf: &SlurmConf) -> Result<String, ConfigError> {
    check_slurm_conf(conf)?;
    let mut out = String::with_capacity(1024);
    write_head(&mut out, conf);
    Ok(out)
}

/// Writes slurm.conf's lines before its nodes.
fn write_head(out: &mut String, conf: &SlurmConf) {
    out.push_str(HEADER);
    let _ = writeln!(out, "ClusterName={}", conf.cluster_name);
    for h in &conf.slurmctld_hosts {
        let _ = writeln!(out, "SlurmctldHost={h}");
    }
    for key in GlobalKey::ALL {
        if let Some(v) = conf.owned.get(&key) {
            let _ = writeln!(out, "{}={v}", key.as_str());
        }
    }
    for (k, v) in &conf.extra {
        let _ = writeln!(out, "{k}={v}");
    }
    for i in &conf.includes {
        let _ = writeln!(out, "Include {i}");
    }
}

/// One gres.conf record's text after `NodeName=<names> ` (what [`push_gres_lines`] writes per
/// record).
pub fn gres_record_text(r: &GresLine) -> String {
    let mut s = String::with_capacity(96);
    push_record(&mut s, r);
    s
}

/// Writes one record: the one gres.conf writer (the `detect-gpus` action's preview uses it
/// too, through [`render_gres_records`]).
fn push_record(s: &mut String, r: &GresLine) {
    s.push_str("Name=");
    s.push_str(&r.name);
    if let Some(t) = &r.gres_type {
        push_kv(s, "Type", t);
    }
    match &r.devices {
        Some(GresDevices::File(f)) => push_kv(s, "File", &f.to_string()),
        Some(GresDevices::Multiple(m)) => push_kv(s, "MultipleFiles", &m.to_string()),
        None => {}
    }
    if let Some(c) = r.count {
        push_num(s, "Count", c);
    }
    if let Some(c) = &r.cores {
        push_kv(s, "Cores", &c.to_string());
    }
    if let Some(l) = &r.links {
        push_kv(s, "Links", &l.to_string());
    }
    push_list(s, "Flags", r.flags.flags().iter().map(|f| f.as_str()));
}

/// The gres.conf lines of one node's records (`NodeName=<node> Name=gpu ...`), one per
/// record, without a header: what the slurmd charm shows in `detect-gpus`.
pub fn render_gres_records(node: &str, records: &[GresLine]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let mut line = format!("NodeName={node} ");
            push_record(&mut line, r);
            line
        })
        .collect()
}

impl GresConf {
    /// Renders gres.conf (see [`render_gres_conf`]).
    pub fn render(&self) -> Result<String, ConfigError> {
        render_gres_conf(self)
    }
}

/// Renders gres.conf: `AutoDetect`, global `Name=` records, then per-node records with
/// `NodeName=` first; nodes whose record lists are identical share `NodeName=<hostlist>` lines.
pub fn render_gres_conf(conf: &GresConf) -> Result<String, ConfigError> {
    check_gres_conf(conf)?;
    Ok(write_gres_conf(conf, &mut Hostlists::default()))
}

fn write_gres_conf<'a>(conf: &'a GresConf, hostlists: &mut Hostlists<'a>) -> String {
    let mut out = String::with_capacity(128 + (conf.nodes.len() + conf.node_groups.len()) * 128);
    out.push_str(HEADER);
    if let Some(a) = conf.auto_detect {
        let _ = writeln!(out, "AutoDetect={a}");
    }
    for r in &conf.global {
        push_record(&mut out, r);
        out.push('\n');
    }
    // Nodes with identical record lists share NodeName=<hostlist> lines. Lists are told apart
    // once per shared list (by pointer), then by content, so 10,000 listed nodes of one shape
    // cost 10,000 pointer lookups rather than 10,000 hashes of their records, and a group
    // ([`crate::slurm::GresGroup`]) costs one. A node named twice with one list (the checks
    // refuse two lists) is written once: [`compress`] drops repeats.
    let mut ids = ListIds::default();
    let listed = conf
        .nodes
        .iter()
        .filter(|(_, rs)| !rs.is_empty())
        .map(|(name, rs)| (NodeNames::One(name.as_str()), rs));
    let grouped = conf
        .node_groups
        .iter()
        .filter(|g| !g.records.is_empty() && !g.names.is_empty())
        .map(|g| (NodeNames::Many(&g.names), &g.records));
    let nodes = listed
        .chain(grouped)
        .map(|(names, rs)| (names, Some(ids.id(rs)), rs.as_slice()));
    for (hl, records) in fold(nodes, hostlists) {
        push_gres_lines(&mut out, &hl, records);
    }
    out
}

/// Appends the gres.conf lines of `records` for the nodes of `hostlist`, one per record. The
/// one writer of node records in gres.conf for the full render.
pub fn push_gres_lines(out: &mut String, hostlist: &str, records: &[GresLine]) {
    for r in records {
        out.push_str("NodeName=");
        out.push_str(hostlist);
        out.push(' ');
        push_record(out, r);
        out.push('\n');
    }
}

/// Both rendered files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFiles {
    /// slurm.conf text.
    pub slurm_conf: String,
    /// gres.conf text.
    pub gres_conf: String,
}

/// Renders both files after checking them against each other ([`check_consistency`]):
/// GRES counts and type strings must agree per node.
pub fn render_files(slurm: &SlurmConf, gres: &GresConf) -> Result<RenderedFiles, ConfigError> {
    check_slurm_conf(slurm)?;
    check_gres_conf(gres)?;
    check_consistency(slurm, gres)?;
    // gres.conf's lines name slurm.conf's nodes again: their hostlists are made once.
    let mut hostlists = Hostlists::default();
    Ok(RenderedFiles {
        slurm_conf: write_slurm_conf(slurm, &mut hostlists),
        gres_conf: write_gres_conf(gres, &mut hostlists),
    })
}

#[cfg(test)]
mod tests {
    use super::{Hostlists, KEEP_FROM, compress};
    use crate::slurm::hostlist::natural_cmp;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("gpu-{i}")).collect()
    }

    fn least(names: &[&str]) -> String {
        let mut sorted = names.to_vec();
        sorted.sort_by(|a, b| natural_cmp(a, b));
        sorted[0].to_string()
    }

    #[test]
    fn kept_hostlists_are_those_of_the_same_names_only() {
        let a = names(KEEP_FROM + 10);
        let mut b = a.clone();
        b[7] = "cpu-1".to_string();
        let mut c = a.clone();
        c.reverse();
        let a_copy = a.clone();
        let short = names(3);
        let mut hostlists = Hostlists::default();
        for _ in 0..2 {
            for list in [&a, &b, &c, &a_copy, &short] {
                let list: Vec<&str> = list.iter().map(String::as_str).collect();
                let (first, hostlist) = hostlists.get(list.clone());
                assert_eq!(hostlist, compress(&list));
                assert_eq!(first, least(&list));
            }
        }
        // a, b and c kept (a's copy was found by text), the short list not
        assert_eq!(hostlists.kept.len(), 3);
    }
}
