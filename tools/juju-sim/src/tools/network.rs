//! `network-get`, `unit-get`, `open-port`, `close-port`, `opened-ports`.

use super::output::{check_format, emit};
use super::{ToolCx, ToolError, ToolResult, check_empty};
use crate::context::PortOp;
use crate::flags::{FORMAT, Flag, OUTPUT, parse};
use crate::model::PortRange;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};

fn address(cx: &ToolCx<'_>) -> String {
    cx.model
        .units
        .get(&cx.hook.unit)
        .map(|u| u.address.clone())
        .unwrap_or_default()
}

/// A stable fake MAC address for an IPv4 address.
fn mac_for(addr: &str) -> String {
    let octets: Vec<u8> = addr.split('.').filter_map(|o| o.parse().ok()).collect();
    let b = |i: usize| octets.get(i).copied().unwrap_or(0);
    format!("00:16:3e:{:02x}:{:02x}:{:02x}", b(1), b(2), b(3))
}

/// `network-get <binding> [-r ID] [--bind-address] [--ingress-address] [--egress-subnets]`
pub fn network_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(
        &[
            Flag::value(&["r", "relation"]),
            Flag::boolean(&["bind-address"]),
            Flag::boolean(&["ingress-address"]),
            Flag::boolean(&["egress-subnets"]),
            Flag::boolean(&["primary-address"]),
            FORMAT,
            OUTPUT,
        ],
        args,
    )?;
    check_format(&parsed)?;
    let Some((binding, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("no arguments specified".into()));
    };
    check_empty(rest)?;
    if let Some(g) = parsed.value("relation") {
        let id = g
            .value
            .rsplit(':')
            .next()
            .and_then(|n| n.parse::<u32>().ok());
        let known = id
            .and_then(|id| cx.model.relations.get(&id))
            .is_some_and(|r| r.scope.contains_key(&cx.hook.unit));
        if !known {
            return Err(ToolError::Usage(format!(
                "invalid value {:?} for option {}: relation not found",
                g.value, g.written
            )));
        }
    }
    let charm_ok = cx.model.apps.get(&cx.hook.app).is_some_and(|a| {
        a.charm.endpoints.contains_key(binding) || a.charm.extra_bindings.contains(binding)
    });
    if !charm_ok && binding != "juju-info" {
        return Err(ToolError::Runtime(format!(
            "no network config found for binding {binding:?}"
        )));
    }
    let addr = address(cx);
    let cidr = {
        let mut parts: Vec<&str> = addr.split('.').collect();
        if parts.len() == 4 {
            parts[3] = "0";
        }
        format!("{}/24", parts.join("."))
    };
    let egress = json!([format!("{addr}/32")]);
    let mut selected = BTreeMap::new();
    if parsed.flag("bind-address") || parsed.flag("primary-address") {
        selected.insert("bind-address", json!(addr));
    }
    if parsed.flag("ingress-address") {
        selected.insert("ingress-address", json!(addr));
    }
    if parsed.flag("egress-subnets") {
        selected.insert("egress-subnets", egress.clone());
    }
    let value = match selected.len() {
        0 => json!({
            "bind-addresses": [{
                "mac-address": mac_for(&addr),
                "interface-name": "eth0",
                "addresses": [{"hostname": "", "value": addr, "cidr": cidr}],
            }],
            "egress-subnets": egress,
            "ingress-addresses": [addr],
        }),
        1 => selected.into_values().next().unwrap_or(Json::Null),
        _ => Json::Object(
            selected
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
    };
    emit(cx, &parsed, &value)
}

/// `unit-get private-address|public-address`
pub fn unit_get(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    let Some((key, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("no setting specified".into()));
    };
    if key != "private-address" && key != "public-address" {
        return Err(ToolError::Usage(format!("unknown setting {key:?}")));
    }
    check_empty(rest)?;
    let addr = address(cx);
    emit(cx, &parsed, &json!(addr))
}

fn parse_port_spec(spec: &str) -> Result<PortRange, ToolError> {
    let spec = spec.to_ascii_lowercase();
    let bad = || {
        ToolError::Usage(format!(
            "expected <port>[/<protocol>] or <from>-<to>[/<protocol>] or icmp; got {spec:?}"
        ))
    };
    if spec == "icmp" {
        return Ok(PortRange {
            from: 0,
            to: 0,
            protocol: "icmp".into(),
        });
    }
    let (ports, proto) = spec.split_once('/').unwrap_or((&spec, "tcp"));
    if proto != "tcp" && proto != "udp" {
        return Err(bad());
    }
    let (from, to) = match ports.split_once('-') {
        Some((a, b)) => (a, b),
        None => (ports, ports),
    };
    let from: u16 = from.parse().map_err(|_| bad())?;
    let to: u16 = to.parse().map_err(|_| bad())?;
    if from == 0 || to < from {
        return Err(bad());
    }
    Ok(PortRange {
        from,
        to,
        protocol: proto.to_owned(),
    })
}

fn overlaps(a: &PortRange, b: &PortRange) -> bool {
    a.protocol == b.protocol && a.from <= b.to && b.from <= a.to
}

/// The unit's ports including this hook's pending changes.
fn current_ports(cx: &ToolCx<'_>) -> BTreeMap<PortRange, BTreeSet<String>> {
    let mut ports = cx
        .model
        .units
        .get(&cx.hook.unit)
        .map(|u| u.ports.clone())
        .unwrap_or_default();
    for op in &cx.hook.pending_ports {
        if op.open {
            ports.insert(op.range.clone(), op.endpoints.clone());
        } else {
            ports.remove(&op.range);
        }
    }
    ports
}

/// `open-port`/`close-port [--endpoints a,b] <port>[/<proto>] | <from>-<to>[/<proto>] | icmp`
pub fn open_port(cx: &mut ToolCx<'_>, args: &[String], open: bool) -> ToolResult {
    let parsed = parse(&[Flag::value(&["endpoints"]), FORMAT], args)?;
    let Some((spec, rest)) = parsed.positionals.split_first() else {
        return Err(ToolError::Usage("no port or range specified".into()));
    };
    check_empty(rest)?;
    let range = parse_port_spec(spec)?;
    let endpoints: BTreeSet<String> = parsed
        .value("endpoints")
        .map(|e| {
            e.value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "*")
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if open {
        let unit = cx.hook.unit.clone();
        for op in cx.hook.pending_ports.iter().filter(|o| o.open) {
            if op.range != range && overlaps(&op.range, &range) {
                return Err(ToolError::Runtime(format!(
                    "cannot open {range} (unit {unit:?}): port range conflicts with {} (unit {unit:?}) requested earlier",
                    op.range
                )));
            }
        }
        let committed = cx
            .model
            .units
            .get(&unit)
            .map(|u| u.ports.clone())
            .unwrap_or_default();
        for existing in committed.keys() {
            if *existing != range && overlaps(existing, &range) {
                return Err(ToolError::Runtime(format!(
                    "cannot open {range} (unit {unit:?}): port range conflicts with {existing} (unit {unit:?})"
                )));
            }
        }
    }
    cx.hook.pending_ports.push(PortOp {
        open,
        range,
        endpoints,
    });
    Ok(Vec::new())
}

/// `opened-ports [--endpoints]`
pub fn opened_ports(cx: &mut ToolCx<'_>, args: &[String]) -> ToolResult {
    let parsed = parse(&[Flag::boolean(&["endpoints"]), FORMAT, OUTPUT], args)?;
    check_format(&parsed)?;
    check_empty(&parsed.positionals)?;
    let list: Vec<Json> = current_ports(cx)
        .into_iter()
        .map(|(range, eps)| {
            if parsed.flag("endpoints") {
                let eps = if eps.is_empty() {
                    "*".to_owned()
                } else {
                    eps.into_iter().collect::<Vec<_>>().join(", ")
                };
                Json::String(format!("{range} ({eps})"))
            } else {
                Json::String(range.to_string())
            }
        })
        .collect();
    emit(cx, &parsed, &Json::Array(list))
}
