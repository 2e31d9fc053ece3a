//! The unit-bag `node` record (reference `slurm-gres.md` §5.3), slurmd → slurmctld:
//!
//! ```json
//! {"node_parameters": {"NodeName": "node1", "CPUs": "16", …, "Gres": ["gpu:tesla_t4:2"], "MemSpecLimit": "1024"},
//!  "new_node": true,
//!  "gres": [{"Name": "gpu", "Type": "tesla_t4", "File": "/dev/nvidia[0-1]"}]}
//! ```
//!
//! `gres` entries may also carry our optional `MultipleFiles` (MIG, instead of `File`), `Cores`
//! and `Links`. `gres` and `Gres` are left out when the node has no GPUs. Parsing is strict:
//! every value is checked as the Slurm token it becomes, and `Gres` must agree with `gres`.

use super::InterfaceError;
use super::token::{
    check_cores, check_device_files, check_gres_type, check_links, check_multiple_files,
    check_node_name, check_number, check_token,
};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The relation key of the record.
pub const NODE_KEY: &str = "node";

/// The only GRES name this protocol carries (slurm.conf sets `GresTypes=gpu`).
pub const GPU: &str = "gpu";

/// Node parameters a record may carry besides `NodeName` and `Gres`, in the order they are
/// written on a slurm.conf node line. `true` marks numeric ones.
pub const NODE_PARAMETER_KEYS: &[(&str, bool)] = &[
    ("CPUs", true),
    ("Boards", true),
    ("SocketsPerBoard", true),
    ("CoresPerSocket", true),
    ("ThreadsPerCore", true),
    ("RealMemory", true),
    ("MemSpecLimit", true),
    ("TmpDisk", true),
    ("Weight", true),
    ("CoreSpecCount", true),
    ("CpuSpecList", false),
    ("Features", false),
];

/// Finds the canonical spelling of a node parameter key (Slurm keys are case-insensitive).
pub fn canonical_node_key(key: &str) -> Option<&'static str> {
    if key.eq_ignore_ascii_case("NodeName") {
        return Some("NodeName");
    }
    if key.eq_ignore_ascii_case("Gres") {
        return Some("Gres");
    }
    NODE_PARAMETER_KEYS
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(k, _)| *k)
}

/// Checks one node parameter value (not `NodeName`/`Gres`) by its canonical key.
pub fn check_node_parameter(key: &str, value: &str) -> Result<(), String> {
    let numeric = NODE_PARAMETER_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, n)| *n)
        .ok_or_else(|| format!("{key} is not a node parameter this charm passes on"))?;
    if numeric {
        check_number(value).map(|_| ())
    } else {
        check_token(value)
    }
}

/// One `Gres=` element on a slurm.conf node line: `gpu:<type>:<count>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GresSpec {
    /// GRES name; always `gpu` here.
    pub name: String,
    /// GPU type as NVML naming gives it.
    pub type_name: String,
    /// How many devices of that type.
    pub count: u64,
}

impl GresSpec {
    /// Parses and validates `gpu:<type>:<count>`.
    pub fn parse(value: &str) -> Result<Self, String> {
        let mut it = value.split(':');
        let (Some(name), Some(type_name), Some(count), None) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            return Err(format!(
                "Gres element {value:?} is not gpu:<type>:<count> (untyped GPUs are not carried)"
            ));
        };
        if name != GPU {
            return Err(format!("Gres element {value:?}: only gpu GRES are carried"));
        }
        check_gres_type(type_name)?;
        let count = check_number(count)?;
        if count == 0 {
            return Err(format!("Gres element {value:?} has a zero count"));
        }
        Ok(Self {
            name: name.to_string(),
            type_name: type_name.to_string(),
            count,
        })
    }
}

impl std::fmt::Display for GresSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.name, self.type_name, self.count)
    }
}

/// `node_parameters`: what slurm.conf's `NodeName=` line for this node gets.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NodeParameters {
    /// `NodeName` (the short hostname `slurmd -C` reports).
    pub node_name: String,
    /// Other parameters by canonical key (see [`NODE_PARAMETER_KEYS`]), values as strings.
    pub params: BTreeMap<String, String>,
    /// `Gres`, kept a list (never a joined string).
    pub gres: Vec<GresSpec>,
}

impl NodeParameters {
    /// The parameters in slurm.conf line order, `NodeName` first and `Gres` after `RealMemory`
    /// (the reference layout), as `(key, value)` pairs.
    pub fn ordered(&self) -> Vec<(String, String)> {
        let mut out = vec![("NodeName".to_string(), self.node_name.clone())];
        for (key, _) in NODE_PARAMETER_KEYS {
            if let Some(v) = self.params.get(*key) {
                out.push(((*key).to_string(), v.clone()));
            }
            if *key == "RealMemory" && !self.gres.is_empty() {
                out.push(("Gres".to_string(), self.gres_string()));
            }
        }
        out
    }

    /// `Gres` joined as Slurm writes it: `gpu:a:2,gpu:b:1`.
    pub fn gres_string(&self) -> String {
        self.gres
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// One gres.conf record for this node (no `NodeName`: the controller adds it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GresEntry {
    /// `Name`; always `gpu`.
    pub name: String,
    /// `Type`.
    pub type_name: String,
    /// `File` (whole GPUs) — exactly one of `file` and `multiple_files` is set.
    pub file: Option<String>,
    /// `MultipleFiles` (one MIG instance).
    pub multiple_files: Option<String>,
    /// `Cores`, when NVML reports an affinity.
    pub cores: Option<String>,
    /// `Links`, when NVML reports NVLinks.
    pub links: Option<String>,
}

impl GresEntry {
    /// How many GPUs the record stands for: the number of files, or 1 for `MultipleFiles`.
    pub fn count(&self) -> Result<u64, String> {
        match (&self.file, &self.multiple_files) {
            (Some(f), None) => Ok(check_device_files(f)?.len() as u64),
            (None, Some(m)) => check_multiple_files(m).map(|()| 1),
            (Some(_), Some(_)) => Err("File and MultipleFiles are mutually exclusive".into()),
            (None, None) => Err("needs File or MultipleFiles".into()),
        }
    }

    fn validate(&self) -> Result<u64, String> {
        if self.name != GPU {
            return Err(format!("Name {:?}: only gpu GRES are carried", self.name));
        }
        check_gres_type(&self.type_name)?;
        let count = self.count()?;
        if let Some(c) = &self.cores {
            check_cores(c).map_err(|e| format!("Cores: {e}"))?;
        }
        if let Some(l) = &self.links {
            check_links(l).map_err(|e| format!("Links: {e}"))?;
            if count != 1 {
                return Err("Links needs a record with exactly one device file".into());
            }
        }
        Ok(count)
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("Name".into(), Value::String(self.name.clone()));
        m.insert("Type".into(), Value::String(self.type_name.clone()));
        let opt = [
            ("File", &self.file),
            ("MultipleFiles", &self.multiple_files),
            ("Cores", &self.cores),
            ("Links", &self.links),
        ];
        for (k, v) in opt {
            if let Some(v) = v {
                m.insert(k.into(), Value::String(v.clone()));
            }
        }
        Value::Object(m)
    }

    fn from_json(i: usize, v: &Value) -> Result<Self, InterfaceError> {
        let field = |f: &str| format!("gres[{i}].{f}");
        let Value::Object(m) = v else {
            return Err(invalid(field(""), "expected an object"));
        };
        let get = |k: &str, required: bool| -> Result<Option<String>, InterfaceError> {
            match m.get(k) {
                None if required => Err(invalid(field(k), "missing")),
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(invalid(field(k), format!("expected a string, got {other}"))),
            }
        };
        let entry = GresEntry {
            name: get("Name", true)?.unwrap_or_default(),
            type_name: get("Type", true)?.unwrap_or_default(),
            file: get("File", false)?,
            multiple_files: get("MultipleFiles", false)?,
            cores: get("Cores", false)?,
            links: get("Links", false)?,
        };
        for k in m.keys() {
            if !["Name", "Type", "File", "MultipleFiles", "Cores", "Links"].contains(&k.as_str()) {
                return Err(invalid(field(k), "unknown key"));
            }
        }
        // Values are checked once, by NodeRecord::validate.
        Ok(entry)
    }
}

/// The whole `node` record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NodeRecord {
    /// slurm.conf node line parameters.
    pub node_parameters: NodeParameters,
    /// True until the operator runs `node-configured`: the node stays in `DownNodes`.
    pub new_node: bool,
    /// gres.conf records for the node (empty: no GPUs).
    pub gres: Vec<GresEntry>,
}

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> InterfaceError {
    InterfaceError::Invalid {
        key: NODE_KEY,
        field: field.into(),
        reason: reason.into(),
    }
}

impl NodeRecord {
    /// Checks every value and that `Gres` agrees with the gres records (same types, each count
    /// equal to the number of device files of that type).
    pub fn validate(&self) -> Result<(), InterfaceError> {
        let p = &self.node_parameters;
        check_node_name(&p.node_name).map_err(|e| invalid("node_parameters.NodeName", e))?;
        for (k, v) in &p.params {
            check_node_parameter(k, v).map_err(|e| invalid(format!("node_parameters.{k}"), e))?;
        }
        let mut declared: BTreeMap<&str, u64> = BTreeMap::new();
        for g in &p.gres {
            if declared.insert(&g.type_name, g.count).is_some() {
                return Err(invalid(
                    "node_parameters.Gres",
                    format!("type {} is listed twice", g.type_name),
                ));
            }
            if g.name != GPU || g.count == 0 {
                return Err(invalid(
                    "node_parameters.Gres",
                    format!("{g} is not gpu:<type>:<count> with a count above 0"),
                ));
            }
            check_gres_type(&g.type_name).map_err(|e| invalid("node_parameters.Gres", e))?;
        }
        let mut found: BTreeMap<&str, u64> = BTreeMap::new();
        let mut files = std::collections::BTreeSet::new();
        for (i, g) in self.gres.iter().enumerate() {
            let n = g.validate().map_err(|e| invalid(format!("gres[{i}]"), e))?;
            *found.entry(&g.type_name).or_default() += n;
            let all = g.file.iter().chain(g.multiple_files.iter());
            for f in all {
                if !files.insert(f.clone()) {
                    return Err(invalid(format!("gres[{i}]"), format!("{f} appears twice")));
                }
            }
        }
        if declared != found {
            return Err(invalid(
                "node_parameters.Gres",
                format!(
                    "Gres {:?} does not match the gres records (per type: {:?} declared, {:?} device files); Slurm would mark the node INVALID",
                    p.gres_string(),
                    declared,
                    found
                ),
            ));
        }
        Ok(())
    }

    /// The JSON value (keys sorted, so equal records give equal strings).
    pub fn to_json(&self) -> Value {
        let mut params = Map::new();
        let p = &self.node_parameters;
        params.insert("NodeName".into(), Value::String(p.node_name.clone()));
        for (k, v) in &p.params {
            params.insert(k.clone(), Value::String(v.clone()));
        }
        if !p.gres.is_empty() {
            let list = p
                .gres
                .iter()
                .map(|g| Value::String(g.to_string()))
                .collect();
            params.insert("Gres".into(), Value::Array(list));
        }
        let mut m = Map::new();
        m.insert("node_parameters".into(), Value::Object(params));
        m.insert("new_node".into(), Value::Bool(self.new_node));
        if !self.gres.is_empty() {
            let list = self.gres.iter().map(GresEntry::to_json).collect();
            m.insert("gres".into(), Value::Array(list));
        }
        Value::Object(m)
    }

    /// The relation value: compact JSON.
    pub fn to_relation_value(&self) -> String {
        self.to_json().to_string()
    }

    /// Parses and validates a relation value.
    pub fn from_relation_value(raw: &str) -> Result<Self, InterfaceError> {
        let rec = Self::parse_unchecked(raw)?;
        rec.validate()?;
        Ok(rec)
    }

    /// Parses a relation value checking only its JSON shape and types, not the values: call
    /// [`NodeRecord::validate`] before using it (the controller validates each distinct node
    /// shape once instead of every record).
    pub fn parse_unchecked(raw: &str) -> Result<Self, InterfaceError> {
        let v: Value = serde_json::from_str(raw).map_err(|e| InterfaceError::Json {
            key: NODE_KEY,
            reason: e.to_string(),
        })?;
        Self::from_json(&v)
    }

    fn from_json(v: &Value) -> Result<Self, InterfaceError> {
        let Value::Object(top) = v else {
            return Err(invalid("", "expected a JSON object"));
        };
        for k in top.keys() {
            if !["node_parameters", "new_node", "gres"].contains(&k.as_str()) {
                return Err(invalid(k.clone(), "unknown key"));
            }
        }
        let new_node = match top.get("new_node") {
            Some(Value::Bool(b)) => *b,
            None => return Err(invalid("new_node", "missing")),
            Some(other) => {
                return Err(invalid(
                    "new_node",
                    format!("expected true or false, got {other}"),
                ));
            }
        };
        let Some(Value::Object(pm)) = top.get("node_parameters") else {
            return Err(invalid("node_parameters", "missing or not an object"));
        };
        let mut params = NodeParameters::default();
        for (k, val) in pm {
            let field = format!("node_parameters.{k}");
            match k.as_str() {
                "Gres" => {
                    let Value::Array(items) = val else {
                        return Err(invalid(
                            field,
                            format!("expected a list of strings, got {val}"),
                        ));
                    };
                    for item in items {
                        let Value::String(s) = item else {
                            return Err(invalid(field, format!("expected a string, got {item}")));
                        };
                        params
                            .gres
                            .push(GresSpec::parse(s).map_err(|e| invalid(&field, e))?);
                    }
                }
                _ => {
                    let Value::String(s) = val else {
                        return Err(invalid(field, format!("expected a string, got {val}")));
                    };
                    if k == "NodeName" {
                        params.node_name = s.clone();
                    } else if canonical_node_key(k) == Some(k.as_str()) {
                        params.params.insert(k.clone(), s.clone());
                    } else {
                        return Err(invalid(field, "not a node parameter this charm passes on"));
                    }
                }
            }
        }
        if params.node_name.is_empty() {
            return Err(invalid("node_parameters.NodeName", "missing"));
        }
        let gres = match top.get("gres") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, g)| GresEntry::from_json(i, g))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(invalid("gres", format!("expected a list, got {other}"))),
        };
        Ok(NodeRecord {
            node_parameters: params,
            new_node,
            gres,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFERENCE: &str = r#"{"node_parameters": {"NodeName": "node1", "CPUs": "16", "Boards": "1",
   "SocketsPerBoard": "1", "CoresPerSocket": "8", "ThreadsPerCore": "2", "RealMemory": "31848",
   "Gres": ["gpu:tesla_t4:2", "gpu:l40s:2"], "MemSpecLimit": "1024"},
 "new_node": true,
 "gres": [{"Name": "gpu", "Type": "tesla_t4", "File": "/dev/nvidia[0-1]"},
          {"Name": "gpu", "Type": "l40s", "File": "/dev/nvidia[2-3]"}]}"#;

    #[test]
    fn parses_the_reference_record_and_round_trips() {
        let rec = NodeRecord::from_relation_value(REFERENCE).unwrap();
        assert_eq!(rec.node_parameters.node_name, "node1");
        assert_eq!(rec.node_parameters.gres.len(), 2);
        assert!(rec.new_node);
        let again = NodeRecord::from_relation_value(&rec.to_relation_value()).unwrap();
        assert_eq!(again, rec);
        let line: Vec<String> = rec
            .node_parameters
            .ordered()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(
            line.join(" "),
            "NodeName=node1 CPUs=16 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=31848 Gres=gpu:tesla_t4:2,gpu:l40s:2 MemSpecLimit=1024"
        );
    }

    #[test]
    fn no_gpus_means_no_gres_keys() {
        let rec = NodeRecord {
            node_parameters: NodeParameters {
                node_name: "n".into(),
                ..Default::default()
            },
            new_node: false,
            gres: vec![],
        };
        assert_eq!(
            rec.to_relation_value(),
            r#"{"new_node":false,"node_parameters":{"NodeName":"n"}}"#
        );
    }

    fn err(raw: &str) -> String {
        NodeRecord::from_relation_value(raw)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn refuses_bad_input_with_the_reason() {
        assert!(err("{not json").contains("not valid JSON"));
        assert!(err("[]").contains("JSON object"));
        let wrong_type = REFERENCE.replace(r#""CPUs": "16""#, r#""CPUs": 16"#);
        assert!(err(&wrong_type).contains("node_parameters.CPUs: expected a string"));
        let gres_string = REFERENCE.replace(
            r#"["gpu:tesla_t4:2", "gpu:l40s:2"]"#,
            r#""gpu:tesla_t4:2,gpu:l40s:2""#,
        );
        assert!(err(&gres_string).contains("expected a list"));
        let injected = REFERENCE.replace(
            r#""Type": "tesla_t4""#,
            r#""Type": "t4\nSlurmctldProlog=/tmp/x""#,
        );
        let e = err(&injected);
        assert!(e.contains("gres[0]") && e.contains("\\n"), "{e}");
        let space = REFERENCE.replace(r#""RealMemory": "31848""#, r#""RealMemory": "318 48""#);
        assert!(err(&space).contains("RealMemory"));
        let hash = REFERENCE.replace(r#""NodeName": "node1""#, r#""NodeName": "node1#x""#);
        assert!(err(&hash).contains("NodeName"));
        let unknown = REFERENCE.replace(r#""Boards": "1""#, r#""SlurmctldProlog": "/tmp/x""#);
        assert!(err(&unknown).contains("SlurmctldProlog"));
        let eq = REFERENCE.replace(r#""Boards": "1""#, r#""Features": "a=b""#);
        assert!(err(&eq).contains("Features"));
        let new_node = REFERENCE.replace(r#""new_node": true"#, r#""new_node": "true""#);
        assert!(err(&new_node).contains("new_node"));
        let bad_file = REFERENCE.replace("/dev/nvidia[2-3]", "/etc/shadow");
        assert!(err(&bad_file).contains("gres[1]"));
    }

    #[test]
    fn gres_must_match_the_records() {
        let fewer = REFERENCE.replace("/dev/nvidia[2-3]", "/dev/nvidia2");
        assert!(err(&fewer).contains("does not match"), "{}", err(&fewer));
        let missing = REFERENCE.replace(r#", "gpu:l40s:2""#, "");
        assert!(err(&missing).contains("does not match"));
        let dup_file = REFERENCE.replace("/dev/nvidia[2-3]", "/dev/nvidia[0-1]");
        assert!(err(&dup_file).contains("twice"));
    }

    #[test]
    fn mig_records() {
        let raw = r#"{"node_parameters":{"NodeName":"n","Gres":["gpu:nvidia_a100_1g.5gb:2"]},"new_node":false,
          "gres":[{"Name":"gpu","Type":"nvidia_a100_1g.5gb","MultipleFiles":"/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22"},
                  {"Name":"gpu","Type":"nvidia_a100_1g.5gb","MultipleFiles":"/dev/nvidia0,/dev/nvidia-caps/nvidia-cap30,/dev/nvidia-caps/nvidia-cap31"}]}"#;
        let rec = NodeRecord::from_relation_value(raw).unwrap();
        assert_eq!(rec.gres.len(), 2);
        let both = raw.replacen(
            r#""MultipleFiles""#,
            r#""File":"/dev/nvidia1","MultipleFiles""#,
            1,
        );
        assert!(err(&both).contains("mutually exclusive"));
    }
}
