//! Why the `cos-agent` data could not be built: a leaf, so the shared error type
//! ([`crate::charms::CharmError`]) carries it without importing the rest of the module.

/// Why the cos-agent data could not be built. The rule files and dashboards are compiled into
/// the binary, so each of these is a defect of the build, caught by the tests.
#[derive(Debug, thiserror::Error)]
pub enum CosAgentError {
    /// A shipped alert-rule file is not YAML of the Prometheus rule-file shape.
    #[error(
        "the shipped alert-rule file {file} cannot be read (a defect of this charm build: report it)"
    )]
    Rules {
        /// The file, as shipped.
        file: &'static str,
        /// What was wrong.
        #[source]
        source: serde_yaml::Error,
    },
    /// A shipped alert-rule file has no `groups:` list of `{name, rules}`.
    #[error(
        "the shipped alert-rule file {file} has no `groups` list of named rule groups (a defect of this charm build: report it)"
    )]
    RuleShape {
        /// The file, as shipped.
        file: &'static str,
    },
    /// A shipped dashboard is not a JSON object.
    #[error(
        "the shipped dashboard {file} is not a JSON object (a defect of this charm build: report it)"
    )]
    Dashboard {
        /// The file, as shipped.
        file: &'static str,
        /// What was wrong, when it is not JSON at all.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// Compressing a dashboard failed (out of memory).
    #[error("cannot LZMA-compress the dashboard {file} (is the machine out of memory?)")]
    Compress {
        /// The file, as shipped.
        file: &'static str,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}
