//! [`SecretBackend`] for the hook-tool client: Juju's `secret-*` tools with the argv ops uses.
//! Content goes through `0600` temporary files (`key#file=<path>`), never argv; reads ask for
//! `key#base64` with `--format=json` and decode, so values are bytes both ways.

use crate::backend::RelationId;
use crate::hook_tools::{HookTools, parse_json};
use crate::secrets::{
    RotatePolicy, SecretBackend, SecretContent, SecretId, SecretInfo, SecretOptions, SecretOwner,
    SecretRead, SecretRef, check_secret_content,
};
use crate::tool_error::HookToolError;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write;

/// The temporary files holding one call's content; removed when dropped (after the tool ran).
struct ContentFiles {
    files: Vec<tempfile::NamedTempFile>,
    args: Vec<String>,
}

/// Writes each value to its own `0600` file (tempfile creates them `0600`) and builds the
/// `key#file=<path>` arguments.
fn content_files(tool: &str, content: &SecretContent) -> Result<ContentFiles, HookToolError> {
    check_secret_content(tool, content)?;
    let io = |source| HookToolError::Io {
        tool: tool.to_owned(),
        source,
    };
    let mut out = ContentFiles {
        files: Vec::with_capacity(content.len()),
        args: Vec::with_capacity(content.len()),
    };
    for (key, value) in content {
        let mut file = tempfile::Builder::new()
            .prefix("juju-secret-")
            .tempfile()
            .map_err(io)?;
        file.write_all(value).map_err(io)?;
        file.flush().map_err(io)?;
        out.args
            .push(format!("{key}#file={}", file.path().display()));
        out.files.push(file);
    }
    Ok(out)
}

/// The metadata flags shared by `secret-add` and `secret-set`.
fn option_args(options: &SecretOptions, args: &mut Vec<String>) {
    let mut push = |flag: &str, value: &str| {
        args.push(format!("--{flag}"));
        args.push(value.to_owned());
    };
    if let Some(l) = &options.label {
        push("label", l);
    }
    if let Some(d) = &options.description {
        push("description", d);
    }
    if let Some(e) = &options.expire {
        push("expire", e);
    }
    if let Some(r) = options.rotate {
        push("rotate", r.as_str());
    }
}

fn not_found(e: &HookToolError) -> bool {
    matches!(e, HookToolError::Other { stderr, .. } if stderr.contains("not found"))
}

/// One entry of `secret-info-get --format=json`.
#[derive(Deserialize)]
struct InfoWire {
    revision: u32,
    #[serde(default)]
    label: String,
    owner: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    rotation: Option<String>,
    #[serde(default)]
    expiry: Option<String>,
}

fn bad_output(tool: &str, output: &str, why: String) -> HookToolError {
    HookToolError::BadOutput {
        tool: tool.to_owned(),
        output: output.chars().take(200).collect(),
        source: why.into(),
    }
}

impl SecretBackend for HookTools {
    fn secret_add(
        &self,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<SecretId, HookToolError> {
        let tool = "secret-add";
        let files = content_files(tool, content)?;
        let mut args = files.args.clone();
        args.push("--owner".to_owned());
        args.push(
            match options.owner {
                SecretOwner::Application => "application",
                SecretOwner::Unit => "unit",
            }
            .to_owned(),
        );
        option_args(options, &mut args);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.run(tool, &argv)?;
        drop(files);
        let text = String::from_utf8_lossy(&out);
        SecretId::parse(text.trim()).map_err(|e| bad_output(tool, &text, e.to_string()))
    }

    fn secret_get(
        &self,
        secret: &SecretRef,
        keys: &[&str],
        read: SecretRead,
    ) -> Result<SecretContent, HookToolError> {
        let tool = "secret-get";
        let read_flag = |first: bool| match (read, first) {
            (SecretRead::Peek, _) => Some("--peek"),
            // The first call moves the tracking; later keys read what it now tracks.
            (SecretRead::Refresh, true) => Some("--refresh"),
            _ => None,
        };
        let (id, label) = match secret {
            SecretRef::Label(l) => {
                // Juju takes a key only after an id, so a read by label gets the whole map,
                // whose values Juju prints as text: binary values need a read by id.
                let mut argv = vec!["--label", l.as_str()];
                argv.extend(read_flag(true));
                argv.push("--format=json");
                let out = self.run(tool, &argv)?;
                let map: BTreeMap<String, String> = parse_json(tool, &out)?;
                return keys
                    .iter()
                    .map(|k| match map.get(*k) {
                        Some(v) => Ok(((*k).to_owned(), v.as_bytes().to_vec())),
                        None => Err(HookToolError::Other {
                            tool: tool.to_owned(),
                            status: "exit code 1".to_owned(),
                            stderr: format!("secret key value {k:?} not found"),
                        }),
                    })
                    .collect();
            }
            SecretRef::Id(id) => (id, None),
            SecretRef::IdWithLabel(id, l) => (id, Some(l.as_str())),
        };
        let uri = id.uri();
        let mut content = SecretContent::new();
        for (n, key) in keys.iter().enumerate() {
            let wanted = format!("{key}#base64");
            let mut argv = vec![uri.as_str(), wanted.as_str()];
            if let Some(l) = label {
                argv.extend(["--label", l]);
            }
            argv.extend(read_flag(n == 0));
            argv.push("--format=json");
            let out = self.run(tool, &argv)?;
            let b64: String = parse_json(tool, &out)?;
            let value = STANDARD
                .decode(b64.trim())
                .map_err(|e| bad_output(tool, "(a base64 value)", e.to_string()))?;
            content.insert((*key).to_owned(), value);
        }
        Ok(content)
    }

    fn secret_info_get(&self, secret: &SecretRef) -> Result<Option<SecretInfo>, HookToolError> {
        let tool = "secret-info-get";
        let args: Vec<String> = match secret {
            SecretRef::Id(id) | SecretRef::IdWithLabel(id, _) => vec![id.uri()],
            SecretRef::Label(l) => vec!["--label".into(), l.clone()],
        };
        let mut argv: Vec<&str> = args.iter().map(String::as_str).collect();
        argv.push("--format=json");
        let out = match self.run(tool, &argv) {
            Err(e) if not_found(&e) => return Ok(None),
            other => other?,
        };
        let map: BTreeMap<String, InfoWire> = parse_json(tool, &out)?;
        let Some((raw_id, w)) = map.into_iter().next() else {
            return Ok(None);
        };
        let id = SecretId::parse(&raw_id).map_err(|e| bad_output(tool, &raw_id, e.to_string()))?;
        Ok(Some(SecretInfo {
            id,
            revision: w.revision,
            label: Some(w.label).filter(|l| !l.is_empty()),
            owner: w.owner,
            description: w.description.filter(|d| !d.is_empty()),
            rotation: w.rotation.as_deref().and_then(RotatePolicy::parse),
            expiry: w.expiry,
        }))
    }

    fn secret_set(
        &self,
        id: &SecretId,
        content: &SecretContent,
        options: &SecretOptions,
    ) -> Result<(), HookToolError> {
        let tool = "secret-set";
        let files = content_files(tool, content)?;
        let mut args = vec![id.uri()];
        args.extend(files.args.iter().cloned());
        option_args(options, &mut args);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(tool, &argv)?;
        drop(files);
        Ok(())
    }

    fn secret_grant(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError> {
        let (uri, rel) = (id.uri(), relation.to_string());
        let mut argv = vec![uri.as_str(), "-r", rel.as_str()];
        if let Some(u) = unit {
            argv.extend(["--unit", u]);
        }
        self.run("secret-grant", &argv).map(drop)
    }

    fn secret_revoke(
        &self,
        id: &SecretId,
        relation: &RelationId,
        unit: Option<&str>,
    ) -> Result<(), HookToolError> {
        let (uri, rel) = (id.uri(), relation.to_string());
        let mut argv = vec![uri.as_str(), "-r", rel.as_str()];
        if let Some(u) = unit {
            argv.extend(["--unit", u]);
        }
        self.run("secret-revoke", &argv).map(drop)
    }

    fn secret_remove(&self, id: &SecretId, revision: Option<u32>) -> Result<(), HookToolError> {
        let uri = id.uri();
        let rev = revision.map(|r| r.to_string());
        let mut argv = vec![uri.as_str()];
        if let Some(r) = &rev {
            argv.extend(["--revision", r.as_str()]);
        }
        self.run("secret-remove", &argv).map(drop)
    }

    fn secret_ids(&self) -> Result<Vec<SecretId>, HookToolError> {
        let tool = "secret-ids";
        let out = self.run(tool, &["--format=json"])?;
        let raw: Option<Vec<String>> = parse_json(tool, &out)?;
        raw.unwrap_or_default()
            .iter()
            .map(|s| SecretId::parse(s).map_err(|e| bad_output(tool, s, e.to_string())))
            .collect()
    }
}
