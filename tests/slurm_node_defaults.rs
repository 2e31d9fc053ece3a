//! `NodeName=DEFAULT` lines as Slurm 22.05, 24.11 and 26.05 read them, the premise of
//! `slurm::node_lines`: a node line takes every key it does not set from the defaults before
//! it, a second `DEFAULT` line replaces the keys it sets, and a key it leaves out keeps its
//! earlier default (which is why the charm writes `DEFAULT` lines only where every node line
//! sets the same keys). Each node here names its address, which Slurm refuses on a `DEFAULT`
//! line, so the text is written by hand, not by the charm's writer
//! (`slurm_acceptance::slurmctld_reads_node_default_lines` runs the writer's own output on
//! 22.05).

#[path = "slurmctld_oracle_support.rs"]
mod oracle;

use oracle::Oracle;
use slurm_charms::slurm::render_slurm_conf;
use std::cell::RefCell;

/// The base cluster's node section replaced by `nodes`, and its partition by one of `names`.
fn with_nodes(inside: &str, nodes: &str, names: &str) -> String {
    let text = render_slurm_conf(&Oracle::base_model(inside)).expect("base renders");
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("NodeName=") {
            out.push_str(nodes);
        } else if line.starts_with("PartitionName=") {
            out.push_str(&format!("PartitionName=p Nodes={names}\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn node_default_lines_read_as_the_charm_expects_on_every_version() {
    let nodes = "\
NodeName=DEFAULT CPUs=4 Features=a Weight=5
NodeName=n1 NodeAddr=127.0.0.1 RealMemory=1000
NodeName=n2 NodeAddr=127.0.0.1 RealMemory=1001
NodeName=DEFAULT CPUs=2 Features=b Weight=7
NodeName=n3 NodeAddr=127.0.0.1 RealMemory=1002
NodeName=n4 NodeAddr=127.0.0.1 CPUs=4 RealMemory=1003 Features=c Weight=9
NodeName=n5 NodeAddr=127.0.0.1 RealMemory=1004
NodeName=DEFAULT CPUs=1
NodeName=n6 NodeAddr=127.0.0.1 RealMemory=1005
";
    // (node, CPUs, RealMemory, feature, weight) as each line should read
    let want = [
        ("n1", 4, 1000, "a", 5),
        ("n2", 4, 1001, "a", 5),
        ("n3", 2, 1002, "b", 7),
        ("n4", 4, 1003, "c", 9),
        ("n5", 2, 1004, "b", 7),
        // a DEFAULT line that leaves Features and Weight out keeps the earlier ones
        ("n6", 1, 1005, "b", 7),
    ];
    let oracles = Oracle::all();
    assert!(!oracles.is_empty(), "no Slurm to judge with");
    for o in oracles {
        let conf = RefCell::new(String::new());
        let (verdict, shown) = o.judge_then(
            |inside| {
                *conf.borrow_mut() = format!("{inside}/slurm.conf");
                with_nodes(inside, nodes, "n[1-6]")
            },
            |_| {
                let conf = conf.borrow();
                want.map(|(name, ..)| {
                    o.scontrol(&conf, &["show", "node", name])
                        .unwrap_or_default()
                })
            },
        );
        assert!(verdict.is_up(), "Slurm {}: {verdict:?}", o.version);
        let shown = shown.expect("shown while up");
        for ((name, cpus, memory, feature, weight), show) in want.iter().zip(&shown) {
            assert!(
                show.contains(&format!("CPUTot={cpus} "))
                    && show.contains(&format!("RealMemory={memory} "))
                    && show.contains(&format!("AvailableFeatures={feature}\n"))
                    && show.contains(&format!("Weight={weight} ")),
                "Slurm {}, {name}: want CPUs={cpus} RealMemory={memory} Features={feature} \
                 Weight={weight}:\n{show}",
                o.version
            );
        }
        eprintln!("Slurm {}: six nodes read as expected", o.version);
    }
}
