//! The hook-tool client against fake tools: small shell scripts written into a temp dir that
//! record their argv (one `[arg]` per argument) and stdin, print canned output, and exit with
//! Juju's codes and `ERROR …` texts. The client gets the dir explicitly (`with_tools_dir`).
//!
//! Tests hold one lock while writing and running scripts: a script written by one thread while
//! another forks can fail to exec with ETXTBSY, which is a test-harness artefact, not a client bug.

use juju_runtime::{
    BagOwner, HookToolError, HookTools, LogLevel, ModelBackend, NetworkBackend, Port, RelationId,
    Status, StatusKind, StatusScope,
};
use juju_runtime_testing::bag;
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

struct Fakes {
    dir: tempfile::TempDir,
    _guard: MutexGuard<'static, ()>,
}

impl Fakes {
    fn new() -> Self {
        let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        Fakes {
            dir: tempfile::tempdir().unwrap(),
            _guard: guard,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A tool that records its call, prints `stdout`, writes `stderr` and exits with `code`.
    fn tool(&self, name: &str, stdout: &str, stderr: &str, code: i32) -> &Self {
        let d = self.path().display();
        let script = format!(
            "#!/bin/sh\n\
             printf x >> '{d}/spawns'\n\
             {{ printf '%s' '{name}'; for a in \"$@\"; do printf ' [%s]' \"$a\"; done; printf '\\n'; }} >> '{d}/calls.log'\n\
             case \" $* \" in *' --file - '*|*' --file -') cat > '{d}/stdin-{name}';; esac\n\
             printf '%s' '{stdout}'\n\
             printf '%s' '{stderr}' >&2\n\
             exit {code}\n"
        );
        let path = self.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    fn ok(&self, name: &str, stdout: &str) -> &Self {
        self.tool(name, stdout, "", 0)
    }

    fn client(&self) -> HookTools {
        HookTools::with_tools_dir(self.path())
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// How many tool processes ran (one `x` each in `spawns`).
    fn spawned(&self) -> usize {
        std::fs::read(self.path().join("spawns")).map_or(0, |b| b.len())
    }

    fn stdin_of(&self, name: &str) -> String {
        std::fs::read_to_string(self.path().join(format!("stdin-{name}"))).unwrap()
    }
}

fn rel() -> RelationId {
    RelationId::new("slurmd", 3)
}

#[test]
fn relation_ids_argv_and_parse() {
    let f = Fakes::new();
    f.ok("relation-ids", "[\"slurmd:1\",\"slurmd:4\"]\n");
    let ids = f.client().relation_ids("slurmd").unwrap();
    assert_eq!(
        ids,
        vec![RelationId::new("slurmd", 1), RelationId::new("slurmd", 4)]
    );
    assert_eq!(f.calls(), vec!["relation-ids [slurmd] [--format=json]"]);
}

#[test]
fn relation_ids_rejects_malformed_ids() {
    let f = Fakes::new();
    f.ok("relation-ids", "[\"nocolon\"]\n");
    let err = f.client().relation_ids("slurmd").unwrap_err();
    assert!(matches!(err, HookToolError::BadOutput { .. }), "{err}");
}

#[test]
fn relation_list_and_remote_app() {
    let f = Fakes::new();
    f.ok("relation-list", "[\"slurmd/0\",\"slurmd/1\"]\n");
    let client = f.client();
    assert_eq!(
        client.relation_list(&rel()).unwrap(),
        vec!["slurmd/0", "slurmd/1"]
    );
    f.ok("relation-list", "\"slurmd\"\n");
    assert_eq!(client.relation_remote_app(&rel()).unwrap(), "slurmd");
    assert_eq!(
        f.calls(),
        vec![
            "relation-list [--format=json] [-r] [slurmd:3]",
            "relation-list [--format=json] [--app] [-r] [slurmd:3]"
        ]
    );
}

#[test]
fn relation_get_unit_and_app() {
    let f = Fakes::new();
    f.ok("relation-get", "{\"node\":\"{\\\"a\\\":1}\"}\n");
    let client = f.client();
    let unit = client
        .relation_get(&rel(), &BagOwner::Unit("slurmd/0".into()))
        .unwrap();
    assert_eq!(unit, bag([("node", "{\"a\":1}")]));
    f.ok("relation-get", "{}\n");
    let app = client
        .relation_get(&rel(), &BagOwner::App("slurmd".into()))
        .unwrap();
    assert!(app.is_empty());
    assert_eq!(
        f.calls(),
        vec![
            "relation-get [--format=json] [-r] [slurmd:3] [-] [slurmd/0]",
            "relation-get [--format=json] [-r] [slurmd:3] [--app] [-] [slurmd]"
        ]
    );
}

#[test]
fn relation_set_sends_json_on_stdin() {
    let f = Fakes::new();
    f.ok("relation-set", "");
    let client = f.client();
    let data = bag([("node", "line1\nline2 with = and 'quotes'"), ("gone", "")]);
    client.relation_set(&rel(), true, &data).unwrap();
    assert_eq!(
        f.calls(),
        vec!["relation-set [-r] [slurmd:3] [--app] [--file] [-]"]
    );
    let sent: BTreeMap<String, String> = serde_json::from_str(&f.stdin_of("relation-set")).unwrap();
    assert_eq!(sent, data);
    client
        .relation_set(&rel(), false, &bag([("a", "1")]))
        .unwrap();
    assert_eq!(f.calls()[1], "relation-set [-r] [slurmd:3] [--file] [-]");
    // An empty write spawns nothing.
    let before = f.spawned();
    client.relation_set(&rel(), false, &bag([])).unwrap();
    assert_eq!(f.spawned(), before);
}

#[test]
fn large_relation_data_never_touches_argv() {
    let f = Fakes::new();
    f.ok("relation-set", "");
    let big = "x".repeat(3 * 1024 * 1024);
    let data = bag([("node", big.as_str())]);
    f.client().relation_set(&rel(), false, &data).unwrap();
    let sent: BTreeMap<String, String> = serde_json::from_str(&f.stdin_of("relation-set")).unwrap();
    assert_eq!(sent["node"].len(), big.len());
}

#[test]
fn config_get_is_cached_for_the_hook() {
    let f = Fakes::new();
    f.ok(
        "config-get",
        "{\"partition-config\":\"MaxTime=1\",\"n\":3,\"b\":true}\n",
    );
    let client = f.client();
    let c1 = client.config_get().unwrap();
    let c2 = client.config_get().unwrap();
    assert_eq!(c1, c2);
    assert_eq!(c1["n"], json!(3));
    assert_eq!(f.calls(), vec!["config-get [--format=json]"]);
}

#[test]
fn is_leader_false_is_cached() {
    let f = Fakes::new();
    f.ok("is-leader", "false\n");
    let client = f.client();
    assert!(!client.is_leader().unwrap());
    assert!(!client.is_leader().unwrap());
    assert_eq!(f.calls(), vec!["is-leader [--format=json]"]);
    f.ok("is-leader", "true\n");
    let fresh = f.client();
    assert!(fresh.is_leader().unwrap());
    assert!(fresh.is_leader().unwrap());
    assert_eq!(f.calls().len(), 2);
}

#[test]
fn status_and_version_argv() {
    let f = Fakes::new();
    f.ok("status-set", "").ok("application-version-set", "");
    let client = f.client();
    let status = Status {
        kind: StatusKind::Blocked,
        message: "-x needs config".to_owned(),
    };
    client.status_set(StatusScope::Unit, &status).unwrap();
    client
        .status_set(
            StatusScope::Application,
            &Status {
                kind: StatusKind::Active,
                message: String::new(),
            },
        )
        .unwrap();
    client.application_version_set("22.05.8").unwrap();
    assert_eq!(
        f.calls(),
        vec![
            "status-set [--application=False] [blocked] [--] [-x needs config]",
            "status-set [--application=True] [active] [--] []",
            "application-version-set [--] [22.05.8]"
        ]
    );
    assert_eq!(f.spawned(), 3);
}

#[test]
fn juju_log_argv_and_long_message_split() {
    let f = Fakes::new();
    f.ok("juju-log", "");
    let client = f.client();
    client.juju_log(LogLevel::Warning, "hello\nworld").unwrap();
    assert_eq!(
        f.calls(),
        vec!["juju-log [--log-level] [WARNING] [--] [hello", "world]"]
    );
    // A message over the kernel's 128 KiB argument limit goes out in pieces.
    let long = format!("{}\n{}", "a".repeat(100_000), "b".repeat(100_000));
    client.juju_log(LogLevel::Info, &long).unwrap();
    assert_eq!(f.spawned(), 3);
}

#[test]
fn action_tools_argv() {
    let f = Fakes::new();
    f.ok("action-get", "{\"verbose\":true}\n")
        .ok("action-set", "")
        .ok("action-fail", "")
        .ok("action-log", "");
    let client = f.client();
    assert_eq!(client.action_get().unwrap()["verbose"], json!(true));
    let results: BTreeMap<String, String> = [
        ("gpus.count".to_owned(), "2".to_owned()),
        ("gpus.model".to_owned(), "H100 = big".to_owned()),
    ]
    .into();
    client.action_set(&results).unwrap();
    client.action_fail("no driver").unwrap();
    client.action_log("-probing").unwrap();
    assert_eq!(
        f.calls(),
        vec![
            "action-get [--format=json]",
            "action-set [gpus.count=2] [gpus.model=H100 = big]",
            "action-fail [--] [no driver]",
            "action-log [--] [-probing]"
        ]
    );
}

#[test]
fn action_set_validates_before_calling() {
    let f = Fakes::new();
    f.ok("action-set", "");
    let client = f.client();
    let bad: BTreeMap<String, String> = [("stdout".to_owned(), "x".to_owned())].into();
    let err = client.action_set(&bad).unwrap_err();
    assert!(
        matches!(err, HookToolError::InvalidArgument { .. }),
        "{err}"
    );
    assert_eq!(f.spawned(), 0);
    client.action_set(&BTreeMap::new()).unwrap();
    assert_eq!(f.spawned(), 0);
}

#[test]
fn state_tools() {
    let f = Fakes::new();
    f.ok("state-get", "null\n")
        .ok("state-set", "")
        .ok("state-delete", "");
    let client = f.client();
    assert!(client.state_get().unwrap().is_empty());
    let data: BTreeMap<String, String> = [("cache".to_owned(), "{}".to_owned())].into();
    client.state_set(&data).unwrap();
    client.state_delete("cache").unwrap();
    client.state_delete("-odd").unwrap();
    assert_eq!(
        f.calls(),
        vec![
            "state-get [--format=json]",
            "state-set [--file] [-]",
            "state-delete [cache]",
            "state-delete [--] [-odd]"
        ]
    );
    assert_eq!(f.stdin_of("state-set"), "{\"cache\":\"{}\"}");
    f.ok("state-get", "{\"a\":\"1\"}\n");
    assert_eq!(client.state_get().unwrap()["a"], "1");
}

#[test]
fn network_ports_reboot() {
    let f = Fakes::new();
    f.ok(
        "network-get",
        "{\"bind-addresses\":[{\"mac-address\":\"aa\",\"interface-name\":\"eth0\",\"addresses\":[{\"hostname\":\"\",\"value\":\"10.0.0.5\",\"cidr\":\"10.0.0.0/24\"}]}],\"egress-subnets\":[\"10.0.0.5/32\"],\"ingress-addresses\":[\"10.0.0.5\"]}\n",
    )
    .ok("open-port", "")
    .ok("close-port", "")
    .ok("opened-ports", "[\"6817/tcp\",\"8000-8999/udp\",\"icmp\"]\n")
    .ok("juju-reboot", "");
    let client = f.client();
    let info = client.network_get("slurmd", Some(&rel())).unwrap();
    assert_eq!(info.ingress_addresses, vec!["10.0.0.5"]);
    assert_eq!(info.bind_addresses[0].addresses[0].cidr, "10.0.0.0/24");
    client.network_get("juju-info", None).unwrap();
    client.open_port(Port::tcp(6817)).unwrap();
    client.close_port("100-200/udp".parse().unwrap()).unwrap();
    let ports = client.opened_ports().unwrap();
    assert_eq!(ports.len(), 3);
    client.juju_reboot(false).unwrap();
    client.juju_reboot(true).unwrap();
    assert_eq!(
        f.calls(),
        vec![
            "network-get [--format=json] [-r] [slurmd:3] [slurmd]",
            "network-get [--format=json] [juju-info]",
            "open-port [6817/tcp]",
            "close-port [100-200/udp]",
            "opened-ports [--format=json]",
            "juju-reboot",
            "juju-reboot [--now]"
        ]
    );
}

// ---- errors ----

fn fail(tool: &str, stderr: &str, code: i32) -> HookToolError {
    let f = Fakes::new();
    f.tool(tool, "", stderr, code);
    let client = f.client();
    match tool {
        "relation-get" => client
            .relation_get(&rel(), &BagOwner::App("slurmctld".into()))
            .unwrap_err(),
        "relation-set" => client
            .relation_set(&rel(), true, &bag([("a", "b")]))
            .unwrap_err(),
        "status-set" => client
            .status_set(
                StatusScope::Application,
                &Status {
                    kind: StatusKind::Active,
                    message: String::new(),
                },
            )
            .unwrap_err(),
        "action-get" => client.action_get().unwrap_err(),
        "config-get" => client.config_get().unwrap_err(),
        other => panic!("no case for {other}"),
    }
}

#[test]
fn relation_not_found_exit_2() {
    let err = fail(
        "relation-get",
        "ERROR invalid value \"slurmd:3\" for option -r: relation not found\n",
        2,
    );
    assert!(
        matches!(err, HookToolError::RelationNotFound { .. }),
        "{err}"
    );
    assert_eq!(err.tool(), "relation-get");
    assert!(
        err.to_string()
            .starts_with("relation-get: relation not found: invalid value")
    );
}

#[test]
fn permission_denied() {
    let err = fail("relation-get", "ERROR permission denied\n", 1);
    assert!(
        matches!(err, HookToolError::PermissionDenied { .. }),
        "{err}"
    );
    let err = fail(
        "relation-get",
        "ERROR permission denied (unauthorized access)\n",
        1,
    );
    assert!(
        matches!(err, HookToolError::PermissionDenied { .. }),
        "{err}"
    );
}

#[test]
fn not_leader() {
    let err = fail("relation-set", "ERROR cannot write relation settings\n", 1);
    assert!(matches!(err, HookToolError::NotLeader { .. }), "{err}");
    assert!(err.to_string().contains("cannot write relation settings"));
    let err = fail("status-set", "ERROR this unit is not the leader\n", 1);
    assert!(matches!(err, HookToolError::NotLeader { .. }), "{err}");
}

#[test]
fn not_in_action() {
    let err = fail("action-get", "ERROR not running an action\n", 1);
    assert!(matches!(err, HookToolError::NotInAction { .. }), "{err}");
}

#[test]
fn usage_error_exit_2() {
    let err = fail(
        "config-get",
        "ERROR option provided but not defined: --format\n",
        2,
    );
    assert!(matches!(err, HookToolError::Usage { .. }), "{err}");
    assert!(err.to_string().contains("config-get"));
    assert!(err.to_string().contains("option provided but not defined"));
}

#[test]
fn other_runtime_error() {
    let err = fail("config-get", "ERROR connection is shut down\n", 1);
    let HookToolError::Other { status, stderr, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(status, "exit code 1");
    assert_eq!(stderr, "connection is shut down");
}

#[test]
fn tool_missing() {
    let f = Fakes::new();
    let err = f.client().is_leader().unwrap_err();
    assert!(matches!(err, HookToolError::ToolMissing { .. }), "{err}");
    assert!(err.to_string().contains("is-leader"));
    assert!(err.to_string().contains("PATH"));
}

#[test]
fn bad_output() {
    let f = Fakes::new();
    f.ok("is-leader", "True\n");
    let err = f.client().is_leader().unwrap_err();
    assert!(matches!(err, HookToolError::BadOutput { .. }), "{err}");
    assert!(err.to_string().contains("True"));
}

#[test]
fn tool_failing_before_reading_stdin_reports_its_error() {
    let f = Fakes::new();
    // No `cat`: this tool never reads stdin.
    let path = f.path().join("relation-set");
    std::fs::write(
        &path,
        "#!/bin/sh\necho 'ERROR cannot write relation settings' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let big = "y".repeat(4 * 1024 * 1024);
    let err = f
        .client()
        .relation_set(&rel(), true, &bag([("k", big.as_str())]))
        .unwrap_err();
    assert!(matches!(err, HookToolError::NotLeader { .. }), "{err}");
}

#[test]
fn oversized_argument_is_refused_without_spawning() {
    let f = Fakes::new();
    f.ok("status-set", "");
    let client = f.client();
    let status = Status {
        kind: StatusKind::Active,
        message: "m".repeat(200 * 1024),
    };
    let err = client.status_set(StatusScope::Unit, &status).unwrap_err();
    assert!(
        matches!(err, HookToolError::InvalidArgument { .. }),
        "{err}"
    );
    assert_eq!(f.spawned(), 0);
}

#[test]
fn extra_env_reaches_the_tool() {
    let f = Fakes::new();
    let path: PathBuf = f.path().join("is-leader");
    std::fs::write(&path, "#!/bin/sh\nprintf '%s\\n' \"$SIM_LEADER\"\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let client = f.client().with_env("SIM_LEADER", "true");
    assert!(client.is_leader().unwrap());
}
