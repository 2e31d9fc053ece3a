//! Fuzz what other applications write into relation data (`node`, `partition`,
//! `cluster_info`, `verdicts`) through the readers the charms use. The body and its oracle are
//! in `fuzz/bodies/relation_ingest.rs`, which `tests/fuzz_corpus.rs` also runs over the
//! committed corpus (`fuzz/corpus/relation_ingest`) under plain `cargo test`.
#![no_main]

#[path = "../bodies/relation_ingest.rs"]
mod body;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    body::relation_ingest(data);
});
