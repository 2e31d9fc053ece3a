//! Runs the `relation_ingest` fuzz target's body (and oracle) over its committed corpus
//! (`fuzz/corpus/relation_ingest`) under plain `cargo test`: the fuzzer itself needs nightly
//! and cargo-fuzz (docs/slurm-config.md, "Fuzzing"), this keeps what it found checked on
//! every CI run, and fails if the corpus stops reaching a reader, accepted or refused.

#[path = "../fuzz/bodies/relation_ingest.rs"]
mod body;

use body::{Reached, relation_ingest};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn the_relation_ingest_corpus_passes_the_oracle_and_reaches_every_reader() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/relation_ingest");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "corpus has {} inputs", files.len());
    let mut reached = BTreeSet::new();
    for path in &files {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The body panics with the failed property; name the input that did it.
        let out = std::panic::catch_unwind(|| relation_ingest(&data));
        match out {
            Ok(r) => {
                reached.insert(r);
            }
            Err(_) => panic!("corpus input {} fails the oracle", path.display()),
        }
    }
    for want in [
        Reached::Node(true),
        Reached::Node(false),
        Reached::Partition(true),
        Reached::Partition(false),
        Reached::ClusterInfo(true),
        Reached::ClusterInfo(false),
        Reached::Verdicts(true),
        Reached::Verdicts(false),
    ] {
        assert!(
            reached.contains(&want),
            "no corpus input gives {want:?}: {reached:?}"
        );
    }
}

/// The oracle can fail: a record whose node a neighbour already names is accepted by the
/// ingest yet left out of the files, which the body must tell apart from a lost node.
#[test]
fn the_oracle_sees_the_readers_outcomes() {
    let node = br#"{"node_parameters":{"NodeName":"fuzz-1"},"new_node":false}"#;
    let mut input = vec![0u8];
    input.extend_from_slice(node);
    assert_eq!(relation_ingest(&input), Reached::Node(true));
    input[0] = 4; // the selector is taken modulo 4
    assert_eq!(relation_ingest(&input), Reached::Node(true));
    input[0] = 1; // the same text as a partition is refused
    assert_eq!(relation_ingest(&input), Reached::Partition(false));
    assert_eq!(relation_ingest(&[0, 0xff, 0xfe]), Reached::Nothing);
    assert_eq!(relation_ingest(&[]), Reached::Nothing);
}
