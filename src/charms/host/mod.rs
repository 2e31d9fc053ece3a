//! The charms' view of the machine: files under `SLURM_CHARMS_ROOT` (docs/CONTRACTS.md) and
//! external commands. Everything a charm does to the host goes through [`Host`], so tests can
//! point it at a scratch directory and their own command runner.
//!
//! Writes are atomic (a `tempfile` in the same directory, fsync, persist by rename, fsync of
//! the directory) and skipped when the bytes and mode are already right; the few written in
//! place instead say why (`overwrite.rs`). Owners are looked up by name through NSS (`uzers`:
//! getpwnam/getgrnam), so LDAP or sssd users work too; `root:root` is 0:0 without a lookup.

mod error;
mod file_set;
mod overwrite;
mod runner;
mod tcp;

pub use error::{HostError, OwnerError};
pub use file_set::SetFile;
pub use runner::{Cmd, CmdOutput, Runner, SystemRunner, default_timeout};
pub use tcp::port_answers;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The kernel's boot id: a different value means the machine booted again.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// This boot of the kernel ([`BOOT_ID_PATH`], read once per process), or
/// `None` where it cannot be read. Files written without `fsync` live in the page cache until
/// the kernel writes them back, and only a kernel crash or a power loss, each a new boot, can
/// lose them: a record that names the boot it was written in is therefore trustworthy exactly
/// while the boot id is unchanged ([`crate::charms::slurmctld`]'s relation cache). Read from the
/// machine's own `/proc`, not under `SLURM_CHARMS_ROOT`: the page cache is the running
/// kernel's whatever directory the charm's files are under.
pub fn boot_id() -> Option<&'static str> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        let raw = std::fs::read_to_string(BOOT_ID_PATH).ok()?;
        let id = raw.trim();
        // a UUID: 36 characters of hex digits and dashes
        (id.len() == 36 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
            .then(|| id.to_owned())
    })
    .as_deref()
}

/// Environment variable naming the prefix of every host path (default `/`).
pub const ROOT_ENV: &str = "SLURM_CHARMS_ROOT";

/// File owner by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    /// User name, e.g. `slurm`.
    pub user: &'static str,
    /// Group name.
    pub group: &'static str,
}

impl Owner {
    /// `root:root`: the charms' own files (defaults, drop-ins, the relation cache).
    pub const ROOT: Owner = Owner {
        user: "root",
        group: "root",
    };
    /// `munge:munge`: the munge key.
    pub const MUNGE: Owner = Owner {
        user: "munge",
        group: "munge",
    };
    /// `slurm:slurm`: the Slurm configuration files.
    pub const SLURM: Owner = Owner {
        user: "slurm",
        group: "slurm",
    };

    /// The numeric ids, looked up through NSS (a hook writes up to a dozen files for the same
    /// three owners, and each lookup re-reads `nsswitch.conf`, `/etc/passwd` and `/etc/group`):
    /// found ids are kept for the rest of the process; a user or group not found (`None`) is
    /// asked again next time, since installing a package can create it.
    fn ids(self) -> (Option<u32>, Option<u32>) {
        // root is uid 0 and its group gid 0 on every Linux: no lookup
        if self == Owner::ROOT {
            return (Some(0), Some(0));
        }
        type Ids = std::collections::HashMap<(&'static str, &'static str), (u32, u32)>;
        static FOUND: std::sync::Mutex<Option<Ids>> = std::sync::Mutex::new(None);
        let mut found = FOUND.lock().unwrap_or_else(|e| e.into_inner());
        let found = found.get_or_insert_with(Ids::new);
        if let Some((uid, gid)) = found.get(&(self.user, self.group)) {
            return (Some(*uid), Some(*gid));
        }
        let uid = uzers::get_user_by_name(self.user).map(|u| u.uid());
        let gid = uzers::get_group_by_name(self.group).map(|g| g.gid());
        if let (Some(uid), Some(gid)) = (uid, gid) {
            found.insert((self.user, self.group), (uid, gid));
        }
        (uid, gid)
    }
}

/// The machine: a root directory for paths plus a command runner.
pub struct Host<'r> {
    root: PathBuf,
    runner: &'r dyn Runner,
}

impl<'r> Host<'r> {
    /// A host rooted at `root` running commands with `runner`.
    pub fn new(root: impl Into<PathBuf>, runner: &'r dyn Runner) -> Self {
        Self {
            root: root.into(),
            runner,
        }
    }

    /// The root from `SLURM_CHARMS_ROOT` (default `/`).
    pub fn root_from_env() -> PathBuf {
        std::env::var_os(ROOT_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when running against the real `/` (production).
    pub fn is_real_root(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The full path of a host path such as `/etc/slurm/slurm.conf`.
    pub fn path(&self, host_path: &str) -> PathBuf {
        self.root.join(host_path.trim_start_matches('/'))
    }

    /// True if the host path exists.
    pub fn exists(&self, host_path: &str) -> bool {
        self.path(host_path).exists()
    }

    /// The file's bytes, or `None` if it does not exist.
    pub fn read(&self, host_path: &str) -> Result<Option<Vec<u8>>, HostError> {
        let path = self.path(host_path);
        match std::fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(HostError::Read { path, source }),
        }
    }

    /// Whether the file holds exactly `data`, compared in pieces after its size (a changed
    /// file of another size is not read at all; the relation cache is megabytes at 10,000
    /// distinct nodes and was read whole before every write); `false` if it does not exist.
    /// Anything but a regular file is read as before, so its error is the read's.
    pub fn holds(&self, host_path: &str, data: &[u8]) -> Result<bool, HostError> {
        Ok(self.holding(host_path, data)?.is_some())
    }

    /// [`Host::holds`], with the file's metadata when it holds `data` (what its mode and owner
    /// are checked against, [`Host::settle`]).
    fn holding(
        &self,
        host_path: &str,
        data: &[u8],
    ) -> Result<Option<std::fs::Metadata>, HostError> {
        let Some((path, file)) = self.open_existing(host_path)? else {
            return Ok(None);
        };
        let meta = file.metadata().map_err(|source| HostError::Read {
            path: path.clone(),
            source,
        })?;
        if !meta.is_file() {
            return Ok((self.read(host_path)?.as_deref() == Some(data)).then_some(meta));
        }
        if meta.len() != data.len() as u64 {
            return Ok(None);
        }
        let mut rest = data;
        let whole = read_pieces(
            &path,
            file,
            (64 * 1024).min(data.len().max(1)),
            |piece| match rest.split_at_checked(piece.len()) {
                Some((head, tail)) if head == piece => {
                    rest = tail;
                    true
                }
                _ => false,
            },
        )?;
        Ok((whole && rest.is_empty()).then_some(meta))
    }

    /// The XXH3-64 of the file's bytes, read a piece at a time (never whole in memory: the
    /// controller's slurm.conf is megabytes at 10,000 distinct nodes), or `None` if it does not
    /// exist. What a hook compares with the bytes it would write, to know whether they differ.
    pub fn checksum(&self, host_path: &str) -> Result<Option<u64>, HostError> {
        let Some((path, file)) = self.open_existing(host_path)? else {
            return Ok(None);
        };
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        read_pieces(&path, file, 64 * 1024, |piece| {
            hash.update(piece);
            true
        })?;
        Ok(Some(hash.digest()))
    }

    /// The file opened for reading with its host path; `None` if it does not exist.
    fn open_existing(
        &self,
        host_path: &str,
    ) -> Result<Option<(PathBuf, std::fs::File)>, HostError> {
        let path = self.path(host_path);
        match std::fs::File::open(&path) {
            Ok(f) => Ok(Some((path, f))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(HostError::Read { path, source }),
        }
    }

    /// Removes a file; absent is fine.
    pub fn remove(&self, host_path: &str) -> Result<(), HostError> {
        let path = self.path(host_path);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(HostError::Write { path, source }),
        }
    }

    /// Makes `host_path` a symbolic link to `target` (a path on the machine, not under the
    /// root), replacing what is there atomically (a link made beside it, then renamed over it);
    /// the parent directories are created.
    pub fn symlink(&self, host_path: &str, target: &Path) -> Result<(), HostError> {
        let path = self.path(host_path);
        let err = |source| HostError::Write {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut tmp = path.clone().into_os_string();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(err(e)),
        }
        std::os::unix::fs::symlink(target, &tmp).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)
    }

    /// Writes `data` atomically with `mode` and `owner` unless the file already holds exactly
    /// these bytes (then only a wrong mode or owner is fixed). Returns true if the bytes changed.
    pub fn write(
        &self,
        host_path: &str,
        data: &[u8],
        mode: u32,
        owner: Option<Owner>,
    ) -> Result<bool, HostError> {
        self.write_durable(host_path, data, mode, owner, true)
    }

    /// [`Host::write`] without `fsync`: the rename is atomic, but after a crash the file may hold
    /// its previous content. For records whose loss or staleness is harmless or detected (a
    /// marker rewritten later in the same hook, copies verified by hash before they are used).
    pub fn write_unsynced(
        &self,
        host_path: &str,
        data: &[u8],
        mode: u32,
        owner: Option<Owner>,
    ) -> Result<bool, HostError> {
        self.write_durable(host_path, data, mode, owner, false)
    }

    fn write_durable(
        &self,
        host_path: &str,
        data: &[u8],
        mode: u32,
        owner: Option<Owner>,
        synced: bool,
    ) -> Result<bool, HostError> {
        let path = self.path(host_path);
        if let Some(meta) = self.holding(host_path, data)? {
            self.settle(&path, &meta, mode, owner)?;
            return Ok(false);
        }
        let mut tmp = self.temp_beside(&path, mode)?;
        let tmp_path = tmp.path().to_path_buf();
        tmp.write_all(data).map_err(|source| HostError::Write {
            path: tmp_path,
            source,
        })?;
        self.put_in_place(tmp, &path, owner, synced)?;
        Ok(true)
    }

    /// Writes a file whose bytes `fill` produces straight into a temp file beside it (never
    /// whole in memory: the controller's relation cache is megabytes at 10,000 distinct nodes),
    /// then, when `fill` says to keep them, puts it in place as [`Host::write`] does (`fsync`
    /// when `synced`, owner, atomic rename). `fill` returning `false` leaves the file as it was
    /// (its content turned out the same). Returns whether the file was replaced.
    pub fn write_streamed(
        &self,
        host_path: &str,
        mode: u32,
        owner: Option<Owner>,
        synced: bool,
        fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<bool>,
    ) -> Result<bool, HostError> {
        let path = self.path(host_path);
        let mut tmp = self.temp_beside(&path, mode)?;
        let tmp_path = tmp.path().to_path_buf();
        let keep = fill(tmp.as_file_mut()).map_err(|source| HostError::Write {
            path: tmp_path,
            source,
        })?;
        if keep {
            self.put_in_place(tmp, &path, owner, synced)?;
        }
        Ok(keep)
    }

    /// A temp file beside `path` (same filesystem, so the rename is atomic), mode `mode`;
    /// removed again if it is dropped before [`Host::put_in_place`].
    fn temp_beside(&self, path: &Path, mode: u32) -> Result<tempfile::NamedTempFile, HostError> {
        let werr = |path: &Path| {
            let path = path.to_path_buf();
            move |source| HostError::Write { path, source }
        };
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
        let mut prefix = OsString::from(".");
        prefix.push(path.file_name().unwrap_or_default());
        prefix.push(".");
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(werr(&dir))?;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(werr(tmp.path()))?;
        Ok(tmp)
    }

    /// Puts a written temp file in `path`'s place: `fsync` (when `synced`), owner, rename,
    /// then `fsync` of the directory (when `synced`).
    fn put_in_place(
        &self,
        tmp: tempfile::NamedTempFile,
        path: &Path,
        owner: Option<Owner>,
        synced: bool,
    ) -> Result<(), HostError> {
        let tmp_path = tmp.path().to_path_buf();
        if synced {
            tmp.as_file()
                .sync_all()
                .map_err(|source| HostError::Write {
                    path: tmp_path.clone(),
                    source,
                })?;
        }
        self.chown(&tmp_path, owner)?;
        tmp.persist(path).map_err(|e| HostError::Write {
            path: path.to_path_buf(),
            source: e.error,
        })?;
        if synced {
            let dir = path.parent().unwrap_or(Path::new("/"));
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// Gives `path` (a full path) to `owner` (see [`Host::write`]).
    fn chown_path(&self, path: &Path, owner: Option<Owner>) -> Result<(), HostError> {
        self.chown(path, owner)
    }

    /// Removes whatever is at `host_path` unless it is a regular file (or absent): a
    /// directory, socket or fifo where the charm keeps a file of its own (e.g. its cache) is
    /// cleared so the file can be written again. Returns true if something was removed.
    pub fn clear_non_file(&self, host_path: &str) -> Result<bool, HostError> {
        let path = self.path(host_path);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(HostError::Read { path, source }),
        };
        if meta.is_file() {
            return Ok(false);
        }
        let removed = if meta.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|source| HostError::Write { path, source })?;
        Ok(true)
    }

    /// Gives a file whose bytes are right (`meta`: its metadata) `mode` and `owner`, changing
    /// only what differs (a `chown` rewrites the inode even when nothing changes).
    fn settle(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        mode: u32,
        owner: Option<Owner>,
    ) -> Result<(), HostError> {
        use std::os::unix::fs::MetadataExt;
        if meta.mode() & 0o7777 != mode {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(
                |source| HostError::Write {
                    path: path.to_path_buf(),
                    source,
                },
            )?;
        }
        match owner.map(Owner::ids) {
            Some((Some(uid), Some(gid))) if (meta.uid(), meta.gid()) == (uid, gid) => Ok(()),
            _ => self.chown(path, owner),
        }
    }

    fn chown(&self, path: &Path, owner: Option<Owner>) -> Result<(), HostError> {
        let Some(owner) = owner else { return Ok(()) };
        let err = |source: OwnerError| HostError::Owner {
            path: path.to_path_buf(),
            user: owner.user.into(),
            group: owner.group.into(),
            source,
        };
        let result = match owner.ids() {
            (Some(uid), Some(gid)) => std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .map_err(|e| err(OwnerError::Chown(e))),
            _ => Err(err(OwnerError::Unknown)),
        };
        match result {
            // Under a test root the users may not exist, or we may not be root: not an error.
            Err(e) if !self.is_real_root() => {
                tracing::debug!("{e} (ignored under {ROOT_ENV})");
                Ok(())
            }
            other => other,
        }
    }

    /// Runs a command and returns its output whatever the exit code.
    pub fn run(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        tracing::debug!("running {cmd}");
        self.runner.run(cmd)
    }

    /// Runs independent commands side by side ([`Runner::run_all`]); outcomes in the order
    /// given (a runner that answers for fewer commands leaves the rest a [`HostError::Spawn`]).
    pub fn run_all<const N: usize>(&self, cmds: &[Cmd; N]) -> [Result<CmdOutput, HostError>; N] {
        for cmd in cmds {
            tracing::debug!("running {cmd}");
        }
        let mut outcomes = self.runner.run_all(cmds).into_iter();
        std::array::from_fn(|i| {
            outcomes.next().unwrap_or_else(|| {
                Err(HostError::Spawn {
                    command: cmds[i].to_string(),
                    source: std::io::Error::other("the command runner gave no outcome for it"),
                })
            })
        })
    }

    /// Runs a command and fails unless it exits 0.
    pub fn run_ok(&self, cmd: &Cmd) -> Result<CmdOutput, HostError> {
        self.run(cmd)?.success_of(cmd)
    }

    /// `n` random bytes from the kernel (`/dev/urandom` of the real machine).
    pub fn random_bytes(&self, n: usize) -> Result<Vec<u8>, HostError> {
        use std::io::Read;
        let path = PathBuf::from("/dev/urandom");
        let mut buf = vec![0u8; n];
        std::fs::File::open(&path)
            .and_then(|mut f| f.read_exact(&mut buf))
            .map_err(|source| HostError::Read { path, source })?;
        Ok(buf)
    }

    /// This machine's short host name: `<root>/proc/sys/kernel/hostname` (tests may plant it),
    /// falling back to the real kernel's.
    pub fn hostname(&self) -> Result<String, HostError> {
        let planted = self.read("/proc/sys/kernel/hostname")?;
        let raw = match planted {
            Some(b) => b,
            None => {
                let path = PathBuf::from("/proc/sys/kernel/hostname");
                std::fs::read(&path).map_err(|source| HostError::Read { path, source })?
            }
        };
        let text = String::from_utf8_lossy(&raw);
        Ok(text
            .trim()
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string())
    }
}

/// Reads `file` (at `path`, for errors) in pieces of up to `size` bytes, handing each to
/// `each` until it returns false or the file ends. Returns whether every piece was taken.
fn read_pieces(
    path: &Path,
    mut file: std::fs::File,
    size: usize,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<bool, HostError> {
    use std::io::Read;
    let mut buf = vec![0u8; size];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                if !each(&buf[..n]) {
                    return Ok(false);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(HostError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
}
