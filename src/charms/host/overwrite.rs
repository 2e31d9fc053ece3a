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

use super::Owner;
use super::file_set::SetFile;
use super::{Host, HostError};
use std::io::Seek;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};

impl Host<'_> {
    /// Writes each of `files` over the file already at its path: its bytes from offset 0, the
    /// length cut to theirs, the mode set; no `fsync`, no rename (see the module doc). A file
    /// that already holds its bytes only gets its mode fixed. Where there is no regular file
    /// yet (absent, or a symlink, which is never followed), it is written as
    /// [`Host::write_unsynced`] writes one. Returns true if any bytes changed.
    pub fn overwrite_unsynced(&self, files: &[SetFile<'_>]) -> Result<bool, HostError> {
        let mut changed = false;
        for f in files {
            let path = self.path(f.path);
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if !regular {
                changed |= self.write_unsynced(f.path, f.bytes, f.mode, f.owner)?;
                continue;
            }
            let werr = |source| HostError::Write {
                path: path.clone(),
                source,
            };
            let held = self.holds(f.path, f.bytes)?;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&path)
                .map_err(werr)?;
            if !held {
                file.write_all_at(f.bytes, 0).map_err(werr)?;
                file.set_len(f.bytes.len() as u64).map_err(werr)?;
                changed = true;
            }
            let mode = file.metadata().map_err(werr)?.permissions().mode() & 0o7777;
            if mode != f.mode {
                file.set_permissions(std::fs::Permissions::from_mode(f.mode))
                    .map_err(werr)?;
            }
            self.chown_path(&path, f.owner)?;
        }
        Ok(changed)
    }
}

impl Host<'_> {
    /// [`Host::write_streamed`] over the file already at `host_path`: `fill` writes from offset
    /// 0 of the open file, which is then cut to where `fill` left it; the mode and owner are
    /// set; no temp file, no rename, no `fsync`. For a file whose content says whether it is
    /// whole (the controller's relation cache: a header line whose hash, stand-in first and
    /// the body's last, covers everything after it, in a boot-named header), so a hook stopped
    /// half-way leaves a file that reads as damaged, never as another valid one. Where there is
    /// no regular file yet (absent, or a symlink, never followed) it is written as
    /// [`Host::write_streamed`] writes one, unsynced. Returns what `fill` says (whether the
    /// content changed).
    ///
    /// Why: on ext4 a file renamed over another has its data flushed at the rename
    /// (`auto_da_alloc`): 0.25 ms for 3 KB, 0.86 ms for 500 KB (the cache of 10,000 alike
    /// nodes), 3.1 ms for 2 MB on the development VM, against 0.02 / 0.06 / 0.15 ms written in
    /// place (`target/release/fs-probe DIR 9 BYTES`; docs/BENCHMARKS.md, fifteenth pass).
    pub fn overwrite_streamed(
        &self,
        host_path: &str,
        mode: u32,
        owner: Option<Owner>,
        fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<bool>,
    ) -> Result<bool, HostError> {
        let path = self.path(host_path);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return self.write_streamed(host_path, mode, owner, false, fill);
        }
        let werr = |source| HostError::Write {
            path: path.clone(),
            source,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(werr)?;
        let changed = fill(&mut file).map_err(werr)?;
        let end = file.stream_position().map_err(werr)?;
        file.set_len(end).map_err(werr)?;
        let mode_now = file.metadata().map_err(werr)?.permissions().mode() & 0o7777;
        if mode_now != mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(werr)?;
        }
        self.chown_path(&path, owner)?;
        Ok(changed)
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
        // none yet: written whole
        assert!(
            host.overwrite_unsynced(&[file(copy, b"a long first text\n")])
                .unwrap()
        );
        let path = host.path(copy);
        let ino = std::fs::metadata(&path).unwrap().ino();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // shorter: the same file, the old tail cut off, the mode put back
        assert!(host.overwrite_unsynced(&[file(copy, b"short\n")]).unwrap());
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short\n");
        assert_eq!(meta.ino(), ino, "written in place, not renamed over");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        // the same bytes: nothing written
        assert!(!host.overwrite_unsynced(&[file(copy, b"short\n")]).unwrap());
    }

    #[test]
    fn a_streamed_file_is_rewritten_in_place_and_cut_where_the_writer_stopped() {
        use std::io::Write;
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let cache = "/var/lib/x/cache.json";
        // none yet: written whole
        let put = |text: &'static [u8]| {
            host.overwrite_streamed(cache, 0o600, None, |f| f.write_all(text).map(|()| true))
        };
        assert!(put(b"a long first text\n").unwrap());
        let path = host.path(cache);
        let ino = std::fs::metadata(&path).unwrap().ino();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(put(b"short\n").unwrap());
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short\n");
        assert_eq!(meta.ino(), ino, "written in place, not renamed over");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        // a writer that fails half-way: the error is the hook's, the file is what it wrote
        // over the old text (a cache then fails its hash: see the cache test below)
        let e = host
            .overwrite_streamed(cache, 0o600, None, |f| {
                f.write_all(b"XY")?;
                Err(std::io::Error::other("stopped"))
            })
            .unwrap_err();
        assert!(e.to_string().contains("stopped"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"XYort\n");
    }

    /// A writer that fails once `left` bytes went through: a hook stopped half-way.
    struct StopAfter<'a> {
        file: &'a mut std::fs::File,
        left: usize,
    }

    impl std::io::Write for StopAfter<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::Error::other("stopped"));
            }
            let n = self.file.write(&buf[..buf.len().min(self.left)])?;
            self.left -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.file.flush()
        }
    }

    impl std::io::Seek for StopAfter<'_> {
        fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
            self.file.seek(pos)
        }
    }

    #[test]
    fn a_cache_written_in_place_reads_back_and_a_torn_one_reads_as_damaged() {
        use crate::charms::slurmctld::cache::{Cache, CacheError};
        let dir = tempfile::tempdir().unwrap();
        let runner = SystemRunner;
        let host = Host::new(dir.path(), &runner);
        let at = "/cache.json";
        let mut cache = Cache {
            status: Some(("active".into(), "a first status, long enough".into())),
            ..Cache::default()
        };
        let write = |c: &Cache| {
            host.overwrite_streamed(at, 0o600, None, |f| {
                c.write_to(f, Some("boot")).map(|_| true)
            })
        };
        write(&cache).unwrap();
        cache.status = Some(("active".into(), "second".into()));
        write(&cache).unwrap();
        let raw = std::fs::read(host.path(at)).unwrap();
        assert_eq!(Cache::from_bytes_in(&raw, Some("boot")).unwrap(), cache);
        // stopped after the stand-in header and 5 bytes of the body: the old tail stays behind
        // the new bytes, and the stand-in header's hash is not the body's
        let full = {
            let mut v = Vec::new();
            cache
                .write_to(&mut std::io::Cursor::new(&mut v), Some("boot"))
                .unwrap();
            v
        };
        let header_len = full.iter().position(|b| *b == b'\n').unwrap() + 1;
        let torn = host.overwrite_streamed(at, 0o600, None, |f| {
            let mut out = StopAfter {
                file: f,
                left: header_len + 5,
            };
            cache.write_to(&mut out, Some("boot")).map(|_| true)
        });
        assert!(torn.is_err());
        let raw = std::fs::read(host.path(at)).unwrap();
        assert!(matches!(
            Cache::from_bytes_in(&raw, Some("boot")),
            Err(CacheError::Hash)
        ));
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
}
