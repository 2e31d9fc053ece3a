//! Renderers: deterministic slurm.conf and gres.conf text from the models. Nothing is
//! written unless every check in [`super::check`] passes.

use std::collections::HashMap;
use std::fmt::Write;

use super::check::{check_consistency, check_gres_conf, check_slurm_conf};
use super::error::ConfigError;
use super::gres_conf::{GresConf, GresLine};
use super::hostlist::{compress, format_ranges, natural_cmp};
use super::keys::GlobalKey;
use super::node::NodeConf;
use super::slurm_conf::SlurmConf;

/// First line of every rendered file.
pub const HEADER: &str = "# Written by the slurmctld charm; manual changes are overwritten.\n";

/// Writes free text quoted, escaping `\` and `#` the way Slurm's lexer unescapes them.
fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if c == '\\' || c == '#' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

fn push_kv(out: &mut String, key: &str, value: impl std::fmt::Display) {
    let _ = write!(out, " {key}={value}");
}

/// Everything on a node line after `NodeName=<names>`.
fn node_tail(n: &NodeConf) -> String {
    let mut s = String::with_capacity(160);
    let nums = [
        ("CPUs", n.cpus.map(u64::from)),
        ("Boards", n.boards.map(u64::from)),
        ("SocketsPerBoard", n.sockets_per_board.map(u64::from)),
        ("CoresPerSocket", n.cores_per_socket.map(u64::from)),
        ("ThreadsPerCore", n.threads_per_core.map(u64::from)),
        ("RealMemory", n.real_memory),
    ];
    for (k, v) in nums {
        if let Some(v) = v {
            push_kv(&mut s, k, v);
        }
    }
    if !n.gres.is_empty() {
        s.push_str(" Gres=");
        for (i, g) in n.gres.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, "{g}");
        }
    }
    if let Some(v) = n.mem_spec_limit {
        push_kv(&mut s, "MemSpecLimit", v);
    }
    if !n.features.is_empty() {
        push_kv(&mut s, "Features", n.features.join(","));
    }
    if let Some(v) = n.weight {
        push_kv(&mut s, "Weight", v);
    }
    for (k, v) in &n.extra {
        push_kv(&mut s, k, v);
    }
    if let Some(v) = n.state {
        push_kv(&mut s, "State", v);
    }
    if let Some(r) = &n.reason {
        s.push_str(" Reason=");
        push_quoted(&mut s, r);
    }
    s
}

/// Groups items by their rendered tail and returns `(hostlist, tail)` lines sorted by the
/// first name of each group (natural order).
fn fold<'a>(items: impl Iterator<Item = (&'a str, String, bool)>) -> Vec<(String, String)> {
    let mut groups: HashMap<String, Vec<&'a str>> = HashMap::new();
    let mut single: Vec<(&'a str, String)> = Vec::new();
    for (name, tail, foldable) in items {
        if foldable {
            groups.entry(tail).or_default().push(name);
        } else {
            single.push((name, tail));
        }
    }
    let mut lines: Vec<(&str, String, String)> = Vec::with_capacity(groups.len() + single.len());
    for (tail, mut names) in groups {
        names.sort_unstable_by(|a, b| natural_cmp(a, b));
        lines.push((names[0], compress(&names), tail));
    }
    for (name, tail) in single {
        lines.push((name, name.to_string(), tail));
    }
    lines.sort_unstable_by(|a, b| natural_cmp(a.0, b.0));
    lines.into_iter().map(|(_, hl, tail)| (hl, tail)).collect()
}

/// Renders slurm.conf, refusing any configuration Slurm would reject (see [`check_slurm_conf`]).
pub fn render_slurm_conf(conf: &SlurmConf) -> Result<String, ConfigError> {
    check_slurm_conf(conf)?;
    Ok(write_slurm_conf(conf))
}

fn write_slurm_conf(conf: &SlurmConf) -> String {
    let mut out = String::with_capacity(256 + conf.nodes.len() * 160);
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
    let nodes = conf.nodes.iter().map(|n| {
        let foldable = !n
            .extra
            .iter()
            .any(|(k, _)| k == "NodeAddr" || k == "NodeHostname");
        (n.name.as_str(), node_tail(n), foldable)
    });
    for (hl, tail) in fold(nodes) {
        let _ = writeln!(out, "NodeName={hl}{tail}");
    }
    let mut sets: Vec<_> = conf.node_sets.iter().collect();
    sets.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    for s in sets {
        let _ = write!(out, "NodeSet={}", s.name);
        if let Some(f) = &s.feature {
            push_kv(&mut out, "Feature", f);
        }
        if !s.nodes.is_empty() {
            let nodes: Vec<&String> = s.nodes.iter().collect();
            push_kv(&mut out, "Nodes", compress(&nodes));
        }
        out.push('\n');
    }
    let mut parts: Vec<_> = conf.partitions.iter().collect();
    parts.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    for p in parts {
        let _ = write!(out, "PartitionName={}", p.name);
        if !p.nodes.is_empty() {
            let nodes: Vec<&String> = p.nodes.iter().collect();
            push_kv(&mut out, "Nodes", compress(&nodes));
        }
        if p.default {
            push_kv(&mut out, "Default", "YES");
        }
        if let Some(s) = p.state {
            push_kv(&mut out, "State", s);
        }
        for (k, v) in &p.extra {
            push_kv(&mut out, k, v);
        }
        out.push('\n');
    }
    for d in super::slurm_conf::merge_down_nodes(&conf.down_nodes) {
        let nodes: Vec<&String> = d.nodes.iter().collect();
        let _ = write!(out, "DownNodes={}", compress(&nodes));
        if let Some(s) = d.state {
            push_kv(&mut out, "State", s);
        }
        if let Some(r) = &d.reason {
            out.push_str(" Reason=");
            push_quoted(&mut out, r);
        }
        out.push('\n');
    }
    out
}

fn push_record(s: &mut String, r: &GresLine) {
    let _ = write!(s, "Name={}", r.name);
    if let Some(t) = &r.gres_type {
        push_kv(s, "Type", t);
    }
    if !r.files.is_empty() {
        push_kv(s, "File", compress(&r.files));
    }
    if !r.multiple_files.is_empty() {
        push_kv(s, "MultipleFiles", r.multiple_files.join(","));
    }
    if let Some(c) = r.count {
        push_kv(s, "Count", c);
    }
    if !r.cores.is_empty() {
        push_kv(s, "Cores", format_ranges(&r.cores));
    }
    if !r.links.is_empty() {
        let links: Vec<String> = r.links.iter().map(i32::to_string).collect();
        push_kv(s, "Links", links.join(","));
    }
    if !r.flags.is_empty() {
        push_kv(s, "Flags", r.flags.join(","));
    }
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
    Ok(write_gres_conf(conf))
}

fn write_gres_conf(conf: &GresConf) -> String {
    let mut out = String::with_capacity(128 + conf.nodes.len() * 80);
    out.push_str(HEADER);
    if let Some(a) = conf.auto_detect {
        let _ = writeln!(out, "AutoDetect={a}");
    }
    for r in &conf.global {
        push_record(&mut out, r);
        out.push('\n');
    }
    // Tail = the node's records, each as " <record>\n" joined; folded by identical tails.
    let nodes = conf
        .nodes
        .iter()
        .filter(|(_, rs)| !rs.is_empty())
        .map(|(name, rs)| {
            let mut tail = String::with_capacity(80 * rs.len());
            for r in rs {
                tail.push(' ');
                push_record(&mut tail, r);
                tail.push('\n');
            }
            (name.as_str(), tail, true)
        });
    for (hl, tail) in fold(nodes) {
        for line in tail.lines() {
            let _ = writeln!(out, "NodeName={hl}{line}");
        }
    }
    out
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
    Ok(RenderedFiles {
        slurm_conf: write_slurm_conf(slurm),
        gres_conf: write_gres_conf(gres),
    })
}
