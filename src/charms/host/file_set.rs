//! Writing several files as one change: slurm.conf, gres.conf and cgroup.conf describe one
//! cluster and must never disagree on disk (a gres.conf for nodes slurm.conf does not have
//! makes slurmctld and slurmd fatal). [`Host::write_set`] writes every changed file to a temp
//! file beside it, fsyncs them all, and only then renames each into place; any error before
//! the renames removes the temps and leaves the old set untouched, and a rename that fails
//! puts back the files already renamed. The old files are kept for that as hard links beside
//! them (a rename puts one back whole, mode and owner included), not read into memory: a
//! slurm.conf of 10,000 distinct nodes is 2 MB, and a hook held it twice before. Where a link
//! cannot be made, the old bytes are read instead.

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
    old: Old,
}

/// What puts a file back if the set fails after its rename.
enum Old {
    /// There was no file: remove the new one.
    Absent,
    /// A hard link to the old file (removed when dropped): renamed back over the new one.
    Linked(tempfile::TempPath),
    /// The old bytes and mode, where no link could be made.
    Bytes(Vec<u8>, u32),
}

fn werr(path: &Path) -> impl FnOnce(std::io::Error) -> HostError + use<> {
    let path = path.to_path_buf();
    move |source| HostError::Write { path, source }
}

impl Host<'_> {
    /// Writes `files` together or not at all (see the module doc). Files whose bytes are
    /// already right only get their mode and owner fixed. Returns true if any bytes changed.
    pub fn write_set(&self, files: &[SetFile<'_>]) -> Result<bool, HostError> {
        let mut staged = Vec::new();
        let mut unchanged = Vec::new();
        for f in files {
            // a directory in a file's place holds nothing: its rename fails, and the set with it
            let dir = std::fs::symlink_metadata(self.path(f.path)).is_ok_and(|m| m.is_dir());
            if !dir && let Some(meta) = self.holding(f.path, f.bytes)? {
                unchanged.push((f, meta));
                continue;
            }
            // On error, dropping `staged` removes every temp file (and link) made so far.
            staged.push(self.stage(f)?);
        }
        if staged.is_empty() {
            for (f, meta) in unchanged {
                self.settle(&self.path(f.path), &meta, f.mode, f.owner)?;
            }
            return Ok(false);
        }
        let mut done: Vec<(PathBuf, Old)> = Vec::new();
        for s in staged {
            let Staged { path, tmp, old } = s;
            if let Err(e) = tmp.persist(&path) {
                let err = HostError::Write {
                    path: path.clone(),
                    source: e.error,
                };
                // `e.file` (the temp) is dropped here, which removes it.
                for (path, old) in done.into_iter().rev() {
                    restore(&path, old);
                }
                return Err(err);
            }
            done.push((path, old));
        }
        let dirs = done
            .iter()
            .filter_map(|(p, _)| p.parent())
            .collect::<std::collections::BTreeSet<_>>();
        for dir in dirs {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        // The files whose bytes were right only get their mode and owner fixed.
        for (f, meta) in unchanged {
            self.settle(&self.path(f.path), &meta, f.mode, f.owner)?;
        }
        Ok(true)
    }

    /// Writes one file's new content to a synced temp file in its directory, and keeps the
    /// old file to put back ([`Old`]).
    fn stage(&self, f: &SetFile<'_>) -> Result<Staged, HostError> {
        let path = self.path(f.path);
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
        let mut prefix = OsString::from(".");
        prefix.push(path.file_name().unwrap_or_default());
        prefix.push(".");
        let old = self.keep_old(f, &path, &dir, &prefix)?;
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
        tmp.as_file().sync_all().map_err(werr(&tmp_path))?;
        self.chown_path(&tmp_path, f.owner)?;
        Ok(Staged { path, tmp, old })
    }

    /// The old file, kept until the set is in place: a hard link named like the temps
    /// (`.<name>.<random>.old.tmp`: removed when the set is done or put back, and recognisably
    /// the charm's if a crash leaves one), or its bytes where the file system refuses the link.
    fn keep_old(
        &self,
        f: &SetFile<'_>,
        path: &Path,
        dir: &Path,
        prefix: &OsString,
    ) -> Result<Old, HostError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Old::Absent),
            Err(source) => {
                return Err(HostError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        if meta.is_dir() {
            // nothing to put back: the rename over a directory fails before anything moves
            return Ok(Old::Absent);
        }
        if meta.is_file() {
            let linked = tempfile::Builder::new()
                .prefix(prefix)
                .suffix(".old.tmp")
                .make_in(dir, |p| std::fs::hard_link(path, p));
            if let Ok(link) = linked {
                return Ok(Old::Linked(link.into_temp_path()));
            }
        }
        let mode = meta.permissions().mode() & 0o7777;
        Ok(match self.read(f.path)? {
            Some(bytes) => Old::Bytes(bytes, mode),
            None => Old::Absent,
        })
    }
}

/// Puts a file back as it was before the set (best effort: the set is failing already).
fn restore(path: &Path, old: Old) {
    let result = match old {
        Old::Absent => std::fs::remove_file(path),
        Old::Linked(link) => link.persist(path).map_err(|e| e.error),
        Old::Bytes(bytes, mode) => std::fs::write(path, bytes)
            .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))),
    };
    if let Err(e) = result {
        tracing::error!("cannot put back {}: {e}", path.display());
    }
}
