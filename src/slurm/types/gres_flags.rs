//! gres.conf `Flags=` (`Flags=nvidia_gpu_env,one_sharing`).

use super::error::VocabError;
use serde::{Deserialize, Serialize};

/// One gres.conf `Flags` word. Slurm's `gres_flags_parse` (`src/common/gres.c` 22.05,
/// `src/interfaces/gres.c` 24.11/26.05) looks for each known word in the value and ignores
/// anything else, so a misspelt flag would be dropped without a word: only these are accepted.
/// `explicit` is 23.11+ (22.05 ignores it); 26.05's `env_uuid` is left out until every
/// supported version reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GresFlag {
    /// `CountOnly`: do not load the GRES plugin (counts only).
    CountOnly,
    /// `nvidia_gpu_env`: set `CUDA_VISIBLE_DEVICES`.
    NvidiaGpuEnv,
    /// `amd_gpu_env`: set `ROCR_VISIBLE_DEVICES`.
    AmdGpuEnv,
    /// `intel_gpu_env`: set `ZE_AFFINITY_MASK`.
    IntelGpuEnv,
    /// `opencl_env`: set `GPU_DEVICE_ORDINAL`.
    OpenclEnv,
    /// `no_gpu_env`: set no GPU environment variable (excludes the four above).
    NoGpuEnv,
    /// `one_sharing`: a shared GRES takes one GPU.
    OneSharing,
    /// `all_sharing`: a shared GRES may spread over every GPU.
    AllSharing,
    /// `explicit` (23.11+): only jobs that ask for this GRES get it.
    Explicit,
}

impl GresFlag {
    /// Every flag, in the order the error message lists them.
    pub const ALL: [GresFlag; 9] = [
        GresFlag::CountOnly,
        GresFlag::NvidiaGpuEnv,
        GresFlag::AmdGpuEnv,
        GresFlag::IntelGpuEnv,
        GresFlag::OpenclEnv,
        GresFlag::NoGpuEnv,
        GresFlag::OneSharing,
        GresFlag::AllSharing,
        GresFlag::Explicit,
    ];

    /// The spelling Slurm documents.
    pub fn as_str(self) -> &'static str {
        match self {
            GresFlag::CountOnly => "CountOnly",
            GresFlag::NvidiaGpuEnv => "nvidia_gpu_env",
            GresFlag::AmdGpuEnv => "amd_gpu_env",
            GresFlag::IntelGpuEnv => "intel_gpu_env",
            GresFlag::OpenclEnv => "opencl_env",
            GresFlag::NoGpuEnv => "no_gpu_env",
            GresFlag::OneSharing => "one_sharing",
            GresFlag::AllSharing => "all_sharing",
            GresFlag::Explicit => "explicit",
        }
    }

    /// Whether the flag names a GPU environment (Slurm: `GRES_CONF_ENV_SET`).
    pub fn is_env(self) -> bool {
        matches!(
            self,
            GresFlag::NvidiaGpuEnv
                | GresFlag::AmdGpuEnv
                | GresFlag::IntelGpuEnv
                | GresFlag::OpenclEnv
        )
    }
}

/// A record's `Flags`: known words ([`GresFlag`], any case, written in Slurm's spelling) in the
/// order given, never `no_gpu_env` together with a GPU environment flag (slurmd: `fatal: ...
/// "no_gpu_env", which must be mutually exclusive to all other GRES env flags`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GresFlags(Vec<GresFlag>);

impl GresFlags {
    /// The flags, in order.
    pub fn flags(&self) -> &[GresFlag] {
        &self.0
    }

    /// Whether the record has no `Flags`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl TryFrom<&str> for GresFlags {
    type Error = VocabError;
    fn try_from(value: &str) -> Result<Self, VocabError> {
        let flags = value
            .split(',')
            .map(|word| {
                GresFlag::ALL
                    .into_iter()
                    .find(|f| f.as_str().eq_ignore_ascii_case(word))
                    .ok_or_else(|| {
                        let known: Vec<&str> = GresFlag::ALL.iter().map(|f| f.as_str()).collect();
                        VocabError::new(
                            "gres.conf Flags",
                            value,
                            format!("unknown flag {word:?}; known: {}", known.join(", ")),
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if flags.contains(&GresFlag::NoGpuEnv) && flags.iter().any(|f| f.is_env()) {
            return Err(VocabError::new(
                "gres.conf Flags",
                value,
                "no_gpu_env cannot be combined with another *_env flag",
            ));
        }
        Ok(GresFlags(flags))
    }
}

parsed_newtype!(GresFlags);

impl std::fmt::Display for GresFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::newtype::write_comma_list(f, self.0.iter().map(|flag| flag.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_slurm_knows_in_its_spelling() {
        let f = GresFlags::try_from("COUNTONLY,Nvidia_GPU_Env,explicit").unwrap();
        assert_eq!(f.to_string(), "CountOnly,nvidia_gpu_env,explicit");
        for flag in GresFlag::ALL {
            assert_eq!(GresFlags::try_from(flag.as_str()).unwrap().flags(), [flag]);
        }
        GresFlags::try_from("no_gpu_env,one_sharing").unwrap();
    }

    #[test]
    fn near_misses_are_refused_naming_flags() {
        for no in [
            "",
            "nvidia_gpu_env,",
            "nvidia_gpu",
            "nvidia-gpu-env",
            "env_uuid",
            "CountOnly nvidia_gpu_env",
            "no_gpu_env,amd_gpu_env",
        ] {
            let e = GresFlags::try_from(no).unwrap_err().to_string();
            assert!(e.contains("gres.conf Flags"), "{no:?}: {e}");
        }
        let json = serde_json::to_string(&GresFlags::try_from("opencl_env").unwrap()).unwrap();
        assert_eq!(json, "\"opencl_env\"");
        assert!(serde_json::from_str::<GresFlags>("\"bogus\"").is_err());
    }
}
