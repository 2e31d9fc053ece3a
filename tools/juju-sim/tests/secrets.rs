//! Conformance: Juju 3.6 secrets (hook tools, tracking, commit, secret hooks). One test
//! per rule; the README maps each rule to its test and its Juju source.

mod common;
use common::Probe;
use juju_sim::{Hook, HookRecord};
use std::time::Duration;

/// `a` (2 units, a/0 leads, provides `db`) related to `b` (2 units, requires `backend`).
fn setup() -> (Probe, u32) {
    let mut p = Probe::new();
    p.sim.deploy(p.spec("a", 2)).unwrap();
    p.sim.deploy(p.spec("b", 2)).unwrap();
    let rel = p.sim.integrate("a:db", "b:backend").unwrap();
    p.clear();
    (p, rel)
}

/// Run `body` as an update-status hook on `unit` (then settle, running any hooks it caused).
fn on(p: &mut Probe, unit: &str, body: &str) -> HookRecord {
    p.script("update-status", body);
    let dispatch = common::probe_charm().join("dispatch");
    let rec = p
        .sim
        .run_hook_command(unit, Hook::UpdateStatus, &[dispatch.to_str().unwrap()])
        .unwrap();
    let _ = std::fs::remove_file(p.dir.path().join("update-status"));
    rec
}

/// Add an app secret on the leader a/0 (committed), returning its bare id.
fn add(p: &mut Probe, args: &str) -> String {
    on(p, "a/0", &format!("run add secret-add {args}\n"));
    let (out, err, code) = p.result("add");
    assert_eq!(code, 0, "secret-add failed: {err}");
    out.trim().rsplit('/').next().unwrap().to_owned()
}

/// The committed latest revision of a secret.
fn latest(p: &Probe, id: &str) -> Option<u32> {
    p.sim.with_model(|m| {
        m.secrets
            .secrets
            .iter()
            .find(|(k, _)| k.as_str() == id)
            .map(|(_, s)| s.latest)
    })
}

/// Hook-log lines for secret hooks: `<unit> <hook>`.
fn secret_hooks(p: &Probe) -> Vec<String> {
    p.hooks()
        .into_iter()
        .filter(|l| l.contains(" secret-"))
        .collect()
}

fn is_xid(s: &str) -> bool {
    s.len() == 20
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'v').contains(&c))
}

#[test]
fn add_prints_long_uri_with_unguessable_xid() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/0",
        "run one secret-add pass=one\nrun two secret-add pass=one\n",
    );
    let uuid = p.sim.with_model(|m| m.uuid.clone());
    let (one, two) = (p.result("one").0, p.result("two").0);
    for out in [&one, &two] {
        let id = out
            .strip_prefix(&format!("secret://{uuid}/"))
            .and_then(|s| s.strip_suffix('\n'))
            .unwrap_or_else(|| panic!("not a long URI: {out:?}"));
        assert!(is_xid(id), "{id}");
    }
    assert_ne!(one, two, "ids must differ");
}

#[test]
fn every_tool_accepts_three_id_forms_and_rejects_others() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=s3cret");
    let uuid = p.sim.with_model(|m| m.uuid.clone());
    on(
        &mut p,
        "a/0",
        &format!(
            "run bare secret-get {id} pass\nrun short secret-get secret:{id} pass\nrun long secret-get secret://{uuid}/{id} pass\nrun bad secret-get nope\nrun badinfo secret-info-get secret:xyz\n"
        ),
    );
    for l in ["bare", "short", "long"] {
        assert_eq!(p.result(l), ("s3cret\n".into(), String::new(), 0), "{l}");
    }
    assert_eq!(
        p.result("bad"),
        (
            String::new(),
            "ERROR secret URI \"nope\" not valid\n".into(),
            2
        )
    );
    assert_eq!(p.result("badinfo").2, 2);
}

#[test]
fn content_validation_is_a_usage_error_with_juju_texts() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/0",
        "run empty secret-add key=\nrun badkey secret-add Bad=x\nrun short secret-add ab=x\nrun none secret-add\nrun rot secret-add --rotate often pass=x\nrun exp secret-add --expire soon pass=x\nrun neg secret-add --expire -1h pass=x\nrun own secret-add --owner model pass=x\n",
    );
    let err = |l: &str| {
        let (_, e, c) = p.result(l);
        assert_eq!(c, 2, "{l}: {e}");
        e
    };
    assert_eq!(err("empty"), "ERROR key value \"key=\" not valid\n");
    assert_eq!(err("badkey"), "ERROR key \"Bad\" not valid\n");
    assert_eq!(err("short"), "ERROR key \"ab\" not valid\n");
    assert_eq!(err("none"), "ERROR missing secret value or filename\n");
    assert_eq!(err("rot"), "ERROR rotate policy \"often\" not valid\n");
    assert_eq!(
        err("exp"),
        "ERROR expire time or duration \"soon\" not valid\n"
    );
    assert_eq!(
        err("neg"),
        "ERROR negative expire duration \"-1h\" not valid\n"
    );
    assert_eq!(err("own"), "ERROR secret owner \"model\" not valid\n");
    assert_eq!(p.sim.with_model(|m| m.secrets.secrets.len()), 0);
}

/// Juju refuses secret content over 1 MB, not 8 KiB: each value may be 1,000,000 bytes
/// base64-encoded, and so may the encoded values of one source together; a `#file` or `--file`
/// file may hold 1,000,000 bytes. Follows Juju 3.6 and 4.0 `core/secrets/createsecret.go`:
/// `encodeBase64` (`maxValueSizeBytes`, `maxContentSizeBytes` = 1000 * 1000, sizes of the
/// encoded values), `CreateSecretData` (`#file` size), `ReadSecretData` (`--file` size), called
/// from `internal/worker/uniter/runner/jujuc/secret-add.go` `secretUpsertCommand.Init`.
#[test]
fn secret_values_may_be_up_to_1_mb_base64_encoded() {
    let (mut p, _) = setup();
    let dir = p.dir.path().to_str().unwrap().to_owned();
    // 750,000 bytes encode to exactly 1,000,000; one more byte is over
    std::fs::write(format!("{dir}/max"), "x".repeat(750_000)).unwrap();
    std::fs::write(format!("{dir}/over"), "x".repeat(750_001)).unwrap();
    std::fs::write(format!("{dir}/half"), "x".repeat(500_000)).unwrap();
    std::fs::write(format!("{dir}/huge"), "x".repeat(1_000_001)).unwrap();
    let nine_k = "y".repeat(9000);
    let nine = add(&mut p, &format!("value={nine_k}"));
    let max = add(&mut p, &format!("big#file={dir}/max"));
    on(
        &mut p,
        "a/0",
        &format!(
            "run over secret-add big#file={dir}/over\n\
             run total secret-add one#file={dir}/half two#file={dir}/half\n\
             run huge secret-add big#file={dir}/huge\n"
        ),
    );
    assert_eq!(
        p.result("over"),
        (
            String::new(),
            "ERROR base64 encoded secret content for key \"big\" too large: 1000004 bytes\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("total"),
        (
            String::new(),
            "ERROR base64 encoded secret content too large: 1333336 bytes\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("huge"),
        (
            String::new(),
            format!("ERROR secret content in file \"{dir}/huge\" too large: 1000001 bytes\n"),
            2
        )
    );
    on(
        &mut p,
        "a/0",
        &format!("run get9 secret-get {nine} value\nrun getmax secret-get {max} big\n"),
    );
    assert_eq!(p.result("get9"), (format!("{nine_k}\n"), String::new(), 0));
    let (out, err, code) = p.result("getmax");
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out.trim_end().len(), 750_000);
}

#[test]
fn file_values_override_arguments_and_base64_file_forms() {
    let (mut p, _) = setup();
    let dir = p.dir.path().to_str().unwrap().to_owned();
    std::fs::write(format!("{dir}/c.json"), r#"{"user":"from-file"}"#).unwrap();
    std::fs::write(format!("{dir}/key.pem"), "PEM").unwrap();
    let id = add(
        &mut p,
        &format!("user=from-arg raw#base64=aGk= cert#file={dir}/key.pem --file {dir}/c.json"),
    );
    on(
        &mut p,
        "a/0",
        &format!("run get secret-get {id} --format=json\nrun raw secret-get {id} raw#base64\n"),
    );
    assert_eq!(
        p.result("get").0,
        "{\"cert\":\"PEM\",\"raw\":\"hi\",\"user\":\"from-file\"}\n"
    );
    assert_eq!(p.result("raw").0, "aGk=\n");
}

#[test]
fn non_leader_cannot_add_app_secret_but_can_add_unit_secret() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/1",
        "run app secret-add pass=x\nrun unit secret-add --owner unit pass=y\n",
    );
    assert_eq!(
        p.result("app"),
        (
            String::new(),
            "ERROR this unit is not the leader\n".into(),
            1
        )
    );
    assert_eq!(p.result("unit").2, 0);
    let owners: Vec<String> = p.sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .map(|s| format!("{:?}", s.owner))
            .collect()
    });
    assert_eq!(owners, [r#"Unit("a/1")"#]);
}

#[test]
fn changes_apply_only_when_the_hook_exits_0() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/0",
        &format!(
            "run add secret-add pass=two\nsecret-set {id} pass=changed\nsecret-grant {id} -r db:{}\nexit 1\n",
            0
        ),
    );
    let reserved = p.result("add").0;
    assert!(!reserved.is_empty());
    p.sim.resolve_with("a/0", false).unwrap();
    let (n, grants) = p.sim.with_model(|m| {
        (
            m.secrets.secrets.len(),
            m.secrets
                .secrets
                .values()
                .map(|s| s.grants.len())
                .sum::<usize>(),
        )
    });
    assert_eq!(n, 1, "the failed hook's secret-add must not be created");
    assert_eq!(grants, 0);
    assert_eq!(latest(&p, &id), Some(1));
}

#[test]
fn pending_changes_are_visible_within_the_hook() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/0",
        "id=$(secret-add --label tmp pass=new)\nrun ids secret-ids --format=json\nrun info secret-info-get --label tmp --format=json\nrun get secret-get --label tmp\nrun keyed secret-get --label tmp pass\n",
    );
    let ids = p.result("ids").0;
    assert!(ids.starts_with("[\"") && ids.len() == 25, "{ids}");
    let info = p.result("info").0;
    assert!(
        info.contains("\"revision\":1,\"label\":\"tmp\",\"owner\":\"application\""),
        "{info}"
    );
    assert!(
        !info.contains("rotation") && !info.contains("rotates"),
        "{info}"
    );
    assert_eq!(p.result("get").0, "pass: new\n");
    // As in Juju, the first positional is always the URI, even with --label.
    assert_eq!(
        p.result("keyed"),
        (
            String::new(),
            "ERROR secret URI \"pass\" not valid\n".into(),
            2
        )
    );
}

#[test]
fn readers_track_a_revision_until_refresh() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("run first secret-get {id} pass\n"));
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    on(
        &mut p,
        "b/0",
        &format!(
            "run plain secret-get {id} pass\nrun peek secret-get {id} pass --peek\nrun after-peek secret-get {id} pass\nrun refresh secret-get {id} pass --refresh\nrun after secret-get {id} pass\nrun both secret-get {id} --peek --refresh\n"
        ),
    );
    assert_eq!(p.result("first").0, "one\n");
    assert_eq!(p.result("plain").0, "one\n");
    assert_eq!(p.result("peek").0, "two\n");
    assert_eq!(p.result("after-peek").0, "one\n");
    assert_eq!(p.result("refresh").0, "two\n");
    assert_eq!(p.result("after").0, "two\n");
    assert_eq!(
        p.result("both"),
        (
            String::new(),
            "ERROR specify one of --peek or --refresh but not both\n".into(),
            2
        )
    );
}

#[test]
fn owners_track_like_consumers() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/0",
        &format!("secret-get {id} >/dev/null\nsecret-set {id} pass=two\n"),
    );
    on(
        &mut p,
        "a/0",
        &format!("run own secret-get {id} pass\nrun own-refresh secret-get {id} pass --refresh\n"),
    );
    assert_eq!(p.result("own").0, "one\n");
    assert_eq!(p.result("own-refresh").0, "two\n");
}

#[test]
fn first_read_and_label_survive_a_failed_hook() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(
        &mut p,
        "b/0",
        &format!("secret-get {id} --label mine >/dev/null\nexit 1\n"),
    );
    p.sim.resolve_with("b/0", false).unwrap();
    on(&mut p, "b/0", "run bylabel secret-get --label mine\n");
    assert_eq!(p.result("bylabel").0, "pass: one\n");
    let tracked = p.sim.with_model(|m| {
        m.secrets
            .all_tracking()
            .any(|((u, s), t)| u == "b/0" && s.as_str() == id && t.current == 1)
    });
    assert!(tracked);
}

#[test]
fn identical_set_creates_no_revision() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-set {id} pass=one\n"));
    assert_eq!(latest(&p, &id), Some(1));
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    assert_eq!(latest(&p, &id), Some(2));
}

#[test]
fn sets_in_one_hook_coalesce_and_replace_content() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one user=admin");
    on(
        &mut p,
        "a/0",
        &format!("secret-set {id} pass=two\nsecret-set {id} pass=three --description d\n"),
    );
    assert_eq!(latest(&p, &id), Some(2), "two sets, one revision");
    on(
        &mut p,
        "a/0",
        &format!(
            "run get secret-get {id} --refresh --format=json\nrun info secret-info-get {id} --format=json\n"
        ),
    );
    assert_eq!(
        p.result("get").0,
        "{\"pass\":\"three\"}\n",
        "replaced, not merged"
    );
    assert!(p.result("info").0.contains("\"description\":\"d\""));
}

#[test]
fn new_revision_without_expire_has_no_expiry() {
    let (mut p, _) = setup();
    let id = add(&mut p, "--expire 24h pass=one");
    on(
        &mut p,
        "a/0",
        &format!("run before secret-info-get {id} --format=json\n"),
    );
    assert!(p.result("before").0.contains("\"expiry\":"));
    on(
        &mut p,
        "a/0",
        &format!("secret-set {id} pass=two\nrun after secret-info-get {id} --format=json\n"),
    );
    on(
        &mut p,
        "a/0",
        &format!("run after secret-info-get {id} --format=json\n"),
    );
    assert!(
        !p.result("after").0.contains("expiry"),
        "{}",
        p.result("after").0
    );
}

#[test]
fn labels_are_unique_per_entity_in_hook_and_at_commit() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/0",
        "secret-add --label db pass=x\nrun again secret-add --label db pass=y\n",
    );
    assert_eq!(
        p.result("again"),
        (
            String::new(),
            "ERROR secret with label \"db\" already exists\n".into(),
            1
        )
    );
    // A committed label taken by the app clashes for its unit too; the tool exits 0, the
    // commit fails and the hook goes into error.
    on(
        &mut p,
        "a/1",
        "run unit secret-add --owner unit --label db pass=z\n",
    );
    assert_eq!(p.result("unit").2, 0);
    assert!(p.sim.is_error("a/1"));
    assert_eq!(p.sim.with_model(|m| m.secrets.secrets.len()), 1);
    assert!(p.sim.logs().iter().any(|l| {
        l.message
            .contains("creating secrets: secret with label \"db\" already exists")
    }));
}

#[test]
fn non_leader_sees_no_app_metadata_but_reads_content() {
    let (mut p, _) = setup();
    let id = add(&mut p, "--label shared pass=one");
    on(
        &mut p,
        "a/1",
        &format!(
            "run ids secret-ids --format=json\nrun info secret-info-get {id}\nrun get secret-get {id} pass\nrun bylabel secret-get --label shared\n"
        ),
    );
    assert_eq!(p.result("ids").0, "null\n");
    assert_eq!(
        p.result("info"),
        (
            String::new(),
            format!("ERROR secret \"{id}\" not found\n"),
            1
        )
    );
    assert_eq!(p.result("get").0, "one\n");
    assert_eq!(p.result("bylabel").0, "pass: one\n");
}

#[test]
fn grant_needs_a_relation_and_a_unit_of_the_remote_app() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/0",
        &format!(
            "run norel secret-grant {id}\nrun badrel secret-grant {id} -r 99\nrun badunit secret-grant {id} -r {rel} --unit a/1\nrun missing secret-grant cu6tkrvnfgsc78ab1k2g -r {rel}\n"
        ),
    );
    assert_eq!(
        p.result("norel"),
        (String::new(), "ERROR no relation id specified\n".into(), 2)
    );
    assert_eq!(
        p.result("badrel"),
        (
            String::new(),
            "ERROR invalid value \"99\" for option -r: relation not found\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("badunit"),
        (
            String::new(),
            "ERROR cannot specify unit \"a/1\" in relation to application \"b\"\n".into(),
            2
        )
    );
    assert_eq!(
        p.result("missing"),
        (
            String::new(),
            "ERROR secret \"cu6tkrvnfgsc78ab1k2g\" not found\n".into(),
            1
        )
    );
}

#[test]
fn only_granted_readers_read_and_missing_secrets_are_not_found() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "b/0",
        &format!(
            "run denied secret-get {id}\nrun missing secret-get secret:cu6tkrvnfgsc78ab1k2g\n"
        ),
    );
    assert_eq!(
        p.result("denied"),
        (String::new(), "ERROR permission denied\n".into(), 1)
    );
    assert_eq!(
        p.result("missing"),
        (
            String::new(),
            "ERROR secret \"secret:cu6tkrvnfgsc78ab1k2g\" not found\n".into(),
            1
        )
    );
}

#[test]
fn grant_then_revoke_on_a_relation_without_consumer_hooks() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(
        &mut p,
        "b/1",
        &format!("run granted secret-get {id} pass\n"),
    );
    assert_eq!(p.result("granted").0, "one\n");
    p.clear();
    on(&mut p, "a/0", &format!("secret-revoke {id} -r {rel}\n"));
    on(
        &mut p,
        "b/1",
        &format!("run revoked secret-get {id} pass\n"),
    );
    assert_eq!(p.result("revoked").2, 1);
    assert!(secret_hooks(&p).is_empty(), "{:?}", secret_hooks(&p));
}

/// `secret-revoke <ID> --unit U` (with or without `-r`, as ops' `Secret.revoke(relation,
/// unit=…)` passes both) removes that unit's grant alone: it can no longer read, the other
/// granted unit still can, and no hook fires. It removes no application grant: Juju's
/// `CanRead` checks the unit's own access, then its application's, so a unit revoked while
/// its application holds a grant still reads.
#[test]
fn unit_revoke_removes_only_that_units_grant() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/0",
        &format!("secret-grant {id} -r {rel} --unit b/0\nsecret-grant {id} -r {rel} --unit b/1\n"),
    );
    on(&mut p, "b/0", &format!("run r0 secret-get {id} pass\n"));
    on(&mut p, "b/1", &format!("run r1 secret-get {id} pass\n"));
    assert_eq!(p.result("r0").0, "one\n");
    assert_eq!(p.result("r1").0, "one\n");
    p.clear();
    on(
        &mut p,
        "a/0",
        &format!("run revoke secret-revoke {id} --unit b/1\n"),
    );
    assert_eq!(p.result("revoke"), (String::new(), String::new(), 0));
    on(&mut p, "b/1", &format!("run gone secret-get {id} pass\n"));
    on(&mut p, "b/0", &format!("run kept secret-get {id} pass\n"));
    assert_eq!(
        p.result("gone"),
        (String::new(), "ERROR permission denied\n".into(), 1)
    );
    assert_eq!(p.result("kept"), ("one\n".into(), String::new(), 0));
    // ops' form, relation and unit: b/0 loses its grant too.
    on(
        &mut p,
        "a/0",
        &format!("run revoke0 secret-revoke {id} -r {rel} --unit b/0\n"),
    );
    assert_eq!(p.result("revoke0").2, 0);
    on(&mut p, "b/0", &format!("run gone0 secret-get {id} pass\n"));
    assert_eq!(p.result("gone0").1, "ERROR permission denied\n");
    assert!(secret_hooks(&p).is_empty(), "{:?}", secret_hooks(&p));
    // A unit revoke leaves an application grant in place.
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "a/0", &format!("secret-revoke {id} --unit b/1\n"));
    on(&mut p, "b/1", &format!("run app secret-get {id} pass\n"));
    assert_eq!(p.result("app").0, "one\n");
}

#[test]
fn unit_grant_covers_only_that_unit() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/0",
        &format!("secret-grant {id} -r {rel} --unit b/1\n"),
    );
    on(&mut p, "b/1", &format!("run yes secret-get {id} pass\n"));
    on(&mut p, "b/0", &format!("run no secret-get {id} pass\n"));
    assert_eq!(p.result("yes").0, "one\n");
    assert_eq!(p.result("no").1, "ERROR permission denied\n");
    on(
        &mut p,
        "a/0",
        &format!("run app secret-grant {id} -r {rel}\n"),
    );
    assert_eq!(
        p.result("app").1,
        "ERROR any unit level grants need to be revoked before granting access to the corresponding application\n"
    );
}

#[test]
fn a_grant_ends_with_its_relation() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    p.sim.remove_relation("a", "b").unwrap();
    on(&mut p, "b/0", &format!("run gone secret-get {id}\n"));
    assert_eq!(p.result("gone").1, "ERROR permission denied\n");
}

#[test]
fn secret_changed_goes_to_every_tracking_reader_including_the_owner() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "--label db-pass pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(
        &mut p,
        "b/0",
        &format!("secret-get {id} --label theirs >/dev/null\n"),
    );
    on(&mut p, "b/1", &format!("secret-get {id} >/dev/null\n"));
    on(&mut p, "a/0", &format!("secret-get {id} >/dev/null\n"));
    p.script(
        "secret-changed",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_ID $JUJU_SECRET_LABEL ${JUJU_SECRET_REVISION-unset}\" >> $OUT/changed\n",
    );
    p.clear();
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    let mut changed: Vec<String> = p.read("changed").lines().map(str::to_owned).collect();
    changed.sort();
    assert_eq!(
        changed,
        [
            format!("a/0 secret:{id} db-pass unset"),
            format!("b/0 secret:{id} theirs unset"),
            format!("b/1 secret:{id}  unset"),
        ],
        "a/1 never read it; b/1 has no label of its own and never sees the owner's"
    );
}

#[test]
fn secret_remove_fires_once_per_orphaned_revision() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("secret-get {id} >/dev/null\n"));
    p.script(
        "secret-remove",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_REVISION\" >> $OUT/removed\nsecret-remove $JUJU_SECRET_ID --revision $JUJU_SECRET_REVISION\n",
    );
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    assert_eq!(p.read("removed"), "", "b/0 still tracks revision 1");
    on(
        &mut p,
        "b/0",
        &format!("secret-get {id} --refresh >/dev/null\n"),
    );
    assert_eq!(p.read("removed"), "a/0 1\n");
    let revs: Vec<u32> = p.sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .flat_map(|s| s.revisions.keys().copied())
            .collect()
    });
    assert_eq!(revs, [2], "the hook removed revision 1");
    // With no reader at all, a new revision orphans the previous one at once.
    let lone = add(&mut p, "k-ey=one");
    on(&mut p, "a/0", &format!("secret-set {lone} k-ey=two\n"));
    assert_eq!(p.read("removed"), "a/0 1\na/0 1\n");
}

#[test]
fn removing_a_whole_secret_fires_no_consumer_hook() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("secret-get {id} >/dev/null\n"));
    p.clear();
    on(&mut p, "a/0", &format!("secret-remove {id}\n"));
    assert!(secret_hooks(&p).is_empty(), "{:?}", secret_hooks(&p));
    on(&mut p, "b/0", &format!("run gone secret-get {id}\n"));
    assert_eq!(
        p.result("gone").1,
        format!("ERROR secret \"{id}\" not found\n")
    );
}

#[test]
fn rotate_fires_on_the_leader_and_repeats_until_a_new_revision() {
    let (mut p, _) = setup();
    let id = add(&mut p, "--rotate hourly --label r pass=one");
    p.script(
        "secret-rotate",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_ID $JUJU_SECRET_LABEL ${JUJU_SECRET_REVISION-unset}\" >> $OUT/rotated\n",
    );
    p.sim.advance_time(Duration::from_secs(3599)).unwrap();
    assert_eq!(p.read("rotated"), "");
    p.sim.advance_time(Duration::from_secs(1)).unwrap();
    assert_eq!(p.read("rotated"), format!("a/0 secret:{id} r unset\n"));
    p.sim.advance_time(Duration::from_secs(300)).unwrap();
    assert_eq!(p.read("rotated").lines().count(), 2, "retried after 5 min");
    p.script(
        "secret-rotate",
        &format!("secret-set {id} pass=rotated\necho x >> $OUT/rotated\n"),
    );
    p.sim.advance_time(Duration::from_secs(300)).unwrap();
    assert_eq!(p.read("rotated").lines().count(), 3);
    p.sim.advance_time(Duration::from_secs(3000)).unwrap();
    assert_eq!(
        p.read("rotated").lines().count(),
        3,
        "next rotation an hour after the new revision"
    );
}

#[test]
fn expired_fires_with_revision_and_repeats_until_removed() {
    let (mut p, _) = setup();
    let id = add(&mut p, "--expire 1h pass=one");
    on(
        &mut p,
        "a/0",
        &format!("secret-set {id} pass=two --expire 1h\n"),
    );
    p.script(
        "secret-expired",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_REVISION\" >> $OUT/expired\n",
    );
    p.sim.advance_time(Duration::from_secs(3600)).unwrap();
    assert_eq!(p.read("expired"), "a/0 2\n");
    p.sim.advance_time(Duration::from_secs(300)).unwrap();
    assert_eq!(p.read("expired"), "a/0 2\na/0 2\n");
    p.script(
        "secret-expired",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_REVISION\" >> $OUT/expired\nsecret-remove $JUJU_SECRET_ID --revision $JUJU_SECRET_REVISION\n",
    );
    p.sim.advance_time(Duration::from_secs(300)).unwrap();
    p.sim.advance_time(Duration::from_secs(3600)).unwrap();
    assert_eq!(p.read("expired").lines().count(), 3);
}

#[test]
fn secret_env_vars_only_in_secret_hooks() {
    let (mut p, _) = setup();
    let rec = on(&mut p, "a/0", "true\n");
    assert!(rec.env.iter().all(|(k, _)| !k.starts_with("JUJU_SECRET_")));
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-get {id} >/dev/null\n"));
    p.script(
        "secret-changed",
        "secret-get $JUJU_SECRET_ID --refresh >/dev/null\n",
    );
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    let changed = p
        .sim
        .records()
        .iter()
        .rev()
        .find(|r| r.hook == "secret-changed")
        .cloned()
        .unwrap();
    assert_eq!(
        changed.env_var("JUJU_SECRET_ID"),
        Some(format!("secret:{id}").as_str())
    );
    assert_eq!(changed.env_var("JUJU_SECRET_LABEL"), Some(""));
    assert_eq!(changed.env_var("JUJU_SECRET_REVISION"), None);
    let removed = p
        .sim
        .records()
        .iter()
        .rev()
        .find(|r| r.hook == "secret-remove")
        .cloned()
        .unwrap();
    assert_eq!(removed.env_var("JUJU_SECRET_REVISION"), Some("1"));
}

#[test]
fn info_get_shape() {
    let (mut p, rel) = setup();
    let id = add(
        &mut p,
        "--label db-pass --description db --expire 2030-01-01T06:06:06Z pass=x",
    );
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(
        &mut p,
        "a/0",
        &format!(
            "run info secret-info-get {id} --format=json\nrun yaml secret-info-get --label db-pass\n"
        ),
    );
    assert_eq!(
        p.result("info").0,
        format!(
            "{{\"{id}\":{{\"revision\":1,\"label\":\"db-pass\",\"owner\":\"application\",\"description\":\"db\",\"rotation\":\"never\",\"expiry\":\"2030-01-01T06:06:06Z\",\"access\":[{{\"target\":\"application-b\",\"scope\":\"relation-b.backend#a.db\",\"role\":\"view\"}}]}}}}\n"
        )
    );
    assert_eq!(
        p.result("yaml").0,
        format!(
            "{id}:\n  revision: 1\n  label: db-pass\n  owner: application\n  description: db\n  rotation: never\n  expiry: 2030-01-01T06:06:06Z\n  access:\n  - target: application-b\n    scope: relation-b.backend#a.db\n    role: view\n"
        )
    );
}

#[test]
fn secret_ids_prints_null_when_none() {
    let (mut p, _) = setup();
    on(&mut p, "a/0", "run none secret-ids --format=json\n");
    assert_eq!(p.result("none").0, "null\n");
    let id = add(&mut p, "pass=x");
    on(
        &mut p,
        "a/0",
        "run one secret-ids --format=json\nrun smart secret-ids\n",
    );
    assert_eq!(p.result("one").0, format!("[\"{id}\"]\n"));
    assert_eq!(p.result("smart").0, format!("{id}\n"));
}

#[test]
fn non_owner_changes_fail_at_commit_and_fail_the_hook() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(
        &mut p,
        "a/1",
        &format!("run set secret-set {id} pass=two\nrelation-set -r {rel} k=v\n"),
    );
    assert_eq!(p.result("set").2, 0, "secret-set itself succeeds");
    let rec = p
        .sim
        .records()
        .iter()
        .rev()
        .find(|r| r.unit == "a/1")
        .cloned()
        .unwrap();
    assert!(!rec.succeeded(), "{rec:?}");
    assert_eq!(
        rec.commit_error.as_deref(),
        Some("updating secrets: \"a/1\" is not leader of \"a\"")
    );
    assert!(p.sim.is_error("a/1"));
    assert_eq!(latest(&p, &id), Some(1));
    assert_eq!(
        p.sim.unit_bag(rel, "a/1").get("k"),
        None,
        "relation data not committed"
    );
    assert!(
        p.sim
            .logs()
            .iter()
            .any(|l| l.message.contains("\"a/1\" is not leader of \"a\""))
    );
}

#[test]
fn add_and_remove_in_one_hook_is_a_no_op() {
    let (mut p, _) = setup();
    on(
        &mut p,
        "a/0",
        "id=$(secret-add pass=x)\nsecret-remove $id\n",
    );
    assert!(!p.sim.is_error("a/0"));
    assert_eq!(p.sim.with_model(|m| m.secrets.secrets.len()), 0);
}

#[test]
fn owner_label_via_secret_get_renames_and_consumer_label_is_private() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "--label old pass=one");
    on(
        &mut p,
        "a/0",
        &format!("secret-grant {id} -r {rel}\nsecret-get {id} --label new >/dev/null\n"),
    );
    on(
        &mut p,
        "b/0",
        &format!("secret-get {id} --label mine >/dev/null\nrun theirs secret-get --label new\n"),
    );
    on(
        &mut p,
        "a/0",
        "run owner secret-info-get --label new --format=json\n",
    );
    assert!(p.result("owner").0.contains("\"label\":\"new\""));
    assert_eq!(
        p.result("theirs"),
        (
            String::new(),
            "ERROR consumer label \"new\" not found\n".into(),
            1
        )
    );
}

#[test]
fn secret_get_formats_and_key_errors() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=s3cret user=admin");
    on(
        &mut p,
        "a/0",
        &format!(
            "run yaml secret-get {id}\nrun json secret-get {id} --format=json\nrun nokey secret-get {id} nope\nrun smart secret-get {id} --format=smart\nrun nothing secret-get\n"
        ),
    );
    assert_eq!(p.result("yaml").0, "pass: s3cret\nuser: admin\n");
    assert_eq!(
        p.result("json").0,
        "{\"pass\":\"s3cret\",\"user\":\"admin\"}\n"
    );
    assert_eq!(
        p.result("nokey"),
        (
            String::new(),
            "ERROR secret key value \"nope\" not found\n".into(),
            1
        )
    );
    assert_eq!(p.result("smart").2, 2);
    assert_eq!(
        p.result("nothing"),
        (
            String::new(),
            "ERROR require either a secret URI or label\n".into(),
            2
        )
    );
}

#[test]
fn secret_hooks_run_before_queued_relation_hooks() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("secret-get {id} >/dev/null\n"));
    p.clear();
    // One commit queues backend-relation-changed and secret-changed on b/0.
    on(
        &mut p,
        "a/0",
        &format!("relation-set -r {rel} k=v\nsecret-set {id} pass=two\n"),
    );
    let b0: Vec<String> = p
        .hooks()
        .into_iter()
        .filter(|l| l.starts_with("b/0 "))
        .collect();
    assert_eq!(
        b0,
        ["b/0 secret-changed", "b/0 backend-relation-changed a/0"]
    );
}

#[test]
fn owner_hooks_are_skipped_once_leadership_moved() {
    let (mut p, _) = setup();
    let id = add(&mut p, "pass=one");
    p.sim.set_leader("a/1").unwrap();
    p.clear();
    let sid = juju_sim::secrets::parse_uri(&id).unwrap();
    p.sim.queue_hook("a/0", Hook::SecretRotate(sid.clone()));
    p.sim.queue_hook("a/1", Hook::SecretRotate(sid));
    p.sim.settle().unwrap();
    assert_eq!(secret_hooks(&p), ["a/1 secret-rotate"]);
}

#[test]
fn a_removed_reader_no_longer_holds_its_revision() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=one");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("secret-get {id} >/dev/null\n"));
    p.script(
        "secret-remove",
        "echo \"$JUJU_UNIT_NAME $JUJU_SECRET_REVISION\" >> $OUT/removed\n",
    );
    on(&mut p, "a/0", &format!("secret-set {id} pass=two\n"));
    assert_eq!(p.read("removed"), "");
    p.sim.remove_unit("b/0").unwrap();
    assert_eq!(p.read("removed"), "a/0 1\n");
}

#[test]
fn owner_adds_grants_and_publishes_in_one_hook_consumer_reads_on_relation_changed() {
    let (mut p, rel) = setup();
    p.script(
        "backend-relation-changed",
        "id=$(relation-get --app secret-id a)\nif [ -n \"$id\" ]; then u=$(echo $JUJU_UNIT_NAME | tr / -); run got-$u secret-get \"$id\" pass; fi\n",
    );
    on(
        &mut p,
        "a/0",
        &format!(
            "id=$(secret-add pass=key1)\nsecret-grant \"$id\" -r {rel}\nrelation-set -r {rel} --app secret-id=\"$id\"\n"
        ),
    );
    assert_eq!(p.result("got-b-0").0, "key1\n");
    assert_eq!(p.result("got-b-1").0, "key1\n");
}

#[test]
fn an_action_publishes_a_new_revision_and_readers_follow() {
    let (mut p, rel) = setup();
    let id = add(&mut p, "pass=key1");
    on(&mut p, "a/0", &format!("secret-grant {id} -r {rel}\n"));
    on(&mut p, "b/0", &format!("secret-get {id} >/dev/null\n"));
    p.script(
        "secret-changed",
        "u=$(echo $JUJU_UNIT_NAME | tr / -)\nrun new-$u secret-get $JUJU_SECRET_ID pass --refresh\n",
    );
    p.script(
        "secret-remove",
        "secret-remove $JUJU_SECRET_ID --revision $JUJU_SECRET_REVISION\n",
    );
    p.script("do", &format!("secret-set {id} pass=key2\n"));
    let result = p
        .sim
        .run_action("a/0", "do", serde_json::json!({}))
        .unwrap();
    assert_eq!(result.status, "completed");
    assert_eq!(p.result("new-b-0").0, "key2\n");
    let revs: Vec<u32> = p.sim.with_model(|m| {
        m.secrets
            .secrets
            .values()
            .flat_map(|s| s.revisions.keys().copied())
            .collect()
    });
    assert_eq!(revs, [2], "revision 1 removed once nobody tracks it");
}
