//! `auth-type` (issue 14 item 4) as state in → event → state out: `slurm` renders
//! `AuthType=auth/slurm` + `CredType=cred/slurm` and installs the key secret's key as
//! `/etc/slurm/slurm.key` (0600) on the controller and on every node; Slurm 22.05 has no
//! auth/slurm, so the controller refuses it with a blocked status and writes nothing; a bad value
//! is refused naming the option. Real Slurm judges the result in `tests/e2e_charms.rs`
//! (`e2e_auth_slurm_*`); the 22.05 refusal is also shown on the output of this machine's real
//! `slurmctld -V` (Debian 12's package).

mod common;
// The real-Slurm oracle's loud skip (`Oracle::local`); it loads `common/daemon.rs` itself.
#[allow(clippy::duplicate_mod)]
#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use common::changed;
use common::state::{SLURMD_C_N0, State, prints, run};
use juju_runtime::{RelationId, SecretContent, SecretId, StatusKind};
use juju_runtime_testing::{MemoryRelation, MemorySecret, bag};
use serde_json::{Map, Value};
use slurm_charms::charms::slurmctld::refusal::ACCEPTED_FILES;
use slurm_charms::charms::{CharmKind, CmdOutput};
use slurm_charms::interface::{AuthKind, ClusterInfo, MungeKeyRef};
use slurm_charms::slurm::SlurmVersion;

const SLURM_CONF: &str = "/etc/slurm/slurm.conf";
const SLURM_KEY: &str = "/etc/slurm/slurm.key";
const MUNGE_KEY: &str = "/etc/munge/munge.key";

fn controller(version: &str, auth: &str) -> (State, RelationId) {
    let rel = RelationId::new("slurmd", 4);
    let node =
        r#"{"node_parameters":{"NodeName":"c0","CPUs":"4","RealMemory":"8000"},"new_node":false}"#;
    let relation = MemoryRelation::new("slurmd", 4, "compute")
        .remote_app_data(bag([("partition", r#"{"compute":{"State":"UP"}}"#)]))
        .remote_unit("compute/0", bag([("node", node)]));
    let mut config = Map::new();
    config.insert("auth-type".into(), Value::from(auth));
    let state = State {
        unit: "slurmctld/0".into(),
        leader: true,
        config,
        relations: vec![relation],
        files: [("/proc/sys/kernel/hostname".to_string(), b"ctl-0\n".to_vec())].into(),
        command_outputs: vec![(
            "slurmctld -V".into(),
            CmdOutput {
                code: Some(0),
                stdout: format!("slurm-wlm {version}\n"),
                ..Default::default()
            },
        )],
        ..State::default()
    };
    (state, rel)
}

#[test]
fn auth_slurm_renders_both_keys_and_installs_slurm_key() {
    let (state, rel) = controller("24.11.5", "slurm");
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    let conf = out.text(SLURM_CONF);
    assert!(conf.contains("AuthType=auth/slurm\n"), "{conf}");
    assert!(conf.contains("CredType=cred/slurm\n"), "{conf}");
    assert!(!conf.contains("munge"), "{conf}");
    assert_eq!(out.files[SLURM_KEY], out.files[MUNGE_KEY], "the same key");
    let info = ClusterInfo::from_relation_value(&out.relation(&rel).local_app_data["cluster_info"])
        .unwrap();
    assert_eq!(info.auth, AuthKind::Slurm);
    assert_eq!(out.status.as_ref().unwrap().kind, StatusKind::Active);
    // The last accepted set is the three files, each its own copy (matched by path: with
    // auth/slurm the written files start with slurm.key, which is never copied there).
    for (live, copy) in ACCEPTED_FILES {
        assert_eq!(out.files.get(copy), out.files.get(live), "{copy}");
    }
    let key = &out.files[SLURM_KEY];
    for (path, bytes) in &out.files {
        if path.starts_with("/var/lib/slurm-charms/slurmctld/accepted/") {
            assert!(bytes != key, "the key was copied to {path}");
        }
    }

    // A repeat changes nothing (the key file is compared like the others).
    let again = run(
        CharmKind::Slurmctld,
        juju_runtime::Event::UpdateStatus,
        &out,
    )
    .unwrap();
    // (every leader hook asks whether slurmctld runs, and nothing else here)
    assert!(
        again
            .commands_run
            .iter()
            .all(|c| c == "systemctl is-active slurmctld"),
        "{:?}",
        again.commands_run
    );
}

#[test]
fn auth_slurm_is_refused_on_22_05_and_bad_values_name_the_option() {
    let (state, rel) = controller("22.05.8", "slurm");
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    let st = out.status.unwrap();
    assert_eq!(st.kind, StatusKind::Blocked);
    assert!(
        st.message
            .contains("auth-type=slurm needs Slurm 23.11.0 or newer (installed: 22.05.8)"),
        "{}",
        st.message
    );
    assert!(!out.files.contains_key(SLURM_CONF), "nothing rendered");
    assert!(!out.files.contains_key(SLURM_KEY));

    let (state, rel) = controller("24.11.5", "kerberos");
    let out = run(
        CharmKind::Slurmctld,
        changed(&rel, "compute", Some("compute/0")),
        &state,
    )
    .unwrap();
    let st = out.status.unwrap();
    assert_eq!(st.kind, StatusKind::Blocked);
    assert!(st.message.contains("auth-type"), "{}", st.message);
}

/// The refusal above, on what the installed Slurm really prints: this machine's `slurmctld -V`
/// (Debian 12's 22.05 package) is run, and its output, exit code and all, is what the charm's
/// `slurmctld -V` returns. The charm reads the version from it and refuses `auth-type=slurm`
/// naming that version; `auth-type=munge` on the same output renders (so the refusal is the
/// version's, not an unreadable output's). A missing slurmctld is a loud skip, a failure with
/// `E2E_REQUIRED=1` ([`oracle::Oracle::local`]).
#[test]
fn auth_slurm_is_refused_on_the_installed_22_05_slurmctld() {
    let Some(local) = oracle::Oracle::local() else {
        return;
    };
    let bin = local.root.join("usr/sbin/slurmctld");
    let real = std::process::Command::new(&bin)
        .arg("-V")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    let printed = CmdOutput {
        code: real.status.code(),
        stdout: String::from_utf8_lossy(&real.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&real.stderr).into_owned(),
    };
    assert!(printed.success(), "{} -V: {printed:?}", bin.display());
    let version = SlurmVersion::parse_v_output(&printed.stdout, "slurmctld -V").unwrap();
    assert_eq!(
        (version.major, version.minor),
        (22, 5),
        "this test proves the refusal on Debian 12's Slurm 22.05; {} printed {:?}",
        bin.display(),
        printed.stdout
    );
    assert!(version < SlurmVersion::AUTH_SLURM);

    let with_real_v = |auth: &str| {
        let (mut state, rel) = controller("unused", auth);
        state.command_outputs = vec![("slurmctld -V".into(), printed.clone())];
        let out = run(
            CharmKind::Slurmctld,
            changed(&rel, "compute", Some("compute/0")),
            &state,
        )
        .unwrap();
        assert!(
            out.commands_run.iter().any(|c| c == "slurmctld -V"),
            "{:?}",
            out.commands_run
        );
        out
    };
    let out = with_real_v("slurm");
    let st = out.status.clone().unwrap();
    assert_eq!(st.kind, StatusKind::Blocked, "{}", st.message);
    assert!(
        st.message.contains(&format!(
            "auth-type=slurm needs Slurm 23.11.0 or newer (installed: {version})"
        )),
        "{}",
        st.message
    );
    assert!(!out.files.contains_key(SLURM_CONF), "nothing rendered");
    assert!(!out.files.contains_key(SLURM_KEY));

    let out = with_real_v("munge");
    let st = out.status.clone().unwrap();
    assert_eq!(st.kind, StatusKind::Active, "{}", st.message);
    assert!(out.text(SLURM_CONF).contains("AuthType=auth/munge\n"));
    assert!(!out.files.contains_key(SLURM_KEY));
}

fn node(auth: AuthKind, files: &[(&str, Vec<u8>)]) -> (State, RelationId) {
    let rel = RelationId::new("slurmctld", 1);
    let id = SecretId::parse("d0000000000000000003").unwrap();
    let info = ClusterInfo {
        munge_key: MungeKeyRef::Secret(id.clone()),
        slurmctld_host: "ctl.invalid".parse().unwrap(),
        nhc_params: String::new(),
        auth,
    };
    let relation = MemoryRelation::new("slurmctld", 1, "slurmctld")
        .remote_app_data(bag([("cluster_info", info.to_relation_value().as_str())]));
    let key = SecretContent::from([("munge-key".to_owned(), vec![6; 64])]);
    let state = State {
        unit: "compute/0".into(),
        relations: vec![relation],
        secrets: [(id, MemorySecret::consumed(key))].into(),
        files: files
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.clone()))
            .collect(),
        command_outputs: vec![prints("slurmd -C", SLURMD_C_N0)],
        ..State::default()
    };
    (state, rel)
}

#[test]
fn nodes_install_slurm_key_for_auth_slurm_and_drop_it_for_munge() {
    let (state, rel) = node(AuthKind::Slurm, &[]);
    let out = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    assert_eq!(out.files[SLURM_KEY], vec![6; 64]);
    assert_eq!(out.files[MUNGE_KEY], vec![6; 64]);

    let (mut state, rel) = node(
        AuthKind::Munge,
        &[(SLURM_KEY, vec![6; 64]), (MUNGE_KEY, vec![6; 64])],
    );
    // a configured node (a new one's slurmd is stopped instead: docs/charms.md)
    state
        .unit_state
        .insert("new-node".to_owned(), "false".to_owned());
    let out = run(CharmKind::Slurmd, changed(&rel, "slurmctld", None), &state).unwrap();
    assert!(
        !out.files.contains_key(SLURM_KEY),
        "a stale slurm.key would switch slurmd to auth/slurm"
    );
    assert!(
        out.commands_run
            .iter()
            .any(|c| c.contains("restart") && c.contains("slurmd")),
        "{:?}",
        out.commands_run
    );
}
