//! The provider side of the `cos_agent` interface: what a principal charm puts in its unit
//! databag on the `cos-agent` endpoint for the COS subordinate (opentelemetry-collector or
//! grafana-agent) to read.
//!
//! **Schema source.** Canonical's charm library `charms.grafana_agent.v0.cos_agent`, LIBAPI 0,
//! LIBPATCH 26 (`lib/charms/grafana_agent/v0/cos_agent.py` in canonical/grafana-agent-operator
//! at de1252e7, 2026-08-19; the same LIBPATCH is vendored by
//! canonical/opentelemetry-collector-operator at 0357b4b2), and the helpers it imports from
//! `cosl` 1.9.1 (canonical/cos-lib at d8a21d21: `cosl/utils.py` `LZMABase64`,
//! `cosl/grafana_dashboard.py` `DashboardPath40UID`, `cosl/rules.py` `AlertRules` and
//! `generic_alert_groups`, `cosl/juju_topology.py` `JujuTopology`). What this module reproduces:
//!
//! - `COSAgentProvider._on_refresh` writes one key, `config` (`CosAgentProviderUnitData.KEY`),
//!   in the **unit** databag: `CosAgentProviderUnitData(...).json()`, i.e. pydantic's JSON of the
//!   fields, in declaration order, with unset optionals as `null`: `metrics_alert_rules` (dict),
//!   `log_alert_rules` (dict), `dashboards` (list of str), `subordinate` (null),
//!   `metrics_scrape_jobs` (list of dict), `log_slots` (list of str), `tracing_protocols` (null).
//!   [`ProviderUnitData`].
//! - `_metrics_alert_rules`: every rule file of the rules directory (sorted, `.rule`, `.rules`,
//!   `.yml`, `.yaml`), each group renamed `<topology identifier>_<group>_rules` (`_rules` not
//!   doubled, then every character outside `[a-zA-Z0-9_:]` made `_`), each rule given the
//!   `juju_*` topology labels it lacks (`juju_model`, `juju_model_uuid`, `juju_application`,
//!   `juju_charm`; empty values left out), `%%juju_topology%%` matchers removed from `expr`
//!   (without `cos-tool`, which these charms do not ship, the library leaves `expr` otherwise
//!   unchanged); then cosl's generic `HostHealth` group (`HostDown`, `HostMetricsMissing`).
//!   [`alert_rules`].
//! - `_log_alert_rules`: `{}` when there are no Loki rules (`AlertRules.as_dict()` of nothing).
//! - `_dashboards`: each dashboard JSON with `uid` set to `DashboardPath40UID.generate(charm
//!   name, path in the charm)` (SHAKE-256 of `"<charm>-<path>"`, 20 bytes as 40 hex digits),
//!   the tag `charm: <charm name>` added unless a `charm: ` tag is there, then
//!   `LZMABase64.compress`: base64 of the `.xz` stream Python's `lzma.compress` accepts back.
//!   [`encode_dashboard`].
//! - `_scrape_jobs`: the endpoints the unit's host serves (`super::scrape`: Slurm 25.11+'s
//!   own OpenMetrics on slurmctld, NVIDIA's DCGM exporter on slurmd when turned on); the
//!   textfile metrics reach the subordinate through node-exporter, which it scrapes itself
//!   (`docs/observability.md`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha3::digest::{ExtendableOutput, Update, XofReader};

use super::error::CosAgentError;
use crate::charms::CharmKind;

/// The endpoint both charms provide (interface `cos_agent`), as in their metadata.yaml.
pub const ENDPOINT: &str = "cos-agent";
/// The unit-databag key the library nests its whole structure under.
pub const DATABAG_KEY: &str = "config";

/// The library's `CosAgentProviderUnitData`, field for field and in its order; serialised
/// (`serde_json`) it is the value of the unit-databag key [`DATABAG_KEY`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderUnitData {
    /// `{"groups": [...]}`: Prometheus rule groups with Juju topology ([`alert_rules`]).
    pub metrics_alert_rules: Value,
    /// Loki rule groups: `{}` here (no log alert rules).
    pub log_alert_rules: Value,
    /// LZMA-compressed, base64-encoded Grafana dashboards ([`encode_dashboard`]).
    pub dashboards: Vec<String>,
    /// No longer used by the library; always `null`.
    pub subordinate: Option<bool>,
    /// Prometheus `scrape_configs` for the subordinate to run (`super::scrape_jobs`).
    pub metrics_scrape_jobs: Vec<Value>,
    /// Snap slots for log scraping: none here.
    pub log_slots: Vec<String>,
    /// Requested tracing protocols: `null` (none).
    pub tracing_protocols: Option<Vec<String>>,
}

/// Juju topology as cosl's `JujuTopology` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// `JUJU_MODEL_NAME`.
    pub model: String,
    /// `JUJU_MODEL_UUID` (empty where unset: its labels are then left out, as cosl does).
    pub model_uuid: String,
    /// The application name.
    pub application: String,
    /// The unit name.
    pub unit: String,
    /// The charm's `name:` (`slurmd`, `slurmctld`).
    pub charm_name: String,
}

impl Topology {
    /// `JujuTopology.identifier`: `<model>_<first 8 of uuid>_<application>`, `/` made `_`.
    pub fn identifier(&self) -> String {
        let short: String = self.model_uuid.chars().take(8).collect();
        format!("{}_{}_{}", self.model, short, self.application).replace('/', "_")
    }

    /// `JujuTopology.label_matcher_dict`: the `juju_*` labels (not the unit), empty ones left out.
    pub fn labels(&self) -> Vec<(&'static str, &str)> {
        [
            ("juju_model", self.model.as_str()),
            ("juju_model_uuid", self.model_uuid.as_str()),
            ("juju_application", self.application.as_str()),
            ("juju_charm", self.charm_name.as_str()),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect()
    }
}

/// A file shipped in the charm: its path relative to the charm root, and its text.
type Shipped = (&'static str, &'static str);

const CONTROLLER_RULES: &[Shipped] = &[(
    "src/cos/slurmctld/prometheus_alert_rules/slurm.rules.yaml",
    include_str!("../../cos/slurmctld/prometheus_alert_rules/slurm.rules.yaml"),
)];
const NODE_RULES: &[Shipped] = &[(
    "src/cos/slurmd/prometheus_alert_rules/gpu.rules.yaml",
    include_str!("../../cos/slurmd/prometheus_alert_rules/gpu.rules.yaml"),
)];
const CONTROLLER_DASHBOARDS: &[Shipped] = &[(
    "src/cos/slurmctld/grafana_dashboards/cluster-overview.json",
    include_str!("../../cos/slurmctld/grafana_dashboards/cluster-overview.json"),
)];

/// The alert-rule files `kind` ships (path in the charm, YAML text), sorted by path.
pub fn rule_files(kind: CharmKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        CharmKind::Slurmctld => CONTROLLER_RULES,
        CharmKind::Slurmd => NODE_RULES,
    }
}

/// The Grafana dashboards `kind` ships (path in the charm, JSON text).
pub fn dashboard_files(kind: CharmKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        CharmKind::Slurmctld => CONTROLLER_DASHBOARDS,
        CharmKind::Slurmd => &[],
    }
}

/// What `kind`'s unit publishes under [`DATABAG_KEY`], for `topology`, with no scrape jobs.
pub fn provider_data(
    kind: CharmKind,
    topology: &Topology,
) -> Result<ProviderUnitData, CosAgentError> {
    provider_data_with_jobs(kind, topology, Vec::new())
}

/// [`provider_data`] with `metrics_scrape_jobs` (`super::scrape_jobs`: what the unit's host
/// serves).
pub fn provider_data_with_jobs(
    kind: CharmKind,
    topology: &Topology,
    metrics_scrape_jobs: Vec<Value>,
) -> Result<ProviderUnitData, CosAgentError> {
    let dashboards = dashboard_files(kind)
        .iter()
        .map(|(path, text)| encode_dashboard(&topology.charm_name, path, text))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ProviderUnitData {
        metrics_alert_rules: alert_rules(rule_files(kind), topology)?,
        log_alert_rules: Value::Object(Map::new()),
        dashboards,
        subordinate: None,
        metrics_scrape_jobs,
        log_slots: Vec::new(),
        tracing_protocols: None,
    })
}

/// The databag value: [`provider_data`] as JSON.
pub fn databag_value(kind: CharmKind, topology: &Topology) -> Result<String, CosAgentError> {
    databag_value_with_jobs(kind, topology, Vec::new())
}

/// The databag value with scrape jobs: [`provider_data_with_jobs`] as JSON.
pub fn databag_value_with_jobs(
    kind: CharmKind,
    topology: &Topology,
    metrics_scrape_jobs: Vec<Value>,
) -> Result<String, CosAgentError> {
    let data = provider_data_with_jobs(kind, topology, metrics_scrape_jobs)?;
    // A struct of JSON values and strings always serialises.
    Ok(serde_json::to_string(&data).unwrap_or_default())
}

/// cosl's `AlertRules(query_type="promql", topology).add_path(dir)` followed by
/// `.add(generic_alert_groups.application_rules, group_name_prefix=identifier)`, as
/// `{"groups": [...]}`.
pub fn alert_rules(files: &[Shipped], topology: &Topology) -> Result<Value, CosAgentError> {
    let prefix = topology.identifier();
    let mut groups = Vec::new();
    for (file, text) in files {
        let doc: Value =
            serde_yaml::from_str(text).map_err(|source| CosAgentError::Rules { file, source })?;
        let file_groups = doc
            .get("groups")
            .and_then(Value::as_array)
            .ok_or(CosAgentError::RuleShape { file })?;
        for group in file_groups {
            groups.push(
                with_topology(group, &prefix, topology).ok_or(CosAgentError::RuleShape { file })?,
            );
        }
    }
    for group in generic_application_groups() {
        if let Some(g) = with_topology(&group, &prefix, topology) {
            groups.push(g);
        }
    }
    let mut out = Map::new();
    if !groups.is_empty() {
        out.insert("groups".into(), Value::Array(groups));
    }
    Ok(Value::Object(out))
}

/// One group renamed and its rules labelled as cosl's `Rules._from_dict` does; `None` when the
/// group has no string `name` or no `rules` list.
fn with_topology(group: &Value, prefix: &str, topology: &Topology) -> Option<Value> {
    let mut group = group.as_object()?.clone();
    let name = group.get("name")?.as_str()?.to_owned();
    let name = if already_modified(&name) {
        name
    } else {
        let mut new = [prefix, name.as_str()]
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("_");
        if !new.ends_with("_rules") {
            new.push_str("_rules");
        }
        new
    };
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    group.insert("name".into(), Value::String(name));
    let rules = group.get_mut("rules")?.as_array_mut()?;
    for rule in rules {
        let rule = rule.as_object_mut()?;
        let labels = rule
            .entry("labels")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            for (key, value) in topology.labels() {
                labels
                    .entry(key)
                    .or_insert_with(|| Value::String(value.to_owned()));
            }
        }
        if let Some(Value::String(expr)) = rule.get_mut("expr") {
            *expr = strip_topology_placeholder(expr);
        }
    }
    Some(Value::Object(group))
}

/// cosl's `_is_already_modified`: `^.*?_[\da-f]{8}_.*?rules$`.
fn already_modified(name: &str) -> bool {
    let b = name.as_bytes();
    if !name.ends_with("rules") {
        return false;
    }
    // `_`, 8 lowercase hex digits, `_`, then anything ending in `rules`.
    (0..b.len()).take_while(|i| i + 10 + 5 <= b.len()).any(|i| {
        b[i] == b'_'
            && b[i + 1..i + 9]
                .iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            && b[i + 9] == b'_'
    })
}

/// `re.sub(r"%%juju_topology%%,?", "", expr)`.
fn strip_topology_placeholder(expr: &str) -> String {
    const MARK: &str = "%%juju_topology%%";
    let mut out = String::with_capacity(expr.len());
    let mut rest = expr;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        rest = &rest[at + MARK.len()..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    out.push_str(rest);
    out
}

/// cosl's `generic_alert_groups.application_rules`: the `HostHealth` group.
fn generic_application_groups() -> Vec<Value> {
    vec![serde_json::json!({
        "name": "HostHealth",
        "rules": [
            {
                "alert": "HostDown",
                "expr": "up < 1",
                "for": "5m",
                "labels": {"severity": "critical"},
                "annotations": {
                    "summary": "Host '{{ $labels.instance }}' is down.",
                    "description": "Juju application '{{ $labels.juju_application }}' in model '{{ $labels.juju_model }}' is down. Prometheus has been unable to scrape it during at least the past five minutes."
                }
            },
            {
                "alert": "HostMetricsMissing",
                "expr": "absent(up)",
                "for": "5m",
                "labels": {"severity": "warning"},
                "annotations": {
                    "summary": "Unit '{{ $labels.juju_unit }}' of application '{{ $labels.juju_application }}' is down or failing to remote write.",
                    "description": "`Up` missing for unit '{{ $labels.juju_unit }}' of application {{ $labels.juju_application }} in model {{ $labels.juju_model }}. Please ensure the unit or the collector scraping it is up and is able to successfully reach the metrics backend."
                }
            }
        ]
    })]
}

/// `DashboardPath40UID.generate(charm, path)`: SHAKE-256 of `"<charm>-<path>"`, 40 hex digits.
pub fn dashboard_uid(charm: &str, path: &str) -> String {
    let mut hasher = sha3::Shake256::default();
    hasher.update(format!("{charm}-{path}").as_bytes());
    let mut out = [0u8; 20];
    hasher.finalize_xof().read(&mut out);
    out.iter().map(|b| format!("{b:02x}")).collect()
}

/// One dashboard as `COSAgentProvider._dashboards` sends it: uid and `charm: ` tag set, then
/// `LZMABase64.compress`.
pub fn encode_dashboard(
    charm: &str,
    file: &'static str,
    text: &str,
) -> Result<String, CosAgentError> {
    let mut dashboard: Value =
        serde_json::from_str(text).map_err(|source| CosAgentError::Dashboard {
            file,
            source: Some(source),
        })?;
    let obj = dashboard
        .as_object_mut()
        .ok_or(CosAgentError::Dashboard { file, source: None })?;
    obj.insert("uid".into(), Value::String(dashboard_uid(charm, file)));
    let mut tags: Vec<Value> = obj
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !tags
        .iter()
        .any(|t| t.as_str().is_some_and(|t| t.starts_with("charm: ")))
    {
        tags.push(Value::String(format!("charm: {charm}")));
    }
    obj.insert("tags".into(), Value::Array(tags));
    let json = serde_json::to_string(&dashboard).unwrap_or_default();
    lzma_base64(json.as_bytes()).map_err(|source| CosAgentError::Compress { file, source })
}

/// cosl's `LZMABase64.compress`: an `.xz` stream (what Python's `lzma.compress` writes and
/// `lzma.decompress` reads), base64-encoded with the standard alphabet and padding.
pub fn lzma_base64(data: &[u8]) -> Result<String, std::io::Error> {
    use base64::Engine as _;
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut std::io::BufReader::new(data), &mut xz)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(xz))
}

/// cosl's `LZMABase64.decompress`, for tests and for reading a bag back.
pub fn lzma_base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let xz = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    let mut out = Vec::new();
    lzma_rs::xz_decompress(&mut std::io::BufReader::new(xz.as_slice()), &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn already_modified_matches_cosl() {
        assert!(already_modified("m_0123abcd_app_x_rules"));
        assert!(!already_modified("m_0123abcd_app_x"));
        assert!(!already_modified("slurm"));
        assert!(!already_modified("m_0123ABCD_app_rules"));
        assert!(already_modified("a_deadbeef_rules"));
    }

    #[test]
    fn placeholder_is_removed_with_its_comma() {
        assert_eq!(
            strip_topology_placeholder("up{%%juju_topology%%,job=\"x\"} < 1"),
            "up{job=\"x\"} < 1"
        );
        assert_eq!(strip_topology_placeholder("up{%%juju_topology%%}"), "up{}");
    }

    #[test]
    fn identifier_as_cosl_doc() {
        let t = Topology {
            model: "a-model".into(),
            model_uuid: "00000000-0000-4000-8000-000000000000".into(),
            application: "some-app".into(),
            unit: "some-app/1".into(),
            charm_name: "c".into(),
        };
        assert_eq!(t.identifier(), "a-model_00000000_some-app");
    }
}
