//! GRES names, types and counts (`gpu`, `tesla_t4`, `2`).

use super::error::VocabError;
use serde::{Deserialize, Serialize};

/// A GRES name (`gpu`, `mps`, `shard`, ...): `[a-z][a-z0-9_]*`, at most 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GresName(String);

fn check_gres_name(value: &str) -> Result<(), VocabError> {
    let mut bytes = value.bytes();
    let ok = value.len() <= 64
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !ok {
        return Err(VocabError::new(
            "GRES name",
            value,
            "a GRES name is lower-case letters, digits and '_', starting with a letter (e.g. gpu)",
        ));
    }
    Ok(())
}

string_newtype!(GresName, check_gres_name);

impl GresName {
    /// `gpu`, the only GRES the charms publish.
    pub fn gpu() -> Self {
        Self("gpu".to_string())
    }

    /// `shard`: Slurm's GPU-sharing GRES without isolation (22.05+).
    pub fn shard() -> Self {
        Self("shard".to_string())
    }

    /// `mps`: Slurm's CUDA Multi-Process Service GRES (a share of a GPU's threads).
    pub fn mps() -> Self {
        Self("mps".to_string())
    }

    /// True for the GRES Slurm treats as "shared" on top of a GPU (`shard`, `mps`): their
    /// `Count` is shares of the GPU named by `File`, not one per file.
    pub fn is_shared(&self) -> bool {
        self.0 == "shard" || self.0 == "mps"
    }
}

/// The most shares (`shard` or `mps` `Count`) one GPU may have: `(2^63 - 2) / 100 / 4096`.
/// Slurm reads counts with `strtoll` (a node's total must stay below 2^63 - 1) and gres/mps
/// computes `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` as `request * 100 / count`, so with at most
/// [`super::MAX_DEVICE_FILES`] GPUs on a node, a node's total times 100 still fits.
pub const MAX_SHARES_PER_GPU: u64 =
    (i64::MAX as u64 - 1) / 100 / super::devices::MAX_DEVICE_FILES as u64;

/// A GRES type as NVML naming produces it (the NVML name ASCII-lower-cased, spaces as `_`;
/// MIG types `<parent>_<g>g.<mem>gb`), byte-identical in slurm.conf `Gres=` and gres.conf
/// `Type=`: `[a-z0-9._-]+` with at least one letter, at most 128 characters, not
/// `no_consume` (a `Gres=` flag). `:` and `,` would split a `Gres=` item. A type without a
/// letter (`1234`, or `___` from a name of spaces) is refused, although slurmctld's node parser
/// (`_get_gres_cnt` in `src/interfaces/gres.c`) would take `Gres=gpu:1234:2`:
/// a job asks for GPUs with `--gres=gpu:<type>:<count>`, and `slurm_get_next_tres`
/// (`src/common/slurm_protocol_defs.c`) reads a number after the last `:` as the count, so
/// `--gres=gpu:1234` would ask for 1234 GPUs of any type instead of one of type `1234`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GresType(String);

fn check_gres_type(value: &str) -> Result<(), VocabError> {
    let bad = |reason: &str| Err(VocabError::new("GRES type", value, reason));
    if value.is_empty() || value.len() > 128 {
        return bad("a GRES type has 1 to 128 characters");
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad(
            "a GRES type is lower-case letters, digits, '.', '_' and '-' (NVML name lower-cased, spaces as '_')",
        );
    }
    if !value.bytes().any(|b| b.is_ascii_lowercase()) {
        return bad("a GRES type needs a letter (Slurm reads a digits-only gpu:<type> as a count)");
    }
    if value == "no_consume" {
        return bad("no_consume is a Gres flag, not a type");
    }
    Ok(())
}

string_newtype!(GresType, check_gres_type);

/// A GRES count as Slurm reads it: digits with an optional `K`/`M`/`G`/`T`/`P` suffix (powers
/// of 1024), fitting in 64 bits. Written back as a plain number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GresCount(u64);

impl GresCount {
    /// A count of `n`.
    pub fn new(n: u64) -> Self {
        Self(n)
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl TryFrom<&str> for GresCount {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let bad = || VocabError::new("GRES count", value, "expected a count like 4 or 2K");
        let (digits, shift) = match value.as_bytes().last() {
            Some(b'k' | b'K') => (&value[..value.len() - 1], 10),
            Some(b'm' | b'M') => (&value[..value.len() - 1], 20),
            Some(b'g' | b'G') => (&value[..value.len() - 1], 30),
            Some(b't' | b'T') => (&value[..value.len() - 1], 40),
            Some(b'p' | b'P') => (&value[..value.len() - 1], 50),
            _ => (value, 0),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u64 = digits.parse().map_err(|_| bad())?;
        n.checked_mul(1u64 << shift)
            .map(Self)
            .ok_or_else(|| VocabError::new("GRES count", value, "count is too large"))
    }
}

parsed_newtype!(GresCount);

impl std::fmt::Display for GresCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_names_and_types() {
        GresName::try_from("gpu").unwrap();
        for no in ["", "GPU", "1gpu", "g-pu", "gpu:t4"] {
            assert!(GresName::try_from(no).is_err(), "{no:?}");
        }
        for ok in [
            "tesla_t4",
            "nvidia_a100-sxm4-80gb",
            "nvidia_a100_1g.5gb",
            "h100",
        ] {
            GresType::try_from(ok).unwrap();
        }
        for no in [
            "Tesla_T4",
            "tesla t4",
            "t4:1",
            "",
            "123",
            "___",
            "no_consume",
            "a,b",
            "t4+x",
        ] {
            assert!(GresType::try_from(no).is_err(), "{no:?}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(GresCount::try_from("2K").unwrap().get(), 2048);
        assert_eq!(GresCount::try_from("7").unwrap().to_string(), "7");
        for no in ["", "K", "-1", "1.5", "99999999999999999999", "16777216P"] {
            assert!(GresCount::try_from(no).is_err(), "{no:?}");
        }
    }
}
