//! Machine-level hook tools beyond the [`ModelBackend`] contract: `network-get`, `open-port`,
//! `close-port`, `opened-ports` and `juju-reboot` (docs/juju-hook-tools.md §2.13–§2.15). They live in an
//! extension trait so the shared `ModelBackend` seam stays stable for every implementor, while
//! charm code that needs addresses or ports can ask for `B: NetworkBackend`.

use crate::backend::{ModelBackend, RelationId};
use crate::tool_error::HookToolError;
use serde::Deserialize;
use std::fmt;
use std::str::FromStr;

/// `network-get --format=json` output (the three top-level keys are omitted when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NetworkInfo {
    /// Interfaces the binding is bound to, with their addresses.
    #[serde(default)]
    pub bind_addresses: Vec<BindAddress>,
    /// CIDRs outgoing traffic comes from.
    #[serde(default)]
    pub egress_subnets: Vec<String>,
    /// Addresses other units should use to reach this one (first is preferred).
    #[serde(default)]
    pub ingress_addresses: Vec<String>,
}

/// One interface in `bind-addresses`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BindAddress {
    /// MAC address; may be empty.
    #[serde(default)]
    pub mac_address: String,
    /// Interface name, e.g. `eth0`.
    #[serde(default)]
    pub interface_name: String,
    /// Addresses on that interface.
    #[serde(default)]
    pub addresses: Vec<InterfaceAddress>,
}

/// One address of an interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct InterfaceAddress {
    /// Host name, often empty.
    #[serde(default)]
    pub hostname: String,
    /// The IP address.
    #[serde(default)]
    pub value: String,
    /// Its subnet in CIDR form.
    #[serde(default)]
    pub cidr: String,
}

/// Transport protocol of a port range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    /// `tcp` (Juju's default).
    Tcp,
    /// `udp`.
    Udp,
}

/// What `open-port`/`close-port` take and `opened-ports` prints: `80/tcp`, `8000-8999/udp`, `icmp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Port {
    /// A port range (a single port has `from == to`).
    Range {
        /// Protocol.
        protocol: Protocol,
        /// First port.
        from: u16,
        /// Last port (inclusive).
        to: u16,
    },
    /// ICMP.
    Icmp,
}

impl Port {
    /// One TCP port, the common case (`6817/tcp`).
    pub fn tcp(port: u16) -> Self {
        Port::Range {
            protocol: Protocol::Tcp,
            from: port,
            to: port,
        }
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Port::Icmp => f.write_str("icmp"),
            Port::Range { protocol, from, to } => {
                let proto = match protocol {
                    Protocol::Tcp => "tcp",
                    Protocol::Udp => "udp",
                };
                if from == to {
                    write!(f, "{from}/{proto}")
                } else {
                    write!(f, "{from}-{to}/{proto}")
                }
            }
        }
    }
}

/// A string that is not a port range as Juju prints one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a port range (expected e.g. 80/tcp, 8000-8999/udp or icmp)")]
pub struct PortParseError(pub String);

impl FromStr for Port {
    type Err = PortParseError;

    /// Parses `opened-ports` entries; the protocol defaults to tcp as in Juju.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || PortParseError(s.to_owned());
        let lower = s.trim().to_ascii_lowercase();
        if lower == "icmp" {
            return Ok(Port::Icmp);
        }
        let (range, protocol) = match lower.split_once('/') {
            Some((range, "tcp")) => (range, Protocol::Tcp),
            Some((range, "udp")) => (range, Protocol::Udp),
            Some(_) => return Err(bad()),
            None => (lower.as_str(), Protocol::Tcp),
        };
        let (from, to) = match range.split_once('-') {
            Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
            None => {
                let p: u16 = range.parse().map_err(|_| bad())?;
                (p, p)
            }
        };
        if from == 0 || from > to {
            return Err(bad());
        }
        Ok(Port::Range { protocol, from, to })
    }
}

/// Hook tools for addresses, ports and reboots, on top of [`ModelBackend`].
pub trait NetworkBackend: ModelBackend {
    /// `network-get --format=json [-r ID] <binding>`: addresses for an endpoint or extra-binding.
    fn network_get(
        &self,
        binding: &str,
        relation: Option<&RelationId>,
    ) -> Result<NetworkInfo, HookToolError>;
    /// `open-port <port>` (applied when the hook succeeds).
    fn open_port(&self, port: Port) -> Result<(), HookToolError>;
    /// `close-port <port>` (applied when the hook succeeds).
    fn close_port(&self, port: Port) -> Result<(), HookToolError>;
    /// `opened-ports --format=json`, including this hook's pending changes.
    fn opened_ports(&self) -> Result<Vec<Port>, HookToolError>;
    /// `juju-reboot [--now]`: reboot after the hook succeeds, or (`now`) at once, re-running it.
    fn juju_reboot(&self, now: bool) -> Result<(), HookToolError>;
}
