//! Benchmark: render and parse slurm.conf + gres.conf for 10,000 nodes × 8 GPUs.
//! `cargo bench --bench slurm_conf`. Prints the file sizes with and without folding.

#[path = "../tests/slurm_fixtures.rs"]
mod fixtures;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use slurm_charms::slurm::*;

const NODES: usize = 10_000;

fn sizes(label: &str, out: &RenderedFiles) {
    println!(
        "{label}: slurm.conf {} bytes ({} lines), gres.conf {} bytes ({} lines)",
        out.slurm_conf.len(),
        out.slurm_conf.lines().count(),
        out.gres_conf.len(),
        out.gres_conf.lines().count()
    );
}

fn bench(c: &mut Criterion) {
    for (label, identical) in [("half-identical", true), ("all-different", false)] {
        let (conf, gres) = fixtures::big_cluster(NODES, identical);
        let out = render_files(&conf, &gres).expect("render");
        sizes(label, &out);
        c.bench_function(&format!("render 10k nodes x 8 gpus ({label})"), |b| {
            b.iter(|| render_files(black_box(&conf), black_box(&gres)).expect("render"))
        });
        c.bench_function(&format!("parse 10k nodes x 8 gpus ({label})"), |b| {
            b.iter(|| {
                let s = parse_slurm_conf(black_box(&out.slurm_conf), "slurm.conf").expect("parse");
                let g = parse_gres_conf(black_box(&out.gres_conf), "gres.conf").expect("parse");
                (s, g)
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
