//! Test-only extensions (not Juju): per-unit env, PATH dirs and command prefix.

mod common;
use common::Probe;
use juju_sim::UnitExtras;

#[test]
fn extra_env_is_templated_per_unit() {
    let mut p = Probe::new();
    p.script(
        "install",
        "run root-$(echo $JUJU_UNIT_NAME | tr / -) printenv ROOT\n",
    );
    p.sim
        .deploy(p.spec("a", 2).env("ROOT", "/srv/{unit_dash}/{n}"))
        .unwrap();
    assert_eq!(p.result("root-a-0").0, "/srv/a-0/0\n");
    assert_eq!(p.result("root-a-1").0, "/srv/a-1/1\n");
}

#[test]
fn extra_path_comes_after_the_tools_dir() {
    let mut p = Probe::new();
    let bin = p.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("fake-tool");
    std::fs::write(&fake, "#!/bin/sh\necho fake says hi\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.script("install", "run fake fake-tool\nrun path printenv PATH\n");
    p.sim.deploy(p.spec("a", 1).path_dir(&bin)).unwrap();
    assert_eq!(p.result("fake").0, "fake says hi\n");
    let path = p.result("path").0;
    let tools = p.sim.tools_dir().display().to_string();
    assert!(
        path.starts_with(&format!("{tools}:{}:", bin.display())),
        "{path}"
    );
}

#[test]
fn command_prefix_wraps_dispatch() {
    let mut p = Probe::new();
    p.script("install", "run wrapped printenv WRAPPED\n");
    p.sim
        .deploy(
            p.spec("a", 1)
                .command_prefix(&["/usr/bin/env", "WRAPPED=yes"]),
        )
        .unwrap();
    assert_eq!(p.result("wrapped").0, "yes\n");
}

#[test]
fn extras_fn_and_set_unit_extras() {
    let mut p = Probe::new();
    p.script("any", "run x-$(echo $JUJU_UNIT_NAME | tr / -) printenv X\n");
    p.sim
        .deploy(p.spec("a", 1).extras_fn(|unit| UnitExtras {
            env: [("X".to_owned(), format!("fn-{unit}"))].into(),
            ..UnitExtras::default()
        }))
        .unwrap();
    assert_eq!(p.result("x-a-0").0, "fn-a/0\n");
    let mut extras = p.sim.with_model(|m| m.units["a/0"].extras.clone());
    extras.env.insert("X".into(), "changed".into());
    p.sim.set_unit_extras("a/0", extras).unwrap();
    p.sim.update_status(None).unwrap();
    assert_eq!(p.result("x-a-0").0, "changed\n");
}
