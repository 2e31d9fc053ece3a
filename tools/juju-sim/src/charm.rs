//! A charm directory as Juju reads it: `metadata.yaml`, `config.yaml`, `actions.yaml`.

use crate::error::{Result, SimError};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which role an endpoint plays in `metadata.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// `provides:`
    Provides,
    /// `requires:`
    Requires,
    /// `peers:`
    Peers,
}

/// One relation endpoint declared by a charm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Endpoint name (the key in metadata.yaml).
    pub name: String,
    /// Interface name.
    pub interface: String,
    /// Role.
    pub role: Role,
}

/// Type of a `config.yaml` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionType {
    /// `string`
    String,
    /// `int`
    Int,
    /// `float`
    Float,
    /// `boolean`
    Boolean,
    /// `secret` (a secret URI string)
    Secret,
}

/// One `config.yaml` option.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigOption {
    /// Declared type.
    pub kind: OptionType,
    /// Default value (`None` when absent or null).
    pub default: Option<Json>,
}

/// A loaded charm.
#[derive(Debug, Clone)]
pub struct Charm {
    /// The charm directory (absolute).
    pub dir: PathBuf,
    /// `name:` from metadata.yaml.
    pub name: String,
    /// Declared endpoints, by name.
    pub endpoints: BTreeMap<String, Endpoint>,
    /// `extra-bindings` names.
    pub extra_bindings: Vec<String>,
    /// Config options, by name.
    pub options: BTreeMap<String, ConfigOption>,
    /// Action schemas, by action name (a JSON-schema object with `properties` etc.).
    pub actions: BTreeMap<String, Json>,
}

fn read_yaml(path: &Path) -> Result<Option<Json>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(SimError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let value: Json = serde_yaml::from_str(&text).map_err(|e| SimError::CharmFile {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    Ok(if value.is_null() { None } else { Some(value) })
}

fn bad(path: &Path, message: impl Into<String>) -> SimError {
    SimError::CharmFile {
        path: path.to_owned(),
        message: message.into(),
    }
}

impl Charm {
    /// Load a charm directory. `metadata.yaml` is required; the others are optional.
    pub fn load(dir: &Path) -> Result<Self> {
        let dir = std::fs::canonicalize(dir).map_err(|source| SimError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let meta_path = dir.join("metadata.yaml");
        let meta = read_yaml(&meta_path)?.ok_or_else(|| bad(&meta_path, "file is missing"))?;
        let name = meta
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| bad(&meta_path, "`name` is missing"))?
            .to_owned();
        let mut endpoints = BTreeMap::new();
        for (key, role) in [
            ("provides", Role::Provides),
            ("requires", Role::Requires),
            ("peers", Role::Peers),
        ] {
            let Some(section) = meta.get(key) else {
                continue;
            };
            let map = section
                .as_object()
                .ok_or_else(|| bad(&meta_path, format!("`{key}` must be a map")))?;
            for (ep, spec) in map {
                let interface = spec
                    .get("interface")
                    .and_then(Json::as_str)
                    .or_else(|| spec.as_str())
                    .ok_or_else(|| bad(&meta_path, format!("endpoint {ep:?} has no interface")))?;
                if endpoints.contains_key(ep) {
                    return Err(bad(&meta_path, format!("duplicate endpoint {ep:?}")));
                }
                endpoints.insert(
                    ep.clone(),
                    Endpoint {
                        name: ep.clone(),
                        interface: interface.to_owned(),
                        role,
                    },
                );
            }
        }
        let extra_bindings = meta
            .get("extra-bindings")
            .and_then(Json::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();

        let config_path = dir.join("config.yaml");
        let mut options = BTreeMap::new();
        if let Some(config) = read_yaml(&config_path)? {
            let opts = config.get("options").and_then(Json::as_object);
            for (name, spec) in opts.into_iter().flatten() {
                let kind = match spec.get("type").and_then(Json::as_str) {
                    Some("string") => OptionType::String,
                    Some("int") => OptionType::Int,
                    Some("float") => OptionType::Float,
                    Some("boolean") => OptionType::Boolean,
                    Some("secret") => OptionType::Secret,
                    other => {
                        return Err(bad(
                            &config_path,
                            format!("option {name:?} has invalid type {other:?}"),
                        ));
                    }
                };
                let default = spec.get("default").filter(|d| !d.is_null()).cloned();
                if let Some(d) = &default {
                    check_option_value(kind, d).map_err(|m| {
                        bad(&config_path, format!("default of option {name:?}: {m}"))
                    })?;
                }
                options.insert(name.clone(), ConfigOption { kind, default });
            }
        }

        let actions_path = dir.join("actions.yaml");
        let mut actions = BTreeMap::new();
        if let Some(acts) = read_yaml(&actions_path)? {
            let map = acts
                .as_object()
                .ok_or_else(|| bad(&actions_path, "must be a map of actions"))?;
            for (name, spec) in map {
                if !crate::tools::action::valid_key_segment(name) {
                    return Err(bad(&actions_path, format!("invalid action name {name:?}")));
                }
                actions.insert(name.clone(), spec.clone());
            }
        }
        Ok(Charm {
            dir,
            name,
            endpoints,
            extra_bindings,
            options,
            actions,
        })
    }
}

/// Check that `value` has the JSON type a config option of `kind` needs.
pub fn check_option_value(kind: OptionType, value: &Json) -> Result<(), String> {
    let ok = match kind {
        OptionType::String | OptionType::Secret => value.is_string(),
        OptionType::Int => value.is_i64() || value.is_u64(),
        OptionType::Float => value.is_number(),
        OptionType::Boolean => value.is_boolean(),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected {kind:?}, got {value}"))
    }
}
