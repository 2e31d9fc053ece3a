//! Prometheus text exposition format (version 0.0.4) for node-exporter's textfile collector,
//! and where the charms put it.
//!
//! node-exporter reads every `*.prom` file of its `--collector.textfile.directory` at each
//! scrape and adds `node_textfile_mtime_seconds{file=…}`, which the staleness alert watches.
//! A file is replaced by rename, so a scrape never sees half of it.

use std::fmt::Write as _;

use crate::charms::host::{Host, HostError};

/// The textfile directory of the node-exporter snap the opentelemetry-collector subordinate
/// installs and scrapes (`NODE_EXPORTER_TEXTFILE_DIRECTORY` in canonical/opentelemetry-
/// collector-operator's `src/constants.py`). `SLURM_CHARMS_TEXTFILE_DIR` replaces it (a
/// grafana-agent deployment or Debian's prometheus-node-exporter, whose directory is
/// `/var/lib/prometheus/node-exporter`).
pub const TEXTFILE_DIR: &str = "/var/snap/node-exporter/common/textfile-collector.d";

/// The directory this hook writes its textfile to: `SLURM_CHARMS_TEXTFILE_DIR` or
/// [`TEXTFILE_DIR`], as a host path (under the host root).
pub fn textfile_dir() -> String {
    std::env::var("SLURM_CHARMS_TEXTFILE_DIR")
        .ok()
        .filter(|d| d.starts_with('/'))
        .unwrap_or_else(|| TEXTFILE_DIR.to_owned())
}

/// Writes `text` as `<dir>/<name>` (mode 0644) when it differs, creating the directory;
/// `<dir>` is [`textfile_dir`].
pub fn write_textfile(host: &Host<'_>, name: &str, text: &str) -> Result<bool, HostError> {
    write_textfile_in(host, &textfile_dir(), name, text)
}

/// [`write_textfile`] into the host directory `dir`, for a program that does not get the hook's
/// environment (the health-check program reads the directory from its settings).
pub fn write_textfile_in(
    host: &Host<'_>,
    dir: &str,
    name: &str,
    text: &str,
) -> Result<bool, HostError> {
    let path = format!("{}/{name}", dir.trim_end_matches('/'));
    host.write_unsynced(&path, text.as_bytes(), 0o644, None)
}

/// A metrics text being built: families in the order added, each with `# HELP` and `# TYPE`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Exposition {
    text: String,
}

/// A metric type of the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricType {
    /// A value that goes up and down.
    Gauge,
    /// A monotonically increasing count (name ends in `_total`).
    Counter,
}

impl Exposition {
    /// An empty text.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a family: `# HELP name help` and `# TYPE name type`.
    pub fn family(&mut self, name: &str, kind: MetricType, help: &str) -> &mut Self {
        let kind = match kind {
            MetricType::Gauge => "gauge",
            MetricType::Counter => "counter",
        };
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
        self
    }

    /// One sample of the family just started; label values are escaped (`\`, `"`, newline).
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let v = v
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                let _ = write!(self.text, "{k}=\"{v}\"");
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {}", format_value(value));
        self
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values() {
        let mut e = Exposition::new();
        e.family("x", MetricType::Gauge, "help")
            .sample("x", &[("reason", "a \"b\"\\c\nd")], 1.0);
        assert_eq!(
            e.as_str(),
            "# HELP x help\n# TYPE x gauge\nx{reason=\"a \\\"b\\\"\\\\c\\nd\"} 1\n"
        );
    }
}
