//! Scenario files for `juju-sim run <scenario.yaml>`.
//!
//! ```yaml
//! model: demo                      # optional
//! steps:
//!   - deploy: {app: ctl, charm: ../charms/ctl, units: 1, config: {k: v},
//!              env: {K: "V-{unit_dash}"}, path: [dir], prefix: [nsenter, ...]}
//!   - integrate: [node, ctl]       # or "node:ep ctl:ep"
//!   - add-unit: {app: node, units: 1}
//!   - set-config: {app: node, config: {k: v}}
//!   - run-action: {unit: node/0, action: hello, params: {name: x}}
//!   - set-leader: node/1
//!   - update-status: {}            # or an app name
//!   - advance-time: 1h             # wall clock on; due secret-rotate/-expired hooks run
//!   - upgrade-charm: {app: node, charm: dir}   # charm optional
//!   - remove-unit: node/1
//!   - remove-relation: [node, ctl]
//!   - remove-application: node
//!   - resolve: node/0
//!   - show: status                 # status | relations | secrets | logs | all
//!   - print-file: some/path
//!   - expect: {status: {ctl/0: active}, action: completed}
//!   - sh: "cp -r ../charm ${WORKDIR}/c"   # host command (cwd: scenario dir, vars exported)
//!   - bench: {unit: ctl/0, hook: update-status, runs: 50}   # remote: for relation hooks
//! ```
//! Relative paths are relative to the scenario file; `${VAR}` expands from the process
//! environment plus `SCENARIO_DIR`, `WORKDIR` (a temp dir kept for the whole run) and `BIN_DIR`
//! (the directory of the `juju-sim` executable, e.g. `target/release`).

use crate::error::{Result, SimError};
use crate::model::Status;
use crate::report;
use crate::sim::{ActionResult, DeploySpec, SimOptions, Simulator};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn err(msg: impl Into<String>) -> SimError {
    SimError::Scenario(msg.into())
}

/// Expands `${VAR}` references.
struct Expander {
    vars: BTreeMap<String, String>,
}

impl Expander {
    fn expand(&self, s: &str) -> Result<String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| err(format!("unterminated ${{ in {s:?}")))?;
            let name = &after[..end];
            let value = self
                .vars
                .get(name)
                .cloned()
                .or_else(|| std::env::var(name).ok())
                .ok_or_else(|| err(format!("variable {name:?} is not set (in {s:?})")))?;
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn path(&self, base: &Path, s: &str) -> Result<PathBuf> {
        let p = PathBuf::from(self.expand(s)?);
        Ok(if p.is_absolute() { p } else { base.join(p) })
    }
}

fn str_field<'a>(v: &'a Json, key: &str, step: &str) -> Result<&'a str> {
    v.get(key)
        .and_then(Json::as_str)
        .ok_or_else(|| err(format!("{step}: `{key}` (string) is required")))
}

fn two_apps(v: &Json, step: &str) -> Result<(String, String)> {
    let items: Vec<String> = match v {
        Json::Array(a) => a
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_owned)
            .collect(),
        Json::String(s) => s.split_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    match items.as_slice() {
        [a, b] => Ok((a.clone(), b.clone())),
        _ => Err(err(format!("{step}: expected two applications, got {v}"))),
    }
}

fn config_map(v: Option<&Json>) -> BTreeMap<String, Json> {
    v.and_then(Json::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// A scenario run: the simulator plus what it printed.
pub struct Runner {
    /// The simulator.
    pub sim: Simulator,
    base: PathBuf,
    exp: Expander,
    printed: usize,
    verbose: bool,
    last_action: Option<ActionResult>,
    _workdir: tempfile::TempDir,
    out: Box<dyn std::io::Write>,
}

impl Runner {
    fn say(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    fn flush_records(&mut self) {
        let mut text = String::new();
        for r in &self.sim.records()[self.printed..] {
            text.push_str(&report::record(r, self.verbose));
        }
        self.printed = self.sim.records().len();
        self.say(&text);
    }

    fn step(&mut self, name: &str, arg: &Json) -> Result<()> {
        match name {
            "deploy" => {
                let app = str_field(arg, "app", name)?;
                let charm = self.exp.path(&self.base, str_field(arg, "charm", name)?)?;
                let units = arg.get("units").and_then(Json::as_u64).unwrap_or(1);
                let mut spec = DeploySpec::new(app, charm)
                    .units(u32::try_from(units).map_err(|_| err("deploy: too many units"))?);
                spec.config = config_map(arg.get("config"));
                for (k, v) in arg
                    .get("env")
                    .and_then(Json::as_object)
                    .into_iter()
                    .flatten()
                {
                    let v = match v {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    spec.extras.env.insert(k.clone(), self.exp.expand(&v)?);
                }
                for p in arg
                    .get("path")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    let p = p
                        .as_str()
                        .ok_or_else(|| err("deploy: path entries are strings"))?;
                    spec.extras.path.push(self.exp.path(&self.base, p)?);
                }
                for a in arg
                    .get("prefix")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                {
                    let a = a
                        .as_str()
                        .ok_or_else(|| err("deploy: prefix entries are strings"))?;
                    spec.extras.command_prefix.push(self.exp.expand(a)?);
                }
                self.sim.deploy(spec)?;
            }
            "add-unit" => {
                let app = str_field(arg, "app", name)?;
                let n = arg.get("units").and_then(Json::as_u64).unwrap_or(1);
                self.sim.add_unit(
                    app,
                    u32::try_from(n).map_err(|_| err("add-unit: too many"))?,
                )?;
            }
            "integrate" => {
                let (a, b) = two_apps(arg, name)?;
                self.sim.integrate(&a, &b)?;
            }
            "remove-relation" => {
                let (a, b) = two_apps(arg, name)?;
                self.sim.remove_relation(&a, &b)?;
            }
            "remove-unit" => {
                let unit = arg
                    .as_str()
                    .ok_or_else(|| err("remove-unit: a unit name"))?;
                self.sim.remove_unit(unit)?;
            }
            "remove-application" => {
                let app = arg
                    .as_str()
                    .ok_or_else(|| err("remove-application: an app name"))?;
                self.sim.remove_application(app)?;
            }
            "set-config" => {
                let app = str_field(arg, "app", name)?;
                self.sim.set_config(app, config_map(arg.get("config")))?;
            }
            "run-action" => {
                let unit = str_field(arg, "unit", name)?;
                let action = str_field(arg, "action", name)?;
                let params = arg.get("params").cloned().unwrap_or(Json::Null);
                let result = self.sim.run_action(unit, action, params)?;
                self.flush_records();
                self.say(&report::action(&result));
                self.last_action = Some(result);
            }
            "set-leader" => {
                let unit = arg.as_str().ok_or_else(|| err("set-leader: a unit name"))?;
                self.sim.set_leader(unit)?;
            }
            "update-status" => self.sim.update_status(arg.as_str())?,
            "advance-time" => {
                let spec = arg
                    .as_str()
                    .ok_or_else(|| err("advance-time: a Go duration such as 1h or 5m"))?;
                let secs = crate::secrets::clock::parse_go_duration(spec)
                    .filter(|s| *s >= 0.0)
                    .ok_or_else(|| err(format!("advance-time: {spec:?} is not a duration")))?;
                self.sim
                    .advance_time(std::time::Duration::from_secs(secs.ceil() as u64))?;
            }
            "upgrade-charm" => {
                let app = str_field(arg, "app", name)?;
                let dir = match arg.get("charm").and_then(Json::as_str) {
                    Some(c) => Some(self.exp.path(&self.base, c)?),
                    None => None,
                };
                self.sim.upgrade_charm(app, dir)?;
            }
            "resolve" => {
                let unit = arg.as_str().ok_or_else(|| err("resolve: a unit name"))?;
                self.sim.resolve(unit)?;
            }
            "show" => {
                let what = arg.as_str().unwrap_or("all");
                if matches!(what, "status" | "all") {
                    let t = report::status(&self.sim);
                    self.say(&t);
                }
                if matches!(what, "relations" | "all") {
                    let t = report::relations(&self.sim);
                    self.say(&t);
                }
                if matches!(what, "secrets" | "all") {
                    let t = report::secrets(&self.sim);
                    self.say(&t);
                }
                if matches!(what, "logs") {
                    let mut t = String::new();
                    for l in self.sim.logs() {
                        t.push_str(&format!(
                            "  {} {} {}: {}\n",
                            l.unit, l.hook, l.level, l.message
                        ));
                    }
                    self.say(&t);
                }
            }
            "print-file" => {
                let p = arg.as_str().ok_or_else(|| err("print-file: a path"))?;
                let path = self.exp.path(&self.base, p)?;
                let text = std::fs::read_to_string(&path).map_err(|source| SimError::Io {
                    path: path.clone(),
                    source,
                })?;
                self.say(&format!("  --- {} ---\n{text}", path.display()));
            }
            "expect" => self.expect(arg)?,
            "sh" => {
                let script = arg.as_str().ok_or_else(|| err("sh: a shell command"))?;
                let out = std::process::Command::new("/bin/sh")
                    .arg("-c")
                    .arg(script)
                    .envs(&self.exp.vars)
                    .current_dir(&self.base)
                    .output()
                    .map_err(|source| SimError::Spawn {
                        what: "/bin/sh".into(),
                        source,
                    })?;
                let mut text = String::new();
                for line in String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .chain(String::from_utf8_lossy(&out.stderr).lines())
                {
                    text.push_str(&format!("  | {line}\n"));
                }
                self.say(&text);
                if !out.status.success() {
                    return Err(err(format!("sh step failed ({}): {script}", out.status)));
                }
            }
            "bench" => {
                let unit = str_field(arg, "unit", name)?;
                let hook_name = str_field(arg, "hook", name)?;
                let remote = arg.get("remote").and_then(Json::as_str);
                let runs = arg.get("runs").and_then(Json::as_u64).unwrap_or(20);
                let hook = self.sim.hook_named(unit, hook_name, remote)?;
                let start = self.sim.records().len();
                let result = self.sim.bench_hook(unit, hook, runs as usize)?;
                // Do not print every run.
                self.printed = self.printed.max(start).max(self.sim.records().len());
                self.say(&format!("  bench {result}\n"));
            }
            other => return Err(err(format!("unknown step {other:?}"))),
        }
        self.flush_records();
        Ok(())
    }

    fn expect(&mut self, arg: &Json) -> Result<()> {
        for (unit, want) in arg
            .get("status")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            let got = self
                .sim
                .unit_status(unit)
                .unwrap_or_else(|| Status::new("missing", "", 0));
            let want = want.as_str().unwrap_or_default();
            if got.status != want {
                return Err(err(format!(
                    "expected {unit} to be {want}, it is {} ({})",
                    got.status, got.message
                )));
            }
        }
        if let Some(want) = arg.get("action").and_then(Json::as_str) {
            let got = self
                .last_action
                .as_ref()
                .map(|a| a.status.as_str())
                .unwrap_or("none");
            if got != want {
                return Err(err(format!("expected last action {want}, it was {got}")));
            }
        }
        self.say("  expectations met\n");
        Ok(())
    }
}

/// The scenario's directory, absolute: relative paths in it, `SCENARIO_DIR` and the working
/// directory of `sh` steps. As Juju takes a local bundle's directory from its absolute path
/// (`LocalBundleDataSource`: `filepath.Dir(filepath.Abs(path))`), so that `scenario.yaml`,
/// `./scenario.yaml` and `dir/scenario.yaml` all work from any working directory.
fn scenario_dir(path: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(|source| SimError::Io {
        path: path.to_owned(),
        source,
    })?;
    let base = abs
        .parent()
        .map(Path::to_owned)
        .unwrap_or_else(|| PathBuf::from("/"));
    Ok(std::fs::canonicalize(&base).unwrap_or(base))
}

/// Run a scenario file, printing the log to `out`.
pub fn run_file(path: &Path, verbose: bool, out: Box<dyn std::io::Write>) -> Result<Runner> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Io {
        path: path.to_owned(),
        source,
    })?;
    let doc: Json =
        serde_yaml::from_str(&text).map_err(|e| err(format!("{}: {e}", path.display())))?;
    let base = scenario_dir(path)?;
    let workdir = tempfile::Builder::new()
        .prefix("juju-sim-scenario-")
        .tempdir()
        .map_err(|source| SimError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let mut vars = BTreeMap::new();
    vars.insert("SCENARIO_DIR".to_owned(), base.display().to_string());
    vars.insert("WORKDIR".to_owned(), workdir.path().display().to_string());
    if let Some(bin_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_owned))
    {
        vars.insert("BIN_DIR".to_owned(), bin_dir.display().to_string());
    }
    let sim = Simulator::with_options(SimOptions {
        model_name: doc
            .get("model")
            .and_then(Json::as_str)
            .unwrap_or("sim")
            .to_owned(),
        ..SimOptions::default()
    })?;
    let mut runner = Runner {
        sim,
        base,
        exp: Expander { vars },
        printed: 0,
        verbose,
        last_action: None,
        _workdir: workdir,
        out,
    };
    let steps = doc
        .get("steps")
        .and_then(Json::as_array)
        .ok_or_else(|| err("`steps` (a list) is required"))?;
    for (i, step) in steps.iter().enumerate() {
        let (name, arg) = match step {
            Json::Object(m) if m.len() == 1 => m.iter().next().map(|(k, v)| (k.clone(), v.clone())),
            Json::String(s) => Some((s.clone(), Json::Null)),
            _ => None,
        }
        .ok_or_else(|| err(format!("step {}: must be a map with one key", i + 1)))?;
        runner.say(&format!(
            "== {}: {name} {}\n",
            i + 1,
            if arg.is_null() {
                String::new()
            } else {
                arg.to_string()
            }
        ));
        runner.step(&name, &arg)?;
    }
    Ok(runner)
}

const USAGE: &str = "usage: juju-sim run [-v|--verbose] <scenario.yaml>";

/// CLI entry point.
pub fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v" || a == "--verbose");
    let rest: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let path = match rest.as_slice() {
        [cmd, path] if cmd.as_str() == "run" => PathBuf::from(path),
        _ => {
            eprintln!("{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    match run_file(&path, verbose, Box::new(std::io::stdout())) {
        Ok(runner) => {
            let errored: Vec<String> = runner.sim.with_model(|m| {
                m.units
                    .values()
                    .filter(|u| u.error.is_some())
                    .map(|u| u.name.clone())
                    .collect()
            });
            println!("== final status");
            print!("{}", report::status(&runner.sim));
            if errored.is_empty() {
                std::process::ExitCode::SUCCESS
            } else {
                eprintln!("ERROR units in error state: {}", errored.join(", "));
                std::process::ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("ERROR {e}");
            std::process::ExitCode::from(1)
        }
    }
}
