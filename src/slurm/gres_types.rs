//! `GresTypes` as the union over the cluster: `gpu` always (reference checklist: set it whether
//! or not a node has GPUs), then every other GRES name a node's `Gres=` carries (`mps`,
//! `shard` from the slurmd `gpu-sharing` option), in name order. Slurm requires `gpu` whenever
//! a shared GRES is listed ("GresTypes: gres/'shared' requires that gres/gpu also be
//! configured"), which writing `gpu` first always satisfies.

use super::keys::GlobalKey;
use super::slurm_conf::SlurmConf;
use std::collections::BTreeSet;

impl SlurmConf {
    /// Sets `GresTypes` to `gpu` plus the other GRES names of the nodes (see the module doc).
    pub fn set_gres_types_from_nodes(&mut self) {
        let names: Vec<String> = self
            .node_lines()
            .flat_map(|(n, _)| n.gres.iter())
            .map(|g| g.name.as_str().to_owned())
            .collect();
        self.set_gres_types(names.iter().map(String::as_str));
    }

    /// Sets `GresTypes` to `gpu` plus the other GRES `names` given (in name order, once each):
    /// the controller gives the names its stored records carry.
    pub fn set_gres_types<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        let others: BTreeSet<&str> = names.into_iter().filter(|n| *n != "gpu").collect();
        let mut value = GlobalKey::GresTypes.default_value().to_string();
        for name in others {
            value.push(',');
            value.push_str(name);
        }
        self.owned.insert(GlobalKey::GresTypes, value);
    }
}

#[cfg(test)]
mod tests {
    use crate::slurm::{GresSpec, NodeConf, SlurmConf};

    #[test]
    fn union_over_the_nodes_with_gpu_first() {
        let mut conf = SlurmConf::new("c", "h");
        conf.set_gres_types_from_nodes();
        assert_eq!(conf.gres_types().into_iter().collect::<Vec<_>>(), ["gpu"]);
        for (name, spec) in [("a", "shard:8"), ("b", "mps:100"), ("c", "shard:4")] {
            let mut n = NodeConf::new(name.parse().unwrap());
            n.gres = vec![
                GresSpec::parse("gpu:t4:1").unwrap(),
                GresSpec::parse(spec).unwrap(),
            ];
            conf.nodes.push(n);
        }
        conf.set_gres_types_from_nodes();
        let text = crate::slurm::render_slurm_conf(&conf).unwrap();
        assert!(text.contains("\nGresTypes=gpu,mps,shard\n"), "{text}");
    }
}
