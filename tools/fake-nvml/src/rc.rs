//! NVML return codes used by the fake (values of `nvmlReturn_t`).

use std::ffi::c_int;

/// NVML_SUCCESS
pub const SUCCESS: c_int = 0;
/// NVML_ERROR_UNINITIALIZED
pub const UNINITIALIZED: c_int = 1;
/// NVML_ERROR_INVALID_ARGUMENT
pub const INVALID_ARGUMENT: c_int = 2;
/// NVML_ERROR_NOT_SUPPORTED
pub const NOT_SUPPORTED: c_int = 3;
/// NVML_ERROR_NOT_FOUND
pub const NOT_FOUND: c_int = 6;
/// NVML_ERROR_INSUFFICIENT_SIZE
pub const INSUFFICIENT_SIZE: c_int = 7;
/// NVML_ERROR_TIMEOUT
pub const TIMEOUT: c_int = 10;
/// NVML_ERROR_ARGUMENT_VERSION_MISMATCH
pub const ARGUMENT_VERSION_MISMATCH: c_int = 25;
/// NVML_ERROR_UNKNOWN
pub const UNKNOWN: c_int = 999;

/// `nvmlErrorString` texts (NUL-terminated, static).
pub fn message(code: c_int) -> &'static [u8] {
    match code {
        0 => b"Success\0",
        1 => b"Uninitialized\0",
        2 => b"Invalid Argument\0",
        3 => b"Not Supported\0",
        4 => b"Insufficient Permissions\0",
        5 => b"Already Initialized\0",
        6 => b"Not Found\0",
        7 => b"Insufficient Size\0",
        8 => b"Insufficient External Power\0",
        9 => b"Driver Not Loaded\0",
        10 => b"Timeout\0",
        11 => b"Interrupt request issue\0",
        12 => b"NVML Shared Library Not Found\0",
        13 => b"Function Not Found\0",
        14 => b"Corrupted infoROM\0",
        15 => b"GPU is lost\0",
        16 => b"GPU requires restart\0",
        17 => b"The operating system has blocked the request.\0",
        18 => b"RM has detected an NVML/RM version mismatch.\0",
        19 => b"In use by another client\0",
        25 => b"Argument version mismatch\0",
        _ => b"Unknown Error\0",
    }
}
