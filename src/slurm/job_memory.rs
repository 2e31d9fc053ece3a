//! The default memory of a job that does not ask for any (`DefMemPerCPU`, `DefMemPerGPU`).
//!
//! With `SelectTypeParameters=CR_CPU_Memory` memory is a consumable resource, and a job
//! submitted without `--mem`/`--mem-per-cpu`/`--mem-per-gpu` is given Slurm's default: 0, "all
//! the node's memory" (`_verify_node_state` and `_job_test` in Slurm's cons_tres `job_test.c`).
//! One `srun --gres=gpu:1` then holds a whole 8-GPU node. The controller writes a default per
//! allocated CPU and per allocated GPU instead, derived from the nodes (see [`DefaultMemory`]).
//!
//! Where Slurm reads them: both are global keys on every supported version
//! (`slurm_conf_options[]` of `src/common/read_config.c` at slurm-22-05-8-1, 24-11-5-1 and
//! 26-05-3-1), also partition keys. A GPU job that names no memory gets `DefMemPerGPU` per
//! allocated GPU, which replaces the per-CPU default for it ("Clear default partition or system
//! per-node memory limit. Rely exclusively upon the per-GRES memory limit", cons_tres
//! `_verify_node_state`; 26.05 `_set_gpu_defaults` ignores the global `DefMemPerGPU` only where
//! the partition sets `DefMemPerCPU`); every other job gets `DefMemPerCPU` per allocated CPU.
//! `DefMemPerNode` and `DefMemPerCPU` exclude each other (read_config.c: "DefMemPerCPU ignored,
//! since it's mutually exclusive with DefMemPerNode").

use super::node::NodeConf;

/// The largest value written: Slurm keeps the per-CPU flag in the top bit of the same 64-bit
/// field (`MEM_PER_CPU`, `0x8000000000000000`).
pub const MAX_MB: u64 = (1 << 63) - 1;

/// The keys an operator may set in `slurm-conf-parameters` instead: any of them there and the
/// controller writes none of its own (the operator took the memory defaults over).
pub const OPERATOR_KEYS: [&str; 3] = ["DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode"];

/// What one node offers jobs, as the default derives it: read once from the node's validated
/// record when it arrives, and kept with it (the controller's store).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeMemory {
    /// `CPUs`.
    pub cpus: u64,
    /// `RealMemory - MemSpecLimit` (MB): what Slurm lets jobs allocate on the node.
    pub usable_mb: u64,
    /// GPUs in its `Gres=` (`gpu` items; shards and MPS are not GPUs).
    pub gpus: u64,
}

impl NodeMemory {
    /// From a node of the model. `None` without `CPUs` or `RealMemory` (Slurm's defaults, 1
    /// CPU and 1 MB, are no basis for a default).
    pub fn of_node(n: &NodeConf) -> Option<NodeMemory> {
        Self::new(
            n.cpus.map(u64::from),
            n.real_memory,
            n.mem_spec_limit,
            Self::gpus_of(n),
        )
    }

    /// The GPUs in a node's `Gres=` (`gpu` items; shards and MPS are not GPUs).
    pub fn gpus_of(n: &NodeConf) -> u64 {
        n.gres
            .iter()
            .filter(|g| g.name.as_str() == "gpu")
            .map(|g| g.count)
            .sum()
    }

    /// From `CPUs`, `RealMemory`, `MemSpecLimit` and the GPUs: the controller's store keeps a
    /// node line's other values once per model and `RealMemory` per node.
    pub fn new(cpus: Option<u64>, real: Option<u64>, spec: Option<u64>, gpus: u64) -> Option<Self> {
        Some(NodeMemory {
            cpus: cpus.filter(|c| *c > 0)?,
            usable_mb: real?.saturating_sub(spec.unwrap_or(0)),
            gpus,
        })
    }
}

/// One option's setting: derived from the nodes, off, or a number of MB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MemDefault {
    /// Derived from the nodes (the default).
    #[default]
    Auto,
    /// Not written: Slurm's own default (a job without `--mem` gets the whole node's memory).
    Off,
    /// This many MB.
    Mb(u64),
}

impl MemDefault {
    /// Parses an option's value: `auto`, `off`, or MB from 1 to [`MAX_MB`].
    pub fn parse(option: &'static str, value: &str) -> Result<MemDefault, DefaultMemoryError> {
        let v = value.trim();
        if v.eq_ignore_ascii_case("auto") || v.is_empty() {
            return Ok(MemDefault::Auto);
        }
        if v.eq_ignore_ascii_case("off") {
            return Ok(MemDefault::Off);
        }
        match v.parse::<u64>() {
            Ok(mb) if (1..=MAX_MB).contains(&mb) => Ok(MemDefault::Mb(mb)),
            _ => Err(DefaultMemoryError {
                option,
                value: v.to_owned(),
            }),
        }
    }
}

/// A memory option's value that is not `auto`, `off` or a number of MB.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "config option `{option}`: {value:?} is not auto, off or a number of MB from 1 to {MAX_MB}"
)]
pub struct DefaultMemoryError {
    /// The option (`default-mem-per-cpu` or `default-mem-per-gpu`).
    pub option: &'static str,
    /// The value given (trimmed).
    pub value: String,
}

/// The options `default-mem-per-cpu` and `default-mem-per-gpu`, checked.
///
/// `auto` derives each from the nodes in slurm.conf, so that every CPU, and every GPU, of every
/// node can be allocated at once without memory running out first:
/// `DefMemPerCPU = min over nodes of ⌊(RealMemory − MemSpecLimit) / CPUs⌋` and
/// `DefMemPerGPU = min over nodes with GPUs of ⌊(RealMemory − MemSpecLimit) / GPUs⌋`. The
/// smallest node sets it: on a larger one a job gets less than its share, never more, so a
/// node's GPUs are never left idle for want of memory. A result of 0 (a node with more CPUs
/// than MB) is not written (0 means "all the memory" to Slurm).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultMemory {
    /// `default-mem-per-cpu`.
    pub per_cpu: MemDefault,
    /// `default-mem-per-gpu`.
    pub per_gpu: MemDefault,
}

impl DefaultMemory {
    /// Parses both options.
    pub fn parse(per_cpu: &str, per_gpu: &str) -> Result<DefaultMemory, DefaultMemoryError> {
        Ok(DefaultMemory {
            per_cpu: MemDefault::parse("default-mem-per-cpu", per_cpu)?,
            per_gpu: MemDefault::parse("default-mem-per-gpu", per_gpu)?,
        })
    }

    /// The global `(key, MB)` lines to write for `nodes`; none when the operator's
    /// `slurm-conf-parameters` (`operator`, as set on the model) set any of [`OPERATOR_KEYS`].
    pub fn lines(
        &self,
        nodes: impl IntoIterator<Item = NodeMemory>,
        operator: &[(String, String)],
    ) -> Vec<(&'static str, u64)> {
        let taken = operator
            .iter()
            .any(|(k, _)| OPERATOR_KEYS.iter().any(|o| o.eq_ignore_ascii_case(k)));
        if taken {
            return Vec::new();
        }
        let (mut per_cpu, mut per_gpu): (Option<u64>, Option<u64>) = (None, None);
        for n in nodes {
            let cpu = n.usable_mb / n.cpus;
            per_cpu = Some(per_cpu.map_or(cpu, |m| m.min(cpu)));
            if let Some(gpu) = n.usable_mb.checked_div(n.gpus) {
                per_gpu = Some(per_gpu.map_or(gpu, |m| m.min(gpu)));
            }
        }
        let pick = |setting: MemDefault, derived: Option<u64>| match setting {
            MemDefault::Auto => derived.filter(|v| *v > 0),
            MemDefault::Off => None,
            MemDefault::Mb(mb) => Some(mb),
        };
        let mut out = Vec::new();
        if let Some(v) = pick(self.per_cpu, per_cpu) {
            out.push(("DefMemPerCPU", v));
        }
        if let Some(v) = pick(self.per_gpu, per_gpu) {
            out.push(("DefMemPerGPU", v));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(cpus: u64, usable_mb: u64, gpus: u64) -> NodeMemory {
        NodeMemory {
            cpus,
            usable_mb,
            gpus,
        }
    }

    #[test]
    fn the_smallest_share_of_any_node_is_the_default() {
        let auto = DefaultMemory::default();
        // 8 CPUs / 2 GPUs on 30080 MB usable; 4 CPUs / 1 GPU on 8000 MB; no GPUs on 64000 MB
        let nodes = [node(8, 30080, 2), node(4, 8000, 1), node(64, 64000, 0)];
        assert_eq!(
            auto.lines(nodes, &[]),
            [("DefMemPerCPU", 1000), ("DefMemPerGPU", 8000)]
        );
        // no GPU anywhere: no DefMemPerGPU; no nodes: nothing
        assert_eq!(auto.lines([node(8, 800, 0)], &[]), [("DefMemPerCPU", 100)]);
        assert!(auto.lines([], &[]).is_empty());
        // more CPUs than MB: 0 would mean "all the memory", not written
        assert_eq!(auto.lines([node(64, 32, 1)], &[]), [("DefMemPerGPU", 32)]);
    }

    #[test]
    fn options_and_the_operators_keys_win() {
        let set = DefaultMemory::parse(" 2048 ", "off").unwrap();
        assert_eq!(
            set.lines([node(8, 30080, 2)], &[]),
            [("DefMemPerCPU", 2048)]
        );
        let op = [("defmempernode".to_owned(), "4096".to_owned())];
        assert!(
            DefaultMemory::default()
                .lines([node(8, 30080, 2)], &op)
                .is_empty()
        );
        for bad in ["0", "-1", "2G", "9223372036854775808", "of"] {
            let e = DefaultMemory::parse("auto", bad).unwrap_err();
            assert_eq!(e.option, "default-mem-per-gpu", "{bad}");
            assert!(e.to_string().contains("auto, off or a number of MB"), "{e}");
        }
    }
}
