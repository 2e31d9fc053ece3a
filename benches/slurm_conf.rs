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

/// Sizes the same model would have with one line per node (no hostlist folding): the folded
/// node lines replaced by each node's own line.
fn unfolded_sizes(conf: &SlurmConf, gres: &GresConf, out: &RenderedFiles) -> (usize, usize) {
    let node_lines = |text: &str| -> usize {
        text.lines()
            .filter(|l| l.starts_with("NodeName="))
            .map(|l| l.len() + 1)
            .sum()
    };
    let mut slurm = out.slurm_conf.len() - node_lines(&out.slurm_conf);
    for n in &conf.nodes {
        let mut one = SlurmConf::new("c", "h");
        one.nodes.push(n.clone());
        slurm += node_lines(&render_slurm_conf(&one).expect("render one node"));
    }
    let mut g = out.gres_conf.len() - node_lines(&out.gres_conf);
    for (name, records) in &gres.nodes {
        let mut one = GresConf::default();
        one.nodes.insert(name.clone(), records.clone());
        g += node_lines(&render_gres_conf(&one).expect("render one node"));
    }
    (slurm, g)
}

fn bench(c: &mut Criterion) {
    for (label, identical) in [("half-identical", true), ("all-different", false)] {
        let (conf, gres) = fixtures::big_cluster(NODES, identical);
        let out = render_files(&conf, &gres).expect("render");
        sizes(label, &out);
        let (s, g) = unfolded_sizes(&conf, &gres, &out);
        println!("{label} without folding: slurm.conf {s} bytes, gres.conf {g} bytes");
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
