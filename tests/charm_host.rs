//! `Host`: atomic writes that skip identical bytes, command failures explained, the planted
//! host name. Commands go to the recording runner of `tests/common`.

mod common;

use common::RecordingRunner;
use slurm_charms::charms::{Cmd, CmdOutput, Host, Owner, SystemRunner};
use std::os::unix::fs::PermissionsExt;

/// An owner every Debian system has, other than the test's own user.
const NOBODY: Owner = Owner {
    user: "nobody",
    group: "nogroup",
};

#[test]
fn writes_atomically_and_skips_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    assert!(
        host.write("/etc/slurm/slurm.conf", b"a\n", 0o644, None)
            .unwrap()
    );
    let p = dir.path().join("etc/slurm/slurm.conf");
    assert_eq!(std::fs::read(&p).unwrap(), b"a\n");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o644
    );
    let before = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        !host
            .write("/etc/slurm/slurm.conf", b"a\n", 0o644, None)
            .unwrap()
    );
    assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
    // Mode drift is fixed without a rewrite.
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(
        !host
            .write("/etc/slurm/slurm.conf", b"a\n", 0o644, None)
            .unwrap()
    );
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert!(
        host.write("/etc/slurm/slurm.conf", b"b\n", 0o400, None)
            .unwrap()
    );
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o400
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("etc/slurm"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

/// `Host::holds` (what a write compares before rewriting) reads a file of the same size in
/// pieces and tells any differing byte, a size apart without reading, absence as `false`.
#[test]
fn holds_compares_in_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    assert!(!host.holds("/var/lib/x/cache", &big).unwrap());
    assert!(host.write("/var/lib/x/cache", &big, 0o600, None).unwrap());
    assert!(host.holds("/var/lib/x/cache", &big).unwrap());
    for at in [0, 65_535, 65_536, 131_072, 199_999] {
        let mut other = big.clone();
        other[at] ^= 1;
        assert!(!host.holds("/var/lib/x/cache", &other).unwrap(), "{at}");
    }
    assert!(!host.holds("/var/lib/x/cache", &big[..199_999]).unwrap());
    assert!(host.write("/var/lib/x/empty", b"", 0o600, None).unwrap());
    assert!(host.holds("/var/lib/x/empty", b"").unwrap());
    assert!(!host.holds("/var/lib/x/empty", b"a").unwrap());
    // anything but a file fails as reading it does
    std::fs::create_dir_all(dir.path().join("var/lib/x/dir")).unwrap();
    assert!(host.holds("/var/lib/x/dir", b"").is_err());
}

#[test]
fn commands_are_recorded_and_failures_explained() {
    let runner = RecordingRunner::default();
    runner.answer(
        "scontrol reconfigure",
        CmdOutput {
            code: Some(1),
            stderr: "slurm_reconfigure error: Unable to contact slurm controller".into(),
            ..Default::default()
        },
    );
    let host = Host::new("/nonexistent", &runner);
    host.run_ok(&Cmd::new("systemctl", ["restart", "slurmctld"]))
        .unwrap();
    let e = host
        .run_ok(&Cmd::new("scontrol", ["reconfigure"]))
        .unwrap_err();
    assert!(e.to_string().contains("Unable to contact"), "{e}");
    assert_eq!(
        runner.lines(),
        ["systemctl restart slurmctld", "scontrol reconfigure"]
    );
    assert_eq!(
        Cmd::new("scontrol", ["update", "reason=New node."]).to_string(),
        "scontrol update \"reason=New node.\""
    );
}

#[test]
fn missing_program_is_a_clear_error() {
    let host = Host::new("/", &SystemRunner);
    let e = host
        .run(&Cmd::new("no-such-program-xyz", ["x"]))
        .unwrap_err();
    assert!(e.to_string().contains("is it installed"), "{e}");
}

#[test]
fn hostname_can_be_planted() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    assert!(!host.hostname().unwrap().is_empty());
    std::fs::create_dir_all(dir.path().join("proc/sys/kernel")).unwrap();
    std::fs::write(dir.path().join("proc/sys/kernel/hostname"), "ctl-0.lan\n").unwrap();
    assert_eq!(host.hostname().unwrap(), "ctl-0");
}

#[test]
fn owners_are_looked_up_by_name_through_nss() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let nobody = NOBODY;
    assert!(
        host.write("/etc/x.conf", b"x\n", 0o640, Some(nobody))
            .unwrap()
    );
    let meta = std::fs::metadata(dir.path().join("etc/x.conf")).unwrap();
    // getent is NSS's own command-line view of the same databases.
    let id = |db: &str, name: &str| -> u32 {
        let out = std::process::Command::new("getent")
            .args([db, name])
            .output()
            .unwrap();
        let line = String::from_utf8(out.stdout).unwrap();
        line.split(':').nth(2).unwrap().trim().parse().unwrap()
    };
    // Only root may give files away; elsewhere the write still succeeds under a test root.
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        assert_eq!(meta.uid(), id("passwd", "nobody"));
        assert_eq!(meta.gid(), id("group", "nogroup"));
    }
    assert_eq!(meta.mode() & 0o777, 0o640);
    // An unknown user under a test root is not an error (the package may not be installed).
    let ghost = Owner {
        user: "no-such-user-xyz",
        group: "no-such-group-xyz",
    };
    assert!(
        host.write("/etc/y.conf", b"y\n", 0o600, Some(ghost))
            .unwrap()
    );
}

/// A file whose bytes are right gets back the owner and mode it lost, and one whose owner and
/// mode are right too is not touched at all: no `chown` (which rewrites the inode, its ctime
/// with it, even when nothing changes), alone or in a set.
#[test]
fn a_file_with_the_right_bytes_is_given_back_its_owner_and_otherwise_left_alone() {
    use slurm_charms::charms::host::SetFile;
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let nobody = NOBODY;
    let set = [
        SetFile {
            path: "/etc/a.conf",
            bytes: b"a\n",
            mode: 0o640,
            owner: Some(nobody),
        },
        SetFile {
            path: "/etc/b.conf",
            bytes: b"b\n",
            mode: 0o600,
            owner: Some(nobody),
        },
    ];
    assert!(host.write_set(&set).unwrap());
    let a = dir.path().join("etc/a.conf");
    let b = dir.path().join("etc/b.conf");
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let owner_of = |p: &std::path::Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.uid(), m.gid(), m.mode() & 0o7777)
    };
    let right_a = owner_of(&a);
    let right_b = owner_of(&b);
    if root {
        // the owner and mode lost: given back without a rewrite, alone and in a set
        std::os::unix::fs::chown(&a, Some(0), Some(0)).unwrap();
        std::os::unix::fs::chown(&b, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(&b, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            !host
                .write("/etc/a.conf", b"a\n", 0o640, Some(nobody))
                .unwrap()
        );
        assert!(!host.write_set(&set).unwrap());
        assert_eq!((owner_of(&a), owner_of(&b)), (right_a, right_b));
        assert_ne!(right_a.0, 0);
    }
    // all right: nothing is touched, the ctime stays
    let ctime = |p: &std::path::Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.ctime(), m.ctime_nsec())
    };
    let before = (ctime(&a), ctime(&b));
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        !host
            .write("/etc/a.conf", b"a\n", 0o640, Some(nobody))
            .unwrap()
    );
    assert!(!host.write_set(&set).unwrap());
    assert_eq!((ctime(&a), ctime(&b)), before);
}

#[test]
fn a_set_is_written_whole_or_not_at_all() {
    use slurm_charms::charms::host::SetFile;
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let etc = dir.path().join("etc/slurm");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(etc.join("a.conf"), "old a\n").unwrap();
    std::fs::write(etc.join("b.conf"), "same\n").unwrap();
    std::fs::set_permissions(etc.join("b.conf"), std::fs::Permissions::from_mode(0o600)).unwrap();
    // The last target is a directory: its rename fails, and the first file is put back.
    std::fs::create_dir_all(etc.join("c.conf/x")).unwrap();
    let file = |path, bytes| SetFile {
        path,
        bytes,
        mode: 0o644,
        owner: None,
    };
    let set = [
        file("/etc/slurm/a.conf", b"new a\n".as_slice()),
        file("/etc/slurm/b.conf", b"same\n".as_slice()),
        file("/etc/slurm/c.conf", b"new c\n".as_slice()),
    ];
    std::fs::set_permissions(etc.join("a.conf"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = host.write_set(&set).unwrap_err().to_string();
    assert!(err.contains("c.conf"), "{err}");
    assert_eq!(
        std::fs::read_to_string(etc.join("a.conf")).unwrap(),
        "old a\n"
    );
    let mode = std::fs::metadata(etc.join("a.conf"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640, "the old file is put back whole, mode included");
    let names: Vec<String> = std::fs::read_dir(&etc)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    std::fs::remove_dir_all(etc.join("c.conf")).unwrap();
    assert!(host.write_set(&set).unwrap());
    assert_eq!(
        std::fs::read_to_string(etc.join("a.conf")).unwrap(),
        "new a\n"
    );
    assert_eq!(
        std::fs::read_to_string(etc.join("c.conf")).unwrap(),
        "new c\n"
    );
    let mode = std::fs::metadata(etc.join("b.conf"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644, "an unchanged file's mode is fixed too");
    assert!(!host.write_set(&set).unwrap(), "nothing to change");
}

/// A streamed write puts the file in place (mode, content) only when its filler says so; a
/// filler that declines or fails leaves the old file and no temp file behind.
#[test]
fn a_streamed_write_is_kept_only_when_asked() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let runner = RecordingRunner::default();
    let host = Host::new(dir.path(), &runner);
    let path = "/var/lib/x/cache";
    let written = host
        .write_streamed(path, 0o600, None, true, |f| {
            f.write_all(b"one").map(|()| true)
        })
        .unwrap();
    assert!(written);
    let p = dir.path().join("var/lib/x/cache");
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let declined = host
        .write_streamed(path, 0o600, None, true, |f| {
            f.write_all(b"two").map(|()| false)
        })
        .unwrap();
    assert!(!declined);
    let failed = host.write_streamed(path, 0o600, None, true, |f| {
        f.write_all(b"three")?;
        Err(std::io::Error::other("disk full"))
    });
    assert!(failed.is_err());
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
    let left: Vec<_> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["cache"], "temp files left behind");
}
