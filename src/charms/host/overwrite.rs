//! Rewriting a file in place, for copies that are verified before they are used (the
//! controller's last accepted slurm.conf, gres.conf and cgroup.conf, checked against the
//! applied record's hash before they are put back).
//!
//! Why not a temp file and a rename, as every other write: a new file with data, renamed over
//! the old one, is the most expensive thing a hook does to a file system. On the development
//! VM's ext4 it cost about 0.27 ms a file (0.87 ms with `fsync`), against about 0.02 ms for
//! writing the same bytes over the file's own blocks (`target/release/fs-probe`, medians of 9
//! rounds; docs/BENCHMARKS.md, twelfth pass), and a controller hook that
//! reloads slurmctld rewrites one to three copies. A rename buys atomicity, which these copies
//! do not need: a copy a crash left torn does not hash as the applied record says and is never
//! put back (the guarantee they had before, when they were renamed into place without `fsync`
//! and a crash could leave them partly written too).
//!
//! The controller's store is rewritten in place too ([`Host::overwrite_streamed`]): megabytes
//! at 10,000 distinct nodes, where a new file cost about 2.5 ms a hook against 0.2 ms over the
//! old blocks (docs/BENCHMARKS.md, issue 38, fifth pass). Its header's checksum is zeroed first
//! and written last, so a file a crash or a failed write left torn does not read back and is
//! rebuilt from Juju.

use super::file_set::SetFile;
use super::{Host, HostError, Owner};
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};

impl Host<'_> {
    /// Writes each of `files` over the file already at its path: its bytes from offset 0, the
    /// length cut to theirs, the mode set; no `fsync`, no rename (see the module doc). A file
    /// that already holds its bytes only gets its mode fixed. An absent file is created where
    /// it will stay (`O_EXCL`, never through a symlink); where something else is in its place
    /// (a symlink, which is never followed, or a directory) it is written as
    /// [`Host::write_unsynced`] writes one. Returns true if any bytes changed.
    pub fn overwrite_unsynced(&self, files: &[SetFile<'_>]) -> Result<bool, HostError> {
        let mut changed = false;
        for f in files {
            let path = self.path(f.path);
            let werr = |source| HostError::Write {
                path: path.clone(),
                source,
            };
            let (file, write) = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => (
                    open_in_place(&path).map_err(werr)?,
                    !self.holds(f.path, f.bytes)?,
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    (create_in_place(&path, f.mode).map_err(werr)?, true)
                }
                _ => {
                    changed |= self.write_unsynced(f.path, f.bytes, f.mode, f.owner)?;
                    continue;
                }
            };
            if write {
                file.write_all_at(f.bytes, 0).map_err(werr)?;
                file.set_len(f.bytes.len() as u64).map_err(werr)?;
                changed = true;
            }
            set_mode(&file, f.mode).map_err(werr)?;
            self.chown_path(&path, f.owner)?;
        }
        Ok(changed)
    }
}

/// The regular file at `path` opened for writing in place (a symlink is never followed).
fn open_in_place(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// A new regular file at `path` with `mode` (its directory made first), created where it will
/// stay: `O_EXCL`, so nothing already there (a symlink planted meanwhile) is opened instead.
fn create_in_place(path: &std::path::Path, mode: u32) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// Gives `file` the permission bits `mode` where it has others.
fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    if file.metadata()?.permissions().mode() & 0o7777 != mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

impl Host<'_> {
    /// Writes the bytes `fill` streams over the file already at `host_path`, from offset 0,
    /// then cuts it to their length; no rename (see the module doc), `fsync` when `synced`.
    /// `fill` gets the file at offset 0 and leaves its cursor at the end of what it wrote.
    /// Where there is no regular file of one name yet (absent, a symlink, which is never
    /// followed, or a file with other hard links), it is written as [`Host::write_streamed`]
    /// writes one.
    pub fn overwrite_streamed(
        &self,
        host_path: &str,
        mode: u32,
        owner: Option<Owner>,
        synced: bool,
        fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    ) -> Result<(), HostError> {
        use std::io::Seek;
        use std::os::unix::fs::MetadataExt;
        let path = self.path(host_path);
        let alone = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.nlink() == 1);
        if !alone {
            self.write_streamed(host_path, mode, owner, synced, |file| {
                fill(file).map(|()| true)
            })?;
            return Ok(());
        }
        let werr = |source| HostError::Write {
            path: path.clone(),
            source,
        };
        let mut file = open_in_place(&path).map_err(werr)?;
        fill(&mut file).map_err(werr)?;
        let end = file.stream_position().map_err(werr)?;
        file.set_len(end).map_err(werr)?;
        set_mode(&file, mode).map_err(werr)?;
        if synced {
            file.sync_all().map_err(werr)?;
        }
        self.chown_path(&path, owner)
    }

    /// Makes `copy` another name of the file now at `live` (a hard link beside `copy`, renamed
    /// over it): a copy of megabytes for the cost of a link, never written into. `live` is
    /// only ever replaced whole (a rename), so the copy keeps the bytes it was made with.
    /// `false` where the file system refuses the link (another file system, no hard links):
    /// the caller then copies the bytes.
    pub fn link_copy(&self, live: &str, copy: &str) -> Result<bool, HostError> {
        use std::os::unix::fs::MetadataExt;
        let (live, copy) = (self.path(live), self.path(copy));
        // already another name of it (the live file was not replaced since): nothing to do
        let inode = |p: &std::path::Path| std::fs::symlink_metadata(p).map(|m| (m.dev(), m.ino()));
        if let (Ok(a), Ok(b)) = (inode(&live), inode(&copy))
            && a == b
        {
            return Ok(true);
        }
        let dir = copy.parent().unwrap_or(std::path::Path::new("/"));
        std::fs::create_dir_all(dir).map_err(|source| HostError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let linked = tempfile::Builder::new()
            .prefix(".link.")
            .suffix(".tmp")
            .make_in(dir, |tmp| std::fs::hard_link(&live, tmp));
        let Ok(linked) = linked else {
            return Ok(false);
        };
        linked.persist(&copy).map_err(|e| HostError::Write {
            path: copy.clone(),
            source: e.error,
        })?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charms::host::SystemRunner;

    fn file<'a>(path: &'a str, bytes: &'a [u8]) -> SetFile<'a> {
        SetFile {
            path,
            bytes,
            mode: 0o600,
            owner: None,
        }
    }

    #[test]
    fn a_file_is_rewritten_over_its_own_inode_and_cut_to_length() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let copy = "/var/lib/x/accepted/slurm.conf";
        // none yet: created where it stays (no temp file renamed over it), directory and all
        assert!(
            host.overwrite_unsynced(&[file(copy, b"a long first text\n")])
                .unwrap()
        );
        let path = host.path(copy);
        let names: Vec<_> = std::fs::read_dir(host.path("/var/lib/x/accepted"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["slurm.conf"]);
        assert_eq!(std::fs::read(&path).unwrap(), b"a long first text\n");
        let ino = std::fs::metadata(&path).unwrap().ino();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // shorter: the same file, the old tail cut off, the mode put back
        assert!(host.overwrite_unsynced(&[file(copy, b"short\n")]).unwrap());
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short\n");
        assert_eq!(meta.ino(), ino, "written in place, not renamed over");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        assert_eq!(meta.nlink(), 1);
        // the same bytes: nothing written
        assert!(!host.overwrite_unsynced(&[file(copy, b"short\n")]).unwrap());
    }

    #[test]
    fn a_symlink_in_a_copys_place_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep me").unwrap();
        let copy = "/accepted/gres.conf";
        std::fs::create_dir_all(host.path("/accepted")).unwrap();
        std::os::unix::fs::symlink(&target, host.path(copy)).unwrap();
        host.overwrite_unsynced(&[file(copy, b"new\n")]).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        assert_eq!(std::fs::read(host.path(copy)).unwrap(), b"new\n");
        assert!(
            !std::fs::symlink_metadata(host.path(copy))
                .unwrap()
                .is_symlink()
        );
    }

    #[test]
    fn a_link_copy_keeps_the_bytes_it_was_made_with_when_the_live_file_is_replaced() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let (live, copy) = ("/etc/slurm/slurm.conf", "/var/lib/x/accepted/slurm.conf");
        host.write(live, b"accepted\n", 0o644, None).unwrap();
        host.write_unsynced(copy, b"older copy\n", 0o600, None)
            .unwrap();
        assert!(host.link_copy(live, copy).unwrap());
        let inode = |p: &str| std::fs::metadata(host.path(p)).unwrap().ino();
        assert_eq!(inode(live), inode(copy), "one file, two names");
        // linked again while the live file was not replaced: still that one file
        assert!(host.link_copy(live, copy).unwrap());
        assert_eq!(inode(live), inode(copy));
        // the live file is replaced whole (a rename), as every write of it is
        host.write(live, b"refused\n", 0o644, None).unwrap();
        assert_ne!(inode(live), inode(copy));
        assert_eq!(host.read(copy).unwrap().unwrap(), b"accepted\n");
        // no temp link is left beside the copy
        let names: Vec<_> = std::fs::read_dir(host.path("/var/lib/x/accepted"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["slurm.conf"]);
        // nothing to link: the caller copies instead
        assert!(!host.link_copy("/etc/slurm/absent.conf", copy).unwrap());
        assert_eq!(host.read(copy).unwrap().unwrap(), b"accepted\n");
    }

    #[test]
    fn a_streamed_file_is_rewritten_over_its_own_inode_unless_it_has_other_names() {
        use std::io::Write;
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let store = "/var/lib/x/store.bin";
        let fill = |bytes: &'static [u8]| move |f: &mut std::fs::File| f.write_all(bytes);
        // none yet: written whole
        host.overwrite_streamed(store, 0o600, None, false, fill(b"a long first store\n"))
            .unwrap();
        let path = host.path(store);
        let ino = std::fs::metadata(&path).unwrap().ino();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // shorter: the same file, the old tail cut off, the mode put back
        host.overwrite_streamed(store, 0o600, None, false, fill(b"short\n"))
            .unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short\n");
        assert_eq!(meta.ino(), ino, "written in place, not renamed over");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        // a second name: that file is left as it was and the store gets a file of its own
        let other = dir.path().join("other-name");
        std::fs::hard_link(&path, &other).unwrap();
        host.overwrite_streamed(store, 0o600, None, true, fill(b"third\n"))
            .unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"short\n");
        assert_eq!(std::fs::read(&path).unwrap(), b"third\n");
        assert_ne!(std::fs::metadata(&path).unwrap().ino(), ino);
        // a symlink is replaced, never followed
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep me").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        host.overwrite_streamed(store, 0o600, None, false, fill(b"fourth\n"))
            .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"fourth\n");
    }

    #[test]
    fn a_checksum_is_the_hash_of_the_bytes_or_none_for_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        assert_eq!(host.checksum("/etc/slurm/slurm.conf").unwrap(), None);
        // bigger than one read piece (64 KiB)
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        host.write("/etc/slurm/slurm.conf", &bytes, 0o644, None)
            .unwrap();
        assert_eq!(
            host.checksum("/etc/slurm/slurm.conf").unwrap(),
            Some(xxhash_rust::xxh3::xxh3_64(&bytes))
        );
    }
}
