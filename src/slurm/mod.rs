//! slurm module (placeholder, filled by its issue).
