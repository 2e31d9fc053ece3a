//! Locating (or building once) the `jujuc` executable the tools dir links to.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static JUJUC: OnceLock<Result<PathBuf, String>> = OnceLock::new();

fn candidates(exe: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dir = exe.parent();
    // target/<profile>/deps/<test> or target/<profile>/examples/<x> -> target/<profile>
    for _ in 0..2 {
        if let Some(d) = dir {
            out.push(d.join("jujuc"));
            dir = d.parent();
        }
    }
    out
}

/// The profile dir (`target/<profile>`) of the running executable, if it looks like one.
fn profile_dir(exe: &Path) -> Option<PathBuf> {
    let parent = exe.parent()?;
    match parent.file_name()?.to_str()? {
        "deps" | "examples" => parent.parent().map(Path::to_owned),
        _ => Some(parent.to_owned()),
    }
}

fn build(exe: &Path) -> Result<PathBuf, String> {
    let profile = profile_dir(exe).ok_or("cannot tell the target dir of the running executable")?;
    let target = profile
        .parent()
        .ok_or("cannot tell the target dir of the running executable")?;
    let release = profile.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    eprintln!(
        "juju-sim: jujuc not found next to {}; building it with `cargo build -p juju-sim --bin jujuc{}`",
        exe.display(),
        if release { " --release" } else { "" }
    );
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "-q",
        "-p",
        "juju-sim",
        "--bin",
        "jujuc",
        "--manifest-path",
    ])
    .arg(&manifest)
    .arg("--target-dir")
    .arg(target);
    if release {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo to build jujuc: {e}"))?;
    if !status.success() {
        return Err(format!("building jujuc failed ({status})"));
    }
    let path = profile.join("jujuc");
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!("built jujuc but {} does not exist", path.display()))
    }
}

fn locate() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("JUJU_SIM_JUJUC") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("JUJU_SIM_JUJUC={} is not a file", p.display()))
        };
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find current executable: {e}"))?;
    if let Some(found) = candidates(&exe).into_iter().find(|p| p.is_file()) {
        return Ok(found);
    }
    build(&exe)
}

/// Path of the `jujuc` executable: `$JUJU_SIM_JUJUC`, else next to the running executable's
/// target dir (`target/<profile>/jujuc`), else built once with cargo.
pub fn jujuc_path() -> Result<PathBuf, String> {
    JUJUC.get_or_init(locate).clone()
}
