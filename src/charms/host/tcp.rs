//! Whether a TCP port answers, with the name lookup bounded: the slurmd charm's controller check
//! and the slurmctld leader's takeover check ask it of a slurmctld's `host:6817`.

use super::{Cmd, Runner, SystemRunner};

/// How long a name may take to resolve.
const LOOKUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a connection may take to open.
const CONNECT_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a TCP connection to `addr` (`host:port`) opens within two seconds; `None` when the
/// name does not resolve here within [`LOOKUP_LIMIT`] (a resolver that does not answer must
/// not stall every hook for its 5 s timeout). An IP literal needs no lookup; a name is looked
/// up by `getent ahosts` (the same NSS resolver) in a child process that is killed at the
/// limit, so nothing of the lookup outlives this call (an in-process lookup cannot be
/// cancelled and would leave its thread behind).
pub fn port_answers(addr: &str) -> Option<bool> {
    use std::net::{SocketAddr, TcpStream};
    let addrs: Vec<SocketAddr> = match addr.parse::<SocketAddr>() {
        Ok(a) => vec![a],
        Err(_) => lookup(addr)?,
    };
    if addrs.is_empty() {
        return None;
    }
    Some(
        addrs
            .iter()
            .any(|a| TcpStream::connect_timeout(a, CONNECT_LIMIT).is_ok()),
    )
}

/// Resolves `name:port` through `getent ahosts`, bounded by [`LOOKUP_LIMIT`].
fn lookup(addr: &str) -> Option<Vec<std::net::SocketAddr>> {
    let (name, port) = addr.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let cmd = Cmd::new("getent", ["ahosts", name]).with_timeout(LOOKUP_LIMIT);
    let out = SystemRunner.run(&cmd).ok().filter(|o| o.success())?;
    let mut addrs: Vec<std::net::SocketAddr> = out
        .stdout
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .parse::<std::net::IpAddr>()
                .ok()
        })
        .map(|ip| std::net::SocketAddr::new(ip, port))
        .collect();
    addrs.dedup();
    Some(addrs)
}

#[cfg(test)]
mod tests {
    use super::port_answers;

    #[test]
    fn an_open_port_answers_and_a_closed_one_does_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        assert_eq!(port_answers(&addr), Some(true));
        drop(listener);
        assert_eq!(port_answers(&addr), Some(false));
    }
}
