//! The names the slurmd charm's parts share: the unit-state keys it keeps between hooks (and
//! how one is read back) and the host paths it writes and reads. A leaf: observe, plan and
//! apply all take them from here.

/// Unit-state key: digest of the published `node` record a GRES-mismatch restart was made for.
pub const GRES_RESTART_STATE: &str = "gres-mismatch-restart";
/// Unit-state key: the GRES names a held slurmd restart waits for slurmctld to run (empty or
/// absent: none held).
pub const HELD_STATE: &str = "gres-restart-held";
/// Unit-state key: the GPUs seen so far (JSON list of [`crate::gpu::KnownGpu`]).
pub const KNOWN_GPUS_STATE: &str = "known-gpus";
/// Unit-state key: `"true"` while the last controller check failed (refused or not
/// answering), `"false"` (or absent) otherwise.
pub const CONTROLLER_FAILING_STATE: &str = "controller-failing";
/// True when the stored [`CONTROLLER_FAILING_STATE`] says the last check failed.
pub fn failed_before(raw: Option<&str>) -> bool {
    raw == Some("true")
}
/// Unit-state key: the attempt already made ([`super::driver_source::DriverAttempt`], JSON).
pub const DRIVER_STATE: &str = "driver-install";
/// The kernel's boot id, read under the charm's root (tests give each host its own).
pub const BOOT_ID: &str = crate::charms::host::BOOT_ID_PATH;
/// Host path of the steady record.
pub const STEADY_PATH: &str = "/var/lib/slurm-charms/slurmd/steady.json";
/// Where the slurmd charm links its binary for Slurm (`HealthCheckProgram`). Under
/// `/var/lib/slurm`, which the slurmd package creates on every node.
pub const PROGRAM_PATH: &str = "/var/lib/slurm/slurmd-charm/slurmd-charm-health-check";
/// What the hooks tell the program ([`super::health_check_files::ProgramSettings`], JSON).
pub const SETTINGS_PATH: &str = "/var/lib/slurm/slurmd-charm/health-check.json";
