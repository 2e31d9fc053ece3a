//! Slurm is asked before it is told: for every class of value in issue 11, what the charm's
//! overrides (`partition-config`, `node-config`, `slurm-conf-parameters`; relation data and
//! `slurmd -C` go through the same `Partition::set` / `NodeConf::set`) refuse, the real
//! slurmctld refuses too (the raw value spliced into a file, bypassing the model), and what
//! they accept, rendered by the model, the real slurmctld runs on. Judged by Slurm 22.05,
//! 24.11 and 26.05 (`tests/slurmctld_oracle_support.rs`).

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use oracle::{Oracle, Verdict};
use slurm_charms::slurm::*;

/// Values Slurm's parser refuses (slurmctld exits with `Unable to process configuration
/// file`), one per class: durations, 16/32/64-bit integers, booleans, enums, unknown keys.
const REFUSED: &[(OverrideScope, &str)] = &[
    // Durations (parse_time.c).
    (OverrideScope::Partition, "MaxTime=1hour"),
    (OverrideScope::Partition, "MaxTime=-5"),
    (OverrideScope::Partition, "MaxTime=1:2:3:4"),
    (OverrideScope::Partition, "DefaultTime=2days"),
    (OverrideScope::SlurmConf, "PriorityDecayHalfLife=1week"),
    (OverrideScope::SlurmConf, "PriorityMaxAge=-3"),
    // Integers: not a number, negative, over the width.
    (OverrideScope::Partition, "DefMemPerCPU=abc"),
    (OverrideScope::Partition, "DefMemPerGPU=1.5"),
    (OverrideScope::Partition, "PriorityTier=99999999"),
    (OverrideScope::Partition, "PriorityJobFactor=70000"),
    (OverrideScope::Partition, "MaxNodes=99999999999"),
    (OverrideScope::Partition, "MaxCPUsPerNode=99999999999"),
    (OverrideScope::Partition, "MinNodes=abc"),
    (OverrideScope::Partition, "GraceTime=-1"),
    (OverrideScope::Partition, "ResumeTimeout=70000"),
    (OverrideScope::Partition, "SuspendTimeout=-1"),
    (OverrideScope::Partition, "MaxMemPerNode=-1"),
    (OverrideScope::Partition, "SuspendTime=99999999999"),
    (OverrideScope::Node, "CPUs=70000"),
    (OverrideScope::Node, "CPUs=4294967295"),
    (OverrideScope::Node, "CoreSpecCount=70000"),
    (OverrideScope::Node, "TmpDisk=4294967296"),
    (OverrideScope::Node, "TmpDisk=99999999999"),
    (OverrideScope::Node, "Boards=70000"),
    (OverrideScope::Node, "CoresPerSocket=65536"),
    (OverrideScope::Node, "SocketsPerBoard=99999"),
    (OverrideScope::Node, "ThreadsPerCore=-1"),
    (OverrideScope::Node, "RealMemory=abc"),
    (OverrideScope::Node, "MemSpecLimit=-1"),
    (OverrideScope::Node, "Weight=4294967296"),
    (OverrideScope::Node, "Sockets=abc"),
    (OverrideScope::SlurmConf, "MaxJobCount=abc"),
    (OverrideScope::SlurmConf, "MinJobAge=-1"),
    (OverrideScope::SlurmConf, "SlurmctldTimeout=70000"),
    (OverrideScope::SlurmConf, "MessageTimeout=abc"),
    (OverrideScope::SlurmConf, "MaxArraySize=99999999999"),
    (OverrideScope::SlurmConf, "SchedulerTimeSlice=-3"),
    // Booleans and enums.
    (OverrideScope::Partition, "LLN=maybe"),
    (OverrideScope::Partition, "Hidden=perhaps"),
    (OverrideScope::Partition, "ExclusiveUser=2"),
    (OverrideScope::Partition, "RootOnly=maybe"),
    (OverrideScope::Partition, "ReqResv=x"),
    (OverrideScope::Partition, "DisableRootJobs=x"),
    (OverrideScope::Partition, "OverSubscribe=sometimes"),
    (OverrideScope::Partition, "PreemptMode=kill"),
    (OverrideScope::Partition, "PreemptMode=GANG,WITHIN"),
    (OverrideScope::SlurmConf, "PreemptMode=SUSPEND"),
    (OverrideScope::Partition, "SelectTypeParameters=CR_CPU"),
    (OverrideScope::Partition, "State=OPEN"),
    (OverrideScope::SlurmConf, "DisableRootJobs=maybe"),
    (OverrideScope::SlurmConf, "PreemptMode=kill"),
    // Rules between keys and removed keys (_validate_and_set_defaults).
    (OverrideScope::SlurmConf, "FirstJobId=100\nMaxJobId=50"),
    (OverrideScope::SlurmConf, "PreemptMode=REQUEUE"),
    (OverrideScope::SlurmConf, "PriorityDecayHalfLife=0"),
    (OverrideScope::SlurmConf, "PreemptType=preempt/qos"),
    // Plugin names and log levels (src/slurm/types/plugin.rs).
    (OverrideScope::SlurmConf, "SchedulerType=sched/bakfill"),
    (OverrideScope::SlurmConf, "SlurmctldDebug=loud"),
    (OverrideScope::SlurmConf, "FastSchedule=2"),
    (OverrideScope::SlurmConf, "VSizeFactor=0388"),
    (OverrideScope::Node, "Port=0"),
    // Unknown keys.
    (OverrideScope::SlurmConf, "MaxJobCont=1000"),
    (OverrideScope::SlurmConf, "FooBar=1"),
    (OverrideScope::Partition, "MaxTme=60"),
    (OverrideScope::Node, "CPU=4"),
];

/// Values the charm accepts; each is rendered by the model and must run.
const ACCEPTED: &[(OverrideScope, &str)] = &[
    (OverrideScope::Partition, "MaxTime=1-12:00:00"),
    (OverrideScope::Partition, "MaxTime=UNLIMITED"),
    (OverrideScope::Partition, "MaxTime=90"),
    (OverrideScope::Partition, "MaxTime=1:30"),
    (OverrideScope::Partition, "MaxTime=-1"),
    (OverrideScope::Partition, "MaxTime=2-"),
    (OverrideScope::Partition, "DefaultTime=30:00 MaxTime=1-0:30"),
    (OverrideScope::Partition, "PriorityTier=65533"),
    (OverrideScope::Partition, "MaxNodes=UNLIMITED"),
    (OverrideScope::Partition, "MaxNodes=4294967293 MinNodes=0"),
    (
        OverrideScope::Partition,
        "LLN=YES Hidden=no ExclusiveUser=false",
    ),
    (OverrideScope::Partition, "OverSubscribe=FORCE:4"),
    (OverrideScope::Partition, "OverSubscribe=EXCLUSIVE"),
    (OverrideScope::Partition, "Shared=YES:2"),
    (OverrideScope::Partition, "PreemptMode=OFF"),
    (
        OverrideScope::Partition,
        "SelectTypeParameters=CR_Core_Memory",
    ),
    (
        OverrideScope::Partition,
        "DefMemPerCPU=2048 MaxMemPerNode=UNLIMITED",
    ),
    (
        OverrideScope::Partition,
        "GraceTime=300 SuspendTime=INFINITE",
    ),
    (OverrideScope::Partition, "OverTimeLimit=UNLIMITED"),
    (OverrideScope::Partition, "State=DRAIN"),
    (OverrideScope::Node, "CPUs=65533"),
    (OverrideScope::Node, "CoreSpecCount=1"),
    (OverrideScope::Node, "TmpDisk=4294967293"),
    (OverrideScope::Node, "Weight=4294967293"),
    (OverrideScope::Node, "MemSpecLimit=500"),
    (OverrideScope::Node, "RealMemory=18446744073709551613"),
    (OverrideScope::SlurmConf, "MaxJobCount=1000 MinJobAge=300"),
    (
        OverrideScope::SlurmConf,
        "maxarraysize=1001\nPriorityDecayHalfLife=7-0",
    ),
    (OverrideScope::SlurmConf, "SlurmctldTimeout=65533"),
];

/// The base cluster with `text` applied the way the charm applies it.
fn model_with(inside: &str, overrides: &[(OverrideScope, &str)]) -> SlurmConf {
    let mut conf = Oracle::base_model(inside);
    for (i, (scope, text)) in overrides.iter().enumerate() {
        let pairs = parse_overrides(text, *scope).expect("accepted override");
        match scope {
            OverrideScope::SlurmConf => {
                for (k, v) in pairs {
                    conf.set_global(&k, &v).expect("global");
                }
            }
            OverrideScope::Partition => {
                let mut p = Partition::new(format!("p{i}").parse().unwrap());
                p.nodes.insert("n1".parse().unwrap());
                for (k, v) in pairs {
                    p.set(&k, &v).expect("partition key");
                }
                conf.partitions.push(p);
            }
            OverrideScope::Node => {
                let name = format!("n{}", i + 100);
                let mut n = Oracle::node(&name);
                for (k, v) in pairs {
                    n.set(&k, &v).expect("node key");
                }
                conf.nodes.push(n);
            }
        }
    }
    conf
}

#[test]
fn each_refused_value_is_refused_by_the_charm_with_the_key_named() {
    for (scope, text) in REFUSED {
        let err = parse_overrides(text, *scope).expect_err(text);
        let key = text.split('=').next().unwrap_or_default();
        assert!(
            err.to_string().contains(key),
            "{text}: the error does not name {key}: {err}"
        );
    }
}

#[test]
fn a_misspelt_key_is_refused_with_the_closest_known_key() {
    let err = parse_overrides("MaxJobCont=1000", OverrideScope::SlurmConf).unwrap_err();
    assert!(
        err.to_string().contains("did you mean MaxJobCount?"),
        "{err}"
    );
    let err = parse_overrides("MaxTme=60", OverrideScope::Partition).unwrap_err();
    assert!(err.to_string().contains("did you mean MaxTime?"), "{err}");
    let err = parse_overrides("MaxJobCount=abc", OverrideScope::SlurmConf).unwrap_err();
    assert!(err.to_string().contains("MaxJobCount"), "{err}");
}

#[test]
fn slurm_refuses_what_the_charm_refuses() {
    let oracles = Oracle::all();
    std::thread::scope(|s| {
        for o in &oracles {
            s.spawn(move || {
                let runs: Vec<&str> = REFUSED
                    .iter()
                    .filter(|(scope, text)| {
                        let verdict = match scope {
                            OverrideScope::SlurmConf => o.judge_raw(text, "", ""),
                            OverrideScope::Node => o.judge_raw("", text, ""),
                            OverrideScope::Partition => o.judge_raw("", "", text),
                        };
                        // Refused, or (24.11+ for a partition's PreemptMode) ignored with an
                        // error naming the key.
                        let key = text.split('=').next().unwrap_or_default();
                        verdict.is_up() && !verdict.up_with_error(key)
                    })
                    .map(|(_, text)| *text)
                    .collect();
                assert!(
                    runs.is_empty(),
                    "Slurm {} runs with {runs:?}, which the charm refuses",
                    o.version
                );
            });
        }
    });
}

#[test]
fn slurm_runs_on_what_the_charm_accepts() {
    for (scope, text) in ACCEPTED {
        parse_overrides(text, *scope).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    let oracles = Oracle::all();
    std::thread::scope(|s| {
        for o in &oracles {
            s.spawn(move || {
                // All accepted values in one file (each partition/node value on its own line).
                let verdict = o.judge_model(|inside| model_with(inside, ACCEPTED));
                if let Verdict::Refused(log) = verdict {
                    // Name the value Slurm refuses.
                    for one in ACCEPTED {
                        let v = o.judge_model(|inside| model_with(inside, &[*one]));
                        assert!(v.is_up(), "Slurm {} refuses {:?}: {v:?}", o.version, one.1);
                    }
                    panic!("Slurm {} refuses the combined file:\n{log}", o.version);
                }
            });
        }
    });
}

/// config.yaml's "Key=Value separated by spaces": Slurm's file parser refuses two global keys
/// on one line (`parse_config.c` `s_p_parse_file`: only blanks may follow the first pair), so
/// the charm splits the pairs and renders one per line; slurmctld then takes both.
#[test]
fn space_separated_globals_are_rendered_one_per_line() {
    let pairs = parse_overrides("MaxJobCount=1000 MinJobAge=300", OverrideScope::SlurmConf)
        .expect("space-separated pairs");
    assert_eq!(pairs.len(), 2);
    let Some(o) = Oracle::local() else {
        return;
    };
    assert!(
        !o.judge_raw("MaxJobCount=1000 MinJobAge=300", "", "")
            .is_up(),
        "Slurm now takes two globals on one line: the renderer could stop splitting"
    );
    let (dir, inside) = o.scratch();
    drop(dir);
    let conf = model_with(
        &inside,
        &[(OverrideScope::SlurmConf, "MaxJobCount=1000 MinJobAge=300")],
    );
    let text = render_slurm_conf(&conf).unwrap();
    assert!(
        text.contains("\nMaxJobCount=1000\nMinJobAge=300\n"),
        "{text}"
    );
    let v = o.judge_model(|inside| {
        model_with(
            inside,
            &[(OverrideScope::SlurmConf, "MaxJobCount=1000 MinJobAge=300")],
        )
    });
    assert!(v.is_up(), "{v:?}");
}

/// A partition's `PreemptMode=SUSPEND,GANG`: Slurm 22.05 takes it, 24.11 and 26.05 log
/// "GANG is a cluster-wide option ... ignored" and drop it. The charm refuses it for every
/// version (the value would mean different things on different controllers).
#[test]
fn partition_gang_is_refused_because_newer_slurm_ignores_it() {
    let err = parse_overrides("PreemptMode=SUSPEND,GANG", OverrideScope::Partition).unwrap_err();
    assert!(err.to_string().contains("cluster-wide"), "{err}");
    for o in Oracle::all() {
        let v = o.judge_raw("", "", "PreemptMode=SUSPEND,GANG");
        if o.version == "22.05" {
            assert!(v.is_up(), "{v:?}");
        } else {
            assert!(
                v.up_with_error("cluster-wide"),
                "Slurm {}: {v:?}",
                o.version
            );
        }
    }
}
