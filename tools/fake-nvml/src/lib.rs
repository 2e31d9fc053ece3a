//! Fake `libnvidia-ml.so.1` for GPU-less CI (see `../shared/reference/nvml.md` §5).
