//! Slurm is asked before it is told: for every class of value in issue 11, what the charm's
//! overrides (`partition-config`, `node-config`, `slurm-conf-parameters`; relation data and
//! `slurmd -C` go through the same `Partition::set` / `NodeConf::set`) refuse, the real
//! slurmctld refuses too (the raw value spliced into a file, bypassing the model), and what
//! they accept, rendered by the model, the real slurmctld runs on. Judged by Slurm 22.05,
//! 24.11 and 26.05 (`tests/slurmctld_oracle_support.rs`).

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use oracle::{Oracle, Verdict};
use slurm_charms::slurm::keys::owned_global;
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
    // Flag words, lists and licenses Slurm stops on (src/slurm/types/flag_list.rs).
    (OverrideScope::SlurmConf, "DebugFlags=Backfill,Bogus"),
    (OverrideScope::SlurmConf, "PrologFlags=NoHold,Contain"),
    (OverrideScope::SlurmConf, "EnforcePartLimits=maybe"),
    (OverrideScope::SlurmConf, "PropagateResourceLimits=core"),
    (
        OverrideScope::SlurmConf,
        "PropagateResourceLimitsExcept=CPU,FOO",
    ),
    (OverrideScope::SlurmConf, "TaskPluginParam=cores,threads"),
    (
        OverrideScope::SlurmConf,
        "AccountingStorageEnforce=limits,bogus",
    ),
    (OverrideScope::SlurmConf, "Licenses=fluent:x"),
    (OverrideScope::SlurmConf, "JobSubmitPlugins=job_submit/lua"),
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
    (
        OverrideScope::SlurmConf,
        "DebugFlags=Backfill,gres,CPU_Bind PrologFlags=Alloc,Contain ReconfigFlags=KeepPartState",
    ),
    (
        OverrideScope::SlurmConf,
        "PriorityFlags=MAX_TRES,incr_only PrivateData=jobs,usage LogTimeFormat=iso8601",
    ),
    (
        OverrideScope::SlurmConf,
        "PropagateResourceLimitsExcept=MEMLOCK,RLIMIT_NOFILE TaskPluginParam=cores,verbose,autobind=threads",
    ),
    (
        OverrideScope::SlurmConf,
        "EnforcePartLimits=ALL CpuFreqDef=Performance CpuFreqGovernors=OnDemand,UserSpace",
    ),
    (
        OverrideScope::SlurmConf,
        "RequeueExit=1,5-9 RequeueExitHold=255 Licenses=fluent:4,matlab SuspendTime=600",
    ),
    (
        OverrideScope::SlurmConf,
        "JobSubmitPlugins=job_submit/require_timelimit,job_submit/throttle PrEpPlugins=prep/script SwitchType=switch/none",
    ),
    (
        OverrideScope::SlurmConf,
        "MpiDefault=pmi2 LaunchType=launch/slurm RoutePlugin=route/default JobContainerType=job_container/none PrioritySiteFactorPlugin=site_factor/none",
    ),
    (
        OverrideScope::SlurmConf,
        "AccountingStoreFlags=job_comment,job_env PriorityWeightTRES=CPU=1000,Mem=2000",
    ),
];

/// Each newly typed global key (issue 11, item 1): the forms Slurm documents are accepted,
/// near misses (a typo, a word only newer Slurm reads, a wrong case where Slurm compares
/// case-sensitively, a bad combination, a wrong kind) are refused with the key, the value
/// and what Slurm accepts named. Owned keys (`AuthType`, `TaskPlugin`, ...) are checked by
/// their rule directly, since `slurm-conf-parameters` refuses them before any rule.
#[test]
fn the_typed_global_keys_accept_slurms_forms_and_refuse_near_misses() {
    use slurm_charms::slurm::types::global_rule;
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "DebugFlags",
            &["Backfill", "backfill,GRES,cpu_bind", "WorkQueue"],
            &[
                "Task",
                "AuditRPCs",
                "Backfil",
                "Backfill,",
                ",Gres",
                "Gres,Gres",
                "",
            ],
        ),
        (
            "PrologFlags",
            &["Alloc", "contain,alloc", "NoHold", "DeferBatch,Serial"],
            &["NoHold,Contain", "X11", "RunInJob", "Allocate"],
        ),
        (
            "ReconfigFlags",
            &["KeepPartInfo", "KeepPartInfo,KeepPartState"],
            &["KeepPowerSaveSettings", "Keep"],
        ),
        (
            "HealthCheckNodeState",
            &["ANY", "idle,cycle"],
            &["NONDRAINED_IDLE", "START_ONLY", "BUSY"],
        ),
        (
            "AccountingStorageEnforce",
            &["associations,limits,qos", "all", "safe,nojobs"],
            &["assoc", "limits;qos"],
        ),
        (
            "AccountingStoreFlags",
            &["job_comment", "job_env,job_script"],
            &["job_extra", "no_stdio", "comment"],
        ),
        (
            "PriorityFlags",
            &["MAX_TRES", "incr_only,CALCULATE_RUNNING"],
            &[
                "MAX_TRES_GRES",
                "FAIR_TREE",
                "NO_FAIR_TREE",
                "DEPTH_OBLIVIOUS",
            ],
        ),
        (
            "PrivateData",
            &["jobs", "accounts,usage,users", "all"],
            &["cloud", "job", "secret"],
        ),
        (
            "PropagateResourceLimits",
            &["ALL", "NONE", "CORE,RLIMIT_NOFILE"],
            &["all", "core", "ALL,CORE", "NONE,CPU", "RLIMIT_FOO"],
        ),
        (
            "PropagateResourceLimitsExcept",
            &["MEMLOCK", "AS,STACK"],
            &["memlock", "CPU,CPU"],
        ),
        (
            "TaskPluginParam",
            &[
                "cores",
                "none,verbose",
                "autobind=threads,sockets",
                "SlurmdOffSpec",
            ],
            &[
                "cores,threads",
                "autobind=cores,autobind=none",
                "OOMKillStep",
                "autobind=boards",
                "Cores=",
            ],
        ),
        (
            "CpuFreqGovernors",
            &["OnDemand,Performance", "userspace", "SchedUtil"],
            &["ondemandx", "Perf"],
        ),
        (
            "CpuFreqDef",
            &["Performance", "powersave"],
            &["UserSpace", "Performance,OnDemand", "2400000"],
        ),
        (
            "EnforcePartLimits",
            &["ALL", "any", "NO", "yes"],
            &["NOJOBS", "ALL,ANY"],
        ),
        (
            "LogTimeFormat",
            &["iso8601_ms", "SHORT", "thread_id"],
            &["rfc3339", "format_stderr", "iso8601,short"],
        ),
        (
            "MpiDefault",
            &["none", "pmi2", "cray_shasta"],
            &["pmix", "mpi/pmi2", "openmpi"],
        ),
        (
            "RequeueExit",
            &["1", "0,5-9,255", "3-3"],
            &["256", "9-5", "1,", "-1", "a", "07", "1,,2"],
        ),
        ("RequeueExitHold", &["255"], &["1-256"]),
        (
            "Licenses",
            &["fluent", "fluent:4,matlab", "a.b-c_d:0"],
            &[
                "fluent:x",
                "fluent:4,fluent",
                ":4",
                "fluent:",
                "fluent:-1",
                "9lic",
            ],
        ),
        (
            "PriorityWeightTRES",
            &["CPU=1000", "cpu=1,mem=2.5,Node=3K,FS/Disk=1"],
            &["GRES/gpu=1", "CPU", "CPU=x", "License/foo=1"],
        ),
        (
            "SuspendTime",
            &["600", "INFINITE", "-1"],
            &["10min", "-2", "4294967296"],
        ),
        (
            "JobSubmitPlugins",
            &[
                "job_submit/throttle",
                "job_submit/require_timelimit,job_submit/partition",
            ],
            &[
                "job_submit/lua",
                "throttle",
                "job_submit/throttle,job_submit/throttle",
            ],
        ),
        ("PrEpPlugins", &["prep/script"], &["prep/none", "script"]),
        (
            "CliFilterPlugins",
            &["cli_filter/syslog,cli_filter/user_defaults"],
            &["cli_filter/lua", "cli_filter/none"],
        ),
        (
            "SwitchType",
            &["switch/none"],
            &[
                "switch/hpe_slingshot",
                "switch/nvidia_imex",
                "switch/cray_aries",
            ],
        ),
        ("LaunchType", &["launch/slurm"], &["launch/none", "slurm"]),
        (
            "JobContainerType",
            &["job_container/none"],
            &["job_container/tmpfs", "namespace/tmpfs"],
        ),
        (
            "PrioritySiteFactorPlugin",
            &["site_factor/none"],
            &["site_factor/example"],
        ),
        ("RoutePlugin", &["route/default"], &["route/topology"]),
        (
            "BurstBufferType",
            &[],
            &["burst_buffer/lua", "burst_buffer/datawarp"],
        ),
        ("NodeFeaturesPlugins", &[], &["node_features/helpers"]),
        ("AuthAltTypes", &[], &["auth/jwt"]),
        (
            "CoreSpecPlugin",
            &[],
            &["core_spec/none", "core_spec/cray_aries"],
        ),
        ("ExtSensorsType", &[], &["ext_sensors/none"]),
        ("PowerPlugin", &[], &["power/none"]),
        (
            "AcctGatherInfinibandType",
            &[],
            &["acct_gather_infiniband/ofed"],
        ),
        ("CryptoType", &[], &["crypto/munge"]),
        (
            "AuthType",
            &["auth/munge", "auth/none"],
            &["auth/slurm", "auth/jwt"],
        ),
        ("CredType", &["cred/munge", "cred/none"], &["cred/slurm"]),
        (
            "SelectType",
            &["select/cons_tres", "select/linear"],
            &["select/cons_res"],
        ),
        (
            "ProctrackType",
            &["proctrack/cgroup", "proctrack/linuxproc", "proctrack/pgid"],
            &["proctrack/cray_aries"],
        ),
        (
            "TaskPlugin",
            &["task/cgroup,task/affinity", "task/none"],
            &["task/cray_aries", "task/cgroup,", "task/cgroup,task/cgroup"],
        ),
    ];
    for (key, good, bad) in cases {
        let (canon, rule) = global_rule(key).unwrap_or_else(|| panic!("{key} is no global key"));
        assert_eq!(canon, *key);
        for v in *good {
            rule.check(v)
                .unwrap_or_else(|e| panic!("{key}={v} is refused: {e}"));
        }
        for v in *bad {
            let e = rule.check(v).expect_err(&format!("{key}={v} is accepted"));
            assert!(!e.reason.is_empty(), "{key}={v}");
            if owned_global(key).is_none() && !v.is_empty() {
                let e = parse_overrides(&format!("{key}={v}"), OverrideScope::SlurmConf)
                    .expect_err(&format!("{key}={v} passes slurm-conf-parameters"))
                    .to_string();
                assert!(e.contains(key) && e.contains(&v[..v.len().min(8)]), "{e}");
            }
        }
    }
    // A typo gets the closest word; an unknown plugin the closest plugin.
    let e = parse_overrides("DebugFlags=Backfil", OverrideScope::SlurmConf).unwrap_err();
    assert!(e.to_string().contains("did you mean Backfill?"), "{e}");
    let e = parse_overrides(
        "JobSubmitPlugins=job_submit/throtle",
        OverrideScope::SlurmConf,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("did you mean job_submit/throttle?"),
        "{e}"
    );
    let e = parse_overrides("PrologFlags=NoHold,Contain", OverrideScope::SlurmConf).unwrap_err();
    assert!(e.to_string().contains("cannot be combined"), "{e}");
}

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
