//! Writing several files as one change: slurm.conf, gres.conf and cgroup.conf describe one
//! cluster and must never disagree on disk (a gres.conf for nodes slurm.conf does not have
//! makes slurmctld and slurmd fatal). [`Host::write_set`] writes every changed file to a temp
//! file beside it, fsyncs them all, and only then renames each into place; any error before
//! the renames removes the temps and leaves the old set untouched, and a rename that fails
//! puts back the files already renamed (their old bytes are held in memory).

use super::{Host, HostError, Owner};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One file of a set: host path, bytes, mode and owner.
#[derive(Debug, Clone, Copy)]
pub struct SetFile<'a> {
    /// Host path, e.g. `/etc/slurm/slurm.conf`.
    pub path: &'a str,
    /// The whole content.
    pub bytes: &'a [u8],
    /// Permission bits.
    pub mode: u32,
    /// Owner, when it matters.
    pub owner: Option<Owner>,
}

/// A file whose new content lies in a synced temp file, waiting for its rename.
struct Staged {
    path: PathBuf,
    tmp: tempfile::NamedTempFile,
    old: Option<Vec<u8>>,
    old_mode: u32,
}

fn werr(path: &Path) -> impl FnOnce(std::io::Error) -> HostError + use<> {
    let path = path.to_path_buf();
    move |source| HostError::Write { path, source }
}

impl Host<'_> {
    /// Writes `files` together or not at all (see the module doc). Files whose bytes are
    /// already right only get their mode and owner fixed. Returns true if any bytes changed.
    pub fn write_set(&self, files: &[SetFile<'_>]) -> Result<bool, HostError> {
        self.write_set_durable(files, true)
    }

    /// [`Host::write_set`] without `fsync`: together or not at all, but after a crash the set may
    /// be the previous one or partly written. For copies that are verified before use (the
    /// controller's last accepted files, checked against the applied record's hash).
    pub fn write_set_unsynced(&self, files: &[SetFile<'_>]) -> Result<bool, HostError> {
        self.write_set_durable(files, false)
    }

    fn write_set_durable(&self, files: &[SetFile<'_>], synced: bool) -> Result<bool, HostError> {
        let mut staged = Vec::new();
        let mut unchanged = Vec::new();
        for f in files {
            let current = self.read(f.path)?;
            if current.as_deref() == Some(f.bytes) {
                unchanged.push(f);
                continue;
            }
            // On error, dropping `staged` removes every temp file written so far.
            staged.push(self.stage(f, current, synced)?);
        }
        if staged.is_empty() {
            for f in files {
                self.write_durable(f.path, f.bytes, f.mode, f.owner, synced)?;
            }
            return Ok(false);
        }
        let mut done: Vec<(PathBuf, Option<Vec<u8>>, u32)> = Vec::new();
        for s in staged {
            let Staged {
                path,
                tmp,
                old,
                old_mode,
            } = s;
            if let Err(e) = tmp.persist(&path) {
                let err = HostError::Write {
                    path: path.clone(),
                    source: e.error,
                };
                // `e.file` (the temp) is dropped here, which removes it.
                for (path, old, mode) in done.into_iter().rev() {
                    restore(&path, old.as_deref(), mode);
                }
                return Err(err);
            }
            done.push((path, old, old_mode));
        }
        let dirs = done
            .iter()
            .filter_map(|(p, _, _)| p.parent())
            .collect::<std::collections::BTreeSet<_>>();
        for dir in dirs.into_iter().filter(|_| synced) {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        // The files whose bytes were right only get their mode and owner fixed.
        for f in unchanged {
            self.write_durable(f.path, f.bytes, f.mode, f.owner, synced)?;
        }
        Ok(true)
    }

    /// Writes one file's new content to a synced temp file in its directory.
    fn stage(
        &self,
        f: &SetFile<'_>,
        old: Option<Vec<u8>>,
        synced: bool,
    ) -> Result<Staged, HostError> {
        let path = self.path(f.path);
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
        let old_mode = std::fs::metadata(&path)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(f.mode);
        let mut prefix = OsString::from(".");
        prefix.push(path.file_name().unwrap_or_default());
        prefix.push(".");
        let mut tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(werr(&dir))?;
        let tmp_path = tmp.path().to_path_buf();
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(f.mode))
            .map_err(werr(&tmp_path))?;
        tmp.write_all(f.bytes).map_err(werr(&tmp_path))?;
        if synced {
            tmp.as_file().sync_all().map_err(werr(&tmp_path))?;
        }
        self.chown_path(&tmp_path, f.owner)?;
        Ok(Staged {
            path,
            tmp,
            old,
            old_mode,
        })
    }
}

/// Puts a file back as it was before the set (best effort: the set is failing already).
fn restore(path: &Path, old: Option<&[u8]>, mode: u32) {
    let result = match old {
        None => std::fs::remove_file(path),
        Some(bytes) => std::fs::write(path, bytes)
            .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))),
    };
    if let Err(e) = result {
        tracing::error!("cannot put back {}: {e}", path.display());
    }
}
