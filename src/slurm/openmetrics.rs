//! Slurm's own OpenMetrics endpoints (Slurm 25.11 and newer; SchedMD's `doc/html/metrics.shtml`
//! and slurm.conf.5 `MetricsType`): `MetricsType=metrics/openmetrics` in slurm.conf makes
//! slurmctld load its `metrics_openmetrics` plugin and answer HTTP `GET /metrics/<category>` on
//! its own port (`SlurmctldPort`, 6817). No authentication unless `PrivateData` is set: 25.11
//! then turns the endpoints off, 26.05 asks for a JWT (or `MetricsAuthUsers`, which the charm
//! does not set). So the controller writes the key from 25.11 and publishes the endpoints as
//! scrape jobs only while the slurm.conf it wrote sets no `PrivateData` ([`scrape_port`]).
//! Below 25.11 nothing changes: the textfile metrics of `charms::cos::controller` stay.

use super::version::SlurmVersion;

/// The first release whose slurmctld serves OpenMetrics.
pub const SINCE: SlurmVersion = SlurmVersion::new(25, 11, 0);
/// The `MetricsType` value that turns the endpoints on (the only metrics plugin Slurm ships).
pub const METRICS_TYPE: &str = "metrics/openmetrics";
/// The endpoints published as scrape jobs. `/metrics/jobs-users-accts` is left out: one series
/// per user and account, which SchedMD's guide says not to store in a monitoring system.
pub const PATHS: [&str; 4] = [
    "/metrics/jobs",
    "/metrics/nodes",
    "/metrics/partitions",
    "/metrics/scheduler",
];
/// slurmctld's port when slurm.conf names none.
pub const DEFAULT_PORT: u16 = 6817;

/// Whether the installed slurmctld (`None`: unknown) serves OpenMetrics: an unknown version
/// gets no `MetricsType` (a key an older slurmctld does not know stops it).
pub fn serves_openmetrics(version: Option<SlurmVersion>) -> bool {
    version.is_some_and(|v| v >= SINCE)
}

/// The port to scrape slurmctld's endpoints on, from the text of a slurm.conf: `Some` when it
/// sets `MetricsType=metrics/openmetrics` and no `PrivateData` (the endpoints then answer
/// anyone), the first port of `SlurmctldPort` (a range `6817-6820` listens on each), else
/// `None`.
pub fn scrape_port(slurm_conf: &str) -> Option<u16> {
    let mut enabled = false;
    let mut private = false;
    let mut port = DEFAULT_PORT;
    for line in slurm_conf.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key.eq_ignore_ascii_case("MetricsType") {
            enabled = value.eq_ignore_ascii_case(METRICS_TYPE);
        } else if key.eq_ignore_ascii_case("PrivateData") {
            private = !value.is_empty();
        } else if key.eq_ignore_ascii_case("SlurmctldPort") {
            port = value
                .split('-')
                .next()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(DEFAULT_PORT);
        }
    }
    (enabled && !private).then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_25_11_only() {
        assert!(!serves_openmetrics(None));
        assert!(!serves_openmetrics(Some(SlurmVersion::new(22, 5, 8))));
        assert!(!serves_openmetrics(Some(SlurmVersion::new(24, 11, 5))));
        assert!(serves_openmetrics(Some(SlurmVersion::new(25, 11, 0))));
        assert!(serves_openmetrics(Some(SlurmVersion::new(26, 5, 5))));
    }

    #[test]
    fn scrape_port_follows_the_file() {
        assert_eq!(scrape_port("ClusterName=c\nSlurmctldPort=6817\n"), None);
        assert_eq!(
            scrape_port("SlurmctldPort=6817\nMetricsType=metrics/openmetrics\n"),
            Some(6817)
        );
        assert_eq!(
            scrape_port("MetricsType=metrics/openmetrics\nSlurmctldPort=7000-7003\n"),
            Some(7000)
        );
        assert_eq!(scrape_port("metricstype=METRICS/OPENMETRICS\n"), Some(6817));
        assert_eq!(
            scrape_port("MetricsType=metrics/openmetrics\nPrivateData=jobs\n"),
            None
        );
        assert_eq!(scrape_port("#MetricsType=metrics/openmetrics\n"), None);
    }
}
