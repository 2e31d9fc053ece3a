//! `HookContext::from_env_map`: every hook kind of reference §1–§4 and every rejected environment.

use juju_runtime::{
    ActionEvent, ContextError, Event, HookContext, RelationEvent, RelationId, SecretEvent,
    SecretId, StorageEvent,
};
use std::collections::HashMap;
use std::path::PathBuf;

/// The variables Juju sets for every hook, for unit `slurmd/0`, hook `name`.
fn base(name: &str) -> HashMap<String, String> {
    [
        ("JUJU_DISPATCH_PATH", format!("hooks/{name}")),
        ("JUJU_HOOK_NAME", name.to_owned()),
        ("JUJU_UNIT_NAME", "slurmd/0".to_owned()),
        ("JUJU_MODEL_NAME", "hpc".to_owned()),
        (
            "JUJU_MODEL_UUID",
            "6d8b0d5c-0000-4000-8000-000000000000".to_owned(),
        ),
        (
            "JUJU_CHARM_DIR",
            "/var/lib/juju/agents/unit-slurmd-0/charm".to_owned(),
        ),
        ("JUJU_VERSION", "3.6.8".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

fn with(mut env: HashMap<String, String>, pairs: &[(&str, &str)]) -> HashMap<String, String> {
    for (k, v) in pairs {
        env.insert((*k).to_owned(), (*v).to_owned());
    }
    env
}

fn without(mut env: HashMap<String, String>, key: &str) -> HashMap<String, String> {
    env.remove(key);
    env
}

/// A relation hook environment on endpoint `slurmctld`, relation id 3, remote app `slurmctld`.
fn relation(kind: &str, remote_unit: &str) -> HashMap<String, String> {
    with(
        base(&format!("slurmctld-relation-{kind}")),
        &[
            ("JUJU_RELATION", "slurmctld"),
            ("JUJU_RELATION_ID", "slurmctld:3"),
            ("JUJU_REMOTE_APP", "slurmctld"),
            ("JUJU_REMOTE_UNIT", remote_unit),
        ],
    )
}

fn action(name: &str) -> HashMap<String, String> {
    with(
        without(base("x"), "JUJU_HOOK_NAME"),
        &[
            ("JUJU_DISPATCH_PATH", &format!("actions/{name}")),
            ("JUJU_ACTION_NAME", name),
            ("JUJU_ACTION_UUID", "2"),
            ("JUJU_ACTION_TAG", "action-2"),
        ],
    )
}

fn parse(env: &HashMap<String, String>) -> Result<HookContext, ContextError> {
    HookContext::from_env_map(env)
}

fn event(env: &HashMap<String, String>) -> Event {
    parse(env).unwrap().event
}

fn rel_event(remote_unit: Option<&str>, departing: Option<&str>) -> RelationEvent {
    RelationEvent {
        relation: RelationId::new("slurmctld", 3),
        remote_app: "slurmctld".to_owned(),
        remote_unit: remote_unit.map(str::to_owned),
        departing_unit: departing.map(str::to_owned),
    }
}

#[test]
fn common_fields_are_parsed() {
    let ctx = parse(&base("install")).unwrap();
    assert_eq!(ctx.unit_name, "slurmd/0");
    assert_eq!(ctx.app_name, "slurmd");
    assert_eq!(ctx.model_name, "hpc");
    assert_eq!(
        ctx.charm_dir,
        PathBuf::from("/var/lib/juju/agents/unit-slurmd-0/charm")
    );
    assert_eq!(ctx.event, Event::Install);
}

#[test]
fn simple_hooks() {
    let cases = [
        ("install", Event::Install),
        ("start", Event::Start),
        ("stop", Event::Stop),
        ("remove", Event::Remove),
        ("config-changed", Event::ConfigChanged),
        ("upgrade-charm", Event::UpgradeCharm),
        ("update-status", Event::UpdateStatus),
        ("leader-elected", Event::LeaderElected),
        ("leader-settings-changed", Event::LeaderSettingsChanged),
        ("post-series-upgrade", Event::PostSeriesUpgrade),
    ];
    for (name, expected) in cases {
        let ev = event(&base(name));
        assert_eq!(ev, expected, "{name}");
        assert_eq!(ev.name(), name);
        assert_eq!(ev.dispatch_path(), format!("hooks/{name}"));
    }
}

#[test]
fn pre_series_upgrade_carries_target_base() {
    let env = with(
        base("pre-series-upgrade"),
        &[("JUJU_TARGET_BASE", "ubuntu@24.04")],
    );
    assert_eq!(
        event(&env),
        Event::PreSeriesUpgrade {
            target_base: Some("ubuntu@24.04".to_owned())
        }
    );
}

#[test]
fn relation_created_and_broken_have_no_remote_unit() {
    assert_eq!(
        event(&relation("created", "")),
        Event::RelationCreated(rel_event(None, None))
    );
    assert_eq!(
        event(&relation("broken", "")),
        Event::RelationBroken(rel_event(None, None))
    );
    // Absent is tolerated too (only a non-empty value contradicts Juju).
    let env = without(relation("broken", ""), "JUJU_REMOTE_UNIT");
    assert_eq!(event(&env), Event::RelationBroken(rel_event(None, None)));
}

#[test]
fn relation_joined_and_changed_with_remote_unit() {
    assert_eq!(
        event(&relation("joined", "slurmctld/0")),
        Event::RelationJoined(rel_event(Some("slurmctld/0"), None))
    );
    assert_eq!(
        event(&relation("changed", "slurmctld/0")),
        Event::RelationChanged(rel_event(Some("slurmctld/0"), None))
    );
}

#[test]
fn app_bag_relation_changed_has_empty_remote_unit() {
    assert_eq!(
        event(&relation("changed", "")),
        Event::RelationChanged(rel_event(None, None))
    );
}

#[test]
fn relation_departed_with_departing_unit() {
    let env = with(
        relation("departed", "slurmctld/1"),
        &[("JUJU_DEPARTING_UNIT", "slurmctld/1")],
    );
    assert_eq!(
        event(&env),
        Event::RelationDeparted(rel_event(Some("slurmctld/1"), Some("slurmctld/1")))
    );
    // The local unit dying: the departing unit is the local one.
    let env = with(
        relation("departed", "slurmctld/0"),
        &[("JUJU_DEPARTING_UNIT", "slurmd/0")],
    );
    assert_eq!(
        event(&env),
        Event::RelationDeparted(rel_event(Some("slurmctld/0"), Some("slurmd/0")))
    );
}

#[test]
fn endpoint_with_dashes_and_relation_in_its_name() {
    let env = with(
        base("my-relation-db-relation-joined"),
        &[
            ("JUJU_RELATION", "my-relation-db"),
            ("JUJU_RELATION_ID", "my-relation-db:12"),
            ("JUJU_REMOTE_APP", "pg"),
            ("JUJU_REMOTE_UNIT", "pg/4"),
        ],
    );
    let Event::RelationJoined(rel) = event(&env) else {
        panic!("not a joined event");
    };
    assert_eq!(rel.relation, RelationId::new("my-relation-db", 12));
    assert_eq!(rel.remote_unit.as_deref(), Some("pg/4"));
}

#[test]
fn action_event() {
    let ctx = parse(&action("detect-gpus")).unwrap();
    assert_eq!(
        ctx.event,
        Event::Action(ActionEvent {
            name: "detect-gpus".to_owned(),
            id: "2".to_owned()
        })
    );
    assert_eq!(ctx.event.dispatch_path(), "actions/detect-gpus");
    // Present-but-empty JUJU_HOOK_NAME is what some harnesses export; Juju leaves it unset.
    let env = with(action("detect-gpus"), &[("JUJU_HOOK_NAME", "")]);
    assert!(parse(&env).is_ok());
}

#[test]
fn storage_hooks() {
    let env = with(
        base("data-storage-attached"),
        &[
            ("JUJU_STORAGE_ID", "data/0"),
            ("JUJU_STORAGE_LOCATION", "/srv/data"),
            ("JUJU_STORAGE_KIND", "filesystem"),
        ],
    );
    assert_eq!(
        event(&env),
        Event::StorageAttached(StorageEvent {
            name: "data".to_owned(),
            id: "data/0".to_owned(),
            location: "/srv/data".to_owned(),
            kind: "filesystem".to_owned(),
        })
    );
    let env = with(
        base("data-storage-detaching"),
        &[("JUJU_STORAGE_ID", "data/1")],
    );
    assert!(matches!(event(&env), Event::StorageDetaching(s) if s.id == "data/1"));
}

#[test]
fn secret_hooks() {
    let env = with(
        base("secret-changed"),
        &[
            ("JUJU_SECRET_ID", "secret:cu5t2qvmp25c77fh5ce0"),
            ("JUJU_SECRET_LABEL", ""),
        ],
    );
    assert_eq!(
        event(&env),
        Event::SecretChanged(SecretEvent {
            id: SecretId::parse("cu5t2qvmp25c77fh5ce0").unwrap(),
            label: None,
            revision: None,
        })
    );
    let env = with(
        base("secret-remove"),
        &[
            ("JUJU_SECRET_ID", "secret://model-uuid/d0000000000000000003"),
            ("JUJU_SECRET_LABEL", "db"),
            ("JUJU_SECRET_REVISION", "3"),
        ],
    );
    assert_eq!(
        event(&env),
        Event::SecretRemove(SecretEvent {
            id: SecretId::parse("secret:d0000000000000000003").unwrap(),
            label: Some("db".to_owned()),
            revision: Some(3),
        })
    );
    let env = with(
        base("secret-expired"),
        &[("JUJU_SECRET_ID", "secret:d0000000000000000003")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::MissingVar {
            var: "JUJU_SECRET_REVISION",
            ..
        })
    ));
    let env = with(
        base("secret-rotate"),
        &[("JUJU_SECRET_ID", "secret:d0000000000000000003")],
    );
    assert!(matches!(event(&env), Event::SecretRotate(_)));
}

/// A secret hook whose `JUJU_SECRET_ID` is not a secret id fails at the boundary, with an
/// error that names the variable and keeps the parse error as its source.
#[test]
fn a_malformed_secret_id_is_refused_naming_the_variable() {
    for hook in [
        "secret-changed",
        "secret-rotate",
        "secret-remove",
        "secret-expired",
    ] {
        let env = with(
            base(hook),
            &[
                ("JUJU_SECRET_ID", "secret:x"),
                ("JUJU_SECRET_REVISION", "3"),
            ],
        );
        let err = parse(&env).unwrap_err();
        assert!(
            matches!(&err, ContextError::InvalidSecretId { var: "JUJU_SECRET_ID", hook: h, source }
                if h == hook && source.given == "secret:x"),
            "{hook}: {err:?}"
        );
        assert!(err.to_string().contains("JUJU_SECRET_ID"), "{err}");
        assert!(std::error::Error::source(&err).is_some());
    }
}

#[test]
fn dispatch_path_from_dollar_zero_fallback() {
    let env = with(
        base("install"),
        &[(
            "JUJU_DISPATCH_PATH",
            "/var/lib/juju/agents/unit-slurmd-0/charm/hooks/install",
        )],
    );
    assert_eq!(event(&env), Event::Install);
}

// ---- errors ----

#[test]
fn missing_dispatch_path() {
    let err = parse(&without(base("install"), "JUJU_DISPATCH_PATH")).unwrap_err();
    assert_eq!(err, ContextError::NotInHook);
    assert!(err.to_string().contains("JUJU_DISPATCH_PATH is not set"));
    // Empty counts as unset.
    let env = with(base("install"), &[("JUJU_DISPATCH_PATH", "")]);
    assert_eq!(parse(&env).unwrap_err(), ContextError::NotInHook);
}

#[test]
fn bad_dispatch_paths() {
    for value in [
        "install",
        "dispatch",
        "hooks/",
        "things/install",
        "./dispatch",
    ] {
        let env = with(base("install"), &[("JUJU_DISPATCH_PATH", value)]);
        assert!(
            matches!(parse(&env), Err(ContextError::BadDispatchPath { .. })),
            "{value}"
        );
    }
}

#[test]
fn missing_common_vars() {
    for var in [
        "JUJU_UNIT_NAME",
        "JUJU_MODEL_NAME",
        "JUJU_CHARM_DIR",
        "JUJU_HOOK_NAME",
    ] {
        let err = parse(&without(base("install"), var)).unwrap_err();
        assert!(
            matches!(&err, ContextError::MissingVar { var: v, hook } if *v == var && hook == "install"),
            "{var}: {err}"
        );
    }
}

#[test]
fn legacy_charm_dir_is_accepted() {
    let env = with(
        without(base("install"), "JUJU_CHARM_DIR"),
        &[("CHARM_DIR", "/c")],
    );
    assert_eq!(parse(&env).unwrap().charm_dir, PathBuf::from("/c"));
}

#[test]
fn bad_unit_name() {
    for unit in ["slurmd", "slurmd/", "/0", "slurmd/x", "slurmd/0/1"] {
        let env = with(base("install"), &[("JUJU_UNIT_NAME", unit)]);
        assert!(
            matches!(
                parse(&env),
                Err(ContextError::InvalidVar {
                    var: "JUJU_UNIT_NAME",
                    ..
                })
            ),
            "{unit}"
        );
    }
}

#[test]
fn hook_name_contradicts_dispatch_path() {
    let env = with(base("install"), &[("JUJU_HOOK_NAME", "start")]);
    let err = parse(&env).unwrap_err();
    assert!(matches!(err, ContextError::HookNameMismatch { .. }));
    assert!(err.to_string().contains("\"start\""));
}

#[test]
fn unknown_hook() {
    let err = parse(&base("frobnicate")).unwrap_err();
    assert_eq!(
        err,
        ContextError::UnknownHook {
            name: "frobnicate".to_owned()
        }
    );
    // A relation suffix without an endpoint is not a relation hook.
    assert!(matches!(
        parse(&base("-relation-joined")),
        Err(ContextError::UnknownHook { .. })
    ));
}

#[test]
fn relation_hook_without_relation_id() {
    let err = parse(&without(
        relation("changed", "slurmctld/0"),
        "JUJU_RELATION_ID",
    ))
    .unwrap_err();
    assert!(matches!(
        err,
        ContextError::MissingVar {
            var: "JUJU_RELATION_ID",
            ..
        }
    ));
}

#[test]
fn relation_hook_without_relation_or_remote_app() {
    for var in ["JUJU_RELATION", "JUJU_REMOTE_APP"] {
        let err = parse(&without(relation("joined", "slurmctld/0"), var)).unwrap_err();
        assert!(
            matches!(&err, ContextError::MissingVar { var: v, .. } if *v == var),
            "{err}"
        );
    }
}

#[test]
fn relation_id_endpoint_differs_from_hook_prefix() {
    let env = with(
        relation("changed", "slurmctld/0"),
        &[("JUJU_RELATION_ID", "other:3")],
    );
    let err = parse(&env).unwrap_err();
    assert!(matches!(
        err,
        ContextError::PrefixMismatch {
            var: "JUJU_RELATION_ID",
            ..
        }
    ));
    let env = with(
        relation("changed", "slurmctld/0"),
        &[("JUJU_RELATION", "other")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::PrefixMismatch {
            var: "JUJU_RELATION",
            ..
        })
    ));
}

#[test]
fn malformed_relation_id() {
    for value in [
        "slurmctld",
        "slurmctld:",
        "slurmctld:x",
        ":3",
        "slurmctld:-1",
    ] {
        let env = with(
            relation("changed", "slurmctld/0"),
            &[("JUJU_RELATION_ID", value)],
        );
        assert!(
            matches!(
                parse(&env),
                Err(ContextError::InvalidVar {
                    var: "JUJU_RELATION_ID",
                    ..
                })
            ),
            "{value}"
        );
    }
}

#[test]
fn joined_and_departed_need_a_remote_unit() {
    let err = parse(&relation("joined", "")).unwrap_err();
    assert!(matches!(
        err,
        ContextError::MissingVar {
            var: "JUJU_REMOTE_UNIT",
            ..
        }
    ));
    let env = with(
        relation("departed", ""),
        &[("JUJU_DEPARTING_UNIT", "slurmctld/1")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::MissingVar {
            var: "JUJU_REMOTE_UNIT",
            ..
        })
    ));
}

#[test]
fn changed_needs_remote_unit_present_even_if_empty() {
    let env = without(relation("changed", ""), "JUJU_REMOTE_UNIT");
    assert!(matches!(
        parse(&env),
        Err(ContextError::MissingVar {
            var: "JUJU_REMOTE_UNIT",
            ..
        })
    ));
}

#[test]
fn created_and_broken_reject_a_remote_unit() {
    for kind in ["created", "broken"] {
        let err = parse(&relation(kind, "slurmctld/0")).unwrap_err();
        assert!(
            matches!(
                err,
                ContextError::UnexpectedVar {
                    var: "JUJU_REMOTE_UNIT",
                    ..
                }
            ),
            "{kind}"
        );
    }
}

#[test]
fn remote_unit_of_another_app() {
    let err = parse(&relation("joined", "mysql/0")).unwrap_err();
    assert_eq!(
        err,
        ContextError::RemoteUnitAppMismatch {
            unit: "mysql/0".to_owned(),
            app: "slurmctld".to_owned()
        }
    );
    assert!(matches!(
        parse(&relation("joined", "garbage")),
        Err(ContextError::InvalidVar {
            var: "JUJU_REMOTE_UNIT",
            ..
        })
    ));
}

#[test]
fn departing_unit_rules() {
    let err = parse(&relation("departed", "slurmctld/1")).unwrap_err();
    assert!(matches!(
        err,
        ContextError::MissingVar {
            var: "JUJU_DEPARTING_UNIT",
            ..
        }
    ));
    let env = with(
        relation("changed", "slurmctld/1"),
        &[("JUJU_DEPARTING_UNIT", "slurmctld/1")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::UnexpectedVar {
            var: "JUJU_DEPARTING_UNIT",
            ..
        })
    ));
}

#[test]
fn action_with_hook_name() {
    let env = with(action("detect-gpus"), &[("JUJU_HOOK_NAME", "install")]);
    let err = parse(&env).unwrap_err();
    assert!(matches!(err, ContextError::HookNameInAction { .. }));
    assert!(err.to_string().contains("Juju leaves it empty for actions"));
}

#[test]
fn action_name_mismatch_and_missing_action_vars() {
    let env = with(action("detect-gpus"), &[("JUJU_ACTION_NAME", "other")]);
    assert!(matches!(
        parse(&env),
        Err(ContextError::ActionNameMismatch { .. })
    ));
    for var in ["JUJU_ACTION_NAME", "JUJU_ACTION_UUID"] {
        let err = parse(&without(action("detect-gpus"), var)).unwrap_err();
        assert!(
            matches!(&err, ContextError::MissingVar { var: v, hook } if *v == var && hook == "actions/detect-gpus"),
            "{err}"
        );
    }
}

#[test]
fn storage_id_mismatch() {
    let env = with(
        base("data-storage-attached"),
        &[("JUJU_STORAGE_ID", "logs/0")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::PrefixMismatch {
            var: "JUJU_STORAGE_ID",
            ..
        })
    ));
    let env = with(
        base("data-storage-attached"),
        &[("JUJU_STORAGE_ID", "data")],
    );
    assert!(matches!(
        parse(&env),
        Err(ContextError::InvalidVar {
            var: "JUJU_STORAGE_ID",
            ..
        })
    ));
}

#[test]
fn relation_id_round_trip() {
    let id: RelationId = "slurmd:17".parse().unwrap();
    assert_eq!(id, RelationId::new("slurmd", 17));
    assert_eq!(id.to_string(), "slurmd:17");
    assert!(
        "a:b:3"
            .parse::<RelationId>()
            .is_ok_and(|r| r.endpoint == "a:b")
    );
    assert!("17".parse::<RelationId>().is_err());
}
