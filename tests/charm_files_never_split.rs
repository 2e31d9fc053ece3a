//! Files that never split and a controller that never restarts twice for one change (issue 11
//! items 2 and 4): slurm.conf, gres.conf and cgroup.conf change together or not at all (a full
//! filesystem under /etc/slurm is a real tmpfs, so this test needs root, as CI has); a state
//! directory that cannot be written fails the hook before slurmctld is touched, so retries
//! never restart it again; a cache path that is a directory is rebuilt; files slurmctld refuses
//! (`scontrol reconfigure` fails) are replaced by the last accepted ones and not offered again.

mod common;
#[path = "charm_support.rs"]
mod support;

use common::{RecordingRunner, changed};
use juju_runtime::{HookContext, RelationId};
use juju_runtime_testing::{MemoryBackend, MemoryRelation, bag};
use slurm_charms::charms::slurmctld::refusal::ACCEPTED_FILES;
use slurm_charms::charms::slurmctld::store::{STORE_PATH, Store};
use slurm_charms::charms::{CharmKind, Host, run_with};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{Cluster, restarts, three_nodes};

/// A tmpfs mounted for the life of the value (lazily unmounted on drop).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "cannot mount a tmpfs at {} (this test needs root)",
            dir.display()
        );
        Tmpfs(dir.to_path_buf())
    }

    /// Fills the filesystem until a write fails, leaving `leave` bytes' worth of pages free.
    fn fill(&self, leave: usize) {
        let mut filler = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![0u8; 4096];
        use std::io::Write;
        while filler
            .write_all(&chunk)
            .and_then(|()| filler.sync_all())
            .is_ok()
        {}
        drop(filler);
        let len = std::fs::metadata(self.0.join("filler")).unwrap().len();
        let keep = len.saturating_sub(leave as u64);
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.0.join("filler"))
            .unwrap()
            .set_len(keep)
            .unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn node_json(i: usize) -> String {
    // Distinct memory sizes: one NodeName line per node, so slurm.conf is large.
    format!(
        r#"{{"node_parameters":{{"NodeName":"n{i}","CPUs":"4","RealMemory":"{}","MemSpecLimit":"1024"}},"new_node":false}}"#,
        8000 + i
    )
}

fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_full_filesystem_leaves_the_old_set_whole() {
    let root = tempfile::tempdir().unwrap();
    let etc = root.path().join("etc/slurm");
    let _fs = Tmpfs::mount(&etc, "64k");
    std::fs::write(etc.join("slurm.conf"), "old slurm.conf\n").unwrap();
    std::fs::write(etc.join("gres.conf"), "old gres.conf\n").unwrap();
    std::fs::write(etc.join("cgroup.conf"), "old cgroup.conf\n").unwrap();
    std::fs::create_dir_all(root.path().join("proc/sys/kernel")).unwrap();
    std::fs::write(root.path().join("proc/sys/kernel/hostname"), "ctl-0\n").unwrap();
    let mut relation = MemoryRelation::new("slurmd", 4, "compute")
        .remote_app_data(bag([("partition", r#"{"compute":{"State":"UP"}}"#)]));
    for i in 0..2000 {
        relation = relation.remote_unit(
            &format!("compute/{i}"),
            bag([("node", node_json(i).as_str())]),
        );
    }
    let backend = MemoryBackend::new("slurmctld/0")
        .leader(true)
        .relation(relation);
    let runner = RecordingRunner::default();
    let host = Host::new(root.path(), &runner);
    let ctx = HookContext {
        unit_name: "slurmctld/0".into(),
        app_name: "slurmctld".into(),
        model_name: "files".into(),
        charm_dir: PathBuf::from("/nonexistent"),
        event: changed(&RelationId::new("slurmd", 4), "compute", Some("compute/0")),
    };
    for attempt in 0..3 {
        let result = run_with(CharmKind::Slurmctld, &ctx, &backend, &host);
        let e = result
            .map(|()| {
                let conf = std::fs::read_to_string(etc.join("slurm.conf")).unwrap_or_default();
                (
                    backend.unit_status(),
                    conf.len(),
                    conf.lines().nth(25).map(str::to_string),
                )
            })
            .unwrap_err();
        let chain = format!("{e}: {:?}", std::error::Error::source(&e));
        assert!(
            chain.contains("slurm.conf") || chain.contains("etc/slurm"),
            "{chain}"
        );
        // Nothing changed, nothing left behind, nothing restarted; on every retry.
        assert_eq!(
            std::fs::read_to_string(etc.join("slurm.conf")).unwrap(),
            "old slurm.conf\n"
        );
        assert_eq!(
            std::fs::read_to_string(etc.join("gres.conf")).unwrap(),
            "old gres.conf\n",
            "attempt {attempt}"
        );
        assert_eq!(
            std::fs::read_to_string(etc.join("cgroup.conf")).unwrap(),
            "old cgroup.conf\n"
        );
        assert_eq!(temps(&etc), Vec::<String>::new());
        let slurmctld: Vec<String> = restarts(&runner.lines())
            .into_iter()
            .filter(|l| l.contains("slurmctld") || l.contains("reconfigure"))
            .collect();
        assert!(slurmctld.is_empty(), "{:?}", runner.lines());
    }
}

/// Replaces the unit's slurmctld state directory by a full tmpfs holding the same files.
fn full_state_dir(c: &Cluster, unit: &str) -> Tmpfs {
    let dir = c.root(unit).join("var/lib/slurm-charms/slurmctld");
    let saved: Vec<(PathBuf, Vec<u8>)> = walk(&dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.strip_prefix(&dir).unwrap().to_path_buf(), bytes)
        })
        .collect();
    let fs = Tmpfs::mount(&dir, "1m");
    for (rel, bytes) in saved {
        std::fs::create_dir_all(dir.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(dir.join(rel), bytes).unwrap();
    }
    fs.fill(0);
    fs
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn an_unwritable_state_dir_never_restarts_slurmctld_again() {
    let mut c = three_nodes();
    c.clear_commands("slurmctld/0");
    let fs = full_state_dir(&c, "slurmctld/0");
    // A new node: 22.05 needs a restart.
    c.sim.add_unit("slurmd", 1).unwrap();
    assert!(
        c.sim.is_error("slurmctld/0"),
        "the hook fails: nowhere to record the change"
    );
    for _ in 0..2 {
        c.sim.resolve("slurmctld/0").unwrap();
        assert!(c.sim.is_error("slurmctld/0"));
    }
    let cmds = c.commands("slurmctld/0");
    assert!(
        restarts(&cmds).is_empty(),
        "no restart while nothing can be recorded: {cmds:?}"
    );
    assert!(!c.slurm_conf().contains("slurmd-3"), "the files wait too");
    drop(fs);
    c.sim.resolve("slurmctld/0").unwrap();
    assert!(
        !c.sim.is_error("slurmctld/0"),
        "recorded once the directory takes writes"
    );
    let cmds = c.commands("slurmctld/0");
    let restarted = cmds
        .iter()
        .filter(|l| *l == "systemctl restart slurmctld")
        .count();
    assert_eq!(restarted, 1, "{cmds:?}");
    assert!(
        c.slurm_conf().contains("slurmd-[0-3]"),
        "{}",
        c.slurm_conf()
    );
}

#[test]
fn a_cache_path_that_is_a_directory_is_rebuilt() {
    let mut c = three_nodes();
    let path = c
        .root("slurmctld/0")
        .join(STORE_PATH.trim_start_matches('/'));
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir_all(path.join("junk")).unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    let raw = std::fs::read(&path).expect("a file again");
    let cache = Store::from_bytes(&raw).unwrap();
    assert_eq!(
        cache
            .relations
            .values()
            .map(|r| r.units.len())
            .sum::<usize>(),
        3
    );
    assert_eq!(c.status("slurmctld/0").0, "active");
    // A corrupt one too.
    std::fs::write(&path, b"{not json").unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert!(Store::from_bytes(&std::fs::read(&path).unwrap()).is_ok());
}

fn set_params(c: &mut Cluster, text: &str) {
    let cfg = [("slurm-conf-parameters".to_string(), serde_json::json!(text))].into();
    c.sim.set_config("slurmctld", cfg).unwrap();
}

#[test]
fn a_refused_reconfigure_restores_the_accepted_files() {
    let mut c = three_nodes();
    let accepted = c.slurm_conf();
    let copy = |c: &Cluster| c.file("slurmctld/0", ACCEPTED_FILES[2].1);
    assert_eq!(copy(&c), accepted, "the enlisted set is the accepted one");
    let marker = c.root("slurmctld/0").join("fail-scontrol-reconfigure");
    std::fs::write(&marker, "error: Unable to process configuration file").unwrap();
    c.clear_commands("slurmctld/0");
    set_params(&mut c, "MaxJobCount=5000");
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), accepted, "the refused file was taken back");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.contains("refused")
            && msg.contains("MaxJobCount=5000")
            && msg.contains("Unable to process"),
        "{msg}"
    );
    let cmds = c.commands("slurmctld/0");
    assert_eq!(
        restarts(&cmds),
        ["scontrol reconfigure"],
        "never a restart onto it: {cmds:?}"
    );
    // Later hooks do not offer the same files again.
    c.clear_commands("slurmctld/0");
    c.sim.update_status(Some("slurmctld")).unwrap();
    assert!(restarts(&c.commands("slurmctld/0")).is_empty());
    assert_eq!(c.slurm_conf(), accepted);
    assert_eq!(c.status("slurmctld/0").0, "blocked");
    // A changed input is tried; accepted, it becomes the new accepted set.
    std::fs::remove_file(&marker).unwrap();
    set_params(&mut c, "MaxJobCount=6000");
    c.assert_no_errors();
    assert!(c.slurm_conf().contains("MaxJobCount=6000"));
    assert_eq!(copy(&c), c.slurm_conf());
    assert_eq!(c.status("slurmctld/0").0, "active");
}

/// `scontrol reconfigure` that got no answer (24.11+ hands over to a new slurmctld, and the
/// old one's reply can be lost) is not a refusal: asked once more; lost twice, the hook fails
/// (Juju retries it) with the new files in place, never the accepted ones put back.
#[test]
fn a_reconfigure_whose_answer_was_lost_is_asked_again_not_refused() {
    let mut c = three_nodes();
    let accepted = c.slurm_conf();
    let lost = "slurm_reconfigure error: Socket timed out on send/recv operation";
    let once = c.root("slurmctld/0").join("fail-once-scontrol-reconfigure");
    std::fs::write(&once, lost).unwrap();
    c.clear_commands("slurmctld/0");
    set_params(&mut c, "MaxJobCount=5000");
    c.assert_no_errors();
    assert!(!once.exists(), "the first reconfigure got no answer");
    assert!(c.slurm_conf().contains("MaxJobCount=5000"));
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        ["scontrol reconfigure", "scontrol reconfigure"]
    );
    assert_ne!(c.slurm_conf(), accepted);
    let accepted = c.slurm_conf();
    // no answer twice: the hook fails, the new files stay, nothing is called refused
    let every = c.root("slurmctld/0").join("fail-scontrol-reconfigure");
    std::fs::write(&every, lost).unwrap();
    c.clear_commands("slurmctld/0");
    set_params(&mut c, "MaxJobCount=6000");
    let failed = c.failed_hooks();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].contains("Socket timed out"), "{failed:#?}");
    assert_eq!(c.status("slurmctld/0").0, "error");
    assert!(c.slurm_conf().contains("MaxJobCount=6000"), "not put back");
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        ["scontrol reconfigure", "scontrol reconfigure"],
        "asked twice, then no reconfigure onto the accepted files"
    );
    // slurmctld answers again: `juju resolve` retries the hook, which reloads the new files
    std::fs::remove_file(&every).unwrap();
    c.clear_commands("slurmctld/0");
    c.sim.resolve("slurmctld/0").unwrap();
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "active", "{msg}");
    assert!(c.slurm_conf().contains("MaxJobCount=6000"));
    assert_ne!(c.slurm_conf(), accepted);
    assert_eq!(
        restarts(&c.commands("slurmctld/0")),
        ["scontrol reconfigure"]
    );
}

#[test]
fn a_restart_that_fails_goes_back_to_the_accepted_files() {
    let mut c = three_nodes();
    let accepted = c.slurm_conf();
    // slurmctld does not come back on the new files (22.05: a new node needs a restart).
    let marker = c.root("slurmctld/0").join("fail-systemctl-restart");
    std::fs::write(&marker, "Job for slurmctld.service failed").unwrap();
    c.clear_commands("slurmctld/0");
    c.sim.add_unit("slurmd", 1).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), accepted, "back on the accepted files");
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(
        msg.contains("refused") && msg.contains("NodeName=slurmd-[2-3]") && msg.contains("Job for"),
        "{msg}"
    );
    // It tried the new files once, then the accepted ones; never a reconfigure onto them.
    let cmds = c.commands("slurmctld/0");
    let tries: Vec<&String> = cmds
        .iter()
        .filter(|l| l.contains("restart slurmctld") || l.contains("reconfigure"))
        .collect();
    assert_eq!(
        tries,
        ["systemctl restart slurmctld", "systemctl restart slurmctld"],
        "{cmds:?}"
    );
    std::fs::remove_file(&marker).unwrap();
    c.sim.update_status(Some("slurmctld")).unwrap();
    assert_eq!(
        c.slurm_conf(),
        accepted,
        "the same files are not offered again"
    );
}

/// The leader compares the live files with what it renders by hash (`Host::hash`, the file
/// never held): a hand edit, even one that keeps the length, is seen. With what slurmctld runs
/// unknown (state lost), a differing file means a restart onto the rendered one.
#[test]
fn a_hand_edit_of_slurm_conf_is_seen_by_its_hash() {
    let mut c = three_nodes();
    let rendered = c.slurm_conf();
    let root = c.root("slurmctld/0");
    let edited = rendered.replacen("ClusterName=", "ClusterNamf=", 1);
    assert_eq!(edited.len(), rendered.len());
    assert_ne!(edited, rendered);
    std::fs::write(root.join("etc/slurm/slurm.conf"), &edited).unwrap();
    std::fs::remove_file(root.join(STORE_PATH.trim_start_matches('/'))).unwrap();
    c.clear_commands("slurmctld/0");
    c.sim.update_status(Some("slurmctld")).unwrap();
    c.assert_no_errors();
    assert_eq!(c.slurm_conf(), rendered, "the hand edit stayed");
    let cmds = c.commands("slurmctld/0");
    assert!(
        restarts(&cmds)
            .iter()
            .any(|r| r.contains("restart slurmctld")),
        "slurmctld may run the edited file: restarted onto the rendered one: {cmds:?}"
    );
}

/// The last accepted copies are written without `fsync` and checked against the applied
/// record's hash before they are put back: a copy a crash left torn is never restored over
/// the live file (the refused files then stay, as when no accepted set is known).
#[test]
fn a_torn_accepted_copy_is_not_put_back() {
    let mut c = three_nodes();
    let copy = c
        .root("slurmctld/0")
        .join(ACCEPTED_FILES[2].1.trim_start_matches('/'));
    let accepted = std::fs::read_to_string(&copy).unwrap();
    std::fs::write(&copy, &accepted[..accepted.len() / 2]).unwrap();
    let marker = c.root("slurmctld/0").join("fail-scontrol-reconfigure");
    std::fs::write(&marker, "error: Unable to process configuration file").unwrap();
    set_params(&mut c, "MaxJobCount=5000");
    c.assert_no_errors();
    let live = c.slurm_conf();
    assert!(
        live.contains("MaxJobCount=5000"),
        "the torn copy was put back: {live}"
    );
    assert_ne!(live, accepted[..accepted.len() / 2]);
    let (st, msg) = c.status("slurmctld/0");
    assert_eq!(st, "blocked", "{msg}");
    assert!(msg.contains("refused"), "{msg}");
}
