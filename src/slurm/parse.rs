//! Parsers for slurm.conf and gres.conf text, following Slurm's lexical rules
//! ([`super::lexer`]) and its line structure: the first key of a line decides the record, and
//! a global key stands alone on its line. The result is the normalised model.

use std::collections::HashSet;

use super::error::{ConfigError, ParseError, ParseErrorKind};
use super::gres_conf::{AutoDetect, GresConf, GresLine};
use super::hostlist;
use super::lexer::{LexError, LogicalLine, include_directive, logical_lines, pairs};
use super::node::{NodeConf, NodeState};
use super::partition::{DownNodes, NodeSet, Partition, node_set};
use super::slurm_conf::SlurmConf;
use super::types::{Feature, NodeName, NodeRef, NodeSetName, PartitionName, Reason};
use super::validate::validate_token;

/// Builds errors for one logical line.
struct At<'a> {
    origin: &'a str,
    line: usize,
}

impl At<'_> {
    fn err(&self, kind: impl Into<ParseErrorKind>) -> ParseError {
        ParseError {
            origin: self.origin.to_string(),
            line: self.line,
            kind: kind.into(),
        }
    }
    fn syntax(&self, expected: &str, found: &str) -> ParseError {
        self.err(ParseErrorKind::Syntax {
            expected: expected.to_string(),
            found: found.to_string(),
        })
    }
    fn lex(&self, e: LexError) -> ParseError {
        self.syntax(e.expected, &e.found)
    }
}

fn lines_with_pairs(text: &str) -> impl Iterator<Item = LogicalLine<'_>> {
    logical_lines(text).into_iter()
}

/// Parses slurm.conf text. `origin` (a path or name) is used in errors. `Include` lines are
/// recorded, not followed. `NodeName=DEFAULT` / `PartitionName=DEFAULT` lines set defaults for
/// the lines after them, as in Slurm. Duplicated nodes and partitions are errors.
pub fn parse_slurm_conf(text: &str, origin: &str) -> Result<SlurmConf, ParseError> {
    let mut conf = SlurmConf::default();
    let mut node_default = NodeConf::new(NodeName::placeholder());
    let mut part_default = Partition::new(PartitionName::placeholder());
    let mut node_names: HashSet<String> = HashSet::new();
    let mut part_names: HashSet<PartitionName> = HashSet::new();
    for ll in lines_with_pairs(text) {
        let at = At {
            origin,
            line: ll.line,
        };
        if let Some(inc) = include_directive(&ll.text) {
            let file = inc.map_err(|e| at.lex(e))?;
            validate_token("Include", file).map_err(|e| at.err(e))?;
            conf.includes.push(file.to_string());
            continue;
        }
        let kv = pairs(&ll.text).map_err(|e| at.lex(e))?;
        let Some(&(first, value)) = kv.first() else {
            continue;
        };
        let rest = &kv[1..];
        match first.to_ascii_lowercase().as_str() {
            "nodename" => {
                if value.eq_ignore_ascii_case("DEFAULT") {
                    for (k, v) in rest {
                        node_default.set(k, v).map_err(|e| at.err(e))?;
                    }
                    continue;
                }
                let names = hostlist::expand(value).map_err(|e| at.err(e))?;
                let mut template = node_default.clone();
                let mut per_node: Vec<(&str, Vec<String>)> = Vec::new();
                for (k, v) in rest {
                    let spread = k.eq_ignore_ascii_case("NodeAddr")
                        || k.eq_ignore_ascii_case("NodeHostname");
                    if spread && names.len() > 1 {
                        let values = hostlist::expand(v).map_err(|e| at.err(e))?;
                        if values.len() != names.len() {
                            return Err(at.err(ConfigError::invalid(
                                k,
                                v,
                                format!("gives {} names for {} nodes", values.len(), names.len()),
                            )));
                        }
                        per_node.push((k, values));
                    } else {
                        template.set(k, v).map_err(|e| at.err(e))?;
                    }
                }
                let last = names.len().saturating_sub(1);
                for (i, name) in names.into_iter().enumerate() {
                    let mut node = if i == last {
                        std::mem::replace(&mut template, NodeConf::new(NodeName::placeholder()))
                    } else {
                        template.clone()
                    };
                    node.set("NodeName", &name).map_err(|e| at.err(e))?;
                    for (k, values) in &per_node {
                        node.set(k, &values[i]).map_err(|e| at.err(e))?;
                    }
                    if !node_names.insert(name.clone()) {
                        return Err(at.err(ConfigError::DuplicateNode { node: name }));
                    }
                    conf.nodes.push(node);
                }
            }
            "partitionname" => {
                let mut p = part_default.clone();
                for (k, v) in rest {
                    p.set(k, v).map_err(|e| at.err(e))?;
                }
                if value.eq_ignore_ascii_case("DEFAULT") {
                    part_default = p;
                    continue;
                }
                p.set("PartitionName", value).map_err(|e| at.err(e))?;
                if !part_names.insert(p.name.clone()) {
                    let partition = p.name.into_string();
                    return Err(at.err(ConfigError::DuplicatePartition { partition }));
                }
                conf.partitions.push(p);
            }
            "downnodes" => {
                let mut d = DownNodes {
                    nodes: node_set("DownNodes", value).map_err(|e| at.err(e))?,
                    ..DownNodes::default()
                };
                for (k, v) in rest {
                    if k.eq_ignore_ascii_case("State") {
                        d.state = Some(NodeState::parse("State", v).map_err(|e| at.err(e))?);
                    } else if k.eq_ignore_ascii_case("Reason") {
                        d.reason =
                            Some(Reason::try_from(*v).map_err(|e| at.err(ConfigError::from(e)))?);
                    } else {
                        return Err(at.syntax("State= or Reason= on a DownNodes line", k));
                    }
                }
                d.validate().map_err(|e| at.err(e))?;
                conf.down_nodes.push(d);
            }
            "nodeset" => {
                let mut s = NodeSet {
                    name: NodeSetName::try_from(value).map_err(|e| at.err(ConfigError::from(e)))?,
                    feature: None,
                    nodes: Default::default(),
                };
                for (k, v) in rest {
                    if k.eq_ignore_ascii_case("Feature") {
                        s.feature =
                            Some(Feature::try_from(*v).map_err(|e| at.err(ConfigError::from(e)))?);
                    } else if k.eq_ignore_ascii_case("Nodes") {
                        s.nodes =
                            NodeRef::list("Nodes", v).map_err(|e| at.err(ConfigError::from(e)))?;
                    } else {
                        return Err(at.syntax("Feature= or Nodes= on a NodeSet line", k));
                    }
                }
                s.validate().map_err(|e| at.err(e))?;
                conf.node_sets.push(s);
            }
            "frontendname" => {
                return Err(at.syntax("a record this model supports (FrontendName is not)", first));
            }
            _ => {
                if let Some((k, _)) = rest.first() {
                    return Err(at.syntax("one global Key=Value per line (Slurm rule)", k));
                }
                conf.set_global(first, value).map_err(|e| at.err(e))?;
            }
        }
    }
    conf.normalize();
    Ok(conf)
}

/// Parses gres.conf text: `AutoDetect=` alone on a line, `Name=` records (global) and
/// `NodeName=<hostlist> Name=...` records, NodeName first. `Include` is refused.
pub fn parse_gres_conf(text: &str, origin: &str) -> Result<GresConf, ParseError> {
    let mut conf = GresConf::default();
    for ll in lines_with_pairs(text) {
        let at = At {
            origin,
            line: ll.line,
        };
        if include_directive(&ll.text).is_some() {
            return Err(at.syntax(
                "a gres.conf record (Include is not supported here)",
                &ll.text,
            ));
        }
        let kv = pairs(&ll.text).map_err(|e| at.lex(e))?;
        let Some(&(first, value)) = kv.first() else {
            continue;
        };
        let rest = &kv[1..];
        match first.to_ascii_lowercase().as_str() {
            "autodetect" => {
                if let Some((k, _)) = rest.first() {
                    return Err(at.syntax("AutoDetect alone on its line", k));
                }
                conf.auto_detect = Some(AutoDetect::parse(value).map_err(|e| at.err(e))?);
            }
            "name" => {
                let r = GresLine::from_pairs("*", &kv).map_err(|e| at.err(e))?;
                conf.global.push(r);
            }
            "nodename" => {
                let names = hostlist::expand(value).map_err(|e| at.err(e))?;
                if let Some((k, _)) = rest
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("AutoDetect"))
                {
                    return Err(at.syntax("a record key (per-node AutoDetect is not supported)", k));
                }
                let r = GresLine::from_pairs(value, rest).map_err(|e| at.err(e))?;
                for n in names {
                    let n = NodeName::try_from(n).map_err(|e| at.err(ConfigError::from(e)))?;
                    std::sync::Arc::make_mut(conf.nodes.entry(n).or_default()).push(r.clone());
                }
            }
            _ => {
                return Err(at.syntax("AutoDetect=, Name= or NodeName= as the first key", first));
            }
        }
    }
    conf.normalize();
    Ok(conf)
}
