//! `gpu-probe`: run on a machine with real NVIDIA GPUs by `tools/gpu-probe/capture.sh`.
//!
//! ```text
//! gpu-probe nvml-fixture            the real NVML as a fake-nvml JSON configuration (stdout);
//!                                   what it could not express on stderr
//! gpu-probe record SLURMD_C_FILE    detect-gpus results, GPU features, our node line and
//!                                   gres.conf for the node `slurmd -C` printed (JSON, stdout)
//! gpu-probe files SLURMD_C_FILE SHARING
//!                                   our node line and gres.conf for `gpu-sharing=SHARING`
//! ```
//!
//! Both open the real `libnvidia-ml.so.1` through the default search, as the charm does.

use std::process::ExitCode;

use nvml_wrapper::Nvml;
use slurm_charms::gpu::{DetectOptions, GpuSharing, Inventory, detect};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["nvml-fixture"] => nvml_fixture(),
        ["record", file] => record(file),
        ["files", file, sharing] => files(file, sharing),
        _ => Err(
            "usage: gpu-probe nvml-fixture | gpu-probe record SLURMD_C_FILE | \
                  gpu-probe files SLURMD_C_FILE SHARING"
                .to_owned(),
        ),
    };
    match result {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gpu-probe: {e}");
            ExitCode::FAILURE
        }
    }
}

fn nvml_fixture() -> Result<String, String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML init: {e}"))?;
    let (fixture, notes) = gpu_probe::nvml_fixture(&nvml);
    for n in notes {
        eprintln!("gpu-probe: note: {n}");
    }
    serde_json::to_string_pretty(&fixture).map_err(|e| e.to_string())
}

/// The charm's detection on this machine; a recording of a machine without GPUs is refused
/// (NVML not found, driver not loaded: the findings say which).
fn gpus() -> Result<Inventory, String> {
    let inv = detect(&DetectOptions::default()).map_err(|e| format!("detection: {e}"))?;
    if inv.gpus.is_empty() {
        let findings: Vec<String> = inv.findings.iter().map(|f| f.to_string()).collect();
        return Err(format!("no NVIDIA GPU detected ({})", findings.join("; ")));
    }
    Ok(inv)
}

fn files(file: &str, sharing: &str) -> Result<String, String> {
    let sharing = GpuSharing::parse(sharing).map_err(|e| format!("gpu-sharing: {e}"))?;
    let slurmd_c = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let inv = gpus()?;
    let value = gpu_probe::sharing_files(&inv, &slurmd_c, sharing).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&value).map_err(|e| e.to_string())
}

fn record(file: &str) -> Result<String, String> {
    let slurmd_c = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let inv = gpus()?;
    let value = gpu_probe::full_record(&inv, &slurmd_c).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&value).map_err(|e| e.to_string())
}
