//! The runtime's secret client ([`SecretBackend`] on [`HookTools`]) against the simulator's real
//! `secret-*` hook tools. As in `runtime_against_sim.rs` the hook process is this test binary:
//! its `dispatch` re-runs it with `--exact secret_probe_hook`. An owner application adds a
//! binary secret, grants it and publishes the id; the consumer reads it by id (bytes intact);
//! an action publishes a new revision; the consumer follows `secret-changed` with `--refresh`;
//! the owner removes the revision nobody tracks in `secret-remove`; revoke and remove work. The
//! outer test checks every hook succeeded, what the tools were called with (content never on
//! argv), and what the consumer saw.

use juju_runtime::{
    BagOwner, Event, HookContext, HookToolError, HookTools, JujuLogSubscriber, ModelBackend,
    RelationId, RotatePolicy, SecretBackend, SecretContent, SecretId, SecretOptions, SecretRead,
    SecretRef, run_hook,
};
use juju_runtime_testing::bag;
use juju_sim::{DeploySpec, HookRecord, Simulator};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const MARKER: &str = "RUNTIME_SECRET_PROBE";
const LABEL: &str = "cluster-key";

/// Revision 1's value: every byte value, so text-unsafe bytes must survive.
fn first_value() -> Vec<u8> {
    (0..=255u8).rev().collect()
}

fn second_value() -> Vec<u8> {
    (0..=255u8).map(|b| b ^ 0x5a).collect()
}

fn content(value: Vec<u8>) -> SecretContent {
    SecretContent::from([("key".to_owned(), value)])
}

fn fail(tool: &str, reason: String) -> HookToolError {
    HookToolError::InvalidArgument {
        tool: tool.to_owned(),
        reason,
    }
}

#[test]
fn secret_probe_hook() {
    if std::env::var_os(MARKER).is_none() {
        return;
    }
    let (subscriber, log) = JujuLogSubscriber::new(tracing::Level::INFO);
    let _ = tracing::subscriber::set_global_default(subscriber);
    let backend = HookTools::new();
    let ctx = match HookContext::from_env() {
        Ok(ctx) => ctx,
        Err(e) => panic!("the simulator's environment does not parse: {e}"),
    };
    std::process::exit(i32::from(run_hook(&ctx, &backend, &log, handle)));
}

fn published_id(
    b: &HookTools,
    rel: &RelationId,
    app: &str,
) -> Result<Option<SecretId>, HookToolError> {
    let data = b.relation_get(rel, &BagOwner::App(app.to_owned()))?;
    data.get("secret")
        .map(|raw| SecretId::parse(raw).map_err(|e| fail("relation-get", e.to_string())))
        .transpose()
}

fn handle(ctx: &HookContext, b: &HookTools) -> Result<(), HookToolError> {
    match &ctx.event {
        // Owner side: add, check the pending secret is visible, grant, publish, all in one hook.
        Event::RelationCreated(r) if r.relation.endpoint == "db" && b.is_leader()? => {
            let options = SecretOptions {
                label: Some(LABEL.to_owned()),
                description: Some("the cluster key".to_owned()),
                rotate: Some(RotatePolicy::Monthly),
                ..SecretOptions::default()
            };
            let id = b.secret_add(&content(first_value()), &options)?;
            let info = b
                .secret_info_get(&SecretRef::Label(LABEL.to_owned()))?
                .ok_or_else(|| fail("secret-info-get", "pending secret not visible".into()))?;
            assert_eq!((info.id.clone(), info.revision), (id.clone(), 1));
            assert_eq!(info.rotation, Some(RotatePolicy::Monthly));
            assert_eq!(info.description.as_deref(), Some("the cluster key"));
            let peeked = b.secret_get(&SecretRef::Id(id.clone()), &["key"], SecretRead::Peek)?;
            assert_eq!(peeked, content(first_value()));
            b.secret_grant(&id, &r.relation, None)?;
            b.relation_set(&r.relation, true, &bag([("secret", id.uri().as_str())]))?;
            Ok(())
        }
        // Consumer side: read by id with a consumer label; bytes intact.
        Event::RelationChanged(r)
            if r.relation.endpoint == "backend" && r.remote_unit.is_none() =>
        {
            let Some(id) = published_id(b, &r.relation, &r.remote_app)? else {
                return Ok(());
            };
            let got = b.secret_get(
                &SecretRef::IdWithLabel(id.clone(), "ctl-key".to_owned()),
                &["key"],
                SecretRead::Tracked,
            )?;
            assert_eq!(got, content(first_value()));
            // A consumer cannot manage the owner's secret, and sees no metadata.
            assert!(b.secret_info_get(&SecretRef::Id(id.clone()))?.is_none());
            assert!(b.secret_ids()?.is_empty());
            b.state_set(&[("seen".to_owned(), got["key"][0].to_string())].into())
        }
        Event::SecretChanged(s) => {
            let id = s.id.clone();
            assert_eq!(
                s.label.as_deref(),
                Some("ctl-key"),
                "consumer label exported"
            );
            let tracked =
                b.secret_get(&SecretRef::Id(id.clone()), &["key"], SecretRead::Tracked)?;
            assert_eq!(tracked, content(first_value()), "tracked until refresh");
            let got = b.secret_get(&SecretRef::Id(id), &["key"], SecretRead::Refresh)?;
            assert_eq!(got, content(second_value()));
            b.state_set(&[("seen".to_owned(), got["key"][0].to_string())].into())
        }
        Event::SecretRemove(s) => {
            let id = s.id.clone();
            let rev = s
                .revision
                .ok_or_else(|| fail("env", "no revision".into()))?;
            b.secret_remove(&id, Some(rev))
        }
        Event::Action(a) => {
            let id = b
                .secret_info_get(&SecretRef::Label(LABEL.to_owned()))?
                .map(|i| i.id);
            let rel = b.relation_ids("db")?.into_iter().next();
            match (a.name.as_str(), id, rel) {
                ("rotate", Some(id), _) => {
                    // Identical content makes no revision; new content makes revision 2.
                    b.secret_set(&id, &content(first_value()), &SecretOptions::default())?;
                    b.secret_set(&id, &content(second_value()), &SecretOptions::default())
                }
                ("revoke", Some(id), Some(rel)) => b.secret_revoke(&id, &rel, None),
                ("drop", Some(id), _) => {
                    assert_eq!(b.secret_ids()?, vec![id.clone()]);
                    b.secret_remove(&id, None)
                }
                ("ids", _, _) => {
                    let n = b.secret_ids()?.len().to_string();
                    b.action_set(&[("count".to_owned(), n)].into())
                }
                ("read", _, _) => {
                    let rel = b.relation_ids("backend")?.into_iter().next();
                    let rel = rel.ok_or_else(|| fail("relation-ids", "no relation".into()))?;
                    let remote = b.relation_remote_app(&rel)?;
                    let id = published_id(b, &rel, &remote)?
                        .ok_or_else(|| fail("relation-get", "no id".into()))?;
                    let outcome = match b.secret_get(&SecretRef::Id(id), &["key"], SecretRead::Peek)
                    {
                        Ok(_) => "read".to_owned(),
                        Err(HookToolError::PermissionDenied { .. }) => "denied".to_owned(),
                        Err(e) => format!("other: {e}"),
                    };
                    b.action_set(&[("outcome".to_owned(), outcome)].into())
                }
                (name, _, _) => Err(fail("action", format!("{name}: no secret"))),
            }
        }
        _ => Ok(()),
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn assert_all_succeeded(sim: &Simulator) {
    let failed: Vec<&HookRecord> = sim.records().iter().filter(|r| !r.succeeded()).collect();
    assert!(
        failed.is_empty(),
        "hooks failed:\n{}",
        failed
            .iter()
            .map(|r| format!(
                "{} {} ({:?}) {:?}:\n{}",
                r.unit, r.hook, r.code, r.commit_error, r.stderr
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_secret_client_against_the_simulator() {
    let charm = tempfile::tempdir().unwrap();
    let dir = charm.path();
    write(
        dir,
        "metadata.yaml",
        "name: secprobe\nsummary: s\ndescription: s\n\
         provides:\n  db:\n    interface: secprobe\nrequires:\n  backend:\n    interface: secprobe\n",
    );
    write(
        dir,
        "actions.yaml",
        "rotate:\n  description: r\nrevoke:\n  description: r\ndrop:\n  description: d\n\
         ids:\n  description: i\nread:\n  description: r\n",
    );
    let exe = std::env::current_exe().unwrap();
    write(
        dir,
        "dispatch",
        &format!(
            "#!/bin/sh\nexec '{}' --exact secret_probe_hook --nocapture --test-threads=1 -q\n",
            exe.display()
        ),
    );
    std::fs::set_permissions(dir.join("dispatch"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut sim = Simulator::new().unwrap();
    sim.deploy(DeploySpec::new("own", dir).env(MARKER, "1"))
        .unwrap();
    sim.deploy(DeploySpec::new("use", dir).units(2).env(MARKER, "1"))
        .unwrap();
    sim.integrate("own:db", "use:backend").unwrap();
    assert_all_succeeded(&sim);
    for unit in ["use/0", "use/1"] {
        assert_eq!(
            sim.unit_state(unit).get("seen").map(String::as_str),
            Some("255"),
            "{unit}"
        );
    }

    // Content goes through files, never argv.
    let add = sim
        .records()
        .iter()
        .flat_map(|r| r.calls.iter())
        .find(|c| c.tool == "secret-add")
        .expect("secret-add ran");
    assert!(add.args[0].starts_with("key#file="), "{:?}", add.args);
    assert!(add.args.contains(&"--rotate".to_owned()), "{:?}", add.args);

    sim.clear_records();
    let done = sim.run_action("own/0", "rotate", json!({})).unwrap();
    assert_eq!(done.status, "completed", "{done:?}");
    assert_all_succeeded(&sim);
    for unit in ["use/0", "use/1"] {
        assert_eq!(
            sim.unit_state(unit).get("seen").map(String::as_str),
            Some(second_value()[0].to_string().as_str()),
            "{unit} followed secret-changed"
        );
    }
    let removed: Vec<&HookRecord> = sim
        .records()
        .iter()
        .filter(|r| r.hook == "secret-remove")
        .collect();
    assert_eq!(removed.len(), 1, "one secret-remove for revision 1");
    assert_eq!(removed[0].unit, "own/0");
    let call = &removed[0].calls[0];
    assert_eq!(call.tool, "secret-remove");
    assert_eq!(&call.args[1..], ["--revision", "1"]);
    let revisions: Vec<Vec<u32>> = sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .map(|s| s.revisions.keys().copied().collect())
            .collect()
    });
    assert_eq!(
        revisions,
        vec![vec![2]],
        "revision 1 removed, identical set made none"
    );

    let read = sim.run_action("use/0", "read", json!({})).unwrap();
    assert_eq!(read.results, json!({"outcome": "read"}));
    sim.run_action("own/0", "revoke", json!({})).unwrap();
    assert_all_succeeded(&sim);
    let read = sim.run_action("use/0", "read", json!({})).unwrap();
    assert_eq!(read.results, json!({"outcome": "denied"}));

    sim.run_action("own/0", "drop", json!({})).unwrap();
    assert_all_succeeded(&sim);
    let ids = sim.run_action("own/0", "ids", json!({})).unwrap();
    assert_eq!(ids.results, json!({"count": "0"}));
}
