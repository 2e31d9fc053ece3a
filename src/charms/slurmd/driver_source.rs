//! The NVIDIA driver the operator asked for (the `nvidia-driver` config, [`DriverSource`]) and
//! the install attempt the unit remembers ([`DriverAttempt`]).

use crate::charms::host::Cmd;
use std::fmt;

/// An install attempt, remembered in unit state before it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriverAttempt {
    /// The [`DriverSource`] tried, as text.
    pub source: String,
    /// The boot id when it was tried (the reboot has happened once it differs).
    pub boot_id: String,
    /// How far it got: `installing`, `loaded`, `reboot-requested`, or `failed: <why>`.
    #[serde(default)]
    pub outcome: String,
}

impl DriverAttempt {
    /// Parses the stored attempt; anything unreadable counts as an attempt of an unknown
    /// source in an unknown boot (never a reason to install again).
    pub fn parse(raw: &str) -> DriverAttempt {
        serde_json::from_str(raw).unwrap_or_else(|_| DriverAttempt {
            source: raw.to_string(),
            boot_id: String::new(),
            outcome: String::new(),
        })
    }
}

/// An `nvidia-driver` value that is neither `auto`, `none` nor a Debian package name: the
/// unit blocks with it (only when a driver is needed) until the config is fixed. Typed so the
/// status is made from it once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "nvidia-driver {value:?} is not a Debian package name (lower-case letters, digits, + - .), \
     nor \"auto\" or \"none\": set the nvidia-driver config to one of those"
)]
pub struct DriverSourceError {
    /// The value given (trimmed).
    pub value: String,
}

/// Where the NVIDIA driver comes from: the `nvidia-driver` config, parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverSource {
    /// `none`: the charm never installs a driver.
    Off,
    /// `auto` (the default, or empty): `ubuntu-drivers install --gpgpu`.
    UbuntuDrivers,
    /// A Debian package name, e.g. `nvidia-driver-550-server`: `apt-get install -y <name>`.
    Package(String),
}

impl DriverSource {
    /// Parses the `nvidia-driver` config value. A package name follows Debian policy §5.6.1:
    /// lower-case letters, digits, `+`, `-`, `.`, at least two characters, starting with a
    /// letter or digit.
    pub fn parse(raw: &str) -> Result<DriverSource, DriverSourceError> {
        let v = raw.trim();
        match v {
            "" | "auto" => Ok(DriverSource::UbuntuDrivers),
            "none" => Ok(DriverSource::Off),
            _ => {
                let ok = v.len() >= 2
                    && v.bytes()
                        .next()
                        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                    && v.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b)
                    });
                if ok {
                    Ok(DriverSource::Package(v.to_string()))
                } else {
                    Err(DriverSourceError {
                        value: v.to_owned(),
                    })
                }
            }
        }
    }

    /// The install command.
    pub(super) fn command(&self) -> Option<Cmd> {
        match self {
            DriverSource::Off => None,
            DriverSource::UbuntuDrivers => Some(Cmd::new("ubuntu-drivers", ["install", "--gpgpu"])),
            DriverSource::Package(p) => Some(Cmd::new("apt-get", ["install", "-y", p.as_str()])),
        }
    }
}

impl fmt::Display for DriverSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverSource::Off => write!(f, "none"),
            DriverSource::UbuntuDrivers => write!(f, "ubuntu-drivers install --gpgpu"),
            DriverSource::Package(p) => write!(f, "apt-get install {p}"),
        }
    }
}
